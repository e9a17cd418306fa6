package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/switchdrv"
)

// lockDirDefault says where switchdrv.DefaultLockDir puts the locks (the
// help shows the rule, not this process's path).
const lockDirDefault = "$XDG_RUNTIME_DIR/fabricctl, else /run/fabricctl as root, else $TMPDIR/fabricctl-UID"

type applyOptions struct {
	switchFlags
	guard     guardFlags
	output    string
	canary    int
	backupDir string
	lockDir   string
	planFile  string
	planKey   planKeyFlag
	// interactive: show the plan and apply only after "yes" on the terminal.
	interactive bool
	// stdinTerminal reports whether the command's stdin is a terminal
	// (nil = the real check, promptTerminal); tests set it.
	stdinTerminal func(io.Reader) bool
}

func newApplyCmd(d *deps) *cobra.Command {
	o := &applyOptions{}
	cmd := &cobra.Command{
		Use:   "apply -f INTENT [PLAN.json]",
		Short: "Configure the switches over gNMI, with backups and verified rollback",
		Long: `Apply plans (or loads the saved PLAN.json made by "fabricctl plan --out") and, for
every switch with changes, re-reads the owned subtrees (a saved plan whose
switch changed since is refused as stale), writes a backup of them to
--backup-dir (one file per run, <fabric>-<UTC time>.json, every switch of
the run in it: "fabricctl restore" reads it), then sends ONE SetRequest that
replaces the subtrees fabricctl owns and verifies it by reading back.
Re-running changes nothing and sends nothing. --canary N applies to the
first N switches first, then the rest in batches of --parallel, stopping at
the first failure. On any failure,
including Ctrl-C, every switch changed in this run is restored from its backup
and the restore verified by reading back; but a switch is first read back,
and one that no longer holds what this run wrote (another writer changed it
since) is left as is and reported "changed-by-another-writer". So is a switch whose read-back
right after the Set holds values this run did not write (neither its
intent nor the backup): another writer is at work, and then nothing of the
run is rolled back (exit 6), since restoring a backup could undo that
writer's verified write. Apply holds a lock per switch it touches (keyed by
its address, in --lock-dir) from planning to the end, and refuses to start
while another apply or restore holds one. If any selected switch or host cannot
be planned, or a switch read or backed up, nothing is written at all. Remote
hosts of the inventory are applied after the switches succeeded, by running
"fabricctl host apply -f -" on each over SSH (they re-plan themselves; hosts
have no rollback); --skip-hosts leaves them out. A progress line per
switch goes to stderr when it is a terminal; -o json prints a summary.

A saved PLAN.json is held to the intent: one without an intent hash, or made
from other intent files, is refused unless --force; every switch in it is
planned again, and where the switch is in the state the plan was made
against, the saved SetRequest and changes must equal the new ones (an edited
plan is refused, nothing written); the switches are written with the
SetRequest rendered from the intent. With --plan-key-file (or
$FABRICCTL_PLAN_KEY), the plan's MAC (plan --out --plan-key-file) must verify.

The static checks of "fabricctl check" run first, and their errors and
warnings go to stderr: errors refuse (exit 3, nothing contacted) unless
--force, which the result then names; warnings refuse only with --strict.

apply never asks anything unless --interactive is given: then stdin must be
a terminal (else exit 64: a CI job must never wait for an answer), the plan
(or the saved PLAN.json) is shown as "fabricctl plan" shows it (on stderr
with -o json), and apply asks on stderr, reading one line from stdin; only
"yes" applies. Any other answer, end of input or Ctrl-C cancels: exit 1,
"apply cancelled: nothing was changed". Without changes it does not ask.

Exit codes: 0 applied or no changes, 1 error (nothing changed; or a rollback
failed: see the backups; or a switch is locked by another run; or a host
failed after the switches were applied; or --interactive was not answered
"yes": nothing changed), 3 check found errors (or warnings with --strict)
and --force was not given: nothing changed, 4 apply failed and every
changed switch was rolled back and verified, 6 a switch was changed by
another writer after this run wrote it (left as is; the lines say what
each switch holds; nothing of another writer's was rolled back), 64 usage.`,
		Example: `  fabricctl apply -f fabric.yaml
  fabricctl plan -f fabric.yaml --out plan.json && fabricctl apply -f fabric.yaml plan.json
  fabricctl apply -f fabric.yaml --canary 1 --parallel 16 -o json
  fabricctl apply -f fabric.yaml --interactive`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.planFile = args[0]
				if len(o.files) == 0 && isYAMLName(args[0]) {
					return usagef("apply %s: the intent is given with -f (did you mean fabricctl apply -f %s?); apply's argument is a plan file written by plan --out", args[0], args[0])
				}
			}
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.Context(), d, cmd.OutOrStdout())
		},
	}
	o.bind(cmd)
	o.bindHosts(cmd)
	o.guard.bind(cmd)
	cmd.Flags().StringVarP(&o.output, "output", "o", "text", "output format: text or json")
	cmd.Flags().IntVar(&o.canary, "canary", 0, "apply to this many switches first, then the rest in batches of --parallel")
	cmd.Flags().StringVar(&o.backupDir, "backup-dir", ".fabricctl/backups", "directory for the backups taken before any write (one file per run, all its switches)")
	o.planKey.bind(cmd, "verify the saved PLAN.json's MAC with the key in this file (or $"+planKeyEnv+"): a plan that does not verify is refused")
	cmd.Flags().StringVar(&o.lockDir, "lock-dir", "", "directory of the per-switch lock files (0700, this user's; shared by every apply and restore on this machine); default "+lockDirDefault)
	cmd.Flags().BoolVar(&o.interactive, "interactive", false, "show the plan and ask for \"yes\" before applying (stdin must be a terminal)")
	return cmd
}

