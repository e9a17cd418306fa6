package main

import (
	"strings"
	"testing"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/switchdrv/srl"
)

// TestSRLinuxPlanChecksSubinterfaces (issue 27 items 3 and 4): on the lab's
// profiled 7220 twin, a port whose subinterface 0 is missing, or whose
// routed subinterface carries IP packets below the RoCE packets
// (rocePathMTU 4096 + 96 B; the default-ip-mtu is 1500), is refused by plan
// and apply before anything is written, naming the port and the SR Linux
// command that fixes it (before: plan "4 to create", then apply failed on
// the raw leafref and rolled back, exit 4; ip-mtu 1500 was only a note).
// diff reports both as drift (exit 2) with the fix. An ip-mtu between the
// RoCE packets and the port's IP MTU is drift, not a refusal.
func TestSRLinuxPlanChecksSubinterfaces(t *testing.T) {
	l, _ := testLab(t)
	tw := twinByName(t, l, "leaf1")
	sub := srl.SubinterfacePath("ethernet-1/4", 0)
	only := []string{"--skip-hosts", "--switch", "leaf1"}
	run := func(t *testing.T, want int, args ...string) string {
		t.Helper()
		return runCLIWant(t, want, append(append(args, "-f", l.file), only...)...)
	}
	setSub := func(v map[string]any) {
		t.Helper()
		if v == nil {
			if err := tw.Delete(sub); err != nil {
				t.Fatal(err)
			}
			return
		}
		v["index"], v["type"], v["admin-state"] = 0, "srl_nokia-interfaces:routed", "enable"
		if err := tw.Put(&gnmipb.Path{Elem: []*gnmipb.PathElem{
			{Name: "srl_nokia-interfaces:interface", Key: map[string]string{"name": "ethernet-1/4"}},
			{Name: "subinterface", Key: map[string]string{"index": "0"}}}}, v); err != nil {
			t.Fatal(err)
		}
	}
	backups := t.TempDir()
	for _, tc := range []struct {
		name string
		sub  map[string]any // nil: no subinterface 0
		want []string
	}{
		{"missing", nil, []string{"port ethernet-1/4 subinterface 0: ethernet-1/4.0 does not exist",
			"`set / interface ethernet-1/4 subinterface 0 type routed ip-mtu 9216`"}},
		{"default ip-mtu", map[string]any{}, []string{"ethernet-1/4.0 carries IP packets of up to 1500 B (no ip-mtu of its own: /system/mtu/default-ip-mtu, 1500 out of the box), below the RoCE packets of up to 4192 B",
			"`set / interface ethernet-1/4 subinterface 0 ip-mtu 9216`"}},
		{"ip-mtu 4000", map[string]any{"ip-mtu": 4000}, []string{"carries IP packets of up to 4000 B (its ip-mtu), below the RoCE packets of up to 4192 B"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setSub(tc.sub)
			sets := tw.Sets()
			out := run(t, ExitError, "plan")
			for _, w := range append(tc.want, "plan refused") {
				if !strings.Contains(out, w) {
					t.Errorf("plan lacks %q:\n%s", w, out)
				}
			}
			out = run(t, ExitError, "apply", "--backup-dir", backups)
			if !strings.Contains(out, tc.want[0]) {
				t.Errorf("apply lacks %q:\n%s", tc.want[0], out)
			}
			if tw.Sets() != sets {
				t.Errorf("the refused plan wrote %d Set(s)", tw.Sets()-sets)
			}
			out = run(t, ExitChanges, "diff")
			for _, w := range append(tc.want, "!! lacks port ethernet-1/4 subinterface 0") {
				if !strings.Contains(out, w) {
					t.Errorf("diff lacks %q:\n%s", w, out)
				}
			}
		})
	}

	// ip-mtu above the RoCE packets but below the port's IP MTU: apply
	// goes on; diff reports what the port cannot carry.
	setSub(map[string]any{"ip-mtu": 5000})
	run(t, ExitOK, "apply", "--backup-dir", backups)
	out := run(t, ExitChanges, "diff")
	for _, w := range []string{"!! lacks port ethernet-1/4 subinterface 0: ethernet-1/4.0 carries IP packets of up to 5000 B (its ip-mtu), below the 9216 B the intent's MTU needs",
		"set / interface ethernet-1/4 subinterface 0 ip-mtu 9216", "1 lacking what apply cannot write"} {
		if !strings.Contains(out, w) {
			t.Errorf("diff lacks %q:\n%s", w, out)
		}
	}
	// The operator runs the fix: in sync.
	setSub(map[string]any{"ip-mtu": 9216})
	run(t, ExitOK, "diff")
}
