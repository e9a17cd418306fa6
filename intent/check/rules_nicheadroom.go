// The host NIC headroom rule (FC141): a NIC's receive buffer pauses by its
// driver's own model, with the cable the driver was given.

package check

import (
	"fmt"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/portfacts"
)

// FC141. A ConnectX NIC reserves mlx5's calculate_xoff above each
// lossless buffer's XOFF threshold (portfacts.NIC.Headroom), computed with
// the cable length the driver holds: what host plan writes as the dcbnl
// PFC delay (the NIC's cable), else the driver's 7 m. A link longer than
// that brings more bytes in flight after the NIC's pause than the NIC
// reserved (portfacts.NIC.Needed, the same formula with the link's
// cable): the NIC drops lossless frames, as simulate shows.
func (c *checker) nicHeadroom() {
	if len(c.lossless) == 0 {
		return
	}
	// each NIC's switch port, from the links resolved once
	type peer struct {
		sw   *intent.Switch
		port *intent.Port
	}
	peers := make([]peer, c.nicsAll) // by the NIC's number
	for _, e := range c.ends {
		for k, x := range e {
			if y := e[1-k]; x.kind == endHost && x.nic != nil && y.kind == endSwitch && y.port != nil {
				if peers[x.ord].port == nil {
					peers[x.ord] = peer{y.sw, y.port}
				}
			}
		}
	}
	for i := range c.f.Hosts {
		h := &c.f.Hosts[i]
		for j, nic := range h.NICs {
			var pr peer
			if _, ord := c.nicOrdOf(h.Name, nic.Interface); ord >= 0 {
				pr = peers[ord]
			}
			n := portfacts.NICOn(c.f, h, nic, pr.sw, pr.port)
			if n.Headroom >= n.Needed {
				continue
			}
			path := fmt.Sprintf("inventory.hosts[%s].nics[%s]", h.Name, nic.Interface)
			fix := fmt.Sprintf("set %s.cable: %gm (host plan gives it to the driver as the PFC cable length)", path, n.Cable)
			if n.Cable >= portfacts.MLX5MaxCableM {
				fix = "shorten the link: mlx5 takes cable lengths below 1000 m only"
			}
			x := c.report(Warning, pos(h.NICs[j].Pos, h.Pos), path, fix,
				"host %s %s: mlx5 reserves %s of PFC headroom per lossless buffer, computed for a %d m cable (%s), but its link is %g m (%s): the NIC's own formula needs %s there, so it drops lossless frames before its pause takes effect",
				h.Name, nic.Interface, bytesStr(n.Headroom), n.DriverCable, n.DriverCableSource, n.Cable, cableFrom(n), bytesStr(n.Needed))
			if n.Cable < portfacts.MLX5MaxCableM {
				x.with(set(path+".cable", fmt.Sprintf("%gm", n.Cable)))
			}
		}
	}
}

// cableFrom says where a NIC's link cable comes from.
func cableFrom(n portfacts.NIC) string {
	if n.PeerSwitch != "" && n.CableSource != "the NIC's cable" {
		return fmt.Sprintf("switch %s port %s", n.PeerSwitch, n.PeerPort)
	}
	return n.CableSource
}
