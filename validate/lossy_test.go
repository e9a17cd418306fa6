package validate

import (
	"context"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
)

// lossyPolicy is rocePolicy with the RoCE class lossy: ECN/DCQCN only.
func lossyPolicy() *intent.Policy {
	p := rocePolicy()
	p.Classes[1].Lossless = false
	return p
}

// semiLosslessPolicy is the RoCE class lossless (hosts send PFC) in
// semi-lossless mode: switches honour pause but never send it, so their
// drops are judged as lossy's are.
func semiLosslessPolicy() *intent.Policy {
	p := rocePolicy()
	p.Mode = intent.ModeSemiLossless
	return p
}

func lossyDeltas(swDrops, seqErr, timeouts, oos int64) map[string]map[string]int64 {
	return map[string]map[string]int64{
		"leaf1/Ethernet0": {"q3.drops": swDrops, "q3.tx_packets": 100_000 - swDrops, "q3.ecn_marked": 900},
		"gpu1/rdma/mlx5_0/1": {"out_of_sequence": oos, "duplicate_request": 0, "packet_seq_err": seqErr, "implied_nak_seq_err": 0,
			"local_ack_timeout_err": timeouts, "rnr_nak_retry_err": 0, "np_ecn_marked_roce_packets": 500, "np_cnp_sent": 480, "rp_cnp_handled": 470},
		"gpu1/ethtool/ens1f0np0": {"tx_prio3_packets": 100_000, "rx_discards_phy": 0, "tx_discards_phy": 0},
	}
}

var lossyHosts = []intent.Host{{Name: "gpu1", NICs: []intent.NIC{{Interface: "ens1f0np0", RDMADevice: "mlx5_0", RDMAPort: 1}}}}

func find(cs []Check, id string) *Check {
	for i := range cs {
		if cs[i].ID() == id {
			return &cs[i]
		}
	}
	return nil
}

// TestLossyCounterChecks: on a RoCE class without PFC, drops and RDMA
// recoveries are judged against validation.lossy, not against zero: a run
// under the budgets passes; over them each check fails naming the switch
// port or RDMA port and the counters that moved.
func TestLossyCounterChecks(t *testing.T) {
	budgets := intent.DefaultLossyValidation
	tests := []struct {
		name   string
		deltas map[string]map[string]int64
		want   map[string]Status
		// substrings each failed check's Observed must hold
		observed map[string]string
	}{
		{
			name:   "drops under the budgets",
			deltas: lossyDeltas(50, 40, 2, 600), // 0.05% dropped, 0.042% recoveries, 0.65% resent
			want: map[string]Status{
				"switch.lossy_drop_rate[leaf1/Ethernet0]":           Pass,
				"host.rdma.retransmission_rate[gpu1/rdma/mlx5_0/1]": Pass,
				"lossy.goodput_loss":                                Pass,
				"host.rdma.ecn_cnp":                                 Pass,
			},
		},
		{
			name:   "drops over the budgets",
			deltas: lossyDeltas(500, 300, 25, 6000), // 0.5% dropped, 0.325% recoveries, 6.5% resent
			want: map[string]Status{
				"switch.lossy_drop_rate[leaf1/Ethernet0]":           Fail,
				"host.rdma.retransmission_rate[gpu1/rdma/mlx5_0/1]": Fail,
				"lossy.goodput_loss":                                Fail,
			},
			observed: map[string]string{
				"switch.lossy_drop_rate[leaf1/Ethernet0]":           "q3.drops=500 of 100000 (0.50%)",
				"host.rdma.retransmission_rate[gpu1/rdma/mlx5_0/1]": "packet_seq_err=300 local_ack_timeout_err=25",
				"lossy.goodput_loss":                                "6.50%",
			},
		},
	}
	for _, tt := range tests {
		for _, mode := range []string{"lossy", "semi-lossless"} {
			t.Run(mode+"/"+tt.name, func(t *testing.T) {
				pol := lossyPolicy()
				if mode == "semi-lossless" {
					pol = semiLosslessPolicy()
				}
				cs := counterChecks(verdictInput{policy: pol, deltas: tt.deltas, incastRan: true, lossy: budgets, hosts: lossyHosts})
				for id, st := range tt.want {
					c := find(cs, id)
					if c == nil {
						t.Errorf("no check %s in %v", id, rows(cs))
						continue
					}
					if c.Status != st {
						t.Errorf("%s: %s (%s; %s), want %s", id, c.Status, c.Observed, c.Message, st)
					}
					if want := tt.observed[id]; !strings.Contains(c.Observed, want) {
						t.Errorf("%s: observed %q, want it to name %q", id, c.Observed, want)
					}
				}
				// the zero-drop rules of a lossless class do not apply
				for _, c := range cs {
					if c.Name == "host.rdma.seq_errors" || c.Name == "host.rdma.ack_timeouts" || c.Name == "switch.lossless_drops" {
						t.Errorf("lossy class judged by %s: %+v", c.ID(), c)
					}
				}
			})
		}
	}
	// The same counters on the lossless class: any sequence error fails.
	cs := counterChecks(verdictInput{policy: rocePolicy(), deltas: lossyDeltas(50, 40, 2, 600), incastRan: true, lossy: budgets, hosts: lossyHosts})
	if c := find(cs, "host.rdma.seq_errors[gpu1/rdma/mlx5_0/1]"); c == nil || c.Status != Fail {
		t.Errorf("lossless class: seq_errors %+v, want Fail", c)
	}
	if c := find(cs, "lossy.goodput_loss"); c != nil {
		t.Errorf("lossless class judged by the lossy budgets: %+v", c)
	}
}

