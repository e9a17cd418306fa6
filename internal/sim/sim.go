package sim

import (
	"fmt"
	"math"
	"math/rand"
	"time"

	"github.com/fabricctl/fabricctl/intent"
)

// Defaults of Options.
const (
	DefaultDuration = time.Millisecond
	DefaultSeed     = 1
	// DefaultXOFF is the priority-group occupancy at which a switch without
	// a buffer in the intent sends XOFF. Real ASICs derive it from the free
	// shared buffer (SONiC's dynamic_th); this is a static stand-in.
	DefaultXOFF = 256 << 10
	// DefaultLossyLimit is the egress queue depth at which lossy classes tail-drop.
	DefaultLossyLimit = 1 << 20
	DefaultSamples    = 400
)

// Options tune a run. The zero value is the defaults.
type Options struct {
	Duration time.Duration // simulated time
	Seed     int64         // random seed (ECN marking, ECMP hashing); 0 = DefaultSeed
	// Headroom, when > 0, replaces the headroom per lossless priority group of
	// every switch port (what compile programs) by this many bytes.
	Headroom   int64
	XOFF       int64 // 0 = from the switch's buffer, else DefaultXOFF
	LossyLimit int64 // 0 = DefaultLossyLimit
	NoECN      bool  // switches never mark: DCQCN never reacts, PFC alone holds the line
	// MarkOnEnqueue makes WRED/ECN decide when a frame enters the egress
	// queue (on the depth it finds); the default decides when it leaves,
	// on the depth it leaves behind it, which returns the signal a queueing
	// delay sooner. ASICs differ; neither is verified against one here.
	MarkOnEnqueue bool
	DCQCN         *DCQCN
	Samples       int // samples over the run for plots and fairness; 0 = DefaultSamples
	// FlowRates keeps every DCQCN flow's mean current rate over each sample
	// interval in Result.FlowRates (memory grows with flows x samples).
	FlowRates bool
	MaxEvents int64 // stop after this many events (0 = no limit)
}

type classCfg struct {
	used, lossless, strict, ecn bool
	weight                      int
	kmin, kmax                  int64
	pmax                        float64
	name                        string
	pos                         intent.Pos
}

// Sim is one simulation: build it with New, run it with Run.
type Sim struct {
	net     *Network
	opt     Options
	dc      DCQCN
	rng     *rand.Rand
	q       eventQueue
	now     Time
	end     Time
	pool    []*packet
	flows   []*flow
	wd      intent.Watchdog
	every   Time
	samples []sample

	sentB, deliveredB, droppedB, transitB int64
	events                                int64
	deliveredWindow                       int64
	cand                                  *candidate
	keys                                  []trackKey
	pathPorts                             map[*port]bool
	deadlock                              *Deadlock   // the current (or last) episode
	deadlocks                             []*Deadlock // every episode, in order
	wdTriggers                            int64       // watchdog triggers so far
	wall                                  time.Duration
	ran                                   bool
}

type sample struct {
	t      Time
	queue  []int64   // per tracked (port, prio)
	paused []float64 // share of the interval paused, per tracked (port, prio)
	rate   []float64 // per flow: DCQCN current rate, bits/s
	good   []float64 // per flow: goodput over the interval, bits/s
	jain   float64   // fairness of the active flows' goodput over the interval
	// the DCQCN flows' interval-mean current rates (Options.FlowRates)
	rates []float64
}

