package sim

import (
	"math"
	"testing"
	"time"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/portfacts"
)

// TestConservation: bytes sent = delivered + queued + in flight + dropped
// after every run (runSc checks it); here over scenarios that drop, pause,
// mark and trigger the watchdog.
func TestConservation(t *testing.T) {
	f := parse(t, minimalIntent)
	for _, tc := range []struct {
		spec string
		opt  Options
	}{
		{"incast:8:1", Options{Duration: 200 * time.Microsecond}},
		{"incast:8:1", Options{Duration: 200 * time.Microsecond, Headroom: 2000, NoECN: true}},
		{"alltoall", Options{Duration: 100 * time.Microsecond}},
		{"slow-receiver:10", Options{Duration: 200 * time.Microsecond}},
	} {
		r := run(t, f, tc.spec, StarOptions{}, tc.opt)
		c := r.Conservation
		if c.Sent == 0 || c.Delivered == 0 {
			t.Errorf("%s: nothing moved: %+v", tc.spec, c)
		}
	}
}

// TestHeadroomZeroDrops: with the headroom compile programs (the largest of
// the models, portfacts Headroom.Programmed), an N:1 incast with PFC alone (no
// ECN) drops nothing on the lossless priority, for N up to 64.
func TestHeadroomZeroDrops(t *testing.T) {
	f := parse(t, minimalIntent)
	for _, n := range []int{2, 16, 64} {
		r := run(t, f, "incast:"+itoa(n)+":1", StarOptions{Cable: 100}, Options{Duration: 150 * time.Microsecond, NoECN: true, XOFF: 64 << 10})
		tot := r.Totals(true)
		if tot.PauseSent == 0 {
			t.Fatalf("%d:1: no pause sent, the test does not exercise headroom", n)
		}
		if tot.Drops != 0 {
			t.Errorf("%d:1 with the compiled headroom: %d lossless drops", n, tot.Drops)
		}
	}
}

func itoa(n int) string { return intent.FormatSize(int64(n))[:len(intent.FormatSize(int64(n)))-1] }

// TestHeadroomBelowNeedDrops: cut the headroom below what the cable and the
// response time need and drops appear; the smallest headroom with zero
// drops agrees with the analytical IEEE 802.1Qbb figure (for the largest
// frame the run sends) within one MTU plus a pause frame.
//
// The model's two "max frame" terms are worst cases of alignment: how far
// into a frame the sender is when the pause takes effect depends on the
// round trip modulo the frame time. The test sweeps the cable over one
// frame time of round trip (6 lengths) and takes the closest agreement;
// at every length the simulated need stays at or below the figure.
func TestHeadroomBelowNeedDrops(t *testing.T) {
	f := parse(t, minimalIntent)
	frame := f.Policy.RoCEPathMTU + roceHeaders // the largest frame the run sends, without preamble and gap
	tol := int64(frame + pauseWire)
	best := int64(math.MaxInt64)
	for i := range 6 {
		cable := 100 + float64(i)*33.4/6
		sc, err := ParseScenarioYAML("hr.yaml", []byte(hrScenario))
		if err != nil {
			t.Fatal(err)
		}
		star := Star(f, 8, StarOptions{Cable: cable})
		drops := func(h int64) int64 {
			r := runSc(t, star, sc, StarOptions{}, Options{Duration: 40 * time.Microsecond, NoECN: true, XOFF: 32 << 10, Headroom: h, Samples: 20})
			if r.Totals(true).PauseSent == 0 {
				t.Fatal("no pause: the run does not reach XOFF")
			}
			return r.Totals(true).Drops
		}
		ieee := intent.HeadroomIEEE(intent.HeadroomInput{Speed: 100e9, CableMeters: cable, MTU: frame}).Bytes
		if d := drops(ieee / 2); d == 0 {
			t.Fatalf("cable %gm: headroom %d (half the IEEE figure %d): no drops", cable, ieee/2, ieee)
		}
		lo, hi := ieee-3*int64(frame), ieee+int64(frame) // drops at lo, none at hi
		if drops(lo) == 0 || drops(hi) != 0 {
			t.Fatalf("cable %gm: the need is outside [IEEE - 3 frames, IEEE + a frame] = [%d, %d]", cable, lo, hi)
		}
		for hi-lo > 32 {
			mid := (lo + hi) / 2
			if drops(mid) == 0 {
				hi = mid
			} else {
				lo = mid
			}
		}
		t.Logf("cable %.1fm: smallest zero-drop headroom %d B, IEEE 802.1Qbb %d B, difference %d B", cable, hi, ieee, ieee-hi)
		if hi > ieee+32 {
			t.Errorf("cable %gm: the simulation needs %d, more than the IEEE figure %d", cable, hi, ieee)
		}
		best = min(best, ieee-hi)
		if req := portfacts.PortOf(star, &star.Switches[0], star.Switches[0].Ports[0]).Headroom.Programmed; req < hi {
			t.Errorf("cable %gm: compiled headroom %d is below the simulated need %d", cable, req, hi)
		}
	}
	if best > tol {
		t.Errorf("closest agreement %d B: more than one MTU plus a pause frame (%d B)", best, tol)
	}
}

