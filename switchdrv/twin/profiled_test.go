package twin_test

import (
	"context"
	"strings"
	"testing"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fabricctl/fabricctl/internal/profile"
	"github.com/fabricctl/fabricctl/internal/yangcheck"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

func sonicTwin(t *testing.T, name string, mod func(*profile.Profile) *profile.Profile) (*twin.Twin, gnmipb.GNMIClient) {
	t.Helper()
	prof, err := profile.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	if mod != nil {
		prof = mod(prof)
	}
	return client(t, twin.Options{Name: "leaf", Profile: prof, Factory: true})
}

func cfg(t *testing.T, s string) *gnmipb.Path {
	t.Helper()
	return p(t, "sonic-db:/CONFIG_DB/localhost/"+s)
}

func set(ctx context.Context, c gnmipb.GNMIClient, req *gnmipb.SetRequest) (codes.Code, string) {
	_, err := c.Set(ctx, req)
	st, _ := status.FromError(err)
	return st.Code(), st.Message()
}

// sonic-gnmi PR #239 (20aba131, in 202411, not in 202405): Replace is
// JsonClient.Remove + Add, and Remove of a missing key fails the whole Set
// with "Invalid entry"; before, Replace was Add.
func TestSONiCReplaceOfMissingKeyPerBranch(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		profile string
		code    codes.Code
		msg     string
	}{
		{"sonic-202411", codes.Unknown, "Invalid entry map["},
		{"sonic-202405", codes.OK, ""},
	} {
		t.Run(tc.profile, func(t *testing.T) {
			tw, c := sonicTwin(t, tc.profile, nil)
			req := &gnmipb.SetRequest{
				Update:  []*gnmipb.Update{{Path: cfg(t, "SCHEDULER/scheduler.0"), Val: ietf(`{"type":"DWRR","weight":"20"}`)}},
				Replace: []*gnmipb.Update{{Path: cfg(t, "SCHEDULER/FABRICCTL_RoCE"), Val: ietf(`{"type":"DWRR","weight":"50"}`)}}}
			code, msg := set(ctx, c, req)
			if code != tc.code || !strings.HasPrefix(msg, tc.msg) {
				t.Fatalf("Set = %v %q, want %v %q...", code, msg, tc.code, tc.msg)
			}
			got := jsonOf(t, tw, cfg(t, "SCHEDULER/scheduler.0"))
			if tc.code != codes.OK && got != `{"type":"DWRR","weight":"14"}` {
				t.Errorf("the failed Set changed scheduler.0 to %s (not atomic)", got)
			}
			if tc.code == codes.OK && jsonOf(t, tw, cfg(t, "SCHEDULER/FABRICCTL_RoCE")) != `{"type":"DWRR","weight":"50"}` {
				t.Error("202405 Replace did not add the key")
			}
		})
	}
}

// json_client.go Add: Update at TABLE/KEY stores the hash whole (JSON patch
// "add" replaces the member); Update at TABLE/KEY/field sets one field.
func TestSONiCUpdateKeyReplacesHash(t *testing.T) {
	ctx := context.Background()
	tw, c := sonicTwin(t, "sonic-202411", nil)
	if code, msg := set(ctx, c, &gnmipb.SetRequest{Update: []*gnmipb.Update{
		{Path: cfg(t, "SCHEDULER/scheduler.0"), Val: ietf(`{"type":"STRICT"}`)},
		{Path: cfg(t, "PORT/Ethernet0/mtu"), Val: ietf(`"9216"`)},
	}}); code != codes.OK {
		t.Fatal(code, msg)
	}
	if got := jsonOf(t, tw, cfg(t, "SCHEDULER/scheduler.0")); got != `{"type":"STRICT"}` {
		t.Errorf("SCHEDULER|scheduler.0 = %s: the other fields must be gone", got)
	}
	port := jsonOf(t, tw, cfg(t, "PORT/Ethernet0"))
	if !strings.Contains(port, `"mtu":"9216"`) || !strings.Contains(port, `"lanes":"0,1,2,3"`) {
		t.Errorf("PORT|Ethernet0 = %s: a field update keeps the other fields", port)
	}
}

