package validate

import (
	"context"
	"fmt"
	"time"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/sim"
)

// NetworkSource builds the simulator's network for a scenario. The
// default (IntentNetwork) is the intent's configuration; with a lab it is
// the configuration read back from the twins (what apply left there).
type NetworkSource func(ctx context.Context, sc *sim.Scenario) (*sim.Network, error)

// IntentNetwork is the network the intent describes, as `simulate` builds
// it (sim.Build: the intent's topology, the headroom and XOFF the compilers
// program from portfacts).
func IntentNetwork(f *intent.Fabric) NetworkSource {
	return func(_ context.Context, sc *sim.Scenario) (*sim.Network, error) {
		return sim.Build(f, sc, sim.StarOptions{}, 0)
	}
}

// ConfiguredNetwork is the intent's topology with each port's
// configuration replaced by configure's (a lab: the configuration read
// back from the twins, internal/applied.Configure).
func ConfiguredNetwork(f *intent.Fabric, configure func(*sim.Network) error) NetworkSource {
	return func(_ context.Context, sc *sim.Scenario) (*sim.Network, error) {
		n, err := sim.Build(f, sc, sim.StarOptions{}, 0)
		if err != nil {
			return nil, err
		}
		if err := configure(n); err != nil {
			return nil, err
		}
		return n, nil
	}
}

// Simulator runs the flows of a validate round in the packet simulator
// (internal/sim): the sim engine's traffic and every engine's prediction.
type Simulator struct {
	Fabric *intent.Fabric
	// Network is where the flows run (nil = IntentNetwork(Fabric)); Source
	// says what it is in the report ("the intent's configuration").
	Network NetworkSource
	Source  string
	// Options are simulate's (Duration: simulated time per round, default
	// sim.DefaultDuration; Seed; DCQCN).
	Options sim.Options
}

// LatencyMessage is the message of a simulated latency flow: perftest's
// ib_write_lat default size is 2 bytes; one small frame either way.
const LatencyMessage = 64

// Duration is the simulated time of one round.
func (s *Simulator) Duration() time.Duration {
	if s.Options.Duration > 0 {
		return s.Options.Duration
	}
	return sim.DefaultDuration
}

// SourceName is Source, or the intent's configuration.
func (s *Simulator) SourceName() string {
	if s.Source != "" {
		return s.Source
	}
	return "the intent's configuration"
}

// Run simulates flows at the same time: bandwidth flows send for the whole
// round, latency flows one LatencyMessage each. Result.Flows[i] is flows[i].
func (s *Simulator) Run(ctx context.Context, kind string, flows []Flow) (*sim.Result, error) {
	ends := make([]sim.FlowEnds, len(flows))
	for i, f := range flows {
		ends[i] = sim.FlowEnds{FromHost: f.Client.Host, FromNIC: f.Client.NIC.Interface, ToHost: f.Server.Host, ToNIC: f.Server.NIC.Interface}
		if kind == KindLatency {
			ends[i].Size = LatencyMessage
		}
	}
	name := "validate"
	if len(flows) > 0 {
		name = fmt.Sprintf("validate %s round %d", flows[0].Test, flows[0].Round)
	}
	sc, err := sim.ScenarioFromFlows(s.Fabric, name, ends)
	if err != nil {
		return nil, err
	}
	src := s.Network
	if src == nil {
		src = IntentNetwork(s.Fabric)
	}
	n, err := src(ctx, sc)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := sim.New(n, s.Options).Run()
	if len(r.Flows) != len(flows) {
		return nil, fmt.Errorf("simulator: %d flows in, %d results out", len(flows), len(r.Flows))
	}
	return r, nil
}

