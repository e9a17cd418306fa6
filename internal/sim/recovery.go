package sim

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/fabricctl/fabricctl/intent"
)

// Recovery is how a RoCE RC sender recovers lost packets on a class that is
// not lossless (a lossless class keeps today's model: a drop there is a
// failure of the design, not something to recover from).
type Recovery string

// Loss recovery modes of a RoCE RC QP.
const (
	// RecoveryGoBackN is ConnectX's default: on a NAK sequence error, or
	// when the local ACK timer expires, the requester resends everything
	// from the first unacknowledged PSN (IBTA vol. 1 9.7.5.1.3, 9.9.2);
	// the responder discards every packet after a gap until the missing
	// one arrives and NAKs the gap once (as Soft-RoCE does, rxe_resp.c
	// check_psn: sent_psn_nak).
	RecoveryGoBackN Recovery = "go-back-n"
	// RecoverySelectiveRepeat resends only the lost packets: the responder
	// places out-of-order packets and names each new gap in its NAK
	// (ConnectX's ROCE_ACCL selective_repeat_forced_en, the intent's
	// policy.nicAccelerations.selectiveRepeat). On a timeout the requester
	// still goes back to the first unacknowledged PSN; the responder
	// discards what it already holds.
	RecoverySelectiveRepeat Recovery = "selective-repeat"
)

// Recoveries lists the modes, default first.
func Recoveries() []Recovery { return []Recovery{RecoveryGoBackN, RecoverySelectiveRepeat} }

// ParseRecovery reads a mode name ("" is the default, go-back-N).
func ParseRecovery(s string) (Recovery, error) {
	switch Recovery(s) {
	case "", RecoveryGoBackN:
		return RecoveryGoBackN, nil
	case RecoverySelectiveRepeat:
		return RecoverySelectiveRepeat, nil
	}
	return "", fmt.Errorf("recovery %q: want go-back-n or selective-repeat", s)
}

// RecoveryFor is the loss recovery the intent leaves the hosts' NICs in:
// selective repeat where policy.nicAccelerations.selectiveRepeat is true
// (ROCE_ACCL selective_repeat_forced_en, which host plan sets with mlxreg),
// else ConnectX's default, go-back-N.
func RecoveryFor(p *intent.Policy) Recovery {
	if a := p.NICAccelerations; a != nil && a.SelectiveRepeat != nil && *a.SelectiveRepeat {
		return RecoverySelectiveRepeat
	}
	return RecoveryGoBackN
}

// DefaultAckTimeoutExp is the QP's local ACK timeout exponent perftest sets
// (perftest's DEF_QP_TIME 14, "-u, --qp-timeout: timeout value is 4 usec *
// 2 ^(timeout), default 14"): 4.096 us x 2^14 = 67.1 ms.
const DefaultAckTimeoutExp = 14

// DefaultRetryCount is the transport retries before the QP goes to the
// error state (perftest sets retry_cnt 7, the largest IBTA allows).
const DefaultRetryCount = 7

// AckTimeout is the local ACK timeout of exponent exp: 4.096 us x 2^exp
// (IBTA vol. 1, 9.7.6.1.3; exp 0 means "infinite" there, here the
// timer never fires). exp is 0-31.
func AckTimeout(exp int) Time {
	if exp <= 0 || exp > 31 {
		return 0
	}
	return 4096 * Nanosecond << uint(exp)
}

// sendWindow is the most payload a QP has sent and not had acknowledged:
// perftest's bandwidth tests post at most tx-depth work requests of the
// message size before a completion (linux-rdma/perftest
// perftest_parameters.h: DEF_TX_BW 128, DEF_SIZE_BW 65536), and a
// request completes only when its last packet is acknowledged: 8 MiB. It
// bounds what a QP sends past a loss it is waiting to recover (and what a
// selective-repeat responder holds out of order).
const sendWindow = 128 * 65536

// ackCoalesce is how many in-order packets the responder takes before it
// sends a cumulative ACK (and at the last packet of a message). A model
// choice: ConnectX coalesces ACKs by a rule nothing here can read; 16
// packets is 64 KiB at the 4096 B path MTU, far inside any ACK timeout.
const ackCoalesce = 16