// patch_sorter.py takes the port admin-down around changes to
// PORT_QOS_MAP|p, QUEUE|p|*, BUFFER_PG|p|* (and BUFFER_QUEUE, the buffer
// profile lists): one flap per port per Set, counted in STATE_DB.
func TestSONiCPortCriticalChangesFlapPorts(t *testing.T) {
	ctx := context.Background()
	tw, c := sonicTwin(t, "sonic-202411", nil)
	req := &gnmipb.SetRequest{Update: []*gnmipb.Update{
		{Path: cfg(t, "PORT_QOS_MAP/Ethernet0/pfc_enable"), Val: ietf(`"3"`)},
		{Path: cfg(t, "QUEUE/Ethernet0|3"), Val: ietf(`{"scheduler":"scheduler.0"}`)},
		{Path: cfg(t, "BUFFER_PG/Ethernet4|3-4"), Val: ietf(`{"profile":"ingress_lossless_profile"}`)},
		{Path: cfg(t, "BUFFER_QUEUE/Ethernet8|3-4"), Val: ietf(`{"profile":"egress_lossy_profile"}`)},
		{Path: cfg(t, "SCHEDULER/scheduler.1"), Val: ietf(`{"type":"DWRR","weight":"50"}`)},
	}}
	if code, msg := set(ctx, c, req); code != codes.OK {
		t.Fatal(code, msg)
	}
	if got := tw.PortFlaps(); len(got) != 3 || got["Ethernet0"] != 1 || got["Ethernet4"] != 1 || got["Ethernet8"] != 1 {
		t.Fatalf("flaps = %v, want Ethernet0, Ethernet4 and Ethernet8 once", got)
	}
	// The same values again change nothing: no flap.
	if code, msg := set(ctx, c, req); code != codes.OK {
		t.Fatal(code, msg)
	}
	if got := tw.PortFlaps(); got["Ethernet0"] != 1 {
		t.Fatalf("flaps after a no-op Set = %v", got)
	}
	st, err := c.Get(ctx, &gnmipb.GetRequest{Encoding: gnmipb.Encoding_JSON_IETF,
		Prefix: &gnmipb.Path{Origin: "sonic-db", Target: "STATE_DB"},
		Path:   []*gnmipb.Path{{Elem: []*gnmipb.PathElem{{Name: twin.FlapTable}, {Name: "Ethernet0"}, {Name: "count"}}}}})
	if err != nil || len(st.GetNotification()) == 0 || len(st.GetNotification()[0].GetUpdate()) == 0 ||
		string(st.GetNotification()[0].GetUpdate()[0].GetVal().GetJsonIetfVal()) != `"1"` {
		t.Errorf("Get STATE_DB flap count = %v, %v", st, err)
	}
}

// addPFCWDEthernet0 sends the Update of a whole PFC_WD|Ethernet0 entry
// (pfcwd start_default's fields) and returns the Set's code and message.
func addPFCWDEthernet0(ctx context.Context, t *testing.T, c gnmipb.GNMIClient) (codes.Code, string) {
	return set(ctx, c, &gnmipb.SetRequest{Update: []*gnmipb.Update{
		{Path: cfg(t, "PFC_WD/Ethernet0"), Val: ietf(`{"action":"drop","detection_time":"200","restoration_time":"200"}`)}}})
}

// The factory CONFIG_DB of ACS-MSN3800 has no PFC_WD (default_pfcwd_status
// disable): GCU's jsonpatch "add /PFC_WD/<port>" has no parent to add to.
// sonic-utilities 202511 `config apply-patch` adds an empty table the
// patch writes below (append_emptytables_if_required, PR #4095): the add
// no longer fails in jsonpatch, and GCU's field validators refuse it
// instead (jsonpatch.from_diff makes it one add of the whole PFC_WD table,
// whose key Ethernet0 is in no scenario).
func TestSONiCWriteBelowAbsentPFCWDFails(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct{ profile, refusal string }{
		{"sonic-202405", "member 'PFC_WD' not found"},
		{"sonic-202511", "Modification of PFC_WD table is illegal"},
	} {
		tw, c := sonicTwin(t, tt.profile, nil)
		code, msg := addPFCWDEthernet0(ctx, t, c)
		if code != codes.Unknown || !strings.Contains(msg, tt.refusal) {
			t.Fatalf("%s: Set = %v %q, want %q", tt.profile, code, msg, tt.refusal)
		}
		if _, ok := tw.Value(cfg(t, "PFC_WD")); ok {
			t.Errorf("%s: PFC_WD appeared", tt.profile)
		}
	}
	// With the watchdog enabled at boot the table exists and the write works.
	tw2, c2 := sonicTwin(t, "sonic-202405", nil)
	if err := tw2.Put(cfg(t, "PFC_WD"), map[string]any{"GLOBAL": map[string]any{"POLL_INTERVAL": "200"}}); err != nil {
		t.Fatal(err)
	}
	if code, msg := addPFCWDEthernet0(ctx, t, c2); code != codes.OK {
		t.Fatal(code, msg)
	}
}

