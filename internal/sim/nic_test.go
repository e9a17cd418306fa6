package sim

import (
	"testing"
	"time"

	"github.com/fabricctl/fabricctl/intent/portfacts"
)

// TestNICPauseModel (issue 27 item 5): a ConnectX NIC pauses by its own
// model (mlx5 calculate_xoff: the headroom it programs counts on its link
// partner stopping within 301 B per Gb/s plus the cable), so a receiver
// that drains nothing holds the line whatever the switch's headroom:
// `simulate -f examples/minimal.yaml --scenario slow-receiver:0 --no-ecn`
// reported LOSSLESS BROKEN at 3 m / 100G when the simulator timed the
// NIC's link with IEEE's interface delays (59,562 B needed, 55,815 B
// programmed). A NIC whose driver was given a shorter cable than its link
// has (the intent gives the NIC none: mlx5 keeps 7 m) drops, as check's
// FC141 warns.
func TestNICPauseModel(t *testing.T) {
	f := parse(t, minimalIntent)
	for _, tc := range []struct {
		name      string
		cable     float64
		speed     int64
		nicCable  bool // the intent gives the NIC its cable (host plan writes it to the driver)
		headroom  int64
		wantDrops bool
	}{
		{"100G 3m (README)", 3, 100e9, true, 0, false},
		{"100G 3m, --headroom 200KB", 3, 100e9, true, 200_000, false},
		{"400G 3m", 3, 400e9, true, 0, false},
		{"25G 100m", 100, 25e9, true, 0, false},
		{"100G 300m", 300, 100e9, true, 0, false},
		{"800G 300m", 300, 800e9, true, 0, false},
		{"100G 300m, driver left at 7m", 300, 100e9, false, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			star := Star(f, 5, StarOptions{Speed: tc.speed, Cable: tc.cable})
			for i := range star.Hosts {
				if !tc.nicCable {
					star.Hosts[i].NICs[0].CableMeters = 0
				}
			}
			nf := portfacts.NICOf(star, &star.Hosts[4], star.Hosts[4].NICs[0])
			if (nf.Headroom < nf.Needed) != tc.wantDrops {
				t.Fatalf("NIC headroom %d B, link needs %d B by the NIC's model: not the case this row is about", nf.Headroom, nf.Needed)
			}
			r := run(t, star, "slow-receiver:0", StarOptions{}, Options{Duration: 300 * time.Microsecond, NoECN: true, Headroom: tc.headroom})
			drops := r.Totals(true).Drops
			if (drops > 0) != tc.wantDrops {
				t.Errorf("lossless drops %d, want drops: %v (NIC headroom %d B, needed %d B)", drops, tc.wantDrops, nf.Headroom, nf.Needed)
			}
		})
	}
}
