package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabricctl/fabricctl/examples"
	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/check"
	"github.com/fabricctl/fabricctl/internal/labctl"
	"github.com/fabricctl/fabricctl/internal/profile"
	"github.com/fabricctl/fabricctl/internal/yangcheck"
	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

type labOptions struct {
	keep    bool
	dir     string
	timeout time.Duration
	// empty runs bare twins (no profile, empty datastore, schema checks of
	// each payload only); strict runs profiled twins (the default unless
	// empty: labStrictDefault).
	empty, strict bool
	// profiles choose the release profile per platform (--profile).
	profiles []string
	// files are the user's intent (-f): one twin per switch of it instead
	// of the embedded lab intent.
	files []string
	// fresh starts the twins and stops there (no check/plan/apply/diff).
	fresh bool
	// traffic runs a scenario through what apply left on the twins
	// (--traffic, labtraffic.go).
	traffic labTrafficOptions
}

// labStrictDefault: lab runs profiled twins (factory defaults, full
// validation) unless --empty. The profiled twins of the lab's switches
// (srlinux-25.3, sonic-202411, eos: the default profile of each platform)
// accept the compilers' payloads since issue 10's fixes and the validator's
// reading of SR Linux's "leaf != 'literal'" idiom (issue 9).
const labStrictDefault = true

