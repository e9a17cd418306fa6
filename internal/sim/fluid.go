package sim

import (
	"errors"
	"fmt"
	"math"
)

// Fluid is the DCQCN fluid model: delay differential equations for the
// current rate RC, target rate RT and alpha of each flow and the queue of
// the one bottleneck they share. It is the model of Zhu et al.,
// "Congestion Control for Large-Scale RDMA Deployments" (SIGCOMM 2015, its
// analysis of N identical flows) in its per-flow form (Zhu, Ghobadi, Misra,
// Padhye, "ECN or Delay: Lessons Learnt from Analysis of DCQCN and TIMELY",
// CoNEXT 2016, its DCQCN fluid model), read together with a public Python
// (ddeint) re-implementation of those equations, whose counter terms it
// cites as the CoNEXT paper's. With rates in frames per second, B
// the byte counter and T the timer in frames and seconds, F the fast
// recovery threshold, tau the CNP / rate-cut interval, tau' the alpha
// period and tau* the feedback delay, p = p(q(t-tau*)) and R' = RC_i(t-tau*):
//
//	p(q)     = 0 below Kmin, Pmax (q-Kmin)/(Kmax-Kmin) up to Kmax, 1 above
//	dq/dt    = sum RC_i - C                        (q >= 0)
//	a        = 1 - (1-p)^(tau R')                  a CNP in a cut interval
//	b        = p / ((1-p)^-B - 1)                  byte-counter increases per frame
//	c        = b (1-p)^(F B)                       ... past fast recovery
//	d        = p / ((1-p)^-(T R') - 1)             timer increases per frame
//	e        = d (1-p)^(F T R')                    ... past fast recovery
//	dα/dt    = g/tau' ((1 - (1-p)^(tau' R')) - α)
//	dRT/dt   = -(RT-RC) a/tau + R_AI R' (c + e)
//	dRC/dt   = -RC α a/(2 tau) + (RT-RC)/2 R' (b + d)
//
// As published, the model has no hyper increase, sets RT to RC on every
// cut (DCQCN.ClampTarget) and has no PFC. Here, for a lossless class, the
// queue stops at QueueCap, the XOFF thresholds of the ingress ports that
// feed it: PFC holds the excess at the senders, whose rates the model
// leaves alone (only the byte counter would see the difference). Two
// generalisations let mlx5's parameters in: tau is the longer
// of the rate-reduce period and the NP's CNP interval, and when the alpha
// period is shorter than tau, the chance of a CNP within it is tau'/tau x a
// (at most one CNP per tau). RC stays within [MinRate, Line].
type Fluid struct {
	DCQCN    DCQCN
	Flows    int
	Line     float64 // each sender's line rate, bits/s
	Capacity float64 // the bottleneck, bits/s
	Kmin     int64   // bytes
	Kmax     int64   // bytes
	Pmax     float64 // marking probability at Kmax
	Delay    Time    // tau*: bottleneck -> receiver -> CNP -> sender -> bottleneck
	QueueCap int64   // bytes; 0 = no PFC, the queue is unbounded
	Frame    int     // wire bytes of one frame: the unit of the rates, B and q
	Step     Time    // integration step; 0 = 1/50 of the shortest time constant
}

// FluidResult is a run of the fluid model sampled on a grid: interval
// means of each flow's RC (bits/s) and of the queue (bytes).
type FluidResult struct {
	Times []Time      // end of each interval
	Rates [][]float64 // [flow][interval]
	Queue []float64
	Step  Time
}

