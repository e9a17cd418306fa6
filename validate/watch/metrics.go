package watch

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric names watch exports (the README's Watch section and the examples
// in examples/prometheus use exactly these; a test checks it).
const (
	MetricQueueDrops     = "fabricctl_switch_queue_drops_total"
	MetricECNMarked      = "fabricctl_switch_ecn_marked_packets_total"
	MetricPFCPause       = "fabricctl_switch_pfc_pause_frames_total"
	MetricWatchdog       = "fabricctl_switch_pfc_watchdog_storms_total"
	MetricBufferDiscards = "fabricctl_switch_pfc_buffer_discards_total"
	MetricTargetUp       = "fabricctl_target_up"
	MetricReconnects     = "fabricctl_target_reconnects_total"
	MetricDriftPaths     = "fabricctl_drift_paths"
	MetricDriftFailures  = "fabricctl_drift_check_failures_total"
	MetricPriorityInfo   = "fabricctl_priority_info"
	MetricUpdates        = "fabricctl_watch_updates_total"
	MetricReloads        = "fabricctl_watch_intent_reloads_total"
	MetricLastSample     = "fabricctl_switch_last_sample_timestamp_seconds"
	MetricBuildInfo      = "fabricctl_build_info"
)

// Help texts of the per-port counter families (also written by Handler).
const (
	helpDrops    = "Packets the switch dropped on the egress queue of the priority (SONiC SAI_QUEUE_STAT_DROPPED_PACKETS, SR Linux dropped-packets, OpenConfig dropped-pkts)."
	helpECN      = "Packets the switch marked ECN CE on the egress queue of the priority."
	helpPause    = "PFC pause frames for the priority: direction tx = sent by the port (its ingress buffer reached xoff), rx = received."
	helpWatchdog = "PFC watchdog detections on the queue of the priority (a PFC storm or deadlock)."
	helpDiscards = "Packets dropped at ingress because the port's PFC (lossless) buffer ran out (SR Linux total-packet-pfc-discards)."
)

var (
	descDrops    = prometheus.NewDesc(MetricQueueDrops, helpDrops, []string{"switch", "port", "priority"}, nil)
	descECN      = prometheus.NewDesc(MetricECNMarked, helpECN, []string{"switch", "port", "priority"}, nil)
	descPause    = prometheus.NewDesc(MetricPFCPause, helpPause, []string{"switch", "port", "priority", "direction"}, nil)
	descWatchdog = prometheus.NewDesc(MetricWatchdog, helpWatchdog, []string{"switch", "port", "priority"}, nil)
	descDiscards = prometheus.NewDesc(MetricBufferDiscards, helpDiscards, []string{"switch", "port"}, nil)
	// The health metrics name the device as the counters do: switch="..."
	// for watch's switches, host="..." for host apply --watch (kind says
	// which, for queries over both).
	descUp, descHostUp = healthDesc(MetricTargetUp,
		"1 while the target streams its counters (the subscription delivered its initial sync and is open), else 0.")
	descReconnects, _ = healthDesc(MetricReconnects,
		"Sessions with the target that ended and were retried.")
	descDrift, descHostDrift = healthDesc(MetricDriftPaths,
		"Paths where the target differs from the intent, and what it lacks that apply cannot write (as fabricctl diff counts them); absent until the first check.")
	descDriftFail, _ = healthDesc(MetricDriftFailures,
		"Drift checks that could not read or compare the target.")
	descLastSample = prometheus.NewDesc(MetricLastSample,
		"When the switch's last counter sample arrived (Unix seconds); absent until the first. Its counters are exported only while it streams (fabricctl_target_up 1).",
		[]string{"switch"}, nil)
	descBuildInfo = prometheus.NewDesc(MetricBuildInfo,
		"fabricctl's version, VCS revision and Go version (always 1).", []string{"version", "revision", "goversion"}, nil)
	descPrio = prometheus.NewDesc(MetricPriorityInfo,
		"The intent's traffic classes by priority (always 1): lossless = PFC on, ecn = ECN marking on, cnp = the class CNPs use.",
		[]string{"priority", "class", "lossless", "ecn", "cnp"}, nil)
	descUpdates = prometheus.NewDesc(MetricUpdates,
		"Counter updates ingested from all switches.", nil, nil)
	descReloads = prometheus.NewDesc(MetricReloads,
		"Intent reloads (SIGHUP or a changed file): result ok, or refused (the new intent did not load; the previous one keeps running).",
		[]string{"result"}, nil)
)

// healthDesc is a health metric's two descriptions: one labelled
// switch (watch), one labelled host (host apply --watch).
func healthDesc(name, help string) (sw, host *prometheus.Desc) {
	return prometheus.NewDesc(name, help, []string{"switch", "kind"}, nil),
		prometheus.NewDesc(name, help, []string{"host", "kind"}, nil)
}

// BuildInfo is a Collector of fabricctl_build_info.
func BuildInfo(version, revision, goVersion string) prometheus.Collector {
	return buildInfo{prometheus.MustNewConstMetric(descBuildInfo, prometheus.GaugeValue, 1, version, revision, goVersion)}
}

type buildInfo struct{ m prometheus.Metric }

func (b buildInfo) Describe(ch chan<- *prometheus.Desc) { ch <- descBuildInfo }
func (b buildInfo) Collect(ch chan<- prometheus.Metric) { ch <- b.m }

var prioLabels = func() (out [8]string) {
	for i := range out {
		out[i] = strconv.Itoa(i)
	}
	return
}()

// Describe implements prometheus.Collector.
func (w *Watcher) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descDrops, descECN, descPause, descWatchdog, descDiscards, descUp, descReconnects,
		descDrift, descDriftFail, descPrio, descUpdates, descReloads, descLastSample} {
		ch <- d
	}
}

