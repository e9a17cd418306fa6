package validate

import (
	"fmt"
	"strings"
)

// The RDMA hw_counters of RoCE RC loss recovery (mlx5: drivers/infiniband/
// hw/mlx5/counters.c, out_of_seq_q_cnts and retrans_q_cnts; meanings from
// NVIDIA's "Understanding mlx5 Linux Counters"):
//
//	requester, one per recovery it started:
//	  packet_seq_err         NAK sequence errors received (the responder saw a gap)
//	  implied_nak_seq_err    a later response implied a lost one (reads, atomics)
//	  local_ack_timeout_err  the QP's local ACK timer expired (4.096 us x 2^timeout)
//	  rnr_nak_retry_err      RNR NAKs received (the responder had no receive WQE)
//	responder, one per packet that crossed the fabric for nothing:
//	  out_of_sequence        packets received after a gap (go-back-N discards them)
//	  duplicate_request      packets received again (resent after a timeout)
var (
	recoveryCounters = []string{"packet_seq_err", "implied_nak_seq_err", "local_ack_timeout_err", "rnr_nak_retry_err"}
	wastedCounters   = []string{"out_of_sequence", "duplicate_request"}
)

// lossyPrio is the priority of the RoCE class when it has no PFC (policy
// mode lossy, or a RoCE class written with lossless: false) or when the
// switches send no pause (semi-lossless: they drop and RoCE RC recovers),
// else -1.
func (v verdictInput) lossyPrio() int {
	if v.policy == nil {
		return -1
	}
	rc := v.policy.RoCEClass()
	if rc == nil || rc.Lossless && v.policy.Mode.SwitchSendsPause() {
		return -1
	}
	return rc.Priority
}

// switchLossless are the priorities whose switch queues must not drop:
// the lossless ones where switches send pause; none in semi-lossless,
// whose switches honour the hosts' pause but never send it and so drop
// by design (judged by validation.lossy, as lossy's are).
func (v verdictInput) switchLossless() map[int]bool {
	if v.policy == nil || !v.policy.Mode.SwitchSendsPause() {
		return map[int]bool{}
	}
	return v.lossless()
}

// ecnPrios are the priorities whose ECN marking drives DCQCN: the lossless
// classes and the RoCE class that have ECN. None in pfc-only mode (PFC
// without ECN), where the ECN -> CNP evidence is not expected.
func (v verdictInput) ecnPrios() map[int]bool {
	m := map[int]bool{}
	if v.policy == nil {
		return m
	}
	rc := v.policy.RoCEClass()
	for _, c := range v.policy.Classes {
		if c.ECN != nil && (c.Lossless || rc != nil && c.Name == rc.Name) {
			m[c.Priority] = true
		}
	}
	return m
}

// noECNReason is why the ECN checks are skipped without ECN on RoCE.
const noECNReason = "no RoCE class marks ECN (PFC without ECN, policy.mode pfc-only): DCQCN has nothing to react to"

// ethtoolTarget is the ethtool counter target of the NIC behind an RDMA
// target ("host/rdma/dev/port"): the intent's NIC with that RDMA device,
// else the host's only ethtool target.
func (v verdictInput) ethtoolTarget(rdma string) string {
	parts := strings.Split(rdma, "/")
	if len(parts) < 3 {
		return ""
	}
	host, dev := parts[0], parts[2]
	for _, h := range v.hosts {
		if h.Name != host {
			continue
		}
		for _, n := range h.NICs {
			if n.RDMADevice == dev {
				return host + "/ethtool/" + n.Interface
			}
		}
	}
	only := sortedTargets(v.deltas, func(t string) bool { return strings.HasPrefix(t, host+"/ethtool/") })
	if len(only) == 1 {
		return only[0]
	}
	return ""
}

func pct(x float64) string { return fmt.Sprintf("%.2f%%", 100*x) }

