package sim

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fabricctl/fabricctl/intent"
)

// PrioStats are one port's counters for one priority.
type PrioStats struct {
	MaxQueue         int64 `json:"maxQueueBytes"`  // egress queue (switch) or receive buffer (host)
	PausedTime       Time  `json:"pausedPs"`       // egress held by received XOFF
	PauseSent        int64 `json:"pauseSent"`      // XOFF frames sent (with refreshes)
	ResumeSent       int64 `json:"resumeSent"`     // XON (quanta 0) frames sent
	PauseRecv        int64 `json:"pauseReceived"`  // XOFF frames received
	ResumeRecv       int64 `json:"resumeReceived"` // XON frames received
	ECNMarks         int64 `json:"ecnMarks"`       // frames CE-marked into this egress queue
	CNPSent          int64 `json:"cnpSent"`        // NIC: CNPs sent as notification point
	CNPRecv          int64 `json:"cnpReceived"`    // NIC: CNPs received as reaction point
	Drops            int64 `json:"drops"`          // every drop on this port and priority
	HeadroomDrops    int64 `json:"headroomDrops"`  // lossless: the frame did not fit in the headroom
	WatchdogTriggers int64 `json:"watchdogTriggers"`
	WatchdogAt       Time  `json:"firstWatchdogPs,omitempty"` // first trigger
	WatchdogRestores int64 `json:"watchdogRestores"`
	WatchdogDrops    int64 `json:"watchdogDrops"`
	TxFrames         int64 `json:"txFrames"`
	TxBytes          int64 `json:"txBytes"`
}

// PortResult is one port and priority of the run.
type PortResult struct {
	Node      string     `json:"node"`
	Port      string     `json:"port"`
	Peer      string     `json:"peer"`
	Host      bool       `json:"host"`
	Priority  int        `json:"priority"`
	Class     string     `json:"class"`
	Lossless  bool       `json:"lossless"`
	MeanQueue float64    `json:"meanQueueBytes"`
	Headroom  int64      `json:"headroomBytes"`
	Pos       intent.Pos `json:"-"`
	Path      string     `json:"path,omitempty"`
	PrioStats
}

// Name is node:port.
func (p PortResult) Name() string { return p.Node + ":" + p.Port }

// FlowResult is one flow of the run.
type FlowResult struct {
	ID        int     `json:"id"`
	From      string  `json:"from"`
	To        string  `json:"to"`
	Priority  int     `json:"priority"`
	Path      string  `json:"path"`
	Size      int64   `json:"sizeBytes"`
	Sent      int64   `json:"sentBytes"`
	Received  int64   `json:"receivedBytes"`
	Goodput   float64 `json:"goodputBps"`
	FCT       Time    `json:"fctPs,omitempty"` // start to the message's ACK at the sender; 0 = not finished (or no size)
	Finished  bool    `json:"finished"`
	Rate      float64 `json:"finalRateBps"`
	ECNMarks  int64   `json:"ecnMarksReceived"`
	CNPs      int64   `json:"cnps"`
	StartTime Time    `json:"startPs"`
}

// Conservation is the byte balance of data frames and CNPs (wire bytes):
// Sent = Delivered + Queued + InFlight + Dropped must hold after every run.
type Conservation struct {
	Sent      int64 `json:"sent"`
	Delivered int64 `json:"delivered"`
	Queued    int64 `json:"queued"`
	InFlight  int64 `json:"inFlight"`
	Dropped   int64 `json:"dropped"`
}

// Holds reports whether the balance is exact.
func (c Conservation) Holds() bool { return c.Sent == c.Delivered+c.Queued+c.InFlight+c.Dropped }

// Deadlock is a pause cycle that stopped all delivery.
type Deadlock struct {
	At       Time     `json:"atPs"`
	Cycle    []string `json:"cycle"` // switch:port whose lossless queue waits on the next switch
	Resolved Time     `json:"resolvedPs,omitempty"`
	AtEnd    bool     `json:"atEnd"`
	// WatchdogTriggers counts the PFC watchdog's triggers (every port)
	// from the cycle's start to its end (or to the end of the run).
	WatchdogTriggers int64 `json:"watchdogTriggers"`
	wdAtStart        int64
}

