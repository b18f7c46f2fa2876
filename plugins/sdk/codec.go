package sdk

import (
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// Grove's messages are marshalled by the code vtprotobuf generates for them
// (grove_vtproto.pb.go) instead of protobuf's reflection: on a plugin call,
// where the message is most of the work beyond the round trip itself, that
// halves what the call adds to a bare echo (docs/benchmarks.md). The bytes
// are standard protobuf, so either end may use the default codec; messages
// of go-plugin's own services take the reflection path.

// vtMessage is a message with vtprotobuf's generated methods.
type vtMessage interface {
	MarshalVT() ([]byte, error)
	UnmarshalVT([]byte) error
}

// wireCodec is a gRPC codec under the name "proto", so it stands in for the
// default one on the connections it is given to.
type wireCodec struct{}

func (wireCodec) Marshal(v any) ([]byte, error) {
	if m, ok := v.(vtMessage); ok {
		return m.MarshalVT()
	}
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("grove codec: %T is not a protobuf message", v)
	}
	return proto.Marshal(m)
}

func (wireCodec) Unmarshal(data []byte, v any) error {
	if m, ok := v.(vtMessage); ok {
		return m.UnmarshalVT(data)
	}
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("grove codec: %T is not a protobuf message", v)
	}
	return proto.Unmarshal(data, m)
}

func (wireCodec) Name() string { return "proto" }

// serverOptions are the gRPC server options of a plugin process.
func serverOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.ForceServerCodec(wireCodec{})}
}

// dialOptions are the gRPC options of a connection to a plugin.
func dialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithDefaultCallOptions(grpc.ForceCodec(wireCodec{}))}
}
