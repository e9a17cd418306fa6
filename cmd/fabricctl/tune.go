package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/check"
	"github.com/fabricctl/fabricctl/internal/sim"
	"github.com/fabricctl/fabricctl/internal/tune"
)

type tuneOptions struct {
	d         *deps
	files     []string
	scenarios []string
	// workload: --speed, --cable (synthetic star), --size
	workload workloadFlags
	class    string
	seed     int64
	duration time.Duration
	budget   int
	dcqcn    bool
	modes    bool
	parallel int
	output   string
	plots    string
	write    bool
	out      string
}

func newTuneCmd(d *deps) *cobra.Command {
	o := &tuneOptions{d: d}
	cmd := &cobra.Command{
		Use:   "tune -f INTENT --scenario incast:16:1 [--scenario SPEC]...",
		Short: "Search ECN thresholds and DCQCN parameters by simulation for your workload",
		Long: `Tune searches the RoCE class's ECN thresholds (min, max, probability) and
the hosts' DCQCN parameters (aiRate, haiRate, timeReset,
rateReduceMonitorPeriod, minDecreaseFactor, g) by simulating the given
workload scenarios (simulate's: incast:N:1, alltoall, slow-receiver:PCT,
link-down:A-B or a .yaml file; generated flows carry --size) on the fabric
as the intent configures it. The objective, in order: no drop on a lossless
priority, every flow finished, the lowest p99 flow completion time (mean
over the scenarios, relative to the intent's own), then the least pause
time, then the most throughput.

The search is a coarse grid over the ECN settings, then a local search over
every parameter from the best point; the settings of a round are simulated
in parallel (--parallel) and the result is the same for a seed whatever the
parallelism. Every setting tried stays inside what each platform of the
intent accepts (the compilers' and YANG ranges), at least one MTU for min
and at most the smallest XOFF point for max (portfacts), so it passes check.

--modes searches every RoCE mode (lossless, lossy, semi-lossless,
pfc-only) that all the intent's switches can compile, each within --budget
(a mode check refuses on a platform is not simulated, and the table says
why: FC106, no PFC on OpenConfig; FC162, no semi-lossless on EOS), and
prints the best setting of each mode and marks the best of all, which is
the tuned setting. pfc-only is one setting: nothing marks, DCQCN is off.

It prints the before/after table and the edits of the intent with their
file:line and as a diff; --write makes them in the intent files, --out
writes the tuned intent to a file: the RoCE class's ecn, policy.dcqcn
(the hosts' DCQCN, which host apply writes) and, when another mode wins,
policy.mode with the class fields that mode needs.

Exit codes: 0 tuned (or the intent's setting is the best), 3 the best
setting still drops on a lossless priority, 1 the intent or a scenario
could not be read, 64 usage.`,
		Example: `  fabricctl tune -f fabric.yaml --scenario incast:16:1
  fabricctl tune -f fabric.yaml --scenario incast:16:1 --scenario alltoall --size 1MB --write
  fabricctl tune -f fabric.yaml --scenario incast:16:1 --modes
  fabricctl tune -f fabric.yaml --scenario incast:16:1 --out tuned.yaml --plots plots/ -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context(), cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringArrayVarP(&o.files, "file", "f", nil, "intent file (repeatable; - reads stdin, not with --write)")
	cmd.Flags().StringArrayVar(&o.scenarios, "scenario", nil, "workload: incast:N:1, alltoall, slow-receiver:PCT, link-down:A-B or a .yaml file (repeatable; default incast:16:1)")
	cmd.Flags().StringVar(&o.class, "class", "", "class to tune (default: the first lossless class)")
	cmd.Flags().Int64Var(&o.seed, "seed", 0, "random seed (default 1); the same seed gives the same result")
	cmd.Flags().DurationVar(&o.duration, "duration", 0, "fabric time of each run (default: twice what the intent's setting needs)")
	cmd.Flags().IntVar(&o.budget, "budget", tune.DefaultBudget, "most settings to simulate per mode (each over every scenario)")
	cmd.Flags().BoolVar(&o.dcqcn, "dcqcn", true, "search the hosts' DCQCN parameters too")
	cmd.Flags().BoolVar(&o.modes, "modes", false, "also search every other RoCE mode the intent's switches can compile (lossless, lossy, semi-lossless, pfc-only)")
	cmd.Flags().IntVar(&o.parallel, "parallel", 0, "simulations at once (default: the CPUs Go may use)")
	cmd.Flags().StringVarP(&o.output, "output", "o", "text", "output format: text or json")
	cmd.Flags().StringVar(&o.plots, "plots", "", "write simulate's plots (queue, rate, pause) before and after, per scenario, to this directory")
	cmd.Flags().BoolVar(&o.write, "write", false, "make the edits in the intent files")
	cmd.Flags().StringVar(&o.out, "out", "", "write the tuned intent to this file (an intent of one file)")
	o.workload.bind(cmd.Flags(), "message of each generated flow (default 512KB)")
	return cmd
}

func (o *tuneOptions) options() (tune.Options, error) {
	t := tune.Options{Scenarios: o.scenarios, Class: o.class, Seed: o.seed, Duration: o.duration, Budget: o.budget,
		DCQCN: o.dcqcn, Modes: o.modes, Parallel: o.parallel}
	if err := checkOutput(o.output, "text", "json"); err != nil {
		return t, err
	}
	if len(o.files) == 0 {
		return t, usagef("no intent file given: use -f FILE")
	}
	if o.write && slices.Contains(o.files, "-") {
		return t, usagef("--write edits the intent files: not with -f -")
	}
	if o.write && o.out != "" {
		return t, usagef("--write and --out exclude each other")
	}
	if o.out != "" && len(o.files) != 1 {
		return t, usagef("--out writes an intent of one file: with several -f, use --write")
	}
	if o.budget < 1 || o.budget > 10000 {
		return t, usagef("--budget %d: want 1-10000 settings", o.budget)
	}
	if o.duration < 0 || o.duration > 10*time.Second {
		return t, usagef("--duration %s: want up to 10s of fabric time", o.duration)
	}
	if o.parallel < 0 {
		return t, usagef("--parallel %d: want a positive number", o.parallel)
	}
	if t.Parallel == 0 {
		t.Parallel = runtime.GOMAXPROCS(0)
	}
	if len(t.Scenarios) == 0 {
		t.Scenarios = []string{"incast:16:1"}
	}
	var err error
	if t.Star, t.Size, err = o.workload.parse(); err != nil {
		return t, err
	}
	return t, nil
}

func (o *tuneOptions) run(ctx context.Context, stdin io.Reader, out, errw io.Writer) error {
	opts, err := o.options()
	if err != nil {
		return err
	}
	f, err := o.d.loadIntent(stdin, o.files...)
	if err != nil {
		if fs := check.FromErrors(err); fs != nil {
			_ = check.WriteText(errw, fs, false)
			return withCode(ExitError, fmt.Errorf("tune: the intent does not parse"))
		}
		return withCode(ExitError, err)
	}
	r, err := tune.Search(ctx, f, opts)
	if err != nil {
		return withCode(ExitError, fmt.Errorf("tune: %w", err))
	}
	var w *tune.Written
	if len(r.Edits) > 0 {
		if w, err = r.Write(); err != nil {
			return withCode(ExitError, fmt.Errorf("tune: %w", err))
		}
	}
	if o.plots != "" {
		if err := o.writePlots(r); err != nil {
			return withCode(ExitError, fmt.Errorf("tune: %w", err))
		}
	}
	if o.output == "json" {
		err = r.WriteJSON(out, w)
	} else {
		err = r.WriteText(out, w)
	}
	if err != nil {
		return withCode(ExitError, fmt.Errorf("tune: write output: %w", err))
	}
	if w != nil && (o.write || o.out != "") {
		if err := o.save(f, w, errw); err != nil {
			return withCode(ExitError, fmt.Errorf("tune: %w", err))
		}
	}
	if r.After.Drops > 0 {
		return withCode(ExitCheckFailed, nil)
	}
	return nil
}

// save writes the tuned files: in place (--write) or the one file to --out.
func (o *tuneOptions) save(f *intent.Fabric, w *tune.Written, errw io.Writer) error {
	for i, s := range w.Sources {
		old := f.Sources[i]
		path := s.Name
		if o.out != "" {
			path = o.out
		} else if string(old.Data) == string(s.Data) {
			continue
		}
		// through a temporary file, synced, as inventory import writes
		if err := writeInventoryFile(path, s.Data); err != nil {
			return err
		}
		fmt.Fprintf(errw, "tune: wrote %s\n", path)
	}
	return nil
}

// writePlots writes simulate's plots of the intent's setting and the
// tuned one for every scenario: DIR/<n>-before-queue.svg and so on.
func (o *tuneOptions) writePlots(r *tune.Result) error {
	if err := os.MkdirAll(o.plots, 0o755); err != nil {
		return err
	}
	before, after, err := r.Runs()
	if err != nil {
		return err
	}
	for i := range before {
		for _, run := range []struct {
			tag string
			res *sim.Result
		}{{"before", before[i]}, {"after", after[i]}} {
			for _, p := range run.res.Plots() {
				path := filepath.Join(o.plots, fmt.Sprintf("%d-%s-%s.svg", i+1, run.tag, p.Name))
				if err := os.WriteFile(path, []byte(p.SVG), 0o644); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
