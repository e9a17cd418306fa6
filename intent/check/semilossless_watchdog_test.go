package check

import (
	"os"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
)

// TestSemiLosslessWatchdogFixClears: FC166 on the shipped semi-lossless
// example (SONiC leaf-sonic carries gpu1 and gpu2), and its fix applied as
// a person applies it, in the YAML: policy.mode lossless clears it and
// raises no error. The fix is a decision (the mode), so it carries no
// edits for TestFixesClearTheirFindings to apply; this test applies it.
// (Hosts on SR Linux only raise no FC166: TestRules' semi-lossless cases,
// whose SONiC switches are spines.)
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
	var fc166 []Finding
	for _, x := range run(string(src)) {
		if x.ID == "FC166" {
			fc166 = append(fc166, x)
		}
	}
	if len(fc166) != 1 {
		t.Fatalf("semi-lossless example: %d FC166 findings, want 1:\n%s", len(fc166), dump(fc166))
	}
	x := fc166[0]
	for _, want := range []string{"switch leaf-sonic (2 ports facing hosts)", "pfc-prevention-tout", "tx_pause_storm_error_events"} {
		if !strings.Contains(x.Message, want) {
			t.Errorf("FC166 does not say %q: %s", want, x.Message)
		}
	}
	if !strings.Contains(x.Fix, "policy.mode lossless") || len(x.Edits) != 0 {
		t.Errorf("FC166 fix %q edits %v: want the mode as a decision, no edits", x.Fix, x.Edits)
	}
	if x.Pos.Line != 14 {
		t.Errorf("FC166 at %s: want line 14, the mode (the watchdog is the preset's)", x.Pos)
	}
	fixed := strings.Replace(string(src), "mode: semi-lossless", "mode: lossless", 1)
	if fixed == string(src) {
		t.Fatal("test bug: no mode: semi-lossless in the example")
	}
	for _, y := range run(fixed) {
		if y.ID == "FC166" || y.Severity == Error {
			t.Errorf("mode lossless: %s", y)
		}
	}
}
