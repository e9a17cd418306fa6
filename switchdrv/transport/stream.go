package transport

import (
	"context"
	"io"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
)

// Stream is an open Subscribe STREAM: Recv returns the target's responses
// until ctx ends or the target closes the stream.
type Stream struct {
	c      *Client
	path   string
	stream gnmipb.GNMI_SubscribeClient
}

// SubscribeStream opens a STREAM subscription (sl.Mode is set to STREAM and
// sl.Encoding to the client's encoding). It is not retried: a
// long-lived reader (fabricctl watch) reconnects with its own backoff. The
// stream lives until ctx is cancelled; there is no per-RPC timeout.
func (c *Client) SubscribeStream(ctx context.Context, sl *gnmipb.SubscriptionList) (*Stream, error) {
	return c.subscribeStream(ctx, sl)
}

func (c *Client) subscribeStream(ctx context.Context, sl *gnmipb.SubscriptionList, opts ...grpc.CallOption) (*Stream, error) {
	sl.Mode = gnmipb.SubscriptionList_STREAM
	sl.Encoding = c.Encoding()
	paths := make([]*gnmipb.Path, len(sl.GetSubscription()))
	for i, s := range sl.GetSubscription() {
		paths[i] = s.GetPath()
	}
	ps := PathsString(withPrefix(sl.GetPrefix(), paths))
	st, err := c.gnmi.Subscribe(ctx, opts...)
	if err != nil {
		return nil, &Error{Switch: c.name, Op: "subscribe", Path: ps, Err: err}
	}
	if err := st.Send(&gnmipb.SubscribeRequest{Request: &gnmipb.SubscribeRequest_Subscribe{Subscribe: sl}}); err != nil {
		if err == io.EOF {
			_, err = st.Recv() // the real error
		}
		return nil, &Error{Switch: c.name, Op: "subscribe", Path: ps, Err: err}
	}
	c.log.Debug("gnmi subscribe stream", "paths", ps)
	return &Stream{c: c, path: ps, stream: st}, nil
}

// Recv returns the next response; io.EOF when the target ended the stream.
func (s *Stream) Recv() (*gnmipb.SubscribeResponse, error) {
	r, err := s.stream.Recv()
	if err != nil && err != io.EOF {
		return nil, &Error{Switch: s.c.name, Op: "subscribe", Path: s.path, Err: err}
	}
	return r, err
}