// rcState is one RC QP's transport state under recovery: the requester's
// (sender's) PSN window and timer, and the responder's expected PSN.
type rcState struct {
	// requester
	npkts  int64   // packets of the message; 0 = unbounded
	window int64   // sendWindow in packets
	nxt    int64   // next PSN to send (below high while going back)
	high   int64   // highest PSN sent + 1
	una    int64   // first PSN not acknowledged
	retx   []int64 // selective repeat: PSNs to resend, in NAK order
	// local ACK timer (lazy: progress moves the deadline, one event is
	// pending at a time)
	deadline  Time
	timerLive bool
	timerGen  uint32
	retries   int  // consecutive timeouts without progress
	failed    bool // retries exceeded: the QP went to the error state
	// responder
	epsn    int64
	nakSent bool
	since   int            // in-order packets since the last ACK
	rhigh   int64          // selective repeat: highest PSN received + 1
	have    map[int64]bool // selective repeat: received beyond epsn
	// counters
	retxPkts, retxBytes int64 // wire bytes resent
	naks, timeouts, oos int64
	dups                int64 // duplicates the responder received
	discarded           int64 // wire bytes the responder discarded
}

// recovers reports whether f recovers losses: its class is not lossless,
// or the mode has switches drop it by design (semi-lossless: they honour
// pause but never send it).
func (s *Sim) recovers(f *flow) bool { return !s.net.classes[f.prio].lossless || !s.net.switchPause }

func (s *Sim) initRecovery(f *flow) {
	if !s.recovers(f) {
		return
	}
	mtu := int64(s.net.mtuPayload)
	f.rc = &rcState{window: (sendWindow + mtu - 1) / mtu}
	if f.size > 0 {
		f.rc.npkts = (f.size + mtu - 1) / mtu
	}
}

// rcHasData reports whether f has a packet to send: a loss to resend or
// new data.
func (r *rcState) hasData() bool {
	if r.failed {
		return false
	}
	if len(r.retx) > 0 || r.nxt < r.high {
		return true
	}
	return (r.npkts == 0 || r.high < r.npkts) && r.high-r.una < r.window
}

// rcPayload is the payload of PSN psn of f's message.
func (s *Sim) rcPayload(f *flow, psn int64) int64 {
	mtu := int64(s.net.mtuPayload)
	if f.size > 0 {
		return min(mtu, f.size-psn*mtu)
	}
	return mtu
}

// rcNext picks the PSN f sends now, and whether it is a retransmission.
func (s *Sim) rcNext(f *flow) (psn int64, retx bool) {
	r := f.rc
	for len(r.retx) > 0 {
		psn = r.retx[0]
		r.retx = r.retx[1:]
		if psn >= r.una && psn < r.nxt {
			return psn, true
		}
	}
	psn = r.nxt
	r.nxt++
	if psn < r.high {
		return psn, true
	}
	r.high = psn + 1
	return psn, false
}

// rcSent books a data packet f just put on the wire and arms its timer.
func (s *Sim) rcSent(f *flow, pkt *packet, retx bool) {
	r := f.rc
	if retx {
		r.retxPkts++
		r.retxBytes += int64(pkt.wire)
	}
	if !r.timerLive {
		s.rcArm(f)
	}
}

func (s *Sim) rcArm(f *flow) {
	r := f.rc
	rto := s.ackTimeout()
	if rto <= 0 {
		return
	}
	r.timerLive = true
	r.timerGen++
	r.deadline = s.now + rto
	s.at(r.deadline, event{kind: evRetxTimer, f: f, gen: r.timerGen})
}

func (s *Sim) ackTimeout() Time {
	if s.opt.AckTimeout > 0 {
		return s.opt.AckTimeout
	}
	if s.opt.AckTimeout < 0 {
		return 0
	}
	return AckTimeout(DefaultAckTimeoutExp)
}

// rcTimer is f's local ACK timer: when the deadline passed without
// progress, the requester goes back to the first unacknowledged PSN.
func (s *Sim) rcTimer(f *flow, gen uint32) {
	r := f.rc
	if r == nil || gen != r.timerGen || !r.timerLive {
		return
	}
	if s.now < r.deadline {
		s.at(r.deadline, event{kind: evRetxTimer, f: f, gen: gen})
		return
	}
	r.timerLive = false
	if r.una >= r.high {
		return
	}
	r.timeouts++
	r.retries++
	if r.retries > DefaultRetryCount {
		// IBTA: retry count exceeded, the QP goes to the error state and
		// the message fails (its FCT stays unknown)
		r.failed = true
		return
	}
	r.nxt = r.una
	r.retx = r.retx[:0]
	s.rcArm(f)
	s.tryTx(f.path[0])
}

