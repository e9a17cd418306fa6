package intent

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// syntaxBase is an intent written the long way (block mappings and lists),
// as a new user writes one; each case of TestSyntaxErrorPositions changes
// one of its lines.
var syntaxBase = []string{
	"apiVersion: fabricctl.io/v1alpha1", // 1
	"kind: Fabric",                      // 2
	"metadata:",                         // 3
	"  name: pod",                       // 4
	"# A policy written out in full.",   // 5
	"",                                  // 6
	"# Classes first.",                  // 7
	"",                                  // 8
	"",                                  // 9
	"",                                  // 10
	"policy:",                           // 11
	"  classes:",                        // 12
	"    - name: default",               // 13
	"      default: true",               // 14
	"      priority: 0",                 // 15
	"      weight: 50%",                 // 16
	"    - name: roce",                  // 17
	"      dscp: [26]",                  // 18
	"      priority: 3",                 // 19
	"      weight: 50%",                 // 20
	"      lossless: true",              // 21
	"      ecn:",                        // 22
	"        min: 150KB",                // 23
	"        max: 1.5MB",                // 24
	"  mtu: 9216",                       // 25
	"  hostMTU: 9000",                   // 26
	"  watchdog:",                       // 27
	"    detect: 200ms",                 // 28
	"    restore: 400ms",                // 29
	"inventory:",                        // 30
	"  switches:",                       // 31
	"    - name: leaf1",                 // 32
	"      platform: srlinux",           // 33
	"      address: 192.0.2.1:57400",    // 34
	"      credentials: {usernameEnv: U, passwordEnv: P}", // 35
	"      ports:",                             // 36
	"        - name: ethernet-1/{1..2}",        // 37
	"          speed: 400G",                    // 38
	"  hosts:",                                 // 39
	"    - name: gpu{1..2}",                    // 40
	"      address: 198.51.100.{1..2}",         // 41
	"      nics:",                              // 42
	"        - {interface: eth0, speed: 400G}", // 43
	"  links:",                                 // 44
	`    - ["gpu{1..2}:eth0", "leaf1:ethernet-1/{1..2}"]`, // 45
}

// TestSyntaxErrorPositions holds YAML syntax errors to the line and column of
// the offending token, and to words that say what is wrong. yaml.v3 alone
// reports the enclosing block's line for most of them (11:1 for the first
// two: the policy block), the line above a tab, and the line above an
// unquoted range.
func TestSyntaxErrorPositions(t *testing.T) {
	cases := []struct {
		name    string
		line    int    // the line replaced (1-based)
		text    string // its new text ("" deletes nothing: a replacement)
		wantPos string
		want    string // in the message
	}{
		{"key two spaces too deep", 27, "    watchdog:", "27:5",
			"`watchdog:` (column 5) is indented deeper than its siblings under `policy:` (column 3): `hostMTU: 9000` above it already has a value"},
		{"key dedented inside a list item", 20, "     weight: 50%", "20:6",
			"`weight:` (column 6) is indented less than the keys of the list item `- name: roce` (column 7) and deeper than its dash (column 5): align it with the keys"},
		{"key dedented under a block", 25, " mtu: 9216", "25:2",
			"`mtu:` (column 2) is indented less than the keys under `policy:` (column 3) and deeper than `policy:` (column 1)"},
		{"key too deep in a list item", 38, "            speed: 400G", "38:13",
			"`speed:` (column 13) is indented deeper than its siblings under `- name: ethernet-1/{1..2}` (column 11)"},
		{"key too deep in a nested block", 29, "      restore: 400ms", "29:7",
			"`restore:` (column 7) is indented deeper than its siblings under `watchdog:` (column 5)"},
		{"tab", 19, "\tpriority: 3", "19:1",
			"a tab character indents this line: YAML indents with spaces only"},
		{"tab after spaces", 34, "    \taddress: 192.0.2.1:57400", "34:5",
			"a tab character indents this line"},
		{"unquoted range in a flow list", 45, `    - [gpu{1..2}:eth0, "leaf1:ethernet-1/{1..2}"]`, "45:8",
			`the range gpu{1..2}:eth0 is unquoted inside [ ] or { }, where braces are YAML syntax: quote the item, "gpu{1..2}:eth0"`},
		{"unquoted range second in a flow list", 45, `    - ["gpu{1..2}:eth0", leaf1:ethernet-1/{1..2}]`, "45:26",
			`the range leaf1:ethernet-1/{1..2} is unquoted`},
		{"unquoted range in a flow mapping", 43, "        - {interface: eth0, address: 10.0.0.{1..2}}", "43:38",
			`the range 10.0.0.{1..2} is unquoted`},
		{"unclosed quote", 35, `      credentials: {usernameEnv: U, passwordEnv: "P}`, "35:50",
			`the "quoted string" started here does not end before line 45, where the parser fails`},
		{"unclosed flow list", 18, "      dscp: [26", "18:13",
			"the flow list [ opened here is not closed with ]"},
		{"list item without its dash", 38, "        speed: 400G", "38:9",
			"`speed:` (column 9) is at the indentation of the list items above it but is not one: start it with \"- \", or indent it under `- name: ethernet-1/{1..2}`"},
		{"apostrophe in a plain value is no quote", 4, "  name: it's a pod", "5:0", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lines := append([]string(nil), syntaxBase...)
			lines[tc.line-1] = tc.text
			_, err := Parse("t.yaml", []byte(strings.Join(lines, "\n")+"\n"))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("want no error, got %v", err)
				}
				return
			}
			var es Errors
			if !errors.As(err, &es) || len(es) != 1 {
				t.Fatalf("want one error, got %v", err)
			}
			e := es[0]
			if got := fmt.Sprintf("%d:%d", e.Pos.Line, e.Pos.Col); got != tc.wantPos {
				t.Errorf("position %s, want %s: %v", got, tc.wantPos, e)
			}
			if !strings.Contains(e.Msg, tc.want) || !strings.HasPrefix(e.Msg, "invalid YAML: ") {
				t.Errorf("message %q\nwant it to contain %q", e.Msg, tc.want)
			}
		})
	}
	// The base itself parses: each case's error is its one line's.
	if _, err := Parse("t.yaml", []byte(strings.Join(syntaxBase, "\n")+"\n")); err != nil {
		t.Fatalf("base: %v", err)
	}
}

// BenchmarkLocateSyntaxError locates a syntax error on the last line of a
// file of maxRefine bytes, the largest whose errors are located again.
func BenchmarkLocateSyntaxError(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\nmetadata: {name: x}\ninventory:\n  hosts:\n")
	for i := 0; sb.Len() < maxRefine-100; i++ {
		fmt.Fprintf(&sb, "    - name: h%d\n      nics: [{interface: eth0, speed: 400G}]\n", i)
	}
	sb.WriteString("      oops: x\n     bad: y\n")
	data := []byte(sb.String())
	_, err := Parse("big.yaml", data)
	if err == nil || !strings.Contains(err.Error(), "`bad:`") {
		b.Fatalf("want the located error, got %v", err)
	}
	b.ResetTimer()
	for range b.N {
		_, _ = Parse("big.yaml", data)
	}
}
