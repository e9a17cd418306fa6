// The host NIC headroom rule (FC141): a NIC's receive buffer pauses by its
// driver's own model, with the cable the driver was given.

package check

import (
	"fmt"

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
	for i := range c.f.Hosts {
		h := &c.f.Hosts[i]
		for j, nic := range h.NICs {
			n := portfacts.NICOf(c.f, h, nic)
			if n.Headroom >= n.Needed {
				continue
			}
			path := fmt.Sprintf("inventory.hosts[%s].nics[%s]", h.Name, nic.Interface)
			fix := fmt.Sprintf("set %s.cable: %gm (host plan gives it to the driver as the PFC cable length)", path, n.Cable)
			if n.Cable >= portfacts.MLX5MaxCableM {
				fix = "shorten the link: mlx5 takes cable lengths below 1000 m only"
			}
			c.report(Warning, pos(h.NICs[j].Pos, h.Pos), path, fix,
				"host %s %s: mlx5 reserves %s of PFC headroom per lossless buffer, computed for a %d m cable (%s), but its link is %g m (%s): the NIC's own formula needs %s there, so it drops lossless frames before its pause takes effect",
				h.Name, nic.Interface, bytesStr(n.Headroom), n.DriverCable, n.DriverCableSource, n.Cable, n.CableSource, bytesStr(n.Needed))
		}
	}
}
