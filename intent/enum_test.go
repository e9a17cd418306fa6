package intent

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestEnumValuesHint holds each enum of the intent to a hint for a near miss
// (letter case, a typo) and to the position of the value, not of the entry
// or block that holds it.
func TestEnumValuesHint(t *testing.T) {
	sw := func(kv string) string {
		return header + "policy: {preset: roce-lossless}\ninventory:\n  switches:\n    - name: s\n      address: 'a:1'\n" + kv
	}
	pol := func(kv string) string { return header + "policy:\n  preset: roce-lossless\n" + kv }
	cases := []struct {
		name, src, pos, path, want string
	}{
		{"platform case", sw("      platform: SONiC\n"), "8:17", "inventory.switches[s].platform",
			`unknown platform "SONiC"; values are case-sensitive: write "sonic" (known: eos, openconfig, sonic, srlinux)`},
		{"platform typo", sw("      platform: srlinx\n"), "8:17", "inventory.switches[s].platform",
			`unknown platform "srlinx"; did you mean "srlinux"?`},
		{"platform far", sw("      platform: junos\n"), "8:17", "inventory.switches[s].platform",
			`unknown platform "junos" (known: eos, openconfig, sonic, srlinux)`},
		{"profile typo", sw("      platform: srlinux\n      profile: srlinux-25.03\n"), "9:16", "inventory.switches[s].profile",
			`unknown profile "srlinux-25.03"; did you mean "srlinux-25.3"?`},
		{"asic case", sw("      platform: sonic\n      asic: Tomahawk4\n"), "9:13", "inventory.switches[s].asic",
			`unknown asic "Tomahawk4"; values are case-sensitive: write "tomahawk4"`},
		{"preset typo", header + "policy:\n  mtu: 9216\n  preset: roce-losless\n", "5:11", "policy.preset",
			`unknown preset "roce-losless"; did you mean "roce-lossless"?`},
		{"dcbx case", pol("  dcbx: Host-Static\n"), "5:9", "policy.dcbx",
			`unknown DCBX mode "Host-Static"; values are case-sensitive: write "host-static"`},
		{"watchdog action", pol("  watchdog:\n    detect: 200ms\n    action: dorp\n"), "7:13", "policy.watchdog.action",
			`unknown action "dorp"; did you mean "drop"?`},
		{"roce mode", pol("  roce:\n    mode: rocev2\n"), "6:11", "policy.roce.mode",
			`unknown RoCE mode "rocev2"; did you mean "RoCE v2"?`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(tc.src))
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("want errors, got %v", err)
			}
			for _, e := range es {
				if e.Path != tc.path {
					continue
				}
				if got := fmt.Sprintf("%d:%d", e.Pos.Line, e.Pos.Col); got != tc.pos {
					t.Errorf("position %s, want %s (the value)", got, tc.pos)
				}
				if !strings.Contains(e.Msg, tc.want) {
					t.Errorf("message %q\nwant it to contain %q", e.Msg, tc.want)
				}
				return
			}
			t.Fatalf("no error at %s: %v", tc.path, err)
		})
	}
}

// TestUnitCaseHint holds a duration and a length written in upper case to
// the same lower-case hint, at the value.
func TestUnitCaseHint(t *testing.T) {
	for _, tc := range []struct{ src, pos, want string }{
		{header + "policy:\n  preset: roce-lossless\n  watchdog:\n    detect: 200MS\n", "6:13",
			`duration "200MS": units are lower case (M is mega, m is minute): write 200ms`},
		{header + "policy:\n  preset: roce-lossless\n  watchdog: {restore: 1S}\n", "5:23",
			`duration "1S": units are lower case (M is mega, m is minute): write 1s`},
		{header + "policy: {preset: roce-lossless}\ninventory:\n  hosts:\n    - name: h\n      nics:\n        - {interface: e, speed: 400G, cable: 100M}\n", "8:46",
			`length "100M": units are lower case (M would be mega): write 100m`},
	} {
		_, err := Parse("t.yaml", []byte(tc.src))
		var es Errors
		if !errors.As(err, &es) || len(es) != 1 {
			t.Fatalf("%s: want one error, got %v", tc.want, err)
		}
		if got := fmt.Sprintf("%d:%d", es[0].Pos.Line, es[0].Pos.Col); got != tc.pos || !strings.Contains(es[0].Msg, tc.want) {
			t.Errorf("got %v\nwant %s: ...%s", es[0], tc.pos, tc.want)
		}
	}
}
