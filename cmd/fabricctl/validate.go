package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/safchain/ethtool"
	"github.com/spf13/cobra"

	"github.com/fabricctl/fabricctl/hostdrv"
	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/applied"
	"github.com/fabricctl/fabricctl/internal/labctl"
	"github.com/fabricctl/fabricctl/internal/remote"
	"github.com/fabricctl/fabricctl/internal/sim"
	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
	"github.com/fabricctl/fabricctl/validate"
	"github.com/fabricctl/fabricctl/validate/perftest"
	"github.com/fabricctl/fabricctl/validate/udpflow"
)

type validateOptions struct {
	switchFlags
	engine       string
	output       string
	junit        string
	markdown     string
	netns        []string
	fabricctl    string
	hostSkew     bool
	toolDir      string
	rdmaCM       bool
	duration     time.Duration
	noAllPairs   bool
	noIncast     bool
	noLatency    bool
	noReadback   bool
	noCounters   bool
	udpPackets   int
	udpRate      float64
	udpSize      int
	readyTimeout time.Duration
	perftestBase int
	// engineSet: --engine was given (else --lab picks the sim engine).
	engineSet    bool
	simDuration  time.Duration
	noPrediction bool
}

func newValidateCmd(d *deps) *cobra.Command {
	o := &validateOptions{}
	cmd := &cobra.Command{
		Use:   "validate -f FILE [-f FILE...] [--engine rdma|udp|sim] [--lab DIR]",
		Short: "Prove the fabric lossless with traffic and counters, and measure it",
		Long: `Validate answers "is this fabric lossless, and how fast is it?" in five phases:

  1. readback   the switches' configuration is read over gNMI and the hosts' with
                'fabricctl host plan' (locally, or over SSH with --host-binary),
                and compared with the intent; every drifted path is a failed check.
                Each switch is read once: the prediction (step 5) runs on the
                configuration decoded from this same read
  2. counters   host RDMA hw_counters and ethtool driver stats, switch queue, PFC, ECN
                and PFC-watchdog counters (gNMI, per platform) are read
  3. traffic    all pairs of hosts in N-1 rounds of disjoint pairs (N rounds with byes
                for odd N), bandwidth then latency, then an N->1 incast that forces
                congestion so PFC and ECN act
  4. counters   read again; the deltas are judged: no sequence errors or ACK timeouts,
                no discards on lossless priorities, pause only on the lossless priority,
                ECN -> CNP under incast, no watchdog storms; plus the intent's
                validation thresholds (bandwidth share of line rate, p99/p99.9 latency);
                where drops are the design (policy.mode lossy, or semi-lossless,
                whose switches send no pause) the drop rate, retransmissions and
                goodput lost are judged against validation.lossy instead
  5. report     a table (or -o json), --junit FILE (one testcase per check) and
                --markdown FILE (for a pull-request comment); beside what was
                measured, what the packet simulator predicts for the same flows on
                the same configuration (throughput per flow and in total, switch
                drops, PFC pause frames, ECN marks, pause time), with a warning where
                they differ by more than validation.predictionTolerance (default 20%)

Engines:
  rdma  perftest (ib_write_bw -D, ib_write_lat -n) on the hosts, locally or over SSH,
        always with -d <ibdev> -i <port> -x <gid> -F --report_gbits, a distinct -p per
        concurrent pair and the RoCE ToS (--tclass, or -R -T with --rdma-cm); the GID
        index is the RoCE v2 IPv4 GID of the NIC's netdev, found in sysfs on each host
  udp   DSCP-marked UDP flows with sequence numbers and timestamps (loss, reordering,
        re-marking, one-way latency), for labs without RDMA NICs. With local hosts
        (this machine, or network namespaces given with --netns HOST=NAMESPACE) it
        runs in this process; with remote hosts it runs 'fabricctl validate
        udp-recv|udp-send' on them over SSH (fabricctl must be installed there;
        --host-binary names it). One-way latency needs synchronised clocks
        (PTP) across hosts.
  sim   no traffic on a wire: every round's flows run in fabricctl's packet simulator
        (as 'fabricctl simulate' runs a scenario) for --sim-duration of fabric time.
        Alone it runs on the intent's configuration and reads no device. With --lab
        (the default engine there) it runs on the configuration read back from the
        lab's twins (what apply left there), posts the switch counters of every
        round to the twins, and validate reads them back as it reads real switches.
        Bandwidth is simulated goodput; latency one small message's completion time
        halved (wire, serialisation and queueing only). Every report says "sim".

Exit codes: 0 every check passed (or was skipped), 3 a check failed, 1 evidence
could not be collected (and nothing failed) or validate could not run, 64 usage.`,
		Example: `  fabricctl validate -f fabric.yaml --junit validate.xml --markdown validate.md
  fabricctl validate -f lab.yaml --engine udp --netns gpu1=ns1 --netns gpu2=ns2 --netns gpu3=ns3
  fabricctl validate -f fabric.yaml --engine sim
  fabricctl validate -f fabric.yaml --lab ./lab`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.engineSet = cmd.Flags().Changed("engine")
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.Context(), d, cmd.OutOrStdout())
		},
	}
	o.switchFlags.bind(cmd)
	for _, verb := range []string{"udp-recv", "udp-send"} {
		cmd.AddCommand(&cobra.Command{
			Use:                verb,
			Short:              "Half of the udp engine, run on hosts by fabricctl validate",
			Hidden:             true,
			DisableFlagParsing: true,
			RunE: func(cmd *cobra.Command, args []string) error {
				return validate.UDPCommand(cmd.Context(), verb, args, cmd.OutOrStdout())
			},
		})
	}
	fl := cmd.Flags()
	fl.StringVar(&o.engine, "engine", "rdma", "traffic engine: rdma (perftest), udp (no RDMA NIC needed) or sim (the packet simulator; the default with --lab)")
	fl.DurationVar(&o.simDuration, "sim-duration", sim.DefaultDuration, "fabric time each round runs in the simulator (sim engine, and the prediction of every engine)")
	fl.BoolVar(&o.noPrediction, "no-prediction", false, "do not run the flows in the simulator for predicted-vs-measured")
	fl.StringVarP(&o.output, "output", "o", "text", "output format: text or json")
	fl.StringVar(&o.junit, "junit", "", "also write a JUnit XML report to this file")
	fl.StringVar(&o.markdown, "markdown", "", "also write a Markdown report to this file")
	fl.StringArrayVar(&o.netns, "netns", nil, "udp engine: run HOST inside network namespace NS (HOST=NS, repeatable)")
	// --host-binary and --host-version-skew, as plan, diff and apply have
	// them; --remote-fabricctl was this command's own name for it.
	bindHostBinary(cmd, &o.fabricctl, &o.hostSkew)
	fl.StringVar(&o.fabricctl, "remote-fabricctl", "fabricctl", "old name of --host-binary")
	_ = fl.MarkDeprecated("remote-fabricctl", "use --host-binary")
	fl.StringVar(&o.toolDir, "perftest-dir", "", "directory of the perftest binaries on the hosts (default: $PATH)")
	fl.BoolVar(&o.rdmaCM, "rdma-cm", false, "connect perftest with rdma_cm (-R) and set the ToS with -T instead of --tclass")
	fl.DurationVar(&o.duration, "duration", 0, "length of each bandwidth test (default: the intent's validation.duration, else 10s)")
	fl.BoolVar(&o.noAllPairs, "no-all-pairs", false, "skip the all-pairs rounds")
	fl.BoolVar(&o.noIncast, "no-incast", false, "skip the incast round")
	fl.BoolVar(&o.noLatency, "no-latency", false, "skip the latency rounds (rdma engine)")
	fl.BoolVar(&o.noReadback, "no-readback", false, "skip the configuration readback of switches and hosts")
	fl.BoolVar(&o.noCounters, "no-counters", false, "skip host and switch counters")
	fl.IntVar(&o.udpPackets, "udp-packets", 2000, "udp engine: packets per flow")
	fl.Float64Var(&o.udpRate, "udp-rate", 10000, "udp engine: packets per second per flow")
	fl.IntVar(&o.udpSize, "udp-size", 1000, "udp engine: UDP payload bytes")
	fl.DurationVar(&o.readyTimeout, "ready-timeout", 10*time.Second, "rdma engine: wait this long for a perftest server to listen")
	fl.IntVar(&o.perftestBase, "perftest-port", 18515, "rdma engine: first perftest TCP port; pair i of a round uses this + i")
	return cmd
}

