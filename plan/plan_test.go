package plan

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func samplePlan() *Plan {
	return &Plan{
		Fabric:  "pod1",
		Created: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC),
		Targets: []TargetPlan{
			{Name: "gpu1", Kind: KindHost, Basis: "b2", Changes: []Change{
				{Action: Update, Path: "ens1f0np0/pfc", Before: "prio-pfc 0x00", After: "prio-pfc 0x08", Reason: "PFC on the lossless priorities"},
			}},
			{Name: "leaf2", Kind: KindSwitch, Platform: "sonic", Basis: "b1", Changes: []Change{
				{Action: NoOp, Path: "/z"},
			}},
			{Name: "leaf1", Kind: KindSwitch, Platform: "srlinux", Basis: "b0", Changes: []Change{
				{Action: Delete, Path: "/qos/b", Before: "1"},
				{Action: Create, Path: "/qos/a|pipe", After: "{\"x\":1}"},
			}, Notes: []string{"needs firmware"}},
			{Name: "leaf3", Kind: KindSwitch, Error: "switch leaf3: get: deadline exceeded"},
		},
	}
}

func TestSortAndSummary(t *testing.T) {
	p := samplePlan()
	p.Sort()
	var order []string
	for _, tp := range p.Targets {
		order = append(order, tp.Kind+"/"+tp.Name)
	}
	if d := cmp.Diff([]string{"switch/leaf1", "switch/leaf2", "switch/leaf3", "host/gpu1"}, order); d != "" {
		t.Errorf("target order (-want +got):\n%s", d)
	}
	if got := p.Targets[0].Changes[0].Path; got != "/qos/a|pipe" {
		t.Errorf("changes not sorted by path: first %q", got)
	}
	got := p.Summarize()
	want := Summary{Targets: 4, Changed: 2, Failed: 1, Create: 1, Update: 1, Delete: 1}
	if got != want {
		t.Errorf("Summarize() = %+v, want %+v", got, want)
	}
	if !p.HasChanges() || !p.HasErrors() {
		t.Errorf("HasChanges=%v HasErrors=%v, want both true", p.HasChanges(), p.HasErrors())
	}
	if p.Targets[1].HasChanges() {
		t.Error("a target with only no-ops reports changes")
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	p := samplePlan()
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"action": "update"`)) {
		t.Errorf("actions are not encoded by name:\n%s", b)
	}
	got, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(p, got); d != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", d)
	}
	if _, err := Unmarshal([]byte(`{"version": 99}`)); err == nil {
		t.Error("a plan of an unknown format version was accepted")
	}
	if _, err := Unmarshal([]byte(`{"version": 1, "targets": [{"changes": [{"action": "explode"}]}]}`)); err == nil {
		t.Error("an unknown action was accepted")
	}
	if _, err := Unmarshal([]byte(`not json`)); err == nil {
		t.Error("garbage was accepted")
	}
}

func TestWriteFormats(t *testing.T) {
	p := samplePlan()
	p.Sort()
	for _, tt := range []struct {
		format string
		want   []string
	}{
		{"text", []string{"switch leaf1 (srlinux):", "  + /qos/a|pipe", "  - /qos/b", "switch leaf2 (sonic): no changes",
			"switch leaf3: ERROR: switch leaf3: get: deadline exceeded", "host gpu1:", "prio-pfc 0x00 -> prio-pfc 0x08",
			"note: needs firmware", "Plan: 1 to create, 1 to update, 1 to delete on 2 of 4 targets; 1 failed."}},
		{"markdown", []string{"### fabricctl plan: pod1", "| create | `/qos/a\\|pipe` |", ":x: switch leaf3", "> needs firmware", "No changes."}},
		{"json", []string{`"fabric": "pod1"`, `"kind": "host"`}},
	} {
		var b bytes.Buffer
		if err := Write(&b, p, tt.format); err != nil {
			t.Fatalf("Write(%s): %v", tt.format, err)
		}
		for _, w := range tt.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("Write(%s) lacks %q:\n%s", tt.format, w, b.String())
			}
		}
	}
	if err := Write(new(bytes.Buffer), p, "yaml"); err == nil {
		t.Error("an unknown format was accepted")
	}
}

// TestForcedFindingsRecorded: a plan made past check findings with
// --force names them in every format, and a saved plan keeps them.
func TestForcedFindingsRecorded(t *testing.T) {
	p := samplePlan()
	p.ForcedFindings = []string{"FC119 policy.roce.tos", "FC106 inventory.switches[oc1].platform"}
	note := "Forced (--force) past 2 check findings: FC119 policy.roce.tos, FC106 inventory.switches[oc1].platform."
	for format, want := range map[string]string{
		"text":     "targets; 1 failed.\n" + note + "\n",
		"markdown": "> :warning: " + mdEscape(note),
		"json":     `"forcedFindings": [`,
	} {
		var b bytes.Buffer
		if err := Write(&b, p, format); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), want) {
			t.Errorf("Write(%s) lacks %q:\n%s", format, want, b.String())
		}
	}
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(p.ForcedFindings, got.ForcedFindings); d != "" {
		t.Errorf("saved plan lost the forced findings (-want +got):\n%s", d)
	}
	// A plan nothing was forced for says nothing of it.
	p.ForcedFindings = nil
	var text bytes.Buffer
	if err := WriteText(&text, p); err != nil {
		t.Fatal(err)
	}
	if b, _ := p.Marshal(); strings.Contains(text.String(), "Forced") || bytes.Contains(b, []byte("forcedFindings")) {
		t.Errorf("an unforced plan mentions forcing:\n%s\n%s", text.String(), b)
	}
	if ForcedNote([]string{"FC119 policy.roce.tos"}) != "Forced (--force) past 1 check finding: FC119 policy.roce.tos." {
		t.Errorf("one finding: %q", ForcedNote([]string{"FC119 policy.roce.tos"}))
	}
}

func TestActionText(t *testing.T) {
	for _, a := range []Action{NoOp, Create, Update, Delete} {
		b, _ := a.MarshalText()
		var got Action
		if err := got.UnmarshalText(b); err != nil || got != a {
			t.Errorf("action %v does not round-trip: %v, %v", a, got, err)
		}
	}
	if Action(9).String() != "Action(9)" || Action(9).Symbol() != "?" {
		t.Errorf("out-of-range action renders as %q %q", Action(9).String(), Action(9).Symbol())
	}
	if !errors.Is(ErrStale, ErrStale) || Hash([]byte("a")) == Hash([]byte("b")) || len(Hash(nil)) != 32 {
		t.Error("Hash is not a 16-byte hex digest that tells inputs apart")
	}
}

// textPlan has a target of every kind the text shows: changes of each
// action with and without values and reasons, notes, an error, a target
// without changes, and an action the text does not know.
func textPlan() *Plan {
	p := samplePlan()
	p.Targets = append(p.Targets,
		TargetPlan{Name: "leaf4", Kind: KindSwitch, Platform: "eos", Changes: []Change{
			{Action: Update, Path: "/a", After: "2", Reason: "drift"},
			{Action: Update, Path: "/b", Before: "1"},
			{Action: Create, Path: "/c", Reason: "the intent wants it"},
			{Action: Delete, Path: "/d", Reason: ReasonText},
			{Action: Action(7), Path: "/e", Before: "x", After: "y"},
			{Action: NoOp, Path: "/f", Before: "same", After: "same"},
		}, Notes: []string{"one", "two"}},
		TargetPlan{Name: "leaf5", Kind: KindSwitch, Changes: []Change{}, Notes: []string{"only a note"}},
	)
	p.Sort()
	for i := range p.Targets {
		p.Targets[i].Sort()
	}
	return p
}

// ReasonText is a reason with characters fmt would treat specially.
const ReasonText = "100% of it: %d %s {}"

// TestWriteTextExact pins the text output, byte for byte (as written with
// fmt before WriteText built it by hand).
func TestWriteTextExact(t *testing.T) {
	const want = `switch leaf1 (srlinux):
  + /qos/a|pipe
      = {"x":1}
  - /qos/b
      was 1
  note: needs firmware
switch leaf2 (sonic): no changes
switch leaf3: ERROR: switch leaf3: get: deadline exceeded
switch leaf4 (eos):
  ~ /a
      (none) -> 2
      (drift)
  ~ /b
      1 -> (none)
  + /c
      = (none)
      (the intent wants it)
  - /d
      was (none)
      (100% of it: %d %s {})
  ? /e
  note: one
  note: two
switch leaf5: no changes
  note: only a note
host gpu1:
  ~ ens1f0np0/pfc
      prio-pfc 0x00 -> prio-pfc 0x08
      (PFC on the lossless priorities)
Plan: 2 to create, 3 to update, 2 to delete on 3 of 6 targets; 1 failed.
`
	var b strings.Builder
	if err := WriteText(&b, textPlan()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
}

// BenchmarkWriteText renders the plan of 200 switches with 100 changes
// each (what `fabricctl apply` shows for a fresh fabric of 200 switches).
func BenchmarkWriteText(b *testing.B) {
	p := &Plan{Fabric: "bench"}
	for i := range 200 {
		tp := TargetPlan{Name: fmt.Sprintf("leaf%d", i), Kind: KindSwitch, Platform: "srlinux", Notes: []string{"a note about the switch"}}
		for j := range 100 {
			tp.Changes = append(tp.Changes, Change{Action: Create, Path: fmt.Sprintf("/qos/interfaces/interface[interface-id=ethernet-1/%d]", j),
				After: `{"interface-id":"ethernet-1/1","interface-ref":{"interface":"ethernet-1/1"},"output":{"scheduler":{"scheduler-policy":"FABRICCTL_SCHED"}}}`})
		}
		p.Targets = append(p.Targets, tp)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteText(io.Discard, p); err != nil {
			b.Fatal(err)
		}
	}
}