// rcRecv is the responder: in-order packets are taken and acknowledged
// every ackCoalesce packets and at the message's end; a gap is NAKed.
func (s *Sim) rcRecv(f *flow, pkt *packet) {
	r := f.rc
	psn := pkt.psn
	switch {
	case psn == r.epsn:
		s.rcTake(f, pkt)
		r.epsn++
		if r.have != nil {
			for r.have[r.epsn] {
				delete(r.have, r.epsn)
				r.epsn++
			}
		}
		r.nakSent = false
		r.since++
		if r.npkts > 0 && r.epsn >= r.npkts {
			if !f.done {
				f.done = true
				f.finish = s.now
			}
			s.rcReply(f, pktAck, r.epsn, 0, 0)
			r.since = 0
		} else if r.since >= ackCoalesce {
			s.rcReply(f, pktAck, r.epsn, 0, 0)
			r.since = 0
		}
	case psn < r.epsn || r.have != nil && r.have[psn]:
		// a duplicate (resent after a timeout): discarded and acknowledged
		// again, as IBTA requires of a responder
		r.dups++
		s.rcDiscard(r, pkt)
		s.rcReply(f, pktAck, r.epsn, 0, 0)
	default:
		r.oos++
		if s.opt.Recovery == RecoverySelectiveRepeat {
			if r.have == nil {
				r.have = map[int64]bool{}
			}
			r.have[psn] = true
			lo := max(r.rhigh, r.epsn)
			r.rhigh = max(r.rhigh, psn+1)
			s.rcTake(f, pkt)
			if psn > lo {
				s.rcReply(f, pktNak, r.epsn, lo, int32(psn-lo))
			}
			return
		}
		s.rcDiscard(r, pkt)
		if !r.nakSent {
			r.nakSent = true
			s.rcReply(f, pktNak, r.epsn, r.epsn, 0)
		}
	}
}

// rcTake delivers a packet's payload to the receiver.
func (s *Sim) rcTake(f *flow, pkt *packet) {
	f.recv += int64(pkt.payload)
	f.recvWindow += int64(pkt.payload)
	s.deliveredB += int64(pkt.wire)
	s.deliveredWindow += int64(pkt.wire)
	s.free(pkt)
}

func (s *Sim) rcDiscard(r *rcState, pkt *packet) {
	r.discarded += int64(pkt.wire)
	s.discardedB += int64(pkt.wire)
	s.free(pkt)
}

// rcReply sends an ACK (all PSNs below psn received) or a NAK sequence
// error (psn as for an ACK; with selective repeat the n PSNs from gap are
// missing) back to the requester on the flow's priority.
func (s *Sim) rcReply(f *flow, kind pktKind, psn, gap int64, n int32) {
	a := s.newPacket()
	a.f, a.kind, a.prio, a.wire, a.psn, a.gap, a.nak = f, kind, int8(f.prio), ackWire, psn, gap, n
	s.sentB += ackWire
	s.enqueue(f.rpath[0], f.prio, a)
	s.tryTx(f.rpath[0])
}

// rcOnReply is the requester receiving an ACK or NAK.
func (s *Sim) rcOnReply(f *flow, pkt *packet) {
	r := f.rc
	psn, gap, kind, n := pkt.psn, pkt.gap, pkt.kind, pkt.nak
	s.deliveredB += int64(pkt.wire)
	s.free(pkt)
	if psn > r.una {
		blocked := r.high-r.una >= r.window
		r.una = psn
		r.retries = 0
		if r.nxt < r.una {
			r.nxt = r.una
		}
		if blocked {
			s.tryTx(f.path[0]) // the window opened
		}
	}
	if r.npkts > 0 && r.una >= r.npkts && f.acked == 0 {
		f.acked = s.now
	}
	if kind == pktNak {
		r.naks++
		if s.opt.Recovery == RecoverySelectiveRepeat && n > 0 {
			for q := gap; q < gap+int64(n); q++ {
				r.retx = append(r.retx, q)
			}
		} else if r.nxt > psn {
			r.nxt = psn
		}
		s.tryTx(f.path[0])
	}
	if r.una >= r.high {
		r.timerLive = false
	} else if r.timerLive {
		r.deadline = s.now + s.ackTimeout()
	} else {
		s.rcArm(f)
	}
}

