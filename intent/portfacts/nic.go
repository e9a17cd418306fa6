package portfacts

import (
	"math"
	"time"

	"github.com/fabricctl/fabricctl/intent"
)

// mlx5 constants from drivers/net/ethernet/mellanox/mlx5/core: the default
// cable length (MLX5E_DEFAULT_CABLE_LEN, en/port_buffer.h, set by
// mlx5e_dcbnl_initialize), the floor of max_mtu in the headroom check
// (MINIMUM_MAX_MTU, port_buffer.c), the slowest speed calculate_xoff
// assumes (SPEED_40000), the fallback buffer cell (1 <<
// MLX5E_BUFFER_CELL_SHIFT, en_dcbnl.c mlx5e_query_port_buffers_cell_size)
// and the longest cable mlx5e_dcbnl_ieee_setpfc takes as one
// (MLX5E_MAX_CABLE_LENGTH: a PFC delay of 1000 or more is ignored).
const (
	MLX5DefaultCableM = 7
	MLX5MinMaxMTU     = 9216
	MLX5MinSpeedMbps  = 40000
	MLX5CellFallback  = 128
	MLX5MaxCableM     = 1000
	// MLX5FreshMaxMTU is the netdev max_mtu a ConnectX NIC reports after
	// the driver loads, as `host plan --assume fresh` assumes it (firmware
	// dependent, not from the driver source): check and host plan take
	// the same figure for a NIC whose max_mtu is not read yet.
	MLX5FreshMaxMTU = 9978
)

// MLX5 is the input of mlx5's headroom and lossless buffer minimum.
type MLX5 struct {
	SpeedMbps int // port speed, Mb/s (what mlx5e_port_linkspeed returns)
	CableM    int // priv->dcbx.cable_len, metres
	MTU       int // dev->mtu
	MaxMTU    int // netdev max_mtu
	Cell      int // port_buff_cell_sz, bytes
}

// Xoff is mlx5's calculate_xoff (en/port_buffer.c), in the driver's integer
// arithmetic: xoff = (301 + 216 * cable_len / 100) * speed / 1000 +
// 272 * mtu / 100, speed in Mb/s and at least 40000 (the comment above it:
// "xoff = ((301+2.16 * len [m]) * speed [Gbps] + 2.72 MTU [B])"). It is
// the headroom the driver reserves above each lossless buffer's XOFF
// threshold (update_xoff_threshold: xoff threshold = size - xoff).
func (h MLX5) Xoff() uint64 {
	speed := uint64(max(h.SpeedMbps, MLX5MinSpeedMbps))
	return (301+216*uint64(max(h.CableM, 0))/100)*speed/1000 + 272*uint64(max(h.MTU, 0))/100
}

// Min is the smallest size of a lossless buffer mlx5 accepts:
// update_xoff_threshold refuses (ENOMEM) a non-lossy buffer smaller than
// xoff + max_mtu + port_buff_cell_sz, max_mtu being the netdev's max_mtu
// but at least MINIMUM_MAX_MTU (mlx5e_port_manual_buffer_config).
func (h MLX5) Min() uint64 {
	cell := h.Cell
	if cell <= 0 {
		cell = MLX5CellFallback
	}
	return h.Xoff() + uint64(max(h.MaxMTU, MLX5MinMaxMTU)) + uint64(cell)
}

// MLX5PeerBudget is the time calculate_xoff allows the link partner,
// beyond the cable, from the NIC's pause to the last byte it sends: its
// fixed term, 301 B per Gb/s of the link (the speed floored at 40G), at
// the link's rate: 2,408 ns at 40G and above. The cable's term (2.16 B
// per metre per Gb/s, 17.28 ns/m) covers the round trip on the cable
// (about 10 ns/m), and 2.72 MTU the frames in progress at both ends.
func MLX5PeerBudget(speed int64) time.Duration {
	g := float64(speed) / 1e9
	if g <= 0 {
		g = MLX5MinSpeedMbps / 1000
	}
	return time.Duration(math.Round(301 * 8 * max(g, MLX5MinSpeedMbps/1000) / g))
}

// MLX5DriverCable is the cable length host plan gives mlx5 for a NIC
// cable of m metres (ceil; 0 < m < MLX5MaxCableM) and ok; otherwise the
// driver keeps its own (MLX5DefaultCableM after load) and ok is false.
func MLX5DriverCable(m float64) (int, bool) {
	if m <= 0 || m >= MLX5MaxCableM {
		return MLX5DefaultCableM, false
	}
	return int(math.Ceil(m)), true
}

