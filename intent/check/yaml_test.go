package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricctl/fabricctl/intent"
)

// base is a clean intent; the position tests splice one mistake into it.
const base = `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: pod1}
policy:
  preset: roce-lossless
  classes:
    - name: roce
      ecn: {min: 150KB, max: 1.5MB}
  roce: {tos: 106}
inventory:
  switches:
    - name: leaf1
      platform: srlinux
      address: 127.0.0.1:57400
      credentials: {usernameEnv: GNMI_USER, passwordEnv: GNMI_PASS}
      buffer: 2MB
      ports:
        - {name: "ethernet-1/{1..4}", speed: 400G, cable: 3m}
        - {name: ethernet-1/5, speed: 400G, cable: 3m, mtu: 9100}
    - name: spine1
      platform: sonic
      asic: spectrum3
      address: 127.0.0.1:57401
      credentials: {usernameEnv: GNMI_USER, passwordEnv: GNMI_PASS}
      buffer: 2MB
      ports:
        - {name: "Ethernet{0..12..4}", speed: 400G, cable: 3m}
  hosts:
    - name: gpu1
      address: 10.0.1.1
      nics: [{interface: ens1f0np0, rdma: mlx5_0, speed: 400G}]
  links:
    - [gpu1:ens1f0np0, leaf1:ethernet-1/1]
    - [leaf1:ethernet-1/2, spine1:Ethernet0]
`

func TestFromErrors(t *testing.T) {
	_, err := intent.Parse("bad.yaml", []byte("apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\npolicy:\n  mtu: big\n  colour: red\n"))
	if err == nil {
		t.Fatal("Parse accepted a bad intent")
	}
	fs := FromErrors(err)
	if len(fs) < 2 {
		t.Fatalf("FromErrors = %d findings, want one per parse error (>= 2)", len(fs))
	}
	for i, f := range fs {
		if f.ID != ParseErrorID || f.Severity != Error || !f.Pos.IsValid() {
			t.Errorf("finding %d = %+v, want a positioned %s error", i, f, ParseErrorID)
		}
	}
	if got := FromErrors(errors.New("open x.yaml: permission denied")); got != nil {
		t.Errorf("FromErrors(plain error) = %v, want nil", got)
	}
}

func TestWriteText(t *testing.T) {
	fs := []Finding{
		{ID: "FC116", Severity: Error, Pos: intent.Pos{File: "a.yaml", Line: 5, Col: 3}, Path: "policy.globalPause", Message: "global pause on", Fix: "turn it off"},
		{ID: "FC114", Severity: Warning, Pos: intent.Pos{File: "b.yaml", Line: 2, Col: 1}, Message: "watchdog off", Fix: "turn it on"},
		{ID: "FC112", Severity: Info, Pos: intent.Pos{File: "b.yaml", Line: 9, Col: 1}, Message: "headroom 1 B"},
	}
	var plain, color bytes.Buffer
	if err := WriteText(&plain, fs, false); err != nil {
		t.Fatal(err)
	}
	want := `a.yaml:5:3: error FC116: policy.globalPause: global pause on
  fix: turn it off

b.yaml:2:1: warning FC114: watchdog off
  fix: turn it on
b.yaml:9:1: info FC112: headroom 1 B

1 error, 1 warning, 1 info
`
	if diff := cmp.Diff(want, plain.String()); diff != "" {
		t.Errorf("WriteText(plain) mismatch (-want +got):\n%s", diff)
	}
	if err := WriteText(&color, fs, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(color.String(), ansiRed) || strings.Contains(plain.String(), "\x1b[") {
		t.Errorf("colour only when asked: colour output %q, plain output %q", color.String(), plain.String())
	}
	var none bytes.Buffer
	if err := WriteText(&none, nil, false); err != nil || none.String() != "no findings\n" {
		t.Errorf("WriteText(nil) = %q, %v; want %q", none.String(), err, "no findings\n")
	}
}

func TestWriteRulesFormats(t *testing.T) {
	for _, format := range []string{"text", "markdown", "json"} {
		var b bytes.Buffer
		if err := WriteRules(&b, format); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		for _, r := range Rules() {
			if !strings.Contains(b.String(), r.ID) {
				t.Errorf("%s rule list lacks %s", format, r.ID)
			}
		}
		if format == "json" {
			var rules []map[string]string
			if err := json.Unmarshal(b.Bytes(), &rules); err != nil || len(rules) != len(Rules()) {
				t.Errorf("json rule list: %d rules, err %v", len(rules), err)
			}
		}
	}
}

// TestWriteRulesFlagRules: rules of another package are listed in ID order
// among Run's, marked with the flag that runs them in every format.
func TestWriteRulesFlagRules(t *testing.T) {
	extra := FlagRules{Flag: "--simulate", Rules: []Rule{{ID: "FC199", Name: "late", Severity: Warning, Summary: "a later rule"}, {ID: "FC100a", Name: "early", Severity: Error, Summary: "an early rule"}}}
	for _, format := range []string{"text", "markdown", "json"} {
		var b bytes.Buffer
		if err := WriteRules(&b, format, extra); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		out := b.String()
		i100, iA, i101, i199 := strings.Index(out, "FC100"), strings.Index(out, "FC100a"), strings.Index(out, "FC101"), strings.Index(out, "FC199")
		if !(i100 < iA && iA < i101 && i101 < i199) {
			t.Errorf("%s: not in ID order (FC100 %d, FC100a %d, FC101 %d, FC199 %d)", format, i100, iA, i101, i199)
		}
		if format == "json" {
			var rules []map[string]string
			if err := json.Unmarshal(b.Bytes(), &rules); err != nil || len(rules) != len(Rules())+2 {
				t.Fatalf("json: %d rules, err %v", len(rules), err)
			}
			for _, r := range rules {
				if want := map[bool]string{true: "--simulate"}[strings.HasPrefix(r["name"], "late") || r["name"] == "early"]; r["needs"] != want {
					t.Errorf("json: %s needs %q, want %q", r["id"], r["needs"], want)
				}
			}
			continue
		}
		if n := strings.Count(out, "--simulate"); n != 2 {
			t.Errorf("%s: %d rules marked as needing --simulate, want 2:\n%s", format, n, out)
		}
	}
}