// FCTSummary is the flow completion times of the flows with a size.
type FCTSummary struct {
	Flows    int  `json:"flows"`    // flows with a size
	Finished int  `json:"finished"` // acknowledged by the end of the run
	Median   Time `json:"medianPs"`
	P99      Time `json:"p99Ps"`
	Max      Time `json:"maxPs"`
	// A percentile that falls on a flow not finished by the end of the run
	// is that flow's time so far, a lower bound: these say so.
	MedianAtLeast bool `json:"medianAtLeast,omitempty"`
	P99AtLeast    bool `json:"p99AtLeast,omitempty"`
	MaxAtLeast    bool `json:"maxAtLeast,omitempty"`
}

// Percentile is the nearest-rank percentile of v (p in (0, 100]): the
// smallest value with at least p % of the values at or below it. v need
// not be sorted; it is not changed. An empty v gives 0.
func Percentile(v []Time, p float64) Time {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[percentileRank(len(s), p)]
}

// percentileRank is the 0-based index of the nearest-rank percentile p of
// n sorted values.
func percentileRank(n int, p float64) int {
	k := int(float64(n)*p/100 + 0.999999999)
	return min(max(k, 1), n) - 1
}

type fctValue struct {
	t       Time
	atLeast bool
}

// fctSummary computes the percentiles over every flow with a size; a
// flow still running counts with its time so far (a lower bound).
func fctSummary(flows []FlowResult, end Time) FCTSummary {
	var v []fctValue
	var out FCTSummary
	for _, f := range flows {
		if f.Size <= 0 {
			continue
		}
		out.Flows++
		if f.Finished {
			out.Finished++
			v = append(v, fctValue{t: f.FCT})
		} else {
			v = append(v, fctValue{t: max(end-f.StartTime, 0), atLeast: true})
		}
	}
	if len(v) == 0 {
		return out
	}
	// unfinished flows sort after finished ones of the same time
	slices.SortStableFunc(v, func(a, b fctValue) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		return cmp.Compare(b2i(a.atLeast), b2i(b.atLeast))
	})
	m := v[percentileRank(len(v), 50)]
	p := v[percentileRank(len(v), 99)]
	x := v[len(v)-1]
	out.Median, out.MedianAtLeast = m.t, m.atLeast
	out.P99, out.P99AtLeast = p.t, p.atLeast
	out.Max, out.MaxAtLeast = x.t, x.atLeast
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// RecoveryResult sums the loss recovery of the flows that are not on a
// lossless class.
type RecoveryResult struct {
	Mode       Recovery `json:"mode"`
	AckTimeout Time     `json:"ackTimeoutPs"` // 0 = the timer never fires
	Flows      int      `json:"flows"`        // flows that recover losses
	// RetransmittedBytes and Packets are data frames resent (wire bytes).
	RetransmittedBytes   int64 `json:"retransmittedBytes"`
	RetransmittedPackets int64 `json:"retransmittedPackets"`
	NAKs                 int64 `json:"naks"`
	Timeouts             int64 `json:"timeouts"`
	OutOfSequence        int64 `json:"outOfSequence"`
	// Discarded is wire bytes the responders dropped: out of sequence
	// (go-back-N) or duplicates.
	Discarded int64 `json:"discardedBytes"`
	// GoodputLoss is the share of the recovering flows' data wire bytes
	// that were retransmissions (0..1).
	GoodputLoss float64 `json:"goodputLoss"`
	// Failed counts QPs that exceeded the retry count.
	Failed int `json:"failed"`
	// DataBytes is what the recovering flows sent (wire, resends included).
	DataBytes int64 `json:"dataBytes"`
}