// Series is a sampled time series for the plots.
type Series struct {
	Name   string    `json:"name"`
	Values []float64 `json:"values"`
}

// Result is everything a run measured.
type Result struct {
	Scenario     string        `json:"scenario"`
	Seed         int64         `json:"seed"`
	Duration     Time          `json:"durationPs"`
	Synthetic    bool          `json:"syntheticTopology"`
	Notes        []string      `json:"notes"`
	Events       int64         `json:"events"`
	Wall         time.Duration `json:"wallNs"`
	EventsPerSec float64       `json:"eventsPerSecond"`
	Ports        []PortResult  `json:"ports"`
	Flows        []FlowResult  `json:"flows"`
	Jain         float64       `json:"jainFairness"`
	Conservation Conservation  `json:"conservation"`
	// Deadlock is the last deadlock episode; Deadlocks holds every one.
	Deadlock  *Deadlock  `json:"deadlock,omitempty"`
	Deadlocks []Deadlock `json:"deadlocks"`
	DCQCN     DCQCN      `json:"dcqcn"`
	// Sampled series: times (ps), then queue depth (bytes) and paused
	// share of every queue that held or paused anything (busiest first),
	// and the rate and goodput (bits/s) of the first 64 flows
	// (FlowSeriesLeftOut: how many more there are).
	Times    []Time    `json:"samplesPs"`
	Queues   []Series  `json:"queueSeries"`
	Paused   []Series  `json:"pausedSeries"`
	Rates    []Series  `json:"rateSeries"`
	Goodputs []Series  `json:"goodputSeries"`
	JainAt   []float64 `json:"jainSeries"`
	// FlowSeriesLeftOut is the flows without rate and goodput series.
	FlowSeriesLeftOut int `json:"flowSeriesLeftOut"`
	// FlowRates[i][k] is flow i's mean DCQCN current rate (bits/s) over
	// sample interval k (Options.FlowRates; 0 while it is not sending).
	FlowRates [][]float64 `json:"flowRates,omitempty"`

	// CongestedSwitch is the switch whose egress to a receiver held the
	// deepest lossless queue (the congestion point), for pause-spread findings.
	CongestedSwitch string `json:"congestedSwitch"`
	portByName      map[string]*PortResult
}

func jain(x []float64) float64 {
	var s, s2 float64
	for _, v := range x {
		s += v
		s2 += v * v
	}
	if s2 == 0 || len(x) == 0 {
		return 0
	}
	return s * s / (float64(len(x)) * s2)
}

type trackKey struct {
	p    *port
	prio int
}

func (s *Sim) tracked() []trackKey {
	if s.keys != nil {
		return s.keys
	}
	// only ports on some flow's way (either direction): memory stays
	// bounded by the traffic, not by the size of the fabric
	out := []trackKey{}
	seen := map[*port]bool{}
	for _, p := range s.net.ports {
		if !s.onPath(p) || seen[p] {
			continue
		}
		seen[p] = true
		for prio := range 8 {
			if s.net.classes[prio].used {
				out = append(out, trackKey{p, prio})
			}
		}
	}
	s.keys = out
	return out
}

func (s *Sim) onPath(p *port) bool {
	if s.pathPorts == nil {
		s.pathPorts = map[*port]bool{}
		for _, f := range s.flows {
			for _, q := range f.path {
				s.pathPorts[q] = true
			}
			for _, q := range f.rpath {
				s.pathPorts[q] = true
			}
		}
	}
	return s.pathPorts[p]
}

