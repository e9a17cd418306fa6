package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/check"
	"github.com/fabricctl/fabricctl/internal/sim"
)

type simulateOptions struct {
	// d gives loadIntent (the derived-fact flags).
	d        *deps
	files    []string
	scenario string
	duration time.Duration
	seed     int64
	output   string
	markdown bool
	plots    string
	noECN    bool
	dcqcn    string
	headroom string
	xoff     string
	// workload: --speed, --cable (synthetic star), --size
	workload workloadFlags
	// size is --size parsed (0: the flows send for the whole run)
	size    int64
	enqueue bool
	class   string
	// loss recovery on lossy classes and the mode comparison
	recovery string
	// recoverySet: --recovery was given; else the intent's
	// policy.nicAccelerations.selectiveRepeat chooses, as on the NICs.
	recoverySet bool
	ackTimeout  int
	compare     bool
}

func newSimulateCmd(d *deps) *cobra.Command {
	o := &simulateOptions{d: d}
	cmd := &cobra.Command{
		Use:   "simulate -f INTENT --scenario incast:16:1",
		Short: "Simulate traffic through the fabric as configured: drops, pause spread, storms, DCQCN",
		Long: `Simulate replays a traffic scenario through the fabric exactly as the intent
configures it, in a discrete-event, packet-level model: link speeds and cable
delays, ingress priority groups with XOFF/XON and the headroom compile programs,
egress strict + DWRR scheduling, WRED/ECN marking, PFC pause with quanta and the
peer's response time, the PFC watchdog, and NICs with a DCQCN reaction and
notification point (the intent's policy.dcqcn over the mlx5 defaults: what
host apply writes; or --dcqcn mlx5 / paper). Nothing is contacted.

Scenarios: incast:N:1, alltoall, slow-receiver:PCT (a 4:1 incast into a host that
drains at PCT % of line rate: 0 never drains), link-down:A-B (all-to-all with the
links between switches A and B down), or a YAML scenario file. When the intent
has too few linked hosts, a synthetic star of one switch is used (and said).

Per port and priority it reports max/mean queue, time paused, pause frames,
ECN marks, CNPs, drops and watchdog triggers; per flow goodput, FCT and Jain
fairness, and with --size the flow completion times' median and p99;
--markdown adds SVG plots of queue depth, rate and pause over time.

Flows on a class that is not lossless (policy.mode lossy, or a class with
lossless: false) recover their drops as RoCE RC does: --recovery go-back-n
(ConnectX's default: resend from the first unacknowledged packet on a NAK or
a timeout) or selective-repeat (resend only the lost packets), with the QP's
local ACK timeout 4.096 us x 2^--ack-timeout. The run reports the bytes
resent and the goodput they cost. --compare-modes runs the same workload
lossless, pfc-only, lossy (with each recovery) and semi-lossless (switches
honour the hosts' pause but never send it) and prints one line each.

Exit codes: 0 lossless held (drops on lossy classes are recovered, not
failures), 3 drops on a lossless priority or a deadlock, 1 the intent or
scenario could not be read, 64 usage.`,
		Example: `  fabricctl simulate -f fabric.yaml --scenario incast:16:1
  fabricctl simulate -f fabric.yaml --scenario slow-receiver:0 --duration 5ms -o json
  fabricctl simulate -f fabric.yaml --scenario ring.yaml --markdown --plots plots/ > sim.md
  fabricctl simulate -f fabric.yaml --scenario incast:16:1 --size 1MB --compare-modes --ack-timeout 8`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.recoverySet = cmd.Flags().Changed("recovery")
			return o.run(cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringArrayVarP(&o.files, "file", "f", nil, "intent file (repeatable; - reads stdin)")
	cmd.Flags().StringVar(&o.scenario, "scenario", "incast:16:1", "incast:N:1, alltoall, slow-receiver:PCT, link-down:A-B or a .yaml file")
	cmd.Flags().DurationVar(&o.duration, "duration", 0, "fabric time to simulate (default 1ms, or the scenario file's)")
	cmd.Flags().Int64Var(&o.seed, "seed", 0, "random seed (default 1, or the scenario file's); printed with the result")
	cmd.Flags().StringVarP(&o.output, "output", "o", "text", "output format: text or json")
	cmd.Flags().BoolVar(&o.markdown, "markdown", false, "print Markdown with the plots (SVG) embedded")
	cmd.Flags().StringVar(&o.plots, "plots", "", "also write queue.svg, rate.svg and pause.svg to this directory (Markdown links them)")
	cmd.Flags().BoolVar(&o.noECN, "no-ecn", false, "switches never ECN-mark: PFC alone holds the line")
	cmd.Flags().StringVar(&o.dcqcn, "dcqcn", "intent", "DCQCN parameters: intent (policy.dcqcn over the ConnectX defaults: what host apply writes), mlx5 (ConnectX defaults) or paper (the DCQCN paper's)")
	cmd.Flags().StringVar(&o.headroom, "headroom", "", "headroom per lossless priority group on every switch port instead of what compile programs (e.g. 60KB)")
	cmd.Flags().StringVar(&o.xoff, "xoff", "", "priority-group occupancy that sends XOFF (default: the switch buffer minus its headroom, else 256KiB)")
	o.workload.bind(cmd.Flags(), "payload of each generated flow, e.g. 4MB (reports completion times; default: send for the whole run)")
	cmd.Flags().StringVar(&o.class, "class", "", "class of the generated flows (default: the RoCE class, the first lossless one or else the one with ECN)")
	cmd.Flags().StringVar(&o.recovery, "recovery", "go-back-n", "loss recovery of flows on lossy classes: go-back-n (ConnectX default) or selective-repeat (default: selective-repeat when the intent's policy.nicAccelerations.selectiveRepeat is true, as host apply sets the NICs)")
	cmd.Flags().IntVar(&o.ackTimeout, "ack-timeout", sim.DefaultAckTimeoutExp, "QP local ACK timeout exponent: 4.096us x 2^N (0 = never; perftest's default 14 is 67ms)")
	cmd.Flags().BoolVar(&o.compare, "compare-modes", false, "run the workload lossless, pfc-only, lossy (go-back-n, selective-repeat) and semi-lossless and compare drops, pause, resent bytes and FCT")
	cmd.Flags().BoolVar(&o.enqueue, "mark-on-enqueue", false, "ECN-mark on the depth a frame finds when queued (default: the depth it leaves behind at dequeue)")
	return cmd
}

func (o *simulateOptions) options() (sim.Options, sim.StarOptions, error) {
	var opt sim.Options
	var so sim.StarOptions
	if err := checkOutput(o.output, "text", "json"); err != nil {
		return opt, so, err
	}
	if o.markdown && o.output == "json" {
		return opt, so, usagef("--markdown and -o json exclude each other")
	}
	if len(o.files) == 0 {
		return opt, so, usagef("no intent file given: use -f FILE")
	}
	if o.duration < 0 || o.duration > 10*time.Second {
		return opt, so, usagef("--duration %s: want up to 10s of fabric time", o.duration)
	}
	opt.Duration, opt.Seed, opt.NoECN, opt.MarkOnEnqueue = o.duration, o.seed, o.noECN, o.enqueue
	rec, err := sim.ParseRecovery(o.recovery)
	if err != nil {
		return opt, so, usagef("--%v", err)
	}
	opt.Recovery = rec
	if o.ackTimeout < 0 || o.ackTimeout > 31 {
		return opt, so, usagef("--ack-timeout %d: want an exponent 0-31 (4.096us x 2^N; 0 = the timer never fires)", o.ackTimeout)
	}
	opt.AckTimeout = sim.AckTimeout(o.ackTimeout)
	if o.ackTimeout == 0 {
		opt.AckTimeout = -1
	}
	if o.compare && (o.markdown || o.plots != "") {
		return opt, so, usagef("--compare-modes prints a table (text or -o json): no --markdown or --plots")
	}
	switch o.dcqcn {
	case "intent", "mlx5": // intent: set in run, from the loaded policy
	case "paper":
		p := sim.PaperParams()
		opt.DCQCN = &p
	default:
		return opt, so, usagef("--dcqcn %q: want intent, mlx5 or paper", o.dcqcn)
	}
	size := func(flag, v string) (int64, error) {
		if v == "" {
			return 0, nil
		}
		return parseSizeFlag(flag, v)
	}
	if opt.Headroom, err = size("headroom", o.headroom); err != nil {
		return opt, so, err
	}
	if opt.XOFF, err = size("xoff", o.xoff); err != nil {
		return opt, so, err
	}
	if so, o.size, err = o.workload.parse(); err != nil {
		return opt, so, err
	}
	return opt, so, nil
}

func (o *simulateOptions) run(stdin io.Reader, out, errw io.Writer) error {
	opt, so, err := o.options()
	if err != nil {
		return err
	}
	f, err := o.d.loadIntent(stdin, o.files...)
	if err != nil {
		if fs := check.FromErrors(err); fs != nil {
			_ = check.WriteText(errw, fs, false)
			return withCode(ExitError, fmt.Errorf("simulate: the intent does not parse"))
		}
		return withCode(ExitError, err)
	}
	if o.dcqcn == "intent" {
		// The values host apply writes to the NICs (policy.dcqcn), the
		// ConnectX defaults for what it leaves alone.
		p := sim.DCQCNFromPolicy(&f.Policy)
		opt.DCQCN = &p
	}
	if !o.recoverySet {
		opt.Recovery = sim.RecoveryFor(&f.Policy)
	}
	sc, err := sim.ParseSpec(o.scenario)
	if err != nil {
		return withCode(ExitError, err)
	}
	if o.size > 0 {
		sc.Size = o.size
	}
	sc.Class = o.class
	if opt.Duration == 0 {
		opt.Duration = sc.Duration
	}
	if opt.Seed == 0 {
		opt.Seed = sc.Seed
	}
	if o.compare {
		return o.compareModes(out, f, sc, so, opt)
	}
	n, err := sim.Build(f, sc, so, opt.Seed)
	if err != nil {
		return withCode(ExitError, fmt.Errorf("simulate: %w", err))
	}
	r := sim.New(n, opt).Run()
	links := map[string]string{}
	if o.plots != "" {
		if err := os.MkdirAll(o.plots, 0o755); err != nil {
			return withCode(ExitError, err)
		}
		for _, p := range r.Plots() {
			path := filepath.Join(o.plots, p.Name+".svg")
			if err := os.WriteFile(path, []byte(p.SVG), 0o644); err != nil {
				return withCode(ExitError, err)
			}
			links[p.Name] = path
		}
	}
	switch {
	case o.output == "json":
		err = r.WriteJSON(out)
	case o.markdown:
		err = r.WriteMarkdown(out, links)
	default:
		err = r.WriteText(out)
	}
	if err != nil {
		return withCode(ExitError, fmt.Errorf("simulate: write output: %w", err))
	}
	if t := r.Totals(true); t.Drops > 0 || r.Deadlock != nil && r.Deadlock.AtEnd {
		return withCode(ExitCheckFailed, nil)
	}
	return nil
}

// compareModes runs the workload in every mode and prints one line each.
func (o *simulateOptions) compareModes(out io.Writer, f *intent.Fabric, sc *sim.Scenario, so sim.StarOptions, opt sim.Options) error {
	runs, err := sim.CompareModes(f, sc, so, opt)
	if err != nil {
		return withCode(ExitError, fmt.Errorf("simulate: %w", err))
	}
	if o.output == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		err = enc.Encode(runs)
	} else {
		err = sim.WriteModeComparison(out, runs)
	}
	if err != nil {
		return withCode(ExitError, fmt.Errorf("simulate: write output: %w", err))
	}
	return nil
}
