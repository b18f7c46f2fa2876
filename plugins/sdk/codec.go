package sdk

import (
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"
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
// default one on the connections it is given to. It takes gRPC's buffers
// as they come (the V2 codec interface) rather than a copy of them.
type wireCodec struct{}

func (wireCodec) Marshal(v any) (mem.BufferSlice, error) {
	b, err := marshalWire(v)
	if err != nil {
		return nil, err
	}
	return mem.BufferSlice{mem.SliceBuffer(b)}, nil
}

func (wireCodec) Unmarshal(data mem.BufferSlice, v any) error {
	// The generated code copies what it keeps, so the buffer can go back
	// to gRPC's pool when this returns.
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	return unmarshalWire(buf.ReadOnlyData(), v)
}

func (wireCodec) Name() string { return "proto" }

func marshalWire(v any) ([]byte, error) {
	if m, ok := v.(vtMessage); ok {
		return m.MarshalVT()
	}
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("grove codec: %T is not a protobuf message", v)
	}
	return proto.Marshal(m)
}

func unmarshalWire(data []byte, v any) error {
	if m, ok := v.(vtMessage); ok {
		return m.UnmarshalVT(data)
	}
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("grove codec: %T is not a protobuf message", v)
	}
	return proto.Unmarshal(data, m)
}

// serverOptions are the gRPC server options of a plugin process.
func serverOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.ForceServerCodecV2(wireCodec{}), grpc.ChainUnaryInterceptor(recoverUnary),
		grpc.ChainStreamInterceptor(recoverStream)}
}

// dialOptions are the gRPC options of a connection to a plugin.
func dialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithDefaultCallOptions(grpc.ForceCodecV2(wireCodec{}))}
}
