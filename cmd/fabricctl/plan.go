package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabricctl/fabricctl/hostdrv"
	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/remote"
	"github.com/fabricctl/fabricctl/internal/yangcheck"
	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
)

// switchFlags are the flags every command that talks to switches (and,
// through hostdrv.Fleet, to the remote hosts) shares.
type switchFlags struct {
	files      []string
	switches   []string
	hosts      []string
	skipHosts  bool
	hostBinary string
	// hostSkew lets remote hosts run another fabricctl build.
	hostSkew bool
	// hostsBound: the command has the remote-host flags (bindHosts).
	hostsBound bool
	timeout    time.Duration
	setTimeout time.Duration
	insecure   bool
	// plaintextCreds lets credentials go over plaintext gRPC (refused otherwise).
	plaintextCreds bool
	parallel       int
	// hostRunner reaches a remote host (nil = SSH); tests set a double.
	hostRunner func(intent.Host) (remote.Runner, error)
	// device: plan asks a twin of each switch's release profile, loaded with
	// the observed state, whether the switch would accept the SetRequest.
	device bool
	// lab is --lab DIR; labDir the directory in use (--lab or $FABRICCTL_LAB,
	// "" = none): every switch is reached at its twin (labdir.go).
	lab, labDir string
}

func (s *switchFlags) bind(cmd *cobra.Command) {
	cmd.Flags().StringArrayVarP(&s.files, "file", "f", nil, "intent file (repeatable)")
	cmd.Flags().StringArrayVar(&s.switches, "switch", nil, "only this switch (repeatable; default: all)")
	cmd.Flags().DurationVar(&s.timeout, "timeout", transport.DefaultTimeout, "timeout of each gNMI call to a switch")
	cmd.Flags().DurationVar(&s.setTimeout, "set-timeout", 0, "timeout of a gNMI Set (default: what the switch's profile says the device may take, e.g. 620s for SONiC, whose gNMI server waits up to 600 s on its config updater; at least --timeout)")
	cmd.Flags().BoolVar(&s.insecure, "insecure", false, "plaintext gRPC to every switch (no TLS); for labs only")
	cmd.Flags().BoolVar(&s.plaintextCreds, "plaintext-credentials", false, "send switch usernames and passwords over plaintext gRPC (tls.insecure, --insecure) instead of refusing; for labs only")
	cmd.Flags().IntVar(&s.parallel, "parallel", 8, "switches worked on at once")
	cmd.Flags().StringVar(&s.lab, "lab", "", "reach every switch at its DEVICE TWIN in this lab directory (written by `fabricctl lab -f INTENT --keep`; default $"+labEnv+")")
	_ = cmd.MarkFlagDirname("lab")
}

// bindHosts adds the flags of the commands that also cover remote hosts.
func (s *switchFlags) bindHosts(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&s.hosts, "host", nil, "only this remote host (repeatable; with --switch or --host only the named targets are used)")
	cmd.Flags().BoolVar(&s.skipHosts, "skip-hosts", false, "leave the remote hosts out (switches only)")
	bindHostBinary(cmd, &s.hostBinary, &s.hostSkew)
	s.hostsBound = true
	if f := cmd.Flags().Lookup("parallel"); f != nil {
		f.Usage = "switches and remote hosts worked on at once"
	}
}

// bindHostBinary adds --host-binary and --host-version-skew, which every
// command that runs fabricctl on remote hosts shares.
func bindHostBinary(cmd *cobra.Command, bin *string, skew *bool) {
	cmd.Flags().StringVar(bin, "host-binary", "fabricctl", "fabricctl on the remote hosts, one or more words (\"sudo -n /usr/local/bin/fabricctl\": a login without root runs it through sudo)")
	cmd.Flags().BoolVar(skew, "host-version-skew", false, "run on remote hosts whose fabricctl is another version or revision (refused by default)")
}

// hostCommand is --host-binary as argv words: the same on every command.
func hostCommand(s string) []string { return strings.Fields(s) }

