// The MTU rules: link MTU, the RoCE path MTU and each platform's MTU range
// (FC117, FC118, FC125).

package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/profile"
)

// FC117
func (c *checker) linkMTU() {
	p := &c.f.Policy
	if p.HostMTU > 0 && p.MTU > 0 && p.HostMTU > p.MTU {
		fix, edits := c.hostMTUTo(p.MTU)
		c.report(Error, pos(p.Pos), "policy.hostMTU",
			fmt.Sprintf("set hostMTU to at most %d (9000 with a 9216 switch MTU is usual)%s", p.MTU, fix),
			"host MTU %d is above the switch MTU %d: the switches drop the hosts' largest frames", p.HostMTU, p.MTU).with(edits...)
	}
	for i, l := range c.f.Links {
		a, b := c.ends[i][0], c.ends[i][1]
		switch {
		case a.kind == endSwitch && b.kind == endSwitch && a.port != nil && b.port != nil:
			if ma, mb := c.f.PortMTU(*a.port), c.f.PortMTU(*b.port); ma != mb {
				fix, edits := c.linkMTUFix(a, b)
				c.report(Error, l.Pos, linkPath(i), fix,
					"MTU differs across link %s (%d) - %s (%d): frames above %d are dropped one way", l.A, ma, l.B, mb, min(ma, mb)).with(edits...)
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
		fix := fmt.Sprintf("raise the MTU of %s:%s to at least %d, or lower hostMTU", sw.Name, port.Name, p.HostMTU)
		var edits []Edit
		if c.portTakes(sw, p.HostMTU) {
			edits = []Edit{set(portPath(sw, port)+".mtu", p.HostMTU)}
		} else {
			more, e := c.hostMTUTo(m)
			fix = fmt.Sprintf("lower hostMTU to %d (%s takes no port MTU of %d)%s", m, sw.Platform, p.HostMTU, more)
			edits = e
		}
		c.report(Error, l.Pos, linkPath(i), fix,
			"host %s sends frames up to MTU %d but switch port %s:%s has MTU %d", h, p.HostMTU, sw.Name, port.Name, m).with(edits...)
	}
}

// linkMTUFix is FC117's fix for a switch link whose ends differ: both ends
// the smaller MTU, or the larger where the smaller is below a platform's
// minimum; where neither is taken by both platforms, the MTU nearest the
// smaller that both take.
func (c *checker) linkMTUFix(a, b end) (string, []Edit) {
	ma, mb := c.f.PortMTU(*a.port), c.f.PortMTU(*b.port)
	cands := []int{min(ma, mb), max(ma, mb)}
	lo, hi, known := 0, max(ma, mb), true
	for _, sw := range []*intent.Switch{a.sw, b.sw} {
		if pi, ok := c.platform(sw); ok && !pi.MTU.IsZero() {
			lo, hi = max(lo, pi.MTU.Min), min(hi, pi.MTU.Max)
		} else if !ok {
			known = false
		}
	}
	if known && lo <= hi {
		cands = append(cands, max(lo, min(ma, mb, hi))) // the smaller, brought into both ranges
	}
	for _, m := range cands {
		if !c.portTakes(a.sw, m) || !c.portTakes(b.sw, m) {
			continue
		}
		var edits []Edit
		var on []string
		why := ""
		for _, e := range []end{a, b} {
			if c.f.PortMTU(*e.port) != m {
				edits = append(edits, set(portPath(e.sw, e.port)+".mtu", m))
				on = append(on, e.sw.Name+":"+e.port.Name)
			} else {
				why = fmt.Sprintf(", as on %s:%s", e.sw.Name, e.port.Name)
			}
		}
		if m != ma && m != mb {
			why = fmt.Sprintf(", the nearest both %s and %s take", a.sw.Platform, b.sw.Platform)
		}
		return fmt.Sprintf("set the same MTU on both ports: mtu: %d on %s%s", m, strings.Join(on, " and "), why), edits
	}
	return "set the same MTU on both ports", nil
}

// portTakes reports whether sw's platform takes IP MTU m on a port (an
// unknown platform, or one without a known range, takes any).
func (c *checker) portTakes(sw *intent.Switch, m int) bool {
	pi, ok := c.platform(sw)
	return !ok || pi.MTU.IsZero() || pi.MTU.Contains(m)
}

// hostMTUTo returns the edits that set hostMTU to m and, where the RoCE
// path MTU no longer fits it (FC118), the path MTU too, with words for the
// latter.
func (c *checker) hostMTUTo(m int) (string, []Edit) {
	edits := []Edit{set("policy.hostMTU", m)}
	p := &c.f.Policy
	if p.RoCEPathMTU > 0 && p.RoCEPathMTU+roceOverhead > m {
		if a := activePathMTU(m); a > 0 {
			return fmt.Sprintf(", and rocePathMTU %d to fit it (FC118)", a), append(edits, set("policy.rocePathMTU", a))
		}
	}
	return "", edits
}

// activePathMTU is the largest RoCE path MTU a host MTU carries (0: none).
func activePathMTU(hostMTU int) int {
	active := 0
	for _, v := range []int{256, 512, 1024, 2048, 4096} {
		if v+roceOverhead <= hostMTU {
			active = v
		}
	}
	return active
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
		x := c.report(Error, pos(p.Pos), "policy.rocePathMTU",
			"use 256, 512, 1024, 2048 or 4096",
			"RoCE path MTU %d is not an InfiniBand MTU (256, 512, 1024, 2048, 4096)", m)
		if a := activePathMTU(p.HostMTU); p.HostMTU == 0 || a > 0 {
			if p.HostMTU == 0 {
				a = 4096
			}
			x.Fix = fmt.Sprintf("use 256, 512, 1024, 2048 or 4096 (%d is the largest the host MTU carries)", a)
			x.with(set("policy.rocePathMTU", a))
		}
		return
	}
	if p.HostMTU > 0 && m+roceOverhead > p.HostMTU {
		active := activePathMTU(p.HostMTU)
		path := "policy.rocePathMTU"
		if !p.Fields.Has("rocePathMTU") && p.Fields.Has("hostMTU") {
			path = "policy.hostMTU" // the path MTU is the default: what was written is the host MTU
		}
		x := c.report(Error, pos(p.Pos), path,
			fmt.Sprintf("use rocePathMTU %d, or raise hostMTU to at least %d", active, m+roceOverhead),
			"RoCE path MTU %d needs a host MTU of at least %d (%d + %d B of RoCEv2 headers) but hostMTU is %d: the NIC's active MTU will be %d",
			m, m+roceOverhead, m, roceOverhead, p.HostMTU, active)
		switch {
		case active > 0:
			x.with(set("policy.rocePathMTU", active))
		case p.MTU == 0 || m+roceOverhead <= p.MTU:
			x.Fix = fmt.Sprintf("raise hostMTU to at least %d (no RoCE path MTU fits hostMTU %d)", m+roceOverhead, p.HostMTU)
			x.with(set("policy.hostMTU", m+roceOverhead))
		}
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
			edge := "above"
			if m < pi.MTU.Min {
				edge = "below"
			}
			fix, edits := c.portMTUFix(sw, pi, m)
			c.report(Error, pos(s.first.Pos, sw.Pos), portPath(sw, s.first), fix,
				"switch %s (%s), %s: IP MTU %d is %s the %d-%d that %s accepts, so the switch refuses or lowers it",
				sw.Name, sw.Platform, ports, m, edge, pi.MTU.Min, pi.MTU.Max, sw.Platform).with(edits...)
		}
	}
}

