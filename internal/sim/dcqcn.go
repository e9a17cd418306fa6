package sim

import (
	"math"

	"github.com/fabricctl/fabricctl/intent"
)

// DCQCN holds the reaction point (RP) and notification point (NP)
// parameters. The algorithm is the one of Zhu et al., "Congestion Control
// for Large-Scale RDMA Deployments", SIGCOMM 2015 (the DCQCN paper): alpha
// is an EWMA of "a CNP arrived in the last alpha period", a CNP cuts the
// current rate by alpha/2 at most once per rate-reduce period, and a timer
// and a byte counter drive fast recovery, additive and hyper increase.
//
// The defaults are mlx5's (ConnectX-4 and later firmware) as `mlxconfig q`
// prints them on a ConnectX NIC (a dump in a public repository, read with
// the reference search): DCE_TCP_G 1019, DCE_TCP_RTT 1 us,
// INITIAL_ALPHA_VALUE 1023, RPG_GD 11 (a cut by alpha/2), RPG_MIN_DEC_FAC
// 50 %, RPG_MIN_RATE 1 Mb/s, RATE_REDUCE_MONITOR_PERIOD 4 us,
// RATE_TO_SET_ON_FIRST_CNP 0, RPG_TIME_RESET 300 us, RPG_BYTE_RESET 32767
// (bytes, per mstflint's mlxconfig parameter help), RPG_THRESHOLD 1,
// RPG_AI_RATE 5 Mb/s, RPG_HAI_RATE 50 Mb/s, CLAMP_TGT_RATE 0,
// CLAMP_TGT_RATE_AFTER_TIME_INC 1, MIN_TIME_BETWEEN_CNPS 4 us,
// CNP_802P_PRIO 6, CNP_DSCP 48; NVIDIA's "DCQCN CC Parameters" table
// describes them. Every one is an Option.
type DCQCN struct {
	G                 float64 // alpha gain: (1024 - dce_tcp_g) / 1024
	AlphaPeriod       Time    // dce_tcp_rtt
	InitialAlpha      float64 // initial_alpha_value / 1024
	MinDecFactor      float64 // rpg_min_dec_fac: a cut leaves at least this share of the rate
	MinRate           float64 // bits/s
	RateReducePeriod  Time    // rate_reduce_monitor_period
	TimeReset         Time    // rpg_time_reset
	ByteReset         int64   // rpg_byte_reset; 0 = no byte counter
	Threshold         int     // rpg_threshold (F)
	AIRate            float64 // bits/s
	HAIRate           float64 // bits/s
	MinTimeBetweenCNP Time    // NP: one CNP per QP per this interval
	// RateOnFirstCNP (rate_to_set_on_first_cnp), when > 0, is the rate a
	// QP is set to on its first CNP instead of the alpha cut; 0 (mlx5's
	// default) cuts as on every other CNP.
	RateOnFirstCNP float64
	// ClampTarget (clamp_tgt_rate) sets the target rate to the current rate
	// on every cut, as the DCQCN paper does; mlx5 leaves it off and clamps
	// only when the last increase came from the timer
	// (ClampTargetAfterTimeInc, clamp_tgt_rate_after_time_inc).
	ClampTarget             bool
	ClampTargetAfterTimeInc bool
}

// MLX5Defaults returns mlx5's default DCQCN parameters (see DCQCN).
func MLX5Defaults() DCQCN {
	return DCQCN{
		G:                 float64(1024-1019) / 1024,
		AlphaPeriod:       1 * Microsecond,
		InitialAlpha:      1023.0 / 1024,
		MinDecFactor:      0.5,
		MinRate:           1e6,
		RateReducePeriod:  4 * Microsecond,
		TimeReset:         300 * Microsecond,
		ByteReset:         32767,
		Threshold:         1,
		AIRate:            5e6,
		HAIRate:           50e6,
		MinTimeBetweenCNP: 4 * Microsecond,

		ClampTargetAfterTimeInc: true,
	}
}

// DCQCNFromPolicy returns the DCQCN parameters hosts get from p:
// MLX5Defaults with every field policy.dcqcn sets in its place, converted
// from the unit the NICs are written in (intent.DCQCNParams: microseconds,
// Mb/s, bytes, percent, and mlx5's 1/1024 fixed point for g and the
// initial alpha), so simulate and tune run what host apply writes. A nil
// p or policy.dcqcn gives MLX5Defaults. rp_gd is not modelled: the cut is
// alpha/2 as in the DCQCN paper (see DCQCN), whatever gd says.
func DCQCNFromPolicy(p *intent.Policy) DCQCN {
	d := MLX5Defaults()
	if p == nil || p.DCQCN == nil {
		return d
	}
	us := func(v int64) Time { return Time(v) * Microsecond }
	for _, v := range p.DCQCN.Values() {
		switch v.Key {
		case "rateReduceMonitorPeriod":
			d.RateReducePeriod = us(v.Value)
		case "timeReset":
			d.TimeReset = us(v.Value)
		case "byteReset":
			d.ByteReset = v.Value
		case "threshold":
			d.Threshold = int(v.Value)
		case "aiRate":
			d.AIRate = float64(v.Value) * 1e6
		case "haiRate":
			d.HAIRate = float64(v.Value) * 1e6
		case "minDecreaseFactor":
			d.MinDecFactor = float64(v.Value) / 100
		case "minRate":
			d.MinRate = float64(v.Value) * 1e6
		case "rateOnFirstCNP":
			d.RateOnFirstCNP = float64(v.Value) * 1e6
		case "g":
			d.G = float64(1024-v.Value) / 1024
		case "alphaUpdatePeriod":
			d.AlphaPeriod = us(v.Value)
		case "initialAlpha":
			d.InitialAlpha = float64(v.Value) / 1024
		case "clampTargetRate":
			d.ClampTarget = v.Value != 0
		case "clampTargetRateAfterTimeIncrease":
			d.ClampTargetAfterTimeInc = v.Value != 0
		case "minTimeBetweenCNPs":
			d.MinTimeBetweenCNP = us(v.Value)
		}
	}
	return d
}

