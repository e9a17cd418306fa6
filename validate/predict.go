package validate

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/fabricctl/fabricctl/internal/sim"
)

// PhasePrediction is the phase of the predicted-vs-measured checks.
const PhasePrediction = "prediction"

// DefaultPredictionTolerance is how far measured and predicted may differ
// (relative to the larger of the two) before a prediction check warns,
// when the intent's validation.predictionTolerance is not set.
const DefaultPredictionTolerance = 0.2

// Predictor runs every traffic round's flows in the packet simulator as
// well, on the same configuration, so that the report shows beside each
// measured figure what the model predicts for it.
type Predictor struct {
	Sim *Simulator
	// Tolerance is the relative difference (0..1) beyond which a
	// prediction check warns (0 = DefaultPredictionTolerance).
	Tolerance float64
}

// Prediction is what the simulator predicted for the run, beside what was
// measured.
type Prediction struct {
	// Source is the configuration the simulator ran on.
	Source string `json:"source"`
	// Simulated is the simulated time of each round; Scaled is the traffic
	// time the counts were scaled to (the engine's, summed over rounds).
	Simulated time.Duration `json:"simulatedPerRoundNs"`
	Scaled    time.Duration `json:"scaledToNs"`
	Tolerance float64       `json:"tolerance"`
	// Rows are the predicted and measured quantities (also as checks).
	Rows []PredictionRow `json:"rows"`
	// Notes say what could not be predicted or compared.
	Notes []string `json:"notes,omitempty"`
}

// PredictionRow is one quantity.
type PredictionRow struct {
	Quantity  string  `json:"quantity"`
	Unit      string  `json:"unit"`
	Predicted float64 `json:"predicted"`
	// Measured is nil when the engine or the counters do not measure it.
	Measured *float64 `json:"measured,omitempty"`
	// Divergence is |measured - predicted| / max(|measured|, |predicted|).
	Divergence float64 `json:"divergence"`
	Status     Status  `json:"status"`
	Note       string  `json:"note,omitempty"`
}

// predictState accumulates the prediction over the rounds.
type predictState struct {
	p      *Predictor
	pred   *Prediction
	ports  map[string]*sim.PrioStats // switch/port -> lossless sums, scaled
	flowN  int                       // bandwidth flows predicted
	errs   []string
	scaled time.Duration
}

func newPredictState(p *Predictor) *predictState {
	tol := p.Tolerance
	if tol <= 0 {
		tol = DefaultPredictionTolerance
	}
	return &predictState{p: p, ports: map[string]*sim.PrioStats{},
		pred: &Prediction{Source: p.Sim.SourceName(), Simulated: p.Sim.Duration(), Tolerance: tol}}
}

// round predicts one round: each flow's PredictedGbps, and the switch
// counters of the lossless priorities scaled from the simulated time to
// the round's traffic time.
func (ps *predictState) round(ctx context.Context, kind string, flows []Flow, res []FlowResult, traffic time.Duration) {
	if kind == KindLatency || len(flows) == 0 {
		return
	}
	r, err := ps.p.Sim.Run(ctx, kind, flows)
	if err != nil {
		ps.errs = append(ps.errs, fmt.Sprintf("%s round %d: %v", flows[0].Test, flows[0].Round, err))
		return
	}
	for i := range res {
		g := r.Flows[i].Goodput / 1e9
		res[i].PredictedGbps = &g
	}
	ps.flowN += len(res)
	scale := traffic.Seconds() / r.Duration.Seconds()
	ps.scaled += traffic
	for _, pr := range r.Ports {
		if pr.Host || !pr.Lossless {
			continue
		}
		t := pr.Node + "/" + pr.Port
		st := ps.ports[t]
		if st == nil {
			st = &sim.PrioStats{}
			ps.ports[t] = st
		}
		st.Drops += int64(math.Round(float64(pr.Drops) * scale))
		st.PauseSent += int64(math.Round(float64(pr.PauseSent) * scale))
		st.PauseRecv += int64(math.Round(float64(pr.PauseRecv) * scale))
		st.PausedTime += sim.Time(math.Round(float64(pr.PausedTime) * scale))
		st.ECNMarks += int64(math.Round(float64(pr.ECNMarks) * scale))
	}
}