// portMTUFix is FC125's fix for sw's ports at IP MTU m: each port the
// nearest MTU its platform takes that its link peer's platform takes too
// (link MTUs must match, FC117), set on both ends; a host-facing port
// below the host MTU lowers hostMTU with it.
func (c *checker) portMTUFix(sw *intent.Switch, pi PlatformInfo, m int) (string, []Edit) {
	type group struct {
		ports, peers []string
		why          []string
		peerOwn      string // the peers' MTU in their platform's own meaning, where it differs
	}
	byMTU := map[int]*group{}
	var order []int
	var edits []Edit
	hostMTU := c.f.Policy.HostMTU
	for j := range sw.Ports {
		p := &sw.Ports[j]
		if c.f.PortMTU(*p) != m {
			continue
		}
		t := max(pi.MTU.Min, min(m, pi.MTU.Max))
		peer, host := c.peerOf(sw, p)
		var why string
		if peer.kind == endSwitch && peer.port != nil {
			if qi, ok := c.platform(peer.sw); ok && !qi.MTU.IsZero() {
				if t2 := max(qi.MTU.Min, min(t, qi.MTU.Max)); t2 != t {
					t = t2
					why = fmt.Sprintf("%s takes IP MTU %d-%d", peer.sw.Platform, qi.MTU.Min, qi.MTU.Max)
				}
			}
		}
		if !pi.MTU.Contains(t) {
			return fmt.Sprintf("set the ports' mtu within %d-%d on %s and on their link peers (link MTUs must match, FC117)", pi.MTU.Min, pi.MTU.Max, sw.Platform), nil
		}
		g := byMTU[t]
		if g == nil {
			g = &group{}
			byMTU[t] = g
			order = append(order, t)
		}
		g.ports = append(g.ports, p.Name)
		edits = append(edits, set(portPath(sw, p)+".mtu", t))
		if peer.kind == endSwitch && peer.port != nil {
			g.peers = append(g.peers, peer.sw.Name+":"+peer.port.Name)
			if qi, ok := c.platform(peer.sw); ok && g.peerOwn == "" {
				if own := ownMTU(qi, t); own != "" {
					g.peerOwn = strings.Replace(own, " (", " ("+string(peer.sw.Platform)+" ", 1)
				}
			}
			if c.f.PortMTU(*peer.port) != t {
				edits = append(edits, set(portPath(peer.sw, peer.port)+".mtu", t))
			}
			if why != "" && !slices.Contains(g.why, why) {
				g.why = append(g.why, why)
			}
		}
		if host && t < hostMTU {
			hostMTU = t
		}
	}
	slices.Sort(order)
	var parts []string
	for _, t := range order {
		g := byMTU[t]
		part := fmt.Sprintf("mtu: %d%s on %s", t, ownMTU(pi, t), names(g.ports, 4))
		if len(g.peers) > 0 {
			part += fmt.Sprintf(" and on %s %s%s", plural(len(g.peers), "its link peer", "their link peers"), names(g.peers, 4), g.peerOwn)
		}
		if len(g.why) > 0 {
			part += " (" + strings.Join(g.why, "; ") + ")"
		}
		parts = append(parts, part)
	}
	fix := "set " + strings.Join(parts, "; ")
	for _, g := range byMTU {
		if len(g.peers) > 0 {
			fix += " (link MTUs must match, FC117)"
			break
		}
	}
	if hostMTU < c.f.Policy.HostMTU {
		more, e := c.hostMTUTo(hostMTU)
		fix += fmt.Sprintf(", and hostMTU %d%s", hostMTU, more)
		edits = append(edits, e...)
	}
	return fix, edits
}