func (s *Sim) sample() {
	keys := s.tracked()
	sm := sample{t: s.now, queue: make([]int64, len(keys)), paused: make([]float64, len(keys))}
	for i, k := range keys {
		st := &k.p.pr[k.prio]
		sm.queue[i] = st.qBytes
		k.p.accountPause(k.prio, s.now)
		sm.paused[i] = float64(st.st.PausedTime-k.p.sampledPaused[k.prio]) / float64(s.every)
		k.p.sampledPaused[k.prio] = st.st.PausedTime
	}
	// rates and goodputs are kept for the first maxFlowSeries flows (the
	// result says how many it left out); the fairness of every active
	// flow is computed here, so memory does not grow with the flow count
	nf := min(len(s.flows), maxFlowSeries)
	sm.rate = make([]float64, nf)
	sm.good = make([]float64, nf)
	var sum, sum2 float64
	var act int
	for i, f := range s.flows {
		g := float64(f.recvWindow) * 8 / s.every.Seconds()
		f.recvWindow = 0
		if i < nf {
			if f.active {
				sm.rate[i] = f.line
				if s.dcqcnOn(f) {
					sm.rate[i] = f.rp.rc
				}
			}
			sm.good[i] = g
		}
		if f.active && !f.done {
			sum += g
			sum2 += g * g
			act++
		}
	}
	if sum2 > 0 {
		sm.jain = sum * sum / (float64(act) * sum2)
	}
	if s.opt.FlowRates {
		sm.rates = make([]float64, len(s.flows))
		for i, f := range s.flows {
			if f.active && s.dcqcnOn(f) {
				sm.rates[i] = f.rp.meanRC(s.now)
			}
		}
	}
	s.samples = append(s.samples, sm)
	// deadlock: a cycle of switches whose lossless queues are paused with
	// frames waiting, and none of those queues sent a frame for stallTime
	s.checkDeadlock()
	s.deliveredWindow = 0
}

// stallTime is how long nothing must be delivered before a pause cycle
// counts as a deadlock.
const stallTime = 10 * Microsecond

func (s *Sim) checkDeadlock() {
	cyc := s.pauseCycle()
	if cyc == nil {
		s.cand = nil
		if s.deadlock != nil && s.deadlock.Resolved == 0 {
			s.deadlock.Resolved = s.now
			s.deadlock.WatchdogTriggers = s.wdTriggers - s.deadlock.wdAtStart
		}
		return
	}
	var tx int64
	for _, p := range cyc {
		for _, prio := range s.net.lossless() {
			tx += p.pr[prio].st.TxFrames
		}
	}
	key := ""
	for _, p := range cyc {
		key += p.n.name + ":" + p.name + " "
	}
	if s.cand == nil || s.cand.key != key || s.cand.tx != tx {
		s.cand = &candidate{key: key, tx: tx, since: s.now}
		return
	}
	if s.now-s.cand.since >= stallTime && (s.deadlock == nil || s.deadlock.Resolved != 0) {
		d := &Deadlock{At: s.cand.since, wdAtStart: s.wdTriggers}
		for _, p := range cyc {
			d.Cycle = append(d.Cycle, p.n.name+":"+p.name)
		}
		s.deadlock = d
		s.deadlocks = append(s.deadlocks, d)
	}
}

type candidate struct {
	key   string
	tx    int64
	since Time
}

// pauseCycle finds a cycle of switches each holding lossless frames for
// the next one that pauses it.
func (s *Sim) pauseCycle() []*port {
	waits := map[*node][]*port{}
	for _, p := range s.net.ports {
		if p.n.host || p.peer == nil || p.peer.n.host {
			continue
		}
		for _, prio := range s.net.lossless() {
			st := &p.pr[prio]
			if st.q.n > 0 && p.paused(prio, s.now) && !st.storm {
				waits[p.n] = append(waits[p.n], p)
				break
			}
		}
	}
	state := map[*node]int{}
	var stack []*port
	var found []*port
	var dfs func(n *node) bool
	dfs = func(n *node) bool {
		state[n] = 1
		for _, p := range waits[n] {
			nb := p.peer.n
			stack = append(stack, p)
			if state[nb] == 1 {
				for i, q := range stack {
					if q.n == nb {
						found = append(found, stack[i:]...)
						return true
					}
				}
			}
			if state[nb] == 0 && dfs(nb) {
				return true
			}
			stack = stack[:len(stack)-1]
		}
		state[n] = 2
		return false
	}
	for _, nd := range s.net.nodes {
		if state[nd] == 0 && dfs(nd) {
			return found
		}
	}
	return nil
}