// New prepares a run of the flows on net.
func New(net *Network, opt Options) *Sim {
	if opt.Duration <= 0 {
		opt.Duration = DefaultDuration
	}
	if opt.Seed == 0 {
		opt.Seed = DefaultSeed
	}
	if opt.LossyLimit <= 0 {
		opt.LossyLimit = DefaultLossyLimit
	}
	if opt.Samples <= 0 {
		opt.Samples = DefaultSamples
	}
	s := &Sim{net: net, opt: opt, dc: MLX5Defaults(), rng: newRand(opt.Seed), wd: net.watchdog}
	if opt.DCQCN != nil {
		s.dc = *opt.DCQCN
	}
	s.end = Time(opt.Duration.Nanoseconds()) * Nanosecond
	s.every = max(s.end/Time(opt.Samples), Nanosecond)
	frame := int64(net.mtuPayload + roceHeaders + wireOverhead)
	nLossless := int64(max(len(net.lossless()), 1))
	for _, p := range net.ports {
		if opt.Headroom > 0 && !p.n.host {
			p.headroom = opt.Headroom
		}
		p.hrPool = p.headroom * nLossless
		if p.buffer > 0 {
			p.hrPool = min(p.hrPool, p.buffer)
		}
		s.configure(p, xoffOf(p, opt, nLossless), frame)
	}
	for _, f := range net.flows {
		f.line = f.path[0].bps
		f.rp = rpState{rc: f.line, rt: f.line}
		s.flows = append(s.flows, f)
	}
	return s
}

// xoffOf is the priority-group occupancy at which p sends XOFF: the port's
// XOFF point as portfacts derives it and check's FC111 reports it (the
// platform's static point, SR Linux 7220's pfc-queue maximum-burst-size,
// or the switch's buffer less the headroom of every lossless priority,
// one ingress port feeding the queue). With Options.Headroom the buffer
// is shared out with that headroom instead. Without either, XOFF is
// DefaultXOFF and the headroom pool is what the priorities need.
// Options.XOFF overrides all.
func xoffOf(p *port, opt Options, nLossless int64) int64 {
	switch {
	case opt.XOFF > 0:
		return opt.XOFF
	case opt.Headroom > 0 && !p.n.host && p.buffer > 0:
		return max(p.buffer-opt.Headroom*nLossless, 0)
	case p.factsXOFF >= 0 && !p.n.host:
		return p.factsXOFF
	case p.buffer > 0:
		return max(p.buffer-p.headroom*nLossless, 0)
	}
	return DefaultXOFF
}

func (s *Sim) at(t Time, e event) {
	e.t = t
	s.q.push(e)
}

func (s *Sim) newPacket() *packet {
	if n := len(s.pool); n > 0 {
		p := s.pool[n-1]
		s.pool = s.pool[:n-1]
		*p = packet{}
		return p
	}
	return &packet{}
}

func (s *Sim) free(p *packet) { s.pool = append(s.pool, p) }

// Run simulates until the configured duration and returns the result.
func (s *Sim) Run() *Result {
	if s.ran {
		panic("sim: Run called twice")
	}
	s.ran = true
	start := time.Now()
	for _, f := range s.flows {
		s.at(f.start, event{kind: evFlowStart, f: f})
	}
	if s.wd.Enabled && s.wd.Poll > 0 {
		s.at(Time(s.wd.Poll.Nanoseconds())*Nanosecond, event{kind: evPoll})
	}
	s.at(s.every, event{kind: evSample})
	for s.q.len() > 0 {
		e := s.q.pop()
		if e.t > s.end {
			break
		}
		s.now = e.t
		s.events++
		s.dispatch(e)
		if s.opt.MaxEvents > 0 && s.events >= s.opt.MaxEvents {
			break
		}
	}
	if s.now < s.end {
		s.now = s.end
	}
	s.wall = time.Since(start)
	return s.result()
}

