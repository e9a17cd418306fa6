package sim

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/fabricctl/fabricctl/intent"
)

// Modes a comparison runs, by the name policy.mode gives them.
const (
	ModeLossless = "lossless" // PFC and ECN/DCQCN on the RoCE class
	ModePFCOnly  = "pfc-only" // PFC, no ECN marking (no DCQCN)
	ModeLossy    = "lossy"    // ECN/DCQCN only; RoCE RC recovers the drops
	// ModeSemiLossless: hosts send PFC, switches honour it but never send
	// it (intent.ModeSemiLossless): switch drops are recovered by RoCE RC.
	ModeSemiLossless = "semi-lossless"
)

// WithMode returns a copy of f whose RoCE class (intent.Policy.RoCEClass)
// is set up as mode says: lossless and pfc-only make it lossless (pfc-only
// also takes its ECN away), lossy makes it lossy with the ECN it has.
// Everything else is f's; f is not changed. The simulator itself reads
// only the classes' lossless flags and ECN, so an intent that states its
// mode (policy.mode) runs as it is; this is for comparing modes on the
// same workload. semi-lossless keeps the class lossless (the hosts send
// pause) and sets the policy's mode, whose derived facts have the switches
// honour pause without sending it (portfacts PFCSend, PFCHonour).
func WithMode(f *intent.Fabric, mode string) (*intent.Fabric, error) {
	rc := f.Policy.RoCEClass()
	if rc == nil {
		return nil, fmt.Errorf("mode %s: the policy has no RoCE class (a lossless class, or one with ECN that is neither CNP nor default)", mode)
	}
	name := rc.Name
	out := *f
	out.Policy.Classes = slices.Clone(f.Policy.Classes)
	c := out.Policy.ClassByName(name)
	switch mode {
	case ModeLossless:
		c.Lossless = true
	case ModePFCOnly:
		c.Lossless, c.ECN = true, nil
	case ModeLossy:
		c.Lossless = false
	case ModeSemiLossless:
		c.Lossless = true
	default:
		return nil, fmt.Errorf("mode %q: want %s, %s, %s or %s", mode, ModeLossless, ModePFCOnly, ModeLossy, ModeSemiLossless)
	}
	// The policy's mode too: the derived facts (intent/portfacts) give
	// headroom and an XOFF point only where switches send pause.
	out.Policy.Mode = intent.RoCEMode(mode)
	return &out, nil
}

// ModeRun is one run of a mode comparison.
type ModeRun struct {
	Mode     string   `json:"mode"`
	Recovery Recovery `json:"recovery,omitempty"` // lossy runs only
	Result   *Result  `json:"result"`
}

// CompareModes runs sc on f in each mode (lossless, pfc-only, lossy with
// each loss recovery, and semi-lossless with opt's), with the same
// options, seed and topology.
func CompareModes(f *intent.Fabric, sc *Scenario, so StarOptions, opt Options) ([]ModeRun, error) {
	type variant struct {
		mode string
		rec  Recovery
	}
	vs := []variant{{ModeLossless, ""}, {ModePFCOnly, ""}}
	for _, r := range Recoveries() {
		vs = append(vs, variant{ModeLossy, r})
	}
	semiRec := opt.Recovery
	if semiRec == "" {
		semiRec = RecoveryGoBackN
	}
	vs = append(vs, variant{ModeSemiLossless, semiRec})
	var out []ModeRun
	for _, v := range vs {
		mf, err := WithMode(f, v.mode)
		if err != nil {
			return nil, err
		}
		c := *sc
		c.Slow = maps.Clone(sc.Slow)
		c.LinkDown = slices.Clone(sc.LinkDown)
		n, err := Build(mf, &c, so, opt.Seed)
		if err != nil {
			return nil, fmt.Errorf("mode %s: %w", v.mode, err)
		}
		o := opt
		if v.rec != "" {
			o.Recovery = v.rec
		}
		r := New(n, o).Run()
		if v.rec == "" {
			r.Recovery.Mode = ""
		}
		if c := mf.Policy.RoCEClass(); v.mode == ModeLossy && c != nil && c.ECN == nil {
			r.Notes = append(r.Notes, fmt.Sprintf("lossy: class %s has no ECN, so nothing slows the senders but their losses", c.Name))
		}
		out = append(out, ModeRun{Mode: v.mode, Recovery: v.rec, Result: r})
	}
	return out, nil
}

// fctStr prints a percentile, ">" when it is a lower bound.
func fctStr(t Time, atLeast bool, flows int) string {
	if flows == 0 {
		return "-"
	}
	if atLeast {
		return ">" + dur(t)
	}
	return dur(t)
}

// WriteModeComparison prints one line per run: drops, pause, resent
// bytes and goodput lost, flow completion times.
func WriteModeComparison(w io.Writer, runs []ModeRun) error {
	var b strings.Builder
	if len(runs) > 0 {
		r := runs[0].Result
		fmt.Fprintf(&b, "scenario %s, %s of fabric time, seed %d\n", r.Scenario, dur(r.Duration), r.Seed)
		seen := map[string]bool{}
		for _, m := range runs {
			for _, n := range m.Result.Notes {
				if !seen[n] {
					seen[n] = true
					fmt.Fprintf(&b, "note: %s\n", n)
				}
			}
		}
		b.WriteString("\n")
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MODE\tRECOVERY\tDROPS\tPAUSED\tRESENT\tGOODPUT LOST\tTIMEOUTS\tFINISHED\tFCT MEDIAN\tFCT P99")
	for _, m := range runs {
		r := m.Result
		t := r.Totals(true)
		l := r.Totals(false)
		rec := string(m.Recovery)
		if rec == "" {
			rec = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%.1f%%\t%d\t%d/%d\t%s\t%s\n", m.Mode, rec, t.Drops+l.Drops, dur(t.PausedTime+l.PausedTime),
			bytesStr(r.Recovery.RetransmittedBytes), 100*r.Recovery.GoodputLoss, r.Recovery.Timeouts, r.FCT.Finished, r.FCT.Flows,
			fctStr(r.FCT.Median, r.FCT.MedianAtLeast, r.FCT.Flows), fctStr(r.FCT.P99, r.FCT.P99AtLeast, r.FCT.Flows))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}