// NIC is the derived facts of one host NIC, as a ConnectX NIC's driver
// (mlx5) computes them from what host plan gives it.
type NIC struct {
	Host, Interface string
	// Speed is the link's (bits/s): the NIC's, else its switch port's (0
	// = unknown: mlx5 then computes with 40G).
	Speed       int64
	SpeedSource string
	// Cable is the link's real cable: the longer of the NIC's and its
	// switch port's.
	Cable       float64
	CableSource string
	// MTU is the host netdev MTU (policy.hostMTU).
	MTU int
	// DriverCable is the cable length mlx5 will hold (what host plan
	// writes as the dcbnl PFC delay, else the driver's default).
	DriverCable       int
	DriverCableSource string
	// Headroom is the xoff headroom mlx5 reserves per lossless buffer
	// (calculate_xoff with DriverCable).
	Headroom int64
	// Needed is calculate_xoff with the link's real cable: what the link
	// needs by the NIC's own model. Headroom < Needed means the driver was
	// told a shorter cable than the link has.
	Needed int64
	// BufferMinimum is the smallest lossless receive buffer mlx5 accepts
	// (MLX5.Min with DriverCable, the host MTU and MLX5FreshMaxMTU): a
	// policy.hostBuffers size below it is refused by the driver, and by
	// host plan before it.
	BufferMinimum int64
	// PeerSwitch and PeerPort name the switch port at the NIC's other
	// end ("" without one).
	PeerSwitch, PeerPort string
}

// NICOf derives the facts of nic on host h, finding its link in f.
func NICOf(f *intent.Fabric, h *intent.Host, nic intent.NIC) NIC {
	sw, p := peerPort(f, h.Name, nic.Interface)
	return NICOn(f, h, nic, sw, p)
}

// NICOn is NICOf with the switch port at the NIC's other end given (sw
// and p nil: none), for a caller that has resolved the links already
// (NICOf looks through every link).
func NICOn(f *intent.Fabric, h *intent.Host, nic intent.NIC, sw *intent.Switch, p *intent.Port) NIC {
	n := NIC{Host: h.Name, Interface: nic.Interface, Speed: nic.Speed, SpeedSource: "the NIC's speed", Cable: nic.CableMeters, CableSource: "the NIC's cable", MTU: f.Policy.HostMTU}
	if sw != nil && p != nil {
		n.PeerSwitch, n.PeerPort = sw.Name, p.Name
		if n.Speed <= 0 && p.Speed > 0 {
			n.Speed, n.SpeedSource = p.Speed, "its switch port's (PeerSwitch, PeerPort)"
		}
		if p.CableMeters > n.Cable {
			// The longer end: a link has one cable (FC124 warns when
			// the ends disagree).
			n.Cable, n.CableSource = p.CableMeters, "its switch port's (PeerSwitch, PeerPort)"
		}
	}
	if n.Speed <= 0 {
		n.SpeedSource = "unknown: mlx5 assumes 40G"
	}
	if n.Cable <= 0 {
		n.CableSource = "unknown"
	}
	var ok bool
	n.DriverCable, ok = MLX5DriverCable(nic.CableMeters)
	n.DriverCableSource = "intent (host plan writes it as the PFC delay)"
	if !ok {
		n.DriverCableSource = "mlx5's default: the intent gives the NIC no cable below 1000 m"
	}
	in := MLX5{SpeedMbps: int(n.Speed / 1_000_000), CableM: n.DriverCable, MTU: n.MTU, MaxMTU: MLX5FreshMaxMTU}
	n.Headroom, n.BufferMinimum = int64(in.Xoff()), int64(in.Min())
	in.CableM = int(math.Ceil(max(n.Cable, 0)))
	n.Needed = int64(in.Xoff())
	return n
}

// NICs derives the facts of each NIC of h, in order.
func NICs(f *intent.Fabric, h *intent.Host) []NIC {
	out := make([]NIC, len(h.NICs))
	for i, nic := range h.NICs {
		out[i] = NICOf(f, h, nic)
	}
	return out
}

// peerPort is the switch port linked to host's iface (nil without one).
func peerPort(f *intent.Fabric, host, iface string) (*intent.Switch, *intent.Port) {
	for _, l := range f.Links {
		a, b := l.A, l.B
		if b.Node == host && b.Port == iface {
			a, b = b, a
		}
		if a.Node != host || a.Port != iface {
			continue
		}
		if sw := f.Switch(b.Node); sw != nil {
			if p := sw.Port(b.Port); p != nil {
				return sw, p
			}
		}
	}
	return nil, nil
}
