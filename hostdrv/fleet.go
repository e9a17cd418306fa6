package hostdrv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/remote"
	"github.com/fabricctl/fabricctl/plan"
)

// Fleet runs the host side of plan/diff/apply on the inventory's remote hosts:
// `fabricctl host VERB -f - --host NAME -o json` on each, with the intent on
// stdin, at most Parallel at a time, and collects each host's plan.
type Fleet struct {
	// Runner returns the runner for a host; nil = remote.ForHost with
	// default SSH options (known_hosts verification on).
	Runner func(h intent.Host) (remote.Runner, error)
	// Binary is fabricctl's path on the hosts ("" = "fabricctl" on $PATH).
	Binary string
	// ExtraArgs are appended to every remote command (e.g. --root /host).
	ExtraArgs []string
	// Parallel bounds the hosts worked on at once (0 = 16).
	Parallel int
	// Timeout bounds each host (0 = 5 minutes).
	Timeout time.Duration
	Log     *slog.Logger
}

// RemoteHosts returns the hosts of f that are reached over SSH.
func RemoteHosts(f *intent.Fabric) []intent.Host {
	var out []intent.Host
	for _, h := range f.Hosts {
		if !h.IsLocal() {
			out = append(out, h)
		}
	}
	return out
}

// Run runs `fabricctl host <verb>` (plan, diff or apply) on hosts and returns
// one TargetPlan per host, sorted by name; a host that failed has Error set
// (and its plan, when the remote side got that far). The error joins the
// per-host failures.
func (fl *Fleet) Run(ctx context.Context, verb string, hosts []intent.Host, intentYAML []byte) ([]plan.TargetPlan, error) {
	switch verb {
	case "plan", "diff", "apply":
	default:
		return nil, fmt.Errorf("fleet: unknown host verb %q (want plan, diff or apply)", verb)
	}
	limit := fl.Parallel
	if limit <= 0 {
		limit = 16
	}
	out := make([]plan.TargetPlan, len(hosts))
	errs := remote.ForEach(ctx, len(hosts), limit, func(ctx context.Context, i int) error {
		t, err := fl.one(ctx, verb, hosts[i], intentYAML)
		out[i] = t
		return err
	})
	for i, err := range errs {
		if err != nil && out[i].Error == "" {
			out[i] = plan.TargetPlan{Name: hosts[i].Name, Kind: plan.KindHost, Changes: []plan.Change{}, Error: err.Error()}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, errors.Join(errs...)
}

func (fl *Fleet) log() *slog.Logger {
	if fl.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return fl.Log
}

func (fl *Fleet) one(ctx context.Context, verb string, h intent.Host, intentYAML []byte) (plan.TargetPlan, error) {
	fail := func(err error) (plan.TargetPlan, error) {
		// Runners name the host in their errors already (remote.NewSSH:
		// "host gpu1: no ssh credentials"); name it once.
		if !strings.HasPrefix(err.Error(), "host "+h.Name+":") {
			err = fmt.Errorf("host %s: %w", h.Name, err)
		}
		return plan.TargetPlan{Name: h.Name, Kind: plan.KindHost, Changes: []plan.Change{}, Error: err.Error()}, err
	}
	newRunner := fl.Runner
	if newRunner == nil {
		newRunner = func(h intent.Host) (remote.Runner, error) {
			return remote.ForHost(h, remote.SSHOptions{Logger: fl.Log})
		}
	}
	r, err := newRunner(h)
	if err != nil {
		return fail(err)
	}
	if c, ok := r.(io.Closer); ok {
		defer c.Close()
	}
	timeout := fl.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	bin := fl.Binary
	if bin == "" {
		bin = "fabricctl"
	}
	argv := append([]string{bin, "host", verb, "-f", "-", "--host", h.Name, "-o", "json"}, fl.ExtraArgs...)
	fl.log().Info("fleet host command", "target", h.Name, "verb", verb)
	res, rerr := r.Run(ctx, argv, bytes.NewReader(intentYAML))
	var ee *remote.ExitError
	if rerr != nil && !errors.As(rerr, &ee) {
		return fail(rerr) // never ran, or transport failure
	}
	p, perr := plan.Unmarshal(res.Stdout)
	if perr != nil {
		if rerr != nil {
			return fail(rerr)
		}
		return fail(fmt.Errorf("%s host %s: output is not a plan: %w", bin, verb, perr))
	}
	var t *plan.TargetPlan
	for i := range p.Targets {
		if p.Targets[i].Name == h.Name {
			t = &p.Targets[i]
		}
	}
	if t == nil {
		return fail(fmt.Errorf("%s host %s: the plan has no target %q", bin, verb, h.Name))
	}
	switch {
	case rerr == nil, ee.ExitCode == 2 && verb != "apply": // 2 = changes / drift
		return *t, nil
	case t.Error == "":
		t.Error = strings.TrimSpace(ee.Error())
	}
	// What the host's exit code says about its state (host apply's codes;
	// the per-step outcomes are in the target's notes).
	if verb == "apply" {
		switch ee.ExitCode {
		case 1:
			if !strings.Contains(t.Error, "nothing written") {
				t.Error = "apply failed: " + t.Error
			}
		case 4:
			t.Error = "rolled back to the backup: " + t.Error
		case 5:
			t.Error = "PARTLY WRITTEN: " + t.Error
		}
	}
	return *t, fmt.Errorf("%s", t.Error)
}
