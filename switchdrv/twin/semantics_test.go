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

// A mutation is one Set a device refuses, and the device's reason.
type mutation struct {
	name string
	// setup is written with Put before the Set (state the device has).
	setup func(t *testing.T, tw interface {
		Put(*gnmipb.Path, any) error
	})
	req  func(t *testing.T) *gnmipb.SetRequest
	code codes.Code
	want []string // substrings of the error message, in order of importance
}

func srlSet(t *testing.T, path, val string) *gnmipb.SetRequest {
	return &gnmipb.SetRequest{Update: []*gnmipb.Update{{Path: p(t, path), Val: ietf(val)}}}
}

func sonicSet(t *testing.T, path, val string) *gnmipb.SetRequest {
	return &gnmipb.SetRequest{Update: []*gnmipb.Update{{Path: cfg(t, path), Val: ietf(val)}}}
}

// srlMutations are refused by a 7220 IXR-H4 on 24.10 and 25.3, with the
// srl_nokia-qos.yang reasons (leafref, must error-message, mandatory,
// if-feature against the profile's srl_nokia-features set).
var srlMutations = []mutation{
	{name: "dangling leafref: forwarding class that a fresh install does not have",
		req: func(t *testing.T) *gnmipb.SetRequest {
			return srlSet(t, "/qos/classifiers/dscp-policy[name=P]", `{"name":"P","dscp":[{"value":26,"forwarding-class":"fc3"}]}`)
		},
		code: codes.InvalidArgument, want: []string{"forwarding-class", `"fc3"`, "require-instance"}},
	{name: "violated must: queue-management-profile named default",
		req: func(t *testing.T) *gnmipb.SetRequest {
			return srlSet(t, "/qos/buffer-management/queue-management-profile[name=default]", `{"name":"default"}`)
		},
		code: codes.InvalidArgument, want: []string{"name 'default' is reserved"}},
	{name: "missing mandatory: queue without queue-index",
		req: func(t *testing.T) *gnmipb.SetRequest {
			return srlSet(t, "/qos/queues/queue[name=q3]", `{"name":"q3"}`)
		},
		code: codes.InvalidArgument, want: []string{"queue-index"}},
	{name: "disabled feature: ecn-dscp-policy (qos-ecn-dscp-policy is Jericho2-only)",
		req: func(t *testing.T) *gnmipb.SetRequest {
			return srlSet(t, "/qos/explicit-congestion-notification", `{"ecn-dscp-policy":"X"}`)
		},
		code: codes.InvalidArgument, want: []string{"ecn-dscp-policy", "qos-ecn-dscp-policy"}},
}

// sonicMutations are refused by GCU's YANG validation of the simulated
// CONFIG_DB ("Given patch will produce invalid config", patch_sorter.py).
// The sonic-*.yang modules declare no features: nothing to disable.
var sonicMutations = []mutation{
	{name: "dangling leafref: PORT_QOS_MAP to a DSCP_TO_TC_MAP that does not exist",
		req: func(t *testing.T) *gnmipb.SetRequest {
			return sonicSet(t, "PORT_QOS_MAP/Ethernet0/dscp_to_tc_map", `"NOPE"`)
		},
		code: codes.Unknown, want: []string{"Given patch will produce invalid config", "dscp_to_tc_map", "NOPE"}},
	{name: "violated must: watchdog detection_time below the GLOBAL POLL_INTERVAL",
		setup: func(t *testing.T, tw interface {
			Put(*gnmipb.Path, any) error
		}) {
			if err := tw.Put(cfg(t, "PFC_WD"), map[string]any{"GLOBAL": map[string]any{"POLL_INTERVAL": "400"}}); err != nil {
				t.Fatal(err)
			}
		},
		req: func(t *testing.T) *gnmipb.SetRequest {
			return sonicSet(t, "PFC_WD/Ethernet0", `{"action":"drop","detection_time":"200","restoration_time":"400"}`)
		},
		code: codes.Unknown, want: []string{"detection_time must be greater than or equal to POLL_INTERVAL"}},
	{name: "missing mandatory: PORT without lanes",
		req: func(t *testing.T) *gnmipb.SetRequest {
			return sonicSet(t, "PORT/Ethernet0", `{"speed":"100000","mtu":"9100"}`)
		},
		code: codes.Unknown, want: []string{"Given patch will produce invalid config", "lanes"}},
}