func (o *applyOptions) validate() error {
	if err := checkOutput(o.output, "text", "json"); err != nil {
		return err
	}
	if o.canary < 0 {
		return usagef("--canary %d: want 0 or more", o.canary)
	}
	if o.backupDir == "" {
		return usagef("--backup-dir must not be empty: apply always takes backups")
	}
	if o.lockDir == "" { // apply always locks the switches it writes
		o.lockDir = switchdrv.DefaultLockDir()
	}
	return o.switchFlags.validate()
}

func (o *applyOptions) run(ctx context.Context, d *deps, out io.Writer) error {
	if o.interactive {
		isTerm := o.stdinTerminal
		if isTerm == nil {
			isTerm = promptTerminal
		}
		if !isTerm(d.stdin) {
			return usagef("--interactive: stdin is not a terminal, and a prompt needs one; leave --interactive out when nobody is at the keyboard (CI, scripts)")
		}
	}
	f, eng, err := o.load(d)
	if err != nil {
		return err
	}
	checked, err := o.guard.guard(f, d.stderr, "apply")
	if err != nil {
		return err
	}
	defer eng.Close()
	// One run per switch at a time on this machine, from before the
	// plan's read until the last rollback: two runs interleaving could
	// each undo the other. The locks are keyed by the switches' addresses,
	// so two intents (two fabric names) for one switch exclude each other.
	// Taken once the command line is known to be good, so a typo creates
	// no lock file.
	var lock *switchdrv.Lock
	defer func() { lock.Unlock() }()
	takeLock := func(sws []*intent.Switch) error {
		var err error
		if lock, err = switchdrv.LockSwitches(o.lockDir, f.Name, sws); err != nil {
			return withCode(ExitError, err)
		}
		return nil
	}
	eng.Canary, eng.BackupDir = o.canary, o.backupDir
	// main follows the switch writes under way (what a Ctrl-C waits for,
	// what a second one abandons); a terminal sees a line per step.
	term := isTerminal(d.stderr)
	eng.Progress = func(ev switchdrv.Event) {
		d.guard.track(ev)
		if term {
			printEvent(d.stderr, ev)
		}
	}
	var p *plan.Plan
	if o.planFile != "" {
		b, err := os.ReadFile(o.planFile)
		if err != nil {
			return withCode(ExitError, fmt.Errorf("read plan: %w", err))
		}
		if p, err = plan.Unmarshal(b); err != nil {
			return withCode(ExitError, fmt.Errorf("%s: %w", o.planFile, err))
		}
		if p.Fabric != f.Name {
			return withCode(ExitError, fmt.Errorf("%s is a plan for fabric %q, the intent is %q", o.planFile, p.Fabric, f.Name))
		}
		if err := o.checkPlanTargets(f, p); err != nil {
			return err
		}
		if err := o.checkPlanOrigin(d, f, p); err != nil {
			return err
		}
		filtered := len(o.switches) > 0 || len(o.hosts) > 0
		p.Targets = slices.DeleteFunc(p.Targets, func(t plan.TargetPlan) bool {
			if t.Kind == plan.KindHost {
				return o.skipHosts || (filtered && !slices.Contains(o.hosts, t.Name))
			}
			return filtered && !slices.Contains(o.switches, t.Name)
		})
		var sws []*intent.Switch
		for _, t := range p.Targets {
			if sw := f.Switch(t.Name); t.Kind == plan.KindSwitch && sw != nil {
				sws = append(sws, sw)
			}
		}
		if err := takeLock(sws); err != nil {
			return err
		}
		if err := o.rerender(ctx, f, eng, p); err != nil {
			return err
		}
	} else {
		sws, err := switchdrv.Select(f, o.switches)
		if err != nil {
			return withCode(ExitError, err)
		}
		if _, err := o.selectHosts(f); err != nil {
			return err
		}
		if err := takeLock(sws); err != nil {
			return err
		}
		// Planned here, applied here, never saved: no payload encoding
		// (unless a prompt makes apply read the switches again).
		eng.NoPayload = !o.interactive
		if p, err = o.planTargets(ctx, d, f, eng, "plan"); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return withCode(ExitError, fmt.Errorf("interrupted while planning; nothing was changed: %w", err))
		}
	}
	// A fresh plan is shown in text output; a saved one only when asking
	// about it. With -o json stdout is for the summary, so the plan a
	// question is about goes to stderr, next to the question.
	switch {
	case o.output == "text" && (o.planFile == "" || o.interactive):
		if err := plan.WriteText(out, p); err != nil {
			return withCode(ExitError, err)
		}
	case o.interactive:
		if err := plan.WriteText(d.stderr, p); err != nil {
			return withCode(ExitError, err)
		}
	}
	if o.interactive {
		if err := promptApply(ctx, d, p); err != nil {
			return err
		}
		// Time passed while the plan was read: apply reads every switch
		// again and refuses one that changed since.
		eng.ForgetReads()
	}
	// From the first write to the last rollback apply is not cut short
	// by a signal (it reacts to ctx itself: stops, rolls back, verifies).
	release := d.guard.write()
	res, err := eng.Apply(ctx, f, p)
	release()
	d.guard.settle()
	// Hosts follow the switches, and only when the switches are done: a
	// host has no rollback, so a failed switch run leaves them alone.
	var hostRes []plan.TargetPlan
	var hostErr error
	if err == nil {
		var hosts []intent.Host
		for _, t := range p.Targets {
			if h := f.Host(t.Name); t.Kind == plan.KindHost && t.HasChanges() && h != nil {
				hosts = append(hosts, *h)
			}
		}
		if len(hosts) > 0 {
			hostRes, hostErr = o.runHosts(ctx, d, f, "apply", hosts)
		}
	}
	if res != nil {
		if werr := writeResult(out, res, hostRes, checked, o.output); werr != nil && err == nil {
			err = werr
		} else if werr == nil && errors.Is(err, plan.ErrStale) {
			// The result names each stale switch and why; the verdict
			// says it once, without repeating them.
			err = fmt.Errorf("nothing was changed: the saved plan is stale on %s (see above); run fabricctl plan again", staleTargets(res))
		}
	}
	switch {
	case err == nil && hostErr == nil:
		return nil
	case err == nil:
		return withCode(ExitError, fmt.Errorf("the switches were applied, but not every host: %w", hostErr))
	case errors.Is(err, switchdrv.ErrRolledBack):
		return withCode(ExitRolledBack, err)
	case errors.Is(err, switchdrv.ErrChangedByOther):
		return withCode(ExitChangedByOther, err)
	}
	return withCode(ExitError, err)
}