// hostVersion is what the hosts' fabricctl must report: this build's
// version and revision (nil with --host-version-skew).
func hostVersion(skew bool) *hostdrv.Stamp {
	if skew {
		return nil
	}
	v := readVersion()
	return &hostdrv.Stamp{Version: v.Version, Revision: v.Revision}
}

// selectHosts returns the remote hosts this run covers: all of them unless
// --skip-hosts, or --switch without --host, or --host names some.
func (s *switchFlags) selectHosts(f *intent.Fabric) ([]intent.Host, error) {
	if s.skipHosts || s.labDir != "" || (len(s.switches) > 0 && len(s.hosts) == 0) {
		return nil, nil
	}
	remotes := hostdrv.RemoteHosts(f)
	if len(s.hosts) == 0 {
		return remotes, nil
	}
	var out []intent.Host
	for _, name := range s.hosts {
		h := f.Host(name)
		switch {
		case h == nil:
			return nil, usagef("--host %s: the intent has no such host", name)
		case h.IsLocal():
			return nil, usagef("--host %s: it is this machine (address local); use fabricctl host plan|diff|apply", name)
		}
		out = append(out, *h)
	}
	return out, nil
}

// planTargets plans the selected switches and remote hosts. hostVerb is
// what the hosts run (plan or diff). Per-target failures are in the plan.
func (s *switchFlags) planTargets(ctx context.Context, d *deps, f *intent.Fabric, eng *switchdrv.Engine, hostVerb string) (*plan.Plan, error) {
	hosts, err := s.selectHosts(f)
	if err != nil {
		return nil, err
	}
	p := &plan.Plan{Version: plan.FormatVersion, Fabric: f.Name, Created: time.Now().UTC(), Targets: []plan.TargetPlan{}}
	if len(s.hosts) == 0 || len(s.switches) > 0 {
		if p, err = eng.Plan(ctx, f, s.switches); err != nil {
			return nil, withCode(ExitError, err)
		}
	}
	if len(hosts) > 0 {
		hp, _ := s.runHosts(ctx, d, f, hostVerb, hosts) // failures are in hp[i].Error
		failed := 0
		for _, t := range hp {
			if t.Error != "" {
				failed++
			}
		}
		if failed > 0 {
			fmt.Fprintf(d.stderr, "fabricctl: %d of %d %s failed (their errors are in the plan); --skip-hosts leaves the hosts out, --host NAME picks some\n",
				failed, len(hp), plural(len(hp), "host", "hosts"))
		}
		p.Targets = append(p.Targets, hp...)
		p.Sort()
	}
	p.IntentHash = intentHash(f)
	return p, nil
}

// runHosts runs `fabricctl host VERB` on hosts (over SSH, intent on stdin).
func (s *switchFlags) runHosts(ctx context.Context, d *deps, f *intent.Fabric, verb string, hosts []intent.Host) ([]plan.TargetPlan, error) {
	fl := &hostdrv.Fleet{Runner: s.hostRunner, Command: hostCommand(s.hostBinary), Version: hostVersion(s.hostSkew), Parallel: s.parallel, Log: d.log}
	return fl.Run(ctx, verb, hosts, f.Bundle())
}