func (s *Sim) result() *Result {
	r := &Result{Scenario: s.net.scenario, Seed: s.opt.Seed, Duration: s.end, Synthetic: s.net.Synthetic, Notes: slices.Clone(s.net.Notes),
		Events: s.events, Wall: s.wall, DCQCN: s.dc, Deadlock: s.deadlock, portByName: map[string]*PortResult{}}
	if r.Notes == nil {
		r.Notes = []string{}
	}
	if s.wall > 0 {
		r.EventsPerSec = float64(s.events) / s.wall.Seconds()
	}
	if s.deadlock != nil && s.deadlock.Resolved == 0 {
		s.deadlock.AtEnd = true
		s.deadlock.WatchdogTriggers = s.wdTriggers - s.deadlock.wdAtStart
	}
	r.Deadlocks = []Deadlock{}
	for _, d := range s.deadlocks {
		r.Deadlocks = append(r.Deadlocks, *d)
	}
	var queued int64
	var deepest int64
	for _, p := range s.net.ports {
		info := s.net.portInfo[p]
		peer := ""
		if p.peer != nil {
			peer = p.peer.n.name + ":" + p.peer.name
		}
		for prio := range 8 {
			st := &p.pr[prio]
			queued += st.qBytes
			p.accountQueue(prio, s.now)
			p.accountPause(prio, s.now)
			p.accountRx(prio, s.now)
			c := s.net.classes[prio]
			if !c.used {
				continue
			}
			pr := PortResult{Node: p.n.name, Port: p.name, Peer: peer, Host: p.n.host, Priority: prio, Class: c.name,
				Lossless: c.lossless, MeanQueue: (st.qIntegral + st.rxIntegral) / float64(s.end), Pos: info.pos, Path: info.path, PrioStats: st.st}
			if c.lossless {
				pr.Headroom = p.hrP[prio]
			}
			if st.st == (PrioStats{}) {
				continue
			}
			if c.lossless && !p.n.host && p.peer != nil && p.peer.n.host && st.st.MaxQueue > deepest {
				deepest = st.st.MaxQueue
				r.CongestedSwitch = p.n.name
			}
			r.Ports = append(r.Ports, pr)
		}
	}
	for _, nd := range s.net.nodes {
		queued += nd.rxBytes
	}
	r.Conservation = Conservation{Sent: s.sentB, Delivered: s.deliveredB, Queued: queued, InFlight: s.transitB, Dropped: s.droppedB}
	var goods []float64
	for _, f := range s.flows {
		names := []string{f.src.name}
		for _, p := range f.path {
			names = append(names, p.peer.n.name)
		}
		fr := FlowResult{ID: f.id, From: f.src.name, To: f.dst.name, Priority: f.prio, Path: strings.Join(names, ">"),
			Size: f.size, Sent: f.sent, Received: f.recv, ECNMarks: f.marksRecv, CNPs: f.cnpRecv, StartTime: f.start}
		fr.Rate = f.line
		if s.dcqcnOn(f) {
			fr.Rate = f.rp.rc
		}
		end := s.end
		if f.done {
			end = f.finish
		}
		if f.acked > 0 {
			fr.Finished = true
			fr.FCT = f.acked - f.start
		}
		if end > f.start {
			fr.Goodput = float64(f.recv) * 8 / (end - f.start).Seconds()
		}
		goods = append(goods, fr.Goodput)
		r.Flows = append(r.Flows, fr)
	}
	r.Jain = jain(goods)
	s.series(r)
	for i := range r.Ports {
		r.portByName[r.Ports[i].Name()+fmt.Sprint("/", r.Ports[i].Priority)] = &r.Ports[i]
	}
	return r
}

