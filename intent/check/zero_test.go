package check

import (
	"os"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
)

// TestZeroSpeedAndCable: a zero speed or cable written in the YAML (a
// port's, portDefaults', a NIC's) is FC133, an error at the line that
// writes it, in the words the --speed and --cable flags refuse zero with
// (cmd/fabricctl parseSpeedFlag, parseCableFlag); where the link's other
// end gives the value the fix writes it, and applied it clears the finding
// without raising another error. On main the parser took these and check
// said nothing of a zero cable or of a NIC's zero, and only warned (FC112)
// of a port's zero speed.
func TestZeroSpeedAndCable(t *testing.T) {
	src, err := os.ReadFile("../../examples/lab.yaml")
	if err != nil {
		t.Fatal(err)
	}
	edit := func(text string, pairs ...string) string {
		t.Helper()
		for i := 0; i < len(pairs); i += 2 {
			out := strings.Replace(text, pairs[i], pairs[i+1], 1)
			if out == text {
				t.Fatalf("test bug: no %q in the example", pairs[i])
			}
			text = out
		}
		return text
	}
	parse := func(text string) *intent.Fabric {
		t.Helper()
		f, err := intent.Parse("lab.yaml", []byte(text))
		if err != nil {
			t.Fatalf("the parser refuses what check should report: %v", err)
		}
		return f
	}
	fc133 := func(f *intent.Fabric) []Finding {
		var out []Finding
		for _, x := range Run(f, Options{}) {
			if x.ID == "FC133" {
				out = append(out, x)
			}
		}
		return out
	}
	const speedWords, cableWords = "no line rate; want one such as 100G or 400G", "no length; want one such as 3m or 100m"
	type want struct {
		path, words, fix string
		line             int
		edits            []Edit
	}
	for _, tc := range []struct {
		name  string
		pairs []string
		want  []want // in check's order: by line, column, path
	}{
		{"portDefaults speed 0G, ports without a link", []string{"portDefaults: {speed: 400G, cable: 3m}", "portDefaults: {speed: 0G, cable: 3m}"},
			[]want{{"inventory.switches[leaf1].ports[ethernet-1/1].speed", "switch leaf1, 4 ports ethernet-1/1..ethernet-1/4: speed 0: " + speedWords, "write the port's line rate", 15, nil}}},
		{"portDefaults cable 0m, linked to NICs with a cable", []string{
			"portDefaults: {speed: 400G, cable: 3m}", "portDefaults: {speed: 400G, cable: 0m}",
			"- name: ethernet-1/{1..4}", "- name: ethernet-1/{1..2}",
			"{interface: eth0, rdma: rxe0}", "{interface: eth0, rdma: rxe0, cable: 2m}"},
			[]want{{"inventory.switches[leaf1].ports[ethernet-1/1].cable", "switch leaf1, 2 ports ethernet-1/1..ethernet-1/2: cable 0m: " + cableWords, "write the cable of the link's other end: cable: 2m", 15,
				[]Edit{{"inventory.switches[leaf1].ports[ethernet-1/1].cable", "2m"}, {"inventory.switches[leaf1].ports[ethernet-1/2].cable", "2m"}}}}},
		{"one port's own cable 0m", []string{"- name: Ethernet{0..12..4}", "- name: Ethernet{0..12..4}\n        - {name: Ethernet16, cable: 0m}"},
			[]want{{"inventory.switches[leaf2].ports[Ethernet16].cable", "switch leaf2, port Ethernet16: cable 0m: " + cableWords, "write the cable's length", 24, nil}}},
		{"a NIC's speed 0G and cable 0m", []string{"{interface: eth0, rdma: rxe0}", "{interface: eth0, rdma: rxe0, speed: 0G, cable: 0m}"},
			[]want{
				{"inventory.hosts[host1].nics[eth0].speed", "host host1, NIC eth0: speed 0: " + speedWords, "write its switch port's speed: speed: 400G", 34, []Edit{{"inventory.hosts[host1].nics[eth0].speed", "400G"}}},
				{"inventory.hosts[host2].nics[eth0].speed", "host host2, NIC eth0: speed 0: " + speedWords, "write its switch port's speed: speed: 400G", 34, []Edit{{"inventory.hosts[host2].nics[eth0].speed", "400G"}}},
				{"inventory.hosts[host1].nics[eth0].cable", "host host1, NIC eth0: cable 0m: " + cableWords, "write its switch port's cable: cable: 3m", 34, []Edit{{"inventory.hosts[host1].nics[eth0].cable", "3m"}}},
				{"inventory.hosts[host2].nics[eth0].cable", "host host2, NIC eth0: cable 0m: " + cableWords, "write its switch port's cable: cable: 3m", 34, []Edit{{"inventory.hosts[host2].nics[eth0].cable", "3m"}}},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := edit(string(src), tc.pairs...)
			got := fc133(parse(text))
			if len(got) != len(tc.want) {
				t.Fatalf("%d FC133 findings, want %d:\n%s", len(got), len(tc.want), dump(got))
			}
			for i, w := range tc.want {
				x := got[i]
				if x.Severity != Error || x.Path != w.path || x.Pos.Line != w.line || !strings.HasPrefix(x.Message, w.words) || !strings.HasPrefix(x.Fix, w.fix) {
					t.Errorf("got %s\n  fix: %s\nwant error at line %d, %s: %s...\n  fix: %s...", x, x.Fix, w.line, w.path, w.words, w.fix)
				}
				if len(x.Edits) != len(w.edits) {
					t.Errorf("%s: edits %v, want %v", x.Path, x.Edits, w.edits)
					continue
				}
				for j := range w.edits {
					if x.Edits[j] != w.edits[j] {
						t.Errorf("%s: edits %v, want %v", x.Path, x.Edits, w.edits)
					}
				}
				if len(x.Edits) == 0 {
					continue
				}
				// Applied, the fix clears its finding and raises no error.
				f := parse(text)
				if err := Apply(f, x.Edits); err != nil {
					t.Fatalf("apply %v: %v", x.Edits, err)
				}
				for _, y := range Run(f, Options{}) {
					if y.ID == "FC133" && y.Path == x.Path || y.Severity == Error && y.ID != "FC133" {
						t.Errorf("after the fix %v: %s", x.Edits, y)
					}
				}
			}
		})
	}
	// The example as shipped has none; a NIC that leaves both out (its
	// switch port's are taken) is not a zero.
	if got := fc133(parse(string(src))); len(got) != 0 {
		t.Errorf("lab.yaml: %s", dump(got))
	}
}
