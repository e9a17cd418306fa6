package validate

import (
	"fmt"
	"sort"
	"time"
)

// Status is the outcome of one check.
type Status string

const (
	Pass Status = "pass"
	Fail Status = "fail"
	// Skip: the check could not apply (no RDMA counters on veth, no incast
	// with two hosts ...); the message says why.
	Skip Status = "skip"
	// Error: the evidence could not be collected (host unreachable ...).
	Error Status = "error"
	// Warn: worth a look, not a failure: the verdict stays PASS (measured
	// and predicted diverge beyond the tolerance).
	Warn Status = "warn"
)

// Phases of a run, in order.
const (
	PhaseReadback = "readback"
	PhaseCounters = "counters"
	PhaseTraffic  = "traffic"
	// PhasePrediction (predict.go) follows the traffic.
)

// Check is one verdict with the numbers behind it.
type Check struct {
	// Name is a stable identifier, e.g. "traffic.loss", "host.rdma.seq_errors".
	Name  string `json:"name"`
	Phase string `json:"phase"`
	// Target is what was checked: a host, "host/dev/port", "switch/port", a flow.
	Target string `json:"target,omitempty"`
	Status Status `json:"status"`
	// Observed and Limit are the numbers (as text with units).
	Observed string `json:"observed,omitempty"`
	Limit    string `json:"limit,omitempty"`
	Message  string `json:"message,omitempty"`
}

// ID is the check's name and target, unique within a report.
func (c Check) ID() string {
	if c.Target == "" {
		return c.Name
	}
	return c.Name + "[" + c.Target + "]"
}

// FlowResult is one measured flow.
type FlowResult struct {
	Test   string `json:"test"` // "all-pairs", "incast", "latency"
	Round  int    `json:"round"`
	Client string `json:"client"` // host:iface
	Server string `json:"server"`
	// Gbps is the measured bandwidth (RDMA: perftest BW average; UDP: payload
	// throughput); LineGbps the slower NIC's line rate (0 = unknown).
	Gbps     float64 `json:"gbps"`
	LineGbps float64 `json:"lineGbps,omitempty"`
	// ServerLineGbps is the receiving NIC's line rate (0 = unknown): an
	// incast fills at most min(it, the senders' line rates summed).
	ServerLineGbps float64 `json:"serverLineGbps,omitempty"`
	// Latency percentiles (RDMA latency tests; UDP one-way). Zero = not measured.
	P50  time.Duration `json:"p50Ns,omitempty"`
	P99  time.Duration `json:"p99Ns,omitempty"`
	P999 time.Duration `json:"p999Ns,omitempty"`
	// UDP engine accounting.
	Sent       uint64 `json:"sent,omitempty"`
	Received   uint64 `json:"received,omitempty"`
	Lost       uint64 `json:"lost,omitempty"`
	Duplicates uint64 `json:"duplicates,omitempty"`
	Reordered  uint64 `json:"reordered,omitempty"`
	// SocketDrops were dropped by the receiving host's socket buffer, not by
	// the network.
	SocketDrops uint64 `json:"socketDrops,omitempty"`
	// Rejected counts packets the flow's receiver dropped as not this run's
	// (another token, source or flow id: forged, or a stray sender).
	Rejected uint64 `json:"rejected,omitempty"`
	// ToS is the byte sent with; ToSMismatch counts packets that arrived
	// re-marked on the way: another DSCP, or ECN bits changed other than
	// ECT -> CE (ECN bleached to Not-ECT, say).
	ToS         int    `json:"tos"`
	ToSMismatch uint64 `json:"tosMismatch,omitempty"`
	// ECNMarked counts packets that arrived CE-marked (ECN bits 11): a
	// congested queue on the way marked them.
	ECNMarked uint64 `json:"ecnMarked,omitempty"`
	// PredictedGbps is the simulator's goodput for this flow on the same
	// configuration (nil = not predicted).
	PredictedGbps *float64 `json:"predictedGbps,omitempty"`
	// Command is the client command line (RDMA engine: the perftest argv).
	Command string `json:"command,omitempty"`
	Err     string `json:"error,omitempty"`
}

// Report is the outcome of one validation run.
type Report struct {
	Fabric string `json:"fabric"`
	Engine string `json:"engine"`
	// EngineNote says what the engine's figures are when they were not
	// measured on a wire (the sim engine).
	EngineNote string        `json:"engineNote,omitempty"`
	Started    time.Time     `json:"started"`
	Elapsed    time.Duration `json:"elapsedNs"`
	// TrafficElapsed is the time spent in traffic rounds; the rest of Elapsed
	// is fabricctl's own overhead (readback, counters, verdict).
	TrafficElapsed time.Duration `json:"trafficElapsedNs"`
	// Rounds is the number of traffic rounds run (N-1 for all-pairs on even N).
	Rounds int          `json:"rounds"`
	Flows  []FlowResult `json:"flows"`
	// Deltas are the counter changes across the traffic, per target.
	Deltas map[string]map[string]int64 `json:"deltas,omitempty"`
	Checks []Check                     `json:"checks"`
	// Prediction is what the simulator predicts for the same flows on the
	// same configuration (nil = no prediction ran).
	Prediction *Prediction `json:"prediction,omitempty"`
}

// Summary counts checks by status.
type Summary struct {
	Pass, Fail, Skip, Error, Warn int
}

// Summarize counts the report's checks.
func (r *Report) Summarize() Summary {
	var s Summary
	for _, c := range r.Checks {
		switch c.Status {
		case Pass:
			s.Pass++
		case Fail:
			s.Fail++
		case Skip:
			s.Skip++
		case Error:
			s.Error++
		case Warn:
			s.Warn++
		}
	}
	return s
}

// Verdict is "PASS" when no check failed or errored (warnings do not
// fail), else "FAIL" (failed checks) or "ERROR" (only errors).
func (r *Report) Verdict() string {
	s := r.Summarize()
	switch {
	case s.Fail > 0:
		return "FAIL"
	case s.Error > 0:
		return "ERROR"
	}
	return "PASS"
}

// sortChecks orders checks by phase, then name, then target.
func (r *Report) sortChecks() {
	order := map[string]int{PhaseReadback: 0, PhaseCounters: 1, PhaseTraffic: 2, PhasePrediction: 3}
	sort.SliceStable(r.Checks, func(i, j int) bool {
		a, b := r.Checks[i], r.Checks[j]
		if order[a.Phase] != order[b.Phase] {
			return order[a.Phase] < order[b.Phase]
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Target < b.Target
	})
}

func gbps(v float64) string { return fmt.Sprintf("%.2f Gb/s", v) }

func usec(d time.Duration) string {
	return fmt.Sprintf("%.2f us", float64(d)/float64(time.Microsecond))
}