func (s *Sim) dispatch(e event) {
	switch e.kind {
	case evTxDone:
		e.p.busy = false
		s.tryTx(e.p)
	case evArrive:
		s.arrive(e.p, e.pkt, int(e.prio), uint16(e.gen))
	case evWake:
		if e.p.wakeAt == e.t {
			e.p.wakeAt = 0
		}
		s.tryTx(e.p)
	case evFlowStart:
		f := e.f
		f.active = true
		f.rp.rcT, f.rp.rcFrom, f.rp.rcInt = s.now, s.now, 0
		s.tryTx(f.path[0])
	case evRPTimer:
		f := e.f
		if e.gen != f.rp.timerGen {
			return
		}
		f.rp.tCount++
		s.increase(f, true)
		if f.rp.rc < f.line {
			s.at(s.now+s.dc.TimeReset, event{kind: evRPTimer, f: f, gen: f.rp.timerGen})
		} else {
			f.rp.timerLive = false
		}
	case evPauseRefresh:
		st := &e.p.pr[e.prio]
		if !st.xoffSent {
			st.refreshOn = false
			return
		}
		s.sendPause(e.p, int(e.prio), pauseQuantaMax)
		s.at(s.now+e.p.quantum*pauseQuantaMax/2, event{kind: evPauseRefresh, p: e.p, prio: e.prio})
	case evPoll:
		s.poll()
		s.at(s.now+Time(s.wd.Poll.Nanoseconds())*Nanosecond, event{kind: evPoll})
	case evSample:
		s.sample()
		s.at(s.now+s.every, event{kind: evSample})
	case evDrain:
		s.drain(e.p)
	}
}

func (s *Sim) wake(p *port, t Time) {
	if p.wakeAt != 0 && p.wakeAt <= t && p.wakeAt > s.now {
		return
	}
	p.wakeAt = t
	s.at(t, event{kind: evWake, p: p})
}

// tryTx starts the next frame on p if its transmitter is free.
func (s *Sim) tryTx(p *port) {
	if p.busy || p.down {
		return
	}
	if len(p.ctrl) > 0 {
		c := p.ctrl[0]
		p.ctrl = p.ctrl[1:]
		p.busy = true
		d := p.txTime(pauseWire)
		s.at(s.now+d, event{kind: evTxDone, p: p})
		s.at(s.now+d+p.ctrlDelay, event{kind: evArrive, p: p.peer, prio: c.prio, gen: uint32(c.quanta)})
		return
	}
	if p.n.host {
		s.hostTx(p)
	} else {
		s.switchTx(p)
	}
}

// eligible reports whether queue prio of p may send now; when it is paused,
// until says when the pause ends.
func (s *Sim) eligible(p *port, prio int) (ok bool, until Time) {
	st := &p.pr[prio]
	if !p.paused(prio, s.now) || st.storm && p.wdAction != intent.WatchdogAlert {
		return true, 0
	}
	return false, st.pauseEnd
}

// switchTx is the egress scheduler: strict-priority classes first (highest
// priority first), then deficit weighted round robin over the ETS classes
// with quanta proportional to their weights.
func (s *Sim) switchTx(p *port) {
	wake := Time(math.MaxInt64)
	for prio := 7; prio >= 0; prio-- {
		c := &s.net.classes[prio]
		if !c.strict || p.pr[prio].q.n == 0 {
			continue
		}
		if ok, until := s.eligible(p, prio); ok {
			s.send(p, prio)
			return
		} else {
			wake = min(wake, until)
		}
	}
	var any bool
	for prio := range 8 {
		c := &s.net.classes[prio]
		if c.strict || p.pr[prio].q.n == 0 {
			continue
		}
		if ok, until := s.eligible(p, prio); ok {
			any = true
		} else {
			wake = min(wake, until)
		}
	}
	if any {
		for range 64 * 8 {
			prio := p.rr
			st := &p.pr[prio]
			c := &s.net.classes[prio]
			ok, _ := s.eligible(p, prio)
			if c.strict || st.q.n == 0 || !ok {
				if st.q.n == 0 {
					st.deficit = 0
				}
				p.rr = (p.rr + 1) % 8
				continue
			}
			if st.deficit >= int64(st.q.head.wire) {
				st.deficit -= int64(st.q.head.wire)
				s.send(p, prio)
				return
			}
			st.deficit += int64(max(c.weight, 1)) * 1024
			p.rr = (p.rr + 1) % 8
		}
	}
	if wake != math.MaxInt64 {
		s.wake(p, wake)
	}
}