// warnDowngrades says on w, whatever the log level and whether or not
// credentials are set, which of the switches this run may reach go without
// TLS (--insecure, tls.insecure) or without verifying the switch's
// certificate (tls.skipVerify): a downgrade must never be silent.
func (s *switchFlags) warnDowngrades(w io.Writer, f *intent.Fabric) {
	if len(s.hosts) > 0 && len(s.switches) == 0 {
		return // only hosts: no switch is dialled
	}
	var plain, skip []string
	for _, sw := range f.Switches {
		if len(s.switches) > 0 && !slices.Contains(s.switches, sw.Name) {
			continue
		}
		switch {
		case s.insecure || sw.TLS.Insecure:
			plain = append(plain, sw.Name)
		case sw.TLS.SkipVerify:
			skip = append(skip, sw.Name)
		}
	}
	list := func(ns []string) string {
		if len(ns) <= 10 {
			return strings.Join(ns, ", ")
		}
		return fmt.Sprintf("%s and %d more", strings.Join(ns[:10], ", "), len(ns)-10)
	}
	if len(plain) > 0 {
		why := "tls.insecure"
		if s.insecure {
			why = "--insecure"
		}
		creds := "credentials are refused over it (--plaintext-credentials sends them)"
		if s.plaintextCreds {
			creds = "--plaintext-credentials: credentials travel unencrypted too"
		}
		fmt.Fprintf(w, "fabricctl: warning: plaintext gRPC without TLS (%s) to %d %s: %s; configuration travels unencrypted, %s\n",
			why, len(plain), plural(len(plain), "switch", "switches"), list(plain), creds)
	}
	if len(skip) > 0 {
		fmt.Fprintf(w, "fabricctl: warning: TLS without verifying the switch certificate (tls.skipVerify) for %d %s: %s; anyone on the path can pose as the switch\n",
			len(skip), plural(len(skip), "switch", "switches"), list(skip))
	}
}

func (s *switchFlags) validate() error {
	if len(s.files) == 0 {
		return usagef("no intent file given: use -f FILE")
	}
	if s.timeout <= 0 {
		return usagef("--timeout %s: want a positive duration", s.timeout)
	}
	if s.setTimeout < 0 {
		return usagef("--set-timeout %s: want a positive duration (0: the switch profile's)", s.setTimeout)
	}
	if s.hostsBound && len(hostCommand(s.hostBinary)) == 0 {
		return usagef("--host-binary: want a command")
	}
	if s.parallel < 1 || s.parallel > 1024 {
		return usagef("--parallel %d: want 1 to 1024", s.parallel)
	}
	return nil
}

// load reads the intent and builds the engine.
func (s *switchFlags) load(d *deps) (*intent.Fabric, *switchdrv.Engine, error) {
	f, err := s.loadIntent(d, d.stdin)
	if err != nil {
		return nil, nil, err
	}
	if s.labDir != "" {
		if len(s.hosts) > 0 {
			return nil, nil, usagef("--host with --lab: the lab's hosts are simulated endpoints, not reached over SSH")
		}
		l, _ := readLabDir(s.labDir)
		sayLab(d.stderr, s.labDir, l, len(f.Switches))
	}
	s.warnDowngrades(d.stderr, f)
	reg, err := newRegistry()
	if err != nil {
		return nil, nil, withCode(ExitError, err)
	}
	eng := &switchdrv.Engine{
		Registry:  reg,
		Log:       d.log,
		Parallel:  s.parallel,
		Transport: transport.Options{Timeout: s.timeout, SetTimeout: s.setTimeout, Insecure: s.insecure, PlaintextCredentials: s.plaintextCreds, Log: d.log},
		Defaults:  yangDefaults,
	}
	if s.device {
		eng.DeviceCheck = planDeviceCheck
	}
	return f, eng, nil
}

// loadIntent reads the intent files, pointed at the lab's twins when a lab
// directory is in use (--lab, $FABRICCTL_LAB).
func (s *switchFlags) loadIntent(d *deps, stdin io.Reader) (*intent.Fabric, error) {
	f, err := d.loadIntent(stdin, s.files...)
	if err != nil {
		return nil, withCode(ExitError, fmt.Errorf("load intent (run fabricctl check for details): %w", err))
	}
	if s.labDir = labDirFor(s.lab); s.labDir != "" {
		if _, err := useLab(f, s.labDir); err != nil {
			return nil, withCode(ExitError, err)
		}
	}
	return f, nil
}

