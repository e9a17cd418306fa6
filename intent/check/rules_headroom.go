// The buffer rules: PFC headroom per port, ECN before PFC and whether the
// headroom fits the port buffer (FC111, FC112).

package check

import (
	"fmt"
	"strings"

	"github.com/fabricctl/fabricctl/intent"
)

type headroomKey struct {
	speed      int64
	cable      float64
	mtu        int
	cell       int64
	asic       string
	cellFactor float64
}

type headroomValue struct {
	models []intent.HeadroomResult
	// programmed is what the compilers write per lossless priority
	// (portfacts: the largest model rounded up to 1 KiB); perPrio is
	// what it takes of the buffer: programmed in whole cells.
	programmed, perPrio int64
	cell                int64
}

// portHeadroom returns the headroom of one lossless priority on p, as
// intent/portfacts derives it (the figure plan writes and simulate uses),
// in whole cells of cell bytes; memoised per (speed, cable, MTU, cell,
// ASIC, cell factor): a 64-port leaf usually has one or two.
func (c *checker) portHeadroom(sw *intent.Switch, p *intent.Port, cell int64) (headroomKey, headroomValue) {
	s := c.switchFacts(sw)
	if c.byProfile {
		cell = s.CellBytes // the cell every command counts (a test's Options.Platform gives its own)
	}
	k := headroomKey{p.Speed, p.CableMeters, c.f.PortMTU(*p), cell, s.ASIC, s.CellFactor}
	if c.lastHeadroom != nil && c.lastHeadroom.k == k { // the port before's, mostly
		return k, c.lastHeadroom.v
	}
	if v, ok := c.headroom[k]; ok {
		c.lastHeadroom = &headroomEntry{k, v}
		return k, v
	}
	h := s.Port(c.f, *p).Headroom
	v := headroomValue{models: h.Models, programmed: h.Programmed, perPrio: h.Programmed, cell: cell}
	if cell > 0 && v.perPrio%cell != 0 {
		v.perPrio += cell - v.perPrio%cell
	}
	c.headroom[k] = v
	c.lastHeadroom = &headroomEntry{k, v}
	return k, v
}

// sameHeadroom reports whether port p of a switch has the headroom of q,
// the port before on it (nil: none): the same speed, cable and MTU are
// the same key of portHeadroom, and a switch's ports mostly share them.
func sameHeadroom(p, q *intent.Port) bool {
	return q != nil && p.Speed == q.Speed && p.CableMeters == q.CableMeters && p.MTU == q.MTU
}

// headroomEntry is one of portHeadroom's answers.
type headroomEntry struct {
	k headroomKey
	v headroomValue
}

func (k headroomKey) String() string {
	return fmt.Sprintf("%s, %s m, MTU %d", intent.FormatRate(k.speed), trimFloat(k.cable), k.mtu)
}

func (v headroomValue) breakdown() string {
	s := make([]string, len(v.models))
	for i, m := range v.models {
		s[i] = fmt.Sprintf("%s %s", modelShort(m.Model), bytesStr(m.Bytes))
	}
	out := strings.Join(s, ", ") + fmt.Sprintf("; the largest rounded up to 1 KiB is programmed: %s", bytesStr(v.programmed))
	if v.perPrio != v.programmed {
		out += fmt.Sprintf(", %s in whole %d B buffer cells", bytesStr(v.perPrio), v.cell)
	}
	return out
}

func modelShort(m intent.HeadroomModel) string {
	switch m {
	case intent.ModelIEEE:
		return "IEEE"
	case intent.ModelSONiC:
		return "SONiC"
	case intent.ModelMLX5:
		return "mlx5"
	}
	return string(m)
}

// worstPort returns the port of sw needing the most headroom (nil when sw
// has no port with a known speed).
func (c *checker) worstPort(sw *intent.Switch, cell int64) (*intent.Port, headroomKey, headroomValue) {
	var (
		wp, prev *intent.Port
		wk, k    headroomKey
		wv, v    headroomValue
	)
	for i := range sw.Ports {
		p := &sw.Ports[i]
		if p.Speed <= 0 {
			continue
		}
		if !sameHeadroom(p, prev) {
			k, v = c.portHeadroom(sw, p, cell)
		}
		prev = p
		if wp == nil || v.perPrio > wv.perPrio {
			wp, wk, wv = p, k, v
		}
	}
	return wp, wk, wv
}

