package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
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
failed, 4 apply failed and was rolled back, 5 host apply/restore partly
written, 6 apply: a switch was changed by another writer (nothing of it
rolled back), 64 usage.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			l, err := newLogger(d.stderr, d.logLevel, d.logFormat)
			if err != nil {
				return err
			}
			d.log = l
			return nil
		},
	}
	setVersionFlag(root)
	root.SetIn(d.stdin)
	root.SetOut(d.stdout)
	root.SetErr(d.stderr)
	root.PersistentFlags().StringVar(&d.logLevel, "log-level", "warn", "log level: debug, info, warn, error")
	root.PersistentFlags().StringVar(&d.logFormat, "log-format", "text", "log format: text or json (logs go to stderr)")
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
				return &usageError{err}
			}
			return nil
		}
	}
	for _, s := range c.Commands() {
		usageArgs(s)
	}
}

// helpWidth is the widest line --help prints: an 80-column terminal.
const helpWidth = 80

// wrapHelp breaks the lines of a help text that are wider than width at
// spaces. A continuation is indented like its line, or, on a line of two
// columns (a flag and its description, a command and its summary, a term of
// a Long text's table), to where the second column starts.
// A paragraph of prose (unindented lines) with a line too wide is
// reflowed as a whole, so it does not turn ragged.
func wrapHelp(text string, width int) string {
	lines := strings.Split(text, "\n")
	var out []string
	for i := 0; i < len(lines); {
		j := i
		wide := false
		for j < len(lines) && lines[j] != "" && lines[j][0] != ' ' {
			wide = wide || utf8.RuneCountInString(lines[j]) > width
			j++
		}
		if j > i+1 && wide {
			out = append(out, wrapLine(strings.Join(lines[i:j], " "), width))
			i = j
			continue
		}
		if j == i {
			j = i + 1
		}
		for _, l := range lines[i:j] {
			out = append(out, wrapLine(l, width))
		}
		i = j
	}
	return strings.Join(out, "\n")
}

func wrapLine(line string, width int) string {
	if utf8.RuneCountInString(line) <= width {
		return line
	}
	indent := len(line) - len(strings.TrimLeft(line, " "))
	hang := indent
	// A second column starts after a run of two or more spaces.
	if j := strings.Index(line[indent:], "  "); j > 0 {
		k := indent + j
		for k < len(line) && line[k] == ' ' {
			k++
		}
		if k < width*2/3 {
			hang = k
		}
	}
	var b strings.Builder
	col := 0
	prefix := line[:indent]
	words := strings.Split(line[indent:], " ")
	b.WriteString(prefix)
	col = indent
	for wi, w := range words {
		n := utf8.RuneCountInString(w)
		if wi > 0 {
			if col+1+n > width && col > hang {
				b.WriteString("\n" + strings.Repeat(" ", hang))
				col = hang
			} else {
				b.WriteByte(' ')
				col++
			}
		}
		b.WriteString(w)
		col += n
	}
	return b.String()
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
