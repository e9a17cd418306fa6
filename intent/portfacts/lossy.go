package portfacts

import (
	"time"

	"github.com/fabricctl/fabricctl/intent"
)

// The DCQCN timers the lossy incast facts assume: mlx5's defaults
// (ConnectX firmware, `mlxconfig q`: MIN_TIME_BETWEEN_CNPS 4 us,
// RATE_REDUCE_MONITOR_PERIOD 4 us; upstream drivers/infiniband/hw/mlx5/
// cong.c np_min_time_between_cnps and rp_rate_reduce_monitor_period), the
// same figures internal/sim.MLX5Defaults simulates with.
const (
	MLX5MinTimeBetweenCNPs    = 4 * time.Microsecond
	MLX5RateReduceMonitorTime = 4 * time.Microsecond
)

// propagation is light in fibre: 5 ns per metre (the headroom models' figure).
const propagation = 5 * time.Nanosecond

// DCQCNReaction is the time from a switch queue's first ECN mark to the
// senders' first rate cut, as the lossy incast facts take it: the round
// trip over the port's cable (the mark travels to the receiver, its CNP
// back) plus the NIC's CNP pacing interval and rate-reduce period: the
// intent's policy.dcqcn minTimeBetweenCNPs and rateReduceMonitorPeriod
// (what host apply writes), mlx5's defaults where it sets none. It is a
// lower bound: more hops, a busy CNP queue and the NIC's own processing
// only make it longer.
func DCQCNReaction(pol *intent.Policy, cableMeters float64) time.Duration {
	cnp, cut := DCQCNTimers(pol)
	rtt := 2 * time.Duration(cableMeters*float64(propagation))
	return rtt + cnp + cut
}

// DCQCNTimers are the hosts' CNP interval (np_min_time_between_cnps) and
// rate-reduce period (rp_rate_reduce_monitor_period): policy.dcqcn's,
// mlx5's defaults where it sets none.
func DCQCNTimers(pol *intent.Policy) (cnpInterval, rateReduce time.Duration) {
	cnpInterval, rateReduce = MLX5MinTimeBetweenCNPs, MLX5RateReduceMonitorTime
	if d := pol.DCQCN; d != nil {
		if d.MinTimeBetweenCNPs != nil {
			cnpInterval = *d.MinTimeBetweenCNPs
		}
		if d.RateReduceMonitorPeriod != nil {
			rateReduce = *d.RateReduceMonitorPeriod
		}
	}
	return cnpInterval, rateReduce
}

// Incast is what an incast of Senders flows at line rate into one switch
// port puts in that port's queue before DCQCN slows them, in lossy mode
// (no PFC: what the buffer cannot hold is dropped).
type Incast struct {
	Senders int
	// Reaction is DCQCNReaction over the port's cable.
	Reaction time.Duration
	// Burst is what arrives beyond what the port drains during Reaction:
	// (Senders-1) x line rate x Reaction, in bytes.
	Burst int64
	// Need is the queue the incast builds: the ECN Kmin (marking starts
	// there) plus Burst. A port buffer below it drops.
	Need int64
}

// IncastAt derives the incast facts of port p (its speed and cable) for
// senders flows and the ECN Kmin kmin, with the hosts' DCQCN timers of pol.
func IncastAt(pol *intent.Policy, p intent.Port, senders int, kmin int64) Incast {
	in := Incast{Senders: senders, Reaction: DCQCNReaction(pol, p.CableMeters)}
	if senders > 1 && p.Speed > 0 {
		in.Burst = int64(float64(senders-1) * float64(p.Speed) / 8 * in.Reaction.Seconds())
	}
	in.Need = kmin + in.Burst
	return in
}

// IncastSenders is the incast degree the facts assume: the validation
// block's incast (validation.incast), else every host but the receiver.
func IncastSenders(f *intent.Fabric) int {
	if f.Validation.Incast > 0 {
		return f.Validation.Incast
	}
	return len(f.Hosts) - 1
}
