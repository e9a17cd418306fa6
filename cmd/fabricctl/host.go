package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabricctl/fabricctl/hostdrv"
	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/validate/watch"
)

type hostOptions struct {
	// d gives loadIntent (the derived-fact flags).
	d                *deps
	files            []string
	host             string
	root             string
	netns            string
	output           string
	dryRun           bool
	watch            bool
	interval         time.Duration
	listen           string
	webConfig        string
	detailedExitcode bool
	partial          bool
	noRollback       bool
	backup           string
	assume           string
}

func newHostCmd(d *deps) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "host",
		Short: "Plan, apply and diff the RoCE QoS of this host's NICs (run on the host)",
		Long: `host configures the RoCE NICs of the machine it runs on natively (dcbnl over
rtnetlink, ethtool ioctl, sysfs/configfs/debugfs): DCBX mode, DSCP trust (APP
table), PFC (cable length in the delay field on mlx5), ETS, global pause off,
MTU, RDMA-CM default ToS and RoCE mode, and mlx5 ECN/CNP controls where the
driver exposes them. The host is found in the inventory by hostname or --host.
PFC is never rewritten when it is already right (mlx5 flaps the link).

Before writing, apply saves the host's observed state (mode 0600) and, when a
step fails, puts it back (unless --no-rollback); host restore --backup FILE
puts a saved state back. A plan with errors writes nothing unless --partial.
host plan|diff --assume fresh|fresh:DRIVER|FILE compare the intent with an
assumed state instead of the NICs (fresh: the driver's defaults after
loading, with RDMA-CM and, on mlx5, cc_params; FILE: a backup of a real
host), so every step a host will receive can be reviewed without it.

Exit codes: plan 0 (2 with --detailed-exitcode when there are changes); diff 0
in sync, 2 drift; apply / restore 0 applied and read back; 1 error, nothing
written; 4 a step failed and the host was rolled back to the backup; 5 partly
written (--partial or --no-rollback, or a rollback that did not complete);
64 usage.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newHostSubCmd(d, "plan"), newHostSubCmd(d, "diff"), newHostSubCmd(d, "apply"), newHostRestoreCmd(d))
	return cmd
}

func newHostSubCmd(d *deps, verb string) *cobra.Command {
	o := &hostOptions{d: d}
	short := map[string]string{
		"plan":  "Show what host apply would change on this host",
		"diff":  "Report drift of this host from the intent (exit 2 on drift)",
		"apply": "Apply the intent to this host's NICs and read back",
	}[verb]
	cmd := &cobra.Command{
		Use:   verb + " -f INTENT [--host NAME]",
		Short: short,
		Example: `  fabricctl host plan -f fabric.yaml
  fabricctl host apply -f fabric.yaml --host gpu1 --dry-run -o commands
  fabricctl host apply -f fabric.yaml --watch --interval 60s
  fabricctl host diff -f fabric.yaml -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(verb); err != nil {
				return err
			}
			return o.run(cmd.Context(), d, verb, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&o.files, "file", "f", nil, "intent file (repeatable; - reads stdin)")
	fl.StringVar(&o.host, "host", "", "inventory name of this host (default: match the hostname)")
	fl.StringVar(&o.root, "root", "/", "root of sysfs/configfs/debugfs (a container mounts the host's /sys elsewhere)")
	fl.StringVar(&o.netns, "netns", "", "run in this named network namespace (/run/netns/NAME)")
	fl.StringVarP(&o.output, "output", "o", "text", "output: text, json, markdown, commands (dcb/ethtool/ip/echo lines) or netlink (raw requests in hex)")
	if verb == "plan" || verb == "diff" {
		fl.StringVar(&o.assume, "assume", "", "compare the intent with an assumed host state instead of the NICs: fresh (mlx5_core driver defaults), fresh:"+strings.Join(hostdrv.FreshDrivers(), "|fresh:")+", or a host backup file")
	}
	switch verb {
	case "plan":
		fl.BoolVar(&o.detailedExitcode, "detailed-exitcode", false, "exit 2 when the plan has changes")
	case "apply":
		fl.BoolVar(&o.dryRun, "dry-run", false, "print what would be done (see -o commands / -o netlink) and change nothing")
		fl.BoolVar(&o.watch, "watch", false, "reconcile periodically until stopped (a DaemonSet's mode)")
		fl.DurationVar(&o.interval, "interval", 60*time.Second, "time between reconciles with --watch")
		fl.StringVar(&o.listen, "listen", "", "with --watch, serve Prometheus /metrics here (host:port, e.g. the node's IP:9465; :9465 is every interface): RDMA hw_counters, per-priority pause and discards, drift")
		fl.StringVar(&o.webConfig, "web-config", "", "with --listen, an exporter-toolkit web-config file: TLS, basic auth (and bearer_token_hashes) for /metrics")
		fl.BoolVar(&o.partial, "partial", false, "write the settings that could be planned even when the plan has errors")
		fl.BoolVar(&o.noRollback, "no-rollback", false, "when a step fails, keep going and leave the host as it is (default: stop and restore the backup)")
		fl.StringVar(&o.backup, "backup", "", "save the observed host state here (mode 0600) before writing (default: "+defaultBackupDir+"/HOST-TIME.json; none with --watch)")
	}
	return cmd
}

