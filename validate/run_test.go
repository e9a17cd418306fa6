package validate

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/validate/perftest"
)

var update = flag.Bool("update", false, "update golden files")

// cannedBW is a real-format perftest bandwidth output the fake engine parses
// for every flow, so parsing is part of the measured overhead.
var cannedBW = []byte(` #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
 65536      3519200          0.00               369.07 		   0.703950
---------------------------------------------------------------------------------------
`)

// fakeEngine is a TEST DOUBLE of the RDMA engine: it returns canned perftest
// results instantly (parsed from cannedBW), and records every flow.
type fakeEngine struct {
	mu    sync.Mutex
	flows []Flow
	slow  map[string]float64 // client host -> Gb/s override
}

func (e *fakeEngine) Name() string          { return "rdma" }
func (e *fakeEngine) MeasuresLatency() bool { return false }
func (e *fakeEngine) Run(_ context.Context, kind string, flows []Flow) []FlowResult {
	e.mu.Lock()
	e.flows = append(e.flows, flows...)
	e.mu.Unlock()
	out := make([]FlowResult, len(flows))
	for i, f := range flows {
		out[i] = newResult(f, 106)
		rep, err := perftest.ParseBytes("canned", cannedBW)
		if err != nil {
			out[i].Err = err.Error()
			continue
		}
		fillPerftest(&out[i], rep)
		if g, ok := e.slow[f.Client.Host]; ok {
			out[i].Gbps = g
		}
		if kind == KindLatency {
			out[i].Gbps = 0
			out[i].P50, out[i].P99, out[i].P999 = 2*time.Microsecond, 3*time.Microsecond, 4*time.Microsecond
		}
	}
	return out
}

// fakeCounters is a TEST DOUBLE counter source: each Read returns the
// previous values plus step.
type fakeCounters struct {
	name    string
	targets []string
	step    map[string]uint64
	mu      sync.Mutex
	n       uint64
}

func (c *fakeCounters) Name() string { return c.name }
func (c *fakeCounters) Kind() string { return "host" }
func (c *fakeCounters) Read(context.Context) (Sample, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := Sample{}
	for _, t := range c.targets {
		m := map[string]uint64{}
		for k, v := range c.step {
			m[k] = 1000 + v*c.n
		}
		s[t] = m
	}
	c.n++
	return s, nil
}

func fabric(n int) *intent.Fabric {
	f := &intent.Fabric{Name: "pod1", Policy: *rocePolicy(),
		Validation: intent.Validation{MinBandwidthShare: 0.9, MaxP99Latency: 5 * time.Microsecond}}
	for i := 1; i <= n; i++ {
		f.Hosts = append(f.Hosts, intent.Host{Name: fmt.Sprintf("gpu%02d", i), Address: "local",
			NICs: []intent.NIC{{Interface: "ens1f0np0", RDMADevice: "mlx5_0", RDMAPort: 1, Speed: 400_000_000_000, Address: fmt.Sprintf("10.0.1.%d", i)}}})
	}
	return f
}

// fixedClock returns start, then start+step, ...
func fixedClock(step time.Duration) func() time.Time {
	t := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(step); return t }
}

