package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/switchdrv"
)

type diffOptions struct {
	switchFlags
	output string
}

func newDiffCmd(d *deps) *cobra.Command {
	o := &diffOptions{}
	cmd := &cobra.Command{
		Use:   "diff -f INTENT",
		Short: "Detect drift: compare the switches with the intent (GitOps exit code)",
		Long: `Diff is plan with an exit code for pipelines: it reads the subtrees fabricctl
owns on every switch and prints each drifted leaf path with the value on the
switch (-) and in the intent (+). Thresholds within one buffer cell count as
in sync. What the intent asks that a switch lacks and apply cannot write (a
SONiC PFC watchdog that was never started, an SR Linux port without the
subinterface its classifier attaches to or with an ip-mtu below the intent's
MTU) is drift too, printed with the reason and what to run on the switch.
Remote hosts run "fabricctl host diff" over SSH (--skip-hosts: not).

Exit codes: 0 in sync, 2 drift found, 1 error (a switch could not be read), 64 usage.`,
		Example: `  fabricctl diff -f fabric.yaml
  fabricctl diff -f fabric.yaml --switch leaf1 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(o.output, "text", "json"); err != nil {
				return err
			}
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.Context(), d, cmd.OutOrStdout())
		},
	}
	o.bind(cmd)
	o.bindHosts(cmd)
	cmd.Flags().StringVarP(&o.output, "output", "o", "text", "output format: text or json")
	return cmd
}

func (o *diffOptions) run(ctx context.Context, d *deps, out io.Writer) error {
	f, eng, err := o.load(d)
	if err != nil {
		return err
	}
	defer eng.Close()
	// The text diff shows no payload or basis: not built (as plan -o text).
	eng.NoPayload = o.output != "json"
	eng.ShowOnly = true
	p, err := o.planTargets(ctx, d, f, eng, "diff")
	if err != nil {
		return err
	}
	if o.output == "json" {
		err = plan.WriteJSON(out, p)
	} else {
		err = writeDiff(out, p)
	}
	if err != nil {
		return withCode(ExitError, fmt.Errorf("write diff: %w", err))
	}
	if err := switchdrv.ReadErrors(p); err != nil {
		return withCode(ExitError, fmt.Errorf("diff incomplete: %w", err))
	}
	if p.HasDrift() {
		return withCode(ExitChanges, nil)
	}
	return nil
}

// writeDiff renders the plan as a diff (plan.WriteDiff).
func writeDiff(w io.Writer, p *plan.Plan) error { return plan.WriteDiff(w, p) }