// send takes the head of queue prio of p onto the wire.
func (s *Sim) send(p *port, prio int) {
	st := &p.pr[prio]
	p.accountQueue(prio, s.now)
	pkt := st.q.pop()
	st.qBytes -= int64(pkt.wire)
	if !p.n.host && !s.opt.MarkOnEnqueue {
		s.mark(st, &p.mk[prio], pkt)
	}
	st.st.TxFrames++
	st.st.TxBytes += int64(pkt.wire)
	if pkt.in != nil {
		s.releasePG(pkt.in, prio, int64(pkt.wire))
		pkt.in = nil
	}
	s.transmit(p, pkt)
}

func (s *Sim) transmit(p *port, pkt *packet) {
	s.transitB += int64(pkt.wire)
	p.busy = true
	d := p.txTime(pkt.wire)
	s.at(s.now+d, event{kind: evTxDone, p: p})
	s.at(s.now+d+p.delay, event{kind: evArrive, p: p.peer, pkt: pkt})
}

// hostTx is the NIC: CNPs first, then the QPs round robin, each paced at
// its DCQCN rate and held by PFC on its priority.
func (s *Sim) hostTx(p *port) {
	// CNPs and ACKs wait in the port's queues and go before new data,
	// highest priority first, each held by PFC on its priority
	wake := Time(math.MaxInt64)
	for prio := 7; prio >= 0; prio-- {
		if p.pr[prio].q.n == 0 {
			continue
		}
		if !p.paused(prio, s.now) {
			s.send(p, prio)
			return
		}
		wake = min(wake, p.pr[prio].pauseEnd)
	}
	n := p.n
	k := len(n.flows)
	for i := range k {
		j := (n.rr + i) % k
		f := n.flows[j]
		if !f.active || f.path[0] != p || f.size > 0 && f.sent >= f.size {
			continue
		}
		if p.paused(f.prio, s.now) {
			wake = min(wake, p.pr[f.prio].pauseEnd)
			continue
		}
		if ns := s.nextSend(f); ns > s.now {
			wake = min(wake, ns)
			continue
		}
		n.rr = (j + 1) % k
		pl := int64(s.net.mtuPayload)
		if f.size > 0 {
			pl = min(pl, f.size-f.sent)
		}
		pkt := s.newPacket()
		pkt.f, pkt.kind, pkt.prio = f, pktData, int8(f.prio)
		pkt.payload = int32(pl)
		pkt.wire = int32(pl + roceHeaders + wireOverhead)
		f.sent += pl
		s.sentB += int64(pkt.wire)
		f.lastSend, f.lastWire = s.now, pkt.wire
		p.pr[f.prio].st.TxFrames++
		p.pr[f.prio].st.TxBytes += int64(pkt.wire)
		if s.dcqcnOn(f) {
			s.onSent(f, int64(pkt.wire))
		}
		s.transmit(p, pkt)
		return
	}
	if wake != math.MaxInt64 {
		s.wake(p, wake)
	}
}

// nextSend is when f may send again: its last frame's time at its current
// rate after that frame started (a rate change applies to the gap at once).
func (s *Sim) nextSend(f *flow) Time {
	if f.lastWire == 0 {
		return f.start
	}
	rate := f.line
	if s.dcqcnOn(f) {
		rate = f.rp.rc
	}
	return f.lastSend + Time(float64(f.lastWire)*8e12/rate)
}

func (s *Sim) dcqcnOn(f *flow) bool { return s.net.classes[f.prio].ecn && !s.opt.NoECN }

func (s *Sim) arrive(p *port, pkt *packet, prio int, quanta uint16) {
	if pkt == nil {
		s.rxPause(p, prio, quanta)
		return
	}
	s.transitB -= int64(pkt.wire)
	if p.n.host {
		s.hostRx(p, pkt)
	} else {
		s.switchRx(p, pkt)
	}
}

