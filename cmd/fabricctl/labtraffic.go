package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/applied"
	"github.com/fabricctl/fabricctl/internal/labctl"
	"github.com/fabricctl/fabricctl/internal/sim"
	"github.com/fabricctl/fabricctl/switchdrv"
)

// Traffic in the lab: the simulator runs a scenario over the configuration
// read back from the twins (internal/applied: what apply left there, not
// the intent) on the intent's own topology, and the run's counters drive
// the twins' counters (internal/labctl) in the platforms' own paths and
// units: once (a one-shot run), or continuously at the run's per-second
// rates in a kept lab, so that watch sees moving counters.

// stormScenario is lab's scenario that makes the PFC watchdog fire: an
// incast into a receiver that never drains (slow-receiver:0), run past
// the watchdog's detection time.
const stormScenario = "storm"

// labRateTick is how often a kept lab's rates move the counters.
const labRateTick = 100 * time.Millisecond

// labTrafficOptions are the traffic flags lab and lab traffic share.
type labTrafficOptions struct {
	scenario string
	duration time.Duration
	seed     int64
}

func (o *labTrafficOptions) bind(cmd *cobra.Command, flag string) {
	if flag != "" {
		cmd.Flags().StringVar(&o.scenario, flag, "", "after apply, run traffic through what the twins hold: "+labScenarios)
	}
	cmd.Flags().DurationVar(&o.duration, "traffic-duration", 0, "fabric time to simulate (default 1ms, storm: past the watchdog's detection)")
	cmd.Flags().Int64Var(&o.seed, "traffic-seed", 0, "random seed of the simulation (default 1)")
}

// labScenarios lists the scenarios in the flags' help.
const labScenarios = "incast:N:1, alltoall, slow-receiver:PCT, link-down:A-B, storm (a receiver that never drains: the PFC watchdog fires) or a scenario file"

func (o *labTrafficOptions) validate() error {
	if o.duration < 0 || o.duration > 10*time.Second {
		return usagef("--traffic-duration %s: want up to 10s of fabric time", o.duration)
	}
	// A scenario that does not parse is refused before any twin starts.
	if o.scenario != "" && o.scenario != stormScenario {
		if _, err := sim.ParseSpec(o.scenario); err != nil {
			return withCode(ExitUsage, err)
		}
	}
	return nil
}

// linkedHosts counts the hosts of f that have a link to a switch.
func linkedHosts(f *intent.Fabric) int {
	seen := map[string]bool{}
	for _, l := range f.Links {
		for _, e := range []intent.Endpoint{l.A, l.B} {
			if f.Host(e.Node) != nil {
				seen[e.Node] = true
			}
		}
	}
	return len(seen)
}

// scenario parses o.scenario for f, with the run's duration and seed.
func (o *labTrafficOptions) scenarioFor(f *intent.Fabric) (*sim.Scenario, sim.Options, error) {
	opt := sim.Options{Duration: o.duration, Seed: o.seed}
	spec := o.scenario
	storm := spec == stormScenario
	if storm {
		spec = "slow-receiver:0"
	}
	sc, err := sim.ParseSpec(spec)
	if err != nil {
		return nil, opt, withCode(ExitUsage, err)
	}
	if storm {
		sc.Name = stormScenario
		// as many senders as the intent has hosts for, up to 4
		if n := linkedHosts(f); n >= 2 && n < sc.Hosts {
			sc.Hosts = n
		}
		if opt.Duration == 0 {
			wd := f.Policy.Watchdog
			opt.Duration = time.Millisecond
			if wd.Enabled && wd.Poll > 0 {
				// the watchdog counts a queue stuck for detect over its
				// polls: it fires at the first poll after detect
				opt.Duration = wd.Detect + 2*wd.Poll
			}
		}
	}
	if opt.Duration == 0 {
		opt.Duration = sc.Duration
	}
	if opt.Seed == 0 {
		opt.Seed = sc.Seed
	}
	if opt.Duration == 0 {
		opt.Duration = sim.DefaultDuration
	}
	return sc, opt, nil
}

