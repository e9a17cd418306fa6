package transport_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
)

// recorder is a gNMI target that keeps every Get and Set request it
// receives and announces the encodings in encs.
type recorder struct {
	gnmipb.UnimplementedGNMIServer
	mu   sync.Mutex
	encs []gnmipb.Encoding
	gets []*gnmipb.GetRequest
	sets []*gnmipb.SetRequest
	err  error // the answer to a Set, when not nil
}

func (r *recorder) Capabilities(context.Context, *gnmipb.CapabilityRequest) (*gnmipb.CapabilityResponse, error) {
	return &gnmipb.CapabilityResponse{SupportedEncodings: r.encs}, nil
}

func (r *recorder) Get(_ context.Context, req *gnmipb.GetRequest) (*gnmipb.GetResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gets = append(r.gets, req)
	resp := &gnmipb.GetResponse{}
	for _, p := range req.GetPath() {
		resp.Notification = append(resp.Notification, &gnmipb.Notification{Update: []*gnmipb.Update{{Path: p,
			Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(`{"mtu":9216}`)}}}}})
	}
	return resp, nil
}

func (r *recorder) Set(_ context.Context, req *gnmipb.SetRequest) (*gnmipb.SetResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sets = append(r.sets, req)
	if r.err != nil {
		return nil, r.err
	}
	resp := &gnmipb.SetResponse{Timestamp: 1}
	for _, u := range req.GetUpdate() {
		resp.Response = append(resp.Response, &gnmipb.UpdateResult{Path: u.GetPath(), Op: gnmipb.UpdateResult_UPDATE})
	}
	return resp, nil
}

func ownedPaths(t *testing.T) []*gnmipb.Path {
	var ps []*gnmipb.Path
	for _, s := range []string{"/interface[name=ethernet-1/1]/mtu", "/qos/interfaces/interface[interface-id=ethernet-1/1]", "/network-instance[name=default]/protocols/bgp"} {
		ps = append(ps, mustPath(t, s))
	}
	return ps
}

// TestGetPreparedIsGetConfig: a prepared GetRequest puts on the wire what
// GetConfig sends for the same paths, each time it is sent, and its reply
// is decoded as GetConfig's is.
func TestGetPreparedIsGetConfig(t *testing.T) {
	r := &recorder{encs: []gnmipb.Encoding{gnmipb.Encoding_JSON_IETF}}
	c := serveGNMI(t, r)
	paths := ownedPaths(t)
	want, err := c.GetConfig(t.Context(), paths)
	if err != nil {
		t.Fatal(err)
	}
	g, err := c.PrepareGetConfig(paths)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		got, err := c.GetPrepared(t.Context(), g)
		if err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(&gnmipb.GetResponse{Notification: got}, &gnmipb.GetResponse{Notification: want}) {
			t.Errorf("GetPrepared's reply = %v, want GetConfig's %v", got, want)
		}
	}
	if len(r.gets) != 3 {
		t.Fatalf("the target received %d GetRequests, want 3", len(r.gets))
	}
	for i, req := range r.gets[1:] {
		if !proto.Equal(req, r.gets[0]) {
			t.Errorf("prepared request %d = %v, want GetConfig's %v", i+1, req, r.gets[0])
		}
	}
	if r.gets[0].GetType() != gnmipb.GetRequest_CONFIG || r.gets[0].GetEncoding() != gnmipb.Encoding_JSON_IETF {
		t.Errorf("GetConfig sent type %v encoding %v", r.gets[0].GetType(), r.gets[0].GetEncoding())
	}
}

// TestGetPreparedFollowsTheEncoding: a request prepared before
// Capabilities found a JSON-only target is sent in JSON, as GetConfig
// would send it then, not in the encoding it was marshalled with.
func TestGetPreparedFollowsTheEncoding(t *testing.T) {
	r := &recorder{encs: []gnmipb.Encoding{gnmipb.Encoding_JSON}}
	c := serveGNMI(t, r)
	g, err := c.PrepareGetConfig(ownedPaths(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Capabilities(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetPrepared(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	if len(r.gets) != 1 || r.gets[0].GetEncoding() != gnmipb.Encoding_JSON {
		t.Fatalf("the target received %v, want one request in JSON", r.gets)
	}
}

// TestSetOutcomeIsSet: SetOutcome puts on the wire what Set sends, and
// reports the target's refusal as Set does.
func TestSetOutcomeIsSet(t *testing.T) {
	r := &recorder{}
	c := serveGNMI(t, r)
	req := &gnmipb.SetRequest{Update: []*gnmipb.Update{{Path: mustPath(t, "/interface[name=ethernet-1/1]/mtu"),
		Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(`9216`)}}}}}
	if _, err := c.Set(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if err := c.SetOutcome(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if len(r.sets) != 2 || !proto.Equal(r.sets[0], r.sets[1]) || !proto.Equal(r.sets[1], req) {
		t.Fatalf("the target received %v, want the request twice", r.sets)
	}
	r.err = status.Error(codes.InvalidArgument, "leafref /qos/forwarding-classes has no FC3")
	err := c.SetOutcome(t.Context(), req)
	var te *transport.Error
	if !errors.As(err, &te) || te.Op != "set" || te.Switch != "leaf1" || transport.Code(err) != codes.InvalidArgument ||
		errors.Is(err, transport.ErrOutcomeUnknown) || !strings.Contains(err.Error(), "/interface[name=ethernet-1/1]/mtu") {
		t.Errorf("refused Set: %v, want the switch, the path and InvalidArgument (a known outcome)", err)
	}
	r.err = status.Error(codes.Unavailable, "commit in progress")
	if err := c.SetOutcome(t.Context(), req); !errors.Is(err, transport.ErrOutcomeUnknown) {
		t.Errorf("Set answered Unavailable: %v, want ErrOutcomeUnknown", err)
	}
}

// brokenReplies is a server codec that answers every call with bytes that
// are not protobuf (a field 1 announcing 5 bytes and ending).
type brokenReplies struct{}

func (brokenReplies) Name() string { return "proto" }
func (brokenReplies) Marshal(any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer([]byte{0x0a, 0x05, 0x01})}, nil
}
func (brokenReplies) Unmarshal(data mem.BufferSlice, v any) error {
	return proto.Unmarshal(data.Materialize(), v.(proto.Message))
}

// TestSetOutcomeMalformedReply: a reply that is not protobuf fails
// SetOutcome as it fails Set, naming the switch.
func TestSetOutcomeMalformedReply(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.ForceServerCodecV2(brokenReplies{}))
	gnmipb.RegisterGNMIServer(srv, &recorder{})
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	c, err := transport.Dial(t.Context(), intent.Switch{Name: "leaf7", Address: lis.Addr().String(), TLS: intent.TLS{Insecure: true}},
		transport.Options{Timeout: 20 * time.Second, Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := &gnmipb.SetRequest{Delete: []*gnmipb.Path{mustPath(t, "/qos")}}
	_, setErr := c.Set(t.Context(), req)
	err = c.SetOutcome(t.Context(), req)
	if setErr == nil || err == nil {
		t.Fatalf("malformed reply: Set %v, SetOutcome %v; want both to fail", setErr, err)
	}
	if transport.Code(err) != transport.Code(setErr) || !strings.Contains(err.Error(), "leaf7") {
		t.Errorf("SetOutcome: %v (code %v); Set: %v (code %v)", err, transport.Code(err), setErr, transport.Code(setErr))
	}
}