func (o *validateOptions) validate() error {
	if err := checkOutput(o.output, "text", "json"); err != nil {
		return err
	}
	if o.engine != "rdma" && o.engine != "udp" && o.engine != "sim" {
		return usagef("--engine %q: want rdma, udp or sim", o.engine)
	}
	if o.simDuration <= 0 || o.simDuration > 10*time.Second {
		return usagef("--sim-duration %s: want more than 0 and up to 10s of fabric time", o.simDuration)
	}
	if len(hostCommand(o.fabricctl)) == 0 {
		return usagef("--host-binary: want a command")
	}
	if len(o.netns) > 0 && o.engine != "udp" {
		return usagef("--netns works with --engine udp only")
	}
	for _, m := range o.netns {
		if h, ns, ok := strings.Cut(m, "="); !ok || h == "" || ns == "" {
			return usagef("--netns %q: want HOST=NAMESPACE", m)
		}
	}
	if o.duration != 0 && o.duration < time.Second {
		return usagef("--duration %s: perftest runs whole seconds (at least 1s)", o.duration)
	}
	if o.udpPackets < 1 || !(o.udpRate > 0) || math.IsInf(o.udpRate, 0) || o.udpSize < udpflow.MinSize || o.udpSize > udpflow.MaxSize {
		return usagef("--udp-packets, --udp-rate and --udp-size must be positive and finite (size 40..65000)")
	}
	if o.perftestBase < 1024 || o.perftestBase > 65000 {
		return usagef("--perftest-port %d: want 1024..65000", o.perftestBase)
	}
	if o.noAllPairs && o.noIncast {
		return usagef("--no-all-pairs and --no-incast leave no traffic to run")
	}
	return o.switchFlags.validate()
}