// hrScenario: h8 fills the receiver h7, which never drains, until its NIC
// pauses the switch; then h1..h6 start into the blocked egress, 47 ns apart
// so that their frames meet the pause at different points of a frame (the
// model's worst case is a whole frame at each end).
const hrScenario = `flows:
  - {from: h8, to: h7}
  - {from: h1, to: h7, start: 20us}
  - {from: h2, to: h7, start: 20.047us}
  - {from: h3, to: h7, start: 20.094us}
  - {from: h4, to: h7, start: 20.141us}
  - {from: h5, to: h7, start: 20.188us}
  - {from: h6, to: h7, start: 20.235us}
slowReceivers: {h7: 0%}
`

// TestECNOffPFCTakesOver: the same incast without ECN marks nothing and
// pauses more.
func TestECNOffPFCTakesOver(t *testing.T) {
	f := parse(t, paperIntent)
	p := PaperParams()
	on := run(t, f, "incast:4:1", StarOptions{}, Options{Duration: 500 * time.Microsecond, DCQCN: &p, XOFF: 64 << 10})
	off := run(t, f, "incast:4:1", StarOptions{}, Options{Duration: 500 * time.Microsecond, DCQCN: &p, XOFF: 64 << 10, NoECN: true})
	a, b := on.Totals(true), off.Totals(true)
	t.Logf("ECN on: marks %d paused %v; off: marks %d paused %v", a.ECNMarks, dur(a.PausedTime), b.ECNMarks, dur(b.PausedTime))
	if a.ECNMarks == 0 || b.ECNMarks != 0 {
		t.Errorf("marks: on %d (want > 0), off %d (want 0)", a.ECNMarks, b.ECNMarks)
	}
	if b.PausedTime <= a.PausedTime || b.Drops != 0 {
		t.Errorf("ECN off: paused %v (on: %v), drops %d: PFC did not take over", dur(b.PausedTime), dur(a.PausedTime), b.Drops)
	}
}

const paperIntent = `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: t}
policy:
  preset: roce-lossless
  classes:
    - name: roce
      ecn: {min: 5KB, max: 200KB, probability: 1%}
`

// TestDCQCNConverges: 2:1 and 16:1 incasts with the DCQCN paper's
// parameters and thresholds reach a fair share (Jain > 0.99 over the second
// third of the run) and the bottleneck queue settles between Kmin and Kmax.
func TestDCQCNConverges(t *testing.T) {
	f := parse(t, paperIntent)
	p := PaperParams()
	for _, tc := range []struct {
		n int
		d time.Duration
	}{{2, 2 * time.Millisecond}, {16, 12 * time.Millisecond}} {
		n := tc.n
		r := run(t, f, "incast:"+itoa(n)+":1", StarOptions{}, Options{Duration: tc.d, DCQCN: &p, XOFF: 128 << 10, Samples: 240})
		half := len(r.Times) * 2 / 3
		var good []float64
		for _, g := range r.Goodputs {
			var s float64
			for _, v := range g.Values[half:] {
				s += v
			}
			good = append(good, s)
		}
		j := jain(good)
		var qs float64
		q := r.Queues[0].Values[half:]
		for _, v := range q {
			qs += v
		}
		mean := qs / float64(len(q))
		t.Logf("%d:1: Jain %.4f over the last third, mean queue %.0f B (Kmin 5000, Kmax 200000), marks %d, paused %v",
			n, j, mean, r.Totals(true).ECNMarks, dur(r.Totals(true).PausedTime))
		if j < 0.99 || math.IsNaN(j) {
			t.Errorf("%d:1: Jain %.4f < 0.99", n, j)
		}
		if mean < 5000 || mean > 200000 {
			t.Errorf("%d:1: mean queue %.0f outside [Kmin, Kmax]", n, mean)
		}
	}
}

// TestHeadroomEachModel runs the worst case (hrScenario, 100 m of cable,
// the port MTU 9216 the models assume) with each model's figure as the
// headroom. The required figure (the largest) never drops; the others are
// logged for the README (a model without a PHY delay term can fall short
// of a simulation that has one).
func TestHeadroomEachModel(t *testing.T) {
	f := parse(t, minimalIntent)
	star := Star(f, 8, StarOptions{Cable: 100})
	h := portfacts.PortOf(star, &star.Switches[0], star.Switches[0].Ports[0]).Headroom
	models, req := h.Models, h.Required
	for _, m := range append(models, intent.HeadroomResult{Model: "required (max)", Bytes: req}) {
		sc, err := ParseScenarioYAML("hr.yaml", []byte(hrScenario))
		if err != nil {
			t.Fatal(err)
		}
		r := runSc(t, star, sc, StarOptions{}, Options{Duration: 40 * time.Microsecond, NoECN: true, XOFF: 32 << 10, Headroom: m.Bytes})
		d := r.Totals(true).Drops
		t.Logf("%-16s %6d B: %d drops", m.Model, m.Bytes, d)
		if m.Bytes == req && d != 0 {
			t.Errorf("the required headroom %d drops %d frames", req, d)
		}
	}
}
