package switchdrv_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/yangcheck"
	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/switchdrv"
)

func TestCompare(t *testing.T) {
	const p = "/qos/queue-management-profiles/queue-management-profile[name=ROCE_ECN]"
	tests := []struct {
		name     string
		replace  bool
		want     string // desired JSON_IETF
		got      string // observed JSON ("" = absent)
		cell     int64
		wantDiff []plan.Change
	}{
		{name: "module prefixes, int64 as string, member order", replace: true,
			want: `{"openconfig-qos:wred":{"uniform":{"config":{"min-threshold":"153600","enable-ecn":true,"drop":false}}}}`,
			got:  `{"wred":{"uniform":{"config":{"drop":false,"enable-ecn":true,"min-threshold":153600}}}}`},
		{name: "identityref prefix", replace: true,
			want: `{"config":{"type":"openconfig-qos-types:IPV4"}}`,
			got:  `{"config":{"type":"IPV4"}}`},
		{name: "list order and keys", replace: true,
			want: `{"queue":[{"name":"3","config":{"id":3}},{"name":"0","config":{"id":0}}]}`,
			got:  `{"queue":[{"name":"0","config":{"id":"0"}},{"name":"3","config":{"id":"3"}}]}`},
		{name: "leaf-list as a set", replace: true,
			want: `{"dscp-set":[26,48]}`, got: `{"dscp-set":[48,26]}`},
		{name: "threshold within one cell", replace: true, cell: 256,
			want: `{"min-threshold":"150000"}`, got: `{"min-threshold":"150016"}`},
		{name: "SONiC xoff within one cell", replace: true, cell: 256,
			want: `{"xoff":"66500","pool":"ingress_lossless_pool"}`, got: `{"xoff":"66560","pool":"ingress_lossless_pool"}`},
		{name: "non-buffer number is exact", replace: true, cell: 256,
			want: `{"weight":"50"}`, got: `{"weight":"51"}`,
			wantDiff: []plan.Change{{Action: plan.Update, Path: p + "/weight", Before: "51", After: "50"}}},
		{name: "threshold beyond one cell", replace: true, cell: 256,
			want: `{"min-threshold":"150000"}`, got: `{"min-threshold":"150512"}`,
			wantDiff: []plan.Change{{Action: plan.Update, Path: p + "/min-threshold", Before: "150512", After: "150000"}}},
		{name: "absent", replace: true, want: `{"config":{"name":"ROCE_ECN"}}`,
			wantDiff: []plan.Change{{Action: plan.Create, Path: p, After: `{"config":{"name":"ROCE_ECN"}}`}}},
		{name: "missing leaf", replace: true, want: `{"config":{"name":"ROCE_ECN","enable-ecn":true}}`, got: `{"config":{"name":"ROCE_ECN"}}`,
			wantDiff: []plan.Change{{Action: plan.Create, Path: p + "/config/enable-ecn", After: "true"}}},
		{name: "missing list entry", replace: true,
			want: `{"queue":[{"name":"3","config":{"id":3}},{"name":"0","config":{"id":0}}]}`,
			got:  `{"queue":[{"name":"0","config":{"id":"0"}},{"name":"6","config":{"id":"6"}}]}`,
			wantDiff: []plan.Change{
				{Action: plan.Create, Path: p + "/queue[name=3]", After: `{"config":{"id":3},"name":"3"}`},
				{Action: plan.Delete, Path: p + "/queue[name=6]", Before: `{"config":{"id":"6"},"name":"6"}`},
			}},
		{name: "replace deletes extra leaves", replace: true,
			want: `{"config":{"name":"ROCE_ECN"}}`, got: `{"config":{"name":"ROCE_ECN","max-threshold":"9"}}`,
			wantDiff: []plan.Change{{Action: plan.Delete, Path: p + "/config/max-threshold", Before: "9"}}},
		{name: "update keeps extra leaves", replace: false,
			want: `{"config":{"name":"ROCE_ECN"}}`, got: `{"config":{"name":"ROCE_ECN","max-threshold":"9"}}`},
		{name: "key leaves filled in by the device", replace: true,
			want: `{"config":{"name":"ROCE_ECN"}}`, got: `{"name":"ROCE_ECN","config":{"name":"ROCE_ECN"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := &gnmipb.Update{Path: path(p), Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(tc.want)}}}
			d := &switchdrv.Desired{Switch: "leaf1"}
			if tc.replace {
				d.Replaces = []*gnmipb.Update{u}
			} else {
				d.Updates = []*gnmipb.Update{u}
			}
			snap := &switchdrv.Snapshot{Switch: "leaf1", Entries: []switchdrv.Entry{{Path: p, Exists: tc.got != "", JSON: json.RawMessage(tc.got)}}}
			got, err := switchdrv.Compare(d, snap, switchdrv.Quirks{BufferCellBytes: tc.cell})
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				got[i].Reason = ""
			}
			if diff := cmp.Diff(tc.wantDiff, got); diff != "" {
				t.Errorf("Compare mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompareCLI(t *testing.T) {
	want := "qos map dscp 26 to traffic-class 3\ninterface Ethernet1/1\n   mtu 9216\n   priority-flow-control on\n!\ninterface Ethernet2/1\n   mtu 9216\n   priority-flow-control on\n!\n"
	got := "qos map dscp 26 to traffic-class 3\ninterface Ethernet1/1\n   mtu 9216\n   priority-flow-control on\n!\ninterface Ethernet2/1\n   mtu 1500\n!\n"
	d := &switchdrv.Desired{Switch: "leaf3", Updates: []*gnmipb.Update{{Path: &gnmipb.Path{Origin: "cli"},
		Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_AsciiVal{AsciiVal: want}}}}}
	snap := &switchdrv.Snapshot{Switch: "leaf3", Entries: []switchdrv.Entry{{Path: "cli:/", Exists: true, ASCII: &got}}}
	changes, err := switchdrv.Compare(d, snap, switchdrv.Quirks{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range changes {
		changes[i].Reason = ""
	}
	wantC := []plan.Change{
		{Action: plan.Update, Path: "cli:/", Before: "interface Ethernet2/1 >> mtu 1500", After: "interface Ethernet2/1 >> mtu 9216"},
		{Action: plan.Create, Path: "cli:/", After: "interface Ethernet2/1 >> priority-flow-control on"},
	}
	if diff := cmp.Diff(wantC, changes); diff != "" {
		t.Errorf("Compare mismatch (-want +got):\n%s", diff)
	}
}

// TestCompareCLINoResetsStaleLossless: an EOS port a lossless apply left
// with PFC and marking, compared with the lossy and pfc-only payloads'
// "no" forms (AVD ethernet-interfaces.j2 "no priority-flow-control"; "no
// random-detect ecn" under the tx-queue): the stale settings are drift
// (deletes), whatever their values; absent, "no" lines are in sync.
func TestCompareCLINoResetsStaleLossless(t *testing.T) {
	want := "interface Ethernet1\n   no priority-flow-control\n   priority-flow-control priority 3 drop\n   tx-queue 3\n      no random-detect ecn\n!\n"
	got := "interface Ethernet1\n   priority-flow-control on\n   priority-flow-control priority 3 no-drop\n   tx-queue 3\n      random-detect ecn minimum-threshold 150000 bytes maximum-threshold 1501500 bytes max-mark-probability 100\n!\n"
	compare := func(got string) []plan.Change {
		d := &switchdrv.Desired{Switch: "leaf1", Updates: []*gnmipb.Update{{Path: &gnmipb.Path{Origin: "cli"},
			Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_AsciiVal{AsciiVal: want}}}}}
		snap := &switchdrv.Snapshot{Switch: "leaf1", Entries: []switchdrv.Entry{{Path: "cli:/", Exists: true, ASCII: &got}}}
		changes, err := switchdrv.Compare(d, snap, switchdrv.Quirks{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range changes {
			changes[i].Reason = ""
		}
		return changes
	}
	wantC := []plan.Change{
		{Action: plan.Delete, Path: "cli:/", Before: "interface Ethernet1 >> priority-flow-control on"},
		{Action: plan.Update, Path: "cli:/", Before: "interface Ethernet1 >> priority-flow-control priority 3 no-drop", After: "interface Ethernet1 >> priority-flow-control priority 3 drop"},
		{Action: plan.Delete, Path: "cli:/", Before: "interface Ethernet1 >> tx-queue 3 >> random-detect ecn minimum-threshold 150000 bytes maximum-threshold 1501500 bytes max-mark-probability 100"},
	}
	if diff := cmp.Diff(wantC, compare(got)); diff != "" {
		t.Errorf("Compare mismatch (-want +got):\n%s", diff)
	}
	if c := compare("interface Ethernet1\n   priority-flow-control priority 3 drop\n   tx-queue 3\n!\n"); len(c) != 0 {
		t.Errorf("Compare of a port without the settings: %v, want in sync", c)
	}
}

// TestCompareSchemaDefaults (issue 10 item 18): a real OpenConfig target
// reports YANG default leaves it populated (red/uniform/config/drop=false,
// openconfig-qos-elements), another omits leaves equal to their default.
// Neither is drift: Compare fills schema defaults on both sides of a
// replaced subtree and on the observed side of a merged one.
func TestCompareSchemaDefaults(t *testing.T) {
	const p = "/qos/queue-management-profiles/queue-management-profile[name=FABRICCTL_ECN_ROCE]"
	want := `{"name":"FABRICCTL_ECN_ROCE","config":{"name":"FABRICCTL_ECN_ROCE"},"wred":{"uniform":{"config":{"min-threshold":"150000","max-threshold":"1501500","enable-ecn":true,"drop":false}}}}`
	tests := []struct {
		name    string
		replace bool
		got     string
		changes int
	}{
		{"populated defaults", true, `{"name":"FABRICCTL_ECN_ROCE","config":{"name":"FABRICCTL_ECN_ROCE"},"red":{"uniform":{"config":{"drop":false,"enable-ecn":false}}},"wred":{"uniform":{"config":{"min-threshold":"150000","max-threshold":"1501500","enable-ecn":true,"drop":false}}}}`, 0},
		{"trimmed defaults", true, `{"name":"FABRICCTL_ECN_ROCE","config":{"name":"FABRICCTL_ECN_ROCE"},"wred":{"uniform":{"config":{"min-threshold":"150000","max-threshold":"1501500","enable-ecn":true}}}}`, 0},
		{"trimmed defaults, merged", false, `{"name":"FABRICCTL_ECN_ROCE","config":{"name":"FABRICCTL_ECN_ROCE"},"wred":{"uniform":{"config":{"min-threshold":"150000","max-threshold":"1501500","enable-ecn":true}}}}`, 0},
		{"a default changed on the switch is drift", true, `{"name":"FABRICCTL_ECN_ROCE","config":{"name":"FABRICCTL_ECN_ROCE"},"red":{"uniform":{"config":{"drop":true}}},"wred":{"uniform":{"config":{"min-threshold":"150000","max-threshold":"1501500","enable-ecn":true}}}}`, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := &gnmipb.Update{Path: path(p), Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(want)}}}
			d := &switchdrv.Desired{Switch: "oc1", Platform: "openconfig"}
			if tc.replace {
				d.Replaces = []*gnmipb.Update{u}
			} else {
				d.Updates = []*gnmipb.Update{u}
			}
			snap := &switchdrv.Snapshot{Switch: "oc1", Entries: []switchdrv.Entry{{Path: p, Exists: true, JSON: json.RawMessage(tc.got)}}}
			schema, err := yangcheck.Platform(intent.PlatformOpenConfig)
			if err != nil {
				t.Fatal(err)
			}
			got, err := switchdrv.Compare(d, snap, switchdrv.Quirks{SchemaDefaults: true, Defaults: schema})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.changes {
				t.Errorf("Compare = %d changes %+v, want %d", len(got), got, tc.changes)
			}
			if snap.Entries[0].JSON != nil && string(snap.Entries[0].JSON) != tc.got {
				t.Error("Compare changed the snapshot")
			}
		})
	}
}