// ocMutations are refused by an OpenConfig (and EOS) target validating
// openconfig-qos / openconfig-interfaces. Neither the OpenConfig nor the
// Arista modules shipped have a must or a feature on what fabricctl
// writes: nothing to violate or disable there.
var ocMutations = []mutation{
	{name: "dangling leafref: scheduler policy that does not exist",
		req: func(t *testing.T) *gnmipb.SetRequest {
			return srlSet(t, "/qos/interfaces/interface[interface-id=Ethernet1]",
				`{"interface-id":"Ethernet1","config":{"interface-id":"Ethernet1"},"output":{"scheduler-policy":{"config":{"name":"NOPE"}}}}`)
		},
		code: codes.InvalidArgument, want: []string{"scheduler-policy", `"NOPE"`, "require-instance"}},
	{name: "missing mandatory: interface without config/type",
		req: func(t *testing.T) *gnmipb.SetRequest {
			return srlSet(t, "/interfaces/interface[name=Ethernet1]", `{"name":"Ethernet1","config":{"name":"Ethernet1","mtu":9000}}`)
		},
		code: codes.InvalidArgument, want: []string{`mandatory leaf "type" is missing`}},
}

func TestProfiledTwinsRefuseWithTheDevicesReason(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		profile string
		muts    []mutation
	}{
		{"srlinux-24.10", srlMutations}, {"srlinux-25.3", srlMutations},
		{"sonic-202405", sonicMutations}, {"sonic-202411", sonicMutations},
		{"openconfig", ocMutations}, {"eos", ocMutations},
	} {
		for _, m := range tc.muts {
			t.Run(tc.profile+"/"+m.name, func(t *testing.T) {
				tw := strictTwin(t, tc.profile)
				if m.setup != nil {
					m.setup(t, tw)
				}
				_, c := dial(t, tw)
				before := tw.Sets()
				_, err := c.Set(ctx, m.req(t))
				st, _ := status.FromError(err)
				if st.Code() != m.code {
					t.Fatalf("Set = %v %q, want %v", st.Code(), st.Message(), m.code)
				}
				for _, w := range m.want {
					if !strings.Contains(st.Message(), w) {
						t.Errorf("reason %q lacks %q", st.Message(), w)
					}
				}
				if tw.Sets() != before {
					t.Error("the refused Set was committed")
				}
				t.Logf("%s", st.Message())
			})
		}
	}
}

// The controls: what the device accepts, the twin accepts (a fresh 7220
// creates its named queues and forwarding classes in the same Set that
// uses them; SONiC takes a new DSCP_TO_TC_MAP entry and a PORT_QOS_MAP
// field that references it).
func TestProfiledTwinsAcceptValidSets(t *testing.T) {
	ctx := context.Background()
	srl := &gnmipb.SetRequest{Update: []*gnmipb.Update{{Path: p(t, "/qos"), Val: ietf(`{
		"queues": {"queue": [{"name": "unicast-3", "queue-index": 3}, {"name": "multicast-3", "queue-index": 3}]},
		"forwarding-classes": {"forwarding-class": [{"name": "fc3", "forwarding-class-index": 3,
			"output": {"unicast-queue": "unicast-3", "multicast-queue": "multicast-3"}}]},
		"classifiers": {"dscp-policy": [{"name": "P", "dscp": [{"value": 26, "forwarding-class": "fc3"}]}]}}`)}}}
	sonicReq := &gnmipb.SetRequest{Update: []*gnmipb.Update{
		{Path: cfg(t, "DSCP_TO_TC_MAP/FABRICCTL"), Val: ietf(`{"26":"3","48":"6"}`)},
		{Path: cfg(t, "PORT_QOS_MAP/Ethernet0/dscp_to_tc_map"), Val: ietf(`"FABRICCTL"`)}}}
	for _, tc := range []struct {
		profile string
		req     *gnmipb.SetRequest
	}{{"srlinux-24.10", srl}, {"srlinux-25.3", srl}, {"sonic-202405", sonicReq}, {"sonic-202411", sonicReq}} {
		tw := strictTwin(t, tc.profile)
		_, c := dial(t, tw)
		if _, err := c.Set(ctx, tc.req); err != nil {
			t.Errorf("%s: %v", tc.profile, err)
		}
	}
}

