package tune

import (
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/check"
)

const head = "apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\nmetadata: {name: w}\n"

var ecnEdits = []Edit{
	{Path: "policy.classes[roce].ecn.min", Value: "20KB"},
	{Path: "policy.classes[roce].ecn.max", Value: "400KB"},
	{Path: "policy.classes[roce].ecn.probability", Value: "5%"},
}

// TestWriteShapes: Write makes the ECN edits in every shape an intent
// writes the RoCE class in, and the text parses back to what check.Apply
// makes of the same edits on the intent; the rest of the text (comments
// included) stays.
func TestWriteShapes(t *testing.T) {
	tests := []struct {
		name, policy string
		lines        []int // lines of the changes
	}{
		{"preset only: classes added", "policy:\n  preset: roce-lossless # keep\n", []int{6}},
		{"flow policy", "policy: {preset: roce-lossless}\n", []int{4}},
		{"class without ecn, block", "policy:\n  preset: roce-lossless\n  classes:\n    - name: roce\n      weight: 50% # keep\n", []int{9}},
		{"class without ecn, flow", "policy:\n  preset: roce-lossless\n  classes:\n    - {name: roce, weight: 50%}  # keep\n", []int{7}},
		{"another class listed: roce added", "policy:\n  preset: roce-lossless\n  classes:\n    - name: default\n      weight: 50%\n", []int{9}},
		{"flow list of classes", "policy:\n  preset: roce-lossless\n  classes: [{name: default, weight: 50%}]\n", []int{6}},
		{"ecn block, values replaced", "policy:\n  preset: roce-lossless\n  classes:\n    - name: roce\n      ecn:\n        min: 150KB # keep\n        max: \"1.5MB\"\n        probability: 100%\n", []int{9, 10, 11}},
		{"ecn flow, values replaced", "policy:\n  preset: roce-lossless\n  classes:\n    - name: roce\n      ecn: {min: 150KB, max: 1.5MB, probability: 100%} # keep\n", []int{8, 8, 8}},
		{"ecn block missing a key", "policy:\n  preset: roce-lossless\n  classes:\n    - name: roce\n      ecn:\n        min: 150KB\n        max: 1.5MB\n", []int{9, 10, 11}},
		{"ecn flow missing a key", "policy:\n  preset: roce-lossless\n  classes:\n    - name: roce\n      ecn: {min: 150KB, max: 1.5MB}\n", []int{8, 8, 8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := head + tt.policy
			f, err := intent.Parse("w.yaml", []byte(text))
			if err != nil {
				t.Fatal(err)
			}
			srcs, changes, err := Write(f.Sources, ecnEdits)
			if err != nil {
				t.Fatal(err)
			}
			out := string(srcs[0].Data)
			g, err := intent.Parse("w.yaml", []byte(out))
			if err != nil {
				t.Fatalf("the written intent does not parse: %v\n%s", err, out)
			}
			if err := check.Apply(f, ecnEdits); err != nil {
				t.Fatal(err)
			}
			want, got := f.Policy.ClassByName("roce"), g.Policy.ClassByName("roce")
			if got == nil || got.ECN == nil || got.ECN.MinBytes != want.ECN.MinBytes || got.ECN.MaxBytes != want.ECN.MaxBytes || got.ECN.Probability != want.ECN.Probability {
				t.Errorf("roce ECN read back %+v, want %+v\n%s", got.ECN, want.ECN, out)
			}
			if len(g.Policy.Classes) != len(f.Policy.Classes) || got.Weight != want.Weight || got.Priority != want.Priority || !got.Lossless {
				t.Errorf("classes changed beyond ECN: %+v\n%s", g.Policy.Classes, out)
			}
			if strings.Count(out, "# keep") != strings.Count(text, "# keep") {
				t.Errorf("comments lost:\n%s", out)
			}
			var lines []int
			for _, c := range changes {
				lines = append(lines, c.Pos.Line)
			}
			if len(lines) != len(tt.lines) && !(len(changes) == 1 && len(tt.lines) == 1) {
				t.Errorf("changes %+v, want lines %v", changes, tt.lines)
			} else {
				for i := range lines {
					if lines[i] != tt.lines[i] {
						t.Errorf("change %d at line %d, want %d\n%s", i, lines[i], tt.lines[i], out)
					}
				}
			}
			if d := Diff("w.yaml", text, out); !strings.Contains(d, "+") || !strings.HasPrefix(d, "--- w.yaml\n+++ w.yaml (tuned)\n@@ ") {
				t.Errorf("diff:\n%s", d)
			}
		})
	}
}