func (o *hostOptions) validate(verb string) error {
	if err := checkOutput(o.output, "text", "json", "markdown", "commands", "netlink"); err != nil {
		return err
	}
	if len(o.files) == 0 {
		return usagef("no intent file given: use -f FILE")
	}
	if verb == "apply" && !o.dryRun && (o.output == "commands" || o.output == "netlink") {
		return usagef("-o %s shows what would be done: use it with --dry-run (or host plan)", o.output)
	}
	if o.watch && (o.dryRun || o.interval < time.Second) {
		return usagef("--watch needs --interval >= 1s and no --dry-run")
	}
	if o.listen != "" && !o.watch {
		return usagef("--listen serves metrics while --watch runs: add --watch")
	}
	if o.webConfig != "" && o.listen == "" {
		return usagef("--web-config configures the --listen server: add --listen")
	}
	if o.assume != "" && (o.root != "/" || o.netns != "") {
		return usagef("--assume plans without the host: it takes no --root or --netns")
	}
	if drv, ok := hostdrv.FreshDriver(o.assume); ok && !slices.Contains(hostdrv.FreshDrivers(), drv) {
		return usagef("--assume %s: %v", o.assume, hostdrv.ErrUnknownFresh)
	}
	return nil
}

// defaultBackupDir is where host apply saves backups when --backup is not
// given.
const defaultBackupDir = "/var/lib/fabricctl/host-backups"

func (o *hostOptions) backupFile(host string) string {
	if o.backup != "" {
		return o.backup
	}
	if o.watch {
		return ""
	}
	return fmt.Sprintf("%s/%s-%s.json", defaultBackupDir, host, time.Now().UTC().Format("20060102T150405Z"))
}

func (o *hostOptions) load(stdin io.Reader) (*intent.Fabric, error) {
	return o.d.loadIntent(stdin, o.files...)
}

func (o *hostOptions) run(ctx context.Context, d *deps, verb string, stdin io.Reader, out io.Writer) error {
	f, err := o.load(stdin)
	if err != nil {
		return withCode(ExitError, err)
	}
	h, err := hostdrv.FindHost(f, o.host)
	if err != nil {
		return withCode(ExitError, err)
	}
	var drv *hostdrv.Driver
	if o.assume != "" {
		if drv, _, err = hostdrv.Assume(o.assume, f, h); err != nil {
			return withCode(ExitError, err)
		}
		drv.Log = d.log
	} else {
		var closeDrv func()
		if drv, closeDrv, err = hostdrv.Open(o.root, o.netns, d.log); err != nil {
			return withCode(ExitError, err)
		}
		defer closeDrv()
	}

	if o.watch {
		return o.watchLoop(ctx, d, drv, f, h, stdin, out)
	}
	p, perr := drv.Plan(ctx, f, h)
	if p == nil {
		return withCode(ExitError, perr)
	}
	if verb != "apply" || o.dryRun {
		if perr != nil && p.Target.Error == "" {
			// A setting that could not be read (a missing interface) is
			// the plan's error, not "no changes".
			p.Target.Error = perr.Error()
		}
		if err := o.write(out, f.Name, p); err != nil {
			return withCode(ExitError, err)
		}
		if perr != nil && !p.Target.HasChanges() && (o.output == "text" || o.output == "markdown") {
			return withCode(ExitError, nil) // the output above names the error
		}
		return hostExit(verb, o.detailedExitcode, p.Target.HasChanges(), perr)
	}
	res, aerr := drv.ApplyWith(ctx, p, hostdrv.ApplyOptions{Partial: o.partial, NoRollback: o.noRollback, BackupFile: o.backupFile(h.Name)})
	if errors.Is(aerr, plan.ErrStale) {
		return withCode(ExitError, aerr)
	}
	t := p.Target // what was applied
	t.Notes = append(append([]string(nil), t.Notes...), res.Notes()...)
	if aerr != nil {
		t.Error = aerr.Error()
	}
	if err := o.writeTarget(out, f.Name, t); err != nil {
		return withCode(ExitError, err)
	}
	if o.output == "text" {
		writeOutcomes(out, h.Name, res, aerr)
	}
	return applyExit(res, aerr)
}

