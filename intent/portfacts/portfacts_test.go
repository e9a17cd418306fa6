package portfacts_test

import (
	"testing"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/portfacts"
)

// TestHeadroomProgrammed: for every input, Programmed is the largest
// model rounded up to 1 KiB and Occupied that in whole cells of the
// switch's buffer; asked again, the memo answers the same.
func TestHeadroomProgrammed(t *testing.T) {
	f := &intent.Fabric{Policy: intent.Policy{MTU: 9100, Classes: []intent.Class{{Name: "roce", Priority: 3, Lossless: true}}}}
	sws := []*intent.Switch{{Name: "a", Platform: intent.PlatformSONiC, ASIC: "spectrum2"},
		{Name: "b", Platform: intent.PlatformSRLinux}, {Name: "c", Platform: intent.PlatformEOS, ASIC: "Tomahawk4 "},
		{Name: "d", Platform: "nonesuch"}}
	for range 2 {
		for _, sw := range sws {
			for _, speed := range []int64{25e9, 100e9, 400e9, 800e9} {
				for _, cable := range []float64{1, 3, 100, 300} {
					for _, mtu := range []int{0, 1500} {
						port := intent.Port{Name: "p", Speed: speed, CableMeters: cable, MTU: mtu}
						pf := portfacts.PortOf(f, sw, port)
						_, req := intent.Headroom(pf.Headroom.Input)
						want := (req + 1023) / 1024 * 1024
						if pf.Headroom.Required != req || pf.Headroom.Programmed != want {
							t.Errorf("%s %+v: required %d programmed %d, want %d and %d", sw.Name, port, pf.Headroom.Required, pf.Headroom.Programmed, req, want)
						}
						occ, cell := pf.Headroom.Occupied, pf.Switch.CellBytes
						if occ < want || (cell > 0 && (occ%cell != 0 || occ-want >= cell)) {
							t.Errorf("%s %+v: occupied %d in cells of %d, programmed %d", sw.Name, port, occ, cell, want)
						}
					}
				}
			}
		}
	}
}

// TestIssue27Headroom holds the figures issue 27 found two commands to
// disagree on: each is now one number, the one plan writes.
func TestIssue27Headroom(t *testing.T) {
	// The default policy MTU (intent.DefaultMTU).
	pol := intent.Policy{MTU: 9216, Classes: []intent.Class{{Name: "roce", Priority: 3, Lossless: true}}}
	for _, tc := range []struct {
		name                 string
		sw                   intent.Switch
		port                 intent.Port
		derive               intent.Derive
		programmed, occupied int64
		cellFactor           float64
	}{
		// buffer 200KB on sonic-202411 at 400G/5 m: check said 150,528 B
		// (cell factor 1), plan refused with 219,136 B (the ASIC's 3).
		{"sonic-202411 400G 5m", intent.Switch{Name: "s", Platform: intent.PlatformSONiC, Profile: "sonic-202411"},
			intent.Port{Name: "Ethernet0", Speed: 400e9, CableMeters: 5}, intent.Derive{}, 219_136, 219_168, 3},
		// lab.yaml leaf2 (SONiC, 100G, 3 m): check said 75,776 B, lab's
		// check 113,664 B.
		{"lab leaf2 100G 3m", intent.Switch{Name: "leaf2", Platform: intent.PlatformSONiC},
			intent.Port{Name: "Ethernet0", Speed: 100e9, CableMeters: 3}, intent.Derive{}, 113_664, 113_760, 3},
		// --cell-factor 1 changes it for every command alike.
		{"--cell-factor 1", intent.Switch{Name: "leaf2", Platform: intent.PlatformSONiC},
			intent.Port{Name: "Ethernet0", Speed: 100e9, CableMeters: 3}, intent.Derive{CellFactor: 1}, 75_776, 75_888, 1},
		// asic: spectrum2 (144 B cells, as the profile's implicit
		// Spectrum-2 above): the programmed figure is a multiple of 1
		// KiB, what it occupies a multiple of the cell.
		{"asic spectrum2 cell factor 1", intent.Switch{Name: "s", Platform: intent.PlatformSONiC, Profile: "sonic-202411", ASIC: "spectrum2"},
			intent.Port{Name: "Ethernet0", Speed: 400e9, CableMeters: 5}, intent.Derive{CellFactor: 1}, 150_528, 150_624, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := (&intent.Fabric{Policy: pol}).WithDerive(tc.derive)
			sw := tc.sw
			sw.Ports = []intent.Port{tc.port}
			pf := portfacts.Ports(f, &sw)[0]
			if pf.Headroom.Programmed != tc.programmed || pf.Headroom.Occupied != tc.occupied || pf.Switch.CellFactor != tc.cellFactor {
				t.Errorf("programmed %d, occupied %d, cell factor %g (%s); want %d, %d, %g",
					pf.Headroom.Programmed, pf.Headroom.Occupied, pf.Switch.CellFactor, pf.Switch.CellFactorSource, tc.programmed, tc.occupied, tc.cellFactor)
			}
		})
	}
}