func (s *Sim) drop(pkt *packet) {
	s.droppedB += int64(pkt.wire)
	s.free(pkt)
}

// admit does the ingress priority-group accounting of a lossless frame on
// in: XOFF once the group passes the XOFF threshold, and a drop when the
// frame does not fit in the headroom above it (or the port's headroom pool).
// A priority without PFC at in (its PortConfig) is admitNoPFC's.
func (s *Sim) admit(in *port, prio int, pkt *packet) bool {
	if !in.losslessAt(prio) {
		return s.admitNoPFC(in, prio, pkt)
	}
	st := &in.pr[prio]
	w := int64(pkt.wire)
	oldOver := max(st.pg-in.xoffP[prio], 0)
	newOver := max(st.pg+w-in.xoffP[prio], 0)
	if newOver > in.hrP[prio] || in.hrUsed-oldOver+newOver > in.hrPool {
		st.st.Drops++
		st.st.HeadroomDrops++
		return false
	}
	st.pg += w
	in.hrUsed += newOver - oldOver
	pkt.in = in
	if st.pg >= in.xoffP[prio] && !st.xoffSent {
		st.xoffSent = true
		s.sendPause(in, prio, pauseQuantaMax)
		if !st.refreshOn {
			st.refreshOn = true
			s.at(s.now+in.quantum*pauseQuantaMax/2, event{kind: evPauseRefresh, p: in, prio: int8(prio)})
		}
	}
	return true
}

func (s *Sim) releasePG(in *port, prio int, w int64) {
	st := &in.pr[prio]
	if !in.pfc[prio] { // admitNoPFC: no headroom, no pause
		st.pg -= w
		return
	}
	oldOver := max(st.pg-in.xoffP[prio], 0)
	st.pg -= w
	in.hrUsed -= oldOver - max(st.pg-in.xoffP[prio], 0)
	if st.xoffSent && st.pg <= in.xonP[prio] {
		st.xoffSent = false
		s.sendPause(in, prio, 0)
	}
}

func (s *Sim) sendPause(p *port, prio int, quanta uint16) {
	p.ctrl = append(p.ctrl, ctrlFrame{prio: int8(prio), quanta: quanta})
	if quanta > 0 {
		p.pr[prio].st.PauseSent++
	} else {
		p.pr[prio].st.ResumeSent++
	}
	s.tryTx(p)
}

// rxPause applies a PFC frame received on p: after p's response time the
// egress of prio stops for quanta x 512 bit times (0 resumes it).
func (s *Sim) rxPause(p *port, prio int, quanta uint16) {
	p.accountPause(prio, s.now)
	st := &p.pr[prio]
	st.lastPauseRx = s.now
	eff := s.now + p.resp
	if quanta == 0 {
		st.st.ResumeRecv++
		if !p.pfc[prio] && !p.n.host {
			return
		}
		if st.pauseEnd > eff {
			st.pauseEnd = eff
			s.wake(p, eff)
		}
		return
	}
	st.st.PauseRecv++
	if !p.pfc[prio] && !p.n.host {
		// PFC is off for prio at this switch port: the frame is
		// counted, not obeyed.
		return
	}
	if s.now >= st.pauseEnd {
		st.pauseStart = eff
	}
	st.pauseEnd = eff + Time(quanta)*p.quantum
}

