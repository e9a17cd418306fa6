package validate

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/plan"
)

func rocePolicy() *intent.Policy {
	return &intent.Policy{Classes: []intent.Class{
		{Name: "default", Priority: 0, Default: true},
		{Name: "roce", DSCP: []int{26}, Priority: 3, Lossless: true, ECN: &intent.ECN{MinBytes: 150_000, MaxBytes: 1_501_500, Probability: 100}},
		{Name: "cnp", DSCP: []int{48}, Priority: 6, Strict: true, CNP: true},
	}}
}

type verdictRow struct {
	Name, Target string
	Status       Status
}

func rows(cs []Check) []verdictRow {
	var out []verdictRow
	for _, c := range cs {
		out = append(out, verdictRow{c.Name, c.Target, c.Status})
	}
	return out
}

func TestCounterChecks(t *testing.T) {
	tests := []struct {
		name   string
		deltas map[string]map[string]int64
		incast bool
		want   []verdictRow
	}{
		{
			name: "healthy RoCE host under incast",
			deltas: map[string]map[string]int64{
				"gpu1/rdma/mlx5_0/1": {"out_of_sequence": 0, "packet_seq_err": 0, "implied_nak_seq_err": 0, "local_ack_timeout_err": 0,
					"rp_cnp_ignored": 0, "np_ecn_marked_roce_packets": 500, "np_cnp_sent": 480, "rp_cnp_handled": 470},
				"gpu1/ethtool/ens1f0np0": {"rx_discards_phy": 0, "tx_discards_phy": 0, "rx_prio3_discards": 0,
					"tx_pause_storm_error_events": 0, "rx_prio3_pause": 120, "tx_prio3_pause": 40},
			},
			incast: true,
			want: []verdictRow{
				{"host.rdma.seq_errors", "gpu1/rdma/mlx5_0/1", Pass},
				{"host.rdma.ack_timeouts", "gpu1/rdma/mlx5_0/1", Pass},
				{"host.rdma.cnp_ignored", "gpu1/rdma/mlx5_0/1", Pass},
				{"host.rdma.ecn_cnp", "", Pass},
				{"host.nic.discards", "gpu1/ethtool/ens1f0np0", Pass},
				{"host.nic.pause_storm", "gpu1/ethtool/ens1f0np0", Pass},
				{"host.nic.pause_priority", "gpu1/ethtool/ens1f0np0", Pass},
			},
		},
		{
			name: "sequence errors, CC off, pause on a lossy priority, no CNPs",
			deltas: map[string]map[string]int64{
				"gpu2/rdma/mlx5_1/1": {"out_of_sequence": 12, "packet_seq_err": 3, "local_ack_timeout_err": 1, "rp_cnp_ignored": 9,
					"np_ecn_marked_roce_packets": 0, "np_cnp_sent": 0, "rp_cnp_handled": 0},
				"gpu2/ethtool/ens1f1np1": {"rx_discards_phy": 4, "rx_prio3_discards": 0, "rx_prio0_pause": 7, "tx_prio3_pause": 1},
			},
			incast: true,
			want: []verdictRow{
				{"host.rdma.seq_errors", "gpu2/rdma/mlx5_1/1", Fail},
				{"host.rdma.ack_timeouts", "gpu2/rdma/mlx5_1/1", Fail},
				{"host.rdma.cnp_ignored", "gpu2/rdma/mlx5_1/1", Fail},
				{"host.rdma.ecn_cnp", "", Fail},
				{"host.nic.discards", "gpu2/ethtool/ens1f1np1", Fail},
				{"host.nic.pause_priority", "gpu2/ethtool/ens1f1np1", Fail},
			},
		},
		{
			// Soft-RoCE (rxe) and other non-mlx5 devices have hw_counters but
			// none of the ECN/CNP ones: no evidence is a skip, not a failure.
			name: "incast on a device without ECN/CNP counters: skipped, not failed",
			deltas: map[string]map[string]int64{
				"lab1/rdma/rxe0/1": {"rcvd_seq_err": 0, "out_of_seq_request": 0, "retry_exceeded_err": 0},
				"lab2/rdma/rxe0/1": {"rcvd_seq_err": 0, "out_of_seq_request": 0, "retry_exceeded_err": 0},
			},
			incast: true,
			want: []verdictRow{
				{"host.rdma.seq_errors", "lab1/rdma/rxe0/1", Pass},
				{"host.rdma.ack_timeouts", "lab1/rdma/rxe0/1", Skip},
				{"host.rdma.seq_errors", "lab2/rdma/rxe0/1", Pass},
				{"host.rdma.ack_timeouts", "lab2/rdma/rxe0/1", Skip},
				{"host.rdma.ecn_cnp", "", Skip},
			},
		},
		{
			name: "incast where the CNP handling counter is missing everywhere: skipped",
			deltas: map[string]map[string]int64{
				"gpu1/rdma/mlx5_0/1": {"np_ecn_marked_roce_packets": 0, "np_cnp_sent": 0, "out_of_sequence": 0, "local_ack_timeout_err": 0},
			},
			incast: true,
			want: []verdictRow{
				{"host.rdma.seq_errors", "gpu1/rdma/mlx5_0/1", Pass},
				{"host.rdma.ack_timeouts", "gpu1/rdma/mlx5_0/1", Pass},
				{"host.rdma.ecn_cnp", "", Skip},
			},
		},
		{
			name: "incast with the ECN/CNP counters present but still: fail",
			deltas: map[string]map[string]int64{
				"gpu1/rdma/mlx5_0/1": {"np_ecn_marked_roce_packets": 0, "np_cnp_sent": 0, "packet_seq_err": 0, "local_ack_timeout_err": 0},
				"gpu2/rdma/mlx5_0/1": {"rp_cnp_handled": 0, "packet_seq_err": 0, "local_ack_timeout_err": 0},
			},
			incast: true,
			want: []verdictRow{
				{"host.rdma.seq_errors", "gpu1/rdma/mlx5_0/1", Pass},
				{"host.rdma.ack_timeouts", "gpu1/rdma/mlx5_0/1", Pass},
				{"host.rdma.seq_errors", "gpu2/rdma/mlx5_0/1", Pass},
				{"host.rdma.ack_timeouts", "gpu2/rdma/mlx5_0/1", Pass},
				{"host.rdma.ecn_cnp", "", Fail},
			},
		},
		{
			// The counter names of Soft-RoCE on Linux 6.1, as read in the
			// soft-RoCE VM (internal/rdmavm): a PSN gap at the responder and
			// a sequence NAK at the requester are sequence errors.
			name: "soft-RoCE (rxe) counter names",
			deltas: map[string]map[string]int64{
				"gpu1/rdma/rxe0/1": {"sent_pkts": 19896, "rcvd_seq_err": 1, "out_of_seq_request": 0, "completer_retry_err": 1},
				"gpu2/rdma/rxe0/1": {"rcvd_pkts": 19864, "rcvd_seq_err": 0, "out_of_seq_request": 0},
			},
			want: []verdictRow{
				{"host.rdma.seq_errors", "gpu1/rdma/rxe0/1", Fail},
				{"host.rdma.ack_timeouts", "gpu1/rdma/rxe0/1", Skip},
				{"host.rdma.seq_errors", "gpu2/rdma/rxe0/1", Pass},
				{"host.rdma.ack_timeouts", "gpu2/rdma/rxe0/1", Skip},
				{"host.rdma.ecn_cnp", "", Skip},
			},
		},
		{
			name: "no incast: ECN/CNP not judged",
			deltas: map[string]map[string]int64{
				"gpu1/rdma/mlx5_0/1": {"np_cnp_sent": 0},
			},
			want: []verdictRow{
				{"host.rdma.seq_errors", "gpu1/rdma/mlx5_0/1", Skip},
				{"host.rdma.ack_timeouts", "gpu1/rdma/mlx5_0/1", Skip},
				{"host.rdma.ecn_cnp", "", Skip},
			},
		},
		{
			name: "switch: drops on the lossless queue, watchdog, PFC on prio 0, ECN marked",
			deltas: map[string]map[string]int64{
				"leaf1/Ethernet0": {"q3.drops": 2, "q0.drops": 100, "q3.watchdog": 1, "p0.pfc_tx": 3, "p3.pfc_tx": 50, "q3.ecn_marked": 9},
				"leaf1/Ethernet4": {"q3.drops": 0, "q3.ecn_marked": 0},
			},
			incast: true,
			want: []verdictRow{
				{"host.rdma.ecn_cnp", "", Skip},
				{"switch.lossless_drops", "leaf1/Ethernet0", Fail},
				{"switch.pfc_watchdog", "leaf1/Ethernet0", Fail},
				{"switch.pfc_priority", "leaf1/Ethernet0", Fail},
				{"switch.lossless_drops", "leaf1/Ethernet4", Pass},
				{"switch.ecn_marked", "", Pass},
			},
		},
		{
			name: "switch: lossless packets dropped at ingress (PFC buffer exhausted)",
			deltas: map[string]map[string]int64{
				"leaf1/ethernet-1/1": {"q3.drops": 0, "pfc_discards": 5},
				"leaf1/ethernet-1/2": {"pfc_discards": 0},
			},
			want: []verdictRow{
				{"host.rdma.ecn_cnp", "", Skip},
				{"switch.lossless_drops", "leaf1/ethernet-1/1", Fail},
				{"switch.lossless_drops", "leaf1/ethernet-1/2", Pass},
				{"switch.ecn_marked", "", Skip},
			},
		},
		{
			name: "switch: incast without ECN marks",
			deltas: map[string]map[string]int64{
				"leaf1/Ethernet0": {"q3.drops": 0, "q3.ecn_marked": 0},
			},
			incast: true,
			want: []verdictRow{
				{"host.rdma.ecn_cnp", "", Skip},
				{"switch.lossless_drops", "leaf1/Ethernet0", Pass},
				{"switch.ecn_marked", "", Fail},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := rows(counterChecks(verdictInput{policy: rocePolicy(), deltas: tt.deltas, incastRan: tt.incast}))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("counterChecks mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTrafficChecks(t *testing.T) {
	val := intent.Validation{MinBandwidthShare: 0.9, MaxP99Latency: 5 * time.Microsecond, MaxP999Latency: 10 * time.Microsecond}
	tests := []struct {
		name   string
		engine string
		flows  []FlowResult
		want   []verdictRow
	}{
		{
			name: "rdma bandwidth and latency", engine: "rdma",
			flows: []FlowResult{
				{Test: "all-pairs", Round: 1, Client: "a:e", Server: "b:e", Gbps: 370, LineGbps: 400},
				{Test: "all-pairs", Round: 1, Client: "c:e", Server: "d:e", Gbps: 300, LineGbps: 400},
				{Test: "all-pairs", Round: 2, Client: "a:e", Server: "c:e", Gbps: 300},
				{Test: "latency", Round: 1, Client: "a:e", Server: "b:e", P99: 4 * time.Microsecond, P999: 12 * time.Microsecond},
				{Test: "all-pairs", Round: 3, Client: "a:e", Server: "d:e", Err: "host a: ib_write_bw exited 1"},
			},
			want: []verdictRow{
				{"traffic.bandwidth", "all-pairs r1 a:e->b:e", Pass},
				{"traffic.bandwidth", "all-pairs r1 c:e->d:e", Fail},
				{"traffic.bandwidth", "all-pairs r2 a:e->c:e", Skip},
				{"traffic.latency_p99", "latency r1 a:e->b:e", Pass},
				{"traffic.latency_p999", "latency r1 a:e->b:e", Fail},
				{"traffic.run", "all-pairs r3 a:e->d:e", Error},
			},
		},
		{
			// Three 100G senders into a 400G receiver can fill 300G of it,
			// not just one sender's 100G.
			name: "rdma incast from slower senders: judged against what they can fill", engine: "rdma",
			flows: []FlowResult{
				{Test: "incast", Round: 1, Client: "a:e", Server: "d:e", Gbps: 50, LineGbps: 100, ServerLineGbps: 400},
				{Test: "incast", Round: 1, Client: "b:e", Server: "d:e", Gbps: 50, LineGbps: 100, ServerLineGbps: 400},
				{Test: "incast", Round: 1, Client: "c:e", Server: "d:e", Gbps: 50, LineGbps: 100, ServerLineGbps: 400},
				{Test: "incast", Round: 1, Client: "a:f", Server: "d:f", Gbps: 130, LineGbps: 400, ServerLineGbps: 400},
				{Test: "incast", Round: 1, Client: "b:f", Server: "d:f", Gbps: 130, LineGbps: 400, ServerLineGbps: 400},
				{Test: "incast", Round: 1, Client: "c:f", Server: "d:f", Gbps: 130, LineGbps: 400, ServerLineGbps: 400},
			},
			want: []verdictRow{
				{"traffic.incast_bandwidth", "3->1 d:e", Fail},
				{"traffic.incast_bandwidth", "3->1 d:f", Pass},
			},
		},
		{
			name: "udp loss, reordering, re-marking", engine: "udp",
			flows: []FlowResult{
				{Test: "incast", Round: 1, Client: "a:e", Server: "b:e", Sent: 100, Lost: 3, Reordered: 1, ToS: 106, ToSMismatch: 2},
			},
			want: []verdictRow{
				{"traffic.loss", "incast r1 a:e->b:e", Fail},
				{"traffic.order", "incast r1 a:e->b:e", Fail},
				{"traffic.dscp", "incast r1 a:e->b:e", Fail},
			},
		},
		{
			name: "udp loss all in the receiver's socket is no verdict on the fabric", engine: "udp",
			flows: []FlowResult{
				{Test: "all-pairs", Round: 1, Client: "a:e", Server: "b:e", Sent: 100, Lost: 7, SocketDrops: 7, ToS: 106},
			},
			want: []verdictRow{
				{"traffic.loss", "all-pairs r1 a:e->b:e", Error},
				{"traffic.order", "all-pairs r1 a:e->b:e", Pass},
				{"traffic.dscp", "all-pairs r1 a:e->b:e", Pass},
			},
		},
		{
			// Every send failed (EPERM from a local firewall, say): nothing
			// crossed the fabric, so there is no evidence of "0 lost".
			name: "udp flow that sent nothing is no pass", engine: "udp",
			flows: []FlowResult{
				{Test: "all-pairs", Round: 1, Client: "a:e", Server: "b:e", Sent: 0, ToS: 106},
			},
			want: []verdictRow{
				{"traffic.loss", "all-pairs r1 a:e->b:e", Error},
				{"traffic.order", "all-pairs r1 a:e->b:e", Skip},
				{"traffic.dscp", "all-pairs r1 a:e->b:e", Skip},
			},
		},
		{
			name: "udp flow of which nothing arrived: order and DSCP have no evidence", engine: "udp",
			flows: []FlowResult{
				{Test: "incast", Round: 1, Client: "a:e", Server: "b:e", Sent: 100, Lost: 100, ToS: 106},
			},
			want: []verdictRow{
				{"traffic.loss", "incast r1 a:e->b:e", Fail},
				{"traffic.order", "incast r1 a:e->b:e", Skip},
				{"traffic.dscp", "incast r1 a:e->b:e", Skip},
			},
		},
		{
			name: "udp latency is not judged against RDMA limits", engine: "udp",
			flows: []FlowResult{
				{Test: "all-pairs", Round: 1, Client: "a:e", Server: "b:e", Sent: 10, ToS: 106, P99: 80 * time.Microsecond, P999: 90 * time.Microsecond},
			},
			want: []verdictRow{
				{"traffic.loss", "all-pairs r1 a:e->b:e", Pass},
				{"traffic.order", "all-pairs r1 a:e->b:e", Pass},
				{"traffic.dscp", "all-pairs r1 a:e->b:e", Pass},
				{"traffic.latency_p99", "all-pairs r1 a:e->b:e", Skip},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := rows(trafficChecks(tt.flows, val, tt.engine))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("trafficChecks mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadbackChecks(t *testing.T) {
	p := &plan.Plan{Targets: []plan.TargetPlan{
		{Name: "leaf1", Kind: plan.KindSwitch, Changes: []plan.Change{
			{Action: plan.Update, Path: "/qos/interfaces/interface[interface-id=ethernet-1/1]/pfc/pfc-enable", Before: "false", After: "true", Reason: "PFC on priority 3"},
			{Action: plan.NoOp, Path: "/qos/x"},
		}},
		{Name: "leaf2", Kind: plan.KindSwitch},
		{Name: "gpu1", Kind: plan.KindHost, Error: "host gpu1: ssh: connection refused"},
		// The soft-RoCE VM's host plan (internal/rdmavm): DCB unreadable on
		// virtio_net, the RDMA-CM ToS read and drifted.
		{Name: "gpu2", Kind: plan.KindHost, Error: "roce0: DCB (DCBX, APP, PFC, ETS): driver has no DCB support (EOPNOTSUPP) — is this a VF?", Changes: []plan.Change{
			{Action: plan.NoOp, Path: "roce0/mtu", Before: "9000", After: "9000"},
			{Action: plan.Update, Path: "roce0/rdma_cm/default_roce_tos", Before: "96", After: "106"},
		}},
	}}
	want := []verdictRow{
		{"readback.drift", "switch leaf1 /qos/interfaces/interface[interface-id=ethernet-1/1]/pfc/pfc-enable", Fail},
		{"readback", "switch leaf2", Pass},
		{"readback", "host gpu1", Error},
		{"readback", "host gpu2", Error},
		{"readback.drift", "host gpu2 roce0/rdma_cm/default_roce_tos", Fail},
	}
	if diff := cmp.Diff(want, rows(ReadbackChecks(p))); diff != "" {
		t.Errorf("ReadbackChecks mismatch (-want +got):\n%s", diff)
	}
}
