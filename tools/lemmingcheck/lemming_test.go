package lemmingcheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	lgnmi "github.com/openconfig/lemming/gnmi"
	"github.com/openconfig/lemming/gnmi/oc"
	"github.com/openconfig/ygot/ygot"
	"github.com/openconfig/ygot/ytypes"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// fabricctlBin is the real cmd/fabricctl, built once by TestMain from the
// checkout, so the tests run it exactly as a user does.
var fabricctlBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "lemmingcheck")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fabricctlBin = filepath.Join(dir, "fabricctl")
	// Built in the checkout's own module, so with fabricctl's go.mod
	// (not this module's, where lemming's requirements take part).
	build := exec.Command("go", "build", "-o", fabricctlBin, "./cmd/fabricctl")
	build.Dir = filepath.Join("..", "..")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building cmd/fabricctl:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// target is one lemming gNMI server listening on 127.0.0.1 (real gRPC,
// plaintext).
type target struct {
	name string
	addr string
	lem  *lgnmi.Server
}

// startLemming serves lemming's reference gNMI server
// (github.com/openconfig/lemming/gnmi v0.4.0, lgnmi.New) on a loopback
// port. Its Set unmarshals the request into ygot GoStructs generated from
// the OpenConfig models, fills in the YANG defaults
// (PopulateDefaults), validates the whole tree and stores the result.
//
// lemming v0.4.0 does not implement Get or Capabilities (gnmi/gnmi.go:
// both return codes.Unimplemented "Reference Implementation Unimplemented";
// its own clients read with Subscribe). With reads false the target is
// lemming as it ships, which fabricctl cannot plan against
// (TestPlainLemmingRefusesReads); with reads true, readShim answers those
// two RPCs from lemming's own datastore and everything else (Set,
// Subscribe) is lemming's.
func startLemming(tb testing.TB, name string, reads bool) *target {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	// lemming's Subscribe needs a target in the request prefix unless
	// this interceptor fills it in (lgnmi.New's documentation).
	srv := grpc.NewServer(grpc.StreamInterceptor(lgnmi.NewSubscribeTargetUpdateInterceptor(name)))
	var lem *lgnmi.Server
	if reads {
		// lgnmi.New registers lemming on the server it is given; the
		// shim is registered instead, on the served one.
		lem, err = lgnmi.New(grpc.NewServer(), name, nil)
		if err == nil {
			var shim *readShim
			shim, err = newReadShim(lem, name)
			gpb.RegisterGNMIServer(srv, shim)
		}
	} else {
		lem, err = lgnmi.New(srv, name, nil)
	}
	if err != nil {
		tb.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	tb.Cleanup(srv.Stop)
	return &target{name: name, addr: l.Addr().String(), lem: lem}
}

// models are the modules fabricctl's openconfig platform writes. lemming's
// generated package (gnmi/oc) carries no model revisions, so readShim
// announces them without a version.
var models = []*gpb.ModelData{
	{Name: "openconfig-qos", Organization: "OpenConfig working group"},
	{Name: "openconfig-interfaces", Organization: "OpenConfig working group"},
}

// readShim is lemming with the two read RPCs it lacks: Capabilities and a
// CONFIG Get that answers from lemming's datastore. Get subscribes ONCE to
// the asked paths on lemming's own cache (what lemming's clients do to
// read), unmarshals the notifications into lemming's GoStructs and renders
// each asked subtree as RFC 7951 JSON (JSON_IETF) with ygot, the way a
// ygot-based target renders a Get. Whatever lemming stored, populated YANG
// defaults included, is therefore what fabricctl reads.
type readShim struct {
	*lgnmi.Server
	name   string
	schema *ytypes.Schema // lemming's schema tree; Root is replaced per Get
}

// ocSchema is lemming's schema tree, loaded once: it is only read.
var ocSchema = sync.OnceValues(oc.Schema)

func newReadShim(lem *lgnmi.Server, name string) (*readShim, error) {
	s, err := ocSchema()
	if err != nil {
		return nil, err
	}
	return &readShim{Server: lem, name: name, schema: s}, nil
}

func (s *readShim) Capabilities(context.Context, *gpb.CapabilityRequest) (*gpb.CapabilityResponse, error) {
	return &gpb.CapabilityResponse{
		SupportedModels:    models,
		SupportedEncodings: []gpb.Encoding{gpb.Encoding_JSON_IETF},
		GNMIVersion:        "0.7.0",
	}, nil
}

func (s *readShim) Get(ctx context.Context, req *gpb.GetRequest) (*gpb.GetResponse, error) {
	if req.GetEncoding() != gpb.Encoding_JSON_IETF {
		return nil, status.Errorf(codes.Unimplemented, "readShim answers JSON_IETF only, not %v", req.GetEncoding())
	}
	if t := req.GetType(); t != gpb.GetRequest_CONFIG && t != gpb.GetRequest_ALL {
		return nil, status.Errorf(codes.Unimplemented, "readShim answers CONFIG and ALL only, not %v", t)
	}
	paths := make([]*gpb.Path, len(req.GetPath()))
	for i, p := range req.GetPath() {
		full, err := joinPath(req.GetPrefix(), p)
		if err != nil {
			return nil, status.Error(codes.InvalidArgument, err.Error())
		}
		paths[i] = full
	}
	notes, err := subscribeOnce(ctx, s.LocalClient(), s.name, paths)
	if err != nil {
		return nil, err
	}
	root := &oc.Root{}
	schema := &ytypes.Schema{Root: root, SchemaTree: s.schema.SchemaTree, Unmarshal: s.schema.Unmarshal}
	// Config leaves are lemming's shadow paths (config/...); it keeps no
	// state for these models without reconcilers.
	if err := ytypes.UnmarshalNotifications(schema, notes, &ytypes.PreferShadowPath{}, &ytypes.IgnoreExtraFields{}); err != nil {
		return nil, status.Errorf(codes.Internal, "unmarshal lemming's notifications: %v", err)
	}
	resp := &gpb.GetResponse{}
	now := time.Now().UnixNano()
	for _, p := range paths {
		nodes, err := ytypes.GetNode(schema.RootSchema(), root, p, &ytypes.PreferShadowPath{}, &ytypes.GetHandleWildcards{})
		if status.Code(err) == codes.NotFound || (err == nil && len(nodes) == 0) {
			return nil, status.Errorf(codes.NotFound, "%s: not found", pathString(p))
		}
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "%s: %v", pathString(p), err)
		}
		for _, n := range nodes {
			val, err := typedValue(n.Data)
			if err != nil {
				return nil, status.Errorf(codes.Internal, "%s: %v", pathString(p), err)
			}
			if val == nil {
				continue // an empty container or an unset leaf
			}
			resp.Notification = append(resp.Notification, &gpb.Notification{Timestamp: now,
				Update: []*gpb.Update{{Path: n.Path, Val: val}}})
		}
	}
	if len(resp.Notification) == 0 {
		return nil, status.Errorf(codes.NotFound, "no data at %d paths", len(paths))
	}
	return resp, nil
}