// PaperParams returns the parameters of the DCQCN paper's evaluation (Zhu
// et al. 2015, section 5: g = 1/256, alpha and rate-increase timers 55 us,
// rate cut and CNP at most once per 50 us, byte counter 10 MB, F = 5,
// R_AI 40 Mb/s) with R_HAI 200 Mb/s as the authors' ns-3 simulator
// configuration (mix/config) sets it. The paper pairs them with ECN
// Kmin 5 KB, Kmax 200 KB, Pmax 1 %.
func PaperParams() DCQCN {
	return DCQCN{
		G:                 1.0 / 256,
		AlphaPeriod:       55 * Microsecond,
		InitialAlpha:      1,
		MinDecFactor:      0,
		MinRate:           1e6,
		RateReducePeriod:  50 * Microsecond,
		TimeReset:         55 * Microsecond,
		ByteReset:         10_000_000,
		Threshold:         5,
		AIRate:            40e6,
		HAIRate:           200e6,
		MinTimeBetweenCNP: 50 * Microsecond,
		ClampTarget:       true,
	}
}

// rpState is one QP's reaction point.
type rpState struct {
	rc, rt    float64 // current and target rate, bits/s
	alpha     float64
	alphaT    Time // alpha is up to date for periods before this time
	seenCNP   bool
	lastCut   Time
	cut       bool
	tCount    int
	bcCount   int
	bytes     int64
	timerGen  uint32
	timerLive bool
	timerInc  bool // the last increase came from the timer
	// rc integrated over time since rcFrom (bits/s x ps), for the
	// interval-mean rate the samples report
	rcInt       float64
	rcT, rcFrom Time
}

// setRC sets the current rate at now, integrating the old one.
func (r *rpState) setRC(rc float64, now Time) {
	r.rcInt += r.rc * float64(now-r.rcT)
	r.rcT = now
	r.rc = rc
}

// meanRC is the mean current rate since the last call (or the flow's
// start, which resets rcT and rcFrom) up to now.
func (r *rpState) meanRC(now Time) float64 {
	r.setRC(r.rc, now)
	m := r.rc
	if now > r.rcFrom {
		m = r.rcInt / float64(now-r.rcFrom)
	}
	r.rcInt, r.rcFrom = 0, now
	return m
}

// onCNP is the RP's reaction to a CNP at now; it reports whether the rate
// was cut (the caller then restarts the increase timer).
func (s *Sim) onCNP(f *flow, now Time) bool {
	p := &s.dc
	r := &f.rp
	if !r.seenCNP {
		r.seenCNP = true
		r.alpha = p.InitialAlpha
		r.alphaT = now
		if p.RateOnFirstCNP > 0 {
			// rate_to_set_on_first_cnp: the first CNP sets the rate
			// instead of cutting it.
			r.cut, r.lastCut = true, now
			r.rt = r.rc
			r.setRC(max(min(p.RateOnFirstCNP, f.line), p.MinRate), now)
			r.tCount, r.bcCount, r.bytes = 0, 0, 0
			return true
		}
	} else if k := int64((now - r.alphaT) / p.AlphaPeriod); k > 0 {
		// periods without a CNP: alpha decays by (1-g) each
		r.alpha *= math.Pow(1-p.G, float64(k))
		r.alphaT += Time(k) * p.AlphaPeriod
	}
	r.alpha = (1-p.G)*r.alpha + p.G
	if r.alpha > 1 {
		r.alpha = 1
	}
	if r.cut && now-r.lastCut < p.RateReducePeriod {
		return false
	}
	r.cut = true
	r.lastCut = now
	if p.ClampTarget || p.ClampTargetAfterTimeInc && r.timerInc {
		r.rt = r.rc
	}
	r.setRC(max(r.rc*max(1-r.alpha/2, p.MinDecFactor), p.MinRate), now)
	r.tCount, r.bcCount, r.bytes = 0, 0, 0
	return true
}

// increase is one rate-increase event (timer or byte counter).
func (s *Sim) increase(f *flow, timer bool) {
	p := &s.dc
	r := &f.rp
	r.timerInc = timer
	bc := r.bcCount
	if p.ByteReset <= 0 {
		bc = r.tCount // no byte counter: the timer alone moves the stages
	}
	lo, hi := min(r.tCount, bc), max(r.tCount, bc)
	switch {
	case hi < p.Threshold: // fast recovery
	case lo > p.Threshold: // hyper increase
		r.rt += float64(lo-p.Threshold) * p.HAIRate
	default: // additive increase
		r.rt += p.AIRate
	}
	r.rt = min(r.rt, f.line)
	r.setRC(min((r.rt+r.rc)/2, f.line), s.now)
	if f.active {
		s.wake(f.path[0], max(s.nextSend(f), s.now))
	}
}

// onSent runs the RP byte counter after f sent wire bytes.
func (s *Sim) onSent(f *flow, wire int64) {
	r := &f.rp
	if !r.cut || r.rc >= f.line || s.dc.ByteReset <= 0 {
		return
	}
	r.bytes += wire
	for r.bytes >= s.dc.ByteReset {
		r.bytes -= s.dc.ByteReset
		r.bcCount++
		s.increase(f, false)
	}
}