// TestLossyChecksWithoutEvidence: without the packet counters a rate
// needs, the check says what is missing instead of passing.
func TestLossyChecksWithoutEvidence(t *testing.T) {
	d := lossyDeltas(500, 300, 25, 6000)
	delete(d["leaf1/Ethernet0"], "q3.tx_packets")
	delete(d["gpu1/ethtool/ens1f0np0"], "tx_prio3_packets")
	cs := counterChecks(verdictInput{policy: lossyPolicy(), deltas: d, incastRan: true, lossy: intent.DefaultLossyValidation, hosts: lossyHosts})
	for _, id := range []string{"switch.lossy_drop_rate[leaf1/Ethernet0]", "host.rdma.retransmission_rate[gpu1/rdma/mlx5_0/1]", "lossy.goodput_loss"} {
		c := find(cs, id)
		if c == nil || c.Status != Skip || c.Message == "" {
			t.Errorf("%s: %+v, want a skip that says what is missing", id, c)
		}
	}
}

// TestRunLossy: the whole run with the counter TEST DOUBLES (fakeCounters)
// on a fabric whose RoCE class is lossy: the budgets come from the
// intent's validation.lossy, and a switch port over its drop budget fails
// by name.
func TestRunLossy(t *testing.T) {
	f := fabric(2)
	f.Policy = *lossyPolicy()
	f.Validation.Lossy = intent.LossyValidation{MaxDropRate: 0.002, MaxRetransmissionRate: 0.01, MaxGoodputLoss: 0.05}
	src := []Source{
		&fakeCounters{name: "gpu01 rdma mlx5_0/1", targets: []string{"gpu01/rdma/mlx5_0/1"},
			step: map[string]uint64{"out_of_sequence": 120, "packet_seq_err": 4, "local_ack_timeout_err": 1, "implied_nak_seq_err": 0, "rnr_nak_retry_err": 0}},
		&fakeCounters{name: "gpu01 ethtool ens1f0np0", targets: []string{"gpu01/ethtool/ens1f0np0"}, step: map[string]uint64{"tx_prio3_packets": 10_000}},
		&fakeCounters{name: "leaf1", targets: []string{"leaf1/Ethernet0"}, step: map[string]uint64{"q3.drops": 10, "q3.tx_packets": 9_990}},
		&fakeCounters{name: "leaf2", targets: []string{"leaf2/Ethernet4"}, step: map[string]uint64{"q3.drops": 40, "q3.tx_packets": 9_960}},
	}
	rep, err := Run(context.Background(), f, Options{Engine: &fakeEngine{}, Sources: src, AllPairs: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Status{
		"switch.lossy_drop_rate[leaf1/Ethernet0]":            Pass, // 0.1%
		"switch.lossy_drop_rate[leaf2/Ethernet4]":            Fail, // 0.4%
		"host.rdma.retransmission_rate[gpu01/rdma/mlx5_0/1]": Pass, // 5 per 10,000
		"lossy.goodput_loss":                                 Pass, // (10+40+120)/10,000 = 1.7% <= 5%
	}
	for id, st := range want {
		c := find(rep.Checks, id)
		if c == nil {
			t.Errorf("no check %s", id)
			continue
		}
		if c.Status != st || c.Phase != PhaseCounters {
			t.Errorf("%s: %s in phase %s (%s), want %s", id, c.Status, c.Phase, c.Observed, st)
		}
	}
	if c := find(rep.Checks, "lossy.goodput_loss"); c != nil && !strings.Contains(c.Observed, "1.70%") {
		t.Errorf("goodput loss observed %q, want 1.70%%", c.Observed)
	}
}

// TestPFCOnlyExpectsNoECN: with PFC and no ECN on the RoCE class (pfc-only
// mode) an incast without marks or CNPs is what the design does: the ECN
// checks skip and say why, the zero-drop rules stay.
func TestPFCOnlyExpectsNoECN(t *testing.T) {
	p := rocePolicy()
	p.Classes[1].ECN = nil
	d := map[string]map[string]int64{
		"leaf1/Ethernet0": {"q3.drops": 0, "q3.ecn_marked": 0, "p3.pfc_tx": 40},
		"gpu1/rdma/mlx5_0/1": {"out_of_sequence": 0, "packet_seq_err": 0, "local_ack_timeout_err": 0,
			"np_ecn_marked_roce_packets": 0, "np_cnp_sent": 0, "rp_cnp_handled": 0},
	}
	for _, pol := range []*intent.Policy{rocePolicy(), p} {
		cs := counterChecks(verdictInput{policy: pol, deltas: d, incastRan: true, hosts: lossyHosts})
		want := Fail
		if pol == p {
			want = Skip
		}
		for _, id := range []string{"host.rdma.ecn_cnp", "switch.ecn_marked"} {
			c := find(cs, id)
			if c == nil || c.Status != want || want == Skip && !strings.Contains(c.Message, "pfc-only") {
				t.Errorf("ECN on the RoCE class %v: %s = %+v, want %s", pol.Classes[1].ECN != nil, id, c, want)
			}
		}
		if c := find(cs, "host.rdma.seq_errors[gpu1/rdma/mlx5_0/1]"); c == nil || c.Status != Pass {
			t.Errorf("seq_errors: %+v", c)
		}
	}
}
