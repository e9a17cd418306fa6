package tune

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/check"
	"github.com/fabricctl/fabricctl/intent/portfacts"
	"github.com/fabricctl/fabricctl/internal/sim"
)

// minimal is the preset alone: the search runs on simulate's synthetic
// star (one SONiC switch, 100G, 3 m).
const minimal = "apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\nmetadata: {name: m}\npolicy:\n  preset: roce-lossless\n"

// buffered has a SONiC switch with a 2 MB buffer: its XOFF point bounds
// ECN max (FC111), and the synthetic star is that switch.
const buffered = `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: b}
policy:
  preset: roce-lossless
inventory:
  switches:
    - name: leaf1
      platform: sonic
      address: "192.0.2.2:8080"
      buffer: 2MB
      portDefaults: {speed: 100G, cable: 3m}
      ports:
        - name: Ethernet{0..4..4}
`

func parse(t testing.TB, text string) *intent.Fabric {
	t.Helper()
	f, err := intent.Parse("fabric.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestTuneImprovesIncast16 (issue 31 item 6): on a 16:1 incast in
// lossless mode, the tuned setting completes the flows sooner at the 99th
// percentile than the preset's, with no drop on a lossless priority, and
// every setting stays inside the bounds (one MTU, the XOFF point, every
// platform's range).
func TestTuneImprovesIncast16(t *testing.T) {
	for _, tt := range []struct {
		name, text string
	}{{"preset alone", minimal}, {"switch with a buffer", buffered}} {
		t.Run(tt.name, func(t *testing.T) {
			f := parse(t, tt.text)
			r, err := Search(t.Context(), f, Options{Scenarios: []string{"incast:16:1"}, DCQCN: true, Parallel: 2})
			if err != nil {
				t.Fatal(err)
			}
			b, a := r.Before.Runs[0], r.After.Runs[0]
			if b.Flows != 16 || a.Flows != 16 || a.Unfinished != 0 {
				t.Fatalf("flows: before %+v after %+v, want 16 finished", b, a)
			}
			if a.P99FCT >= b.P99FCT {
				t.Errorf("p99 FCT %s after tuning, %s with the preset: want lower", a.P99FCT, b.P99FCT)
			}
			if b.LosslessDrops != 0 || a.LosslessDrops != 0 || r.After.Drops != 0 {
				t.Errorf("lossless drops: before %d, after %d, want none", b.LosslessDrops, a.LosslessDrops)
			}
			if err := r.Bounds.Check(r.Best); err != nil {
				t.Errorf("best setting %s: %v", r.Best, err)
			}
			if len(r.Edits) == 0 {
				t.Errorf("no edit for a better setting %s", r.Best)
			}
			if r.Evaluated > DefaultBudget {
				t.Errorf("simulated %d settings, budget %d", r.Evaluated, DefaultBudget)
			}
		})
	}
}

// TestTuneDeterministic: the same seed gives the same search, whatever
// the parallelism; another seed runs other ECN marking draws.
func TestTuneDeterministic(t *testing.T) {
	f := parse(t, minimal)
	o := Options{Scenarios: []string{"incast:8:1", "slow-receiver:50"}, DCQCN: true, Budget: 60, Seed: 7}
	var got []*Result
	for _, par := range []int{1, 2, 2} {
		o.Parallel = par
		r, err := Search(t.Context(), f, o)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	for _, r := range got[1:] {
		if r.Best != got[0].Best || r.Evaluated != got[0].Evaluated {
			t.Errorf("best %s after %d settings, first run %s after %d", r.Best, r.Evaluated, got[0].Best, got[0].Evaluated)
		}
		if d := cmp.Diff(got[0].After, r.After, cmpopts.IgnoreFields(Score{}, "Setting")); d != "" {
			t.Errorf("scores differ (-first +this):\n%s", d)
		}
	}
	if got[0].Seed != 7 {
		t.Errorf("seed %d, want 7", got[0].Seed)
	}
}

// TestBoundsFromPortfacts: ECN max is bounded by the smallest XOFF point
// portfacts derives (a SONiC switch's buffer less its headroom in cells),
// not by an SR Linux 7220 static XOFF point (which follows Kmax); min by
// one MTU; the EOS range where an EOS switch is present.
func TestBoundsFromPortfacts(t *testing.T) {
	f := parse(t, buffered)
	cl, err := RoCEClass(f, "")
	if err != nil {
		t.Fatal(err)
	}
	b := boundsOf(f, cl)
	sw := &f.Switches[0]
	pf := portfacts.PortOf(f, sw, sw.Ports[0])
	want := pf.LosslessAt(3).XOFF
	if b.KmaxCeil != want || want <= 0 || want >= 2_000_000 {
		t.Errorf("KmaxCeil %d, want the XOFF point %d (2 MB less headroom)", b.KmaxCeil, want)
	}
	if b.KminFloor != int64(f.Policy.MTU) {
		t.Errorf("KminFloor %d, want one MTU %d", b.KminFloor, f.Policy.MTU)
	}
	if len(b.Platforms) != 1 || b.Platforms[0].Platform != intent.PlatformSONiC {
		t.Errorf("platforms %+v, want sonic only", b.Platforms)
	}
	srl := parse(t, strings.NewReplacer("platform: sonic", "platform: srlinux", "Ethernet{0..4..4}", "ethernet-1/{1..2}", "buffer: 2MB", "").Replace(buffered))
	b = boundsOf(srl, cl)
	if b.KmaxCeil != maxUint32-int64(srl.Policy.MTU)-18-1023 {
		t.Errorf("SR Linux: KmaxCeil %d, want the pfc-queue MBS range less a frame", b.KmaxCeil)
	}
	for _, s := range []Setting{
		{Kmin: 5000, Kmax: 100_000, Pmax: 10},                        // below one MTU
		{Kmin: 100_000, Kmax: 100_000, Pmax: 10},                     // min not below max
		{Kmin: 10_000, Kmax: 100_000, Pmax: 0},                       // probability
		{Kmin: 10_000, Kmax: 300_000_000, Pmax: 10},                  // above EOS's range once EOS is there
		{Kmin: 10_000, Kmax: want + 1, Pmax: 10, DCQCN: sim.DCQCN{}}, // above XOFF
	} {
		bb := boundsOf(f, cl)
		if s.Kmax == 300_000_000 {
			bb = boundsOf(parse(t, strings.NewReplacer("platform: sonic", "platform: eos", "buffer: 2MB", "").Replace(buffered)), cl)
		}
		if bb.Check(s) == nil {
			t.Errorf("Check(%s) = nil, want an error", s)
		}
	}
	if err := boundsOf(f, cl).Check(Setting{Kmin: 10_000, Kmax: want, Pmax: 1}); err != nil {
		t.Errorf("Check at the bounds: %v", err)
	}
}

// TestDimsStayInBounds: every level of the searched ECN parameters meets
// the floor and ceiling, and the grid holds the base's values.
func TestDimsStayInBounds(t *testing.T) {
	f := parse(t, buffered)
	cl, _ := RoCEClass(f, "")
	b := boundsOf(f, cl)
	base := baseSetting(f, cl)
	ds := dims(b, base, true)
	if ds[0].levels[0] < float64(b.KminFloor) || ds[1].levels[len(ds[1].levels)-1] > float64(b.KmaxCeil) {
		t.Errorf("ECN levels %v / %v outside %d..%d", ds[0].levels, ds[1].levels, b.KminFloor, b.KmaxCeil)
	}
	for _, d := range ds[3:] {
		if v := d.get(base); v > 0 && nearest(d.levels, v) < 0 || math.Abs(d.levels[nearest(d.levels, d.get(base))]-d.get(base)) > 1e-9 {
			t.Errorf("%s: base %g is not a level of %v", d.name, d.get(base), d.levels)
		}
	}
}

// TestSettingEdits: the edits of a setting, applied with check.Apply, give
// the setting back; DCQCN fields use the CONTRACTS names and only those
// that changed.
func TestSettingEdits(t *testing.T) {
	f := parse(t, minimal)
	cl, _ := RoCEClass(f, "")
	base := baseSetting(f, cl)
	s := base
	s.Kmin, s.Kmax, s.Pmax = 20_000, 400_000, 5
	s.DCQCN.AIRate, s.DCQCN.TimeReset = 20e6, 50*sim.Microsecond
	edits := s.Edits(&f.Policy, cl, base, true)
	var ecn []Edit
	paths := map[string]string{}
	for _, e := range edits {
		paths[e.Path] = e.Value
		if strings.Contains(e.Path, ".ecn.") {
			ecn = append(ecn, e)
		}
	}
	want := map[string]string{
		"policy.classes[roce].ecn.min": "20KB", "policy.classes[roce].ecn.max": "400KB", "policy.classes[roce].ecn.probability": "5%",
		"policy.dcqcn.aiRate": "20M", "policy.dcqcn.timeReset": "50us",
	}
	if d := cmp.Diff(want, paths); d != "" {
		t.Errorf("edits (-want +got):\n%s", d)
	}
	g, err := withSetting(f, cl, base)
	if err != nil {
		t.Fatal(err)
	}
	if err := check.Apply(g, ecn); err != nil {
		t.Fatal(err)
	}
	if e := g.Policy.ClassByName("roce").ECN; e.MinBytes != 20_000 || e.MaxBytes != 400_000 || e.Probability != 5 {
		t.Errorf("applied: %+v", *e)
	}
	if e := f.Policy.ClassByName("roce").ECN; e.MinBytes != base.Kmin {
		t.Errorf("withSetting changed the caller's fabric: %+v", *e)
	}
	// Every edit a setting makes (ECN and policy.dcqcn) is a field of the
	// intent: written into the files, the text parses back.
	if srcs, _, err := Write(f.Sources, edits); err != nil {
		t.Errorf("write %v: %v", edits, err)
	} else if _, err := intent.ParseSources(srcs...); err != nil {
		t.Errorf("the written edits %v do not parse: %v", edits, err)
	}
	pfc := base
	pfc.Mode = intent.ModePFCOnly
	g = parse(t, head+"policy:\n  preset: roce-lossless\n  classes:\n    - {name: roce, ecn: {min: 150KB, max: 1.5MB, probability: 100%}}\n")
	if d := cmp.Diff([]Edit{{Path: "policy.mode", Value: "pfc-only"}, {Path: "policy.classes[roce].ecn.enabled", Value: "false"}}, pfc.Edits(&g.Policy, g.Policy.ClassByName("roce"), base, true)); d != "" {
		t.Errorf("pfc-only edits (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]Edit{{Path: "policy.mode", Value: "pfc-only"}}, pfc.Edits(&f.Policy, cl, base, true)); d != "" {
		t.Errorf("pfc-only edits on the preset's ECN (-want +got):\n%s", d)
	}
}

func TestSearchErrors(t *testing.T) {
	f := parse(t, minimal)
	for _, o := range []Options{
		{},                                  // no scenario
		{Scenarios: []string{"incast:4:2"}}, // bad spec
		{Scenarios: []string{"incast:4:1"}, Class: "cnp"},  // the CNP class
		{Scenarios: []string{"incast:4:1"}, Class: "nope"}, // no such class
	} {
		if _, err := Search(t.Context(), f, o); err == nil {
			t.Errorf("Search(%+v): no error", o)
		}
	}
	g := parse(t, "apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\nmetadata: {name: m}\npolicy:\n  preset: none\n  classes:\n    - {name: be, priority: 0, default: true}\n")
	if _, err := Search(t.Context(), g, Options{Scenarios: []string{"incast:2:1"}}); err == nil {
		t.Error("Search on a policy without a lossless class: no error")
	}
}

// BenchmarkTuneIncast16to1 is the goal: a 16:1 incast search
// (ECN and DCQCN, the default budget) on 2 cores in under a minute.
func BenchmarkTuneIncast16to1(b *testing.B) {
	f := parse(b, buffered)
	for b.Loop() {
		r, err := Search(b.Context(), f, Options{Scenarios: []string{"incast:16:1"}, DCQCN: true, Parallel: 2})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(r.Evaluated), "settings/op")
	}
}

// TestSharedWREDProfile: on SONiC 202405/202411 (one WRED profile for every
// ECN class, the earliest marking: FC128) the tuned class marks at or
// before the other ECN class, so that the switches program what was
// simulated; the intent's own setting is simulated as they program it.
func TestSharedWREDProfile(t *testing.T) {
	f := parse(t, strings.Replace(buffered, "  preset: roce-lossless\n", "  preset: roce-lossless\n  classes:\n    - {name: storage, dscp: [24], priority: 4, lossless: true, weight: 20%, ecn: {min: 100KB, max: 1MB, probability: 50%}}\n    - {name: default, weight: 30%}\n", 1))
	cl, _ := RoCEClass(f, "")
	b := boundsOf(f, cl)
	if b.Shared == nil || b.Shared.MaxBytes != 1_000_000 || b.Shared.MinBytes != 100_000 || b.Shared.Probability != 50 {
		t.Fatalf("shared %+v, want storage's ECN", b.Shared)
	}
	if e := b.Effective(baseSetting(f, cl)); e.Kmin != 100_000 || e.Kmax != 1_000_000 || e.Pmax != 100 {
		t.Errorf("the preset's ECN as programmed: %s, want min 100KB max 1MB 100%%", e)
	}
	r, err := Search(t.Context(), f, Options{Scenarios: []string{"incast:16:1"}, Parallel: 2, DCQCN: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Best == r.Base {
		t.Fatalf("no better setting than the intent's (%d settings): the test wants one", r.Evaluated)
	}
	if s := r.Best; s.Kmin > 100_000 || s.Kmax > 1_000_000 || s.Pmax < 50 || b.Effective(s) != s {
		t.Errorf("best %s marks later than storage's shared profile", s)
	}
	if len(r.Notes) == 0 || !strings.Contains(r.Notes[0], "FC128") {
		t.Errorf("notes %q do not say why", r.Notes)
	}
}

// TestTuneClassWithoutECN: a lossless class without ECN (check's FC109)
// runs as it is, PFC alone, and tune adds the ECN block it finds best;
// a cancelled search stops with the context's error.
func TestTuneClassWithoutECN(t *testing.T) {
	f := parse(t, head+"policy:\n  preset: none\n  classes:\n    - {name: default, priority: 0, default: true, weight: 50%}\n    - {name: roce, dscp: [26], priority: 3, lossless: true, weight: 50%}\n    - {name: cnp, dscp: [48], priority: 6, strict: true, cnp: true}\n")
	r, err := Search(t.Context(), f, Options{Scenarios: []string{"incast:8:1"}, Budget: 40, Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	if r.Before.Runs[0].Unfinished != 0 || r.Before.Drops != 0 {
		t.Errorf("PFC alone: %+v", r.Before.Runs[0])
	}
	if r.Best == r.Base || r.Best.Kmax == 0 {
		t.Fatalf("best %s: want an ECN setting for this incast", r.Best)
	}
	if w, err := r.Write(); err != nil || !strings.Contains(string(w.Sources[0].Data), "ecn: {min: ") {
		t.Errorf("Write: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Search(ctx, f, Options{Scenarios: []string{"incast:8:1"}, Budget: 40}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled search: %v, want context.Canceled", err)
	}
}
