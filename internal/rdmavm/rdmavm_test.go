package rdmavm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/remote"
	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/validate"
)

// lab is the two soft-RoCE guests of one test run.
type lab struct {
	dir       string // temp dir: keys, intent, consoles
	fabricctl string // the host's fabricctl (the same build as the guests')
	keyFile   string
	known     string
	guests    []*Guest
	runners   []*remote.SSH
}

// bound scales the generous limits below with a slow machine: they bound a
// hang, they do not time anything (TCG is slow, and CI shares its 2 cores).
func bound(d time.Duration) time.Duration {
	if s, err := strconv.Atoi(os.Getenv("FABRICCTL_RDMAVM_SLOWDOWN")); err == nil && s > 1 {
		return d * time.Duration(s)
	}
	return d
}

func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// unavailable skips (or, with CI=true, fails) a test that cannot run here.
func unavailable(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s; CI=true needs it (scripts/install-deps.sh installs qemu-system-x86, linux-image-amd64, busybox-static, rdma-core, ibverbs-providers, perftest)", why)
	}
	t.Skip(why)
}

var timings struct {
	sync.Mutex
	lines []string
}

func timing(t *testing.T, what string, d time.Duration) {
	t.Logf("timing: %s %.1fs", what, d.Seconds())
	timings.Lock()
	timings.lines = append(timings.lines, fmt.Sprintf("%s %.1fs", what, d.Seconds()))
	timings.Unlock()
}