func (s *Sim) switchRx(in *port, pkt *packet) {
	pkt.hop++
	f := pkt.f
	var out *port
	if pkt.kind == pktData {
		out = f.path[pkt.hop]
	} else {
		out = f.rpath[pkt.hop]
	}
	prio := int(pkt.prio)
	c := &s.net.classes[prio]
	ost := &out.pr[prio]
	if out.tooBig(pkt) {
		ost.st.Drops++
		s.drop(pkt)
		return
	}
	if ost.storm && out.wdAction == intent.WatchdogDrop {
		ost.st.Drops++
		ost.st.WatchdogDrops++
		s.drop(pkt)
		return
	}
	if c.lossless {
		if !s.admit(in, prio, pkt) {
			s.drop(pkt)
			return
		}
	} else if in.losslessAt(prio) {
		// a lossy class with PFC at this port (its PortConfig)
		if !s.admit(in, prio, pkt) {
			s.drop(pkt)
			return
		}
	} else if ost.qBytes+int64(pkt.wire) > s.opt.LossyLimit {
		ost.st.Drops++
		s.drop(pkt)
		return
	}
	if s.opt.MarkOnEnqueue {
		s.mark(ost, &out.mk[prio], pkt)
	}
	s.enqueue(out, prio, pkt)
	s.tryTx(out)
}

// mark is WRED-ECN on queue st: no mark below Kmin, probability rising
// linearly to Pmax at Kmax, every frame above Kmax.
func (s *Sim) mark(st *prioState, c *markCfg, pkt *packet) {
	if !c.on || s.opt.NoECN || pkt.kind != pktData || st.qBytes <= c.kmin {
		return
	}
	pr := 1.0
	if st.qBytes < c.kmax {
		pr = c.pmax * float64(st.qBytes-c.kmin) / float64(c.kmax-c.kmin)
	}
	if s.rng.Float64() < pr {
		pkt.ecn = true
		st.st.ECNMarks++
	}
}

func (s *Sim) enqueue(p *port, prio int, pkt *packet) {
	st := &p.pr[prio]
	p.accountQueue(prio, s.now)
	st.q.push(pkt)
	st.qBytes += int64(pkt.wire)
	st.st.MaxQueue = max(st.st.MaxQueue, st.qBytes)
}

// hostRx is the receiving NIC: the DCQCN notification point (a CNP per QP
// at most once per MinTimeBetweenCNP when a frame arrives CE-marked), the
// reaction point for CNPs, and a slow receiver's buffer with its own PFC.
func (s *Sim) hostRx(p *port, pkt *packet) {
	f := pkt.f
	if pkt.kind == pktAck {
		f.acked = s.now
		s.deliveredB += int64(pkt.wire)
		s.free(pkt)
		return
	}
	if pkt.kind == pktCNP {
		f.cnpRecv++
		p.pr[pkt.prio].st.CNPRecv++
		s.deliveredB += int64(pkt.wire)
		s.free(pkt)
		if s.dcqcnOn(f) && s.onCNP(f, s.now) {
			f.rp.timerGen++
			f.rp.timerLive = true
			s.at(s.now+s.dc.TimeReset, event{kind: evRPTimer, f: f, gen: f.rp.timerGen})
		}
		return
	}
	if pkt.ecn {
		f.marksRecv++
		if f.cnpSent == 0 || s.now-f.lastCNP >= s.dc.MinTimeBetweenCNP {
			f.lastCNP = s.now
			f.cnpSent++
			cp := s.newPacket()
			cp.f, cp.kind, cp.prio, cp.wire = f, pktCNP, int8(s.net.cnpPrio), cnpWire
			s.sentB += cnpWire
			p.pr[s.net.cnpPrio].st.CNPSent++
			s.enqueue(f.rpath[0], s.net.cnpPrio, cp)
			s.tryTx(f.rpath[0])
		}
	}
	n := p.n
	if !n.slow {
		s.deliver(f, pkt)
		return
	}
	prio := int(pkt.prio)
	if s.net.classes[prio].lossless {
		if !s.admit(p, prio, pkt) {
			s.drop(pkt)
			return
		}
	} else if n.rxBytes+int64(pkt.wire) > s.opt.LossyLimit {
		p.pr[prio].st.Drops++
		s.drop(pkt)
		return
	}
	n.rx.push(pkt)
	n.rxBytes += int64(pkt.wire)
	p.accountRx(prio, s.now)
	p.pr[prio].rxBytes += int64(pkt.wire)
	p.pr[prio].st.MaxQueue = max(p.pr[prio].st.MaxQueue, n.rxBytes)
	if !n.draining && n.drainBps > 0 {
		n.draining = true
		s.at(s.now+Time(float64(pkt.wire)*8e12/n.drainBps), event{kind: evDrain, p: p})
	}
}

