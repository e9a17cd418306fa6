// What the hosts need that check can know from the intent: the NIC's
// lossless receive buffer minimum (FC129) and the RoCE mode DSCP needs
// (FC130).

package check

import (
	"fmt"
	"strings"

	"github.com/fabricctl/fabricctl/hostdrv"
	"github.com/fabricctl/fabricctl/intent"
)

// FC129: a lossless receive buffer policy.hostBuffers sizes below the
// minimum the NIC driver takes. The minimum is host plan's own
// (hostdrv.FreshLosslessMinimum: mlx5's calculate_xoff + max_mtu + cell on
// a fresh mlx5_core NIC, as `host plan --assume fresh` holds it), computed
// for each RoCE NIC whose RDMA device is an mlx5 one (or unnamed: host plan
// --assume fresh takes it for mlx5_core too); other drivers check no
// minimum. A size left to the driver (none written) is not checked: the
// NIC's own size then decides.
func (c *checker) hostBufferMinimum() {
	hb := c.f.Policy.HostBuffer
	if hb == nil {
		return
	}
	type short struct {
		hosts []string
		nics  int
		worst hostdrv.LosslessMinimum
		where string // host:interface of the worst
	}
	var by [8]*short
	for i := range c.f.Hosts {
		h := &c.f.Hosts[i]
		counted := [8]bool{}
		for _, nic := range h.NICs {
			if nic.RDMADevice != "" && !strings.HasPrefix(nic.RDMADevice, "mlx5") {
				continue
			}
			m, ok := hostdrv.FreshLosslessMinimum(c.f, h, c.linkedNIC(h, nic))
			if !ok {
				return
			}
			for _, b := range m.Lossless {
				if sz := hb.Sizes[b]; sz <= 0 || uint64(sz) >= m.Min {
					continue
				}
				s := by[b]
				if s == nil {
					s = &short{}
					by[b] = s
				}
				if !counted[b] {
					counted[b] = true
					s.hosts = append(s.hosts, h.Name)
				}
				s.nics++
				if m.Min > s.worst.Min {
					s.worst, s.where = m, h.Name+":"+nic.Interface
				}
			}
		}
	}
	for b, s := range by {
		if s == nil {
			continue
		}
		path := fmt.Sprintf("policy.hostBuffers[buffer=%d].size", b)
		want := (int64(s.worst.Min) + 999) / 1000 * 1000
		c.report(Error, pos(hb.BufferPos[b], hb.Pos, c.f.Policy.Pos), path,
			fmt.Sprintf("set size: %s on buffer %d (the largest minimum, rounded up to 1 KB)", sizeText(want), b),
			"lossless receive buffer %d of %s is below mlx5's minimum of %s on %d %s (%s; %d %s), which the driver refuses with ENOMEM and host plan --assume fresh refuses too; the largest is %s's: xoff %s + max_mtu + cell (port_buffer.c calculate_xoff at %s)",
			b, bytesStr(hb.Sizes[b]), bytesStr(int64(s.worst.Min)), len(s.hosts), plural(len(s.hosts), "host", "hosts"), names(s.hosts, 5),
			s.nics, plural(s.nics, "NIC", "NICs"), s.where, bytesStr(int64(s.worst.Headroom.Xoff())), s.worst.Inputs).
			with(setSize(path, want))
	}
}

// linkedNIC returns nic with the speed and cable it lacks taken from the
// switch port it is cabled to, as host plan takes them (hostdrv's
// withLink), from the links resolved once.
func (c *checker) linkedNIC(h *intent.Host, nic intent.NIC) intent.NIC {
	if nic.Speed > 0 && nic.CableMeters > 0 {
		return nic
	}
	if c.nicPeers == nil {
		c.nicPeers = map[intent.Endpoint]*intent.Port{}
		for i, l := range c.f.Links {
			for j, e := range []intent.Endpoint{l.A, l.B} {
				if o := c.ends[i][1-j]; c.ends[i][j].kind == endHost && o.kind == endSwitch && o.port != nil {
					if _, dup := c.nicPeers[e]; !dup {
						c.nicPeers[e] = o.port
					}
				}
			}
		}
	}
	if p := c.nicPeers[intent.Endpoint{Node: h.Name, Port: nic.Interface}]; p != nil {
		if nic.CableMeters <= 0 {
			nic.CableMeters = p.CableMeters
		}
		if nic.Speed <= 0 {
			nic.Speed = p.Speed
		}
	}
	return nic
}

// FC130: RDMA-CM's default mode IB/RoCE v1 with DSCP classes. RoCE v1
// (IBTA Annex A16) is an Ethernet frame of EtherType 0x8915 carrying the
// IB GRH, with no IP header; RoCE v2 (Annex A17) is UDP/IP to port 4791.
// The kernel names the two GID types "IB/RoCE v1" and "RoCE v2"
// (drivers/infiniband/core/cache.c gid_type_str), the strings rdma_cm's
// configfs default_roce_mode takes. A v1 connection has no DSCP and no
// ECN field, so neither the DSCP classes nor ECN/DCQCN apply to it.
func (c *checker) roceMode() {
	p := &c.f.Policy
	if p.RoCE.Mode != "IB/RoCE v1" {
		return
	}
	var classes []string
	for i := range p.Classes {
		if cl := &p.Classes[i]; len(cl.DSCP) > 0 {
			classes = append(classes, fmt.Sprintf("%s %s", cl.Name, ints(cl.DSCP)))
		}
	}
	if len(classes) == 0 {
		return
	}
	on := "every host"
	if n := len(c.f.Hosts); n > 0 {
		nics := 0
		var hs []string
		for i := range c.f.Hosts {
			nics += len(c.f.Hosts[i].NICs)
			hs = append(hs, c.f.Hosts[i].Name)
		}
		on = fmt.Sprintf("%d %s (%s; %d %s)", n, plural(n, "host", "hosts"), names(hs, 5), nics, plural(nics, "NIC", "NICs"))
	}
	ecn := ""
	if len(c.lossless) > 0 {
		ecn = ", and no ECN marking reaches DCQCN"
	}
	c.report(Warning, pos(p.RoCE.Pos, p.Pos), "policy.roce.mode",
		"set mode: RoCE v2 (UDP/IP, IBTA Annex A17), which the DSCP classes classify",
		"RDMA-CM mode IB/RoCE v1 on %s: RoCE v1 frames (EtherType 0x8915, IBTA Annex A16) have no IP header, so no DSCP and no ECN field: the DSCP classes (%s) never see RDMA-CM connections, which the switches classify by VLAN priority or into the default class%s",
		on, strings.Join(classes, "; "), ecn).with(set("policy.roce.mode", "RoCE v2"))
}
