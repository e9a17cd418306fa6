package transport

import (
	"context"
	"fmt"
	"io"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
)

// RawMessage is one response of a stream as its protobuf wire bytes, for a
// reader that decodes only the fields it needs (fabricctl watch). B is
// reused by the next Recv: keep nothing that points into it.
type RawMessage struct{ B []byte }

// rawCodec is gRPC's protobuf codec, except that a *RawMessage receives the
// message's bytes undecoded. Its name is "proto", so the content-type on the
// wire is the standard application/grpc+proto.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("marshal: %T is not a protobuf message", v)
	}
	b, err := proto.Marshal(m)
	if err != nil {
		return nil, err
	}
	return mem.BufferSlice{mem.SliceBuffer(b)}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	switch m := v.(type) {
	case *RawMessage:
		m.B = m.B[:0]
		for _, b := range data {
			m.B = append(m.B, b.ReadOnlyData()...)
		}
		return nil
	case proto.Message:
		return proto.Unmarshal(data.Materialize(), m)
	}
	return fmt.Errorf("unmarshal: %T is neither a RawMessage nor a protobuf message", v)
}

// SubscribeStreamRaw is SubscribeStream for a reader of wire bytes: Recv on
// the result is not available, RecvRaw is.
func (c *Client) SubscribeStreamRaw(ctx context.Context, sl *gnmipb.SubscriptionList) (*Stream, error) {
	return c.subscribeStream(ctx, sl, grpc.ForceCodecV2(rawCodec{}))
}

// RecvRaw reads the next response of a stream opened with
// SubscribeStreamRaw into m; io.EOF when the target ended the stream.
func (s *Stream) RecvRaw(m *RawMessage) error {
	err := s.stream.RecvMsg(m)
	if err != nil && err != io.EOF {
		return &Error{Switch: s.c.name, Op: "subscribe", Path: s.path, Err: err}
	}
	return err
}