func (o *validateOptions) run(ctx context.Context, d *deps, out io.Writer) error {
	f, eng, err := o.load(d)
	if err != nil {
		return err
	}
	defer eng.Close()
	if o.labDir != "" && !o.engineSet {
		// The lab's hosts are simulated endpoints; --engine udp with
		// --netns still runs real traffic on this machine's namespaces
		// while the switch counters come from the twins.
		o.engine = "sim"
	}
	if o.engine == "sim" {
		return o.runSim(ctx, d, f, eng, out)
	}
	nsOf := map[string]string{}
	for _, m := range o.netns {
		h, ns, _ := strings.Cut(m, "=")
		if f.Host(h) == nil {
			return usagef("--netns %s: the intent has no host %q", m, h)
		}
		nsOf[h] = ns
	}

	// One runner per host, closed at the end.
	runners := map[string]remote.Runner{}
	defer func() {
		for _, r := range runners {
			if c, ok := r.(io.Closer); ok {
				_ = c.Close()
			}
		}
	}()
	runnerFor := func(host string) (remote.Runner, error) {
		if r, ok := runners[host]; ok {
			return r, nil
		}
		h := f.Host(host)
		if h == nil {
			return nil, fmt.Errorf("host %s is not in the intent", host)
		}
		r, err := remote.ForHost(*h, remote.SSHOptions{Logger: d.log})
		if err != nil {
			return nil, err
		}
		runners[host] = r
		return r, nil
	}
	if o.engine == "udp" && len(nsOf) > 0 {
		if err := netnsCoverage(f, nsOf); err != nil {
			return err
		}
	}
	for _, h := range f.Hosts {
		if nsOf[h.Name] != "" {
			continue // runs in a namespace of this machine: no SSH, whatever its address
		}
		if _, err := runnerFor(h.Name); err != nil {
			return withCode(ExitError, err)
		}
	}

	var engine validate.Engine
	switch o.engine {
	case "udp":
		local := true
		for _, h := range f.Hosts {
			if !h.IsLocal() && nsOf[h.Name] == "" {
				local = false
			}
		}
		if local {
			exec, err := validate.NetnsExec(nsOf)
			if err != nil {
				return withCode(ExitError, err)
			}
			engine = &validate.UDPEngine{Exec: exec, ToS: f.Policy.RoCE.ToS, Size: o.udpSize, Packets: o.udpPackets, Rate: o.udpRate}
			break
		}
		if len(nsOf) > 0 {
			return withCode(ExitError, errors.New("--netns needs every host to be local or a namespace: with remote hosts the udp engine runs fabricctl on each host"))
		}
		if err := o.checkHostVersions(ctx, f, runnerFor); err != nil {
			return withCode(ExitError, err)
		}
		engine = &validate.RemoteUDPEngine{Runner: runnerFor, Fabricctl: hostCommand(o.fabricctl), ToS: f.Policy.RoCE.ToS,
			Size: o.udpSize, Packets: o.udpPackets, Rate: o.udpRate}
	default:
		if err := rdmaPreflight(ctx, f, runnerFor); err != nil {
			return withCode(ExitError, err)
		}
		dur := o.duration
		if dur == 0 {
			dur = f.Validation.Duration
		}
		engine = &validate.RDMAEngine{
			Perftest: &perftest.Engine{ToolDir: o.toolDir, ReadyTimeout: o.readyTimeout, Log: d.log},
			Runner:   runnerFor,
			ToS:      f.Policy.RoCE.ToS, RDMACM: o.rdmaCM,
			Duration: dur, Iterations: f.Validation.Iterations, Size: f.Validation.MessageSize,
			BasePort: o.perftestBase,
		}
	}

	vo := validate.Options{Engine: engine, AllPairs: !o.noAllPairs, Incast: !o.noIncast, Latency: !o.noLatency, Log: d.log}
	swPlan := o.planSwitches(ctx, f, eng, !o.noPrediction)
	if !o.noPrediction {
		s := o.simulator(f)
		// The prediction runs on what the switches hold, as the sim
		// engine does on a lab's twins, decoded from the readback's own
		// read of them; where they cannot be read, on the intent's
		// configuration (and the readback says why).
		if swPlan.done {
			sws, err := swPlan.applied(ctx, f, eng)
			if err != nil {
				fmt.Fprintf(d.stderr, "fabricctl: the prediction runs on the intent's configuration: the switches could not be read back: %v\n", err)
			} else {
				s.Source = fmt.Sprintf("the configuration read back from the %d switches", len(sws))
				s.Network = validate.ConfiguredNetwork(f, func(n *sim.Network) error { return applied.Configure(n, sws) })
			}
		}
		vo.Predict = &validate.Predictor{Sim: s, Tolerance: f.Validation.PredictionTolerance}
	}
	if !o.noReadback {
		vo.Readback = func(ctx context.Context) (*plan.Plan, error) { return o.readback(ctx, d, f, swPlan, nsOf, runnerFor) }
		vo.ReadbackSkipped = map[string]string{}
		for h, ns := range nsOf {
			vo.ReadbackSkipped[plan.KindHost+" "+h] = fmt.Sprintf("runs in network namespace %s (--netns): its NICs are lab veths without DCB, so there is no NIC QoS to read back", ns)
		}
	}
	if !o.noCounters {
		srcs, closeAll := o.sources(ctx, d, f, nsOf, runnerFor)
		defer closeAll()
		vo.Sources = srcs
	}

	return o.finish(ctx, f, vo, out)
}