// TestWriteRefusesAliases: a value written through a YAML alias is shared
// with another place: Write says so instead of changing both.
func TestWriteRefusesAliases(t *testing.T) {
	text := head + "x-ecn: &e {min: 150KB, max: 1.5MB, probability: 100%}\npolicy:\n  preset: roce-lossless\n  classes:\n    - name: roce\n      ecn: *e\n"
	f, err := intent.Parse("w.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Write(f.Sources, ecnEdits); err == nil {
		t.Error("Write through an alias: no error")
	}
}

// TestWriteDCQCNBlock: fields of a block the files do not write are added
// as one flow mapping (policy.dcqcn, whatever the parser of this build
// knows of it).
func TestWriteDCQCNBlock(t *testing.T) {
	text := head + "policy:\n  preset: roce-lossless\n"
	srcs, changes, err := Write([]intent.Source{{Name: "w.yaml", Data: []byte(text)}}, []Edit{
		{Path: "policy.dcqcn.aiRate", Value: "20M"}, {Path: "policy.dcqcn.timeReset", Value: "50us"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := text + "  dcqcn: {aiRate: 20M, timeReset: 50us}\n"; string(srcs[0].Data) != want || len(changes) != 1 || changes[0].Pos.Line != 6 {
		t.Errorf("got %q %+v, want %q", srcs[0].Data, changes, want)
	}
}

func TestDiff(t *testing.T) {
	a := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\n"
	b := "a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n"
	want := "--- x\n+++ x (tuned)\n@@ -1,5 +1,5 @@\n a\n-b\n+B\n c\n d\n e\n@@ -9,3 +9,4 @@\n i\n j\n k\n+l\n"
	if got := Diff("x", a, b); got != want {
		t.Errorf("Diff =\n%s\nwant\n%s", got, want)
	}
	if Diff("x", a, a) != "" {
		t.Error("Diff of equal texts is not empty")
	}
}

// TestWriteNestedAndOuterAtOneOffset: a key added to a mapping and one
// added inside that mapping's last value go in at the same point (the end
// of its last line); the inner one comes first, or the outer key's line
// would be followed by the inner, deeper indented (no YAML).
func TestWriteNestedAndOuterAtOneOffset(t *testing.T) {
	text := head + "policy:\n  preset: roce-lossless\n  classes:\n    - name: roce\n      ecn:\n        min: 150KB\n        max: 1.5MB\n"
	f, err := intent.Parse("w.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	// the outer key first, as modeEdits lists them
	srcs, _, err := Write(f.Sources, []Edit{{Path: "policy.mode", Value: "pfc-only"}, {Path: "policy.classes[roce].ecn.enabled", Value: "false"}})
	if err != nil {
		t.Fatal(err)
	}
	g, err := intent.Parse("w.yaml", srcs[0].Data)
	if err != nil {
		t.Fatalf("the written intent does not parse: %v\n%s", err, srcs[0].Data)
	}
	if g.Policy.Mode != intent.ModePFCOnly || g.Policy.ClassByName("roce").ECN != nil {
		t.Errorf("mode %s, roce ECN %+v\n%s", g.Policy.Mode, g.Policy.ClassByName("roce").ECN, srcs[0].Data)
	}
}