// ownMTU renders IP MTU m in the platform's own meaning where it differs
// (SR Linux's interface mtu counts the Ethernet header).
func ownMTU(pi PlatformInfo, m int) string {
	if pi.MTUMeaning == profile.MTUL2NoFCS {
		return fmt.Sprintf(" (interface mtu %d)", m+14)
	}
	return ""
}

// peerOf returns the other end of the link on sw's port p, and whether it
// is a host NIC.
func (c *checker) peerOf(sw *intent.Switch, p *intent.Port) (end, bool) {
	o := c.peersOf(sw)[p]
	return o, o.kind == endHost
}

// peersOf returns the other ends of the links on sw's ports, by port (a
// port without a link is not in it).
func (c *checker) peersOf(sw *intent.Switch) map[*intent.Port]end {
	if c.peers == nil {
		// Per switch: 2,000 small maps are looked up faster than one of
		// 60,000 ports.
		c.peers = make(map[*intent.Switch]map[*intent.Port]end, len(c.f.Switches))
		for i := range c.ends {
			for j := range 2 {
				if e := c.ends[i][j]; e.kind == endSwitch && e.port != nil {
					m := c.peers[e.sw]
					if m == nil {
						m = map[*intent.Port]end{}
						c.peers[e.sw] = m
					}
					if _, dup := m[e.port]; !dup { // FC122 reports reuse
						m[e.port] = c.ends[i][1-j]
					}
				}
			}
		}
	}
	return c.peers[sw]
}
