package twin_test

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

// client talks raw gNMI to a twin (no fabricctl transport in between).
func client(t *testing.T, o twin.Options) (*twin.Twin, gnmipb.GNMIClient) {
	t.Helper()
	tw, err := twin.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tw.Close)
	conn, err := grpc.NewClient(tw.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return tw, gnmipb.NewGNMIClient(conn)
}

func p(t *testing.T, s string) *gnmipb.Path {
	t.Helper()
	path, err := transport.ParsePath(s)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func ietf(s string) *gnmipb.TypedValue {
	return &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(s)}}
}

func ascii(s string) *gnmipb.TypedValue {
	return &gnmipb.TypedValue{Value: &gnmipb.TypedValue_AsciiVal{AsciiVal: s}}
}

func jsonOf(t *testing.T, tw *twin.Twin, path *gnmipb.Path) string {
	t.Helper()
	v, _ := tw.Value(path)
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSetIsAtomic(t *testing.T) {
	tw, c := client(t, twin.Options{Name: "leaf1", Platform: intent.PlatformSRLinux})
	ctx := t.Context()
	if _, err := c.Set(ctx, &gnmipb.SetRequest{Replace: []*gnmipb.Update{{Path: p(t, "/qos/interfaces/interface[interface-id=ethernet-1/1]"), Val: ietf(`{"pfc":{"pfc-enable":true}}`)}}}); err != nil {
		t.Fatal(err)
	}
	before := jsonOf(t, tw, p(t, "/qos"))
	tests := []struct {
		name string
		req  *gnmipb.SetRequest
		code codes.Code
	}{
		{"unknown top-level node", &gnmipb.SetRequest{
			Delete:  []*gnmipb.Path{p(t, "/qos/interfaces")},
			Replace: []*gnmipb.Update{{Path: p(t, "/bogus/x"), Val: ietf(`{}`)}}}, codes.NotFound},
		{"unsupported origin", &gnmipb.SetRequest{
			Delete: []*gnmipb.Path{p(t, "/qos/interfaces")},
			Update: []*gnmipb.Update{{Path: p(t, "cli:/"), Val: ascii("hostname x")}}}, codes.InvalidArgument},
		{"not JSON", &gnmipb.SetRequest{
			Delete:  []*gnmipb.Path{p(t, "/qos/interfaces")},
			Replace: []*gnmipb.Update{{Path: p(t, "/qos/x"), Val: ietf(`{`)}}}, codes.InvalidArgument},
		{"key in value contradicts path", &gnmipb.SetRequest{
			Replace: []*gnmipb.Update{{Path: p(t, "/qos/interfaces/interface[interface-id=ethernet-1/1]"), Val: ietf(`{"interface-id":"ethernet-1/2"}`)}}}, codes.InvalidArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Set(ctx, tc.req)
			if got := status.Code(err); got != tc.code {
				t.Errorf("Set code = %v (%v), want %v", got, err, tc.code)
			}
			if diff := cmp.Diff(before, jsonOf(t, tw, p(t, "/qos"))); diff != "" {
				t.Errorf("failed Set changed the datastore (-want +got):\n%s", diff)
			}
		})
	}
	if tw.Sets() != 1 {
		t.Errorf("Sets = %d, want 1", tw.Sets())
	}
}

func TestGetSemantics(t *testing.T) {
	tw, c := client(t, twin.Options{Name: "oc1", Platform: intent.PlatformOpenConfig})
	ctx := t.Context()
	if _, err := c.Get(ctx, &gnmipb.GetRequest{Path: []*gnmipb.Path{p(t, "/qos")}, Encoding: gnmipb.Encoding_JSON}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("JSON Get on a JSON_IETF-only target: %v, want InvalidArgument", err)
	}
	if _, err := c.Get(ctx, &gnmipb.GetRequest{Path: []*gnmipb.Path{p(t, "/nope")}, Encoding: gnmipb.Encoding_JSON_IETF}); status.Code(err) != codes.NotFound {
		t.Errorf("Get of an unknown node: %v, want NotFound", err)
	}
	resp, err := c.Get(ctx, &gnmipb.GetRequest{Path: []*gnmipb.Path{p(t, "/qos/queues")}, Encoding: gnmipb.Encoding_JSON_IETF})
	if err != nil {
		t.Fatal(err)
	}
	if n := resp.GetNotification(); len(n) != 1 || len(n[0].GetUpdate()) != 0 {
		t.Errorf("Get of an empty known path = %v, want one notification without updates", n)
	}
	_ = tw
}