// srlPFCSet creates the named objects a pfc-mapping-profile points at and
// the profile, its pause priorities written as prios (JSON values).
func srlPFCSet(t *testing.T, prios ...string) *gnmipb.SetRequest {
	pause := ""
	for i, pr := range prios {
		q := []string{"unicast-3", "multicast-3"}[i]
		if i > 0 {
			pause += ","
		}
		pause += `{"queue-name":"` + q + `","pfc-pause-frame-priority":` + pr + `,"enable-pfc":true}`
	}
	return &gnmipb.SetRequest{Update: []*gnmipb.Update{
		{Path: p(t, "/qos"), Val: ietf(`{
		"queues": {"queue": [{"name": "unicast-3", "queue-index": 3}, {"name": "multicast-3", "queue-index": 3}],
			"pfc-queue": [{"pfc-queue-name": "pfc3", "queue-index": 3}]},
		"forwarding-classes": {"forwarding-class": [{"name": "fc3", "forwarding-class-index": 3,
			"output": {"unicast-queue": "unicast-3", "multicast-queue": "multicast-3"}}]},
		"pfc-mapping-profile": [{"name": "P",
			"received-traffic": {"unicast-mapping": {"pfc-queue": [{"pfc-queue-name": "pfc3", "forwarding-class": ["fc3"], "pfc-pause-frame-priority": ` + prios[0] + `}]}},
			"received-pfc-pause-frames": {"queue": [` + pause + `]}}]}`)}}}
}

// srlSubinterfacePFCSet binds pfc {pfc-enable false} to subinterface
// ethernet-1/1.0, created in the same Set.
func srlSubinterfacePFCSet(t *testing.T) *gnmipb.SetRequest {
	return &gnmipb.SetRequest{Update: []*gnmipb.Update{
		{Path: p(t, "/interface[name=ethernet-1/1]"), Val: ietf(`{"name":"ethernet-1/1","admin-state":"enable",
			"subinterface":[{"index":0,"type":"srl_nokia-interfaces:routed","admin-state":"enable"}]}`)},
		{Path: p(t, "/qos/interfaces/interface[interface-id=ethernet-1/1.0]"), Val: ietf(`{"interface-id":"ethernet-1/1.0",
			"interface-ref":{"interface":"ethernet-1/1","subinterface":0},"pfc":{"pfc-enable":false}}`)}}}
}