// errApplyCancelled is the outcome of a prompt not answered "yes".
var errApplyCancelled = errors.New("apply cancelled: nothing was changed")

// promptApply asks on d.stderr whether to apply p and reads one line from
// d.stdin: only "yes" proceeds. A plan without changes is not asked about,
// nor one with errors (Apply refuses it before writing anything).
func promptApply(ctx context.Context, d *deps, p *plan.Plan) error {
	if p.HasErrors() {
		return nil
	}
	var switches, hosts int
	for i := range p.Targets {
		switch t := &p.Targets[i]; {
		case !t.HasChanges():
		case t.Kind == plan.KindHost:
			hosts++
		default:
			switches++
		}
	}
	if switches+hosts == 0 {
		fmt.Fprintln(d.stderr, "No changes: nothing to apply, so nothing to ask.")
		return nil
	}
	what := promptCount(switches, "switch", "switches")
	switch {
	case switches == 0:
		what = promptCount(hosts, "host", "hosts")
	case hosts > 0:
		what += " and " + promptCount(hosts, "host", "hosts")
	}
	fmt.Fprintf(d.stderr, "Apply these changes to %s? Only 'yes' is accepted: ", what)
	answer, err := promptLine(ctx, d.stdin)
	if err != nil {
		fmt.Fprintln(d.stderr) // end the prompt's line
		return withCode(ExitError, errApplyCancelled)
	}
	if answer != "yes" {
		return withCode(ExitError, errApplyCancelled)
	}
	return nil
}

