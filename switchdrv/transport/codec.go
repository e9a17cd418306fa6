package transport

import (
	"fmt"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
)

// messageCodec is the protobuf codec of fabricctl's connections (set on
// every call with grpc.ForceCodecV2): gRPC's default codec
// (encoding/proto, v1.85.0) marshals into, and gathers a reply split over
// frames in, mem.DefaultBufferPool, whatever pool the connection was given
// (experimental.WithBufferPool covers only the transport's frames). The
// default pool's tiers jump from 32 KiB to 1 MiB and it clears a buffer's
// whole capacity each time it hands one out again, so every SetRequest of
// 32 KiB or more (an SR Linux switch's 32 ports make 33 KiB) cleared 1 MiB.
// This codec does the same work with messageBuffers, whose tiers go up by
// powers of two.
type messageCodec struct {
	pool mem.BufferPool
}

// Name is empty: gRPC then sends the content-type "application/grpc", as
// with its default codec. A name would be sent as a content subtype
// ("application/grpc+proto"), which the gRPC protocol allows but which
// would be a change on the wire to every gNMI target.
func (messageCodec) Name() string { return "" }

func (c messageCodec) Marshal(v any) (mem.BufferSlice, error) {
	if g, ok := v.(*PreparedGet); ok {
		// Already marshalled; gRPC only reads a buffer it is given.
		return mem.BufferSlice{mem.SliceBuffer(g.b)}, nil
	}
	m := protoMessage(v)
	if m == nil {
		return nil, fmt.Errorf("proto: cannot marshal %T: not a protobuf message", v)
	}
	// Size first, so that MarshalAppend may use the size it cached (the
	// message is not changed meanwhile: a call owns its request).
	size := proto.Size(m)
	opts := proto.MarshalOptions{UseCachedSize: true}
	if mem.IsBelowBufferPoolingThreshold(size) {
		b, err := opts.Marshal(m)
		if err != nil {
			return nil, err
		}
		return mem.BufferSlice{mem.SliceBuffer(b)}, nil
	}
	buf := c.pool.Get(size)
	b, err := opts.MarshalAppend((*buf)[:0], m)
	if err != nil {
		c.pool.Put(buf)
		return nil, err
	}
	*buf = b
	return mem.BufferSlice{mem.NewBuffer(buf, c.pool)}, nil
}

func (c messageCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if r, ok := v.(*getReply); ok {
		// A buffer of its own: the reply's JSON values stay slices of it.
		return r.decode(data.Materialize())
	}
	if _, ok := v.(*setReply); ok {
		buf := data.MaterializeToBuffer(c.pool)
		defer buf.Free()
		return checkWire(buf.ReadOnlyData())
	}
	m := protoMessage(v)
	if m == nil {
		return fmt.Errorf("proto: cannot unmarshal into %T: not a protobuf message", v)
	}
	buf := data.MaterializeToBuffer(c.pool)
	defer buf.Free()
	return proto.Unmarshal(buf.ReadOnlyData(), m)
}

// protoMessage is v as a protobuf message (the gNMI messages are; an old
// API message is adapted), nil when it is none.
func protoMessage(v any) proto.Message {
	switch m := v.(type) {
	case protoadapt.MessageV1:
		return protoadapt.MessageV2Of(m)
	case protoadapt.MessageV2:
		return m
	}
	return nil
}
