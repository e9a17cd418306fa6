package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/fabricctl/fabricctl/intent/check"
	"github.com/fabricctl/fabricctl/internal/sim"
)

type checkOptions struct {
	files     []string
	output    string
	strict    bool
	listRules bool
	simulate  bool
}

func newCheckCmd(d *deps) *cobra.Command {
	o := &checkOptions{}
	cmd := &cobra.Command{
		Use:   "check -f INTENT [-f MORE]",
		Short: "Check an intent statically before deployment (PFC, ECN, headroom, MTU, ToS, DCBX, links)",
		Long: `Check parses the intent (several files merge: policy and inventory may be split)
and applies every static rule (fabricctl check --list-rules): DSCP and priority maps,
lossless priorities per platform, the CNP class, ECN thresholds and ECN-before-PFC,
PFC headroom per port from three published models, ETS weights, PFC watchdog
timers, global pause, MTU along links, RoCE path MTU, host ToS, DCBX ownership,
links and PFC deadlock risk. Nothing is contacted.

Each finding reads  file:line:col: severity ID: field path: message  followed by
how to fix it. Parse errors are reported the same way (ID FC100), all of them.
Findings a range repeats (speed: 400M on hosts gpu{1..8}) are written once with
the range and their subjects; -o json keeps one finding per element.

Exit codes: 0 no errors (warnings allowed unless --strict), 3 errors found (or
warnings with --strict), 1 an intent file could not be read, 64 usage.`,
		Example: `  fabricctl check -f fabric.yaml
  fabricctl check -f policy.yaml -f inventory.yaml -o json
  fabricctl check --list-rules`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(d, cmd.InOrStdin(), cmd.OutOrStdout(), d.color)
		},
	}
	cmd.Flags().StringArrayVarP(&o.files, "file", "f", nil, "intent file (repeatable; - reads stdin)")
	cmd.Flags().StringVarP(&o.output, "output", "o", "text", "output format: text or json (--list-rules also takes markdown)")
	cmd.Flags().BoolVar(&o.strict, "strict", false, "fail (exit 3) on warnings too")
	cmd.Flags().BoolVar(&o.listRules, "list-rules", false, "print the rule table and exit")
	cmd.Flags().BoolVar(&o.simulate, "simulate", false, "also simulate a standard incast per lossless class (fabricctl simulate): drops, pause spread, watchdog, deadlock become findings FC150-FC153")
	return cmd
}

// simulateRules are the rules check --simulate adds (FC150-FC153), listed
// by --list-rules with the flag they need.
var simulateRules = check.FlagRules{Flag: "--simulate", Rules: sim.Rules}

func (o *checkOptions) validate() error {
	if o.listRules {
		return checkOutput(o.output, "text", "json", "markdown")
	}
	if err := checkOutput(o.output, "text", "json"); err != nil {
		return err
	}
	if len(o.files) == 0 {
		return usagef("no intent file given: use -f FILE (or --list-rules)")
	}
	return nil
}

func (o *checkOptions) run(d *deps, stdin io.Reader, out io.Writer, color bool) error {
	if o.listRules {
		return check.WriteRules(out, o.output, simulateRules)
	}
	f, err := d.loadIntent(stdin, o.files...)
	var findings []check.Finding
	switch {
	case err != nil:
		findings = check.FromErrors(err)
		if findings == nil {
			return withCode(ExitError, err) // unreadable file, not a bad intent
		}
	default:
		// The text report shows no edits: the rules build none for it.
		findings = check.Run(f, check.Options{NoEdits: o.output != "json"})
		if o.simulate {
			findings = append(findings, sim.Findings(f)...)
			check.Sort(findings)
		}
	}
	files := o.files
	if f != nil {
		files = f.Files
	}
	if o.output == "json" {
		err = check.WriteJSON(out, files, findings)
	} else {
		err = check.WriteText(out, findings, color)
	}
	if err != nil {
		return withCode(ExitError, fmt.Errorf("check: write output: %w", err))
	}
	errs, warns, _ := check.Count(findings)
	switch {
	case errs > 0:
		return withCode(ExitCheckFailed, nil)
	case warns > 0 && o.strict:
		return withCode(ExitCheckFailed, errors.New("check: warnings fail with --strict"))
	}
	return nil
}
