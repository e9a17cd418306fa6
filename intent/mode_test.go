package intent

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestModeShapesThePresetClasses holds what each mode makes of the
// roce-lossless preset's classes (NVUE `nv set qos roce mode
// lossless|lossy`; Onyx `roce semi-lossless`), and that a class the
// intent writes still overrides field by field.
func TestModeShapesThePresetClasses(t *testing.T) {
	type roce struct {
		Mode     RoCEMode
		Lossless bool
		ECN      bool
	}
	tests := []struct {
		policy string
		want   roce
	}{
		{"{preset: roce-lossless}", roce{ModeLossless, true, true}},
		{"{preset: roce-lossless, mode: lossless}", roce{ModeLossless, true, true}},
		{"{preset: roce-lossless, mode: lossy}", roce{ModeLossy, false, true}},
		{"{preset: roce-lossy}", roce{ModeLossy, false, true}},
		{"{preset: roce-lossy, mode: lossy}", roce{ModeLossy, false, true}},
		{"{preset: roce-lossless, mode: semi-lossless}", roce{ModeSemiLossless, true, true}},
		{"{preset: roce-lossless, mode: pfc-only}", roce{ModePFCOnly, true, false}},
		// the intent's own class fields win over the mode (check
		// reports the contradiction, FC160/FC161)
		{"{preset: roce-lossless, mode: lossy, classes: [{name: roce, lossless: true}]}", roce{ModeLossy, true, true}},
		{"{preset: roce-lossless, mode: pfc-only, classes: [{name: roce, ecn: {min: 1000, max: 2000}}]}", roce{ModePFCOnly, true, true}},
		{"{mode: lossy, classes: [{name: d, priority: 0, default: true}, {name: r, dscp: [26], priority: 3, ecn: {min: 1000, max: 2000}}]}", roce{ModeLossy, false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.policy, func(t *testing.T) {
			f := mustParse(t, header+"policy: "+tt.policy+"\n")
			rc := f.Policy.RoCEClass()
			if rc == nil {
				t.Fatal("no RoCE class")
			}
			got := roce{f.Policy.Mode, rc.Lossless, rc.ECN != nil}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("mode and RoCE class mismatch (-want +got):\n%s", d)
			}
		})
	}
}

func TestModeErrorsArePositioned(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"unknown mode", header + "policy:\n  preset: roce-lossless\n  mode: lossles\n", []string{"5:9 policy.mode"}},
		{"lossy preset in another mode", header + "policy:\n  preset: roce-lossy\n  mode: pfc-only\n", []string{"5:9 policy.mode"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(tt.src))
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("Parse error = %v (%T), want intent.Errors", err, err)
			}
			var got []string
			for _, e := range es {
				got = append(got, fmt.Sprintf("%d:%d %s", e.Pos.Line, e.Pos.Col, e.Path))
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("errors mismatch (-want +got):\n%s\n%v", d, err)
			}
		})
	}
}
