package sim

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricctl/fabricctl/internal/dcqcntest"
)

// TestDCQCNFromPolicy: policy.dcqcn overlays MLX5Defaults field by field,
// each converted from the NIC's unit (us, Mb/s, bytes, percent, 1/1024).
func TestDCQCNFromPolicy(t *testing.T) {
	if got := DCQCNFromPolicy(nil); got != MLX5Defaults() {
		t.Errorf("nil policy = %+v, want MLX5Defaults", got)
	}
	if got := DCQCNFromPolicy(&parse(t, minimalIntent).Policy); got != MLX5Defaults() {
		t.Errorf("no policy.dcqcn = %+v, want MLX5Defaults", got)
	}
	f := parse(t, minimalIntent+dcqcntest.Policy)
	want := DCQCN{
		RateReducePeriod: 50 * Microsecond, TimeReset: 55 * Microsecond, ByteReset: 10_000_000, Threshold: 5,
		AIRate: 40e6, HAIRate: 200e6, MinDecFactor: 0.25, MinRate: 10e6, RateOnFirstCNP: 25e9,
		G: 4.0 / 1024, AlphaPeriod: 55 * Microsecond, InitialAlpha: 0.5, ClampTarget: true,
		ClampTargetAfterTimeInc: false, MinTimeBetweenCNP: 8 * Microsecond,
	}
	if diff := cmp.Diff(want, DCQCNFromPolicy(&f.Policy)); diff != "" {
		t.Errorf("DCQCNFromPolicy mismatch (-want +got):\n%s", diff)
	}
	// A partial block keeps mlx5's defaults for the rest.
	part := parse(t, minimalIntent+"  dcqcn: {timeReset: 100us}\n")
	wantPart := MLX5Defaults()
	wantPart.TimeReset = 100 * Microsecond
	if got := DCQCNFromPolicy(&part.Policy); got != wantPart {
		t.Errorf("partial = %+v, want %+v", got, wantPart)
	}
}

// TestRateOnFirstCNP: with rate_to_set_on_first_cnp the first CNP sets the
// rate (never above the line, never below the minimum); later CNPs cut by
// alpha as before. 0 keeps the plain cut.
func TestRateOnFirstCNP(t *testing.T) {
	newFlow := func() *flow {
		f := &flow{line: 100e9}
		f.rp = rpState{rc: f.line, rt: f.line}
		return f
	}
	d := MLX5Defaults()
	d.RateOnFirstCNP = 20e9
	s := &Sim{dc: d}
	f := newFlow()
	if !s.onCNP(f, 10*Microsecond) || f.rp.rc != 20e9 || f.rp.rt != 100e9 {
		t.Fatalf("first CNP: rc %g rt %g, want 20G and target 100G", f.rp.rc, f.rp.rt)
	}
	if !s.onCNP(f, 20*Microsecond) || f.rp.rc >= 20e9 {
		t.Errorf("second CNP after the monitor period: rc %g, want an alpha cut below 20G", f.rp.rc)
	}
	plain := &Sim{dc: MLX5Defaults()}
	g := newFlow()
	plain.onCNP(g, 10*Microsecond)
	// alpha = (1-g) x 1023/1024 + g, just under 1: the cut is to about 50 %.
	if g.rp.rc < 50e9 || g.rp.rc > 51e9 {
		t.Errorf("without rateOnFirstCNP the first CNP cuts by alpha/2: rc %g, want about 50G", g.rp.rc)
	}
}
