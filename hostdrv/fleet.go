package hostdrv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
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
	// Command is fabricctl on the hosts, as argv words (nil = "fabricctl" on
	// $PATH): e.g. ["sudo", "-n", "/usr/local/bin/fabricctl"], so that a
	// login without root runs it through sudo.
	Command []string
	// Version, when set, is the release and revision the hosts' fabricctl
	// must report (`fabricctl version -o json`), checked once per host
	// before its first command: a host running another build is refused.
	Version *Stamp
	// ExtraArgs are appended to every remote command (e.g. --root /host).
	ExtraArgs []string
	// Parallel bounds the hosts worked on at once (0 = 16).
	Parallel int
	// Timeout bounds each host (0 = 5 minutes).
	Timeout time.Duration
	Log     *slog.Logger

	checked sync.Map // host name -> true once its version matched
}

// Stamp is a fabricctl build's release version and VCS revision, as
// `fabricctl version -o json` prints them.
type Stamp struct {
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
}

func (s Stamp) String() string {
	if s.Revision == "" {
		return s.Version + " (no revision)"
	}
	return s.Version + " (" + s.Revision + ")"
}

// ErrVersionSkew is returned when a host's fabricctl is another build.
var ErrVersionSkew = errors.New("fabricctl on the host is another build")

// CheckVersion runs `COMMAND version -o json` through r and compares the
// host's fabricctl with want: the release version and the revision must be
// equal (a host that writes NIC settings from the same intent must compute
// them as this build does).
func CheckVersion(ctx context.Context, r remote.Runner, command []string, want Stamp) error {
	res, err := r.Run(ctx, append(slices.Clone(command), "version", "-o", "json"), nil)
	if err != nil {
		return fmt.Errorf("%s version: %w", strings.Join(command, " "), err)
	}
	var got Stamp
	if err := json.Unmarshal(bytes.TrimSpace(res.Stdout), &got); err != nil || got.Version == "" {
		return fmt.Errorf("%s version -o json: not fabricctl's version output", strings.Join(command, " "))
	}
	if got != want {
		return fmt.Errorf("%w: %s there, %s here; install this build on the host (or pass --host-version-skew)", ErrVersionSkew, got, want)
	}
	return nil
}

func (fl *Fleet) checkVersion(ctx context.Context, r remote.Runner, host string, cmd []string) error {
	if _, ok := fl.checked.Load(host); ok {
		return nil
	}
	if err := CheckVersion(ctx, r, cmd, *fl.Version); err != nil {
		return err
	}
	fl.checked.Store(host, true)
	return nil
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
	cmd := fl.Command
	if len(cmd) == 0 {
		cmd = []string{"fabricctl"}
	}
	bin := strings.Join(cmd, " ")
	if fl.Version != nil {
		if err := fl.checkVersion(ctx, r, h.Name, cmd); err != nil {
			return fail(err)
		}
	}
	argv := append(append(slices.Clone(cmd), "host", verb, "-f", "-", "--host", h.Name, "-o", "json"), fl.ExtraArgs...)
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