func newLabCmd(d *deps) *cobra.Command {
	o := &labOptions{}
	cmd := &cobra.Command{
		Use:   "lab [-f INTENT]...",
		Short: "Try fabricctl on DEVICE TWINS: check -> plan -> apply -> diff, no switches needed",
		Long: `Lab starts one DEVICE TWIN per switch of the embedded lab intent (SR Linux,
SONiC and EOS): in-process gNMI targets on 127.0.0.1 that announce the platform's
models, keep a datastore and answer Capabilities/Get/Set/Subscribe over real
gRPC with TLS (a throw-away CA) and a generated password. They are simulators,
not switches: they forward no packets.

The twins are PROFILED: each imitates its switch's release profile (the default of
its platform: srlinux-25.3, sonic-202411, eos; --profile NAME, repeatable, e.g.
--profile sonic-202405, picks another; see the README's "Platform profiles and
device twins"), starts from that profile's factory-default datastore and
validates the whole result of every Set as the device does (types, leafref,
must, when, mandatory, the profile's YANG features; SONiC's write semantics per
branch), refusing it with the device's reason. The SR Linux twin also gets the
inventory ports as routed interfaces with their subinterface (the operator's
configuration fabricctl builds on). --empty runs bare twins instead: empty
datastores, each payload checked against the YANG alone. Lab prints which
profile each twin runs.

With -f INTENT (repeatable, as elsewhere) lab runs YOUR fabric: one profiled
twin per switch of your inventory, each with its own profile (switches[].profile
or the platform's default), ASIC and ports, from the factory datastore plus the
operator's configuration the intent assumes (SR Linux: the ports' routed
subinterfaces; SONiC: the ports' PORT entries at the intent's speed). Hosts are
not started: they are simulated endpoints.

It then runs the main job against them: check the intent, plan, apply (with
backups), and diff to show the fabric is in sync. --keep leaves the twins
running until Ctrl-C and prints commands to try; --fresh (with --keep) starts
the twins and stops there, so that you apply yourself.

The LAB DIRECTORY (--dir, default a new temporary one; 0700, files 0600) holds
lab.json (each switch's twin address, platform and profile), the lab CA
(ca.pem) and the credentials files (username, password). Every command that
talks to switches takes --lab DIR (or $FABRICCTL_LAB=DIR) and then reaches each
switch of your unchanged intent at its twin: plan, diff, apply, restore, watch,
validate. Without -f, lab also writes lab.yaml, the embedded lab intent pointed
at the twins.

TRAFFIC: --traffic SCENARIO (after apply) reads the configuration back from the
twins over gNMI, runs the packet simulator over what they hold (not over the
intent) on the intent's own switches, hosts and links, and drives the twins'
counters with the run in each platform's own counter paths (pause frames, ECN
marks, drops, PFC watchdog triggers per switch port and priority): once, or with
--keep continuously at the run's per-second rates, so that watch sees moving
counters. SCENARIO: incast:N:1, alltoall, slow-receiver:PCT, link-down:A-B, storm
(a receiver that never drains, run past the watchdog's detection) or a scenario
file. A kept lab also serves its CONTROL SOCKET, control.sock in the lab directory
(0600, the lab owner's only): ` + "`fabricctl lab traffic SCENARIO -f INTENT --lab DIR`" + ` plays
traffic into it from another process, as validate --engine sim does.

Exit codes: 0 every step passed, 1 error, 2 drift after apply, 3 check failed,
4 apply failed and the twins were rolled back, 64 usage.`,
		Example: `  fabricctl lab
  fabricctl lab --keep
  fabricctl lab -f fabric.yaml --keep --dir ./lab
  fabricctl lab -f fabric.yaml --keep --fresh --dir ./lab
  fabricctl lab -f fabric.yaml --traffic incast:4:1
  fabricctl lab -f fabric.yaml --keep --dir ./lab --traffic storm
  fabricctl apply -f fabric.yaml --lab ./lab
  fabricctl lab --profile srlinux-24.10 --profile sonic-202405
  fabricctl lab --empty`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.timeout <= 0 {
				return usagef("--timeout %s: want a positive duration", o.timeout)
			}
			if o.fresh && !o.keep {
				return usagef("--fresh starts the twins and stops there: it needs --keep")
			}
			if o.fresh && o.traffic.scenario != "" {
				return usagef("--traffic runs after apply, which --fresh leaves to you: play it later with `fabricctl lab traffic`")
			}
			if err := o.traffic.validate(); err != nil {
				return err
			}
			if o.empty && (o.strict || len(o.profiles) > 0) {
				return usagef("--empty runs bare twins: it does not go with --strict or --profile")
			}
			if !o.empty && (o.strict || len(o.profiles) > 0 || labStrictDefault) {
				o.strict = true
			}
			for _, n := range o.profiles {
				if _, err := profile.Lookup(n); err != nil {
					return usagef("--profile: %v", err)
				}
			}
			return o.run(cmd.Context(), d, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringArrayVarP(&o.files, "file", "f", nil, "your intent file (repeatable): one twin per switch of its inventory (default: the embedded lab intent)")
	cmd.Flags().BoolVar(&o.keep, "keep", false, "keep the twins running (until Ctrl-C) and print how to use them")
	cmd.Flags().BoolVar(&o.fresh, "fresh", false, "with --keep: start the twins and stop there (no check, plan, apply, diff)")
	cmd.Flags().StringVar(&o.dir, "dir", "", "the lab directory: lab.json, CA, credentials, backups (and lab.yaml without -f) (default: a new temporary directory)")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 5*time.Second, "timeout of each gNMI call")
	cmd.Flags().BoolVar(&o.empty, "empty", false, "bare twins: no release profile, empty datastores, each payload checked against the schema only")
	cmd.Flags().BoolVar(&o.strict, "strict", false, "profiled twins (the default unless --empty): each switch's release profile, its factory-default datastore and full validation of every Set (leafref, must, when, mandatory, features)")
	cmd.Flags().StringSliceVar(&o.profiles, "profile", nil, "release profile to run for its platform (repeatable, e.g. --profile srlinux-24.10 --profile sonic-202405); implies --strict")
	o.traffic.bind(cmd, "traffic")
	cmd.AddCommand(newLabTrafficCmd(d))
	return cmd
}

// labTwins is a running lab: twins plus the intent that points at them.
type labTwins struct {
	dir string
	// file is the lab intent written for the embedded lab (lab.yaml); ""
	// for a lab of the user's intent (lab -f), which is used unchanged
	// through the lab directory (--lab).
	file   string
	fabric *intent.Fabric
	twins  []*twin.Twin
	// yang is where the twins' YANG came from ("embedded" or a directory).
	yang string
	// profiles are the release profiles of profiled twins, per twin.
	profiles []string
	// seeded says, per switch, what its twin was given of the operator's
	// configuration fabricctl builds on and does not write (seedUnderlay).
	seeded []string
}

func (l *labTwins) close() {
	for _, t := range l.twins {
		t.Close()
	}
}

// startLab starts one twin per switch of the embedded lab intent and writes
// dir/lab.yaml pointing at them (TLS with a fresh CA, password in a file).
func startLab(dir string, reg *switchdrv.Registry) (*labTwins, error) {
	return startLabWith(dir, reg, nil)
}

// labProfiles chooses the profiled twins of a strict lab: platform ->
// profile (a platform not in the map runs the switch's profile).
type labProfiles map[intent.Platform]*profile.Profile

// startLabWith is startLab with profiled twins when strict is not nil.
func startLabWith(dir string, reg *switchdrv.Registry, strict labProfiles) (*labTwins, error) {
	src, err := examples.FS.ReadFile(examples.Lab)
	if err != nil {
		return nil, fmt.Errorf("lab: embedded intent: %w", err)
	}
	base, err := intent.Parse(examples.Lab, src)
	if err != nil {
		return nil, fmt.Errorf("lab: embedded intent: %w", err)
	}
	l, err := startTwins(dir, reg, base, strict)
	if err != nil {
		return nil, err
	}
	l.file = filepath.Join(dir, "lab.yaml")
	text := string(src)
	for i, sw := range base.Switches {
		tw := l.twins[i]
		// Point the switch at its twin: same indentation as its address line.
		re := regexp.MustCompile(`(?m)^([ \t]*)address:[ \t]*"?` + regexp.QuoteMeta(sw.Address) + `"?[ \t]*$`)
		if len(re.FindAllStringIndex(text, -1)) != 1 {
			l.close()
			return nil, fmt.Errorf("lab: cannot find the address line of switch %s in the embedded intent", sw.Name)
		}
		repl := fmt.Sprintf("${1}address: %q\n${1}tls: {ca: ca.pem}\n${1}credentials: {usernameFile: username, passwordFile: password}", tw.Addr())
		if p := tw.Profile(); p != nil {
			// plan --device and render --device use the twin's profile too.
			repl += "\n${1}profile: " + p.Name
		}
		text = re.ReplaceAllString(text, repl)
	}
	text = "# Written by `fabricctl lab`: the switches below are DEVICE TWINS on loopback.\n" + text
	if err := os.WriteFile(l.file, []byte(text), 0o600); err != nil {
		l.close()
		return nil, fmt.Errorf("lab: %w", err)
	}
	if l.fabric, err = intent.Load(l.file); err != nil {
		l.close()
		return nil, fmt.Errorf("lab: generated intent %s: %w", l.file, err)
	}
	return l, nil
}

// startLabFor starts one twin per switch of the user's intent f and points
// f at them through the lab directory dir (useLab), as `--lab dir` does for
// every later command.
func startLabFor(dir string, reg *switchdrv.Registry, f *intent.Fabric, strict labProfiles) (*labTwins, error) {
	l, err := startTwins(dir, reg, f, strict)
	if err != nil {
		return nil, err
	}
	if _, err := useLab(f, dir); err != nil {
		l.close()
		return nil, err
	}
	l.fabric = f
	return l, nil
}

// startTwins starts one twin per switch of f on loopback (TLS with a fresh
// CA, a generated password; profiled twins from the factory datastore plus
// the operator's base configuration when strict is not nil) and writes the
// lab directory dir: ca.pem, username, password and lab.json (labdir.go).
func startTwins(dir string, reg *switchdrv.Registry, f *intent.Fabric, strict labProfiles) (*labTwins, error) {
	pki, err := twin.NewPKI("fabricctl-lab")
	if err != nil {
		return nil, err
	}
	pass := make([]byte, 12)
	if _, err := rand.Read(pass); err != nil {
		return nil, err
	}
	password := hex.EncodeToString(pass)
	for name, b := range map[string][]byte{"ca.pem": pki.CAPEM, "username": []byte("admin\n"), "password": []byte(password + "\n")} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return nil, fmt.Errorf("lab: %w", err)
		}
	}
	serverTLS, err := pki.ServerTLS(false)
	if err != nil {
		return nil, err
	}
	l := &labTwins{dir: dir}
	// The twins reject what the vendors' YANG rejects: the embedded modules,
	// or $FABRICCTL_YANG_DIR.
	tree, err := yangcheck.Open("")
	if err != nil {
		return nil, fmt.Errorf("lab: %w", err)
	}
	l.yang = tree.String()
	// One schema per release, shared by its twins (read-only once loaded).
	schemas := map[string]*yangcheck.Schema{}
	ld := &labDir{Version: labFormat, Fabric: f.Name, CA: "ca.pem", UsernameFile: "username", PasswordFile: "password",
		PID: os.Getpid(), Switches: map[string]labSwitch{}}
	for i := range f.Switches {
		sw := &f.Switches[i]
		p, err := reg.Lookup(sw.Platform)
		if err != nil {
			l.close()
			return nil, fmt.Errorf("lab: switch %s: %w", sw.Name, err)
		}
		// The twin speaks the YANG of the switch's release profile (the
		// --strict one, else switches[].profile): never another release's.
		prof := strict[sw.Platform]
		if prof == nil {
			if prof, err = profile.LookupFor(string(sw.Platform), sw.Profile); err != nil {
				l.close()
				return nil, fmt.Errorf("lab: switch %s: %w", sw.Name, err)
			}
		}
		schema := schemas[prof.YANG.Release]
		if schema == nil {
			if schema, err = tree.LoadRelease(prof.YANG.Release); err != nil {
				l.close()
				return nil, fmt.Errorf("lab: switch %s (profile %s): %w", sw.Name, prof.Name, err)
			}
			schemas[prof.YANG.Release] = schema
		}
		opts := twin.Options{Name: sw.Name, Platform: sw.Platform, TLS: serverTLS,
			Username: "admin", Password: password, CellBytes: p.Quirks().BufferCellBytes}
		if strict != nil {
			opts.Profile, opts.Factory, opts.Validator, opts.Schema = prof, true, twin.YANGValidator(schema, prof), schema
			l.profiles = append(l.profiles, prof.Name)
		} else {
			opts.Validate = schema.CheckUpdate
		}
		tw, err := twin.Start(opts)
		if err != nil {
			l.close()
			return nil, err
		}
		l.twins = append(l.twins, tw)
		seeded, err := seedUnderlay(tw, f, sw, true)
		if err != nil {
			l.close()
			return nil, fmt.Errorf("lab: %w", err)
		}
		if seeded != "" {
			l.seeded = append(l.seeded, sw.Name+": "+seeded)
		}
		if err := seedCounters(tw, f, sw); err != nil {
			l.close()
			return nil, fmt.Errorf("lab: %w", err)
		}
		ls := labSwitch{Address: tw.Addr(), Platform: string(sw.Platform)}
		if tp := tw.Profile(); tp != nil {
			ls.Profile = tp.Name
		}
		ld.Switches[sw.Name] = ls
	}
	if err := writeLabDir(dir, ld); err != nil {
		l.close()
		return nil, err
	}
	return l, nil
}