// newLab builds the image (cached), a static fabricctl, and boots two guests
// gpu1 (192.168.77.1) and gpu2 (192.168.77.2) joined by their roce0.
func newLab(t *testing.T) *lab {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the soft-RoCE VM tests boot two qemu guests (minutes under TCG)")
	}
	if os.Geteuid() != 0 {
		// Not needed by qemu itself, but the packages (and the kernel's
		// modules under /lib/modules) are installed by root.
		t.Log("not root: relying on the packages being installed already")
	}
	root := repoRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), bound(10*time.Minute))
	defer cancel()
	start := time.Now()
	img, err := Build(ctx, root)
	if errors.Is(err, ErrUnavailable) {
		unavailable(t, err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	what := "image build"
	if img.Cached {
		what = "image (cached)"
	}
	timing(t, what, time.Since(start))
	t.Logf("image %s, kernel %s", img.Dir, img.KVer)

	l := &lab{dir: t.TempDir()}
	start = time.Now()
	l.fabricctl = filepath.Join(l.dir, "fabricctl")
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", l.fabricctl, "./cmd/fabricctl")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("static fabricctl: %v\n%s", err, out)
	}
	bin, err := os.ReadFile(l.fabricctl)
	if err != nil {
		t.Fatal(err)
	}
	timing(t, "static fabricctl build", time.Since(start))

	keys, err := NewKeys()
	if err != nil {
		t.Fatal(err)
	}
	l.keyFile = filepath.Join(l.dir, "id_ed25519")
	if err := os.WriteFile(l.keyFile, keys.ClientKeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	overlay := Overlay(map[string]File{
		"usr/bin/fabricctl":                {Data: bin, Mode: 0o755},
		"etc/ssh/ssh_host_ed25519_key":     {Data: keys.HostKeyPEM, Mode: 0o600},
		"etc/ssh/ssh_host_ed25519_key.pub": {Data: ssh.MarshalAuthorizedKey(keys.HostPub)},
		"root/.ssh/authorized_keys":        {Data: ssh.MarshalAuthorizedKey(keys.ClientPub), Mode: 0o600},
	})

	var specs []Spec
	var known strings.Builder
	for i := 1; i <= 2; i++ {
		s := Spec{Name: fmt.Sprintf("gpu%d", i), Addr: fmt.Sprintf("192.168.77.%d/24", i), Index: i,
			Console: filepath.Join(l.dir, fmt.Sprintf("gpu%d.console", i))}
		if s.SSHPort, err = FreePort(); err != nil {
			t.Fatal(err)
		}
		specs = append(specs, s)
		known.WriteString(keys.KnownHostsLine(s.SSHPort) + "\n")
	}
	link := filepath.Join(l.dir, "roce.sock")
	specs[0].Link, specs[0].Listen, specs[1].Link = link, true, link
	l.known = filepath.Join(l.dir, "known_hosts")
	if err := os.WriteFile(l.known, []byte(known.String()), 0o600); err != nil {
		t.Fatal(err)
	}

	start = time.Now()
	for _, s := range specs {
		g, err := Boot(img, overlay, s)
		if err != nil {
			t.Fatal(err)
		}
		l.guests = append(l.guests, g)
		t.Cleanup(g.Stop)
		if s.Listen {
			if err := g.WaitListening(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, g := range l.guests {
		if err := g.WaitConsole(ctx, "rdmavm: "+g.Spec.Name+" up:"); err != nil {
			t.Fatal(err)
		}
		if tail := g.ConsoleTail(200); strings.Contains(tail, "failed") {
			t.Fatalf("guest %s set-up:\n%s", g.Spec.Name, tail)
		}
	}
	for _, g := range l.guests {
		r, err := remote.NewSSH(l.host(g), remote.SSHOptions{DialTimeout: bound(30 * time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Close() })
		l.runners = append(l.runners, r)
		if err := waitSSH(ctx, g, r); err != nil {
			t.Fatal(err)
		}
	}
	timing(t, "boot of two guests to sshd", time.Since(start))
	return l
}

// waitSSH retries a trivial command until sshd answers, qemu exits or ctx ends.
func waitSSH(ctx context.Context, g *Guest, r *remote.SSH) error {
	for {
		cctx, cancel := context.WithTimeout(ctx, bound(30*time.Second))
		_, err := r.Run(cctx, []string{"true"}, nil)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-g.Done():
			return fmt.Errorf("guest %s: qemu exited: %v\n%s", g.Spec.Name, g.Err(), g.ConsoleTail(30))
		case <-ctx.Done():
			return fmt.Errorf("guest %s: sshd did not answer: %v (last: %v)\n%s", g.Spec.Name, ctx.Err(), err, g.ConsoleTail(30))
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (l *lab) host(g *Guest) intent.Host {
	return intent.Host{Name: g.Spec.Name, Address: "127.0.0.1", SSH: intent.SSH{User: "root", Port: g.Spec.SSHPort, KeyFile: l.keyFile, KnownHosts: l.known}}
}

// intent returns the fabric: both guests with their roce0/rxe0, reached over
// SSH on their forwarded ports; nic2Addr replaces gpu2's RoCE address.
func (l *lab) intent(nic2Addr string) string {
	var b strings.Builder
	// Short tests: TCG runs soft-RoCE at about 0.1 Gb/s.
	b.WriteString("apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\nmetadata:\n  name: softroce\npolicy:\n  preset: roce-lossless\n" +
		"validation:\n  duration: 2s\n  iterations: 300\n")
	b.WriteString("inventory:\n  hosts:\n")
	for i, g := range l.guests {
		addr := fmt.Sprintf("192.168.77.%d", i+1)
		if i == 1 && nic2Addr != "" {
			addr = nic2Addr
		}
		fmt.Fprintf(&b, "    - name: %s\n      address: \"127.0.0.1:%d\"\n      ssh: {user: root, keyFile: %q, knownHosts: %q}\n      nics:\n        - {interface: roce0, rdma: rxe0, address: %s}\n",
			g.Spec.Name, g.Spec.SSHPort, l.keyFile, l.known, addr)
	}
	return b.String()
}

func (l *lab) writeIntent(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(l.dir, name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// guest runs argv in guest i; a failure is fatal.
func (l *lab) guest(t *testing.T, i int, stdin string, argv ...string) string {
	t.Helper()
	out, err := l.guestRun(i, stdin, argv...)
	if err != nil {
		t.Fatalf("%s: %s: %v\n%s", l.guests[i].Spec.Name, strings.Join(argv, " "), err, out)
	}
	return out
}

func (l *lab) guestRun(i int, stdin string, argv ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), bound(5*time.Minute))
	defer cancel()
	var in *strings.Reader
	if stdin != "" {
		in = strings.NewReader(stdin)
	}
	var res remote.Result
	var err error
	if in != nil {
		res, err = l.runners[i].Run(ctx, argv, in)
	} else {
		res, err = l.runners[i].Run(ctx, argv, nil)
	}
	return string(res.Stdout) + string(res.Stderr), err
}

// fabricctl runs the host's fabricctl; it returns the exit code.
func (l *lab) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound(8*time.Minute))
	defer cancel()
	defer func(start time.Time) { t.Logf("fabricctl %s: %.1fs", args[0], time.Since(start).Seconds()) }(time.Now())
	if args[0] == "validate" {
		// A perftest server starts in seconds under TCG; more on a busy machine.
		args = append(args, "--ready-timeout", bound(time.Minute).String())
	}
	cmd := exec.CommandContext(ctx, l.fabricctl, args...)
	cmd.Env = append(os.Environ(), "SSH_AUTH_SOCK=")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("fabricctl %s: did not finish within %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), bound(8*time.Minute), out.String(), errb.String())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// The intent's RoCE ToS: the roce-lossless preset's class, DSCP 26 with ECT(0).
const intentToS = 106

func TestSoftRoCE(t *testing.T) {
	l := newLab(t)
	text := l.intent("")
	fabric := l.writeIntent(t, "fabric.yaml", text)

	t.Run("HostApplyWritesToSAndMTUAndDiffReadsThemBack", func(t *testing.T) {
		start := time.Now()
		for i, g := range l.guests {
			l.hostApply(t, i, text, "mtu", "rdma_cm/default_roce_tos", "rdma_cm/default_roce_mode")
			if got := strings.TrimSpace(l.guest(t, i, "", "cat", "/sys/kernel/config/rdma_cm/rxe0/ports/1/default_roce_tos")); got != strconv.Itoa(intentToS) {
				t.Errorf("%s: configfs default_roce_tos = %q after host apply, want %d", g.Spec.Name, got, intentToS)
			}
			if got := strings.TrimSpace(l.guest(t, i, "", "cat", "/sys/class/net/roce0/mtu")); got != strconv.Itoa(intent.DefaultHostMTU) {
				t.Errorf("%s: roce0 mtu = %s after host apply, want %d (policy.hostMTU)", g.Spec.Name, got, intent.DefaultHostMTU)
			}
			d := l.hostDiff(t, i, text)
			for _, path := range []string{"roce0/mtu", "roce0/rdma_cm/default_roce_tos", "roce0/rdma_cm/default_roce_mode"} {
				c, ok := change(d, path)
				if !ok || c.Action != plan.NoOp {
					t.Errorf("%s: host diff %s = %+v (found %v), want in sync (no-op)", g.Spec.Name, path, c, ok)
				}
			}
		}
		// Drift: the RDMA-CM ToS changed behind fabricctl's back.
		l.guest(t, 1, "", "sh", "-c", "echo 96 > /sys/kernel/config/rdma_cm/rxe0/ports/1/default_roce_tos")
		d := l.hostDiff(t, 1, text)
		if c, ok := change(d, "roce0/rdma_cm/default_roce_tos"); !ok || c.Action != plan.Update || c.Before != "96" || c.After != "106" {
			t.Errorf("host diff after the ToS drifted to 96 = %+v (found %v), want update 96 -> 106", c, ok)
		}
		l.hostApply(t, 1, text, "rdma_cm/default_roce_tos")
		if c, ok := change(l.hostDiff(t, 1, text), "roce0/rdma_cm/default_roce_tos"); !ok || c.Action != plan.NoOp {
			t.Errorf("host diff after apply fixed the drift = %+v, want in sync", c)
		}
		timing(t, "host apply, diff, drift, apply, diff on two guests", time.Since(start))
	})

	t.Run("ValidateRDMACM", func(t *testing.T) {
		start := time.Now()
		l.installCounters(t, intentToS)
		code, out, errOut := l.run(t, "validate", "-f", fabric, "--rdma-cm", "-o", "json")
		rep := l.report(t, code, out, errOut)
		l.checkRun(t, rep, []string{"ib_write_bw", "ib_write_lat"}, "-R -T 106")
		timing(t, "validate --rdma-cm (ib_write_bw 2s, ib_write_lat 300 iterations)", time.Since(start))
	})

	t.Run("ValidateTClass", func(t *testing.T) {
		start := time.Now()
		l.installCounters(t, intentToS)
		code, out, errOut := l.run(t, "validate", "-f", fabric, "--no-latency", "-o", "json")
		rep := l.report(t, code, out, errOut)
		l.checkRun(t, rep, []string{"ib_write_bw"}, "--tclass 106")
		timing(t, "validate --tclass (ib_write_bw 2s)", time.Since(start))
	})

	t.Run("DriftedToSIsSeenOnTheWireAndByValidate", func(t *testing.T) {
		// gpu1's RDMA-CM default ToS drifts to 96 (DSCP 24, Not-ECT). perftest
		// -R -T sets the ToS of its test connection only; its rdma_cm
		// control connection takes the configfs default, so packets with the
		// wrong DSCP cross the link, and validate's readback names the drift.
		start := time.Now()
		l.guest(t, 0, "", "sh", "-c", "echo 96 > /sys/kernel/config/rdma_cm/rxe0/ports/1/default_roce_tos")
		defer l.hostApply(t, 0, text, "rdma_cm/default_roce_tos")
		l.installCounters(t, intentToS)
		code, out, errOut := l.run(t, "validate", "-f", fabric, "--rdma-cm", "--no-latency", "-o", "json")
		rep := l.report(t, code, out, errOut)
		if code != 3 {
			t.Errorf("validate with a drifted ToS: exit %d, want 3 (a check failed)", code)
		}
		drift := false
		for _, c := range rep.Checks {
			if c.Name == "readback.drift" && c.Target == "host gpu1 roce0/rdma_cm/default_roce_tos" && c.Status == validate.Fail && c.Observed == "96" && c.Limit == "106" {
				drift = true
			}
		}
		if !drift {
			t.Errorf("validate's readback did not report gpu1's RDMA-CM ToS drift 96 -> 106:\n%s", out)
		}
		var wrong uint64
		for i := range l.guests {
			w := l.wire(t, i)
			if err := w.allCarry(intentToS); err == nil {
				t.Errorf("%s: every RoCE packet carried ToS %d although gpu1's RDMA-CM default ToS was 96: the wire check cannot fail", l.guests[i].Spec.Name, intentToS)
			} else {
				t.Logf("wire check fails as it must: %v", err)
			}
			wrong += w.dscp[96>>2]
		}
		if wrong == 0 {
			t.Error("no packet with DSCP 24 (ToS 96) crossed the link")
		}
		timing(t, "validate with a drifted ToS", time.Since(start))
	})

	t.Run("MissingGIDNamesHostAndDevice", func(t *testing.T) {
		start := time.Now()
		bad := l.writeIntent(t, "nogid.yaml", l.intent("192.168.77.9"))
		code, out, errOut := l.run(t, "validate", "-f", bad, "--rdma-cm", "--no-latency", "--no-readback", "--no-counters")
		all := out + errOut
		if code != 1 {
			t.Errorf("validate with a GID that does not exist: exit %d, want 1\n%s", code, all)
		}
		for _, want := range []string{"host gpu2", "rdma device rxe0 port 1", "no RoCE v2 IPv4 GID", "192.168.77.9"} {
			if !strings.Contains(all, want) {
				t.Errorf("validate output does not name %q:\n%s", want, all)
			}
		}
		timing(t, "validate with a missing GID", time.Since(start))
	})

	t.Run("PeerDeviceRemovedMidRun", func(t *testing.T) {
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), bound(8*time.Minute))
		defer cancel()
		cmd := exec.CommandContext(ctx, l.fabricctl, "validate", "-f", fabric, "--rdma-cm", "--no-latency", "--no-readback", "--duration", "15s", "-o", "json", "--ready-timeout", bound(time.Minute).String())
		cmd.Env = append(os.Environ(), "SSH_AUTH_SOCK=")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		// Traffic runs when gpu2's rxe0 receives: then remove it.
		base := l.hwCounters(t, 1)["rcvd_pkts"]
		for l.hwCounters(t, 1)["rcvd_pkts"] < base+100 {
			select {
			case err := <-done:
				t.Fatalf("validate ended (%v) before traffic reached gpu2:\n%s\n%s", err, stdout.String(), stderr.String())
			case <-time.After(200 * time.Millisecond):
			}
		}
		// rxe has no disassociate_ucontext, so the delete waits for the
		// perftest server to close the device: run it beside validate.
		del := make(chan string, 1)
		go func() {
			out, err := l.guestRun(1, "", "rdma", "link", "delete", "rxe0")
			del <- fmt.Sprintf("%v %s", err, out)
		}()
		var err error
		select {
		case err = <-done:
		case <-ctx.Done():
			t.Fatalf("validate did not end within %v after gpu2's rxe0 was removed", bound(8*time.Minute))
		}
		t.Logf("rdma link delete: %s", <-del)
		// rxe has no disassociate_ucontext: the device leaves sysfs at once
		// but serves the perftest that has it open until it exits, so the
		// flow itself may finish; what validate cannot do is read gpu2's
		// counters after the run, and it must say so, naming host and device.
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		rep := l.report(t, code, stdout.String(), stderr.String())
		if code != 1 {
			t.Errorf("validate exit %d (%v), want 1 (evidence missing)\n%s", code, err, stderr.String())
		}
		named := false
		for _, c := range rep.Checks {
			if c.Status == validate.Error && strings.Contains(c.Target, "gpu2") && strings.Contains(c.Message, "host gpu2") && strings.Contains(c.Message, "rxe0") {
				named = true
				t.Logf("error check: %s %s: %s", c.Name, c.Target, c.Message)
			}
		}
		for _, f := range rep.Flows {
			if f.Err != "" {
				t.Logf("flow error: %s", f.Err)
				if strings.Contains(f.Err, "gpu2") {
					named = true
				}
			}
		}
		if !named {
			t.Errorf("no error naming host gpu2 and rxe0 in the report:\n%s", stdout.String())
		}
		// Put rxe0 back for whatever runs next.
		l.guest(t, 1, "", "rdma", "link", "add", "rxe0", "type", "rxe", "netdev", "roce0")
		timing(t, "validate with the peer's rxe0 removed mid-run", time.Since(start))
	})

	timings.Lock()
	t.Logf("VM step timings:\n  %s", strings.Join(timings.lines, "\n  "))
	timings.Unlock()
}

// hostApply runs fabricctl host apply in guest i with the intent on stdin.
// virtio_net has no DCB, so the plan has an error and --partial writes what
// can be written: exit 5.
func (l *lab) hostApply(t *testing.T, i int, text string, applied ...string) {
	t.Helper()
	out, err := l.guestRun(i, text, "fabricctl", "host", "apply", "-f", "-", "--host", l.guests[i].Spec.Name, "--partial", "--backup", "/root/backup.json") // a private directory: /tmp is writable by others (ownfs)
	var ee *remote.ExitError
	if !errors.As(err, &ee) || ee.ExitCode != 5 {
		t.Fatalf("%s: host apply --partial: %v, want exit 5 (partly written: no DCB on virtio_net)\n%s", l.guests[i].Spec.Name, err, out)
	}
	for _, a := range applied {
		if want := "applied: roce0/" + a + " ("; !strings.Contains(out, want) {
			t.Errorf("%s: host apply does not say %q:\n%s", l.guests[i].Spec.Name, want, out)
		}
	}
}

// hostDiff runs fabricctl host diff -o json in guest i: exit 1 (DCB cannot be
// read on virtio_net, and says so), the rest read back.
func (l *lab) hostDiff(t *testing.T, i int, text string) plan.TargetPlan {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound(5*time.Minute))
	defer cancel()
	res, err := l.runners[i].Run(ctx, []string{"fabricctl", "host", "diff", "-f", "-", "--host", l.guests[i].Spec.Name, "-o", "json"}, strings.NewReader(text))
	var ee *remote.ExitError
	if !errors.As(err, &ee) || ee.ExitCode != 1 {
		t.Fatalf("%s: host diff: %v, want exit 1 (no DCB on virtio_net)\n%s%s", l.guests[i].Spec.Name, err, res.Stdout, res.Stderr)
	}
	p, err := plan.Unmarshal(res.Stdout)
	if err != nil || len(p.Targets) != 1 {
		t.Fatalf("%s: host diff -o json: %v\n%s", l.guests[i].Spec.Name, err, res.Stdout)
	}
	tp := p.Targets[0]
	if !strings.Contains(tp.Error, "roce0") || !strings.Contains(tp.Error, "EOPNOTSUPP") {
		t.Errorf("%s: host diff error %q does not name roce0 and EOPNOTSUPP", l.guests[i].Spec.Name, tp.Error)
	}
	return tp
}

func change(tp plan.TargetPlan, path string) (plan.Change, bool) {
	for _, c := range tp.Changes {
		if c.Path == path {
			return c, true
		}
	}
	return plan.Change{}, false
}

// installCounters puts tc filters on roce0's ingress in both guests: one
// per DSCP and one per ECN codepoint for UDP port 4791 (RoCEv2), one for all
// RoCEv2 packets, and three for the RDMA-CM's MADs (BTH destination QP 1, at
// byte 32 behind a 20-byte IPv4 and the UDP header): all of them, and those
// with tos's DSCP and ECN bits. Every filter "continue"s, so a packet is
// counted by each filter it matches. One tc -batch: a tc process per filter
// costs half a second under TCG.
func (l *lab) installCounters(t *testing.T, tos int) {
	t.Helper()
	defer func(start time.Time) { t.Logf("tc filters installed: %.1fs", time.Since(start).Seconds()) }(time.Now())
	var b strings.Builder
	b.WriteString("qdisc add dev roce0 clsact\n")
	roce := "filter add dev roce0 ingress pref %d protocol ip flower ip_proto udp dst_port 4791 ip_tos %d/%#x action continue\n"
	for d := 0; d < 64; d++ {
		fmt.Fprintf(&b, roce, d+1, d<<2, 0xfc)
	}
	for e := 0; e < 4; e++ {
		fmt.Fprintf(&b, roce, 100+e, e, 0x03)
	}
	b.WriteString("filter add dev roce0 ingress pref 200 protocol ip flower ip_proto udp dst_port 4791 action continue\n")
	qp1 := "filter add dev roce0 ingress pref %d protocol ip u32 match u8 17 0xff at 9 match u16 4791 0xffff at 22 match u32 1 0x00ffffff at 32%s action continue\n"
	fmt.Fprintf(&b, qp1, 300, "")
	fmt.Fprintf(&b, qp1, 301, fmt.Sprintf(" match u8 %d 0xfc at 1", tos&0xfc))
	fmt.Fprintf(&b, qp1, 302, fmt.Sprintf(" match u8 %d 0x03 at 1", tos&3))
	for i := range l.guests {
		_, _ = l.guestRun(i, "", "tc", "qdisc", "del", "dev", "roce0", "clsact")
		l.guest(t, i, b.String(), "tc", "-batch", "-")
	}
}

// wireCounts are the RoCEv2 packets that arrived on a guest's roce0.
type wireCounts struct {
	host  string
	dscp  [64]uint64
	ecn   [4]uint64
	total uint64
	// The RDMA-CM's MADs (QP1): all, and those with the intent's DSCP and ECN.
	qp1, qp1DSCP, qp1ECN uint64
}

// allCarry reports an error unless every RoCEv2 packet of the RDMA traffic
// (not on QP1) carried tos's DSCP and ECN bits, and some arrived. The CM's
// MADs are left out: the kernel answers some of them (MRA, a REJ) with an
// address handle built from the received work completion, whose traffic
// class is 0 on RoCEv2 over IPv4 (ib_init_ah_attr_from_wc reads it from the
// GRH, which IPv4 does not fill); under TCG's slowness CM retransmissions
// make such answers happen.
func (w wireCounts) allCarry(tos int) error {
	data := w.total - w.qp1
	dscp, ecn := w.dscp[tos>>2]-w.qp1DSCP, w.ecn[tos&3]-w.qp1ECN
	if data == 0 {
		return fmt.Errorf("%s: no RoCEv2 packet outside the CM's QP1 arrived (%d in all)", w.host, w.total)
	}
	if dscp == data && ecn == data {
		return nil
	}
	var other []string
	for d, n := range w.dscp {
		if n > 0 && d != tos>>2 {
			other = append(other, fmt.Sprintf("DSCP %d: %d", d, n))
		}
	}
	for e, n := range w.ecn {
		if n > 0 && e != tos&3 {
			other = append(other, fmt.Sprintf("ECN %02b: %d", e, n))
		}
	}
	return fmt.Errorf("%s: %d RoCEv2 packets outside QP1, %d with DSCP %d and %d with ECN %02b (ToS %d); all packets with other bits (QP1's %d included): %s",
		w.host, data, dscp, tos>>2, ecn, tos&3, tos, w.qp1-min(w.qp1DSCP, w.qp1ECN), strings.Join(other, ", "))
}

func (l *lab) wire(t *testing.T, i int) wireCounts {
	t.Helper()
	out := l.guest(t, i, "", "tc", "-s", "-j", "filter", "show", "dev", "roce0", "ingress")
	var filters []struct {
		Pref    int `json:"pref"`
		Options *struct {
			Actions []struct {
				Stats struct {
					Packets uint64 `json:"packets"`
				} `json:"stats"`
			} `json:"actions"`
		} `json:"options"`
	}
	if err := json.Unmarshal([]byte(out), &filters); err != nil {
		t.Fatalf("tc -j filter show: %v\n%s", err, out)
	}
	w := wireCounts{host: l.guests[i].Spec.Name}
	seen := 0
	for _, f := range filters {
		if f.Options == nil || len(f.Options.Actions) == 0 {
			continue
		}
		n := f.Options.Actions[0].Stats.Packets
		switch p := f.Pref; {
		case p >= 1 && p <= 64:
			w.dscp[p-1] = n
		case p >= 100 && p <= 103:
			w.ecn[p-100] = n
		case p == 200:
			w.total = n
		case p == 300:
			w.qp1 = n
		case p == 301:
			w.qp1DSCP = n
		case p == 302:
			w.qp1ECN = n
		default:
			continue
		}
		seen++
	}
	if seen != 64+4+1+3 {
		t.Fatalf("%s: %d of the 72 counting filters on roce0:\n%s", w.host, seen, out)
	}
	t.Logf("%s roce0 ingress: %d RoCEv2 packets, %d with DSCP %d, %d on QP1 (CM)", w.host, w.total, w.dscp[intentToS>>2], intentToS>>2, w.qp1)
	return w
}

// hwCounters reads rxe0's hw_counters in guest i.
func (l *lab) hwCounters(t *testing.T, i int) map[string]int64 {
	t.Helper()
	out := l.guest(t, i, "", "grep", "-r", "-H", ".", "/sys/class/infiniband/rxe0/ports/1/hw_counters")
	m := map[string]int64{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		p, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("hw_counters line %q: %v", line, err)
		}
		m[filepath.Base(p)] = n
	}
	return m
}

// gidIndex finds, with its own reading of sysfs (one grep: a shell loop
// over rxe's GID table takes a minute under TCG), the RoCE v2 GID index of
// the guest's IPv4 address on roce0.
func (l *lab) gidIndex(t *testing.T, i int) int {
	t.Helper()
	want := fmt.Sprintf("0000:0000:0000:0000:0000:ffff:c0a8:4d%02x", i+1)
	out, _ := l.guestRun(i, "", "sh", "-c", "cd /sys/class/infiniband/rxe0/ports/1 && grep -H . gids/* gid_attrs/types/* 2>/dev/null")
	gids, types := map[string]string{}, map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		p, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch dir, n := filepath.Split(p); dir {
		case "gids/":
			gids[n] = v
		case "gid_attrs/types/":
			types[n] = v
		}
	}
	best := -1
	for n, g := range gids {
		k, err := strconv.Atoi(n)
		if err == nil && g == want && types[n] == "RoCE v2" && (best < 0 || k < best) {
			best = k
		}
	}
	if best < 0 {
		t.Fatalf("%s: no RoCE v2 GID %s in\n%s", l.guests[i].Spec.Name, want, out)
	}
	return best
}

// report parses validate's JSON. The run cannot pass on this lab: the
// readback finds no DCB on virtio_net (an error check), so exit 1 is the
// expected outcome when nothing failed.
func (l *lab) report(t *testing.T, code int, out, errOut string) *validate.Report {
	t.Helper()
	var rep validate.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("validate -o json (exit %d): %v\nstdout:\n%s\nstderr:\n%s", code, err, out, errOut)
	}
	t.Logf("validate exit %d, %d flows, %d checks, %v (traffic %v)", code, len(rep.Flows), len(rep.Checks), rep.Elapsed, rep.TrafficElapsed)
	return &rep
}

// checkRun holds a validate run to what the lab shows independently: the
// flows ran with the intent's ToS flag and the right GID, perftest's live
// output was parsed, every RoCEv2 packet on the wire carried the intent's
// DSCP and ECN bits, and the rxe hw_counters validate read agree with the
// packets counted on the wire.
func (l *lab) checkRun(t *testing.T, rep *validate.Report, tools []string, tosFlag string) {
	t.Helper()
	defer func(start time.Time) { t.Logf("run checked against the guests: %.1fs", time.Since(start).Seconds()) }(time.Now())
	if len(rep.Flows) != len(tools) {
		t.Fatalf("%d flows, want %d (%v): %+v", len(rep.Flows), len(tools), tools, rep.Flows)
	}
	gid := l.gidIndex(t, 0)
	for k, f := range rep.Flows {
		if f.Err != "" {
			t.Errorf("flow %s %s -> %s: %s", f.Test, f.Client, f.Server, f.Err)
			continue
		}
		if !strings.HasPrefix(f.Command, tools[k]+" ") || !strings.Contains(f.Command, " "+tosFlag+" ") || !strings.Contains(f.Command, fmt.Sprintf(" -x %d ", gid)) || !strings.HasSuffix(f.Command, " 192.168.77.2") {
			t.Errorf("flow %d command %q: want %s with %q, -x %d (gpu1's RoCE v2 GID of 192.168.77.1) and the server 192.168.77.2", k, f.Command, tools[k], tosFlag, gid)
		}
		if f.ToS != intentToS {
			t.Errorf("flow %d ToS %d, want %d", k, f.ToS, intentToS)
		}
		switch f.Test {
		case "latency":
			if f.P50 <= 0 || f.P99 < f.P50 {
				t.Errorf("latency flow: p50 %v p99 %v: not parsed from the live output", f.P50, f.P99)
			}
		default:
			if !(f.Gbps > 0) || f.Gbps > 100 {
				t.Errorf("bandwidth flow: %v Gb/s: not parsed from the live output", f.Gbps)
			}
		}
	}
	// What the wire saw, in both directions.
	wires := []wireCounts{l.wire(t, 0), l.wire(t, 1)}
	for _, w := range wires {
		if err := w.allCarry(intentToS); err != nil {
			t.Error(err)
		}
	}
	// The counters validate read before and after, against the wire: every
	// packet that reached one guest's roce0 was sent by the other's rxe0 in
	// the window, and rxe0 received at most what arrived.
	for i, g := range l.guests {
		peer := 1 - i
		d, ok := rep.Deltas[g.Spec.Name+"/rdma/rxe0/1"]
		pd, pok := rep.Deltas[l.guests[peer].Spec.Name+"/rdma/rxe0/1"]
		if !ok || !pok {
			t.Fatalf("validate read no hw_counters deltas for %s and %s: %v", g.Spec.Name, l.guests[peer].Spec.Name, rep.Deltas)
		}
		arrived := int64(wires[i].total)
		if sent := pd["sent_pkts"]; sent < arrived {
			t.Errorf("%s rxe0 sent_pkts delta %d < %d RoCEv2 packets that arrived at %s", l.guests[peer].Spec.Name, sent, arrived, g.Spec.Name)
		}
		if rcvd := d["rcvd_pkts"]; rcvd <= 0 || rcvd > arrived {
			t.Errorf("%s rxe0 rcvd_pkts delta %d, want 1..%d (the RoCEv2 packets that arrived)", g.Spec.Name, rcvd, arrived)
		}
		// The verdict on sequence errors follows the counters.
		seq := d["rcvd_seq_err"] + d["out_of_seq_request"]
		found := false
		for _, c := range rep.Checks {
			if c.Name == "host.rdma.seq_errors" && c.Target == g.Spec.Name+"/rdma/rxe0/1" {
				found = true
				if want := map[bool]validate.Status{true: validate.Pass, false: validate.Fail}[seq == 0]; c.Status != want {
					t.Errorf("%s: host.rdma.seq_errors %s with rcvd_seq_err+out_of_seq_request = %d, want %s", g.Spec.Name, c.Status, seq, want)
				}
			}
		}
		if !found {
			t.Errorf("no host.rdma.seq_errors check for %s/rdma/rxe0/1", g.Spec.Name)
		}
	}
	// Nothing but the readback of DCB (not on virtio_net) is missing.
	for _, c := range rep.Checks {
		if c.Status == validate.Error && !(c.Name == "readback" && strings.Contains(c.Message, "EOPNOTSUPP")) {
			t.Errorf("check %s %s could not collect its evidence: %s", c.Name, c.Target, c.Message)
		}
	}
}