// switchPlan is the readback's plan of the switches, made before the run
// so that its reads of the switches also give the simulator their
// configuration (switchdrv.Engine.KeepReadBacks, internal/applied): one
// read per switch per validate run. The counters are read on their own,
// before and after the traffic.
type switchPlan struct {
	done bool // the switches were planned (readback on, the intent has some)
	p    *plan.Plan
	err  error
}

// planSwitches plans the switches for the readback (none with
// --no-readback); keep: for the simulator as well.
func (o *validateOptions) planSwitches(ctx context.Context, f *intent.Fabric, eng *switchdrv.Engine, keep bool) *switchPlan {
	if o.noReadback || len(f.Switches) == 0 {
		return &switchPlan{}
	}
	eng.KeepReadBacks = keep
	p, err := eng.Plan(ctx, f, o.switches)
	if p != nil {
		p.Fabric = f.Name
	}
	return &switchPlan{done: true, p: p, err: err}
}

// applied decodes the switches' configuration from what the plan read
// (applied.Read reads a switch the plan did not: one outside --switch, or
// every one when the plan was refused as asked, e.g. an unknown
// --switch). A switch the plan could not read is not read again: the
// error says why.
func (sp *switchPlan) applied(ctx context.Context, f *intent.Fabric, eng *switchdrv.Engine) (map[string]*applied.Switch, error) {
	if sp.err == nil {
		if err := switchdrv.ReadErrors(sp.p); err != nil {
			return nil, err
		}
	}
	return applied.Read(ctx, f, eng)
}