func (o *labOptions) run(ctx context.Context, d *deps, out io.Writer) (err error) {
	reg, err := newRegistry()
	if err != nil {
		return withCode(ExitError, err)
	}
	dir := o.dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "fabricctl-lab-"); err != nil {
			return withCode(ExitError, err)
		}
		// A folder of our own goes when the lab ends, --keep too (on
		// Ctrl-C): the twins it describes are gone by then.
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return withCode(ExitError, err)
	}
	var strict labProfiles
	if o.strict {
		strict = labProfiles{}
		for _, n := range o.profiles {
			prof, _ := profile.Lookup(n)
			if strict[intent.Platform(prof.Platform)] != nil {
				return withCode(ExitUsage, fmt.Errorf("--profile: two profiles for platform %s", prof.Platform))
			}
			strict[intent.Platform(prof.Platform)] = prof
		}
	}
	var l *labTwins
	if len(o.files) > 0 {
		f, err := intent.LoadFrom(d.stdin, o.files...)
		if err != nil {
			return withCode(ExitError, fmt.Errorf("load intent (run fabricctl check for details): %w", err))
		}
		l, err = startLabFor(dir, reg, f, strict)
		if err != nil {
			return withCode(ExitError, err)
		}
	} else if l, err = startLabWith(dir, reg, strict); err != nil {
		return withCode(ExitError, err)
	}
	defer l.close()
	// The twins' counters: played by --traffic and, in a kept lab, through
	// the control socket; the rates stop before the twins close.
	ctl := labctl.NewLab(l.twins)
	defer ctl.Stop()
	// Every step reads the facts the flags change (--cell-factor) alike.
	l.fabric = d.derive(l.fabric)

	fmt.Fprintf(out, "fabricctl lab: %d DEVICE TWINS started (in-process gNMI simulators on loopback, NOT switches)\n", len(l.twins))
	if len(l.twins) <= labListMax {
		for _, t := range l.twins {
			prof := "bare twin (no profile)"
			if p := t.Profile(); p != nil {
				prof = "profile " + p.Name + " (" + p.Model + ")"
			}
			fmt.Fprintf(out, "  twin %-8s %-10s gnmi %s (TLS, lab CA), %s\n", t.Name(), t.Platform(), t.Addr(), prof)
		}
	} else {
		count := map[string]int{}
		var kinds []string
		for _, t := range l.twins {
			k := string(t.Platform()) + " bare twin (no profile)"
			if p := t.Profile(); p != nil {
				k = string(t.Platform()) + " profile " + p.Name + " (" + p.Model + ")"
			}
			if count[k] == 0 {
				kinds = append(kinds, k)
			}
			count[k]++
		}
		for _, k := range kinds {
			fmt.Fprintf(out, "  %4d twins %s\n", count[k], k)
		}
		fmt.Fprintf(out, "  each on 127.0.0.1 with TLS (lab CA); addresses in %s\n", filepath.Join(dir, labFile))
	}
	if l.file != "" {
		fmt.Fprintf(out, "  intent %s\n", l.file)
	} else {
		fmt.Fprintf(out, "  intent %s, unchanged, reaches the twins through the lab directory %s (--lab)\n", strings.Join(o.files, ", "), dir)
	}
	for _, s := range l.seeded {
		fmt.Fprintf(out, "  the operator's configuration fabricctl builds on and does not write, on twin %s\n", s)
	}
	if o.strict {
		fmt.Fprintf(out, "  profiled twins: each starts from its profile's factory-default datastore and validates the whole result of every Set\n"+
			"  (YANG %s: types, leafref, must, when, mandatory, the profile's features), refusing it with the device's reason\n", l.yang)
	} else {
		fmt.Fprintf(out, "  bare twins (--empty; without it lab runs profiled ones): empty datastores, each payload checked against the YANG (%s) alone\n", l.yang)
	}

	if o.fresh {
		return o.hold(ctx, out, l, ctl, dir, filepath.Join(dir, "backups"))
	}
	fmt.Fprintf(out, "\n== 1/4 check %s\n", l.intentName(o.files))
	findings := check.Run(l.fabric, check.Options{})
	if err := check.WriteText(out, findings, d.color); err != nil {
		return withCode(ExitError, err)
	}
	if errs, _, _ := check.Count(findings); errs > 0 {
		return withCode(ExitCheckFailed, errors.New("lab: the lab intent does not pass check"))
	}

	eng := &switchdrv.Engine{Registry: reg, Log: d.log, BackupDir: filepath.Join(dir, "backups"),
		Transport: transport.Options{Timeout: o.timeout, Log: d.log}, Defaults: yangDefaults}
	defer eng.Close()
	fmt.Fprintf(out, "\n== 2/4 plan (reads the twins over gNMI)\n")
	p, err := eng.Plan(ctx, l.fabric, nil)
	if err != nil {
		return withCode(ExitError, err)
	}
	if err := plan.WriteText(out, p); err != nil {
		return withCode(ExitError, err)
	}
	if err := switchdrv.Errors(p); err != nil {
		return withCode(ExitError, err)
	}

	fmt.Fprintf(out, "\n== 3/4 apply (one SetRequest per twin, backups in %s)\n", eng.BackupDir)
	res, err := eng.Apply(ctx, l.fabric, p)
	if res != nil {
		if werr := writeResult(out, res, nil, guardResult{}, "text"); werr != nil {
			return withCode(ExitError, werr)
		}
	}
	if err != nil {
		if errors.Is(err, switchdrv.ErrRolledBack) {
			return withCode(ExitRolledBack, err)
		}
		return withCode(ExitError, err)
	}

	fmt.Fprintf(out, "\n== 4/4 diff (reads the twins again)\n")
	p2, err := eng.Plan(ctx, l.fabric, nil)
	if err != nil {
		return withCode(ExitError, err)
	}
	if err := writeDiff(out, p2); err != nil {
		return withCode(ExitError, err)
	}
	if err := switchdrv.ReadErrors(p2); err != nil {
		return withCode(ExitError, err)
	}
	if p2.HasDrift() {
		return withCode(ExitChanges, errors.New("lab: drift right after apply"))
	}
	if o.traffic.scenario != "" {
		fmt.Fprintf(out, "\n== traffic %s (simulated packets through what apply left on the twins, read back over gNMI)\n", o.traffic.scenario)
		_, plays, dur, err := runLabTraffic(ctx, out, l.fabric, eng, &o.traffic)
		if err != nil {
			return err
		}
		if err := playTraffic(ctx, out, inProcess{ctl}, plays, dur, o.keep); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "\nAll four steps passed against DEVICE TWINS, not switches.\n")
	if !o.keep {
		fs := ""
		for _, f := range o.files {
			fs += " -f " + f
		}
		fmt.Fprintf(out, "Run `fabricctl lab%s --keep` to keep the twins and try the commands yourself.\n", fs)
		return nil
	}
	return o.hold(ctx, out, l, ctl, dir, eng.BackupDir)
}