// runLabTraffic reads the twins back through eng, simulates o's scenario
// over what they hold and returns the run and its plays (the switch
// ports' counters), after a summary on out.
func runLabTraffic(ctx context.Context, out io.Writer, f *intent.Fabric, eng *switchdrv.Engine, o *labTrafficOptions) (*sim.Result, []labctl.Play, time.Duration, error) {
	sc, opt, err := o.scenarioFor(f)
	if err != nil {
		return nil, nil, 0, err
	}
	n, sws, err := applied.Network(ctx, f, sc, opt.Seed, eng)
	if err != nil {
		return nil, nil, 0, withCode(ExitError, fmt.Errorf("traffic: %w", err))
	}
	if sc.Name == stormScenario && !f.Policy.Watchdog.Enabled {
		fmt.Fprintf(out, "  the intent's PFC watchdog is off: the storm pauses the fabric and nothing breaks it\n")
	}
	res := sim.New(n, opt).Run()
	plays := labctl.FromResult(res)
	fmt.Fprintf(out, "  %s through the configuration read back from %d twins (not the intent), %s of fabric time simulated\n", sc.Name, len(sws), opt.Duration)
	for _, nt := range applied.Notes(sws) {
		fmt.Fprintf(out, "  note: %s\n", nt)
	}
	var tot struct{ tx, pauseTx, ecn, drops, storms int64 }
	type row struct {
		name                 string
		drops, storms, pause int64
	}
	var rows []row
	for _, p := range res.Ports {
		if p.Host {
			continue
		}
		tot.tx += p.TxFrames
		tot.pauseTx += p.PauseSent
		tot.ecn += p.ECNMarks
		tot.drops += p.Drops
		tot.storms += p.WatchdogTriggers
		if p.Drops > 0 || p.WatchdogTriggers > 0 {
			rows = append(rows, row{fmt.Sprintf("%s %s priority %d", p.Node, p.Port, p.Priority), p.Drops, p.WatchdogTriggers, p.PauseSent})
		}
	}
	fmt.Fprintf(out, "  switch ports: %d packets sent, %d pause frames sent, %d ECN-marked, %d dropped, %d PFC watchdog triggers\n", tot.tx, tot.pauseTx, tot.ecn, tot.drops, tot.storms)
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].drops != rows[j].drops {
			return rows[i].drops > rows[j].drops
		}
		return rows[i].name < rows[j].name
	})
	for i, r := range rows {
		if i == 8 {
			fmt.Fprintf(out, "  ... and %d more ports with drops or watchdog triggers\n", len(rows)-i)
			break
		}
		fmt.Fprintf(out, "  %s: %d dropped, %d watchdog triggers, %d pause frames sent\n", r.name, r.drops, r.storms, r.pause)
	}
	return res, plays, opt.Duration, nil
}

// trafficPlayer plays a run into twins: in process (lab) or through a kept
// lab's control socket (lab traffic).
type trafficPlayer interface {
	Play(ctx context.Context, plays []labctl.Play) error
	Rate(ctx context.Context, perSecond []labctl.Play, tick time.Duration) error
}

// inProcess plays into the lab's own twins.
type inProcess struct{ l *labctl.Lab }

func (p inProcess) Play(_ context.Context, plays []labctl.Play) error { return p.l.Play(plays) }
func (p inProcess) Rate(_ context.Context, ps []labctl.Play, tick time.Duration) error {
	return p.l.Rate(ps, tick)
}

// playTraffic drives the twins' counters with a run of d: once, or (rate)
// continuously at its per-second rates.
func playTraffic(ctx context.Context, out io.Writer, p trafficPlayer, plays []labctl.Play, d time.Duration, rate bool) error {
	if rate {
		if err := p.Rate(ctx, labctl.PerSecond(plays, d), labRateTick); err != nil {
			return withCode(ExitError, fmt.Errorf("traffic: %w", err))
		}
		fmt.Fprintf(out, "  the twins' counters (%d switch ports and priorities) now move at the simulated per-second rates until the lab stops\n", len(plays))
		return nil
	}
	if err := p.Play(ctx, plays); err != nil {
		return withCode(ExitError, fmt.Errorf("traffic: %w", err))
	}
	fmt.Fprintf(out, "  the twins' counters (%d switch ports and priorities) counted the run once\n", len(plays))
	return nil
}

// newLabTrafficCmd is `fabricctl lab traffic`: traffic into a kept lab from
// another process, through its control socket.
func newLabTrafficCmd(d *deps) *cobra.Command {
	var s switchFlags
	o := &labTrafficOptions{}
	var once bool
	cmd := &cobra.Command{
		Use:   "traffic SCENARIO -f INTENT --lab DIR",
		Short: "Play simulated traffic into a kept lab's twins' counters",
		Long: `Lab traffic reads the configuration back from the twins of a kept lab (` + "`fabricctl lab -f INTENT --keep`" + `),
runs the packet simulator with SCENARIO over what they hold (not over the intent) on the
intent's own switches, hosts and links, and drives the twins' counters with the run through
the lab's control socket (control.sock in the lab directory): per switch port and priority
the packets, drops, ECN marks, pause frames sent and received and PFC watchdog triggers, in
each platform's own counter paths and units. By default the counters then move at the run's
per-second rates until the lab stops (replacing rates played before); --once adds the run's
counts once.

SCENARIO: ` + labScenarios + `.`,
		Example: `  fabricctl lab traffic incast:4:1 -f fabric.yaml --lab ./lab
  fabricctl lab traffic storm -f fabric.yaml --lab ./lab --once`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := s.validate(); err != nil {
				return err
			}
			if err := o.validate(); err != nil {
				return err
			}
			o.scenario = args[0]
			if err := o.validate(); err != nil {
				return err
			}
			if labDirFor(s.lab) == "" {
				return usagef("lab traffic plays into a kept lab: give --lab DIR (or $%s)", labEnv)
			}
			f, eng, err := s.load(d)
			if err != nil {
				return err
			}
			defer eng.Close()
			ctx := cmd.Context()
			c, err := labctl.Dial(s.labDir)
			if err != nil {
				return withCode(ExitError, err)
			}
			defer c.Close()
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "traffic in lab %s\n", s.labDir)
			_, plays, dur, err := runLabTraffic(ctx, out, f, eng, o)
			if err != nil {
				return err
			}
			return playTraffic(ctx, out, c, plays, dur, !once)
		},
	}
	s.bind(cmd)
	o.bind(cmd, "")
	cmd.Flags().BoolVar(&once, "once", false, "add the run's counts once instead of playing its per-second rates until the lab stops")
	return cmd
}