// TestXOFF: SR Linux pauses at the pfc-queue's maximum-burst-size, a
// shared-buffer platform at its buffer less every lossless priority's
// headroom, unknown without a buffer; the smaller bound wins.
func TestXOFF(t *testing.T) {
	ecn := &intent.ECN{MinBytes: 150_000, MaxBytes: 1_500_000, Probability: 10}
	pol := intent.Policy{MTU: 9100, Classes: []intent.Class{{Name: "roce", Priority: 3, Lossless: true, ECN: ecn}, {Name: "other", Priority: 4, Lossless: true}}}
	f := &intent.Fabric{Policy: pol}
	port := intent.Port{Name: "p", Speed: 100e9, CableMeters: 3}
	srl := portfacts.PortOf(f, &intent.Switch{Name: "a", Platform: intent.PlatformSRLinux}, port)
	if got, want := srl.LosslessAt(3).XOFF, portfacts.PFCQueueMBS(&pol.Classes[0], 9100); got != want || want != (1_500_000+9100+18+1023)/1024*1024 {
		t.Errorf("SR Linux XOFF of an ECN class %d, want %d", got, want)
	}
	if got := srl.LosslessAt(4).XOFF; got != portfacts.PFCQueueDefaultMBS {
		t.Errorf("SR Linux XOFF of a class without ECN %d, want the default %d", got, portfacts.PFCQueueDefaultMBS)
	}
	if srl.PlatformMTU != 9114 || srl.IPMTU != 9100 {
		t.Errorf("SR Linux MTU %d (IP %d), want 9114 (9100)", srl.PlatformMTU, srl.IPMTU)
	}
	sonic := portfacts.PortOf(f, &intent.Switch{Name: "b", Platform: intent.PlatformSONiC}, port)
	if x := sonic.LosslessAt(3).XOFF; x != -1 {
		t.Errorf("SONiC without buffer: XOFF %d, want -1", x)
	}
	sonic = portfacts.PortOf(f, &intent.Switch{Name: "b", Platform: intent.PlatformSONiC, BufferBytes: 1_000_000}, port)
	if got, want := sonic.LosslessAt(3).XOFF, 1_000_000-2*sonic.Headroom.Occupied; got != want {
		t.Errorf("SONiC with buffer: XOFF %d, want %d", got, want)
	}
	if sonic.LosslessAt(3).ECN == nil || sonic.LosslessAt(3).ECN.MaxCells != (1_500_000+143)/144 || sonic.LosslessAt(4).ECN != nil {
		t.Errorf("ECN facts %+v %+v", sonic.LosslessAt(3).ECN, sonic.LosslessAt(4).ECN)
	}
}

// TestNIC: a ConnectX NIC's headroom and buffer minimum are mlx5's own
// integer formulas with the cable host plan gives the driver (the NIC's,
// else mlx5's 7 m default); the link's real cable (the switch port's when
// the NIC has none) gives what the link needs.
func TestNIC(t *testing.T) {
	f := &intent.Fabric{Policy: intent.Policy{MTU: 9100, HostMTU: 9000},
		Switches: []intent.Switch{{Name: "leaf1", Platform: intent.PlatformSONiC, Ports: []intent.Port{{Name: "Ethernet0", Speed: 100e9, CableMeters: 100}, {Name: "Ethernet4", Speed: 100e9, CableMeters: 3}}}},
		Hosts:    []intent.Host{{Name: "h1", NICs: []intent.NIC{{Interface: "e0"}, {Interface: "e1", Speed: 100e9, CableMeters: 3}}}},
		Links: []intent.Link{{A: intent.Endpoint{Node: "leaf1", Port: "Ethernet0"}, B: intent.Endpoint{Node: "h1", Port: "e0"}},
			{A: intent.Endpoint{Node: "h1", Port: "e1"}, B: intent.Endpoint{Node: "leaf1", Port: "Ethernet4"}}}}
	nics := portfacts.NICs(f, &f.Hosts[0])
	// e1: 100G, 3 m, MTU 9000: (301 + 216*3/100) * 100000/1000 + 272*9000/100
	// = 30,700 + 24,480; minimum + max_mtu 9978 + cell 128 = 65,286 B
	// (host plan --assume fresh's figure).
	if n := nics[1]; n.Headroom != 55_180 || n.Needed != 55_180 || n.BufferMinimum != 65_286 || n.DriverCable != 3 || n.PeerSwitch != "leaf1" || n.PeerPort != "Ethernet4" {
		t.Errorf("e1: %+v", n)
	}
	// e0: no speed or cable of its own: the switch port's 100G and 100 m;
	// the driver keeps 7 m, short of the link's 100 m.
	n := nics[0]
	if n.Speed != 100e9 || n.Cable != 100 || n.DriverCable != portfacts.MLX5DefaultCableM {
		t.Errorf("e0: speed %d (%s), cable %g (%s), driver cable %d", n.Speed, n.SpeedSource, n.Cable, n.CableSource, n.DriverCable)
	}
	if want := int64((301+216*7/100)*100 + 272*9000/100); n.Headroom != want || n.Needed != int64((301+216)*100+272*9000/100) || n.Headroom >= n.Needed {
		t.Errorf("e0: headroom %d needed %d, want %d below the need", n.Headroom, n.Needed, want)
	}
}
