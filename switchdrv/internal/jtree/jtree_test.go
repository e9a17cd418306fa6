package jtree

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
)

func TestCanon(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{json.Number("150000"), "150000"},
		{"150000", "150000"},
		{"0150", "150"},
		{"-0", "0"},
		{json.Number("1.50"), "1.500000000"},
		{"1.5", "1.500000000"},
		{"0.20", "0.200000000"},
		{json.Number("1e3"), "1000"},
		{"openconfig-qos-types:IPV4", "IPV4"},
		{"fe80::1", "fe80::1"},
		{"12:30", "12:30"},
		{"ethernet-1/1", "ethernet-1/1"},
		{true, "true"},
		{"true", "true"},
		{[]any{json.Number("48"), "26"}, "[26,48]"},
		{map[string]any{"b": "1", "a": json.Number("2")}, "{a=2,b=1}"},
	}
	for _, tc := range tests {
		if got := Canon(tc.in); got != tc.want {
			t.Errorf("Canon(%#v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestCanonHugeNumbers: a device reply may carry numbers no YANG type can
// hold (1.5e999999 is 10 bytes of JSON, a million digits expanded, ~0.1 s of
// big.Rat work): they keep their literal text, so a 4 MB reply full of them
// cannot hold plan for hours or fill memory with expanded digits.
func TestCanonHugeNumbers(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{json.Number("1.5e999999"), "1.5e999999"},
		{json.Number("1e-999999"), "1e-999999"},
		{"1.5E+999999", "1.5E+999999"},
		{json.Number("1e99999999999999999999"), "1e99999999999999999999"},
		{json.Number("0." + strings.Repeat("3", 100000)), "0." + strings.Repeat("3", 100000)},
		// In range: still canonical.
		{json.Number("1.5e6"), "1500000"},
		{"1.5E+06", "1500000"},
		{json.Number("18446744073709551615"), "18446744073709551615"},
		{"-9.223372036854775808", "-9.223372037"},
	}
	for _, tc := range tests {
		if got := Canon(tc.in); got != tc.want {
			t.Errorf("Canon(%.40v) = %.40q (%d bytes), want %.40q (%d bytes)", tc.in, got, len(got), tc.want, len(tc.want))
		}
	}
	if n, ok := Int(json.Number("1e999999")); ok {
		t.Errorf("Int(1e999999) = %d, true; want not an int64", n)
	}
}

// TestQualifiedMembers: trees keep the names a device sent (RFC 7951 module
// qualifiers) and paths find and merge members in either form.
func TestQualifiedMembers(t *testing.T) {
	tv := &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(
		`{"openconfig-qos:queues":{"queue":[{"name":"3","arista-qos-augments:ecn":{"config":{"min-threshold":1}}}]}}`)}}
	v, _, err := TypedQualified(tv)
	if err != nil {
		t.Fatal(err)
	}
	root := map[string]any{}
	if err := Update(root, []*gnmipb.PathElem{{Name: "qos"}}, v); err != nil {
		t.Fatal(err)
	}
	q := []*gnmipb.PathElem{{Name: "qos"}, {Name: "queues"}, {Name: "queue", Key: map[string]string{"name": "3"}}}
	// A second read of the same entry, unqualified, merges into it.
	if err := Update(root, q, map[string]any{"ecn": map[string]any{"config": map[string]any{"max-threshold": json.Number("2")}}}); err != nil {
		t.Fatal(err)
	}
	got, ok := Get(root, q)
	if !ok {
		t.Fatalf("Get(%s) found nothing in %s", ElemString(q), text(t, root))
	}
	want := `{"arista-qos-augments:ecn":{"config":{"max-threshold":2,"min-threshold":1}},"name":"3"}`
	if g := text(t, got); g != want {
		t.Errorf("Get(%s) = %s, want %s", ElemString(q), g, want)
	}
	if v, _, _ := Typed(tv); text(t, v) != `{"queues":{"queue":[{"ecn":{"config":{"min-threshold":1}},"name":"3"}]}}` {
		t.Errorf("Typed kept prefixes: %s", text(t, v))
	}
}