// finish compares the prediction with what was measured and returns the
// prediction checks.
func (ps *predictState) finish(rep *Report, lossless map[int]bool) []Check {
	pred := ps.pred
	pred.Scaled = ps.scaled
	for _, e := range ps.errs {
		pred.Notes = append(pred.Notes, "not predicted: "+e)
	}
	var out []Check
	tol := pred.Tolerance
	add := func(row PredictionRow, name, target string) {
		if row.Measured != nil {
			m, p := *row.Measured, row.Predicted
			if d := math.Max(math.Abs(m), math.Abs(p)); d > 0 {
				row.Divergence = math.Abs(m-p) / d
			}
			row.Status = Pass
			if row.Divergence > tol {
				row.Status = Warn
			}
		} else {
			row.Status = Skip
		}
		if target == "" {
			pred.Rows = append(pred.Rows, row)
		}
		c := Check{Name: name, Phase: PhasePrediction, Target: target, Status: row.Status,
			Limit: fmt.Sprintf("within %.0f%% of predicted", tol*100)}
		switch row.Status {
		case Skip:
			c.Observed, c.Message = fmt.Sprintf("predicted %s", fmtQty(row.Predicted, row.Unit)), row.Note
		default:
			c.Observed = fmt.Sprintf("measured %s, predicted %s (%.0f%% apart)", fmtQty(*row.Measured, row.Unit), fmtQty(row.Predicted, row.Unit), row.Divergence*100)
			c.Message = row.Note
			if row.Status == Warn {
				c.Message = strings.TrimPrefix(row.Note+"; ", "; ") + "measured and predicted diverge beyond the tolerance (validation.predictionTolerance): the fabric does not behave as the simulator models its configuration"
			}
		}
		out = append(out, c)
	}

	// Throughput per flow and in total: the engines that measure
	// bandwidth at line rate (perftest's BW average, the sim engine's
	// goodput) against the simulator's goodput of the same flow.
	measuresBW := rep.Engine != "udp"
	var mSum, pSum float64
	var bw int
	for _, f := range rep.Flows {
		if f.PredictedGbps == nil || f.Test == "latency" {
			continue
		}
		target := fmt.Sprintf("%s r%d %s->%s", f.Test, f.Round, f.Client, f.Server)
		row := PredictionRow{Quantity: "throughput " + target, Unit: "Gb/s", Predicted: *f.PredictedGbps}
		switch {
		case !measuresBW:
			row.Note = "the udp engine paces its packets (--udp-rate): it measures loss, not bandwidth"
		case f.Err != "":
			row.Note = "the flow did not run: " + f.Err
		default:
			m := f.Gbps
			row.Measured = &m
			mSum += m
			bw++
		}
		pSum += *f.PredictedGbps
		add(row, "prediction.flow_throughput", target)
	}
	if ps.flowN > 0 {
		row := PredictionRow{Quantity: "throughput, all flows summed", Unit: "Gb/s", Predicted: pSum}
		if measuresBW && bw > 0 {
			row.Measured = &mSum
		} else if !measuresBW {
			row.Note = "the udp engine paces its packets (--udp-rate): it measures loss, not bandwidth"
		}
		add(row, "prediction.throughput", "")
	}

	// Switch counters of the lossless priorities, summed over the switch
	// ports whose counters were read (the predicted sums cover the same
	// ports). What each predicted quantity is in the measured counters
	// (switchctr.go's normalised names):
	//   sim PortResult.Drops (every drop at that egress port and priority,
	//   headroom overflow included) <-> qN.drops (SONiC
	//   SAI_QUEUE_STAT_DROPPED_PACKETS, SR Linux dropped-packets,
	//   OpenConfig dropped-pkts) plus pfc_discards (SR Linux
	//   total-packet-pfc-discards);
	//   sim PauseSent (XOFF frames, refreshes included) <-> pN.pfc_tx
	//   (SAI_PORT_STAT_PFC_N_TX_PKTS, SR Linux pfc-pause-frames-generated);
	//   sim PauseRecv <-> pN.pfc_rx (SAI_PORT_STAT_PFC_N_RX_PKTS, SR Linux
	//   pfc-pause-frames-received);
	//   sim ECNMarks (frames CE-marked into the egress queue) <->
	//   qN.ecn_marked (SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS, SR Linux
	//   ecn-marked-packets);
	//   sim PausedTime (time the egress was held by received XOFF): no
	//   counter fabricctl reads (SONiC's SAI_PORT_STAT_PFC_N_RX_PAUSE_DURATION_US
	//   exists on some ASICs only), so it is shown, not compared.
	// Each quantity is compared over the switch ports that report its
	// counter (EOS's and OpenConfig's state has no PFC counters): the
	// prediction of a port is counted where the measurement is.
	var read []string
	for t := range rep.Deltas {
		if !strings.Contains(t, "/rdma/") && !strings.Contains(t, "/ethtool/") {
			read = append(read, t)
		}
	}
	sort.Strings(read)
	lossSum := func(m map[string]int64, format, name string) (float64, bool) {
		var v float64
		has := false
		for p := range 8 {
			if x, ok := m[fmt.Sprintf(format, p, name)]; ok && lossless[p] {
				v, has = v+float64(x), true
			}
		}
		return v, has
	}
	type quantity struct {
		q, unit, name, why string
		measure            func(m map[string]int64) (float64, bool)
		predict            func(st *sim.PrioStats) float64
	}
	noPFC := "the switches returned no PFC counters (OpenConfig and EOS's OpenConfig state have none)"
	qs := []quantity{
		{"lossless drops at switches", "packets", "prediction.drops", "the switches returned no drop counters for the lossless queues",
			func(m map[string]int64) (float64, bool) {
				v, has := lossSum(m, "q%d.%s", ctrDrops)
				if x, ok := m[ctrPFCDiscards]; ok {
					v, has = v+float64(x), true
				}
				return v, has
			}, func(st *sim.PrioStats) float64 { return float64(st.Drops) }},
		{"PFC pause frames sent by switches", "frames", "prediction.pause_frames", noPFC,
			func(m map[string]int64) (float64, bool) { return lossSum(m, "p%d.%s", ctrPFCTx) },
			func(st *sim.PrioStats) float64 { return float64(st.PauseSent) }},
		{"PFC pause frames received by switches", "frames", "prediction.pause_frames_rx", noPFC,
			func(m map[string]int64) (float64, bool) { return lossSum(m, "p%d.%s", ctrPFCRx) },
			func(st *sim.PrioStats) float64 { return float64(st.PauseRecv) }},
		{"ECN-marked packets at switches", "packets", "prediction.ecn_marks", "the switches returned no ECN-marked counter for the lossless queues",
			func(m map[string]int64) (float64, bool) { return lossSum(m, "q%d.%s", ctrECNMarked) },
			func(st *sim.PrioStats) float64 { return float64(st.ECNMarks) }},
	}
	if ps.flowN == 0 {
		return out
	}
	var all sim.PrioStats // every switch port, for the quantities not measured
	for _, st := range ps.ports {
		all.Drops += st.Drops
		all.PausedTime += st.PausedTime
	}
	for _, q := range qs {
		row := PredictionRow{Quantity: q.q, Unit: q.unit}
		var m float64
		ports := 0
		for _, t := range read {
			v, ok := q.measure(rep.Deltas[t])
			if !ok {
				continue
			}
			ports++
			m += v
			if st := ps.ports[t]; st != nil {
				row.Predicted += q.predict(st)
			}
		}
		switch {
		case len(read) == 0:
			row.Note = "no switch counters were read (--no-counters, no switch in the intent, or the sim engine without a lab)"
		case ports == 0:
			row.Note = q.why
		default:
			row.Measured = &m
			if ports < len(read) {
				row.Note = fmt.Sprintf("over the %d of %d switch ports that report it", ports, len(read))
			}
		}
		if row.Measured == nil {
			for _, st := range ps.ports {
				row.Predicted += q.predict(st)
			}
		}
		add(row, q.name, "")
	}
	predicted := all
	add(PredictionRow{Quantity: "time switch egress was paused", Unit: "ms", Predicted: predicted.PausedTime.Seconds() * 1e3,
		Note: "no pause-duration counter is read from switches"}, "prediction.pause_time", "")
	if rep.Engine == "udp" {
		// Lost datagrams of the lossless class against the predicted
		// drops: the udp engine counts what never arrived end to end.
		var lost float64
		for _, f := range rep.Flows {
			if f.Lost > f.SocketDrops {
				lost += float64(f.Lost - f.SocketDrops)
			}
		}
		add(PredictionRow{Quantity: "packets lost end to end", Unit: "packets", Predicted: float64(predicted.Drops), Measured: &lost,
			Note: "the simulator sends at line rate; the udp engine paces its flows, so only drops compare"}, "prediction.loss", "")
	}
	return out
}

func fmtQty(v float64, unit string) string {
	switch unit {
	case "Gb/s":
		return fmt.Sprintf("%.2f Gb/s", v)
	case "ms":
		return fmt.Sprintf("%.3f ms", v)
	}
	return fmt.Sprintf("%.0f %s", v, unit)
}