// maxPlotted bounds how many lines a plot draws; its legend says how
// many series it left out.
const maxPlotted = 12

// maxFlowSeries bounds the flows whose rate and goodput are sampled
// (memory: flows x samples); Result.FlowSeriesLeftOut counts the others.
const maxFlowSeries = 64

func (s *Sim) series(r *Result) {
	keys := s.tracked()
	type idx struct {
		i     int
		score float64
	}
	var qs, ps []idx
	for i, k := range keys {
		st := &k.p.pr[k.prio].st
		if st.MaxQueue > 0 {
			qs = append(qs, idx{i, float64(st.MaxQueue)})
		}
		if st.PausedTime > 0 {
			ps = append(ps, idx{i, float64(st.PausedTime)})
		}
	}
	top := func(v []idx) []idx {
		sort.SliceStable(v, func(a, b int) bool { return v[a].score > v[b].score })
		return v
	}
	name := func(k trackKey) string { return fmt.Sprintf("%s:%s/%d", k.p.n.name, k.p.name, k.prio) }
	for _, sm := range s.samples {
		r.Times = append(r.Times, sm.t)
	}
	for _, x := range top(qs) {
		se := Series{Name: name(keys[x.i])}
		for _, sm := range s.samples {
			se.Values = append(se.Values, float64(sm.queue[x.i]))
		}
		r.Queues = append(r.Queues, se)
	}
	for _, x := range top(ps) {
		se := Series{Name: name(keys[x.i])}
		for _, sm := range s.samples {
			se.Values = append(se.Values, sm.paused[x.i])
		}
		r.Paused = append(r.Paused, se)
	}
	if n := len(s.flows) - maxFlowSeries; n > 0 {
		r.FlowSeriesLeftOut = n
		r.Notes = append(r.Notes, fmt.Sprintf("rate and goodput series hold the first %d of %d flows (%d left out)", maxFlowSeries, len(s.flows), n))
	}
	for i, f := range s.flows {
		if i >= maxFlowSeries {
			break
		}
		se := Series{Name: fmt.Sprintf("%s>%s", f.src.name, f.dst.name)}
		ge := Series{Name: se.Name}
		for _, sm := range s.samples {
			se.Values = append(se.Values, sm.rate[i])
			ge.Values = append(ge.Values, sm.good[i])
		}
		r.Rates = append(r.Rates, se)
		r.Goodputs = append(r.Goodputs, ge)
	}
	for _, sm := range s.samples {
		r.JainAt = append(r.JainAt, sm.jain)
	}
	if s.opt.FlowRates {
		r.FlowRates = make([][]float64, len(s.flows))
		for i := range s.flows {
			for _, sm := range s.samples {
				r.FlowRates[i] = append(r.FlowRates[i], sm.rates[i])
			}
		}
	}
}

// Port returns the result row of node:port at priority prio, or nil.
func (r *Result) Port(name string, prio int) *PortResult {
	return r.portByName[fmt.Sprint(name, "/", prio)]
}

// Totals sums the port counters over lossless (or lossy) priorities.
func (r *Result) Totals(lossless bool) PrioStats {
	var t PrioStats
	for _, p := range r.Ports {
		if p.Lossless != lossless {
			continue
		}
		t.Drops += p.Drops
		t.HeadroomDrops += p.HeadroomDrops
		t.PauseSent += p.PauseSent
		t.PauseRecv += p.PauseRecv
		t.PausedTime += p.PausedTime
		t.ECNMarks += p.ECNMarks
		t.WatchdogTriggers += p.WatchdogTriggers
		t.WatchdogDrops += p.WatchdogDrops
		t.MaxQueue = max(t.MaxQueue, p.MaxQueue)
	}
	return t
}
