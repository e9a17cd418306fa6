package validate

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/labctl"
	"github.com/fabricctl/fabricctl/internal/sim"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

func loadSimFabric(t testing.TB) *intent.Fabric {
	t.Helper()
	b, err := os.ReadFile("testdata/simfabric.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f, err := intent.Parse("testdata/simfabric.yaml", b)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// simTwins starts one twin per switch of f and returns counter sources
// reading them (SwitchCounters over gNMI, the code that reads real
// switches) and the twins by switch name.
func simTwins(t *testing.T, f *intent.Fabric) ([]Source, map[string]*twin.Twin) {
	t.Helper()
	twins := map[string]*twin.Twin{}
	var srcs []Source
	for _, sw := range f.Switches {
		tw, err := twin.Start(twin.Options{Name: sw.Name, Platform: sw.Platform})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tw.Close() })
		twins[sw.Name] = tw
		// A lab's twins count from zero (every port's lossless priority
		// has its counters before the first traffic).
		for _, p := range sw.Ports {
			for _, prio := range f.Policy.LosslessPriorities() {
				if err := tw.Play(p.Name, prio, twin.Traffic{}); err != nil {
					t.Fatal(err)
				}
			}
		}
		c, err := transport.Dial(t.Context(), intent.Switch{Name: sw.Name, Platform: sw.Platform, Address: tw.Addr(), TLS: intent.TLS{Insecure: true}},
			transport.Options{Attempts: 1, Timeout: time.Minute, Getenv: func(string) string { return "" }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		ports := make([]string, len(sw.Ports))
		for i, p := range sw.Ports {
			ports[i] = p.Name
		}
		srcs = append(srcs, &SwitchCounters{Switch: sw.Name, Platform: sw.Platform, Ports: ports, Sub: c})
	}
	return srcs, twins
}

// playToTwins posts a simulation result's switch-port counters to the
// twins as a kept lab's control socket does (labctl.FromResult into
// labctl.Lab.Play, which the socket serves).
func playToTwins(twins map[string]*twin.Twin) func(context.Context, *sim.Result) error {
	var tws []*twin.Twin
	for _, tw := range twins {
		tws = append(tws, tw)
	}
	lab := labctl.NewLab(tws)
	return func(_ context.Context, r *sim.Result) error { return lab.Play(labctl.FromResult(r)) }
}

// TestSimEngineChainIsCoherent: the sim engine runs the validation plan's
// flows in the simulator and posts the switch counters to twins of the
// three platforms; validate reads them back with SwitchCounters, and the
// prediction (the same flows in the simulator again, on the same
// configuration) agrees with what was "measured" to the packet: every
// prediction check passes at 0% apart, throughput per flow included, and
// the switch counter rows are filled. Every report format says "sim".
func TestSimEngineChainIsCoherent(t *testing.T) {
	f := loadSimFabric(t)
	srcs, twins := simTwins(t, f)
	s := &Simulator{Fabric: f, Options: sim.Options{Duration: 200 * time.Microsecond}}
	eng := &SimEngine{Sim: s, Post: playToTwins(twins)}
	rep, err := Run(t.Context(), f, Options{Engine: eng, Sources: srcs, AllPairs: true, Incast: true, Latency: true,
		Predict: &Predictor{Sim: s, Tolerance: 0.01}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Engine != "sim" || !strings.Contains(rep.EngineNote, "SIMULATED") {
		t.Errorf("engine %q, note %q", rep.Engine, rep.EngineNote)
	}
	if v := rep.Verdict(); v != "PASS" {
		var b bytes.Buffer
		_ = WriteText(&b, rep)
		t.Fatalf("verdict %s:\n%s", v, b.String())
	}
	var bw, lat int
	for _, fl := range rep.Flows {
		if fl.Err != "" {
			t.Errorf("flow %s->%s: %s", fl.Client, fl.Server, fl.Err)
		}
		if fl.Test == "latency" {
			lat++
			if fl.P99 <= 0 || fl.P99 > 100*time.Microsecond {
				t.Errorf("latency flow %s->%s: p99 %v", fl.Client, fl.Server, fl.P99)
			}
			continue
		}
		bw++
		if fl.PredictedGbps == nil || fl.Gbps != *fl.PredictedGbps || fl.Gbps <= 0 {
			t.Errorf("flow %s %s->%s: %v Gb/s, predicted %v", fl.Test, fl.Client, fl.Server, fl.Gbps, fl.PredictedGbps)
		}
	}
	if bw != 9 || lat != 6 { // 3 all-pairs rounds of 2 flows, 3->1 incast; latency rounds
		t.Errorf("%d bandwidth and %d latency flows", bw, lat)
	}
	// The incast congests leaf1's port to h1: PFC and ECN act, and the
	// twins' counters (read by SwitchCounters) say so.
	byName := map[string]Check{}
	for _, c := range rep.Checks {
		byName[c.ID()] = c
		if c.Phase == PhasePrediction && c.Status != Pass && c.Name != "prediction.pause_time" {
			t.Errorf("%s: %s %s %s", c.ID(), c.Status, c.Observed, c.Message)
		}
	}
	if c := byName["switch.ecn_marked"]; c.Status != Pass {
		t.Errorf("switch.ecn_marked: %+v", c)
	}
	if c := byName["switch.lossless_drops[leaf1/ethernet-1/1]"]; c.Status != Pass || c.Observed != "0" {
		t.Errorf("switch.lossless_drops[leaf1/ethernet-1/1]: %+v", c)
	}
	rows := map[string]PredictionRow{}
	for _, r := range rep.Prediction.Rows {
		rows[r.Quantity] = r
	}
	for _, q := range []string{"PFC pause frames sent by switches", "ECN-marked packets at switches", "throughput, all flows summed"} {
		r := rows[q]
		if r.Measured == nil || *r.Measured != r.Predicted || r.Predicted <= 0 {
			t.Errorf("%s: predicted %v, measured %v", q, r.Predicted, r.Measured)
		}
	}
	if r := rows["lossless drops at switches"]; r.Measured == nil || *r.Measured != 0 || r.Predicted != 0 {
		t.Errorf("drops: predicted %v, measured %v", r.Predicted, r.Measured)
	}
	for name, write := range map[string]func(*bytes.Buffer) error{
		"text":     func(b *bytes.Buffer) error { return WriteText(b, rep) },
		"json":     func(b *bytes.Buffer) error { return WriteJSON(b, rep) },
		"junit":    func(b *bytes.Buffer) error { return WriteJUnit(b, rep) },
		"markdown": func(b *bytes.Buffer) error { return WriteMarkdown(b, rep) },
	} {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "sim") || !strings.Contains(b.String(), "prediction") && !strings.Contains(b.String(), "PREDICTED") && !strings.Contains(b.String(), "Predicted") {
			t.Errorf("%s report does not name the sim engine and the prediction:\n%s", name, b.String())
		}
	}
	var j struct {
		Engine     string `json:"engine"`
		Prediction struct {
			Rows []json.RawMessage `json:"rows"`
		} `json:"prediction"`
	}
	var b bytes.Buffer
	_ = WriteJSON(&b, rep)
	if err := json.Unmarshal(b.Bytes(), &j); err != nil || j.Engine != "sim" || len(j.Prediction.Rows) < 5 {
		t.Errorf("json: engine %q, %d prediction rows, %v", j.Engine, len(j.Prediction.Rows), err)
	}
}

// halfEngine is a TEST DOUBLE of the RDMA engine ("rdma"): every flow
// measures half of what the simulator predicts for it, as a fabric whose
// real throughput the model overestimates would.
type halfEngine struct{ s *Simulator }

func (e *halfEngine) Name() string          { return "rdma" }
func (e *halfEngine) MeasuresLatency() bool { return false }
func (e *halfEngine) Run(ctx context.Context, kind string, flows []Flow) []FlowResult {
	r, err := e.s.Run(ctx, kind, flows)
	out := make([]FlowResult, len(flows))
	for i, f := range flows {
		out[i] = newResult(f, 106)
		if err != nil {
			out[i].Err = err.Error()
			continue
		}
		out[i].Gbps = r.Flows[i].Goodput / 1e9 / 2
	}
	return out
}

// TrafficTime: the double's rounds last as long as the simulated ones.
func (e *halfEngine) TrafficTime(string) time.Duration { return e.s.Duration() }

// TestPredictionFlagsDivergence: with an RDMA engine double whose flows
// measure half the predicted throughput, and switch counters (a counter
// double) that show no pause frames where the simulator predicts them,
// the prediction checks warn, naming the flow and the quantity with the
// tolerance; the verdict stays PASS (a warning, not a failure); with a
// tolerance above the divergence they pass.
func TestPredictionFlagsDivergence(t *testing.T) {
	f := loadSimFabric(t)
	// Half of the predicted throughput still fills 30% of the receiver's
	// link: only the prediction speaks of the difference.
	f.Validation.MinBandwidthShare = 0.3
	s := &Simulator{Fabric: f, Options: sim.Options{Duration: 200 * time.Microsecond}}
	src := &fakeCounters{name: "switch leaf1", targets: []string{"leaf1/ethernet-1/1", "leaf1/ethernet-1/2", "leaf1/ethernet-1/3"},
		step: map[string]uint64{"q3.drops": 0, "p3.pfc_tx": 0, "p3.pfc_rx": 0, "q3.ecn_marked": 1}}
	run := func(tol float64) *Report {
		rep, err := Run(t.Context(), f, Options{Engine: &halfEngine{s}, Sources: []Source{src}, Incast: true,
			Predict: &Predictor{Sim: s, Tolerance: tol}})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	rep := run(0.2)
	warned := map[string]Check{}
	for _, c := range rep.Checks {
		if c.Status == Warn {
			warned[c.ID()] = c
		}
	}
	for _, id := range []string{"prediction.flow_throughput[incast r1 h2:eth0->h1:eth0]", "prediction.throughput", "prediction.ecn_marks"} {
		c, ok := warned[id]
		if !ok {
			t.Errorf("%s did not warn; warnings: %v", id, warned)
			continue
		}
		if c.Limit != "within 20% of predicted" || !strings.Contains(c.Message, "diverge") {
			t.Errorf("%s: limit %q message %q", id, c.Limit, c.Message)
		}
	}
	if c := warned["prediction.flow_throughput[incast r1 h2:eth0->h1:eth0]"]; !strings.Contains(c.Observed, "(50% apart)") {
		t.Errorf("flow throughput observed %q", c.Observed)
	}
	if rep.Verdict() != "PASS" || rep.Summarize().Warn < 4 {
		for _, c := range rep.Checks {
			if c.Status == Fail || c.Status == Error {
				t.Log(c.ID(), c.Observed, c.Message)
			}
		}
		t.Errorf("verdict %s, %+v", rep.Verdict(), rep.Summarize())
	}
	var txt, md, xml bytes.Buffer
	_ = WriteText(&txt, rep)
	_ = WriteMarkdown(&md, rep)
	_ = WriteJUnit(&xml, rep)
	for name, s := range map[string]string{"text": txt.String(), "markdown": md.String(), "junit": xml.String()} {
		if !strings.Contains(strings.ToLower(s), "warn") || !strings.Contains(s, "20%") {
			t.Errorf("%s report does not flag the divergence with its tolerance:\n%s", name, s)
		}
	}
	// The same run with a tolerance above the 50% divergence of throughput
	// no longer warns on it.
	rep = run(0.6)
	for _, c := range rep.Checks {
		if strings.HasPrefix(c.Name, "prediction.flow_throughput") && c.Status != Pass {
			t.Errorf("%s at 60%%: %s %s", c.ID(), c.Status, c.Observed)
		}
	}
}

// TestPredictionScalesToTrafficTime: counts predicted for a round are the
// simulator's per simulated second times the engine's traffic time.
func TestPredictionScalesToTrafficTime(t *testing.T) {
	f := loadSimFabric(t)
	s := &Simulator{Fabric: f, Options: sim.Options{Duration: 200 * time.Microsecond}}
	flows := []Flow{}
	rs := rails(f)
	for _, i := range []int{1, 2, 3} {
		flows = append(flows, Flow{Test: "incast", Round: 1, Client: rs[0][i], Server: rs[0][0]})
	}
	r, err := s.Run(t.Context(), KindBandwidth, flows)
	if err != nil {
		t.Fatal(err)
	}
	pause := r.Totals(true).PauseSent
	if pause == 0 {
		t.Fatal("the 3->1 incast sent no pause frames in the simulator")
	}
	ps := newPredictState(&Predictor{Sim: s})
	res := make([]FlowResult, len(flows))
	ps.round(t.Context(), KindBandwidth, flows, res, 10*s.Duration())
	var got int64
	for _, st := range ps.ports {
		got += st.PauseSent
	}
	// Host ports' pause frames are not switch counters.
	var sw int64
	for _, p := range r.Ports {
		if !p.Host && p.Lossless {
			sw += p.PauseSent
		}
	}
	if math.Abs(float64(got-10*sw)) > float64(len(ps.ports)) {
		t.Errorf("scaled pause frames %d, want about 10 x %d", got, sw)
	}
}
