package sim

import (
	"fmt"
)

// PortConfig is the QoS configuration one switch port holds, as a switch
// reports it (internal/applied reads it back over gNMI): it replaces
// what the intent's policy and derived facts say for that port.
//
// Semantics in the run:
//   - Prio[p].PFC is PFC for priority p at the port, both ways as the
//     switches enable it (SONiC's orchagent writes pfc_enable to
//     SAI_PORT_ATTR_PRIORITY_FLOW_CONTROL, which generates and honours
//     pause, unless PORT pfc_asym is on; SR Linux pfc-enable with the
//     mapping profile's pfc-queues and received-pfc-pause-frames).
//     A priority the policy makes lossless that has no PFC at a port never
//     pauses that port's upstream: its ingress priority group fills
//     without a pause and drops (counted at that port) when it is full,
//     at the occupancy where a PFC port would have used up its headroom
//     (XOFF + Headroom). Pause frames it receives for the priority are
//     counted but not obeyed. A priority the policy makes lossy stays
//     lossy (tail drop at the egress queue's limit), and one with PFC on
//     at a port is lossless there.
//   - Prio[p].ECN is WRED-ECN on the port's egress queue p (nil: the
//     queue never marks).
//   - Prio[p].Headroom is the ingress priority group's headroom above
//     XOFF, in bytes as the ASIC occupies them (whole buffer cells).
//   - Prio[p].XOFF is the static XOFF point the switch programs (SR Linux
//     7220 pfc-queue maximum-burst-size), -1 on a shared-buffer switch
//     (SONiC's dynamic threshold, EOS): the run then pauses where the
//     intent's switches[].buffer less the port's headroom leaves it, as
//     portfacts derives it, else at DefaultXOFF. With a buffer, a static
//     point above what the buffer leaves pauses at the buffer's.
//   - MTU is the port's IP MTU (0: not known, no check): a frame whose
//     IP packet is longer is dropped at the egress port, as an L3 switch
//     drops what exceeds the egress interface's MTU.
type PortConfig struct {
	MTU  int
	Prio [8]PrioConfig
}

// PrioConfig is one priority of a PortConfig.
type PrioConfig struct {
	PFC      bool
	ECN      *ECNConfig
	Headroom int64
	XOFF     int64
}

// ECNConfig is WRED-ECN on an egress queue: no mark below MinBytes,
// probability rising linearly to Probability percent at MaxBytes, every
// frame marked above it.
type ECNConfig struct {
	MinBytes, MaxBytes int64
	Probability        int
}

// ipOverhead is what a RoCEv2 frame's IP packet adds to its RDMA payload:
// IPv4 20 + UDP 8 + BTH 12 + ICRC 4 (roceHeaders without Ethernet and FCS).
const ipOverhead = roceHeaders - 14 - 4

// SetPortConfig makes switch node's port use pc instead of what the
// intent says for it (call before New).
func (n *Network) SetPortConfig(node, port string, pc PortConfig) error {
	nd := n.byName[node]
	if nd == nil {
		return fmt.Errorf("port config %s:%s: no switch %q in the network", node, port, node)
	}
	if nd.host {
		return fmt.Errorf("port config %s:%s: %s is a host; port configuration is a switch's", node, port, node)
	}
	for _, p := range nd.ports {
		if p.name == port {
			c := pc
			p.cfg = &c
			return nil
		}
	}
	return fmt.Errorf("port config %s:%s: switch %s has no linked port %q", node, port, node, port)
}

// PortConfigOf is the configuration a switch port runs with: what
// SetPortConfig gave it, else the intent's (its classes' PFC and ECN, its
// derived headroom and XOFF), ok false for an unknown or host port.
func (n *Network) PortConfigOf(node, port string) (PortConfig, bool) {
	nd := n.byName[node]
	if nd == nil || nd.host {
		return PortConfig{}, false
	}
	for _, p := range nd.ports {
		if p.name != port {
			continue
		}
		if p.cfg != nil {
			return *p.cfg, true
		}
		var pc PortConfig
		for prio, c := range n.classes {
			pc.Prio[prio].XOFF = -1
			if c.lossless {
				pc.Prio[prio] = PrioConfig{PFC: true, Headroom: p.headroom, XOFF: p.factsXOFF}
			}
			if c.ecn {
				pc.Prio[prio].ECN = &ECNConfig{MinBytes: c.kmin, MaxBytes: c.kmax, Probability: int(c.pmax*100 + 0.5)}
			}
		}
		return pc, true
	}
	return PortConfig{}, false
}