// labListMax is the most twins lab lists one by one.
const labListMax = 16

// intentName names the lab's intent in its output.
func (l *labTwins) intentName(files []string) string {
	if l.file != "" {
		return l.file
	}
	return strings.Join(files, ", ")
}

// hold keeps the twins running until ctx ends (Ctrl-C), after saying how
// to use them.
func (o *labOptions) hold(ctx context.Context, out io.Writer, l *labTwins, ctl *labctl.Lab, dir, backups string) error {
	// The control socket serves `lab traffic` and validate --engine sim;
	// a lab that cannot serve it (a directory path too long for a Unix
	// socket address, another lab on the same directory) still serves
	// its twins, and says so.
	sock := filepath.Join(dir, labctl.SocketName)
	if srv, err := labctl.Serve(dir, ctl); err != nil {
		fmt.Fprintf(out, "  no control socket (lab traffic cannot reach this lab): %v\n", err)
	} else {
		defer srv.Close()
	}
	if l.file != "" {
		fmt.Fprintf(out, `
The twins keep running until Ctrl-C. Try:
  fabricctl plan  -f %[1]s
  fabricctl diff  -f %[1]s
  fabricctl apply -f %[1]s --backup-dir %[2]s
The intent uses the lab CA (ca.pem) and the generated password file next to it;
the lab directory %[3]s also serves --lab (e.g. fabricctl plan -f examples/lab.yaml --lab %[3]s).
`, l.file, backups, dir)
	} else {
		fs := ""
		for _, f := range o.files {
			fs += " -f " + f
		}
		fmt.Fprintf(out, `
The twins keep running until Ctrl-C. Your intent, unchanged, reaches them with --lab:
  export %[3]s=%[2]s     # or add --lab %[2]s to each command
  fabricctl plan %[1]s
  fabricctl apply%[1]s --backup-dir %[4]s
  fabricctl diff %[1]s
  fabricctl watch%[1]s --listen 127.0.0.1:9464
  fabricctl lab traffic incast:4:1%[1]s      # traffic into the twins' counters (control socket %[5]s)
`, fs, dir, labEnv, backups, sock)
	}
	<-ctx.Done()
	if o.dir == "" {
		fmt.Fprintf(out, "stopping the twins; removing %s\n", dir)
	} else {
		fmt.Fprintf(out, "stopping the twins; the lab files stay in %s\n", dir)
	}
	return nil
}

// seedCounters gives every port of sw and every priority of the intent's
// classes its counters at zero, in the twin's platform model: a switch
// reports its queue, PFC and watchdog counters from boot, zeros included,
// so watch exports a series for each before any traffic (issue 28: "no
// pause, ECN or drop series, not even zeros") and validate's first read
// has a value for every counter a round can move (a counter present on
// one side of a delta only has no delta).
func seedCounters(tw *twin.Twin, f *intent.Fabric, sw *intent.Switch) error {
	for _, p := range sw.Ports {
		for _, c := range f.Policy.Classes {
			if err := tw.Play(p.Name, c.Priority, twin.Traffic{}); err != nil {
				return fmt.Errorf("switch %s: zero counters of %s priority %d: %w", sw.Name, p.Name, c.Priority, err)
			}
		}
	}
	return nil
}