func TestCLIOrigin(t *testing.T) {
	tw, c := client(t, twin.Options{Name: "leaf3", Platform: intent.PlatformEOS})
	ctx := t.Context()
	set := func(replace bool, text string) {
		t.Helper()
		u := []*gnmipb.Update{{Path: &gnmipb.Path{Origin: "cli"}, Val: ascii(text)}}
		req := &gnmipb.SetRequest{Update: u}
		if replace {
			req = &gnmipb.SetRequest{Replace: u}
		}
		if _, err := c.Set(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	set(false, "qos map dscp 26 to traffic-class 3\ninterface Ethernet1/1\n   mtu 9216\n   priority-flow-control on\n!\ninterface Ethernet2/1\n   priority-flow-control on\n!\n")
	set(false, "interface Ethernet2/1\n   no priority-flow-control on\n!\n")
	want := []string{
		"interface Ethernet1/1",
		"interface Ethernet1/1 >> mtu 9216",
		"interface Ethernet1/1 >> priority-flow-control on",
		"interface Ethernet2/1",
		"qos map dscp 26 to traffic-class 3",
	}
	got := tw.CLI()
	sort.Strings(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CLI lines mismatch (-want +got):\n%s", diff)
	}
	// Like EOS, the twin reads origin cli through a show command and
	// refuses a path that names none.
	if _, err := c.Get(ctx, &gnmipb.GetRequest{Path: []*gnmipb.Path{{Origin: "cli"}}, Encoding: gnmipb.Encoding_ASCII}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("Get cli:/ (no show command) = %v, want InvalidArgument", err)
	}
	resp, err := c.Get(ctx, &gnmipb.GetRequest{Path: []*gnmipb.Path{{Origin: "cli", Elem: []*gnmipb.PathElem{{Name: "show running-config all"}}}}, Encoding: gnmipb.Encoding_ASCII})
	if err != nil {
		t.Fatal(err)
	}
	text := resp.GetNotification()[0].GetUpdate()[0].GetVal().GetAsciiVal()
	wantText := "qos map dscp 26 to traffic-class 3\ninterface Ethernet1/1\n   mtu 9216\n   priority-flow-control on\n!\ninterface Ethernet2/1\n"
	if diff := cmp.Diff(wantText, text); diff != "" {
		t.Errorf("CLI text mismatch (-want +got):\n%s", diff)
	}
	set(true, "hostname lab\n")
	if diff := cmp.Diff([]string{"hostname lab"}, tw.CLI()); diff != "" {
		t.Errorf("replace of origin cli mismatch (-want +got):\n%s", diff)
	}
}

func TestThresholdRounding(t *testing.T) {
	tw, c := client(t, twin.Options{Name: "leaf1", Platform: intent.PlatformSRLinux, CellBytes: 1088})
	path := p(t, "/qos/buffer-management/queue-management-profile[name=ROCE]/wred/slope[drop-probability=all][traffic-type=all]/slope")
	if _, err := c.Set(t.Context(), &gnmipb.SetRequest{Replace: []*gnmipb.Update{{Path: path,
		Val: ietf(`{"min-threshold-bytes":1084,"max-threshold-bytes":150000,"max-probability":100}`)}}}); err != nil {
		t.Fatal(err)
	}
	want := `{"max-probability":100,"max-threshold-bytes":150144,"min-threshold-bytes":1088}`
	if diff := cmp.Diff(want, jsonOf(t, tw, path)); diff != "" {
		t.Errorf("rounding mismatch (-want +got):\n%s", diff)
	}
}

// TestSONiCConfigDBKeepsWrittenStrings: a SONiC CONFIG_DB is a redis hash
// and keeps the string that was written, whatever the ASIC's cell: buffer
// thresholds are rounded by the SAI below CONFIG_DB (the twin used to round
// them, so 150000 read back 150016, and every later Set rounded the factory
// BUFFER_POOL sizes too).
func TestSONiCConfigDBKeepsWrittenStrings(t *testing.T) {
	tw, c := client(t, twin.Options{Name: "leaf2", Platform: intent.PlatformSONiC, CellBytes: 256})
	path := p(t, "sonic-db:/CONFIG_DB/localhost/WRED_PROFILE/ROCE")
	val := `{"ecn":"ecn_all","green_max_threshold":"1500000","green_min_threshold":"150000"}`
	if _, err := c.Set(t.Context(), &gnmipb.SetRequest{Replace: []*gnmipb.Update{{Path: path, Val: ietf(val)}}}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(val, jsonOf(t, tw, path)); diff != "" {
		t.Errorf("CONFIG_DB read-back (-written +read):\n%s", diff)
	}
}

func TestSubscribeLeaves(t *testing.T) {
	tw, c := client(t, twin.Options{Name: "leaf1", Platform: intent.PlatformSRLinux})
	if err := tw.Put(p(t, "/interface[name=ethernet-1/1]/statistics"), map[string]any{"in-octets": 5, "out-octets": 7}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	st, err := c.Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&gnmipb.SubscribeRequest{Request: &gnmipb.SubscribeRequest_Subscribe{Subscribe: &gnmipb.SubscriptionList{
		Mode: gnmipb.SubscriptionList_ONCE, Encoding: gnmipb.Encoding_JSON_IETF,
		Subscription: []*gnmipb.Subscription{{Path: p(t, "/interface[name=ethernet-1/1]/statistics")}}}}}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		r, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if r.GetSyncResponse() {
			break
		}
		for _, u := range r.GetUpdate().GetUpdate() {
			got = append(got, transport.PathString(u.GetPath())+"="+u.GetVal().String())
		}
	}
	want := []string{
		"/interface[name=ethernet-1/1]/statistics/in-octets=int_val:5",
		"/interface[name=ethernet-1/1]/statistics/out-octets=int_val:7",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Subscribe ONCE mismatch (-want +got):\n%s", diff)
	}
}

func TestLoopbackOnly(t *testing.T) {
	if _, err := twin.Start(twin.Options{Name: "x", Platform: intent.PlatformSRLinux, Addr: "0.0.0.0:0"}); err == nil {
		t.Error("twin listened on a non-loopback address")
	}
	if _, err := twin.Start(twin.Options{Name: "x", Platform: "junos"}); err == nil {
		t.Error("twin started for an unknown platform")
	}
}

func TestValidateHook(t *testing.T) {
	var seen []string
	// A test double for a YANG validator: rejects any payload with "bogus".
	validate := func(_ *gnmipb.Path, u *gnmipb.Update) error {
		seen = append(seen, transport.PathString(u.GetPath()))
		if strings.Contains(string(u.GetVal().GetJsonIetfVal()), "bogus") {
			return errors.New("unknown member bogus")
		}
		return nil
	}
	tw, c := client(t, twin.Options{Name: "leaf1", Platform: intent.PlatformSRLinux, Validate: validate})
	good := &gnmipb.Update{Path: p(t, "/qos/a"), Val: ietf(`{"x":1}`)}
	bad := &gnmipb.Update{Path: p(t, "/qos/b"), Val: ietf(`{"bogus":1}`)}
	if _, err := c.Set(t.Context(), &gnmipb.SetRequest{Replace: []*gnmipb.Update{good}, Update: []*gnmipb.Update{bad}}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("Set with an invalid update: %v, want InvalidArgument", err)
	}
	if tw.Sets() != 0 {
		t.Errorf("a rejected Set was committed")
	}
	if diff := cmp.Diff([]string{"/qos/a", "/qos/b"}, seen); diff != "" {
		t.Errorf("validated paths (-want +got):\n%s", diff)
	}
}