// TestTwinsSpeakTheirReleasesYANG (issue 33): each profile's twin
// validates with its own release's YANG (internal/yangcheck releases.go),
// so it accepts and refuses what that release does where releases differ:
// SR Linux 24.10.3's pfc-pause-frame-priority is a leaf-list ([3]) with no
// unique, and its pfc container refuses a subinterface; 25.3.1's is a leaf
// (3), unique per list, and its pfc container takes pfc-enable false on a
// subinterface. SONiC's PFC_WD GLOBAL POLL_INTERVAL takes 100..3000 ms up
// to 202505 and 100..1000 from 202511, and PORT_QOS_MAP pfc_enable "" is
// refused up to 202411. (pfc_stat_history, 202511 only, is held in
// internal/yangcheck: before 202511 the config updater's field validators
// refuse the PFC_WD change first.) Before, every
// profile's twin validated with the newest release's modules.
func TestTwinsSpeakTheirReleasesYANG(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		profile, name string
		req           func(t *testing.T) *gnmipb.SetRequest
		want          string // "" = accepted
		pfcwd         bool   // the switch has PFC_WD (GLOBAL, Ethernet0 detecting in 2 s)
	}{
		{"srlinux-24.10", "pause priority as a number", func(t *testing.T) *gnmipb.SetRequest { return srlPFCSet(t, "3") }, "leaf-list value must be a JSON array", false},
		{"srlinux-24.10", "pause priority as a leaf-list", func(t *testing.T) *gnmipb.SetRequest { return srlPFCSet(t, "[3]") }, "", false},
		{"srlinux-25.3", "pause priority as a number", func(t *testing.T) *gnmipb.SetRequest { return srlPFCSet(t, "3") }, "", false},
		{"srlinux-25.3", "pause priority as a leaf-list", func(t *testing.T) *gnmipb.SetRequest { return srlPFCSet(t, "[3]") }, "must be a JSON number", false},
		{"srlinux-24.10", "two queues paused by one priority", func(t *testing.T) *gnmipb.SetRequest { return srlPFCSet(t, "[3]", "[3]") }, "", false},
		{"srlinux-25.3", "two queues paused by one priority", func(t *testing.T) *gnmipb.SetRequest { return srlPFCSet(t, "3", "3") }, `unique "pfc-pause-frame-priority"`, false},
		{"srlinux-24.10", "pfc on a subinterface", srlSubinterfacePFCSet, "Attachment of pfc, not permitted for sub-interfaces", false},
		{"srlinux-25.3", "pfc on a subinterface", srlSubinterfacePFCSet, "", false},
		{"sonic-202411", "pfc_enable empty", func(t *testing.T) *gnmipb.SetRequest { return sonicSet(t, "PORT_QOS_MAP/Ethernet0/pfc_enable", `""`) }, "pfc_enable", false},
		{"sonic-202505", "pfc_enable empty", func(t *testing.T) *gnmipb.SetRequest { return sonicSet(t, "PORT_QOS_MAP/Ethernet0/pfc_enable", `""`) }, "", false},
		{"sonic-202505", "poll interval 2 s", func(t *testing.T) *gnmipb.SetRequest { return sonicSet(t, "PFC_WD/GLOBAL/POLL_INTERVAL", `"2000"`) }, "", true},
		{"sonic-202511", "poll interval 2 s", func(t *testing.T) *gnmipb.SetRequest { return sonicSet(t, "PFC_WD/GLOBAL/POLL_INTERVAL", `"2000"`) }, "out of range 100..1000", true},
	} {
		t.Run(tc.profile+"/"+tc.name, func(t *testing.T) {
			tw := strictTwin(t, tc.profile)
			if tc.pfcwd {
				if err := tw.Put(cfg(t, "PFC_WD"), map[string]any{"GLOBAL": map[string]any{"POLL_INTERVAL": "200"},
					"Ethernet0": map[string]any{"action": "drop", "detection_time": "2000", "restoration_time": "2000"}}); err != nil {
					t.Fatal(err)
				}
			}
			_, c := dial(t, tw)
			_, err := c.Set(ctx, tc.req(t))
			st, _ := status.FromError(err)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v %s", st.Code(), st.Message())
			case tc.want != "" && err == nil:
				t.Errorf("accepted; the release refuses it (%s)", tc.want)
			case tc.want != "" && !strings.Contains(st.Message(), tc.want):
				t.Errorf("refused with %q, want the release's reason %q", st.Message(), tc.want)
			}
		})
	}
}

// TestTwinRefusesAnotherReleasesSchema: a profiled twin given the YANG of
// another release than its profile's does not start, and YANGValidator
// with another release's schema refuses every Set saying so.
func TestTwinRefusesAnotherReleasesSchema(t *testing.T) {
	prof, err := profile.Lookup("srlinux-24.10")
	if err != nil {
		t.Fatal(err)
	}
	s, err := yangcheck.ReleaseSchema("srlinux-25.3.1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := twin.New(twin.Options{Name: "sw", Profile: prof, Factory: true, Schema: s}); err == nil || !strings.Contains(err.Error(), "speaks the YANG of release srlinux-24.10.3") {
		t.Errorf("twin.New with 25.3.1's schema for srlinux-24.10: %v", err)
	}
	if err := twin.YANGValidator(s, prof)("", map[string]any{}); err == nil || !strings.Contains(err.Error(), "srlinux-24.10.3") {
		t.Errorf("YANGValidator with another release's schema: %v", err)
	}
}
