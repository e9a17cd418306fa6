// The MTU rules: link MTU, the RoCE path MTU and each platform's MTU range
// (FC117, FC118, FC125).

package check

import (
	"fmt"
	"slices"

	"github.com/fabricctl/fabricctl/intent"
)

// FC117
func (c *checker) linkMTU() {
	p := &c.f.Policy
	if p.HostMTU > 0 && p.MTU > 0 && p.HostMTU > p.MTU {
		c.report(Error, pos(p.Pos), "policy.hostMTU",
			fmt.Sprintf("set hostMTU to at most %d (9000 with a 9216 switch MTU is usual)", p.MTU),
			"host MTU %d is above the switch MTU %d: the switches drop the hosts' largest frames", p.HostMTU, p.MTU)
	}
	for i, l := range c.f.Links {
		a, b := c.ends[i][0], c.ends[i][1]
		switch {
		case a.kind == endSwitch && b.kind == endSwitch && a.port != nil && b.port != nil:
			if ma, mb := c.f.PortMTU(*a.port), c.f.PortMTU(*b.port); ma != mb {
				c.report(Error, l.Pos, linkPath(i),
					"set the same MTU on both ports",
					"MTU differs across link %s (%d) - %s (%d): frames above %d are dropped one way", l.A, ma, l.B, mb, min(ma, mb))
			}
		case a.kind == endHost && b.kind == endSwitch && b.port != nil:
			c.hostSwitchMTU(i, l, l.A, b.sw, b.port)
		case a.kind == endSwitch && b.kind == endHost && a.port != nil:
			c.hostSwitchMTU(i, l, l.B, a.sw, a.port)
		}
	}
}

func (c *checker) hostSwitchMTU(i int, l intent.Link, h intent.Endpoint, sw *intent.Switch, port *intent.Port) {
	p := &c.f.Policy
	if port.MTU == 0 {
		return // the port uses the policy MTU: reported once above
	}
	if m := c.f.PortMTU(*port); p.HostMTU > m {
		c.report(Error, l.Pos, linkPath(i),
			fmt.Sprintf("raise the MTU of %s:%s to at least %d, or lower hostMTU", sw.Name, port.Name, p.HostMTU),
			"host %s sends frames up to MTU %d but switch port %s:%s has MTU %d", h, p.HostMTU, sw.Name, port.Name, m)
	}
}

// FC118
func (c *checker) rocePathMTU() {
	p := &c.f.Policy
	m := p.RoCEPathMTU
	if m == 0 {
		return
	}
	valid := []int{256, 512, 1024, 2048, 4096}
	if !slices.Contains(valid, m) {
		c.report(Error, pos(p.Pos), "policy.rocePathMTU",
			"use 256, 512, 1024, 2048 or 4096",
			"RoCE path MTU %d is not an InfiniBand MTU (256, 512, 1024, 2048, 4096)", m)
		return
	}
	if p.HostMTU > 0 && m+roceOverhead > p.HostMTU {
		active := 0
		for _, v := range valid {
			if v+roceOverhead <= p.HostMTU {
				active = v
			}
		}
		path := "policy.rocePathMTU"
		if !p.Fields["rocePathMTU"].IsValid() && p.Fields["hostMTU"].IsValid() {
			path = "policy.hostMTU" // the path MTU is the default: what was written is the host MTU
		}
		c.report(Error, pos(p.Pos), path,
			fmt.Sprintf("use rocePathMTU %d, or raise hostMTU to at least %d", active, m+roceOverhead),
			"RoCE path MTU %d needs a host MTU of at least %d (%d + %d B of RoCEv2 headers) but hostMTU is %d: the NIC's active MTU will be %d",
			m, m+roceOverhead, m, roceOverhead, p.HostMTU, active)
	}
}

// FC125
func (c *checker) portMTUPlatform() {
	for i := range c.f.Switches {
		sw := &c.f.Switches[i]
		pi, ok := c.platform(sw)
		if !ok || pi.MTU.IsZero() {
			continue // FC106 reports an unknown platform
		}
		// One finding per switch and out-of-range MTU, ports in port order.
		type span struct {
			first *intent.Port
			last  string
			n     int
		}
		bad := map[int]*span{}
		var order []int
		for j := range sw.Ports {
			p := &sw.Ports[j]
			m := c.f.PortMTU(*p)
			if pi.MTU.Contains(m) {
				continue
			}
			s := bad[m]
			if s == nil {
				s = &span{first: p}
				bad[m] = s
				order = append(order, m)
			}
			s.n++
			s.last = p.Name
		}
		for _, m := range order {
			s := bad[m]
			ports := "port " + s.first.Name
			if s.n > 1 {
				ports = fmt.Sprintf("%d ports %s..%s", s.n, s.first.Name, s.last)
			}
			to, edge := pi.MTU.Max, "above"
			if m < pi.MTU.Min {
				to, edge = pi.MTU.Min, "below"
			}
			c.report(Error, pos(s.first.Pos, sw.Pos), portPath(sw, s.first),
				fmt.Sprintf("set mtu: %d on the %s ports and on their link peers (link MTUs must match, FC117)", to, sw.Platform),
				"switch %s (%s), %s: IP MTU %d is %s the %d-%d that %s accepts, so the switch refuses or lowers it",
				sw.Name, sw.Platform, ports, m, edge, pi.MTU.Min, pi.MTU.Max, sw.Platform)
		}
	}
}