func promptCount(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// promptLine reads one line from r without its line ending. End of input
// before the newline is an error, as is ctx ending (Ctrl-C) while waiting:
// the read itself cannot be interrupted, so it is left behind.
func promptLine(ctx context.Context, r io.Reader) (string, error) {
	type line struct {
		s   string
		err error
	}
	ch := make(chan line, 1)
	go func() {
		s, err := bufio.NewReader(r).ReadString('\n')
		ch <- line{s, err}
	}()
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case l := <-ch:
		if l.err != nil {
			return "", l.err
		}
		return strings.TrimSuffix(strings.TrimSuffix(l.s, "\n"), "\r"), nil
	}
}

// promptTerminal reports whether r is a terminal, i.e. someone can answer
// a prompt. Unlike isTerminal, NO_COLOR plays no part: it is about colour.
func promptTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// checkPlanTargets refuses a --switch or --host that names no target of the
// saved plan p: filtering the plan on it would apply nothing and succeed.
// An unknown or local --host is a usage error, as when planning afresh.
// checkPlanOrigin holds a saved plan to where it came from: with a plan
// key, its MAC must verify; its intent hash must be the intent's (a plan
// without one, or of other intent bytes, is refused unless --force).
func (o *applyOptions) checkPlanOrigin(d *deps, f *intent.Fabric, p *plan.Plan) error {
	key, err := o.planKey.load()
	if err != nil {
		return err
	}
	switch {
	case key != nil:
		if err := p.Verify(key); err != nil {
			return withCode(ExitError, fmt.Errorf("%s: refused: %w", o.planFile, err))
		}
	case p.MAC != "":
		fmt.Fprintf(d.stderr, "fabricctl: warning: %s carries a MAC, but no plan key was given (%s or $%s): not verified\n", o.planFile, "--plan-key-file", planKeyEnv)
	}
	var why string
	switch h := intentHash(f); {
	case p.IntentHash == "":
		why = "records no intent hash"
	case p.IntentHash != h:
		why = "was made from other intent files than these"
	default:
		return nil
	}
	if !o.guard.force {
		return withCode(ExitError, fmt.Errorf("%s %s: refused (plan again from these files, or pass --force to apply it anyway; it is still rendered again from the intent and must match)", o.planFile, why))
	}
	fmt.Fprintf(d.stderr, "fabricctl: warning: --force: %s %s\n", o.planFile, why)
	return nil
}