// writeOutcomes prints one line per step (and per rollback step) and a
// summary.
func writeOutcomes(out io.Writer, host string, res *hostdrv.ApplyResult, err error) {
	var b bytes.Buffer
	if res.BackupFile != "" {
		fmt.Fprintf(&b, "Backup of host %s: %s\n", host, res.BackupFile)
	}
	for _, s := range res.Steps {
		fmt.Fprintf(&b, "  %s\n", s)
	}
	for _, s := range res.Rollback {
		fmt.Fprintf(&b, "  rollback %s\n", s)
	}
	switch {
	case err == nil:
		fmt.Fprintf(&b, "Applied %d steps on host %s; read back in sync.\n", res.Written(), host)
	case res.RolledBack:
		fmt.Fprintf(&b, "Host %s: a step failed after %d were written; rolled back to the backup and read back.\n", host, res.Written())
	case res.Written() == 0:
		fmt.Fprintf(&b, "Host %s: nothing written.\n", host)
	case res.Written() == len(res.Steps):
		fmt.Fprintf(&b, "Host %s: PARTLY WRITTEN: all %d planned steps applied, but settings with errors were not planned (see the error); host restore --backup goes back.\n", host, res.Written())
	default:
		fmt.Fprintf(&b, "Host %s: PARTLY WRITTEN (%d of %d steps applied); see above, and host restore --backup to go back.\n", host, res.Written(), len(res.Steps))
	}
	_, _ = out.Write(b.Bytes())
}

// applyExit maps an apply or restore outcome to the exit code: 0 applied
// and read back; 1 nothing written; 4 rolled back to the backup; 5 partly
// written.
func applyExit(res *hostdrv.ApplyResult, err error) error {
	switch {
	case err == nil:
		return nil
	case res != nil && res.RolledBack:
		return withCode(ExitRolledBack, err)
	case res == nil || res.Written() == 0 && len(res.Rollback) == 0:
		return withCode(ExitError, err)
	}
	return withCode(ExitPartial, err)
}

