package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/check"
)

// guardFlags are --force and --strict of the commands that lead to writes
// (plan, apply): the static checks run first, and an intent check refuses
// is not planned or applied.
type guardFlags struct {
	force  bool
	strict bool
}

func (g *guardFlags) bind(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&g.force, "force", false, "go on although fabricctl check finds errors (the result says so); apply: also a saved plan with no or another intent hash")
	cmd.Flags().BoolVar(&g.strict, "strict", false, "refuse on check warnings too, as on errors")
}

// guardResult is what the static checks said before a plan or apply.
type guardResult struct {
	// Forced lists the findings --force went past ("FC119 policy.roce.tos"),
	// empty when nothing blocking was found.
	Forced []string `json:"forcedFindings,omitempty"`
}

// guard runs the static checks on f and prints every error and warning to
// w (stderr: stdout is the plan or the result). Errors, and warnings with
// --strict, refuse with exit 3 unless --force, which the result then names.
func (g *guardFlags) guard(f *intent.Fabric, w io.Writer, verb string) (guardResult, error) {
	shown, err := printFindings(f, w)
	if err != nil {
		return guardResult{}, err
	}
	var blocking []check.Finding
	for _, x := range shown {
		if x.Severity == check.Error || g.strict {
			blocking = append(blocking, x)
		}
	}
	if len(blocking) == 0 {
		return guardResult{}, nil
	}
	what := fmt.Sprintf("%d check %s", len(blocking), plural(len(blocking), "finding", "findings"))
	if !g.force {
		hint := "fix the intent (fabricctl check -f ... explains each finding), or pass --force to " + verb + " anyway"
		return guardResult{}, withCode(ExitCheckFailed, fmt.Errorf("%s refused: %s above (%s)", verb, what, hint))
	}
	r := guardResult{}
	for _, x := range blocking {
		r.Forced = append(r.Forced, x.ID+" "+x.Path)
	}
	fmt.Fprintf(w, "fabricctl: warning: --force: going on past %s\n", what)
	return r, nil
}

// printFindings runs the static checks on f and prints the errors and
// warnings to w (infos are for fabricctl check); it returns what it printed.
func printFindings(f *intent.Fabric, w io.Writer) ([]check.Finding, error) {
	var shown []check.Finding
	for _, x := range check.Run(f, check.Options{}) {
		if x.Severity == check.Error || x.Severity == check.Warning {
			shown = append(shown, x)
		}
	}
	if len(shown) > 0 {
		if err := check.WriteText(w, shown, false); err != nil {
			return nil, withCode(ExitError, fmt.Errorf("write check findings: %w", err))
		}
	}
	return shown, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
