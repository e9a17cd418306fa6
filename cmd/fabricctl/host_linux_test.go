package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fabricctl/fabricctl/internal/netnstest"
	"github.com/fabricctl/fabricctl/plan"
)

// TestHostInNetns runs the host commands for real against a veth called
// ens1f0np0 in a private netns (--netns) with an empty sysfs root (--root).
func TestHostInNetns(t *testing.T) {
	ns := netnstest.New(t)
	ns.Veth(t, "ens1f0np0", "peer0")
	root := t.TempDir()
	common := []string{"--host", "gpu1", "--netns", ns.Name, "--root", root}

	// Dry run: the equivalent commands, nothing changed.
	code, out, errOut := runHost(t, hostTestIntent, append([]string{"host", "apply", "-f", "-", "--dry-run", "-o", "commands"}, common...)...)
	if code != ExitError || !strings.Contains(out, "ip link set dev ens1f0np0 mtu 9000\n") {
		t.Errorf("apply --dry-run -o commands: exit %d, stdout:\n%s\nwant exit 1 (no DCB on veth) and the ip link line", code, out)
	}
	if !strings.Contains(errOut, "ens1f0np0") || !strings.Contains(errOut, "EOPNOTSUPP") {
		t.Errorf("stderr %q does not name the interface and EOPNOTSUPP", errOut)
	}
	if l, _ := ns.Netlink.LinkByName("ens1f0np0"); l.Attrs().MTU != 1500 {
		t.Fatalf("--dry-run changed the MTU to %d", l.Attrs().MTU)
	}

	// -o netlink: one hex request per step.
	_, out, _ = runHost(t, hostTestIntent, append([]string{"host", "plan", "-f", "-", "-o", "netlink"}, common...)...)
	if !strings.Contains(out, "# ip link set dev ens1f0np0 mtu 9000\n28000000100005000100000000000000") {
		t.Errorf("plan -o netlink:\n%s\nwant the RTM_NEWLINK request `ip link set` sends, in hex", out)
	}

	// Apply: the plan has an error (no DCB on a veth), so nothing is written.
	backup := filepath.Join(t.TempDir(), "gpu1.json")
	code, out, _ = runHost(t, hostTestIntent, append([]string{"host", "apply", "-f", "-", "--backup", backup}, common...)...)
	if code != ExitError || !strings.Contains(out, "nothing written") {
		t.Errorf("apply on a veth: exit %d, want 1 and nothing written:\n%s", code, out)
	}
	if l, _ := ns.Netlink.LinkByName("ens1f0np0"); l.Attrs().MTU != 1500 {
		t.Errorf("MTU after a refused host apply = %d, want 1500", l.Attrs().MTU)
	}

	// --partial writes the MTU: partly written (exit 5), JSON result for the
	// fleet with every step's outcome.
	code, out, _ = runHost(t, hostTestIntent, append([]string{"host", "apply", "-f", "-", "-o", "json", "--partial", "--backup", backup}, common...)...)
	if code != ExitPartial {
		t.Errorf("apply --partial on a veth: exit %d, want 5 (partly written)", code)
	}
	p, err := plan.Unmarshal([]byte(out))
	if err != nil {
		t.Fatalf("apply -o json output is not a plan: %v\n%s", err, out)
	}
	if len(p.Targets) != 1 || p.Targets[0].Name != "gpu1" || p.Targets[0].Error == "" || !p.Targets[0].HasChanges() ||
		!slices.Contains(p.Targets[0].Notes, "step applied: ens1f0np0/mtu (ip link set dev ens1f0np0 mtu 9000)") {
		t.Errorf("apply -o json = %+v, want gpu1 with the MTU change, its outcome and the DCB error", p.Targets)
	}
	if l, _ := ns.Netlink.LinkByName("ens1f0np0"); l.Attrs().MTU != 9000 {
		t.Errorf("MTU after host apply = %d, want 9000", l.Attrs().MTU)
	}
	if fi, err := os.Stat(backup); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup %s: %v (mode %v), want mode 0600", backup, err, fi.Mode())
	}

	// Restore puts the MTU back and reads back.
	code, out, errOut = runHost(t, "", "host", "restore", "--backup", backup, "--netns", ns.Name, "--root", root)
	if code != ExitOK || !strings.Contains(out, "applied: ens1f0np0/mtu (ip link set dev ens1f0np0 mtu 1500)") {
		t.Errorf("host restore: exit %d\n%s\n%s", code, out, errOut)
	}
	if l, _ := ns.Netlink.LinkByName("ens1f0np0"); l.Attrs().MTU != 1500 {
		t.Errorf("MTU after host restore = %d, want 1500", l.Attrs().MTU)
	}
}