func mustDecode(t *testing.T, s string) any {
	t.Helper()
	v, err := Decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func text(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestEdit(t *testing.T) {
	root := mustDecode(t, `{"srl_nokia-qos:qos":{"interfaces":{"interface":[{"interface-id":"e1","pfc":{"pfc-enable":true}}]}}}`).(map[string]any)
	ifc := []*gnmipb.PathElem{{Name: "qos"}, {Name: "interfaces"}, {Name: "interface", Key: map[string]string{"interface-id": "e2"}}}
	if err := Replace(root, ifc, map[string]any{"pfc": map[string]any{"pfc-enable": false}}); err != nil {
		t.Fatal(err)
	}
	if err := Update(root, []*gnmipb.PathElem{{Name: "qos"}}, mustDecode(t, `{"interfaces":{"interface":[{"interface-id":"e1","mtu":9216}]}}`)); err != nil {
		t.Fatal(err)
	}
	want := `{"qos":{"interfaces":{"interface":[{"interface-id":"e1","mtu":9216,"pfc":{"pfc-enable":true}},{"interface-id":"e2","pfc":{"pfc-enable":false}}]}}}`
	if diff := cmp.Diff(want, text(t, root)); diff != "" {
		t.Errorf("after Replace and Update (-want +got):\n%s", diff)
	}
	e1 := []*gnmipb.PathElem{{Name: "qos"}, {Name: "interfaces"}, {Name: "interface", Key: map[string]string{"interface-id": "e1"}}}
	for _, e := range [][]*gnmipb.PathElem{e1, ifc} {
		if err := Delete(root, e); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(`{}`, text(t, root)); diff != "" {
		t.Errorf("containers emptied by Delete were kept (-want +got):\n%s", diff)
	}
}

func TestFlatten(t *testing.T) {
	v := mustDecode(t, `{"a":{"x":"1","ecn":{}},"l":[{"name":"q3","w":50}],"ll":[48,26]}`)
	got := map[string]string{}
	m := map[string]Leaf{}
	Flatten(v, "", m)
	for k, l := range m {
		got[k] = l.Canon
	}
	want := map[string]string{"/a/x": "1", "/a/ecn": "{}", "/l[name=q3]/name": "q3", "/l[name=q3]/w": "50", "/ll": "[26,48]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Flatten mismatch (-want +got):\n%s", diff)
	}
}

func TestCLI(t *testing.T) {
	in := "qos map dscp 26 to traffic-class 3\ninterface Et1\n   mtu 9216\n!\n"
	lines := CLILines(in)
	if diff := cmp.Diff([]string{"qos map dscp 26 to traffic-class 3", "interface Et1", "interface Et1 >> mtu 9216"}, lines); diff != "" {
		t.Errorf("CLILines mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(in, CLIText(lines)); diff != "" {
		t.Errorf("CLIText round trip (-want +got):\n%s", diff)
	}
	cfg := CLIApply(lines, CLILines("interface Et1\n   mtu 1500\n   flowcontrol receive off\n   flowcontrol send off\n!\n"))
	wantCfg := []string{"qos map dscp 26 to traffic-class 3", "interface Et1", "interface Et1 >> mtu 1500",
		"interface Et1 >> flowcontrol receive off", "interface Et1 >> flowcontrol send off"}
	if diff := cmp.Diff(wantCfg, cfg); diff != "" {
		t.Errorf("single-valued sub-mode lines mismatch (-want +got):\n%s", diff)
	}
	cfg = CLIApply(lines, CLILines("no interface Et1\n"))
	if diff := cmp.Diff([]string{"qos map dscp 26 to traffic-class 3"}, cfg); diff != "" {
		t.Errorf("no <section> mismatch (-want +got):\n%s", diff)
	}
}

// FuzzEdit: whatever JSON a client sends or a device answers, editing and
// reading a tree by path returns errors, never panics.
func FuzzEdit(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[{"k":"1"}]}`, `{"a":{"b":[1,2]}}`, `[{"k":1}]`, `null`, `"x"`, `{"a":[{"k":{}}]}`} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, root, val string) { fuzzEditBody(root, val) })
}

func fuzzEditBody(root, val string) {
	{
		r, err := Decode([]byte(root))
		if err != nil {
			return
		}
		v, err := Decode([]byte(val))
		if err != nil {
			return
		}
		m, ok := r.(map[string]any)
		if !ok {
			m = map[string]any{"x": r}
		}
		paths := [][]*gnmipb.PathElem{
			{{Name: "a"}},
			{{Name: "a", Key: map[string]string{"k": "1"}}},
			{{Name: "a", Key: map[string]string{"k": "1"}}, {Name: "b"}},
			{{Name: "a"}, {Name: "b", Key: map[string]string{"k": "1", "j": "2"}}},
		}
		for _, p := range paths {
			_ = Replace(m, p, Clone(v))
			_ = Update(m, p, Clone(v))
			_, _ = Get(m, p)
			Flatten(m, "", map[string]Leaf{})
			_ = Canon(m)
			_ = Delete(m, p)
		}
	}
}

// FuzzParse holds the reflection-free parser equal to encoding/json with
// UseNumber: same values for valid JSON, an error for invalid JSON.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e3,"x\u00e9\n"],"b":{"c":null,"d":true}}`, `-0.0e+1`, `"\ud800"`, "\"\xff\"",
		`[]`, `{}`, ` [ 1 , { } ] `, `01`, `1.`, `{"a":1,"a":2}`, `"\/"`, `[1]]`, "\"a\x01\"", `nul`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := parse(b, false)
		if !json.Valid(b) {
			if err == nil {
				t.Fatalf("parse(%q) accepted invalid JSON: %#v", b, got)
			}
			return
		}
		if err != nil {
			t.Fatalf("parse(%q): %v", b, err)
		}
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var want any
		if err := d.Decode(&want); err != nil {
			t.Fatalf("encoding/json(%q): %v", b, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("parse(%q) mismatch (-encoding/json +parse):\n%s", b, diff)
		}
	})
}

// TestCLINested: EOS nests sub-modes (interface > tx-queue, as Arista AVD's
// eos_cli_config_gen ethernet-interface-tx-queues.j2 writes them); a line
// belongs to every less-indented line above it, so two tx-queues' ECN lines
// stay apart and a second ECN line in one tx-queue replaces the first.
func TestCLINested(t *testing.T) {
	in := "interface Et1\n   mtu 9214\n   tx-queue 3\n      random-detect ecn minimum-threshold 150000 bytes maximum-threshold 1501500 bytes max-mark-probability 100\n   tx-queue 4\n      random-detect ecn minimum-threshold 1 bytes maximum-threshold 2 bytes max-mark-probability 50\n!\n"
	lines := CLILines(in)
	want := []string{"interface Et1", "interface Et1 >> mtu 9214",
		"interface Et1 >> tx-queue 3",
		"interface Et1 >> tx-queue 3 >> random-detect ecn minimum-threshold 150000 bytes maximum-threshold 1501500 bytes max-mark-probability 100",
		"interface Et1 >> tx-queue 4",
		"interface Et1 >> tx-queue 4 >> random-detect ecn minimum-threshold 1 bytes maximum-threshold 2 bytes max-mark-probability 50"}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Fatalf("CLILines mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(lines, CLILines(CLIText(lines))); diff != "" {
		t.Errorf("CLIText round trip (-want +got):\n%s", diff)
	}
	cfg := CLIApply(lines, CLILines("interface Et1\n   tx-queue 3\n      random-detect ecn minimum-threshold 100000 bytes maximum-threshold 1000000 bytes max-mark-probability 20\n!\n"))
	want[3] = "interface Et1 >> tx-queue 3 >> random-detect ecn minimum-threshold 100000 bytes maximum-threshold 1000000 bytes max-mark-probability 20"
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("CLIApply mismatch (-want +got):\n%s", diff)
	}
}