func (s *Sim) recoveryResult(r *Result) {
	rr := RecoveryResult{Mode: s.opt.Recovery, AckTimeout: s.ackTimeout()}
	for i, f := range s.flows {
		if f.rc == nil {
			continue
		}
		rc := f.rc
		rr.Flows++
		rr.RetransmittedBytes += rc.retxBytes
		rr.RetransmittedPackets += rc.retxPkts
		rr.NAKs += rc.naks
		rr.Timeouts += rc.timeouts
		rr.OutOfSequence += rc.oos
		rr.Discarded += rc.discarded
		rr.DataBytes += f.dataWire
		if rc.failed {
			rr.Failed++
		}
		fr := &r.Flows[i]
		fr.Retransmitted, fr.NAKs, fr.Timeouts, fr.Failed = rc.retxBytes, rc.naks, rc.timeouts, rc.failed
		fr.OutOfSequence, fr.Duplicates = rc.oos, rc.dups
	}
	if rr.DataBytes > 0 {
		rr.GoodputLoss = float64(rr.RetransmittedBytes) / float64(rr.DataBytes)
	}
	r.Recovery = rr
}

// lossyVerdict is the verdict of a run whose flows are all on lossy
// classes: drops are expected, what they cost is the question.
func (r *Result) lossyVerdict() string {
	l := r.Totals(false)
	rc := r.Recovery
	v := fmt.Sprintf("lossy: %d drops recovered by %s, %s resent (%.1f%% of the data sent)", l.Drops, rc.Mode, bytesStr(rc.RetransmittedBytes), 100*rc.GoodputLoss)
	if rc.Failed > 0 {
		v += fmt.Sprintf("; %d QPs exceeded their retries", rc.Failed)
	}
	return v
}

// fctLine prints the flow completion times.
func (r *Result) fctLine(b *strings.Builder, md string) {
	c := r.FCT
	if c.Flows == 0 {
		return
	}
	fmt.Fprintf(b, "%sflow completion: %d of %d finished; median %s, p99 %s, max %s\n", md, c.Finished, c.Flows,
		fctStr(c.Median, c.MedianAtLeast, c.Flows), fctStr(c.P99, c.P99AtLeast, c.Flows), fctStr(c.Max, c.MaxAtLeast, c.Flows))
}

// recoveryLine prints the loss recovery of the flows on lossy classes.
func (r *Result) recoveryLine(b *strings.Builder, md string) {
	rc := r.Recovery
	if rc.Flows == 0 {
		return
	}
	to := "never"
	if rc.AckTimeout > 0 {
		to = dur(rc.AckTimeout)
	}
	l := r.Totals(false)
	fmt.Fprintf(b, "%slossy: %d flows recover by %s (local ACK timeout %s); %d drops, resent %s in %d packets (%.1f%% of their data bytes), %d NAKs, %d timeouts, %d out of sequence, %s discarded by receivers",
		md, rc.Flows, rc.Mode, to, l.Drops, bytesStr(rc.RetransmittedBytes), rc.RetransmittedPackets, 100*rc.GoodputLoss, rc.NAKs, rc.Timeouts, rc.OutOfSequence, bytesStr(rc.Discarded))
	if rc.Failed > 0 {
		fmt.Fprintf(b, "; %d QPs exceeded their retries", rc.Failed)
	}
	b.WriteString("\n")
}

// HostRDMACounters returns what the flows' recovery would move in each
// host's RDMA hw_counters, under mlx5's names (drivers/infiniband/hw/mlx5/
// counters.c): the sender's packet_seq_err (NAKs received) and
// local_ack_timeout_err, the receiver's out_of_sequence and
// duplicate_request. A host of a flow on a lossless class gets its
// counters at 0. The map is host -> counter -> value.
func (r *Result) HostRDMACounters() map[string]map[string]int64 {
	out := map[string]map[string]int64{}
	host := func(h string) map[string]int64 {
		m := out[h]
		if m == nil {
			m = map[string]int64{"packet_seq_err": 0, "local_ack_timeout_err": 0, "out_of_sequence": 0, "duplicate_request": 0}
			out[h] = m
		}
		return m
	}
	for _, f := range r.Flows {
		src, dst := host(f.From), host(f.To)
		src["packet_seq_err"] += f.NAKs
		src["local_ack_timeout_err"] += f.Timeouts
		dst["out_of_sequence"] += f.OutOfSequence
		dst["duplicate_request"] += f.Duplicates
	}
	return out
}
