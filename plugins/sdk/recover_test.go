package sdk

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/grovehq/grove/plugins/sdk/proto"
)

// A panic in a call the server does not guard itself (validation, hosts,
// adoption) is that call's error, not the plugin process's end.
func TestRecoverUnaryTurnsPanicIntoError(t *testing.T) {
	info := &grpc.UnaryServerInfo{FullMethod: "/grove.Profile/Validate"}
	_, err := recoverUnary(context.Background(), nil, info, func(context.Context, any) (any, error) { panic("boom") })
	if status.Code(err) != codes.Internal || status.Convert(err).Message() != "the plugin panicked in validate: boom" {
		t.Fatalf("got %v, want Internal: the plugin panicked in validate: boom", err)
	}
}

// The same holds for a stream, such as a driver's Watch.
func TestRecoverStreamTurnsPanicIntoError(t *testing.T) {
	info := &grpc.StreamServerInfo{FullMethod: "/grove.Profile/Watch", IsServerStream: true}
	err := recoverStream(nil, nil, info, func(any, grpc.ServerStream) error { panic("boom") })
	if status.Code(err) != codes.Internal || status.Convert(err).Message() != "the plugin panicked in watch: boom" {
		t.Fatalf("got %v, want Internal: the plugin panicked in watch: boom", err)
	}
}

// A result whose data JSON cannot hold fails its node alone, naming the
// key, and keeps its physical id; the others go through.
func TestUnencodableResultDataFailsItsNode(t *testing.T) {
	rs := resultsToProto([]Result{
		{ID: "a", PhysicalID: "vm-a", Data: map[string]any{"ok": 1, "z": math.NaN()}},
		{ID: "b", PhysicalID: "vm-b", Data: map[string]any{"ok": 1}},
	})
	const want = "the driver's result for node a is unusable: data.z cannot be encoded as JSON: json: unsupported value: NaN"
	if rs[0].Error == nil || rs[0].Error.Message != want || rs[0].PhysicalId != "vm-a" || rs[0].DataJson != nil {
		t.Errorf("node a: %v, want the error %q with physical id vm-a and no data", rs[0], want)
	}
	if rs[1].Error != nil || string(rs[1].DataJson) != `{"ok":1}` {
		t.Errorf("node b: %v, want its data and no error", rs[1])
	}
}

// What a plugin sends that is not UTF-8 arrives as text: reasons and
// messages with the bad bytes replaced, and a physical id that is not
// UTF-8 as its node's failure, quoting it, rather than a value a store of
// text cannot keep.
func TestResultsFromPluginAreText(t *testing.T) {
	rs := resultsFromProto([]*pb.NodeResult{
		{Id: "a", PhysicalId: "vm-\xff", StatusReason: "exit \xfe"},
		{Id: "b", PhysicalId: "vm-b", Error: &pb.Error{Message: "backend said \xff\xfe", Retryable: true}},
	})
	const wantA = `the driver returned a physical id that is not valid UTF-8: "vm-\xff"`
	if rs[0].PhysicalID != "" || rs[0].Err == nil || rs[0].Err.Error() != wantA || rs[0].Reason != "exit \uFFFD" {
		t.Errorf("node a: physical id %q, error %v, reason %q; want none, %q, %q", rs[0].PhysicalID, rs[0].Err, rs[0].Reason, wantA, "exit \uFFFD")
	}
	if rs[1].PhysicalID != "vm-b" || rs[1].Err == nil || rs[1].Err.Error() != "backend said \uFFFD" || !IsRetryable(rs[1].Err) {
		t.Errorf("node b: physical id %q, error %v (retryable %v); want vm-b, a retryable %q", rs[1].PhysicalID, rs[1].Err, IsRetryable(rs[1].Err), "backend said \uFFFD")
	}
	for _, r := range rs {
		if !utf8.ValidString(r.Reason) || (r.Err != nil && !utf8.ValidString(r.Err.Error())) {
			t.Errorf("node %s: not text: %q %v", r.ID, r.Reason, r.Err)
		}
	}
}

// A result's data or state over its bound is not kept: the node fails
// saying how much it was sent, and keeps the physical id the driver gave,
// so its resource is recorded and can be deleted. A result at the bound
// is kept whole.
func TestOversizedResultsFailTheirNode(t *testing.T) {
	big := []byte(`{"blob":"` + strings.Repeat("x", MaxResultData) + `"}`)
	atBound := []byte(`{"blob":"` + strings.Repeat("x", MaxResultData-len(`{"blob":""}`)) + `"}`)
	rs := resultsFromProto([]*pb.NodeResult{
		{Id: "a", PhysicalId: "vm-a", DataJson: big, Healthy: true},
		{Id: "b", PhysicalId: "vm-b", State: make([]byte, MaxResultState+1), Healthy: true},
		{Id: "c", PhysicalId: "vm-c", DataJson: atBound, State: make([]byte, MaxResultState), Healthy: true},
	})
	for i, want := range []string{
		fmt.Sprintf("the driver returned %d bytes of data and 0 bytes of state for the node; at most 1048576 of data and 1048576 of state are kept", len(big)),
		"the driver returned 0 bytes of data and 1048577 bytes of state for the node; at most 1048576 of data and 1048576 of state are kept",
	} {
		r := rs[i]
		if r.Err == nil || r.Err.Error() != want || r.Data != nil || r.State != nil || r.PhysicalID == "" || r.Healthy {
			t.Errorf("node %s: %v, data %d keys, state %d bytes, physical id %q, healthy %v; want %q, nothing kept but the physical id",
				r.ID, r.Err, len(r.Data), len(r.State), r.PhysicalID, r.Healthy, want)
		}
	}
	if c := rs[2]; c.Err != nil || len(c.State) != MaxResultState || len(c.Data["blob"].(string)) != MaxResultData-len(`{"blob":""}`) {
		t.Errorf("node c at the bounds: %v, state %d bytes; want it kept whole", c.Err, len(c.State))
	}
}
