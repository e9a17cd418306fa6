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

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/spf13/cobra"

	"github.com/fabricctl/fabricctl/examples"
	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/check"
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
}

func newLabCmd(d *deps) *cobra.Command {
	o := &labOptions{}
	cmd := &cobra.Command{
		Use:   "lab",
		Short: "Try fabricctl on DEVICE TWINS: check -> plan -> apply -> diff, no switches needed",
		Long: `Lab starts one DEVICE TWIN per switch of the embedded lab intent (SR Linux,
SONiC and EOS): in-process gNMI targets on 127.0.0.1 that announce the platform's
models, keep a datastore and answer Capabilities/Get/Set/Subscribe over real
gRPC with TLS (a throw-away CA) and a generated password. They are simulators,
not switches: they forward no packets, and they check a Set against the vendors'
YANG only when the YANG is at hand ($FABRICCTL_YANG_DIR or ../shared/yang).

It then runs the main job against them: check the intent, plan, apply (with
backups), and diff to show the fabric is in sync. --keep leaves the twins
running, writes the intent that points at them and prints commands to try,
until Ctrl-C.

Exit codes: 0 every step passed, 1 error, 2 drift after apply, 3 check failed,
4 apply failed and the twins were rolled back, 64 usage.`,
		Example: `  fabricctl lab
  fabricctl lab --keep`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.timeout <= 0 {
				return usagef("--timeout %s: want a positive duration", o.timeout)
			}
			return o.run(cmd.Context(), d, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&o.keep, "keep", false, "keep the twins running (until Ctrl-C) and print how to use them")
	cmd.Flags().StringVar(&o.dir, "dir", "", "directory for the lab intent, CA, password and backups (default: a new temporary directory)")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 5*time.Second, "timeout of each gNMI call")
	return cmd
}

// labTwins is a running lab: twins plus the intent that points at them.
type labTwins struct {
	dir    string
	file   string
	fabric *intent.Fabric
	twins  []*twin.Twin
	// yang is where the twins' YANG validation came from ("" = none).
	yang string
}

func (l *labTwins) close() {
	for _, t := range l.twins {
		t.Close()
	}
}

// startLab starts one twin per switch of the embedded lab intent and writes
// dir/lab.yaml pointing at them (TLS with a fresh CA, password in a file).
func startLab(dir string, reg *switchdrv.Registry) (*labTwins, error) {
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
	// With the vendors' YANG at hand (a checkout next to ../shared/yang, or
	// $FABRICCTL_YANG_DIR), the twins reject what the schema rejects.
	yangDir, yerr := yangcheck.Dir()
	if yerr == nil {
		l.yang = yangDir
	}
	text := string(src)
	for _, sw := range base.Switches {
		p, err := reg.Lookup(sw.Platform)
		if err != nil {
			l.close()
			return nil, fmt.Errorf("lab: switch %s: %w", sw.Name, err)
		}
		var validate func(*gnmipb.Path, *gnmipb.Update) error
		if l.yang != "" {
			schema, err := yangcheck.LoadPlatform(l.yang, sw.Platform)
			if err != nil {
				l.close()
				return nil, fmt.Errorf("lab: %w", err)
			}
			validate = schema.CheckUpdate
		}
		tw, err := twin.Start(twin.Options{Name: sw.Name, Platform: sw.Platform, TLS: serverTLS, Validate: validate,
			Username: "admin", Password: password, CellBytes: p.Quirks().BufferCellBytes})
		if err != nil {
			l.close()
			return nil, err
		}
		l.twins = append(l.twins, tw)
		// Point the switch at its twin: same indentation as its address line.
		re := regexp.MustCompile(`(?m)^([ \t]*)address:[ \t]*"?` + regexp.QuoteMeta(sw.Address) + `"?[ \t]*$`)
		if len(re.FindAllStringIndex(text, -1)) != 1 {
			l.close()
			return nil, fmt.Errorf("lab: cannot find the address line of switch %s in the embedded intent", sw.Name)
		}
		text = re.ReplaceAllString(text, fmt.Sprintf("${1}address: %q\n${1}tls: {ca: ca.pem}\n${1}credentials: {usernameFile: username, passwordFile: password}", tw.Addr()))
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
	l, err := startLab(dir, reg)
	if err != nil {
		return withCode(ExitError, err)
	}
	defer l.close()

	fmt.Fprintf(out, "fabricctl lab: %d DEVICE TWINS started (in-process gNMI simulators on loopback, NOT switches)\n", len(l.twins))
	for _, t := range l.twins {
		fmt.Fprintf(out, "  twin %-8s %-10s gnmi %s (TLS, lab CA)\n", t.Name(), t.Platform(), t.Addr())
	}
	fmt.Fprintf(out, "  intent %s\n", l.file)
	if l.yang != "" {
		fmt.Fprintf(out, "  the twins reject any Set the YANG in %s does not allow\n", l.yang)
	} else {
		fmt.Fprintf(out, "  no YANG found (set $%s): the twins accept any well-formed payload\n", yangcheck.EnvDir)
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
		Transport: transport.Options{Timeout: o.timeout, Log: d.log}}
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
	if err := switchdrv.Errors(p2); err != nil {
		return withCode(ExitError, err)
	}
	if p2.HasChanges() {
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