func newHostRestoreCmd(d *deps) *cobra.Command {
	o := &hostOptions{d: d}
	cmd := &cobra.Command{
		Use:   "restore --backup FILE",
		Short: "Put this host's NIC QoS back to a backup saved by host apply, and read back",
		Example: `  fabricctl host restore --backup /var/lib/fabricctl/host-backups/gpu1-20260101T120000Z.json
  fabricctl host restore --backup gpu1.json --dry-run -o commands`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(o.output, "text", "json", "markdown", "commands", "netlink"); err != nil {
				return err
			}
			if o.backup == "" {
				return usagef("no backup given: use --backup FILE")
			}
			if !o.dryRun && (o.output == "commands" || o.output == "netlink") {
				return usagef("-o %s shows what would be done: use it with --dry-run", o.output)
			}
			return o.restore(cmd.Context(), d, cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.backup, "backup", "", "the backup file (written by host apply)")
	fl.StringVar(&o.root, "root", "/", "root of sysfs/configfs/debugfs (a container mounts the host's /sys elsewhere)")
	fl.StringVar(&o.netns, "netns", "", "run in this named network namespace (/run/netns/NAME)")
	fl.StringVarP(&o.output, "output", "o", "text", "output: text, json, markdown, commands or netlink")
	fl.BoolVar(&o.dryRun, "dry-run", false, "print what would be done and change nothing")
	return cmd
}

func (o *hostOptions) restore(ctx context.Context, d *deps, out io.Writer) error {
	b, err := hostdrv.ReadBackup(o.backup)
	if err != nil {
		return withCode(ExitError, err)
	}
	drv, closeDrv, err := hostdrv.Open(o.root, o.netns, d.log)
	if err != nil {
		return withCode(ExitError, err)
	}
	defer closeDrv()
	p, perr := drv.PlanRestore(ctx, b)
	if p == nil {
		return withCode(ExitError, perr)
	}
	if o.dryRun {
		if err := o.write(out, "restore "+o.backup, p); err != nil {
			return withCode(ExitError, err)
		}
		return hostExit("plan", false, false, perr)
	}
	res, rerr := drv.ApplyWith(ctx, p, hostdrv.ApplyOptions{Partial: true, NoRollback: true})
	t := p.Target
	t.Notes = append(append([]string(nil), t.Notes...), res.Notes()...)
	if rerr != nil {
		t.Error = rerr.Error()
	}
	if err := o.writeTarget(out, "restore "+o.backup, t); err != nil {
		return withCode(ExitError, err)
	}
	if o.output == "text" {
		writeOutcomes(out, b.Host, res, rerr)
	}
	return applyExit(res, rerr)
}

// hostExit maps a plan or diff outcome to the exit code: 1 when a setting
// could not be read, else 2 for changes on diff (always) and plan
// (--detailed-exitcode), else 0.
func hostExit(verb string, detailed, changes bool, err error) error {
	switch {
	case err != nil:
		return withCode(ExitError, err)
	case changes && (verb == "diff" || (verb == "plan" && detailed)):
		return withCode(ExitChanges, nil)
	}
	return nil
}

func (o *hostOptions) write(out io.Writer, name string, p *hostdrv.Plan) error {
	switch o.output {
	case "commands":
		return hostdrv.WriteCommands(out, p)
	case "netlink":
		return hostdrv.WriteNetlink(out, p)
	}
	return o.writeTarget(out, name, p.Target)
}

// writeTarget renders one host's plan. In text and markdown the changes of a
// partly failed host are still shown and the error goes to stderr via the
// exit; a host with no changes shows the error instead of "no changes".
func (o *hostOptions) writeTarget(out io.Writer, fabric string, t plan.TargetPlan) error {
	if o.output != "json" && t.HasChanges() {
		t.Error = ""
	}
	return plan.Write(out, &plan.Plan{Version: plan.FormatVersion, Fabric: fabric, Created: time.Now().UTC(), Targets: []plan.TargetPlan{t}}, o.output)
}

// watchLoop reconciles every interval until ctx ends; failures are logged
// and retried next round (settings come back after a reboot or driver reload).
// The intent files are read again each round (a ConfigMap update reaches the
// mounted file without a restart); an unreadable or invalid new version is
// logged and the last good one is kept.
func (o *hostOptions) watchLoop(ctx context.Context, d *deps, drv *hostdrv.Driver, f *intent.Fabric, h *intent.Host, stdin io.Reader, out io.Writer) error {
	log := d.log.With("target", h.Name)
	reload := !slices.Contains(o.files, "-")
	var metrics *watch.HostCollector
	if o.listen != "" {
		var stop func()
		var err error
		if metrics, stop, err = o.serveHostMetrics(ctx, d, f, h); err != nil {
			return withCode(ExitError, err)
		}
		defer stop()
	}
	for round := 0; ; round++ {
		if reload && round > 0 {
			nf, err := o.load(stdin)
			if err == nil {
				var nh *intent.Host
				if nh, err = hostdrv.FindHost(nf, o.host); err == nil {
					f, h = nf, nh
				}
			}
			if err != nil {
				log.Error("intent reload failed; keeping the previous intent", "err", err)
			}
			if metrics != nil {
				metrics.SetIntent(h, &f.Policy)
			}
		}
		p, err := drv.Plan(ctx, f, h)
		if metrics != nil {
			metrics.SetDrift(remainingDrift(p, err))
		}
		switch {
		case p == nil:
			log.Error("host plan failed", "err", err)
		case !p.Target.HasChanges():
			if err != nil {
				log.Error("host plan incomplete", "err", err)
			} else {
				log.Info("host in sync")
			}
		default:
			res, aerr := drv.ApplyWith(ctx, p, hostdrv.ApplyOptions{Partial: o.partial, NoRollback: o.noRollback, BackupFile: o.backupFile(h.Name)})
			var b bytes.Buffer
			t := p.Target
			t.Notes = append(append([]string(nil), t.Notes...), res.Notes()...)
			if aerr != nil {
				t.Error = aerr.Error()
				log.Error("host apply failed", "err", aerr)
			} else if metrics != nil {
				metrics.SetDrift(0, nil) // repaired and read back
			}
			if werr := o.writeTarget(&b, f.Name, t); werr == nil {
				_, _ = out.Write(b.Bytes())
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(o.interval):
		}
	}
}