// FluidFor builds the fluid model of a run: the flows of net must all be
// DCQCN flows of one class that share their last hop (an incast), and the
// model takes that port's speed, the class's ECN thresholds, the DCQCN
// parameters the packet simulator would use with opt, and the loop delay of
// the first flow's path (propagation and one frame time per hop there, one
// CNP time per hop back).
func FluidFor(net *Network, opt Options) (Fluid, error) {
	if len(net.flows) == 0 {
		return Fluid{}, errors.New("fluid model: no flows")
	}
	f0 := net.flows[0]
	last := f0.path[len(f0.path)-1]
	for _, f := range net.flows {
		if f.path[len(f.path)-1] != last || f.prio != f0.prio {
			return Fluid{}, fmt.Errorf("fluid model: flow %s -> %s does not share the bottleneck %s (class priority %d) of the first flow", f.src.name, f.dst.name, last.name, f0.prio)
		}
	}
	c := net.classes[f0.prio]
	if !c.ecn || opt.NoECN {
		return Fluid{}, fmt.Errorf("fluid model: class %s has no ECN marking, so no DCQCN", c.name)
	}
	dc := MLX5Defaults()
	if opt.DCQCN != nil {
		dc = *opt.DCQCN
	}
	frame := net.mtuPayload + roceHeaders + wireOverhead
	var qcap int64
	if c.lossless {
		seen := map[*port]bool{}
		nLossless := int64(max(len(net.lossless()), 1))
		for _, f := range net.flows {
			if len(f.path) < 2 {
				return Fluid{}, fmt.Errorf("fluid model: flow %s -> %s crosses no switch", f.src.name, f.dst.name)
			}
			if in := f.path[len(f.path)-2].peer; !seen[in] {
				seen[in] = true
				qcap += xoffOf(in, opt, nLossless)
			}
		}
	}
	var delay Time
	for _, p := range f0.path {
		delay += p.delay + p.txTime(int32(frame))
	}
	for _, p := range f0.rpath {
		delay += p.delay + p.txTime(cnpWire)
	}
	return Fluid{
		DCQCN: dc, Flows: len(net.flows), Line: f0.path[0].bps, Capacity: last.bps,
		Kmin: c.kmin, Kmax: c.kmax, Pmax: c.pmax, Delay: delay, Frame: frame, QueueCap: qcap,
	}, nil
}

// mark is the marking probability at queue depth q (bytes), as Sim.mark.
func (m *Fluid) mark(q float64) float64 {
	switch {
	case q <= float64(m.Kmin):
		return 0
	case q < float64(m.Kmax):
		return m.Pmax * (q - float64(m.Kmin)) / float64(m.Kmax-m.Kmin)
	}
	return 1
}

// atLeastOne is 1 - (1-p)^n, the chance that n frames carry a mark.
func atLeastOne(p, n float64) float64 {
	switch {
	case p <= 0 || n <= 0:
		return 0
	case p >= 1:
		return 1
	}
	return -math.Expm1(n * math.Log1p(-p))
}

// perFrame is p / ((1-p)^-n - 1): how many counter expiries of n frames
// without a mark there are per frame sent (1/n when p = 0).
func perFrame(p, n float64) float64 {
	switch {
	case p >= 1 || n <= 0:
		return 0
	case p == 0:
		return 1 / n
	}
	den := math.Expm1(-n * math.Log1p(-p))
	if math.IsInf(den, 1) {
		return 0
	}
	return p / den
}

