package intent

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestHostPauseStormPreventionParse: policy.hostPauseStormPrevention reads
// off, auto and a stall time of whole ms within mlx5's 80-8000 ms
// (en_ethtool.c mlx5e_set_pfc_prevention_tout), each to the u16 the ethtool
// tunable takes and the value the NIC reads back (auto: 0xffff written, 100
// read); absent leaves the NICs alone (nil).
func TestHostPauseStormPreventionParse(t *testing.T) {
	for _, tc := range []struct {
		value          string
		want           PauseStormPrevention
		tunable, reads uint16
		text           string
	}{
		{"off", PauseStormOff, 0, 0, "off"},
		{"auto", PauseStormAuto, 0xffff, 100, "auto"},
		{`"auto"`, PauseStormAuto, 0xffff, 100, "auto"},
		{"100ms", PauseStormPrevention(100 * time.Millisecond), 100, 100, "100ms"},
		{"80ms", PauseStormPrevention(80 * time.Millisecond), 80, 80, "80ms"},
		{"8s", PauseStormPrevention(8 * time.Second), 8000, 8000, "8s"},
		{"1.5s", PauseStormPrevention(1500 * time.Millisecond), 1500, 1500, "1.5s"},
	} {
		f := mustParse(t, header+"policy:\n  preset: roce-lossless\n  hostPauseStormPrevention: "+tc.value+"\n")
		got := f.Policy.HostPauseStormPrevention
		if got == nil || *got != tc.want || got.Tunable() != tc.tunable || got.ReadBack() != tc.reads || got.String() != tc.text {
			t.Errorf("%s: got %v, want %v (tunable %d, reads back %d, %s)", tc.value, got, tc.want, tc.tunable, tc.reads, tc.text)
		}
		if at := f.Policy.Fields.At("hostPauseStormPrevention", Pos{}); at.Line != 5 {
			t.Errorf("%s: written at %s, want line 5", tc.value, at)
		}
	}
	if f := mustParse(t, header+"policy:\n  preset: roce-lossless\n"); f.Policy.HostPauseStormPrevention != nil {
		t.Error("absent hostPauseStormPrevention must leave the NICs alone (nil)")
	}
}

// TestHostPauseStormPreventionRefused: values the NIC refuses (outside
// 80-8000 ms, not whole ms) or that are not the field's words are errors at
// the field's line, saying what to write.
func TestHostPauseStormPreventionRefused(t *testing.T) {
	for _, tc := range []struct{ value, says string }{
		{"79ms", "out of range 80ms-8s"},
		{"8001ms", "out of range 80ms-8s"},
		{"10s", "out of range 80ms-8s"},
		{"100500us", "whole number of milliseconds"},
		{"100", "needs a unit"},
		{"0", "write off"},
		{"0ms", "write off"},
		{"false", "write off, auto"},
		{"true", "write off, auto"},
		{"on", "want off, auto or a stall time"},
		{"100 ms", "no space"},
		{"{a: 1}", "want a value with a unit"},
	} {
		_, err := Parse("f.yaml", []byte(header+"policy:\n  preset: roce-lossless\n  hostPauseStormPrevention: "+tc.value+"\n"))
		var es Errors
		if !errors.As(err, &es) || len(es) != 1 {
			t.Errorf("%s: want one error, got %v", tc.value, err)
			continue
		}
		if es[0].Pos.File != "f.yaml" || es[0].Pos.Line != 5 || es[0].Path != "policy.hostPauseStormPrevention" || !strings.Contains(es[0].Error(), tc.says) {
			t.Errorf("%s: error %s at %s %s, want f.yaml:5 policy.hostPauseStormPrevention saying %q", tc.value, es[0], es[0].Pos, es[0].Path, tc.says)
		}
	}
}