// simulator is the packet simulator on the intent's configuration.
func (o *validateOptions) simulator(f *intent.Fabric) *validate.Simulator {
	return &validate.Simulator{Fabric: f, Options: sim.Options{Duration: o.simDuration}}
}

// runSim validates with the sim engine: alone on the intent's
// configuration (no device is read), with --lab on the twins.
func (o *validateOptions) runSim(ctx context.Context, d *deps, f *intent.Fabric, eng *switchdrv.Engine, out io.Writer) error {
	s := o.simulator(f)
	simEng := &validate.SimEngine{Sim: s}
	vo := validate.Options{Engine: simEng, AllPairs: !o.noAllPairs, Incast: !o.noIncast, Latency: !o.noLatency, Log: d.log,
		ReadbackSkipped: map[string]string{}}
	for _, h := range f.Hosts {
		vo.ReadbackSkipped[plan.KindHost+" "+h.Name] = "a simulated endpoint (sim engine): no host is read"
	}
	if o.labDir == "" {
		for _, sw := range f.Switches {
			vo.ReadbackSkipped[plan.KindSwitch+" "+sw.Name] = "the sim engine without --lab runs on the intent's configuration: no switch is read"
		}
	} else {
		swPlan := o.planSwitches(ctx, f, eng, true)
		closeLab, err := o.labSim(ctx, d, f, eng, s, simEng)
		if err != nil {
			return withCode(ExitError, err)
		}
		defer closeLab()
		if swPlan.done {
			vo.Readback = func(context.Context) (*plan.Plan, error) { return swPlan.p, swPlan.err }
		}
		if !o.noCounters {
			srcs, closeAll := o.sources(ctx, d, f, nil, nil)
			defer closeAll()
			vo.Sources = srcs
		}
	}
	if !o.noPrediction {
		vo.Predict = &validate.Predictor{Sim: s, Tolerance: f.Validation.PredictionTolerance}
	}
	return o.finish(ctx, f, vo, out)
}

// labSim points the sim engine at the lab in o.labDir: the simulator runs
// on the configuration read back from the twins (internal/applied, read
// once before the traffic: what apply, or anyone, left there; what the
// readback's plan read, when it ran before), and every
// round's switch counters are posted to the twins through the lab's
// control socket (internal/labctl), where validate reads them back as it
// reads real switches.
func (o *validateOptions) labSim(ctx context.Context, d *deps, f *intent.Fabric, eng *switchdrv.Engine, s *validate.Simulator, simEng *validate.SimEngine) (func(), error) {
	sws, err := applied.Read(ctx, f, eng)
	if err != nil {
		return nil, fmt.Errorf("--lab %s: read the twins' configuration back for the simulator: %w", o.labDir, err)
	}
	names := make([]string, 0, len(sws))
	for n := range sws {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, note := range sws[n].Notes {
			fmt.Fprintf(d.stderr, "fabricctl: switch %s read back: %s\n", n, note)
		}
	}
	s.Source = fmt.Sprintf("the configuration read back from the lab's %d twins", len(sws))
	s.Network = validate.ConfiguredNetwork(f, func(n *sim.Network) error { return applied.Configure(n, sws) })
	c, err := labctl.Dial(o.labDir)
	if err != nil {
		return nil, err
	}
	// Every counter a round can move exists from the lab's start, at zero
	// (seedCounters), as a switch reports them from boot.
	simEng.Post = func(ctx context.Context, r *sim.Result) error { return c.Play(ctx, labctl.FromResult(r)) }
	return func() { _ = c.Close() }, nil
}

// finish runs validate and writes the report; the exit code is the verdict's.
func (o *validateOptions) finish(ctx context.Context, f *intent.Fabric, vo validate.Options, out io.Writer) error {
	rep, err := validate.Run(ctx, f, vo)
	if err != nil {
		if rep != nil { // interrupted: show what was measured
			if werr := o.write(out, rep); werr != nil {
				err = errors.Join(err, werr)
			}
		}
		return withCode(ExitError, err)
	}
	if err := o.write(out, rep); err != nil {
		return withCode(ExitError, err)
	}
	switch rep.Verdict() {
	case "FAIL":
		return withCode(ExitCheckFailed, nil)
	case "ERROR":
		s := rep.Summarize()
		return withCode(ExitError, fmt.Errorf("validation incomplete: %d checks could not collect their evidence", s.Error))
	}
	return nil
}

