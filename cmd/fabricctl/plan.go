package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
)

// switchFlags are the flags every command that talks to switches shares.
type switchFlags struct {
	files    []string
	switches []string
	timeout  time.Duration
	insecure bool
	parallel int
}

func (s *switchFlags) bind(cmd *cobra.Command) {
	cmd.Flags().StringArrayVarP(&s.files, "file", "f", nil, "intent file (repeatable)")
	cmd.Flags().StringArrayVar(&s.switches, "switch", nil, "only this switch (repeatable; default: all)")
	cmd.Flags().DurationVar(&s.timeout, "timeout", transport.DefaultTimeout, "timeout of each gNMI call to a switch")
	cmd.Flags().BoolVar(&s.insecure, "insecure", false, "plaintext gRPC to every switch (no TLS); for labs only")
	cmd.Flags().IntVar(&s.parallel, "parallel", 8, "switches worked on at once")
}

func (s *switchFlags) validate() error {
	if len(s.files) == 0 {
		return usagef("no intent file given: use -f FILE")
	}
	if s.timeout <= 0 {
		return usagef("--timeout %s: want a positive duration", s.timeout)
	}
	if s.parallel < 1 || s.parallel > 1024 {
		return usagef("--parallel %d: want 1 to 1024", s.parallel)
	}
	return nil
}

// load reads the intent and builds the engine.
func (s *switchFlags) load(d *deps) (*intent.Fabric, *switchdrv.Engine, error) {
	f, err := intent.Load(s.files...)
	if err != nil {
		return nil, nil, withCode(ExitError, fmt.Errorf("load intent (run fabricctl check for details): %w", err))
	}
	reg, err := newRegistry()
	if err != nil {
		return nil, nil, withCode(ExitError, err)
	}
	eng := &switchdrv.Engine{
		Registry:  reg,
		Log:       d.log,
		Parallel:  s.parallel,
		Transport: transport.Options{Timeout: s.timeout, Insecure: s.insecure, Log: d.log},
	}
	return f, eng, nil
}

// intentHash identifies the intent files a plan was made from.
func intentHash(files []string) string {
	var all []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return ""
		}
		all = append(all, b...)
		all = append(all, 0)
	}
	return plan.Hash(all)
}

type planOptions struct {
	switchFlags
	output   string
	out      string
	detailed bool
}

func newPlanCmd(d *deps) *cobra.Command {
	o := &planOptions{}
	cmd := &cobra.Command{
		Use:   "plan -f INTENT [--out plan.json]",
		Short: "Show what apply would change on the switches (reads them over gNMI, changes nothing)",
		Long: `Plan compiles the intent for every switch (or those named with --switch), reads
the subtrees fabricctl owns with gNMI Get and lists, per switch and leaf, what
apply would create, update or delete, with the value before and after and the
reason. Buffer thresholds within one buffer cell of the intent count as equal
(hardware rounds them). --out saves the plan for "fabricctl apply plan.json",
which refuses it if a switch changed since.

Exit codes: 0 planned (no changes, or changes without --detailed-exitcode),
1 error (a switch could not be read or compiled), 2 changes present with
--detailed-exitcode, 64 usage.`,
		Example: `  fabricctl plan -f fabric.yaml
  fabricctl plan -f fabric.yaml -o markdown > plan.md
  fabricctl plan -f fabric.yaml --out plan.json --detailed-exitcode`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.Context(), d, cmd.OutOrStdout())
		},
	}
	o.bind(cmd)
	cmd.Flags().StringVarP(&o.output, "output", "o", "text", "output format: text, json or markdown")
	cmd.Flags().StringVar(&o.out, "out", "", "also save the plan (JSON) to this file, for apply")
	cmd.Flags().BoolVar(&o.detailed, "detailed-exitcode", false, "exit 2 when there are changes")
	return cmd
}

func (o *planOptions) validate() error {
	if err := checkOutput(o.output, "text", "json", "markdown"); err != nil {
		return err
	}
	return o.switchFlags.validate()
}

func (o *planOptions) run(ctx context.Context, d *deps, out io.Writer) error {
	f, eng, err := o.load(d)
	if err != nil {
		return err
	}
	p, err := eng.Plan(ctx, f, o.switches)
	if err != nil {
		return withCode(ExitError, err)
	}
	p.IntentHash = intentHash(f.Files)
	if err := plan.Write(out, p, o.output); err != nil {
		return withCode(ExitError, fmt.Errorf("write plan: %w", err))
	}
	if o.out != "" {
		b, err := p.Marshal()
		if err != nil {
			return withCode(ExitError, err)
		}
		if err := os.WriteFile(o.out, append(b, '\n'), 0o600); err != nil {
			return withCode(ExitError, fmt.Errorf("save plan: %w", err))
		}
	}
	if err := switchdrv.Errors(p); err != nil {
		return withCode(ExitError, fmt.Errorf("plan incomplete: %w", err))
	}
	if o.detailed && p.HasChanges() {
		return withCode(ExitChanges, nil)
	}
	return nil
}