// FuzzText holds Text (written without reflection for tree values) equal
// to encoding/json's text of the same tree, and TextWithout equal to it
// without the skipped members.
func FuzzText(f *testing.F) {
	for _, s := range []string{`{"b":[1,2.5e3,"x\u00e9\n"],"a":{"c":null,"d":true}}`, `"<&>"`, `["\u2028",""]`,
		`{"name":"x","k":{"z":1,"y":[{"name":"q"}]}}`, `[]`, `{}`, `-0.0e+1`, `"\u007f"`, `{"a\"b":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Decode(b)
		if err != nil {
			return
		}
		for _, skip := range [][]string{nil, {"name"}, {"a", "k"}} {
			want := v
			if m, ok := v.(map[string]any); ok && skip != nil {
				want = without(m, skip)
			}
			exp := func() string {
				if s, ok := want.(string); ok {
					return s
				}
				b, err := json.Marshal(want)
				if err != nil {
					t.Fatalf("encoding/json: %v", err)
				}
				return string(b)
			}()
			if got := TextWithout(v, skip); got != exp {
				t.Fatalf("TextWithout(%s, %q) = %s, encoding/json says %s", b, skip, got, exp)
			}
		}
	})
}

// TestTextOddValues: values a decoded tree does not hold go through
// encoding/json (or fmt when it fails), as before.
func TestTextOddValues(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{json.Number(""), "0"},
		{map[string]any{"a": json.Number("1x")}, "map[a:1x]"},
		{[]any{1.5, int64(2), uint64(3)}, "[1.5,2,3]"},
		{map[string]any{"a": []any(nil)}, `{"a":null}`},
		{map[string]any{"a": map[string]any(nil)}, `{"a":null}`},
		{[]any{"a<b", "é"}, `["a\u003cb","é"]`},
	} {
		if got := Text(tc.v); got != tc.want {
			t.Errorf("Text(%#v) = %s, want %s", tc.v, got, tc.want)
		}
	}
}

// FuzzFinder holds the Finder's indexed lookups equal to the scan of
// findEntry: the same entry (the first that matches) or none, for keys in
// canonical form or not, qualified member names, entries without the key,
// duplicates and non-object entries.
func FuzzFinder(f *testing.F) {
	entries := `{"name":"a","n":1},{"name":"b","n":"2"},{"p:name":"c","n":3},{"name":"d"},7,` +
		`{"name":"a","n":9},{"name":"1.50"},{"name":"x:y-z"},{"name":null},{"name":"e","n":"0010"}`
	for _, k := range []string{"a", "b", "c", "d", "1.5", "y-z", "m:y-z", "null", "zz", "1"} {
		f.Add(`[`+entries+`]`, k, "1")
		f.Add(`[`+entries+`]`, k, "10")
	}
	f.Fuzz(func(t *testing.T, list, name, n string) {
		v, err := Decode([]byte(list))
		if err != nil {
			return
		}
		l, ok := v.([]any)
		if !ok {
			return
		}
		var fi Finder
		for _, keys := range []map[string]string{{"name": name}, {"name": name, "n": n}, {"n": n}} {
			want := findEntry(l, keys)
			for range 3 { // scanned, built, then from the index
				if got := fi.find(l, keys); got != want {
					t.Fatalf("Finder.find(%s, %v) = %d, findEntry says %d", list, keys, got, want)
				}
			}
		}
	})
}

// TestFinderGet: Get through a Finder finds what Get finds, in a list long
// enough to be indexed, and again after the list grew (another list).
func TestFinderGet(t *testing.T) {
	var ifs []any
	for i := range 40 {
		ifs = append(ifs, map[string]any{"interface-id": fmt.Sprintf("ethernet-1/%d", i+1), "mtu": json.Number(fmt.Sprint(9000 + i))})
	}
	root := map[string]any{"qos": map[string]any{"interfaces": map[string]any{"interface": ifs}}}
	var fi Finder
	for _, k := range []string{"ethernet-1/1", "ethernet-1/40", "ethernet-1/41", "ethernet-1/7"} {
		p := []*gnmipb.PathElem{{Name: "qos"}, {Name: "interfaces"}, {Name: "interface", Key: map[string]string{"interface-id": k}}, {Name: "mtu"}}
		want, wok := Get(root, p)
		got, ok := fi.Get(root, p)
		if ok != wok || got != want {
			t.Errorf("Finder.Get %s = %v %v, Get says %v %v", k, got, ok, want, wok)
		}
	}
	root["qos"].(map[string]any)["interfaces"].(map[string]any)["interface"] = append(ifs, map[string]any{"interface-id": "ethernet-1/41"})
	p := []*gnmipb.PathElem{{Name: "qos"}, {Name: "interfaces"}, {Name: "interface", Key: map[string]string{"interface-id": "ethernet-1/41"}}}
	for range 2 { // scanned, then indexed
		if _, ok := fi.Get(root, p); !ok {
			t.Error("Finder.Get misses an entry of a list that grew")
		}
	}
}

// TestPlainStringIsEncodingJSON: for every ASCII byte, PlainString says
// what encoding/json does: the byte is written as it is, or escaped. Bytes
// from 0x7f up (DEL, UTF-8) are never plain.
func TestPlainStringIsEncodingJSON(t *testing.T) {
	for c := range 256 {
		s := "a" + string([]byte{byte(c)}) + "b"
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		asIs := string(b) == `"`+s+`"`
		if got := PlainString(s); c < 0x7f && got != asIs || c >= 0x7f && got {
			t.Errorf("byte %#x: PlainString %v, encoding/json writes %s", c, got, b)
		}
	}
}

// TestCLINoResetsSetting: "no" and a setting's keywords take the setting
// away whatever its value, as EOS's CLI does (AVD ethernet-interfaces.j2
// writes "no priority-flow-control" to turn "priority-flow-control on"
// off); other settings that start with the same words stay, and "no" never
// takes a section away by its keywords alone.
func TestCLINoResetsSetting(t *testing.T) {
	cfg := CLILines("interface Et1\n   priority-flow-control on\n   priority-flow-control priority 3 no-drop\n" +
		"   priority-flow-control pause watchdog\n   priority-flow-control pause watchdog port action notify-only\n" +
		"   tx-queue 3\n      random-detect ecn minimum-threshold 1 bytes maximum-threshold 2 bytes max-mark-probability 3\n!\n")
	got := CLIApply(cfg, CLILines("interface Et1\n   no priority-flow-control\n   no priority-flow-control pause watchdog port action\n"+
		"   priority-flow-control priority 3 drop\n   no tx-queue\n   tx-queue 3\n      no random-detect ecn\n!\n"))
	want := []string{"interface Et1", "interface Et1 >> priority-flow-control priority 3 drop",
		"interface Et1 >> priority-flow-control pause watchdog", "interface Et1 >> tx-queue 3"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("no <setting> mismatch (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		x, target string
		section   bool
		want      bool
	}{
		{"i >> priority-flow-control on", "i >> priority-flow-control", false, true},
		{"i >> priority-flow-control priority 3 no-drop", "i >> priority-flow-control", false, false},
		{"i >> mtu 9214", "i >> mtu", false, true},
		{"i >> tx-queue 3", "i >> tx-queue", true, false},
		{"priority-flow-control all off", "priority-flow-control all", false, false}, // top level: no key
	} {
		if got := ResetBy(tc.x, tc.target, tc.section); got != tc.want {
			t.Errorf("ResetBy(%q, %q, %v) = %v, want %v", tc.x, tc.target, tc.section, got, tc.want)
		}
	}
}

// TestCLITopLevelSettingReplaced: the global PFC pause watchdog action
// and default timers are one setting each on EOS (AVD
// priority-flow-control.j2 writes one line of each from one schema value),
// so changing the action replaces its line instead of adding a second, as
// a CLI session does; "no" and the keywords reset it; other top-level
// lines stay set members (two "qos ..." or "priority-flow-control all off"
// lines are not one setting).
func TestCLITopLevelSettingReplaced(t *testing.T) {
	cfg := CLILines("priority-flow-control all off\npriority-flow-control pause watchdog default timeout 0.2\n" +
		"priority-flow-control pause watchdog action drop\n")
	got := CLIApply(cfg, CLILines("priority-flow-control pause watchdog action no-drop\npriority-flow-control pause watchdog default timeout 0.3\n"))
	want := []string{"priority-flow-control all off", "priority-flow-control pause watchdog default timeout 0.3",
		"priority-flow-control pause watchdog action no-drop"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("changed watchdog action and timeout (-want +got):\n%s", diff)
	}
	got = CLIApply(got, CLILines("no priority-flow-control pause watchdog action\n"))
	want = []string{"priority-flow-control all off", "priority-flow-control pause watchdog default timeout 0.3"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("no priority-flow-control pause watchdog action (-want +got):\n%s", diff)
	}
	for l, want := range map[string]string{
		"priority-flow-control pause watchdog action drop":                  "priority-flow-control pause watchdog action",
		"priority-flow-control pause watchdog default polling-interval 0.1": "priority-flow-control pause watchdog default polling-interval",
		"priority-flow-control pause watchdog default recovery-time 0.4":    "priority-flow-control pause watchdog default recovery-time",
		"priority-flow-control all off":                                     "",
		"qos map dscp 26 to traffic-class 3":                                "",
		"priority-flow-control pause watchdog":                              "",
	} {
		if k, _ := CLIKey(l); k != want {
			t.Errorf("CLIKey(%q) = %q, want %q", l, k, want)
		}
	}
}

// TestCLIDSCPMapPerDSCP: EOS "qos map dscp D... to traffic-class N" sets
// each listed DSCP's class, so a DSCP moved to another class leaves the
// line that mapped it before (a set of lines would keep DSCP 26 in both
// classes), and the map reads grouped by class, DSCPs ascending, at most 8
// a line, as switchdrv/eos writes it.
func TestCLIDSCPMapPerDSCP(t *testing.T) {
	cfg := CLILines("qos map dscp 24 25 26 27 to traffic-class 0\nqos map dscp 48 to traffic-class 6\ninterface Et1\n   mtu 9214\n!\n")
	got := CLIApply(cfg, CLILines("qos map dscp 25 27 to traffic-class 0\nqos map dscp 24 26 to traffic-class 3\nqos map dscp 48 to traffic-class 5\n"))
	want := []string{
		"qos map dscp 25 27 to traffic-class 0", "qos map dscp 24 26 to traffic-class 3", "qos map dscp 48 to traffic-class 5",
		"interface Et1", "interface Et1 >> mtu 9214",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("qos map dscp mismatch (-want +got):\n%s", diff)
	}
	got = CLIApply(nil, CLILines("qos map dscp 0 1 2 3 4 5 6 7 8 9 to traffic-class 0\n"))
	want = []string{"qos map dscp 0 1 2 3 4 5 6 7 to traffic-class 0", "qos map dscp 8 9 to traffic-class 0"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("qos map dscp grouping mismatch (-want +got):\n%s", diff)
	}
}