// yangDefaults gives plan, diff and apply's verify the YANG defaults of a
// platform's embedded models (or of $FABRICCTL_YANG_DIR), so that targets
// that report or trim default leaves compare equal (issue 10 item 18).
func yangDefaults(p intent.Platform) (switchdrv.DefaultsFiller, error) {
	s, err := yangcheck.Platform(p)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// intentHash identifies the bytes the fabric was parsed from (saved in a plan,
// so apply can warn when the intent changed since).
func intentHash(f *intent.Fabric) string {
	var all []byte
	for _, s := range f.Sources {
		all = append(all, s.Data...)
		all = append(all, 0)
	}
	return plan.Hash(all)
}

type planOptions struct {
	switchFlags
	guard    guardFlags
	output   string
	out      string
	planKey  planKeyFlag
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
reason. Remote hosts of the inventory (address not "local") are planned too, by
running "fabricctl host plan -f -" on each over SSH (--skip-hosts leaves them out). Buffer thresholds within one buffer cell of the intent count as equal
(hardware rounds them). --out saves the plan for "fabricctl apply plan.json",
which refuses it if a switch changed since.

The static checks of "fabricctl check" run first, and their errors and
warnings go to stderr: errors refuse the plan (exit 3) unless --force, which
the plan output then names; warnings refuse only with --strict.

Exit codes: 0 planned (no changes, or changes without --detailed-exitcode),
1 error (a switch could not be read or compiled), 2 changes present with
--detailed-exitcode (what a switch lacks and apply cannot give it is shown
but does not count: apply would not change it; "fabricctl diff" exits 2 on
it), 3 check found errors (or warnings with --strict) and
--force was not given, 64 usage.`,
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
	o.bindHosts(cmd)
	o.guard.bind(cmd)
	cmd.Flags().StringVarP(&o.output, "output", "o", "text", "output format: text, json or markdown")
	cmd.Flags().StringVar(&o.out, "out", "", "also save the plan (JSON) to this file, for apply")
	o.planKey.bind(cmd, "with --out, sign the saved plan with the key in this file (or $"+planKeyEnv+"): HMAC-SHA256, which apply verifies")
	cmd.Flags().BoolVar(&o.detailed, "detailed-exitcode", false, "exit 2 when there are changes")
	o.bindDevice(cmd)
	return cmd
}

func (o *planOptions) validate() error {
	if err := checkOutput(o.output, "text", "json", "markdown"); err != nil {
		return err
	}
	return o.switchFlags.validate()
}

func (o *planOptions) run(ctx context.Context, d *deps, out io.Writer) error {
	var key []byte
	if o.out != "" {
		var err error
		if key, err = o.planKey.load(); err != nil {
			return err
		}
	}
	f, eng, err := o.load(d)
	if err != nil {
		return err
	}
	defer eng.Close()
	// Only the JSON plan (shown, or saved for apply) carries each switch's
	// payload and basis: text and markdown show neither, so the engine
	// neither encodes the SetRequests nor hashes the observed state.
	eng.NoPayload = o.output != "json" && o.out == ""
	eng.ShowOnly = true // plan never applies
	checked, err := o.guard.guard(f, d.stderr, "plan")
	if err != nil {
		return err
	}
	p, err := o.planTargets(ctx, d, f, eng, "plan")
	if err != nil {
		return err
	}
	// The plan records what --force went past: every format shows it,
	// and a saved plan keeps it.
	p.ForcedFindings = checked.Forced
	if err := plan.Write(out, p, o.output); err != nil {
		return withCode(ExitError, fmt.Errorf("write plan: %w", err))
	}
	if o.out != "" {
		if key != nil {
			if err := p.Sign(key); err != nil {
				return withCode(ExitError, err)
			}
		}
		b, err := p.Marshal()
		if err != nil {
			return withCode(ExitError, err)
		}
		if err := os.WriteFile(o.out, append(b, '\n'), 0o600); err != nil {
			return withCode(ExitError, fmt.Errorf("save plan: %w", err))
		}
	}
	if err := switchdrv.ReadErrors(p); err != nil {
		return withCode(ExitError, fmt.Errorf("plan incomplete: %w", err))
	}
	if err := switchdrv.Errors(p); err != nil {
		return withCode(ExitError, fmt.Errorf("plan refused (apply would stop here; the fix is on the switch): %w", err))
	}
	if o.detailed && p.HasChanges() {
		return withCode(ExitChanges, nil)
	}
	return nil
}
