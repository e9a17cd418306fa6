package transport_test

import (
	"context"
	"strings"
	"testing"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

// echoSet is a gNMI target that records the content-type of each Set and
// answers with the request's paths three times over (so a large request
// and a large answer both cross the connection's codec).
type echoSet struct {
	gnmipb.UnimplementedGNMIServer
	contentTypes []string
	got          *gnmipb.SetRequest
}

func (e *echoSet) Set(ctx context.Context, req *gnmipb.SetRequest) (*gnmipb.SetResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	e.contentTypes = append(e.contentTypes, md.Get("content-type")...)
	e.got = req
	resp := &gnmipb.SetResponse{}
	for range 3 {
		for _, u := range req.GetReplace() {
			resp.Response = append(resp.Response, &gnmipb.UpdateResult{Path: u.GetPath(), Op: gnmipb.UpdateResult_REPLACE})
		}
	}
	return resp, nil
}

// TestCodecKeepsTheWire: the connections' own codec (messageCodec) sends
// what gRPC's default codec sends: content-type application/grpc (no
// +proto subtype) and the same bytes, for a request and a reply well
// above the buffer-pooling threshold.
func TestCodecKeepsTheWire(t *testing.T) {
	e := &echoSet{}
	c := serveGNMI(t, e)
	req := &gnmipb.SetRequest{}
	for i := range 300 {
		req.Replace = append(req.Replace, &gnmipb.Update{Path: mustPath(t, "/qos/interfaces/interface[interface-id=ethernet-1/"+strings.Repeat("1", i%7+1)+"]"),
			Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(`{"output":{"scheduler":{"policy":"FABRICCTL_SCHED"}}}`)}}})
	}
	if proto.Size(req) < 32<<10 {
		t.Fatalf("request of %d bytes: too small to take a pooled buffer", proto.Size(req))
	}
	resp, err := c.Set(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(e.got, req) {
		t.Error("the target received another request than the one sent")
	}
	if proto.Size(resp) < 32<<10 {
		t.Errorf("reply of %d bytes: too small to take a pooled buffer", proto.Size(resp))
	}
	if len(resp.GetResponse()) != 3*len(req.GetReplace()) || !proto.Equal(resp.GetResponse()[len(req.GetReplace())].GetPath(), req.GetReplace()[0].GetPath()) {
		t.Error("the reply arrived changed")
	}
	if strings.Join(e.contentTypes, ",") != "application/grpc" {
		t.Errorf("content-type %q, want application/grpc (gRPC's default codec sends no subtype)", e.contentTypes)
	}
}