// SimEngine runs the validation plan's flows in the packet simulator
// instead of on hosts: nothing is sent on a wire. What it reports is the
// simulator's model of the fabric (Simulator.Source): bandwidth is each
// flow's simulated goodput; latency is one small message's completion
// time (first bit sent to its ACK back at the sender) halved, as
// ib_write_lat halves its round trip: wire, serialisation and switch
// queueing only, no NIC, PCIe or software time, and one message, so p50,
// p99 and p99.9 are that one figure.
//
// With Post (a lab), the switch counters of every round's result are
// posted to the lab's twins, where validate reads them back with the code
// that reads real switches (SwitchCounters).
type SimEngine struct {
	Sim  *Simulator
	Post func(ctx context.Context, r *sim.Result) error
}

var _ Engine = (*SimEngine)(nil)

// Name implements Engine.
func (e *SimEngine) Name() string { return "sim" }

// MeasuresLatency implements Engine: latency rounds run their own flows.
func (e *SimEngine) MeasuresLatency() bool { return false }

// TrafficTime implements trafficTimer: each round is Sim.Duration of
// simulated time.
func (e *SimEngine) TrafficTime(string) time.Duration { return e.Sim.Duration() }

// Note implements engineNoter.
func (e *SimEngine) Note() string {
	return fmt.Sprintf("SIMULATED: the flows ran in fabricctl's packet simulator (%s per round) on %s; no packet was sent on a wire. "+
		"Bandwidth is simulated goodput; latency is one %d-byte message's completion time halved (wire, serialisation and queueing only)",
		e.Sim.Duration(), e.Sim.SourceName(), LatencyMessage)
}

// engineNoter is an engine whose figures need a word in the report.
type engineNoter interface{ Note() string }

// Run implements Engine.
func (e *SimEngine) Run(ctx context.Context, kind string, flows []Flow) []FlowResult {
	out := make([]FlowResult, len(flows))
	for i, f := range flows {
		out[i] = newResult(f, tosOf(e.Sim.Fabric))
		out[i].Command = fmt.Sprintf("simulated %s on %s", e.Sim.Duration(), e.Sim.SourceName())
	}
	fail := func(err error) []FlowResult {
		for i := range out {
			out[i].Err = err.Error()
		}
		return out
	}
	r, err := e.Sim.Run(ctx, kind, flows)
	if err != nil {
		return fail(fmt.Errorf("sim engine: %w", err))
	}
	if e.Post != nil {
		if err := e.Post(ctx, r); err != nil {
			return fail(fmt.Errorf("sim engine: posting the counters to the lab: %w", err))
		}
	}
	for i := range out {
		fr := r.Flows[i]
		out[i].ECNMarked = uint64(fr.ECNMarks)
		if kind == KindLatency {
			if fr.Finished {
				d := time.Duration(fr.FCT/sim.Nanosecond) / 2
				out[i].P50, out[i].P99, out[i].P999 = d, d, d
			} else {
				out[i].Err = fmt.Sprintf("the simulated %d-byte message was not acknowledged within %s", LatencyMessage, e.Sim.Duration())
			}
			continue
		}
		out[i].Gbps = fr.Goodput / 1e9
	}
	return out
}

func tosOf(f *intent.Fabric) int { return f.Policy.RoCE.ToS }

// trafficTimer is an engine that knows how long each round's traffic runs
// (perftest's -D, the udp engine's paced flows, the simulated time): the
// prediction scales the simulator's counts to it. Without it the round's
// wall time is used.
type trafficTimer interface {
	TrafficTime(kind string) time.Duration
}

// TrafficTime implements trafficTimer: perftest's -D.
func (e *RDMAEngine) TrafficTime(kind string) time.Duration {
	if kind == KindLatency {
		return 0
	}
	return e.Spec(kind).Duration
}

// TrafficTime implements trafficTimer: packets / rate.
func (e *UDPEngine) TrafficTime(string) time.Duration {
	return newUDPSettings(e.Size, e.Packets, e.Rate, e.BasePort, e.Idle).flowTime()
}

// TrafficTime implements trafficTimer: packets / rate.
func (e *RemoteUDPEngine) TrafficTime(string) time.Duration {
	return newUDPSettings(e.Size, e.Packets, e.Rate, e.BasePort, e.Idle).flowTime()
}