// Collect implements prometheus.Collector: the health metrics and every
// per-port counter. Counters are the switch's own cumulative values
// (Prometheus' rate() handles a counter the switch clears as a reset); only
// counters a switch has reported are exported, and only while it streams:
// a switch that is down exports none, so Prometheus marks its series stale
// and rate() shows a gap, not a flat zero. For large fabrics serve
// Handler instead: it writes the counters without building a metric object
// per series.
func (w *Watcher) Collect(ch chan<- prometheus.Metric) {
	w.collectHealth(ch)
	targets, _ := w.current()
	for _, t := range targets {
		if !t.up.Load() {
			continue
		}
		name := t.sw.Name
		t.ctr.snapshot(func(port string, prio, kind int, v uint64) {
			if v == 0 && w.opts.NonZero {
				return
			}
			f := float64(v)
			switch kind {
			case kDrops:
				ch <- prometheus.MustNewConstMetric(descDrops, prometheus.CounterValue, f, name, port, prioLabels[prio])
			case kECN:
				ch <- prometheus.MustNewConstMetric(descECN, prometheus.CounterValue, f, name, port, prioLabels[prio])
			case kPFCTx:
				ch <- prometheus.MustNewConstMetric(descPause, prometheus.CounterValue, f, name, port, prioLabels[prio], "tx")
			case kPFCRx:
				ch <- prometheus.MustNewConstMetric(descPause, prometheus.CounterValue, f, name, port, prioLabels[prio], "rx")
			case kWatchdog:
				ch <- prometheus.MustNewConstMetric(descWatchdog, prometheus.CounterValue, f, name, port, prioLabels[prio])
			case -1:
				ch <- prometheus.MustNewConstMetric(descDiscards, prometheus.CounterValue, f, name, port)
			}
		})
	}
}

// health is the Collector of watch's own metrics, without the per-port
// counters (Handler writes those).
type health struct{ w *Watcher }

func (h health) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descUp, descReconnects, descDrift, descDriftFail, descPrio, descUpdates, descReloads, descLastSample} {
		ch <- d
	}
}

func (h health) Collect(ch chan<- prometheus.Metric) { h.w.collectHealth(ch) }

// Health returns a Collector of watch's own metrics (target_up,
// reconnects, drift, priority info, updates), for the registry Handler
// serves alongside the counters.
func (w *Watcher) Health() prometheus.Collector { return health{w} }

func (w *Watcher) collectHealth(ch chan<- prometheus.Metric) {
	targets, f := w.current()
	for _, c := range f.Policy.Classes {
		ch <- prometheus.MustNewConstMetric(descPrio, prometheus.GaugeValue, 1,
			prioLabels[c.Priority&7], c.Name, strconv.FormatBool(c.Lossless), strconv.FormatBool(c.ECN != nil), strconv.FormatBool(c.CNP))
	}
	ch <- prometheus.MustNewConstMetric(descUpdates, prometheus.CounterValue, float64(w.updates.Load()))
	ch <- prometheus.MustNewConstMetric(descReloads, prometheus.CounterValue, float64(w.reloadsOK.Load()), "ok")
	ch <- prometheus.MustNewConstMetric(descReloads, prometheus.CounterValue, float64(w.reloadsRefused.Load()), "refused")
	for _, t := range targets {
		name := t.sw.Name
		up := 0.0
		if t.up.Load() {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, up, name, "switch")
		ch <- prometheus.MustNewConstMetric(descReconnects, prometheus.CounterValue, float64(t.reconnects.Load()), name, "switch")
		if ns := t.lastSample.Load(); ns != 0 {
			ch <- prometheus.MustNewConstMetric(descLastSample, prometheus.GaugeValue, float64(ns)/1e9, name)
		}
		if w.opts.Engine != nil {
			if d := t.driftPaths.Load(); d >= 0 {
				ch <- prometheus.MustNewConstMetric(descDrift, prometheus.GaugeValue, float64(d), name, "switch")
			}
			ch <- prometheus.MustNewConstMetric(descDriftFail, prometheus.CounterValue, float64(t.driftFails.Load()), name, "switch")
		}
	}
}

var _ prometheus.Collector = (*Watcher)(nil)

// MetricNames lists every metric fabricctl watch and host apply --watch
// export (the examples' rules and dashboard may use only these).
func MetricNames() []string {
	return []string{MetricQueueDrops, MetricECNMarked, MetricPFCPause, MetricWatchdog, MetricBufferDiscards,
		MetricTargetUp, MetricReconnects, MetricDriftPaths, MetricDriftFailures, MetricPriorityInfo, MetricUpdates, MetricReloads,
		MetricLastSample, MetricBuildInfo, MetricHostOutOfSequence, MetricHostSeqErrors, MetricHostAckTimeouts, MetricHostECNMarked, MetricHostCNPSent,
		MetricHostCNPHandled, MetricHostPause, MetricHostPrioDiscards, MetricHostPauseStorms}
}
