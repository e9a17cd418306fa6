package validate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/plan"
)

// ReadbackChecks turns a plan of the live state against the intent into
// checks: one failed check per drifted path, one error per target that could
// not be read, one pass per target in sync.
func ReadbackChecks(p *plan.Plan) []Check {
	var out []Check
	for _, t := range p.Targets {
		target := t.Kind + " " + t.Name
		switch {
		case t.Error != "":
			out = append(out, Check{Name: "readback", Phase: PhaseReadback, Target: target, Status: Error, Message: t.Error})
		case !t.HasDrift():
			out = append(out, Check{Name: "readback", Phase: PhaseReadback, Target: target, Status: Pass, Message: "configuration matches the intent"})
		}
		// What the target lacks that apply cannot write (a watchdog never
		// started, a missing subinterface) fails as drift does.
		for _, l := range t.Lacks {
			out = append(out, Check{Name: "readback.lacks", Phase: PhaseReadback, Target: target + " " + l.What, Status: Fail,
				Message: l.Reason + "; fix: " + l.Fix})
		}
		// Drift in the settings that could be read is reported even when
		// another one could not: a host whose NIC has no DCB (a VF, the
		// soft-RoCE VM's virtio_net) still has its MTU and RDMA-CM ToS read.
		for _, c := range t.Changes {
			if c.Action == plan.NoOp {
				continue
			}
			out = append(out, Check{Name: "readback.drift", Phase: PhaseReadback, Target: target + " " + c.Path, Status: Fail,
				Observed: orNone(c.Before), Limit: orNone(c.After), Message: strings.TrimSpace(c.Action.String() + " needed: " + c.Reason)})
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// verdictInput is what the counter rules look at.
type verdictInput struct {
	policy    *intent.Policy
	deltas    map[string]map[string]int64
	incastRan bool
	// lossy holds the budgets of a RoCE class without PFC
	// (validation.lossy); hosts map RDMA devices to their interfaces.
	lossy intent.LossyValidation
	hosts []intent.Host
}

func (v verdictInput) lossless() map[int]bool {
	m := map[int]bool{}
	for _, p := range v.policy.LosslessPriorities() {
		m[p] = true
	}
	return m
}

func sortedTargets(d map[string]map[string]int64, match func(string) bool) []string {
	var out []string
	for t := range d {
		if match(t) {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

// listNonZero renders "a=1 b=2" for the named counters that moved, or "".
func listNonZero(m map[string]int64, names ...string) string {
	var parts []string
	for _, n := range names {
		if v := m[n]; v != 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", n, v))
		}
	}
	return strings.Join(parts, " ")
}

func has(m map[string]int64, names ...string) bool {
	for _, n := range names {
		if _, ok := m[n]; ok {
			return true
		}
	}
	return false
}

// ecnCNPCounters are the RDMA hw_counters that prove ECN -> CNP -> rate
// reduction under incast (DOMAIN.md section 5).
var ecnCNPCounters = []string{"np_ecn_marked_roce_packets", "np_cnp_sent", "rp_cnp_handled"}

// CounterChecks applies DOMAIN.md section 5 to counter deltas.
func counterChecks(v verdictInput) []Check {
	var out []Check
	// A RoCE class without PFC recovers its drops: its sequence errors and
	// ACK timeouts are judged against validation.lossy (lossyChecks), not
	// against zero.
	lossyRoCE := v.lossyPrio() >= 0
	lossless := v.lossless()
	switchLossless := v.switchLossless()
	add := func(c Check) {
		switch {
		case lossyRoCE && (c.Name == "host.rdma.seq_errors" || c.Name == "host.rdma.ack_timeouts"):
			return
		case c.Name == "switch.lossless_drops" && c.Status == Skip && len(switchLossless) == 0:
			return // no lossless queue to have counters for
		}
		c.Phase = PhaseCounters
		out = append(out, c)
	}

	// Host RDMA hw_counters.
	rdma := sortedTargets(v.deltas, func(t string) bool { return strings.Contains(t, "/rdma/") })
	var ecnMarked, cnpSent, cnpHandled int64
	for _, t := range rdma {
		m := v.deltas[t]
		// mlx5: out_of_sequence, packet_seq_err, implied_nak_seq_err.
		// Soft-RoCE (rxe_hw_counters.c since Linux 4.19): out_of_seq_request
		// is the responder's PSN gap (rxe_resp.c check_psn), rcvd_seq_err the
		// requester's received NAK-sequence-error (rxe_comp.c); read live in
		// the soft-RoCE VM (internal/rdmavm).
		seq := []string{"out_of_sequence", "packet_seq_err", "implied_nak_seq_err", "out_of_seq_request", "rcvd_seq_err"}
		// Devices without these counters give no evidence either way: a
		// skip that says so, not silence.
		if has(m, seq...) {
			c := Check{Name: "host.rdma.seq_errors", Target: t, Status: Pass, Limit: "0", Observed: "0"}
			if s := listNonZero(m, seq...); s != "" {
				c.Status, c.Observed, c.Message = Fail, s, "packets were lost or reordered on the lossless class"
			}
			add(c)
		} else {
			add(Check{Name: "host.rdma.seq_errors", Target: t, Status: Skip, Message: "the device reports none of " + strings.Join(seq, ", ")})
		}
		if has(m, "local_ack_timeout_err") {
			c := Check{Name: "host.rdma.ack_timeouts", Target: t, Status: Pass, Limit: "0", Observed: fmt.Sprint(m["local_ack_timeout_err"])}
			if m["local_ack_timeout_err"] != 0 {
				c.Status, c.Message = Fail, "the transport timed out waiting for ACKs (drops or a PFC deadlock)"
			}
			add(c)
		} else {
			add(Check{Name: "host.rdma.ack_timeouts", Target: t, Status: Skip, Message: "the device does not report local_ack_timeout_err"})
		}
		if has(m, "rp_cnp_ignored") {
			c := Check{Name: "host.rdma.cnp_ignored", Target: t, Status: Pass, Limit: "0", Observed: fmt.Sprint(m["rp_cnp_ignored"])}
			if m["rp_cnp_ignored"] != 0 {
				c.Status, c.Message = Fail, "CNPs arrived but congestion control is off on that priority"
			}
			add(c)
		}
		ecnMarked += m["np_ecn_marked_roce_packets"]
		cnpSent += m["np_cnp_sent"]
		cnpHandled += m["rp_cnp_handled"]
	}
	ecn := Check{Name: "host.rdma.ecn_cnp", Observed: fmt.Sprintf("np_ecn_marked_roce_packets=%d np_cnp_sent=%d rp_cnp_handled=%d", ecnMarked, cnpSent, cnpHandled), Limit: "all > 0 under incast"}
	// A counter no device reports (Soft-RoCE, non-mlx5 drivers) is missing
	// evidence, not a zero.
	var missing []string
	for _, n := range ecnCNPCounters {
		found := false
		for _, t := range rdma {
			if has(v.deltas[t], n) {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, n)
		}
	}
	ecnPrios := v.ecnPrios()
	switch {
	case len(ecnPrios) == 0:
		ecn.Status, ecn.Message = Skip, noECNReason
	case len(rdma) == 0:
		ecn.Status, ecn.Observed, ecn.Message = Skip, "", "no RDMA hw_counters were read (no RDMA NIC, or the udp engine)"
	case len(missing) > 0:
		ecn.Status, ecn.Observed, ecn.Message = Skip, "", "the RDMA devices do not report "+strings.Join(missing, ", ")
	case !v.incastRan:
		ecn.Status, ecn.Message = Skip, "no incast ran, so no congestion was forced"
	case ecnMarked > 0 && cnpSent > 0 && cnpHandled > 0:
		ecn.Status, ecn.Message = Pass, "ECN marks turned into CNPs and senders slowed down"
	default:
		ecn.Status, ecn.Message = Fail, "incast did not show ECN -> CNP -> rate reduction end to end"
	}
	add(ecn)

	// Host ethtool driver counters (mlx5 names).
	eth := sortedTargets(v.deltas, func(t string) bool { return strings.Contains(t, "/ethtool/") })
	for _, t := range eth {
		m := v.deltas[t]
		discards := []string{"rx_discards_phy", "tx_discards_phy"}
		for p := range 8 {
			if lossless[p] {
				discards = append(discards, fmt.Sprintf("rx_prio%d_discards", p))
			}
		}
		if !has(m, discards...) {
			add(Check{Name: "host.nic.discards", Target: t, Status: Skip, Message: "the interface has no mlx5-style discard counters"})
		} else {
			c := Check{Name: "host.nic.discards", Target: t, Status: Pass, Limit: "0", Observed: "0"}
			if s := listNonZero(m, discards...); s != "" {
				c.Status, c.Observed, c.Message = Fail, s, "the NIC dropped packets"
			}
			add(c)
		}
		if has(m, "tx_pause_storm_error_events") {
			c := Check{Name: "host.nic.pause_storm", Target: t, Status: Pass, Limit: "0", Observed: fmt.Sprint(m["tx_pause_storm_error_events"])}
			if m["tx_pause_storm_error_events"] != 0 {
				c.Status, c.Message = Fail, "the NIC's PFC storm protection fired"
			}
			add(c)
		}
		var wrong []string
		seen := false
		for p := range 8 {
			for _, dir := range []string{"rx", "tx"} {
				n := fmt.Sprintf("%s_prio%d_pause", dir, p)
				if _, ok := m[n]; ok {
					seen = true
				}
				if !lossless[p] && m[n] != 0 {
					wrong = append(wrong, fmt.Sprintf("%s=%d", n, m[n]))
				}
			}
		}
		if seen {
			c := Check{Name: "host.nic.pause_priority", Target: t, Status: Pass, Limit: fmt.Sprintf("pause only on priorities %v", v.policy.LosslessPriorities()), Observed: "none elsewhere"}
			if len(wrong) > 0 {
				c.Status, c.Observed, c.Message = Fail, strings.Join(wrong, " "), "pause frames on a lossy priority"
			}
			add(c)
		}
	}

	// Switch queue / PFC / watchdog counters.
	sw := sortedTargets(v.deltas, func(t string) bool { return !strings.Contains(t, "/rdma/") && !strings.Contains(t, "/ethtool/") })
	var swECN int64
	ecnSeen := false
	for _, t := range sw {
		m := v.deltas[t]
		var drops, wrongPFC, wd []string
		hasDrops, hasWD := false, false
		if v, ok := m[ctrPFCDiscards]; ok {
			hasDrops = true
			if v != 0 {
				drops = append(drops, fmt.Sprintf("%s=%d", ctrPFCDiscards, v))
			}
		}
		for p := range 8 {
			dn := fmt.Sprintf("q%d.%s", p, ctrDrops)
			if _, ok := m[dn]; ok && switchLossless[p] {
				hasDrops = true
				if m[dn] != 0 {
					drops = append(drops, fmt.Sprintf("%s=%d", dn, m[dn]))
				}
			}
			wn := fmt.Sprintf("q%d.%s", p, ctrWatchdog)
			if _, ok := m[wn]; ok {
				hasWD = true
				if m[wn] != 0 {
					wd = append(wd, fmt.Sprintf("%s=%d", wn, m[wn]))
				}
			}
			for _, d := range []string{ctrPFCTx, ctrPFCRx} {
				n := fmt.Sprintf("p%d.%s", p, d)
				if !lossless[p] && m[n] != 0 {
					wrongPFC = append(wrongPFC, fmt.Sprintf("%s=%d", n, m[n]))
				}
			}
			if en := fmt.Sprintf("q%d.%s", p, ctrECNMarked); ecnPrios[p] {
				if _, ok := m[en]; ok {
					ecnSeen = true
					swECN += m[en]
				}
			}
		}
		if hasDrops {
			c := Check{Name: "switch.lossless_drops", Target: t, Status: Pass, Limit: "0", Observed: "0"}
			if len(drops) > 0 {
				c.Status, c.Observed, c.Message = Fail, strings.Join(drops, " "), "a lossless queue dropped packets"
			}
			add(c)
		} else {
			add(Check{Name: "switch.lossless_drops", Target: t, Status: Skip, Message: "no queue drop counters for the lossless queues were returned"})
		}
		if hasWD {
			c := Check{Name: "switch.pfc_watchdog", Target: t, Status: Pass, Limit: "0", Observed: "0"}
			if len(wd) > 0 {
				c.Status, c.Observed, c.Message = Fail, strings.Join(wd, " "), "the PFC watchdog detected a storm or deadlock"
			}
			add(c)
		}
		if len(wrongPFC) > 0 {
			add(Check{Name: "switch.pfc_priority", Target: t, Status: Fail, Observed: strings.Join(wrongPFC, " "),
				Limit: fmt.Sprintf("PFC only on priorities %v", v.policy.LosslessPriorities()), Message: "PFC frames on a lossy priority"})
		}
	}
	if len(sw) > 0 {
		c := Check{Name: "switch.ecn_marked", Limit: "> 0 under incast", Observed: fmt.Sprint(swECN)}
		switch {
		case len(ecnPrios) == 0:
			c.Status, c.Message = Skip, noECNReason
		case !ecnSeen:
			c.Status, c.Observed, c.Message = Skip, "", "the platform returned no ECN-marked counter for the RoCE queues"
		case !v.incastRan:
			c.Status, c.Message = Skip, "no incast ran"
		case swECN > 0:
			c.Status, c.Message = Pass, "the congested queue marked ECN"
		default:
			c.Status, c.Message = Fail, "incast congested the fabric but no switch queue marked ECN"
		}
		add(c)
	}
	if lossyRoCE {
		for _, c := range lossyChecks(v) {
			add(c)
		}
	}
	return out
}

// trafficChecks judges the measured flows against the intent's thresholds.
func trafficChecks(flows []FlowResult, val intent.Validation, engine string) []Check {
	var out []Check
	add := func(c Check) { c.Phase = PhaseTraffic; out = append(out, c) }
	for _, f := range flows {
		target := fmt.Sprintf("%s r%d %s->%s", f.Test, f.Round, f.Client, f.Server)
		if f.Err != "" {
			add(Check{Name: "traffic.run", Target: target, Status: Error, Message: f.Err})
			continue
		}
		if engine == "udp" {
			c := Check{Name: "traffic.loss", Target: target, Status: Pass, Limit: "0 lost", Observed: fmt.Sprintf("%d of %d lost", f.Lost, f.Sent)}
			switch {
			case f.Sent == 0:
				// Every send failed (a local firewall's EPERM, say): nothing
				// crossed the fabric, so "0 lost" would prove nothing.
				c.Status = Error
				c.Message = "the sender could not send a single packet"
			case f.Lost > 0 && f.SocketDrops >= f.Lost:
				// All of it fell on the receiving host: says nothing about the fabric.
				c.Status = Error
				c.Message = fmt.Sprintf("the receiving host's socket dropped %d packets (it could not keep up); lower --udp-rate", f.SocketDrops)
			case f.Lost > 0:
				c.Status = Fail
				c.Message = fmt.Sprintf("%.2f%% of the lossless class was dropped in the network", 100*float64(f.Lost-f.SocketDrops)/float64(max(f.Sent, 1)))
				if f.SocketDrops > 0 {
					c.Message += fmt.Sprintf(" (and %d more by the receiving socket)", f.SocketDrops)
				}
			}
			add(c)
			// Lost = Sent - unique arrivals: with none, ordering and marking
			// were not observed at all.
			arrived := f.Sent > f.Lost
			c = Check{Name: "traffic.order", Target: target, Status: Pass, Limit: "0", Observed: fmt.Sprintf("reordered=%d duplicates=%d", f.Reordered, f.Duplicates)}
			switch {
			case f.Reordered+f.Duplicates > 0:
				c.Status, c.Message = Fail, "RoCE's go-back-N transport retransmits on reordering"
			case !arrived:
				c.Status, c.Observed, c.Message = Skip, "", "no packet arrived"
			}
			add(c)
			c = Check{Name: "traffic.dscp", Target: target, Status: Pass, Limit: fmt.Sprintf("DSCP %d preserved", f.ToS>>2), Observed: fmt.Sprintf("%d re-marked", f.ToSMismatch)}
			switch {
			case f.ToSMismatch > 0:
				c.Status, c.Message = Fail, "packets arrived with another DSCP or with their ECN bits cleared (re-marked on the way)"
			case !arrived:
				c.Status, c.Observed, c.Message = Skip, "", "no packet arrived"
			}
			add(c)
		}
		// The sim engine's goodput is judged as perftest's bandwidth is.
		if f.Test == "all-pairs" && (engine == "rdma" || engine == "sim") && val.MinBandwidthShare > 0 {
			c := Check{Name: "traffic.bandwidth", Target: target, Observed: gbps(f.Gbps)}
			if f.LineGbps == 0 {
				c.Status, c.Message = Skip, "NIC speed unknown; set nics[].speed in the intent"
			} else {
				want := val.MinBandwidthShare * f.LineGbps
				c.Limit = fmt.Sprintf(">= %s (%.0f%% of %.0fG)", gbps(want), val.MinBandwidthShare*100, f.LineGbps)
				c.Status = Pass
				if f.Gbps < want {
					c.Status, c.Message = Fail, "bandwidth below the intent's share of line rate"
				}
			}
			add(c)
		}
		if f.Test == "incast" || f.P99 == 0 {
			continue
		}
		if engine == "udp" && (val.MaxP99Latency > 0 || val.MaxP999Latency > 0) {
			add(Check{Name: "traffic.latency_p99", Target: target, Status: Skip, Observed: usec(f.P99),
				Message: "one-way UDP latency through the kernel is not comparable with the intent's RDMA latency limits"})
			continue
		}
		if val.MaxP99Latency > 0 {
			c := Check{Name: "traffic.latency_p99", Target: target, Status: Pass, Observed: usec(f.P99), Limit: "<= " + usec(val.MaxP99Latency)}
			if f.P99 > val.MaxP99Latency {
				c.Status, c.Message = Fail, "p99 latency above the intent's limit"
			}
			add(c)
		}
		if val.MaxP999Latency > 0 && f.P999 > 0 {
			c := Check{Name: "traffic.latency_p999", Target: target, Status: Pass, Observed: usec(f.P999), Limit: "<= " + usec(val.MaxP999Latency)}
			if f.P999 > val.MaxP999Latency {
				c.Status, c.Message = Fail, "p99.9 latency above the intent's limit"
			}
			add(c)
		}
	}
	// Incast: each receiver's link should be full, shared by its senders.
	byServer := map[string][]FlowResult{}
	var servers []string
	for _, f := range flows {
		if f.Test == "incast" && f.Err == "" {
			if byServer[f.Server] == nil {
				servers = append(servers, f.Server)
			}
			byServer[f.Server] = append(byServer[f.Server], f)
		}
	}
	for _, srv := range servers {
		incast := byServer[srv]
		if (engine != "rdma" && engine != "sim") || val.MinBandwidthShare <= 0 {
			break
		}
		// The receiver's link can be filled up to min(its line rate, the
		// senders' line rates summed); LineGbps is min(sender, receiver) per
		// flow. Without the receiver's speed, the fastest flow's line rate
		// is the lower bound it used to be.
		var sum, line, senders, server float64
		for _, f := range incast {
			sum += f.Gbps
			line = max(line, f.LineGbps)
			senders += f.LineGbps
			server = max(server, f.ServerLineGbps)
		}
		if server > 0 {
			line = min(server, senders)
		}
		c := Check{Name: "traffic.incast_bandwidth", Target: fmt.Sprintf("%d->1 %s", len(incast), srv), Observed: gbps(sum)}
		if line == 0 {
			c.Status, c.Message = Skip, "NIC speed unknown; set nics[].speed in the intent"
		} else {
			want := val.MinBandwidthShare * line
			c.Limit = fmt.Sprintf(">= %s (%.0f%% of %.0fG)", gbps(want), val.MinBandwidthShare*100, line)
			c.Status = Pass
			if sum < want {
				c.Status, c.Message = Fail, "the incast receiver's link was not filled"
			}
		}
		add(c)
	}
	return out
}
