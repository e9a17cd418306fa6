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
	"time"

	"github.com/spf13/cobra"

	"github.com/fabricctl/fabricctl/examples"
	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/check"
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
		Use:   "lab",
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

It then runs the main job against them: check the intent, plan, apply (with
backups), and diff to show the fabric is in sync. --keep leaves the twins
running, writes the intent that points at them and prints commands to try,
until Ctrl-C.

Exit codes: 0 every step passed, 1 error, 2 drift after apply, 3 check failed,
4 apply failed and the twins were rolled back, 64 usage.`,
		Example: `  fabricctl lab
  fabricctl lab --keep
  fabricctl lab --profile srlinux-24.10 --profile sonic-202405
  fabricctl lab --empty`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.timeout <= 0 {
				return usagef("--timeout %s: want a positive duration", o.timeout)
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
	cmd.Flags().BoolVar(&o.keep, "keep", false, "keep the twins running (until Ctrl-C) and print how to use them")
	cmd.Flags().StringVar(&o.dir, "dir", "", "directory for the lab intent, CA, password and backups (default: a new temporary directory)")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 5*time.Second, "timeout of each gNMI call")
	cmd.Flags().BoolVar(&o.empty, "empty", false, "bare twins: no release profile, empty datastores, each payload checked against the schema only")
	cmd.Flags().BoolVar(&o.strict, "strict", false, "profiled twins (the default unless --empty): each switch's release profile, its factory-default datastore and full validation of every Set (leafref, must, when, mandatory, features)")
	cmd.Flags().StringSliceVar(&o.profiles, "profile", nil, "release profile to run for its platform (repeatable, e.g. --profile srlinux-24.10 --profile sonic-202405); implies --strict")
	return cmd
}

// labTwins is a running lab: twins plus the intent that points at them.
type labTwins struct {
	dir    string
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
	l := &labTwins{dir: dir, file: filepath.Join(dir, "lab.yaml")}
	// The twins reject what the vendors' YANG rejects: the embedded modules,
	// or $FABRICCTL_YANG_DIR.
	tree, err := yangcheck.Open("")
	if err != nil {
		return nil, fmt.Errorf("lab: %w", err)
	}
	l.yang = tree.String()
	text := string(src)
	for _, sw := range base.Switches {
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
		schema, err := tree.LoadRelease(prof.YANG.Release)
		if err != nil {
			l.close()
			return nil, fmt.Errorf("lab: switch %s (profile %s): %w", sw.Name, prof.Name, err)
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
		seeded, err := seedUnderlay(tw, base, &sw, true)
		if err != nil {
			l.close()
			return nil, fmt.Errorf("lab: %w", err)
		}
		if seeded != "" {
			l.seeded = append(l.seeded, sw.Name+": "+seeded)
		}
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
	l, err := startLabWith(dir, reg, strict)
	if err != nil {
		return withCode(ExitError, err)
	}
	defer l.close()
	// Every step reads the facts the flags change (--cell-factor) alike.
	l.fabric = d.derive(l.fabric)

	fmt.Fprintf(out, "fabricctl lab: %d DEVICE TWINS started (in-process gNMI simulators on loopback, NOT switches)\n", len(l.twins))
	for _, t := range l.twins {
		prof := "bare twin (no profile)"
		if p := t.Profile(); p != nil {
			prof = "profile " + p.Name + " (" + p.Model + ")"
		}
		fmt.Fprintf(out, "  twin %-8s %-10s gnmi %s (TLS, lab CA), %s\n", t.Name(), t.Platform(), t.Addr(), prof)
	}
	fmt.Fprintf(out, "  intent %s\n", l.file)
	for _, s := range l.seeded {
		fmt.Fprintf(out, "  the operator's configuration fabricctl builds on and does not write, on twin %s\n", s)
	}
	if o.strict {
		fmt.Fprintf(out, "  profiled twins: each starts from its profile's factory-default datastore and validates the whole result of every Set\n"+
			"  (YANG %s: types, leafref, must, when, mandatory, the profile's features), refusing it with the device's reason\n", l.yang)
	} else {
		fmt.Fprintf(out, "  bare twins (--empty; without it lab runs profiled ones): empty datastores, each payload checked against the YANG (%s) alone\n", l.yang)
	}

	fmt.Fprintf(out, "\n== 1/4 check %s\n", l.file)
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
	fmt.Fprintf(out, "\nAll four steps passed against DEVICE TWINS, not switches.\n")
	if !o.keep {
		fmt.Fprintf(out, "Run `fabricctl lab --keep` to keep the twins and try the commands yourself.\n")
		return nil
	}
	fmt.Fprintf(out, `
The twins keep running until Ctrl-C. Try:
  fabricctl plan  -f %[1]s
  fabricctl diff  -f %[1]s
  fabricctl apply -f %[1]s --backup-dir %[2]s
The intent uses the lab CA (ca.pem) and the generated password file next to it.
`, l.file, eng.BackupDir)
	<-ctx.Done()
	if o.dir == "" {
		fmt.Fprintf(out, "stopping the twins; removing %s\n", dir)
	} else {
		fmt.Fprintf(out, "stopping the twins; the lab files stay in %s\n", dir)
	}
	return nil
}
