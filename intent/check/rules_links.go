// The link rules: endpoints, port reuse, speed and cable ends, lossless
// reach and line rate (FC121, FC122, FC124, FC126, FC127).

package check

import (
	"fmt"
	"slices"

	"github.com/fabricctl/fabricctl/hostdrv"
	"github.com/fabricctl/fabricctl/intent"
)

// FC121
func (c *checker) linkEndpoints() {
	for i, l := range c.f.Links {
		if l.A == l.B {
			c.report(Error, l.Pos, linkPath(i), "connect two different endpoints",
				"link connects %s to itself", l.A)
			continue
		}
		for j, e := range []intent.Endpoint{l.A, l.B} {
			path := func() string { return linkPath(i) + "." + "ab"[j:j+1] } // for a finding only
			switch r := c.ends[i][j]; {
			case r.kind == endSwitch && r.port == nil:
				c.report(Error, l.Pos, path(),
					fmt.Sprintf("add port %s to switch %s, or fix the port name", e.Port, r.sw.Name),
					"switch %s has no port %q", r.sw.Name, e.Port)
			case r.kind == endHost && r.nic == nil:
				c.report(Error, l.Pos, path(),
					fmt.Sprintf("add NIC %s to host %s, or fix the interface name", e.Port, r.host.Name),
					"host %s has no NIC %q", r.host.Name, e.Port)
			case r.kind == endNone:
				c.report(Error, l.Pos, path(),
					"add the node to the inventory, or fix the name",
					"link endpoint %s: no switch or host named %q", e, e.Node)
			}
		}
	}
}

// FC122
func (c *checker) linkPortReuse() {
	// Resolved ends are kept by their number (the first link on each,
	// plus one: 0 is none); unresolved ones (FC121) by name.
	ports := make([]int32, c.ports)
	nics := make([]int32, c.nicsAll)
	other := map[intent.Endpoint]int{}
	for i := range c.f.Links {
		l := &c.f.Links[i]
		if l.A == l.B {
			continue // FC121
		}
		for j := range 2 {
			e := l.A
			if j == 1 {
				e = l.B
			}
			r := c.ends[i][j]
			var (
				prev int
				seen bool
			)
			switch {
			case r.port != nil:
				if seen = ports[r.ord] > 0; seen {
					prev = int(ports[r.ord] - 1)
				} else {
					ports[r.ord] = int32(i + 1)
				}
			case r.nic != nil:
				if seen = nics[r.ord] > 0; seen {
					prev = int(nics[r.ord] - 1)
				} else {
					nics[r.ord] = int32(i + 1)
				}
			default:
				if prev, seen = other[e]; !seen {
					other[e] = i
				}
			}
			if seen {
				c.report(Error, l.Pos, linkPath(i)+"."+"ab"[j:j+1],
					"a port takes one cable: remove one of the links or fix the port name",
					"%s is already used by %s (%s)", e, linkPath(prev), c.f.Links[prev].Pos)
			}
		}
	}
}

// speedCable is the speed and cable length a resolved endpoint declares (0 = not given).
func (e end) speedCable() (speed int64, cable float64, ok bool) {
	switch {
	case e.port != nil:
		return e.port.Speed, e.port.CableMeters, true
	case e.nic != nil:
		return e.nic.Speed, e.nic.CableMeters, true
	}
	return 0, 0, false
}

// FC124
func (c *checker) linkEnds() {
	for i := range c.f.Links {
		l := &c.f.Links[i]
		sa, ca, oka := c.ends[i][0].speedCable()
		sb, cb, okb := c.ends[i][1].speedCable()
		if !oka || !okb || l.A == l.B {
			continue // FC121
		}
		// The messages are written without fmt: a generated inventory
		// can have one per link.
		if sa > 0 && sb > 0 && sa != sb {
			c.reportText(Warning, l.Pos, linkPath(i),
				"give both ends the speed the link really runs at",
				"link "+l.A.Node+":"+l.A.Port+" ("+intent.FormatRate(sa)+") - "+l.B.Node+":"+l.B.Port+" ("+intent.FormatRate(sb)+
					"): the ends disagree on speed, so the link runs at "+intent.FormatRate(min(sa, sb))+" at best and the PFC headroom computed for the faster end is wrong")
		}
		if ca > 0 && cb > 0 && ca != cb {
			c.reportText(Warning, l.Pos, linkPath(i),
				"give both ends the length of the cable between them",
				"link "+l.A.Node+":"+l.A.Port+" ("+trimFloat(ca)+" m) - "+l.B.Node+":"+l.B.Port+" ("+trimFloat(cb)+
					" m): one cable, two lengths; PFC headroom grows with the cable, so the shorter figure under-reserves")
		}
	}
}

