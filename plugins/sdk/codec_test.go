package sdk

import (
	"strings"
	"testing"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	pb "github.com/grovehq/grove/plugins/sdk/proto"
)

// The generated marshalling must produce what protobuf itself reads and read
// what protobuf writes: a plugin built with the default codec still talks
// to a host using this one.
func TestWireCodecIsStandardProtobuf(t *testing.T) {
	req := &pb.CheckRequest{Policy: &pb.Spec{Id: "p", Type: "senlin.policy.deletion", Version: "1.1", PropertiesJson: []byte(`{"criteria":"OLDEST_FIRST"}`)},
		Phase: "BEFORE", Action: &pb.ActionSnapshot{Action: "CLUSTER_SCALE_IN", InputsJson: []byte(`{"count":1}`)},
		Cluster: &pb.ClusterSnapshot{Id: "c", DesiredCapacity: 2, MaxSize: -1, Nodes: []*pb.SnapshotNode{{Id: "a", Status: "ACTIVE", CreatedAt: 1}, {Id: "b", Tainted: true}}},
		LastOp:  7, Now: 9}
	c := wireCodec{}
	out, err := c.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var viaProto pb.CheckRequest
	if err := proto.Unmarshal(out.Materialize(), &viaProto); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(req, &viaProto) {
		t.Fatalf("protobuf read %v from the codec's bytes, want %v", &viaProto, req)
	}
	theirs, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var viaCodec pb.CheckRequest
	if err := c.Unmarshal(wire(theirs), &viaCodec); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(req, &viaCodec) {
		t.Fatalf("the codec read %v from protobuf's bytes, want %v", &viaCodec, req)
	}
}

// go-plugin's own services (health, broker, stdio) have no generated
// methods and go through protobuf's reflection.
func TestWireCodecFallsBackForOtherMessages(t *testing.T) {
	c := wireCodec{}
	b, err := c.Marshal(wrapperspb.String("x"))
	if err != nil {
		t.Fatal(err)
	}
	var got wrapperspb.StringValue
	if err := c.Unmarshal(wire(b.Materialize()), &got); err != nil || got.GetValue() != "x" {
		t.Fatalf("round trip = %q, %v", got.GetValue(), err)
	}
	if _, err := c.Marshal(&emptypb.Empty{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Marshal(struct{}{}); err == nil || !strings.Contains(err.Error(), "not a protobuf message") {
		t.Fatalf("marshal of a non-message: %v", err)
	}
	if err := c.Unmarshal(wire(b.Materialize()), &struct{}{}); err == nil || !strings.Contains(err.Error(), "not a protobuf message") {
		t.Fatalf("unmarshal into a non-message: %v", err)
	}
}

// wire wraps bytes as gRPC hands them to a codec.
func wire(b []byte) mem.BufferSlice { return mem.BufferSlice{mem.SliceBuffer(b)} }