// typedValue renders a node GetNode found: a GoStruct as RFC 7951 JSON
// with module names, a leaf as its scalar TypedValue.
func typedValue(data any) (*gpb.TypedValue, error) {
	if gs, ok := data.(ygot.GoStruct); ok {
		b, err := ygot.Marshal7951(gs, &ygot.RFC7951JSONConfig{AppendModuleName: true, PreferShadowPath: true})
		if err != nil {
			return nil, err
		}
		if string(b) == "{}" {
			return nil, nil
		}
		return &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: b}}, nil
	}
	return ygot.EncodeTypedValue(data, gpb.Encoding_JSON_IETF)
}

// subscribeOnce reads paths from lemming's cache through its local client.
func subscribeOnce(ctx context.Context, c gpb.GNMIClient, target string, paths []*gpb.Path) ([]*gpb.Notification, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := c.Subscribe(ctx)
	if err != nil {
		return nil, err
	}
	subs := make([]*gpb.Subscription, len(paths))
	for i, p := range paths {
		subs[i] = &gpb.Subscription{Path: p}
	}
	if err := st.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Subscribe{Subscribe: &gpb.SubscriptionList{
		Prefix: &gpb.Path{Target: target, Origin: "openconfig"}, Subscription: subs,
		Mode: gpb.SubscriptionList_ONCE, Encoding: gpb.Encoding_JSON_IETF,
	}}}); err != nil {
		return nil, err
	}
	var out []*gpb.Notification
	for {
		resp, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if resp.GetSyncResponse() {
			return out, nil
		}
		if n := resp.GetUpdate(); n != nil {
			out = append(out, n)
		}
	}
}

func joinPath(prefix, p *gpb.Path) (*gpb.Path, error) {
	if prefix.GetTarget() != "" || len(prefix.GetElem()) > 0 && p.GetOrigin() != "" {
		return nil, fmt.Errorf("prefix %v with path %v is not supported", prefix, p)
	}
	if o := p.GetOrigin(); o != "" && o != "openconfig" {
		return nil, fmt.Errorf("origin %q: lemming holds openconfig only", o)
	}
	return &gpb.Path{Elem: append(append([]*gpb.PathElem{}, prefix.GetElem()...), p.GetElem()...)}, nil
}

func pathString(p *gpb.Path) string {
	s, err := ygot.PathToString(p)
	if err != nil {
		return fmt.Sprint(p)
	}
	return s
}

// run runs the built fabricctl with args and returns its exit code and
// output.
func run(tb testing.TB, dir string, args ...string) (code int, stdout, stderr string) {
	tb.Helper()
	cmd := exec.Command(fabricctlBin, args...)
	cmd.Dir = dir
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		tb.Fatalf("fabricctl %s: %v", strings.Join(args, " "), err)
	}
	return code, out.String(), errb.String()
}