// rerender plans the saved plan's switches again from the intent and holds
// the saved plan to it: for a switch read in the state the plan was made
// against, the SetRequest and the changes must be exactly what the intent
// renders to (so the plan can write no path, and no value, that the driver
// would not: an edited plan file is refused). Every switch is then applied
// with the SetRequest rendered here, never with the file's bytes: a switch
// whose state moved since the plan is refused as stale by apply's own read.
func (o *applyOptions) rerender(ctx context.Context, f *intent.Fabric, eng *switchdrv.Engine, p *plan.Plan) error {
	var names []string
	for _, t := range p.Targets {
		if t.Kind == plan.KindSwitch {
			names = append(names, t.Name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	if err := switchdrv.Errors(p); err != nil {
		return nil // apply refuses a plan with errors itself
	}
	for _, n := range names {
		if f.Switch(n) == nil {
			return nil // apply refuses a switch the intent lacks itself
		}
	}
	fresh, err := eng.Plan(ctx, f, names)
	if err != nil {
		return withCode(ExitError, fmt.Errorf("%s: render the intent again: %w", o.planFile, err))
	}
	if err := switchdrv.Errors(fresh); err != nil {
		return withCode(ExitError, fmt.Errorf("%s: render the intent again: %w", o.planFile, err))
	}
	var bad []error
	for i := range p.Targets {
		t := &p.Targets[i]
		if t.Kind != plan.KindSwitch {
			continue
		}
		ft := targetNamed(fresh, t.Name)
		if ft == nil {
			return withCode(ExitError, fmt.Errorf("%s: switch %s was not rendered again", o.planFile, t.Name))
		}
		if ft.Basis == t.Basis {
			if err := switchdrv.SamePayload(t, ft); err != nil {
				bad = append(bad, err)
				continue
			}
			if !slices.Equal(t.Changes, ft.Changes) {
				bad = append(bad, fmt.Errorf("switch %s: the plan's changes are not what the intent renders to", t.Name))
				continue
			}
		}
		t.Payload = ft.Payload
	}
	if len(bad) > 0 {
		return withCode(ExitError, fmt.Errorf("%s: refused: the saved plan is not what these intent files render to against the same switch state (edited after planning?); nothing was changed: %w",
			o.planFile, errors.Join(bad...)))
	}
	return nil
}

func (o *applyOptions) checkPlanTargets(f *intent.Fabric, p *plan.Plan) error {
	if _, err := o.selectHosts(f); err != nil {
		return err
	}
	check := func(kind string, names []string) error {
		for _, n := range names {
			if !slices.ContainsFunc(p.Targets, func(t plan.TargetPlan) bool { return t.Kind == kind && t.Name == n }) {
				return withCode(ExitError, fmt.Errorf("--%s %s: %s has no plan for that %s", kind, n, o.planFile, kind))
			}
		}
		return nil
	}
	if err := check(plan.KindSwitch, o.switches); err != nil {
		return err
	}
	if o.skipHosts {
		return nil
	}
	return check(plan.KindHost, o.hosts)
}

// applyOutput is the JSON summary: the switches' result plus the hosts'.
type applyOutput struct {
	*switchdrv.Result
	Hosts []plan.TargetPlan `json:"hosts,omitempty"`
	guardResult
}

func writeResult(w io.Writer, res *switchdrv.Result, hosts []plan.TargetPlan, checked guardResult, format string) error {
	if format == "json" {
		b, err := json.MarshalIndent(applyOutput{Result: res, Hosts: hosts, guardResult: checked}, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}
	var b strings.Builder
	// One backup file holds every switch of the run: named once, after
	// the switches.
	var backups []string
	backedUp := map[string]int{}
	for _, t := range res.Targets {
		fmt.Fprintf(&b, "switch %s: %s", t.Name, t.Status)
		if t.Changes > 0 {
			fmt.Fprintf(&b, " (%d changes)", t.Changes)
		}
		if t.Backup != "" {
			if backedUp[t.Backup] == 0 {
				backups = append(backups, t.Backup)
			}
			backedUp[t.Backup]++
		}
		if t.Error != "" {
			fmt.Fprintf(&b, ": %s", t.Error)
		}
		b.WriteByte('\n')
	}
	for _, h := range hosts {
		fmt.Fprintf(&b, "host %s: ", h.Name)
		switch {
		case h.Error != "":
			fmt.Fprintf(&b, "failed: %s\n", h.Error)
		default:
			fmt.Fprintf(&b, "applied (%d changes)\n", len(h.Changes))
		}
	}
	for _, p := range backups {
		what := "switch"
		if backedUp[p] > 1 {
			what = "switches"
		}
		fmt.Fprintf(&b, "Backup of %d %s: %s\n", backedUp[p], what, p)
	}
	fmt.Fprintf(&b, "Apply: %s.\n", res.Status)
	if n := plan.ForcedNote(checked.Forced); n != "" {
		fmt.Fprintln(&b, n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// staleTargets names the switches of res refused as stale.
func staleTargets(res *switchdrv.Result) string {
	var names []string
	for _, t := range res.Targets {
		if t.Status == switchdrv.StatusStale {
			names = append(names, t.Name)
		}
	}
	return strings.Join(names, ", ")
}

func printEvent(w io.Writer, ev switchdrv.Event) {
	if ev.Switch == "" { // the rollout itself: a canary stage
		fmt.Fprintln(w, ev.Detail)
		return
	}
	line := fmt.Sprintf("  %-12s %s", ev.Switch, ev.Step)
	if ev.Detail != "" {
		line += " " + ev.Detail
	}
	if ev.Took > 0 {
		line += fmt.Sprintf(" (%dms)", ev.Took.Milliseconds())
	}
	if ev.Err != nil {
		line += ": " + ev.Err.Error()
	}
	fmt.Fprintln(w, line)
}
