package check

import (
	"os"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
)

// TestSemiLosslessWatchdogFixClears: FC166 on the shipped semi-lossless
// example (SONiC leaf-sonic carries gpu1 and gpu2), and its fixes applied
// as a person applies them, in the YAML: the first,
// policy.hostPauseStormPrevention auto (the hosts' own prevention, which
// host apply writes as pfc-prevention-tout), and the alternative,
// policy.mode lossless, each clear it and raise no error; an explicit off
// keeps it and says so. TestFixesClearTheirFindings applies the edit to the
// parsed intent as well. (Hosts on SR Linux only raise no FC166: TestRules'
// semi-lossless cases, whose SONiC switches are spines.)
func TestSemiLosslessWatchdogFixClears(t *testing.T) {
	src, err := os.ReadFile("../../examples/modes/semi-lossless.yaml")
	if err != nil {
		t.Fatal(err)
	}
	run := func(text string) []Finding {
		t.Helper()
		f, err := intent.Parse("semi-lossless.yaml", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		return Run(f, Options{})
	}
	fc166 := func(text string) []Finding {
		var out []Finding
		for _, x := range run(text) {
			if x.ID == "FC166" {
				out = append(out, x)
			}
		}
		return out
	}
	found := fc166(string(src))
	if len(found) != 1 {
		t.Fatalf("semi-lossless example: %d FC166 findings, want 1:\n%s", len(found), dump(found))
	}
	x := found[0]
	for _, want := range []string{"switch leaf-sonic (2 ports facing hosts)", "pfc-prevention-tout", "tx_pause_storm_error_events", "policy.hostPauseStormPrevention absent"} {
		if !strings.Contains(x.Message, want) {
			t.Errorf("FC166 does not say %q: %s", want, x.Message)
		}
	}
	if !strings.HasPrefix(x.Fix, "set policy.hostPauseStormPrevention: auto") || !strings.Contains(x.Fix, "policy.mode lossless") {
		t.Errorf("FC166 fix %q: want the host prevention first, the mode as the alternative", x.Fix)
	}
	if len(x.Edits) != 1 || x.Edits[0] != (Edit{Path: "policy.hostPauseStormPrevention", Value: "auto"}) {
		t.Errorf("FC166 edits %v: want policy.hostPauseStormPrevention: auto", x.Edits)
	}
	if x.Pos.Line != 14 {
		t.Errorf("FC166 at %s: want line 14, the mode (the watchdog is the preset's)", x.Pos)
	}
	edit := func(old, new string) string {
		t.Helper()
		out := strings.Replace(string(src), old, new, 1)
		if out == string(src) {
			t.Fatalf("test bug: no %q in the example", old)
		}
		return out
	}
	for name, fixed := range map[string]string{
		"hostPauseStormPrevention auto":  edit("  mode: semi-lossless", "  hostPauseStormPrevention: auto\n  mode: semi-lossless"),
		"hostPauseStormPrevention 250ms": edit("  mode: semi-lossless", "  hostPauseStormPrevention: 250ms\n  mode: semi-lossless"),
		"mode lossless":                  edit("mode: semi-lossless", "mode: lossless"),
	} {
		for _, y := range run(fixed) {
			if y.ID == "FC166" || y.Severity == Error {
				t.Errorf("%s: %s", name, y)
			}
		}
	}
	off := fc166(edit("  mode: semi-lossless", "  hostPauseStormPrevention: off\n  mode: semi-lossless"))
	if len(off) != 1 || !strings.Contains(off[0].Message, "policy.hostPauseStormPrevention is off") {
		t.Errorf("hostPauseStormPrevention off: want FC166 saying it is off, got:\n%s", dump(off))
	}
}
