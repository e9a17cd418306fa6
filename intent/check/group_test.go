package check

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
)

// rangeTypo is an intent with one typo on a NIC of a host range: speed 400M
// on gpu{1..8}, whose links to 400G switch ports then disagree on speed.
const rangeTypo = `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: pod}
policy: {preset: roce-lossless}
inventory:
  switches:
    - name: leaf1
      platform: srlinux
      address: 192.0.2.1:57400
      credentials: {usernameEnv: U, passwordEnv: P}
      portDefaults: {speed: 400G, cable: 3m}
      ports:
        - name: ethernet-1/{1..8}
  hosts:
    - name: gpu{1..8}
      address: 198.51.100.{1..8}
      nics:
        - {interface: eth0, speed: 400M, cable: 3m}
  links:
    - ["gpu{1..8}:eth0", "leaf1:ethernet-1/{1..8}"]
`

// TestTextGroupsFindingsOfOneRange holds the text output to one finding per
// source line for a typo a range repeats (the issue's "one typo, eight
// findings"), and the JSON output to one finding per element.
func TestTextGroupsFindingsOfOneRange(t *testing.T) {
	f, err := intent.Parse("fabric.yaml", []byte(rangeTypo))
	if err != nil {
		t.Fatal(err)
	}
	fs := Run(f, Options{})
	var text bytes.Buffer
	if err := WriteText(&text, fs, false); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	for _, want := range []string{
		"fabric.yaml:18:36: error FC127: inventory.hosts[gpu{1..8}].nics[eth0].speed: host gpu{1..8}, NIC eth0: speed 400M is 400 Mb/s, below 1G",
		"\n  8 hosts: gpu1 .. gpu8\n  fix: write the speed with G: speed: 400G\n",
		"warning FC124: inventory.links[{0..7}]: link gpu{1..8}:eth0 (400M) - leaf1:ethernet-1/{1..8} (400G): the ends disagree",
		"\n  8 links: links[0] .. links[7]\n",
		"8 errors, 8 warnings",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "FC127"); n != 1 {
		t.Errorf("FC127 written %d times, want once:\n%s", n, out)
	}

	var js bytes.Buffer
	if err := WriteJSON(&js, f.Files, fs); err != nil {
		t.Fatal(err)
	}
	var r struct {
		Findings []struct{ ID, Path string }
	}
	if err := json.Unmarshal(js.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, x := range r.Findings {
		if x.ID == "FC127" {
			paths = append(paths, x.Path)
		}
	}
	if len(paths) != 8 || paths[0] != "inventory.hosts[gpu1].nics[eth0].speed" || paths[7] != "inventory.hosts[gpu8].nics[eth0].speed" {
		t.Errorf("JSON FC127 paths = %q, want one per host gpu1..gpu8", paths)
	}
}

// TestGroupFindingsKeepsUnevenApart: findings of one place whose numbers do
// not step evenly (or differ in words) are written one by one.
func TestGroupFindingsKeepsUnevenApart(t *testing.T) {
	p := intent.Pos{File: "f.yaml", Line: 3, Col: 5}
	mk := func(path, msg string) Finding {
		return Finding{ID: "FC999", Severity: Warning, Pos: p, Path: path, Message: msg}
	}
	cases := []struct {
		name string
		fs   []Finding
		want int // lines
	}{
		{"even", []Finding{mk("h[a1]", "a1 x"), mk("h[a3]", "a3 x"), mk("h[a5]", "a5 x")}, 1},
		{"uneven", []Finding{mk("h[a1]", "a1 x"), mk("h[a2]", "a2 x"), mk("h[a5]", "a5 x")}, 3},
		{"words differ", []Finding{mk("h[a1]", "a1 above"), mk("h[a2]", "a2 below")}, 2},
		{"one", []Finding{mk("h[a1]", "a1 x")}, 1},
		{"other line", []Finding{mk("h[a1]", "a1 x"), {ID: "FC999", Severity: Warning, Pos: intent.Pos{File: "f.yaml", Line: 4, Col: 5}, Path: "h[a2]", Message: "a2 x"}}, 2},
	}
	for _, tc := range cases {
		if got := groupFindings(tc.fs); len(got) != tc.want {
			t.Errorf("%s: %d lines, want %d: %+v", tc.name, len(got), tc.want, got)
		}
	}
	if g := groupFindings(cases[0].fs); g[0].Path != "h[a{1..5..2}]" || g[0].subjects != "3 h: a1 .. a5" {
		t.Errorf("even group = %q %q", g[0].Path, g[0].subjects)
	}
}