// TestHostWatch: --watch applies, then keeps reconciling quietly until the
// context ends (exit 0); only a round with changes prints a plan. It waits
// for two reconcile rounds after the first (their log lines), however long
// a busy machine takes, then stops the watch as Ctrl-C would.
func TestHostWatch(t *testing.T) {
	ns := netnstest.New(t)
	ns.Veth(t, "ens1f0np0", "peer0")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb lockedBuffer
	args := []string{"host", "apply", "-f", "-", "--watch", "--partial", "--interval", "1s", "--host", "gpu1",
		"--netns", ns.Name, "--root", t.TempDir(), "--log-level", "info"}
	done := make(chan int, 1)
	go func() { done <- run(ctx, args, strings.NewReader(hostTestIntent), &out, &errb) }()
	rounds := func() int { return strings.Count(errb.String(), "host plan incomplete") }
	// a generous bound for a stuck watch, not a deadline for a slow one
	for bound := time.Now().Add(3 * time.Minute); rounds() < 2; time.Sleep(50 * time.Millisecond) {
		select {
		case code := <-done:
			t.Fatalf("host apply --watch ended by itself with exit %d after %d rounds; stderr:\n%s", code, rounds(), errb.String())
		default:
		}
		if time.Now().After(bound) {
			t.Fatalf("host apply --watch ran %d reconcile rounds after the first in 3 minutes, want 2; stderr:\n%s", rounds(), errb.String())
		}
	}
	cancel()
	if code := <-done; code != ExitOK {
		t.Errorf("host apply --watch ended with exit %d, want 0 when stopped; stderr:\n%s", code, errb.String())
	}
	if n := strings.Count(out.String(), "~ ens1f0np0/mtu"); n != 1 {
		t.Errorf("the MTU change was printed %d times, want once (later rounds are in sync):\n%s", n, out.String())
	}
	if l, _ := ns.Netlink.LinkByName("ens1f0np0"); l.Attrs().MTU != 9000 {
		t.Errorf("MTU under --watch = %d, want 9000", l.Attrs().MTU)
	}
}

// TestHostWatchReloadsIntent: a changed intent file (a ConfigMap update) is
// picked up by the next round without a restart.
func TestHostWatchReloadsIntent(t *testing.T) {
	ns := netnstest.New(t)
	ns.Veth(t, "ens1f0np0", "peer0")
	file := filepath.Join(t.TempDir(), "fabric.yaml")
	if err := os.WriteFile(file, []byte(hostTestIntent), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int)
	var out, errb bytes.Buffer
	go func() {
		done <- run(ctx, []string{"host", "apply", "-f", file, "--watch", "--partial", "--interval", "1s", "--host", "gpu1",
			"--netns", ns.Name, "--root", t.TempDir()}, strings.NewReader(""), &out, &errb)
	}()
	mtu := func() int {
		l, err := ns.Netlink.LinkByName("ens1f0np0")
		if err != nil {
			return -1
		}
		return l.Attrs().MTU
	}
	waitMTU := func(want int) bool {
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if mtu() == want {
				return true
			}
		}
		return false
	}
	if !waitMTU(9000) {
		t.Fatalf("MTU = %d after the first round, want 9000", mtu())
	}
	changed := strings.Replace(hostTestIntent, "preset: roce-lossless\n", "preset: roce-lossless\n  hostMTU: 4200\n", 1)
	if err := os.WriteFile(file, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	if !waitMTU(4200) {
		t.Errorf("MTU = %d after the intent changed, want 4200 (the file was not reloaded)", mtu())
	}
	cancel()
	if code := <-done; code != ExitOK {
		t.Errorf("watch exited %d, want 0; stderr:\n%s", code, errb.String())
	}
}

// TestHostWatchMetrics: host apply --watch --listen serves the host's RDMA
// hw_counters from sysfs under --root (a fake tree here: no RDMA NIC) and
// its state; a veth has no DCB, so the plan is incomplete and the host is
// reported not fully readable (target_up 0) rather than in sync.
func TestHostWatchMetrics(t *testing.T) {
	ns := netnstest.New(t)
	ns.Veth(t, "ens1f0np0", "peer0")
	root := t.TempDir()
	hw := filepath.Join(root, "sys/class/infiniband/mlx5_0/ports/1/hw_counters")
	if err := os.MkdirAll(hw, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{"np_cnp_sent": "17", "np_ecn_marked_roce_packets": "19", "out_of_sequence": "0"} {
		if err := os.WriteFile(filepath.Join(hw, name), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var out, errb bytes.Buffer
	go func() {
		done <- run(ctx, []string{"host", "apply", "-f", "-", "--watch", "--partial", "--interval", "1s", "--host", "gpu1",
			"--netns", ns.Name, "--root", root, "--listen", addr}, strings.NewReader(hostTestIntent), &out, &errb)
	}()
	defer func() {
		cancel()
		if code := <-done; code != ExitOK {
			t.Errorf("host apply --watch --listen exited %d: %s", code, errb.String())
		}
	}()
	want := []string{
		`fabricctl_host_cnp_sent_total{device="mlx5_0",host="gpu1",interface="ens1f0np0",port="1"} 17`,
		`fabricctl_host_ecn_marked_roce_packets_total{device="mlx5_0",host="gpu1",interface="ens1f0np0",port="1"} 19`,
		`fabricctl_host_rdma_out_of_sequence_total{device="mlx5_0",host="gpu1",interface="ens1f0np0",port="1"} 0`,
		`fabricctl_target_up{host="gpu1",kind="host"} 0`,
	}
	var body string
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		body, _ = httpGet("http://" + addr + "/metrics")
		missing := false
		for _, w := range want {
			missing = missing || !strings.Contains(body, w)
		}
		if !missing {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("/metrics lacks some of %q:\n%s", want, body)
}