// rdmaPreflight makes sure every host has an RDMA device before the rdma
// engine starts perftest, so that a lab without RDMA NICs gets one line that
// says so instead of a table of failed GID lookups.
// checkHostVersions holds the remote hosts' fabricctl (which runs the udp
// engine's receivers and senders there) to this build, unless
// --host-version-skew.
func (o *validateOptions) checkHostVersions(ctx context.Context, f *intent.Fabric, runnerFor func(string) (remote.Runner, error)) error {
	want := hostVersion(o.hostSkew)
	if want == nil {
		return nil
	}
	var errs []error
	for _, h := range f.Hosts {
		if h.IsLocal() {
			continue
		}
		r, err := runnerFor(h.Name)
		if err == nil {
			err = hostdrv.CheckVersion(ctx, r, hostCommand(o.fabricctl), *want)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("host %s: %w", h.Name, err))
		}
	}
	return errors.Join(errs...)
}

func rdmaPreflight(ctx context.Context, f *intent.Fabric, runnerFor func(string) (remote.Runner, error)) error {
	var none []string
	for _, h := range f.Hosts {
		r, err := runnerFor(h.Name)
		if err != nil {
			return err
		}
		res, err := r.Run(ctx, []string{"ls", "-1", "/sys/class/infiniband"}, nil)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil || strings.TrimSpace(string(res.Stdout)) == "" {
			none = append(none, h.Name)
		}
	}
	if len(none) == 0 {
		return nil
	}
	return fmt.Errorf("--engine rdma needs an RDMA device, and %s %s none (/sys/class/infiniband is empty or missing); without RDMA NICs use --engine udp",
		strings.Join(none, ", "), plural(len(none), "has", "have"))
}

// readback is the switches' plan (gNMI, sw: planned before the run) and
// the hosts' (local ones in this process, remote ones with `fabricctl host
// plan` over SSH, --host-binary, through the runners of runnerFor) against
// the intent. Hosts mapped to a network namespace are left out: their NICs
// are lab veths.
func (o *validateOptions) readback(ctx context.Context, d *deps, f *intent.Fabric, sw *switchPlan, nsOf map[string]string,
	runnerFor func(string) (remote.Runner, error)) (*plan.Plan, error) {
	p := &plan.Plan{Fabric: f.Name}
	if sw != nil && sw.done {
		if sw.err != nil {
			return nil, sw.err
		}
		p.Targets = append(p.Targets, sw.p.Targets...)
	}
	var local, remoteHosts []intent.Host
	for _, h := range f.Hosts {
		switch {
		case nsOf[h.Name] != "":
		case h.IsLocal():
			local = append(local, h)
		default:
			remoteHosts = append(remoteHosts, h)
		}
	}
	if len(local)+len(remoteHosts) == 0 {
		return p, nil
	}
	bundle := f.Bundle()
	if len(local) > 0 {
		// Local hosts are read in this process, as `fabricctl host plan` does.
		drv, closeDrv, err := hostdrv.Open("", "", d.log)
		if err != nil {
			for _, h := range local {
				p.Targets = append(p.Targets, plan.TargetPlan{Name: h.Name, Kind: plan.KindHost, Error: fmt.Sprintf("host %s: %v", h.Name, err)})
			}
		} else {
			for i := range local {
				hp, err := drv.Plan(ctx, f, &local[i])
				if hp == nil {
					p.Targets = append(p.Targets, plan.TargetPlan{Name: local[i].Name, Kind: plan.KindHost, Error: err.Error()})
					continue
				}
				p.Targets = append(p.Targets, hp.Target)
			}
			closeDrv()
		}
	}
	if len(remoteHosts) > 0 {
		// The host's runner stays open for the traffic (keepOpen hides its
		// Close from the Fleet).
		fl := &hostdrv.Fleet{Command: hostCommand(o.fabricctl), Version: hostVersion(o.hostSkew), Log: d.log, Runner: func(h intent.Host) (remote.Runner, error) {
			r, err := runnerFor(h.Name)
			if err != nil {
				return nil, err
			}
			return keepOpen{r}, nil
		}}
		ts, _ := fl.Run(ctx, "plan", remoteHosts, bundle)
		p.Targets = append(p.Targets, ts...)
	}
	return p, nil
}