// Run integrates the model for d from every flow at line rate with alpha at
// its initial value and an empty queue, and samples it every interval.
func (m *Fluid) Run(d, every Time) (*FluidResult, error) {
	if m.Flows <= 0 || m.Line <= 0 || m.Capacity <= 0 || m.Frame <= 0 || every <= 0 || d < every {
		return nil, fmt.Errorf("fluid model: want flows, line rate, capacity, frame > 0 and 0 < interval <= duration (have %d, %g, %g, %d, %d, %d)", m.Flows, m.Line, m.Capacity, m.Frame, every, d)
	}
	if m.Kmax <= m.Kmin {
		return nil, fmt.Errorf("fluid model: Kmax %d must exceed Kmin %d", m.Kmax, m.Kmin)
	}
	p := m.DCQCN
	tau := max(p.RateReducePeriod, p.MinTimeBetweenCNP).Seconds()
	tauA := p.AlphaPeriod.Seconds()
	if tau <= 0 || tauA <= 0 || p.TimeReset <= 0 || p.G <= 0 {
		return nil, errors.New("fluid model: the rate-reduce, CNP, alpha and timer periods and g must be > 0")
	}
	step := m.Step
	if step <= 0 {
		step = max(min(Time(tau*1e12), p.AlphaPeriod, p.TimeReset, max(m.Delay, Microsecond))/50, Nanosecond)
	}
	dt := step.Seconds()
	bits := float64(m.Frame) * 8
	capacity := m.Capacity / bits
	line := m.Line / bits
	minRate := p.MinRate / bits
	ai := p.AIRate / bits
	B := math.Inf(1) // no byte counter: it never expires
	if p.ByteReset > 0 {
		B = float64(p.ByteReset) / float64(m.Frame)
	}
	T := p.TimeReset.Seconds()
	F := float64(p.Threshold)
	qcap := float64(m.QueueCap) / float64(m.Frame)

	n := m.Flows
	rc := make([]float64, n)
	rt := make([]float64, n)
	al := make([]float64, n)
	for i := range n {
		rc[i], rt[i], al[i] = line, line, p.InitialAlpha
	}
	var q float64 // frames
	// history of RC (per flow) and q, one entry per step, for the delay
	lag := int(math.Round(m.Delay.Seconds() / dt))
	hist := make([][]float64, lag+1)
	for k := range hist {
		hist[k] = make([]float64, n+1)
		copy(hist[k], rc)
		// the flows start at 0: before that, nothing queued
	}
	head := 0

	steps := int64(d / step)
	per := int64(every / step)
	if per < 1 {
		per = 1
	}
	r := &FluidResult{Rates: make([][]float64, n), Step: step}
	sumRC := make([]float64, n)
	var sumQ float64
	drc := make([]float64, n)
	drt := make([]float64, n)
	dal := make([]float64, n)
	for k := int64(0); k < steps; k++ {
		old := hist[(head+1)%len(hist)] // the state tau* ago
		if lag == 0 {
			old = hist[head]
		}
		pm := m.mark(old[n] * float64(m.Frame))
		var in float64
		for i := range n {
			rd := old[i]
			a := atLeastOne(pm, tau*rd)
			aA := atLeastOne(pm, tauA*rd)
			if tauA < tau {
				aA = a * tauA / tau
			}
			b := perFrame(pm, B)
			dd := perFrame(pm, T*rd)
			c := b * (1 - atLeastOne(pm, F*B)) // 0 without a byte counter (b = 0)
			e := dd * (1 - atLeastOne(pm, F*T*rd))
			dal[i] = p.G / tauA * (aA - al[i])
			drt[i] = -(rt[i]-rc[i])*a/tau + ai*rd*(c+e)
			drc[i] = -rc[i]*al[i]*a/(2*tau) + (rt[i]-rc[i])/2*rd*(b+dd)
			in += rc[i]
		}
		for i := range n {
			al[i] = min(max(al[i]+dal[i]*dt, 0), 1)
			rt[i] = min(max(rt[i]+drt[i]*dt, minRate), line)
			rc[i] = min(max(rc[i]+drc[i]*dt, minRate), line)
		}
		q = max(q+(in-capacity)*dt, 0)
		if qcap > 0 {
			q = min(q, qcap)
		}
		head = (head + 1) % len(hist)
		copy(hist[head], rc)
		hist[head][n] = q
		for i := range n {
			sumRC[i] += rc[i]
		}
		sumQ += q
		if (k+1)%per == 0 {
			r.Times = append(r.Times, Time(k+1)*step)
			for i := range n {
				r.Rates[i] = append(r.Rates[i], sumRC[i]/float64(per)*bits)
				sumRC[i] = 0
			}
			r.Queue = append(r.Queue, sumQ/float64(per)*float64(m.Frame))
			sumQ = 0
		}
	}
	return r, nil
}

// FairShareTime is when the flows reach a fair share of capacity and hold
// it. rates[i][k] is flow i's mean rate over sample interval k, which ends
// at times[k] (evenly spaced). Over a window of the last `window` intervals
// the flows' mean rates are fair when their Jain index is at least jainMin
// and they sum to within tol of capacity. The result is the end of the
// first fair window from which every window stays fair for hold; false
// when none does before the end.
func FairShareTime(times []Time, rates [][]float64, capacity, jainMin, tol float64, window int, hold Time) (Time, bool) {
	window = max(window, 1)
	x := make([]float64, len(rates))
	first := -1 // first window of the current run of fair windows
	for k := window - 1; k < len(times); k++ {
		var sum float64
		for i := range rates {
			var s float64
			for _, v := range rates[i][k-window+1 : k+1] {
				s += v
			}
			x[i] = s / float64(window)
			sum += x[i]
		}
		if len(x) == 0 || jain(x) < jainMin || math.Abs(sum/capacity-1) > tol {
			first = -1
			continue
		}
		if first < 0 {
			first = k
		}
		if times[k]-times[first] >= hold {
			return times[first], true
		}
	}
	return 0, false
}

// QueueMean is the mean of q over the samples from time from on.
func QueueMean(times []Time, q []float64, from Time) float64 {
	var s float64
	var k int
	for i, t := range times {
		if t > from {
			s += q[i]
			k++
		}
	}
	if k == 0 {
		return math.NaN()
	}
	return s / float64(k)
}