// lossyChecks judges a RoCE class without PFC by validation.lossy:
//
//   - switch.lossy_drop_rate per switch port: qN.drops of the RoCE queue
//     over the packets offered to it (sent + dropped), against maxDropRate;
//   - host.rdma.retransmission_rate per RDMA port: the recoveries its
//     requester started (recoveryCounters) over the RoCE packets the NIC
//     sent (ethtool tx_prioN_packets), against maxRetransmissionRate;
//   - lossy.goodput_loss for the run: packets sent again (switch drops of
//     the RoCE queue plus what responders discarded, wastedCounters) over
//     the RoCE packets the hosts sent, against maxGoodputLoss. Under
//     go-back-N every such packet is resent; with selective repeat the
//     responder keeps out-of-sequence packets, so this is an upper bound.
func lossyChecks(v verdictInput) []Check {
	p := v.lossyPrio()
	var out []Check
	var wasted, sent, swDrops, discarded int64
	var sentSeen bool

	sw := sortedTargets(v.deltas, func(t string) bool { return !strings.Contains(t, "/rdma/") && !strings.Contains(t, "/ethtool/") })
	dn, tn := fmt.Sprintf("q%d.%s", p, ctrDrops), fmt.Sprintf("q%d.%s", p, ctrTxPackets)
	limit := "<= " + pct(v.lossy.MaxDropRate) + " (validation.lossy.maxDropRate)"
	for _, t := range sw {
		m := v.deltas[t]
		drops, hasDrops := m[dn]
		tx, hasTx := m[tn]
		c := Check{Name: "switch.lossy_drop_rate", Target: t, Limit: limit}
		switch {
		case !hasDrops:
			c.Status, c.Message = Skip, fmt.Sprintf("no %s counter for the RoCE queue was returned", dn)
		case !hasTx || tx+drops == 0:
			c.Status, c.Observed = Skip, fmt.Sprintf("%s=%d", dn, drops)
			c.Message = fmt.Sprintf("no packets counted on the RoCE queue (%s) to take the drop rate of", tn)
		default:
			rate := float64(drops) / float64(tx+drops)
			c.Observed = fmt.Sprintf("%s=%d of %d (%s)", dn, drops, tx+drops, pct(rate))
			c.Status = Pass
			if rate > v.lossy.MaxDropRate {
				c.Status, c.Message = Fail, "the lossy RoCE queue dropped more than the intent's budget"
			}
		}
		swDrops += drops
		out = append(out, c)
	}

	rdma := sortedTargets(v.deltas, func(t string) bool { return strings.Contains(t, "/rdma/") })
	txn := fmt.Sprintf("tx_prio%d_packets", p)
	limit = "<= " + pct(v.lossy.MaxRetransmissionRate) + " (validation.lossy.maxRetransmissionRate)"
	for _, t := range rdma {
		m := v.deltas[t]
		for _, n := range wastedCounters {
			discarded += m[n]
		}
		c := Check{Name: "host.rdma.retransmission_rate", Target: t, Limit: limit}
		if !has(m, recoveryCounters...) {
			c.Status, c.Message = Skip, "the device reports none of "+strings.Join(recoveryCounters, ", ")
			out = append(out, c)
			continue
		}
		var events int64
		for _, n := range recoveryCounters {
			events += m[n]
		}
		moved := listNonZero(m, recoveryCounters...)
		if moved == "" {
			moved = "no recoveries"
		}
		et := v.ethtoolTarget(t)
		tx, ok := v.deltas[et][txn]
		if ok {
			sent += tx
			sentSeen = true
		}
		switch {
		case !ok || tx == 0:
			c.Status, c.Observed = Skip, moved
			c.Message = fmt.Sprintf("no %s counted on the NIC's interface (%s) to take the rate of", txn, orNone(et))
		default:
			rate := float64(events) / float64(tx)
			c.Observed = fmt.Sprintf("%s: %d per %d packets sent (%s)", moved, events, tx, pct(rate))
			c.Status = Pass
			if rate > v.lossy.MaxRetransmissionRate {
				c.Status, c.Message = Fail, "RoCE recovered from losses more often than the intent's budget"
			}
		}
		out = append(out, c)
	}

	wasted = swDrops + discarded
	c := Check{Name: "lossy.goodput_loss", Limit: "<= " + pct(v.lossy.MaxGoodputLoss) + " (validation.lossy.maxGoodputLoss)"}
	switch {
	case !sentSeen || sent == 0:
		c.Status = Skip
		c.Message = fmt.Sprintf("no %s was read on the RDMA hosts' interfaces: the goodput lost to retransmission cannot be taken", txn)
	default:
		loss := float64(wasted) / float64(sent)
		c.Observed = fmt.Sprintf("%s: %d of %d RoCE packets sent again (%d switch drops, %d discarded by receivers)", pct(loss), wasted, sent, swDrops, discarded)
		c.Status, c.Message = Pass, "goodput lost to retransmission"
		if loss > v.lossy.MaxGoodputLoss {
			c.Status, c.Message = Fail, "retransmission cost more goodput than the intent's budget"
		}
	}
	out = append(out, c)
	return out
}
