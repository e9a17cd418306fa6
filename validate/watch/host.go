package watch

import (
	"context"
	"fmt"
	"io/fs"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/validate"
)

// Host metric names (fabricctl host apply --watch --listen).
const (
	MetricHostOutOfSequence = "fabricctl_host_rdma_out_of_sequence_total"
	MetricHostSeqErrors     = "fabricctl_host_rdma_packet_seq_errors_total"
	MetricHostAckTimeouts   = "fabricctl_host_rdma_local_ack_timeouts_total"
	MetricHostECNMarked     = "fabricctl_host_ecn_marked_roce_packets_total"
	MetricHostCNPSent       = "fabricctl_host_cnp_sent_total"
	MetricHostCNPHandled    = "fabricctl_host_cnp_handled_total"
	MetricHostPause         = "fabricctl_host_pfc_pause_frames_total"
	MetricHostPrioDiscards  = "fabricctl_host_prio_discards_total"
	MetricHostPauseStorms   = "fabricctl_host_pause_storm_events_total"
)

// hostRDMA maps the RDMA hw_counters fabricctl validate judges (DOMAIN.md
// section 5, validate/verdict.go) to metrics. Devices that lack one (Soft-RoCE
// names its own) export no series for it.
var hostRDMA = []struct {
	counter string
	desc    *prometheus.Desc
}{
	{"out_of_sequence", hostDesc(MetricHostOutOfSequence, "RoCE packets that arrived out of sequence (RDMA hw_counters out_of_sequence): loss on the lossless class.")},
	{"packet_seq_err", hostDesc(MetricHostSeqErrors, "NAKs for packet sequence errors (hw_counters packet_seq_err).")},
	{"local_ack_timeout_err", hostDesc(MetricHostAckTimeouts, "Transport ACK timeouts (hw_counters local_ack_timeout_err): drops or a PFC deadlock.")},
	{"np_ecn_marked_roce_packets", hostDesc(MetricHostECNMarked, "ECN-marked RoCE packets received (hw_counters np_ecn_marked_roce_packets): the NIC as DCQCN notification point.")},
	{"np_cnp_sent", hostDesc(MetricHostCNPSent, "CNPs sent (hw_counters np_cnp_sent).")},
	{"rp_cnp_handled", hostDesc(MetricHostCNPHandled, "CNPs handled by the reaction point (hw_counters rp_cnp_handled): rate reductions.")},
}

func hostDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, []string{"host", "device", "port", "interface"}, nil)
}

var (
	descHostPause = prometheus.NewDesc(MetricHostPause,
		"PFC pause frames of the NIC per priority (mlx5 ethtool rx_prio<p>_pause / tx_prio<p>_pause).",
		[]string{"host", "interface", "priority", "direction"}, nil)
	descHostDiscards = prometheus.NewDesc(MetricHostPrioDiscards,
		"Packets the NIC dropped on receive for the priority (mlx5 ethtool rx_prio<p>_discards).",
		[]string{"host", "interface", "priority"}, nil)
	descHostStorms = prometheus.NewDesc(MetricHostPauseStorms,
		"Times the NIC's pause storm guard stopped sending pause (mlx5 ethtool tx_pause_storm_error_events).",
		[]string{"host", "interface"}, nil)
)

// HostCollector exports one host's NIC counters (read at scrape time, as
// node_exporter does), its drift and whether its NICs could be read.
type HostCollector struct {
	// FS reads sysfs (os.DirFS("/") or DirFS(--root)); Stats reads ethtool
	// driver statistics. Tests pass doubles of both.
	FS    fs.FS
	Stats validate.StatsReader
	// Timeout bounds one scrape's reads (2s when 0).
	Timeout time.Duration

	mu      sync.Mutex
	host    *intent.Host
	policy  *intent.Policy
	drift   int
	driftOK bool
	planErr error
	checked bool
}

// SetIntent sets the host and policy to export (again after an intent
// reload).
func (h *HostCollector) SetIntent(host *intent.Host, p *intent.Policy) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.host, h.policy = host, p
}

// SetDrift records the last reconcile: the number of drifted paths, or the
// error that kept the host from being read.
func (h *HostCollector) SetDrift(paths int, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.checked = true
	h.planErr = err
	h.driftOK = err == nil
	if err == nil {
		h.drift = paths
	}
}

// Describe implements prometheus.Collector.
func (h *HostCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, r := range hostRDMA {
		ch <- r.desc
	}
	for _, d := range []*prometheus.Desc{descHostPause, descHostDiscards, descHostStorms, descHostUp, descHostDrift} {
		ch <- d
	}
}

// Collect implements prometheus.Collector. A NIC whose counters cannot be
// read exports none (and target_up 0), never zeros.
func (h *HostCollector) Collect(ch chan<- prometheus.Metric) {
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	h.mu.Lock()
	host, policy := h.host, h.policy
	h.mu.Unlock()
	if host == nil {
		return
	}
	ok := true
	for _, nic := range host.NICs {
		if nic.RDMADevice != "" && h.FS != nil {
			port := nic.RDMAPort
			if port == 0 {
				port = 1
			}
			src := &validate.RDMACounters{Host: host.Name, Device: nic.RDMADevice, Port: port, FS: h.FS}
			s, err := src.Read(ctx)
			if err != nil {
				ok = false
			} else {
				m := s[src.Target()]
				for _, r := range hostRDMA {
					if v, has := m[r.counter]; has {
						ch <- prometheus.MustNewConstMetric(r.desc, prometheus.CounterValue, float64(v), host.Name, nic.RDMADevice, strconv.Itoa(port), nic.Interface)
					}
				}
			}
		}
		if h.Stats != nil {
			src := &validate.EthtoolCounters{Host: host.Name, Interface: nic.Interface, Stats: h.Stats}
			s, err := src.Read(ctx)
			if err != nil {
				ok = false
				continue
			}
			m := s[src.Target()]
			for _, p := range PrioritiesInUse(policy) {
				for _, dir := range []string{"rx", "tx"} {
					if v, has := m[fmt.Sprintf("%s_prio%d_pause", dir, p)]; has {
						ch <- prometheus.MustNewConstMetric(descHostPause, prometheus.CounterValue, float64(v), host.Name, nic.Interface, prioLabels[p&7], dir)
					}
				}
				if v, has := m[fmt.Sprintf("rx_prio%d_discards", p)]; has {
					ch <- prometheus.MustNewConstMetric(descHostDiscards, prometheus.CounterValue, float64(v), host.Name, nic.Interface, prioLabels[p&7])
				}
			}
			if v, has := m["tx_pause_storm_error_events"]; has {
				ch <- prometheus.MustNewConstMetric(descHostStorms, prometheus.CounterValue, float64(v), host.Name, nic.Interface)
			}
		}
	}
	h.mu.Lock()
	checked, driftOK, drift, planErr := h.checked, h.driftOK, h.drift, h.planErr
	h.mu.Unlock()
	if checked && planErr != nil {
		ok = false
	}
	up := 0.0
	if ok {
		up = 1
	}
	ch <- prometheus.MustNewConstMetric(descHostUp, prometheus.GaugeValue, up, host.Name, "host")
	if checked && driftOK {
		ch <- prometheus.MustNewConstMetric(descHostDrift, prometheus.GaugeValue, float64(drift), host.Name, "host")
	}
}

var _ prometheus.Collector = (*HostCollector)(nil)