// FC111. Assumption (printed in the message): the egress queue ECN watches
// is at most as deep as one ingress port's priority group (a single
// congested sender — the worst case: with N ingress ports feeding it the
// queue is N times deeper and ECN fires even earlier). The ingress sends
// XOFF at the platform's XOFF point (PlatformInfo.XOFF: SR Linux 7220 at the
// pfc-queue's maximum-burst-size), and in any case when the priority group
// holds the switch's buffer (the ingress buffer one port can use for
// lossless traffic) minus the headroom reserved for all lossless priorities
// of the port.
func (c *checker) ecnBeforePFC() {
	n := int64(len(c.lossless))
	if n == 0 || !c.switchPause() {
		return // no PFC, or switches send no pause (semi-lossless): no XOFF
	}
	for _, cl := range c.lossless {
		if cl.ECN == nil || cl.ECN.MaxBytes <= cl.ECN.MinBytes {
			continue // FC109, FC110
		}
		var (
			bad      []string
			minDepth int64 = -1
			minSw    *intent.Switch
			minHead  int64
			minProg  int64 // the programmed headroom of minHead, before cells
		)
		for i := range c.f.Switches {
			sw := &c.f.Switches[i]
			pi, ok := c.platform(sw)
			if !ok || !pi.PFC || (sw.BufferBytes <= 0 && pi.XOFF == nil) {
				continue
			}
			depth, head, prog := int64(-1), int64(0), int64(0)
			if pi.XOFF != nil {
				depth = pi.XOFF(cl, c.f.Policy.MTU)
			}
			if sw.BufferBytes > 0 {
				wp, _, wv := c.worstPort(sw, pi.BufferCellBytes)
				if wp == nil && depth < 0 {
					continue
				}
				if wp != nil {
					head, prog = wv.perPrio*n, wv.programmed*n
					shared := sw.BufferBytes - head
					if shared <= 0 {
						continue // FC112: the headroom alone does not fit
					}
					if depth < 0 || shared < depth {
						depth = shared
					}
				}
			}
			if cl.ECN.MaxBytes > depth {
				bad = append(bad, sw.Name)
				if minDepth < 0 || depth < minDepth {
					minDepth, minSw, minHead, minProg = depth, sw, head, prog
				}
			}
		}
		if len(bad) == 0 {
			continue
		}
		why := fmt.Sprintf("buffer %s - headroom %s", bytesStr(minSw.BufferBytes), bytesStr(minHead))
		if minProg != minHead {
			why += fmt.Sprintf(" (%s programmed, in whole buffer cells)", bytesStr(minProg))
		}
		if minSw.BufferBytes <= 0 || minSw.BufferBytes-minHead > minDepth {
			why = fmt.Sprintf("the %s ingress queue's XOFF point", minSw.Platform)
		}
		fix, edits := c.lowerKmaxFix(cl, minDepth)
		c.report(Error, c.ecnPos(cl), classPath(cl)+".ecn.max", fix,
			"class %s: ECN Kmax %s is above the %s at which PFC XOFF fires on %s (%s; assuming one ingress port feeds the queue), so PFC pauses before ECN marks; %d %s affected: %s",
			cl.Name, bytesStr(cl.ECN.MaxBytes), bytesStr(minDepth), minSw.Name, why,
			len(bad), plural(len(bad), "switch", "switches"), names(bad, 5)).with(edits...)
	}
}

// FC112
func (c *checker) headroomFits() {
	n := int64(len(c.lossless))
	if n == 0 || !c.switchPause() {
		return // semi-lossless: switches send no pause, so keep no headroom
	}
	type agg struct {
		sw       *intent.Switch
		port     *intent.Port
		ports    int
		lastPort string
		switches []string
	}
	var (
		unknown    = map[headroomKey]*agg{}
		unknownKey []headroomKey
		// the last port's: a switch's ports mostly share one
		lastUnknown    *agg
		lastUnknownKey headroomKey
	)
	for i := range c.f.Switches {
		sw := &c.f.Switches[i]
		pi, ok := c.platform(sw)
		if !ok || !pi.PFC {
			continue // FC106
		}
		over := map[headroomKey]*agg{}
		var overKey []headroomKey
		var prev *intent.Port
		var k headroomKey
		var v headroomValue
		for j := range sw.Ports {
			p := &sw.Ports[j]
			if p.Speed <= 0 {
				continue // FC133: no line rate, no headroom to size
			}
			if !sameHeadroom(p, prev) {
				k, v = c.portHeadroom(sw, p, pi.BufferCellBytes)
			}
			prev = p
			if sw.BufferBytes <= 0 {
				a := lastUnknown
				if a == nil || k != lastUnknownKey { // the port before's, mostly
					a = unknown[k]
				}
				lastUnknown, lastUnknownKey = a, k
				if a == nil {
					a = &agg{sw: sw, port: p}
					unknown[k] = a
					unknownKey = append(unknownKey, k)
					lastUnknown = a
				}
				a.ports++
				if len(a.switches) == 0 || a.switches[len(a.switches)-1] != sw.Name {
					a.switches = append(a.switches, sw.Name)
				}
				continue
			}
			if v.perPrio*n > sw.BufferBytes {
				a := over[k]
				if a == nil {
					a = &agg{sw: sw, port: p}
					over[k] = a
					overKey = append(overKey, k)
				}
				a.ports++
				a.lastPort = p.Name
			}
		}
		for _, k := range overKey {
			a, v := over[k], c.headroom[k]
			span := a.port.Name
			if a.ports > 1 {
				span = fmt.Sprintf("%d ports %s..%s", a.ports, a.port.Name, a.lastPort)
			}
			c.report(Error, pos(a.port.Pos, sw.Pos), portPath(sw, a.port),
				"shorten the cables, lower the MTU, use fewer lossless priorities, or raise buffer if the ASIC really has more",
				"switch %s, %s (%s): PFC headroom %d x %s = %s exceeds the port buffer of %s (per priority: %s)",
				sw.Name, span, k, n, bytesStr(v.perPrio), bytesStr(v.perPrio*n), bytesStr(sw.BufferBytes), v.breakdown())
		}
	}
	for _, k := range unknownKey {
		a, v := unknown[k], c.headroom[k]
		c.report(Info, pos(a.port.Pos, a.sw.Pos), portPath(a.sw, a.port),
			"set buffer on the switches to check headroom (FC112) and ECN-before-PFC (FC111) against the ASIC's buffer",
			"PFC headroom at %s: %s per lossless priority (%s), x %d = %s of buffer per port; %d %s on %d %s (%s) have no buffer, so it is not checked",
			k, bytesStr(v.programmed), v.breakdown(), n, bytesStr(v.perPrio*n),
			a.ports, plural(a.ports, "port", "ports"), len(a.switches), plural(len(a.switches), "switch", "switches"), names(a.switches, 3))
	}
}