func (s *Sim) drain(p *port) {
	n := p.n
	pkt := n.rx.pop()
	n.rxBytes -= int64(pkt.wire)
	// the frame arrived on p (one receiving NIC per slow receiver)
	p.accountRx(int(pkt.prio), s.now)
	p.pr[pkt.prio].rxBytes -= int64(pkt.wire)
	if pkt.in != nil {
		s.releasePG(pkt.in, int(pkt.prio), int64(pkt.wire))
		pkt.in = nil
	}
	s.deliver(pkt.f, pkt)
	if n.rx.n > 0 {
		s.at(s.now+Time(float64(n.rx.head.wire)*8e12/n.drainBps), event{kind: evDrain, p: p})
	} else {
		n.draining = false
	}
}

func (s *Sim) deliver(f *flow, pkt *packet) {
	f.recv += int64(pkt.payload)
	f.recvWindow += int64(pkt.payload)
	s.deliveredB += int64(pkt.wire)
	s.deliveredWindow += int64(pkt.wire)
	if f.size > 0 && f.recv >= f.size && !f.done {
		f.done = true
		f.finish = s.now
		// the receiver acknowledges the message on the flow's priority
		ack := s.newPacket()
		ack.f, ack.kind, ack.prio, ack.wire = f, pktAck, int8(f.prio), ackWire
		s.sentB += ackWire
		s.enqueue(f.rpath[0], f.prio, ack)
		s.tryTx(f.rpath[0])
	}
	s.free(pkt)
}

// poll is one PFC watchdog poll over every switch port's lossless queues:
// a queue that stayed paused with frames waiting and sent nothing for the
// detect time is a storm; the action (drop / forward: ignore the pause;
// alert: count only) lasts until no pause frame arrived for the restore time.
func (s *Sim) poll() {
	poll := Time(s.wd.Poll.Nanoseconds()) * Nanosecond
	detect := Time(s.wd.Detect.Nanoseconds()) * Nanosecond
	restore := Time(s.wd.Restore.Nanoseconds()) * Nanosecond
	for _, p := range s.net.ports {
		if p.n.host {
			continue
		}
		for prio := range 8 {
			if !p.pfc[prio] {
				continue
			}
			st := &p.pr[prio]
			if st.storm {
				if s.now-st.lastPauseRx >= restore {
					st.storm = false
					st.st.WatchdogRestores++
					s.tryTx(p)
				}
				continue
			}
			if p.paused(prio, s.now) && st.q.n > 0 && st.st.TxFrames == st.wdLastTx {
				st.wdStuck += poll
			} else {
				st.wdStuck = 0
			}
			st.wdLastTx = st.st.TxFrames
			if st.wdStuck < detect {
				continue
			}
			st.storm = true
			st.wdStuck = 0
			st.st.WatchdogTriggers++
			s.wdTriggers++
			if st.st.WatchdogAt == 0 {
				st.st.WatchdogAt = s.now
			}
			if p.wdAction == intent.WatchdogDrop {
				p.accountQueue(prio, s.now)
				for st.q.n > 0 {
					pkt := st.q.pop()
					st.qBytes -= int64(pkt.wire)
					if pkt.in != nil {
						s.releasePG(pkt.in, prio, int64(pkt.wire))
					}
					st.st.Drops++
					st.st.WatchdogDrops++
					s.drop(pkt)
				}
			}
			s.tryTx(p)
		}
	}
}

func (s *Sim) String() string {
	return fmt.Sprintf("sim(%d ports, %d flows)", len(s.net.ports), len(s.flows))
}
