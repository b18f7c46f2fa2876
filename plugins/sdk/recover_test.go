package sdk

import (
	"context"
	"math"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
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
