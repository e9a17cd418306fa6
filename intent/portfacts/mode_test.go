package portfacts_test

import (
	"testing"
	"time"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/portfacts"
)

// TestModePFCFacts: which priorities a switch port sends and honours
// pause on, and whether headroom and XOFF apply, per policy.mode (one
// home for what every command reads).
func TestModePFCFacts(t *testing.T) {
	for _, tc := range []struct {
		mode           intent.RoCEMode
		lossless       bool // the parsed RoCE class's PFC, as the mode left it
		send, honour   uint8
		losslessFacts  int
		sendPrios      []int
		honourPrioLens int
	}{
		{intent.ModeLossless, true, 1 << 3, 1 << 3, 1, []int{3}, 1},
		{intent.ModePFCOnly, true, 1 << 3, 1 << 3, 1, []int{3}, 1},
		{intent.ModeSemiLossless, true, 0, 1 << 3, 0, nil, 1},
		{intent.ModeLossy, false, 0, 0, 0, nil, 0},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			f, err := intent.Parse("t.yaml", []byte("apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\npolicy: {preset: roce-lossless, mode: "+string(tc.mode)+"}\n"))
			if err != nil {
				t.Fatal(err)
			}
			sw := &intent.Switch{Name: "s", Platform: intent.PlatformSONiC, BufferBytes: 4 << 20}
			pf := portfacts.PortOf(f, sw, intent.Port{Name: "Ethernet0", Speed: 100e9, CableMeters: 3})
			if got := f.Policy.RoCEClass().Lossless; got != tc.lossless {
				t.Errorf("RoCE class lossless = %v, want %v", got, tc.lossless)
			}
			if pf.Switch.PFCSend != tc.send || pf.Switch.PFCHonour != tc.honour {
				t.Errorf("PFC send %08b honour %08b, want %08b and %08b", pf.Switch.PFCSend, pf.Switch.PFCHonour, tc.send, tc.honour)
			}
			if len(pf.Lossless) != tc.losslessFacts {
				t.Errorf("%d lossless facts (headroom/XOFF), want %d", len(pf.Lossless), tc.losslessFacts)
			}
			if got := portfacts.SendPriorities(f); len(got) != len(tc.sendPrios) {
				t.Errorf("SendPriorities = %v, want %v", got, tc.sendPrios)
			}
			if got := portfacts.HonourPriorities(f); len(got) != tc.honourPrioLens {
				t.Errorf("HonourPriorities = %v, want %d priorities", got, tc.honourPrioLens)
			}
		})
	}
}

// The lossy incast's DCQCN reaction takes the hosts' timers from
// policy.dcqcn (what host apply writes), mlx5's defaults where unset.
func TestDCQCNReactionReadsThePolicy(t *testing.T) {
	var pol intent.Policy
	if got, want := portfacts.DCQCNReaction(&pol, 100), time.Microsecond+8*time.Microsecond; got != want {
		t.Errorf("defaults: %v, want %v (1 us round trip over 100 m + 4 + 4 us)", got, want)
	}
	cnp, cut := 50*time.Microsecond, 20*time.Microsecond
	pol.DCQCN = &intent.DCQCN{MinTimeBetweenCNPs: &cnp, RateReduceMonitorPeriod: &cut}
	if got, want := portfacts.DCQCNReaction(&pol, 100), time.Microsecond+70*time.Microsecond; got != want {
		t.Errorf("policy.dcqcn: %v, want %v", got, want)
	}
	in := portfacts.IncastAt(&pol, intent.Port{Speed: 100e9, CableMeters: 100}, 3, 10_000)
	if want := int64(2 * 100e9 / 8 * (71e-6)); in.Burst != want || in.Need != 10_000+want {
		t.Errorf("IncastAt: %+v, want burst %d", in, want)
	}
}