// FC126
func (c *checker) losslessReached() {
	p := &c.f.Policy
	reached := map[int]bool{}
	for _, prio := range p.DSCPToPriority() {
		reached[prio] = true
	}
	for _, cl := range c.lossless {
		if reached[cl.Priority] || cl.CNP {
			continue // a lossless CNP class is FC107's
		}
		path := classPath(cl) + ".dscp"
		why := "it lists no DSCP"
		if len(cl.DSCP) > 0 {
			why = fmt.Sprintf("its DSCPs %s are claimed by another class", ints(cl.DSCP))
		}
		x := c.report(Error, pos(cl.Pos, p.Pos), path,
			fmt.Sprintf("list the DSCP RDMA traffic is sent with in class %s (dscp: [26] in the preset, with roce.tos 106)", cl.Name),
			"lossless class %s (priority %d) is reached by no DSCP (%s): no packet is ever classified into it, so PFC protects nothing and RDMA traffic lands in a lossy queue", cl.Name, cl.Priority, why)
		// The hosts' RDMA DSCP, when no other class lists it, is the one
		// to list: a person decides otherwise.
		if d := p.RoCE.ToS >> 2; p.RoCE.ToS >= 0 && p.RoCE.ToS < 256 && c.dscpOwner(d) == nil {
			x.Fix = fmt.Sprintf("list DSCP %d, which the hosts send RDMA traffic with (roce.tos %d), in class %s", d, p.RoCE.ToS, cl.Name)
			x.with(set(path, intList(append(slices.Clone(cl.DSCP), d))))
		}
	}
}

// minLineRate is the slowest speed a RoCE switch port or NIC is taken to
// run at; anything below is read as a unit typo (400M for 400G).
const minLineRate = 1e9

// FC127
func (c *checker) lineRate() {
	for i := range c.f.Switches {
		sw := &c.f.Switches[i]
		var slow []*intent.Port
		for j := range sw.Ports {
			if p := &sw.Ports[j]; p.Speed > 0 && p.Speed < minLineRate {
				slow = append(slow, p)
			}
		}
		if len(slow) == 0 {
			continue
		}
		p := slow[0]
		ports := "port " + p.Name
		if len(slow) > 1 {
			ports = fmt.Sprintf("%d ports %s..%s", len(slow), p.Name, slow[len(slow)-1].Name)
		}
		var edits []Edit
		over := ""
		for _, q := range slow {
			edits = append(edits, set(portPath(sw, q)+".speed", didYouMean(q.Speed)))
			if prof, ok := c.skuProfile(sw); ok && prof.SKU.MaxSpeedGbps > 0 && q.Speed*1000 > int64(prof.SKU.MaxSpeedGbps)*1e9 {
				over = fmt.Sprintf(" (FC131 then warns: %s's ports run at most %dG; is that the speed meant?)", prof.SKU.Name, prof.SKU.MaxSpeedGbps)
			}
		}
		c.report(Error, pos(p.Pos, sw.Pos), portPath(sw, p)+".speed",
			fmt.Sprintf("write the speed with G: speed: %s%s", didYouMean(p.Speed), over),
			"switch %s, %s: speed %s is %s, below 1G: too slow for RoCE and surely a unit typo; did you mean %s?", sw.Name, ports, intent.FormatRate(p.Speed), spelledRate(p.Speed), didYouMean(p.Speed)).with(edits...)
	}
	for i := range c.f.Hosts {
		h := &c.f.Hosts[i]
		for j := range h.NICs {
			n := &h.NICs[j]
			if n.Speed <= 0 || n.Speed >= minLineRate {
				continue
			}
			fix := fmt.Sprintf("write the speed with G: speed: %s", didYouMean(n.Speed))
			edits := []Edit{set(fmt.Sprintf("inventory.hosts[%s].nics[%s].speed", h.Name, n.Interface), didYouMean(n.Speed))}
			// At the speed meant, the NIC's lossless buffers need more
			// (FC129): the fix raises them with it.
			if hb := c.f.Policy.HostBuffer; hb != nil {
				meant := *n
				meant.Speed = n.Speed * 1000
				if m, ok := hostdrv.FreshLosslessMinimum(c.f, h, c.linkedNIC(h, meant)); ok {
					for _, b := range m.Lossless {
						if sz := hb.Sizes[b]; sz > 0 && uint64(sz) < m.Min {
							want := (int64(m.Min) + 999) / 1000 * 1000
							fix += fmt.Sprintf(", and size: %s on host buffer %d (FC129: mlx5's minimum at that speed)", sizeText(want), b)
							edits = append(edits, setSize(fmt.Sprintf("policy.hostBuffers[buffer=%d].size", b), want))
						}
					}
				}
			}
			c.report(Error, pos(n.Pos, h.Pos), fmt.Sprintf("inventory.hosts[%s].nics[%s].speed", h.Name, n.Interface), fix,
				"host %s, NIC %s: speed %s is %s, below 1G: too slow for RoCE and surely a unit typo; did you mean %s?", h.Name, n.Interface, intent.FormatRate(n.Speed), spelledRate(n.Speed), didYouMean(n.Speed)).
				with(edits...)
		}
	}
}

// spelledRate writes a rate below 1G in full: 400 Mb/s.
func spelledRate(r int64) string {
	switch {
	case r >= 1e6:
		return trimFloat(float64(r)/1e6) + " Mb/s"
	case r >= 1e3:
		return trimFloat(float64(r)/1e3) + " kb/s"
	}
	return fmt.Sprintf("%d b/s", r)
}

// didYouMean reads a rate below 1G as the same number of Gb/s: 400M -> 400G.
func didYouMean(r int64) string {
	switch {
	case r >= 1e6:
		return intent.FormatRate(r * 1000)
	case r >= 1e3:
		return intent.FormatRate(r * 1e6)
	}
	return intent.FormatRate(r * 1e9)
}