func sampleRun(t testing.TB) *Report {
	t.Helper()
	eng := &fakeEngine{slow: map[string]float64{"gpu03": 310}}
	f := fabric(4)
	src := []Source{
		&fakeCounters{name: "gpu01 rdma mlx5_0/1", targets: []string{"gpu01/rdma/mlx5_0/1"},
			step: map[string]uint64{"out_of_sequence": 0, "packet_seq_err": 0, "local_ack_timeout_err": 0, "np_ecn_marked_roce_packets": 40, "np_cnp_sent": 38, "rp_cnp_handled": 35}},
		&fakeCounters{name: "leaf1", targets: []string{"leaf1/Ethernet0"}, step: map[string]uint64{"q3.drops": 0, "q3.ecn_marked": 40, "p3.pfc_tx": 7}},
	}
	readback := func(context.Context) (*plan.Plan, error) {
		return &plan.Plan{Targets: []plan.TargetPlan{
			{Name: "leaf1", Kind: plan.KindSwitch, Platform: "sonic", Changes: []plan.Change{{Action: plan.Update, Path: "/CONFIG_DB/localhost/PORT_QOS_MAP/Ethernet0/pfc_enable", Before: `"3,4"`, After: `"3"`, Reason: "lossless priorities"}}},
			{Name: "gpu01", Kind: plan.KindHost},
		}}, nil
	}
	rep, err := Run(context.Background(), f, Options{Engine: eng, Sources: src, Readback: readback, AllPairs: true, Incast: true, Latency: true, Now: fixedClock(1500 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestRunSchedule(t *testing.T) {
	for _, n := range []int{2, 3, 4, 7, 8} {
		eng := &fakeEngine{}
		rep, err := Run(context.Background(), fabric(n), Options{Engine: eng, AllPairs: true, Incast: true})
		if err != nil {
			t.Fatal(err)
		}
		wantRounds := n - 1
		if n%2 == 1 {
			wantRounds = n
		}
		if n >= 3 {
			wantRounds++ // incast
		}
		if rep.Rounds != wantRounds {
			t.Errorf("n=%d: %d rounds, want %d", n, rep.Rounds, wantRounds)
		}
		pairs := map[[2]string]int{}
		for _, fl := range eng.flows {
			if fl.Test != "all-pairs" {
				continue
			}
			a, b := fl.Client.Host, fl.Server.Host
			if a > b {
				a, b = b, a
			}
			pairs[[2]string{a, b}]++
		}
		if len(pairs) != n*(n-1)/2 {
			t.Errorf("n=%d: %d distinct pairs, want %d", n, len(pairs), n*(n-1)/2)
		}
		for p, c := range pairs {
			if c != 1 {
				t.Errorf("n=%d: pair %v ran %d times", n, p, c)
			}
		}
	}
	if _, err := Run(context.Background(), fabric(1), Options{Engine: &fakeEngine{}, AllPairs: true}); err == nil {
		t.Error("one host: want an error")
	}
}

func TestRunVerdict(t *testing.T) {
	rep := sampleRun(t)
	if got := rep.Verdict(); got != "FAIL" {
		t.Errorf("verdict = %s, want FAIL (drift and a slow host)", got)
	}
	want := map[string]Status{
		"readback.drift[switch leaf1 /CONFIG_DB/localhost/PORT_QOS_MAP/Ethernet0/pfc_enable]": Fail,
		"readback[host gpu01]":                   Pass,
		"host.rdma.ecn_cnp":                      Pass,
		"switch.ecn_marked":                      Pass,
		"switch.lossless_drops[leaf1/Ethernet0]": Pass,
		"traffic.bandwidth[all-pairs r1 gpu03:ens1f0np0->gpu04:ens1f0np0]": Fail,
	}
	got := map[string]Status{}
	for _, c := range rep.Checks {
		if _, ok := want[c.ID()]; ok {
			got[c.ID()] = c.Status
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("check statuses mismatch (-want +got):\n%s", diff)
	}
}

func TestRenderGolden(t *testing.T) {
	rep := sampleRun(t)
	for _, tt := range []struct {
		file  string
		write func(*bytes.Buffer, *Report) error
	}{
		{"report.txt", func(b *bytes.Buffer, r *Report) error { return WriteText(b, r) }},
		{"report.md", func(b *bytes.Buffer, r *Report) error { return WriteMarkdown(b, r) }},
		{"report.xml", func(b *bytes.Buffer, r *Report) error { return WriteJUnit(b, r) }},
		{"report.json", func(b *bytes.Buffer, r *Report) error { return WriteJSON(b, r) }},
	} {
		t.Run(tt.file, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.write(&b, rep); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", tt.file)
			if *update {
				if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("read golden (run with -update): %v", err)
			}
			switch filepath.Ext(tt.file) {
			case ".json":
				var w, g Report
				if err := json.Unmarshal(want, &w); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(b.Bytes(), &g); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(w, g); diff != "" {
					t.Errorf("WriteJSON mismatch (-want +got):\n%s", diff)
				}
			case ".xml":
				var w, g junitSuites
				if err := xml.Unmarshal(want, &w); err != nil {
					t.Fatal(err)
				}
				if err := xml.Unmarshal(b.Bytes(), &g); err != nil {
					t.Fatalf("WriteJUnit output is not valid XML: %v", err)
				}
				if diff := cmp.Diff(w, g); diff != "" {
					t.Errorf("WriteJUnit mismatch (-want +got):\n%s", diff)
				}
				if g.Tests != len(rep.Checks) {
					t.Errorf("junit tests = %d, want one per check (%d)", g.Tests, len(rep.Checks))
				}
			default:
				if diff := cmp.Diff(string(want), b.String()); diff != "" {
					t.Errorf("%s mismatch (-want +got):\n%s", tt.file, diff)
				}
			}
		})
	}
}

// BenchmarkRun64 is a 64-host simulated validation: the engine test double
// returns canned perftest output instantly, so the time measured is
// fabricctl's own overhead (scheduling 63 all-pairs rounds, bandwidth and
// latency, plus a 63->1 incast; reading 64 RDMA + 64 ethtool + 256 switch
// port counter sets twice; parsing 4,033 perftest outputs; the verdict).
// Compare it with the traffic time itself: 127 rounds x 10 s = 21 minutes.
func BenchmarkRun64(b *testing.B) {
	f := fabric(64)
	var src []Source
	for _, h := range f.Hosts {
		src = append(src,
			&fakeCounters{name: h.Name + " rdma", targets: []string{h.Name + "/rdma/mlx5_0/1"},
				step: map[string]uint64{"out_of_sequence": 0, "packet_seq_err": 0, "implied_nak_seq_err": 0, "local_ack_timeout_err": 0, "rp_cnp_ignored": 0, "np_ecn_marked_roce_packets": 3, "np_cnp_sent": 3, "rp_cnp_handled": 3}},
			&fakeCounters{name: h.Name + " ethtool", targets: []string{h.Name + "/ethtool/ens1f0np0"},
				step: map[string]uint64{"rx_discards_phy": 0, "tx_discards_phy": 0, "rx_prio3_discards": 0, "rx_prio3_pause": 5, "tx_prio3_pause": 5, "tx_pause_storm_error_events": 0}})
	}
	for s := 0; s < 4; s++ {
		var ports []string
		for p := 0; p < 64; p++ {
			ports = append(ports, fmt.Sprintf("leaf%d/Ethernet%d", s, p*4))
		}
		src = append(src, &fakeCounters{name: fmt.Sprintf("leaf%d", s), targets: ports, step: map[string]uint64{"q3.drops": 0, "q3.ecn_marked": 2, "p3.pfc_tx": 1, "q3.watchdog": 0}})
	}
	b.ResetTimer()
	for b.Loop() {
		rep, err := Run(context.Background(), f, Options{Engine: &fakeEngine{}, Sources: src, AllPairs: true, Incast: true, Latency: true})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Rounds != 127 {
			b.Fatalf("rounds = %d, want 127 (63 bandwidth + 63 latency + incast)", rep.Rounds)
		}
	}
}

// TestRunRails: hosts with two NICs run both rails in the same rounds: N-1
// rounds (N with byes), every pair once per rail, never across rails.
func TestRunRails(t *testing.T) {
	f := fabric(4)
	for i := range f.Hosts {
		nic := f.Hosts[i].NICs[0]
		nic.Interface, nic.RDMADevice = "ens2f0np0", "mlx5_1"
		f.Hosts[i].NICs = append(f.Hosts[i].NICs, nic)
	}
	eng := &fakeEngine{}
	rep, err := Run(context.Background(), f, Options{Engine: eng, AllPairs: true, Incast: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rounds != 4 { // 3 all-pairs + incast
		t.Errorf("rounds = %d, want 4", rep.Rounds)
	}
	pairs := map[string]int{}
	for _, fl := range eng.flows {
		if fl.Client.NIC.Interface != fl.Server.NIC.Interface {
			t.Errorf("flow across rails: %s -> %s", fl.Client, fl.Server)
		}
		if fl.Test == "all-pairs" {
			a, b := fl.Client.String(), fl.Server.String()
			if a > b {
				a, b = b, a
			}
			pairs[a+" "+b]++
		}
	}
	if len(pairs) != 12 { // 6 pairs x 2 rails
		t.Errorf("%d distinct rail pairs, want 12", len(pairs))
	}
	for p, n := range pairs {
		if n != 1 {
			t.Errorf("pair %s ran %d times", p, n)
		}
	}
	incast := 0
	for _, fl := range eng.flows {
		if fl.Test == "incast" {
			incast++
		}
	}
	if incast != 6 { // 3 senders x 2 rails
		t.Errorf("incast flows = %d, want 6", incast)
	}
}

// BenchmarkRunScaling reports the traffic rounds and fabricctl's overhead per
// run for growing fabrics: rounds grow as 2(N-1)+1 (bandwidth, latency,
// incast), not N(N-1)/2.
func BenchmarkRunScaling(b *testing.B) {
	for _, n := range []int{8, 16, 32, 64, 128} {
		b.Run(fmt.Sprintf("hosts=%d", n), func(b *testing.B) {
			f := fabric(n)
			var rounds int
			for b.Loop() {
				rep, err := Run(context.Background(), f, Options{Engine: &fakeEngine{}, AllPairs: true, Incast: true, Latency: true})
				if err != nil {
					b.Fatal(err)
				}
				rounds = rep.Rounds
			}
			b.ReportMetric(float64(rounds), "rounds")
			b.ReportMetric(float64(n*(n-1)/2), "pairs")
		})
	}
}

// cancelEngine is a TEST DOUBLE that cancels the run during its second round.
type cancelEngine struct {
	fakeEngine
	cancel context.CancelFunc
	calls  int
}

func (e *cancelEngine) Run(ctx context.Context, kind string, flows []Flow) []FlowResult {
	e.calls++
	if e.calls == 2 {
		e.cancel()
	}
	return e.fakeEngine.Run(ctx, kind, flows)
}

func TestRunInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	eng := &cancelEngine{cancel: cancel}
	rep, err := Run(ctx, fabric(4), Options{Engine: eng, AllPairs: true, Incast: true})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if rep == nil || rep.Rounds != 2 || len(rep.Flows) != 4 {
		t.Fatalf("partial report = %+v, want the 2 rounds (4 flows) run before the interrupt", rep)
	}
	if !hasCheck(rep, "run", Error) || rep.Verdict() == "PASS" {
		t.Errorf("partial report verdict %s, want an error check saying it was interrupted", rep.Verdict())
	}
}

// scriptedCounters is a TEST DOUBLE counter source that returns its samples
// in turn.
type scriptedCounters struct {
	name    string
	mu      sync.Mutex
	samples []Sample
}

func (c *scriptedCounters) Name() string { return c.name }
func (c *scriptedCounters) Kind() string { return "host" }
func (c *scriptedCounters) Read(context.Context) (Sample, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.samples[0]
	if len(c.samples) > 1 {
		c.samples = c.samples[1:]
	}
	return s, nil
}

// TestRunCounterReset: a counter that went backwards between the two reads
// (cleared by someone, a driver reload) has an unknown delta. The errors it
// may have counted before the reset must not turn into a pass.
func TestRunCounterReset(t *testing.T) {
	src := &scriptedCounters{name: "gpu01 rdma mlx5_0/1", samples: []Sample{
		{"gpu01/rdma/mlx5_0/1": {"out_of_sequence": 50, "packet_seq_err": 3, "local_ack_timeout_err": 0}},
		{"gpu01/rdma/mlx5_0/1": {"out_of_sequence": 0, "packet_seq_err": 3, "local_ack_timeout_err": 0}},
	}}
	rep, err := Run(context.Background(), fabric(2), Options{Engine: &fakeEngine{}, Sources: []Source{src}, AllPairs: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Status{}
	for _, c := range rep.Checks {
		if c.Phase == PhaseCounters {
			got[c.ID()] = c.Status
		}
	}
	want := map[string]Status{
		"counters.reset[gpu01/rdma/mlx5_0/1]":         Error,
		"host.rdma.seq_errors[gpu01/rdma/mlx5_0/1]":   Pass, // the lower bound: 0 since the reset
		"host.rdma.ack_timeouts[gpu01/rdma/mlx5_0/1]": Pass,
		"host.rdma.ecn_cnp":                           Skip,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("counter checks mismatch (-want +got):\n%s", diff)
	}
	if v := rep.Verdict(); v == "PASS" {
		t.Errorf("verdict = %s with a counter reset during the run, want it not to pass", v)
	}
}

// TestRunTargetWithoutCounters: a switch port for which the platform
// returned no counter at all (a port name the device does not know, a
// model it does not serve) must show up as skipped checks, not vanish from
// the report.
func TestRunTargetWithoutCounters(t *testing.T) {
	src := &scriptedCounters{name: "switch leaf1", samples: []Sample{
		{"leaf1/Ethernet0": {"q3.drops": 0}, "leaf1/Ethernet8": {}},
		{"leaf1/Ethernet0": {"q3.drops": 0}, "leaf1/Ethernet8": {}},
	}}
	rep, err := Run(context.Background(), fabric(2), Options{Engine: &fakeEngine{}, Sources: []Source{src}, AllPairs: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Status{}
	for _, c := range rep.Checks {
		if c.Name == "switch.lossless_drops" {
			got[c.ID()] = c.Status
		}
	}
	want := map[string]Status{
		"switch.lossless_drops[leaf1/Ethernet0]": Pass,
		"switch.lossless_drops[leaf1/Ethernet8]": Skip,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("switch checks mismatch (-want +got):\n%s", diff)
	}
}

// hangingCounters is a TEST DOUBLE of a host whose counter read never
// returns (a driver stuck in a firmware command under the ETHTOOL_GSTATS
// ioctl, which takes no context): it ignores its context and blocks until
// release is closed.
type hangingCounters struct{ release chan struct{} }

func (hangingCounters) Name() string { return "gpu01 ethtool ens1f0np0" }
func (hangingCounters) Kind() string { return "host" }
func (h hangingCounters) Read(context.Context) (Sample, error) {
	<-h.release
	return nil, errors.New("released")
}

// TestRunCounterReadTimeout: one stuck counter source must not hang the
// whole validation; it becomes an error check after CounterTimeout.
func TestRunCounterReadTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	done := make(chan struct{})
	var rep *Report
	var err error
	go func() {
		defer close(done)
		rep, err = Run(context.Background(), fabric(2), Options{Engine: &fakeEngine{}, Sources: []Source{hangingCounters{release}},
			AllPairs: true, CounterTimeout: 100 * time.Millisecond})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return: a hanging counter source blocks the validation")
	}
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range rep.Checks {
		if c.Name == "counters.read" && c.Target == "gpu01 ethtool ens1f0np0" && c.Status == Error {
			found = true
		}
	}
	if !found {
		t.Errorf("want an error check for the stuck source; checks:\n%s", checkLines(rep))
	}
}