// sonic-gnmi's telemetry container runs with gnmi_native_write=false.
func TestSONiCTelemetryContainerRefusesWrites(t *testing.T) {
	ctx := context.Background()
	_, c := sonicTwin(t, "sonic-202411", (*profile.Profile).Telemetry)
	code, msg := set(ctx, c, &gnmipb.SetRequest{Update: []*gnmipb.Update{
		{Path: cfg(t, "PORT/Ethernet0/mtu"), Val: ietf(`"9216"`)}}})
	if code != codes.Unimplemented || msg != "GNMI native write is disabled" {
		t.Fatalf("Set = %v %q", code, msg)
	}
}

func TestFactoryNeedsProfile(t *testing.T) {
	if _, err := twin.Start(twin.Options{Name: "x", Platform: "sonic", Factory: true}); err == nil {
		t.Fatal("no error")
	}
	prof, _ := profile.Lookup("srlinux-25.3")
	if _, err := twin.Start(twin.Options{Name: "x", Platform: "sonic", Profile: prof}); err == nil {
		t.Fatal("profile of another platform: no error")
	}
}

// generic_updater.py: a patch that leaves a table with no keys raises
// EmptyTableError; deleting the table itself is fine.
func TestSONiCEmptyTableRefused(t *testing.T) {
	ctx := context.Background()
	tw, c := sonicTwin(t, "sonic-202411", nil)
	if err := tw.Put(cfg(t, "PFC_WD"), map[string]any{"Ethernet0": map[string]any{"action": "drop"}}); err != nil {
		t.Fatal(err)
	}
	code, msg := set(ctx, c, &gnmipb.SetRequest{Delete: []*gnmipb.Path{cfg(t, "PFC_WD/Ethernet0")}})
	if code != codes.Unknown || !strings.Contains(msg, "will result in empty tables") || !strings.Contains(msg, "Table: PFC_WD") {
		t.Fatalf("Set = %v %q", code, msg)
	}
	if code, msg := set(ctx, c, &gnmipb.SetRequest{Delete: []*gnmipb.Path{cfg(t, "PFC_WD")}}); code != codes.OK {
		t.Fatalf("table delete: %v %q", code, msg)
	}
}

// OpenConfig targets differ in reporting YANG defaults (gNMI spec 2.4.3):
// populate-defaults returns openconfig-qos red/uniform/config drop and
// enable-ecn (default false) although nobody wrote them; trim-defaults
// omits leaves equal to their default even when they were written.
func TestOpenConfigDefaultsModes(t *testing.T) {
	ctx := context.Background()
	prof, _ := profile.Lookup("openconfig")
	s, err := yangcheck.Platform("openconfig")
	if err != nil {
		t.Fatal(err)
	}
	path := "/qos/queue-management-profiles/queue-management-profile[name=ECN]"
	val := `{"name":"ECN","config":{"name":"ECN"},"red":{"uniform":{"config":{"min-threshold":"150000","max-threshold":"1500000","enable-ecn":false}}}}`
	for _, tc := range []struct {
		mode      string
		want, not []string
	}{
		{profile.PopulateDefaults, []string{`"drop":false`, `"enable-ecn":false`, `"min-threshold":"150000"`}, nil},
		{profile.TrimDefaults, []string{`"min-threshold":"150000"`}, []string{`"enable-ecn"`, `"drop"`}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			_, c := client(t, twin.Options{Name: "oc", Profile: prof, Schema: s, Defaults: tc.mode})
			if code, msg := set(ctx, c, &gnmipb.SetRequest{Replace: []*gnmipb.Update{{Path: p(t, path), Val: ietf(val)}}}); code != codes.OK {
				t.Fatal(code, msg)
			}
			res, err := c.Get(ctx, &gnmipb.GetRequest{Encoding: gnmipb.Encoding_JSON_IETF, Path: []*gnmipb.Path{p(t, path+"/red/uniform/config")}})
			if err != nil {
				t.Fatal(err)
			}
			got := string(res.GetNotification()[0].GetUpdate()[0].GetVal().GetJsonIetfVal())
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("Get = %s, want %s", got, w)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(got, w) {
					t.Errorf("Get = %s, must not hold %s", got, w)
				}
			}
		})
	}
	if _, err := twin.Start(twin.Options{Name: "oc", Profile: prof}); err == nil {
		t.Error("a defaults mode without a schema: no error")
	}
}