// keepOpen is a runner whose Close the Fleet does not see: that runner
// belongs to validate and serves the traffic later.
type keepOpen struct{ remote.Runner }

func (o *validateOptions) write(out io.Writer, rep *validate.Report) error {
	var err error
	if o.output == "json" {
		err = validate.WriteJSON(out, rep)
	} else {
		err = validate.WriteText(out, rep)
	}
	if err != nil {
		return err
	}
	for _, w := range []struct {
		path  string
		write func(io.Writer, *validate.Report) error
	}{{o.junit, validate.WriteJUnit}, {o.markdown, validate.WriteMarkdown}} {
		if w.path == "" {
			continue
		}
		fh, err := os.Create(w.path)
		if err != nil {
			return fmt.Errorf("write report: %w", err)
		}
		werr := w.write(fh, rep)
		if cerr := fh.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return fmt.Errorf("write report %s: %w", w.path, werr)
		}
	}
	return nil
}

// errSource stands for a counter source that could not be set up; reading
// it reports why, as an error check.
type errSource struct {
	name string
	err  error
}

func (e errSource) Name() string                                  { return e.name }
func (e errSource) Kind() string                                  { return "switch" }
func (e errSource) Read(context.Context) (validate.Sample, error) { return nil, e.err }

// sources builds the counter sources: per host NIC the RDMA hw_counters (when
// an RDMA device is named) and the ethtool stats; per switch its ports over
// gNMI.
func (o *validateOptions) sources(ctx context.Context, d *deps, f *intent.Fabric, nsOf map[string]string,
	runnerFor func(string) (remote.Runner, error)) ([]validate.Source, func()) {
	var srcs []validate.Source
	var closers []func()
	exec, _ := validate.NetnsExec(nsOf)
	for _, h := range f.Hosts {
		if runnerFor == nil {
			break // simulated hosts (sim engine): no host counters
		}
		r, _ := runnerFor(h.Name)
		for _, nic := range h.NICs {
			if nic.RDMADevice != "" && nsOf[h.Name] == "" {
				port := nic.RDMAPort
				if port == 0 {
					port = 1
				}
				c := &validate.RDMACounters{Host: h.Name, Device: nic.RDMADevice, Port: port}
				if h.IsLocal() {
					c.FS = os.DirFS("/")
				} else {
					c.Runner = r
				}
				srcs = append(srcs, c)
			}
			ec := &validate.EthtoolCounters{Host: h.Name, Interface: nic.Interface, Runner: r}
			if h.IsLocal() || nsOf[h.Name] != "" {
				var et *ethtool.Ethtool
				err := errors.ErrUnsupported
				if exec != nil {
					err = exec(h.Name, func() error {
						var err error
						et, err = ethtool.NewEthtool()
						return err
					})
				}
				if err != nil {
					srcs = append(srcs, errSource{name: ec.Name(), err: fmt.Errorf("host %s: ethtool socket: %w", h.Name, err)})
					continue
				}
				closers = append(closers, et.Close)
				ec.Stats, ec.Runner = et, nil
			}
			srcs = append(srcs, ec)
		}
	}
	for _, sw := range f.Switches {
		if len(o.switches) > 0 && !contains(o.switches, sw.Name) {
			continue
		}
		ports := make([]string, len(sw.Ports))
		for i, p := range sw.Ports {
			ports[i] = p.Name
		}
		c, err := transport.Dial(ctx, sw, transport.Options{Timeout: o.timeout, Insecure: o.insecure, PlaintextCredentials: o.plaintextCreds, Log: d.log})
		if err != nil {
			srcs = append(srcs, errSource{name: "switch " + sw.Name, err: err})
			continue
		}
		closers = append(closers, func() { _ = c.Close() })
		srcs = append(srcs, &validate.SwitchCounters{Switch: sw.Name, Platform: sw.Platform, Ports: ports, Sub: c})
	}
	return srcs, func() {
		for _, c := range closers {
			c()
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