// markCfg is WRED-ECN of one egress queue as the run applies it.
type markCfg struct {
	on         bool
	kmin, kmax int64
	pmax       float64
}

// configure sets p's per-priority headroom, XOFF and XON, and its
// marking: from the port's PortConfig when it has one, else the
// fabric-wide figures of New (xoff, headroom) and the classes.
func (s *Sim) configure(p *port, xoff, frame int64) {
	for prio := range 8 {
		c := &s.net.classes[prio]
		p.hrP[prio], p.xoffP[prio], p.xonP[prio] = p.headroom, xoff, max(xoff-2*frame, 0)
		p.pfc[prio] = c.lossless
		p.mk[prio] = markCfg{on: c.ecn, kmin: c.kmin, kmax: c.kmax, pmax: c.pmax}
	}
	if p.cfg == nil || p.n.host {
		return
	}
	var pool int64
	for prio := range 8 {
		pc := p.cfg.Prio[prio]
		p.pfc[prio] = pc.PFC
		p.hrP[prio] = pc.Headroom
		if s.opt.Headroom > 0 {
			p.hrP[prio] = s.opt.Headroom
		}
		if pc.PFC {
			pool += p.hrP[prio]
		}
		p.mk[prio] = markCfg{}
		if e := pc.ECN; e != nil {
			p.mk[prio] = markCfg{on: true, kmin: e.MinBytes, kmax: e.MaxBytes, pmax: float64(e.Probability) / 100}
		}
	}
	if p.buffer > 0 {
		pool = min(pool, p.buffer)
	}
	p.hrPool = pool
	for prio := range 8 {
		x := s.portXOFF(p, p.cfg.Prio[prio].XOFF)
		p.xoffP[prio], p.xonP[prio] = x, max(x-2*frame, 0)
	}
}

// portXOFF is the XOFF point of a configured port's priority whose
// programmed static point is static (-1: none), as xoffOf takes the
// intent's: Options.XOFF, else the static point bounded by what the
// switch's buffer leaves beyond the port's headroom pool, else DefaultXOFF.
func (s *Sim) portXOFF(p *port, static int64) int64 {
	if s.opt.XOFF > 0 {
		return s.opt.XOFF
	}
	shared := int64(-1)
	if p.buffer > 0 {
		shared = max(p.buffer-p.hrPool, 0)
	}
	switch {
	case static >= 0 && shared >= 0:
		return min(static, shared)
	case static >= 0:
		return static
	case shared >= 0:
		return shared
	}
	return DefaultXOFF
}

// losslessAt reports whether frames of prio entering on in are held by
// PFC there.
func (in *port) losslessAt(prio int) bool { return in.pfc[prio] }

// tooBig reports whether pkt's IP packet exceeds out's configured MTU.
func (out *port) tooBig(pkt *packet) bool {
	return out.cfg != nil && out.cfg.MTU > 0 && pkt.kind == pktData && int(pkt.payload)+ipOverhead > out.cfg.MTU
}

// admitNoPFC is the ingress accounting of a frame of a priority the policy
// makes lossless on a port without PFC for it: the priority group fills
// without a pause and the frame is dropped when it does not fit in
// XOFF + headroom, the buffer the group has.
func (s *Sim) admitNoPFC(in *port, prio int, pkt *packet) bool {
	st := &in.pr[prio]
	w := int64(pkt.wire)
	if st.pg+w > in.xoffP[prio]+in.hrP[prio] {
		st.st.Drops++
		return false
	}
	st.pg += w
	pkt.in = in
	return true
}