// GCU's field-operation validators (sonic-utilities 202411
// gcu_field_operation_validators.conf.json, rdma_config_update_validator)
// run on the CONFIG_DB diff a Set makes: on the factory's ACS-MSN3800
// (spc2) a new buffer profile, a WRED field other than AZURE_LOSSLESS's
// green thresholds and probability, and a new PFC_WD|GLOBAL are refused,
// the whole Set with them; xoff of an existing profile and AZURE_LOSSLESS's
// green_min_threshold pass.
func TestSONiCGCUFieldValidators(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		u    *gnmipb.Update
		ok   bool
	}{
		{"new buffer profile", &gnmipb.Update{Path: cfg(t, "BUFFER_PROFILE/FABRICCTL_PG_1"), Val: ietf(`{"pool":"ingress_lossless_pool","xoff":"1","xon":"1","size":"2","dynamic_th":"0"}`)}, false},
		{"xoff of the lossless profile", &gnmipb.Update{Path: cfg(t, "BUFFER_PROFILE/pg_lossless_100000_5m_profile/xoff"), Val: ietf(`"60000"`)}, true},
		{"size of the lossless profile", &gnmipb.Update{Path: cfg(t, "BUFFER_PROFILE/pg_lossless_100000_5m_profile/size"), Val: ietf(`"80000"`)}, false},
		{"AZURE_LOSSLESS green min", &gnmipb.Update{Path: cfg(t, "WRED_PROFILE/AZURE_LOSSLESS/green_min_threshold"), Val: ietf(`"150000"`)}, true},
		{"AZURE_LOSSLESS drop off", &gnmipb.Update{Path: cfg(t, "WRED_PROFILE/AZURE_LOSSLESS/wred_green_enable"), Val: ietf(`"false"`)}, false},
		{"AZURE_LOSSLESS hash replaced", &gnmipb.Update{Path: cfg(t, "WRED_PROFILE/AZURE_LOSSLESS"), Val: ietf(`{"ecn":"ecn_all","green_min_threshold":"150000","green_max_threshold":"1500000"}`)}, false},
		{"new PFC_WD table", &gnmipb.Update{Path: cfg(t, "PFC_WD"), Val: ietf(`{"GLOBAL":{"POLL_INTERVAL":"200"}}`)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tw, c := sonicTwin(t, "sonic-202411", nil)
			before := jsonOf(t, tw, cfg(t, "SCHEDULER/scheduler.0"))
			code, msg := set(ctx, c, &gnmipb.SetRequest{Update: []*gnmipb.Update{tc.u,
				{Path: cfg(t, "SCHEDULER/scheduler.0/weight"), Val: ietf(`"20"`)}}})
			if tc.ok != (code == codes.OK) {
				t.Fatalf("Set: %v %q, want ok=%v", code, msg, tc.ok)
			}
			if !tc.ok {
				if code != codes.Unknown || !strings.Contains(msg, "table is illegal- validating function generic_config_updater.field_operation_validators.rdma_config_update_validator returned False") {
					t.Errorf("refusal %v %q is not GCU's", code, msg)
				}
				if got := jsonOf(t, tw, cfg(t, "SCHEDULER/scheduler.0")); got != before {
					t.Errorf("the refused Set changed scheduler.0 to %s (not atomic)", got)
				}
			}
		})
	}
}

// sonic-gnmi answers Get of target OTHERS /osversion/build with the
// image's build_version (sonic_data_client/non_db_client.go
// getBuildVersion: json.Marshal of {build_version: "SONiC." + the
// version file's, error}); a twin of a profile reports a community build
// of the profile's branch unless told otherwise.
func TestSONiCBuildVersionAtOTHERS(t *testing.T) {
	ctx := context.Background()
	_, c := sonicTwin(t, "sonic-202505", nil)
	resp, err := c.Get(ctx, &gnmipb.GetRequest{Encoding: gnmipb.Encoding_JSON_IETF, Prefix: &gnmipb.Path{Target: "OTHERS"},
		Path: []*gnmipb.Path{{Elem: []*gnmipb.PathElem{{Name: "osversion"}, {Name: "build"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	for _, n := range resp.GetNotification() {
		for _, u := range n.GetUpdate() {
			got = string(u.GetVal().GetJsonIetfVal())
		}
	}
	if got != `{"build_version":"SONiC.202505.0-twin","error":""}` {
		t.Errorf("OTHERS /osversion/build = %s", got)
	}
}
