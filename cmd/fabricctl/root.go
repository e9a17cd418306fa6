package main

import (
	"context"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fabricctl/fabricctl/intent"
)

// deps is everything commands need from the outside world. main builds one
// and hands it to every command constructor; there is no global state.
type deps struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// log is built from --log-level/--log-format before a command runs.
	log       *slog.Logger
	logLevel  string
	logFormat string
	// color: stdout is a terminal and NO_COLOR is unset.
	color bool
	// guard tells main about writes in progress (signal.go); nil in tests
	// that build deps by hand.
	guard *guard
	// cellFactor is --cell-factor: the SONiC headroom model's cell
	// occupancy on every switch (0 = each ASIC's), a derived fact every
	// command takes the same way (loadIntent).
	cellFactor float64
}

// loadIntent reads the intent as every command does: intent.LoadFrom,
// then the flags that change derived facts (--cell-factor) applied, so
// check, plan, simulate and the others see one set of facts
// (intent/portfacts). A partly read fabric comes back with the error, as
// from intent.LoadFrom.
func (d *deps) loadIntent(stdin io.Reader, files ...string) (*intent.Fabric, error) {
	f, err := intent.LoadFrom(stdin, files...)
	if f != nil {
		f = d.derive(f)
	}
	return f, err
}

// derive applies the flags that change derived facts to f.
func (d *deps) derive(f *intent.Fabric) *intent.Fabric {
	return f.WithDerive(intent.Derive{CellFactor: d.cellFactor})
}

// commands lists every subcommand constructor. One file per command.
var commands = []func(*deps) *cobra.Command{
	newVersionCmd,
	newSchemaCmd,
	newPerftestCmd,
	newCheckCmd,
	newHeadroomCmd,
	newHostCmd,
	newPlanCmd,
	newDiffCmd,
	newApplyCmd,
	newRestoreCmd,
	newLabCmd,
	newRenderCmd,
	newInventoryCmd,
	newValidateCmd,
	newWatchCmd,
	newSimulateCmd,
	newTuneCmd,
	// more commands are added here, one line each.
}

func newRootCmd(d *deps) *cobra.Command {
	root := &cobra.Command{
		Use:   "fabricctl",
		Short: "Make RDMA (RoCEv2) fabrics lossless, and prove it",
		Long: `fabricctl turns one declarative intent (RoCE classes, PFC, ECN, ETS, MTU and the
inventory of switches and hosts) into switch configuration over gNMI and host NIC
configuration over netlink, checks it before deployment, detects drift, and
validates the fabric with RDMA traffic and counters.

Exit codes: 0 ok/in sync, 1 error, 2 changes or drift, 3 check or validation
failed, 4 apply failed and was rolled back, 5 host apply/restore partly written
(not rolled back), 6 apply: a switch was changed by another writer (nothing of
it rolled back), 64 usage.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			l, err := newLogger(d.stderr, d.logLevel, d.logFormat)
			if err != nil {
				return err
			}
			d.log = l
			if d.cellFactor != 0 && !(d.cellFactor >= 1 && d.cellFactor <= 10) { // NaN too
				return usagef("--cell-factor %g: want 1 to 10 (or 0: each switch ASIC's own)", d.cellFactor)
			}
			return nil
		},
	}
	setVersionFlag(root)
	root.SetIn(d.stdin)
	root.SetOut(d.stdout)
	root.SetErr(d.stderr)
	root.PersistentFlags().StringVar(&d.logLevel, "log-level", "warn", "log level: debug, info, warn, error")
	root.PersistentFlags().StringVar(&d.logFormat, "log-format", "text", "log format: text or json (logs go to stderr)")
	root.PersistentFlags().Float64Var(&d.cellFactor, "cell-factor", 0, "buffer cell occupancy factor of the SONiC headroom model on every switch, for every command (small packets: ~2; 0 = each switch ASIC's own)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	for _, f := range commands {
		root.AddCommand(f(d))
	}
	root.InitDefaultCompletionCmd() // now, so usageArgs covers it too
	registerCompletions(root)
	defaultHelp := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		out := c.OutOrStdout()
		var b strings.Builder
		c.SetOut(&b)
		defaultHelp(c, args)
		c.SetOut(out)
		_, _ = io.WriteString(out, wrapHelp(b.String(), helpWidth))
	})
	for _, c := range root.Commands() {
		usageArgs(c)
	}
	return root
}

// usageArgs makes c and its subcommands treat argument mistakes as usage
// errors (exit 64): a wrong argument count (cobra's Args validators return
// plain errors, which would exit 1), and a command group run without a
// subcommand or with an unknown one (cobra prints the group's help and
// exits 0, so a typo such as "fabricctl host aply" in a script succeeded
// doing nothing).
func usageArgs(c *cobra.Command) {
	if c.HasSubCommands() && !c.Runnable() {
		c.RunE = func(cmd *cobra.Command, _ []string) error {
			var subs []string
			for _, s := range cmd.Commands() {
				if s.IsAvailableCommand() {
					subs = append(subs, s.Name())
				}
			}
			return usagef("%s needs a subcommand: %s (see %s --help)", cmd.CommandPath(), strings.Join(subs, ", "), cmd.CommandPath())
		}
		if c.Args == nil {
			c.Args = cobra.NoArgs
		}
	}
	if validate := c.Args; validate != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := validate(cmd, args); err != nil {
				return &usageError{fileArgHint(cmd, args, err)}
			}
			return nil
		}
	}
	for _, s := range c.Commands() {
		usageArgs(s)
	}
}

func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lv slog.Level
	switch strings.ToLower(level) {
	case "debug":
		lv = slog.LevelDebug
	case "info":
		lv = slog.LevelInfo
	case "warn", "warning":
		lv = slog.LevelWarn
	case "error":
		lv = slog.LevelError
	default:
		return nil, usagef("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, usagef("--log-format %q: want text or json", format)
}

// run executes fabricctl with args and returns the process exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runGuarded(ctx, &guard{}, args, stdin, stdout, stderr)
}

// runGuarded is run with the guard main watches after a signal.
func runGuarded(ctx context.Context, g *guard, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	d := &deps{stdin: stdin, stdout: stdout, stderr: stderr, log: slog.New(slog.DiscardHandler), guard: g}
	d.color = isTerminal(stdout)
	root := newRootCmd(d)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err != nil && strings.HasPrefix(err.Error(), "unknown command") {
		err = &usageError{err}
	}
	if !runsUntilSignal(cmd) {
		err = interrupted(ctx, g, err)
	}
	return exitCode(err, stderr)
}

// annotationUntilSignal marks a command whose normal end is a signal.
const annotationUntilSignal = "fabricctl/runs-until-signal"

// runsUntilSignal says whether cmd, as invoked, runs until Ctrl-C or
// SIGTERM as its normal end (--watch, lab --keep, or a command annotated
// so): a signal then ends it with its own exit code, not "interrupted".
func runsUntilSignal(cmd *cobra.Command) bool {
	if cmd.Annotations[annotationUntilSignal] == "true" {
		return true
	}
	for _, name := range []string{"watch", "keep"} {
		if f := cmd.Flags().Lookup(name); f != nil && f.Value.String() == "true" {
			return true
		}
	}
	return false
}

// checkOutput validates an --output value against the allowed formats.
func checkOutput(got string, allowed ...string) error {
	for _, a := range allowed {
		if got == a {
			return nil
		}
	}
	return usagef("--output %q: want one of %s", got, strings.Join(allowed, ", "))
}
