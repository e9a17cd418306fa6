package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

const lab9 = "testdata/lab9.yaml"

// TestLabOfYourFabric: `lab -f` runs the user's fabric (nine switches on
// SR Linux, SONiC and EOS, TEST-NET addresses and credentials that do not
// exist here) on one profiled twin per switch: check, plan, apply and diff
// pass, each twin with its switch's profile.
func TestLabOfYourFabric(t *testing.T) {
	out := runCLIWant(t, ExitOK, "lab", "-f", lab9, "--dir", t.TempDir())
	for _, want := range []string{"9 DEVICE TWINS started", "In sync: 9 targets.", "twin srl3 ", "twin sonic2 ", "twin eos1 ",
		"profile srlinux-25.3 (", "profile sonic-202411 (", "profile eos (", "intent " + lab9 + ", unchanged"} {
		if !strings.Contains(out, want) {
			t.Errorf("lab -f output lacks %q:\n%s", want, out)
		}
	}
}

// startKeptLab runs `lab ARGS --keep` until the test ends (Ctrl-C) and
// returns once the twins serve.
func startKeptLab(t *testing.T, args ...string) *lockedBuffer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append(append([]string{"lab"}, args...), "--keep"), strings.NewReader(""), &out, io.Discard)
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != ExitOK {
			t.Errorf("lab --keep exited %d:\n%s", code, out.String())
		}
	})
	// Generous: the machine is shared; the lab is ready when it says so.
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(out.String(), "until Ctrl-C") {
		select {
		case code := <-done:
			t.Fatalf("lab exited %d before it was ready:\n%s", code, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("lab --keep never got ready:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return &out
}

// TestLabDirectoryServesEveryCommand: `lab -f --keep --fresh --dir D`
// leaves fresh twins and a lab directory (0700, files 0600); plan, apply,
// diff and restore then reach them with the user's unchanged intent through
// --lab D or FABRICCTL_LAB=D; an intent the lab was not started from is
// refused naming the switch.
func TestLabDirectoryServesEveryCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lab")
	out := startKeptLab(t, "-f", lab9, "--fresh", "--dir", dir)
	if !strings.Contains(out.String(), "export FABRICCTL_LAB="+dir) {
		t.Errorf("lab --keep does not say how to use the lab directory:\n%s", out.String())
	}
	st, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o700 {
		t.Errorf("lab directory mode %v, want 0700", st.Mode().Perm())
	}
	for _, f := range []string{"lab.json", "ca.pem", "username", "password"} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", f, st.Mode().Perm())
		}
	}
	password, err := os.ReadFile(filepath.Join(dir, "password"))
	if err != nil {
		t.Fatal(err)
	}
	backups := filepath.Join(dir, "b")
	// Fresh twins: the plan has changes.
	runCLIWant(t, ExitChanges, "plan", "-f", lab9, "--lab", dir, "--detailed-exitcode")
	t.Setenv(labEnv, dir)
	got := runCLIWant(t, ExitOK, "apply", "-f", lab9, "--backup-dir", backups)
	if !strings.Contains(got, "DEVICE TWINS") || !strings.Contains(got, "switch sonic3: applied") {
		t.Errorf("apply through FABRICCTL_LAB:\n%s", got)
	}
	if strings.Contains(got, strings.TrimSpace(string(password))) {
		t.Error("apply's output shows the lab password")
	}
	runCLIWant(t, ExitOK, "diff", "-f", lab9)
	runCLIWant(t, ExitOK, "restore", "-f", lab9, "--backup", backups, "--switch", "srl2")
	runCLIWant(t, ExitChanges, "diff", "-f", lab9, "--switch", "srl2")
	// An intent the lab was not started from.
	code, _, errOut := runCLI(t, t.Context(), "plan", "-f", "../../examples/srl-pod.yaml")
	if code != ExitError || !strings.Contains(errOut, "start the lab again from this intent") {
		t.Errorf("plan of another intent against the lab: exit %d\n%s", code, errOut)
	}
	code, _, errOut = runCLI(t, t.Context(), "plan", "-f", lab9, "--lab", filepath.Join(dir, "nope"))
	if code != ExitError || !strings.Contains(errOut, "no lab.json there") {
		t.Errorf("plan with a lab directory that is none: exit %d\n%s", code, errOut)
	}
}

// TestCountersAreNotDrift: once counters move on the twins (SR Linux state
// tree, EOS OpenConfig state, SONiC COUNTERS_DB), diff still finds the lab
// in sync (it reads with Get type CONFIG, which does not see state) and a
// later Set (restore) commits (the twins validate configuration only). On
// the twins before, the counters showed as drift under the owned /qos
// subtrees and every Set failed "config false (state) node cannot be set",
// so apply reported ROLLBACK FAILED.
func TestCountersAreNotDrift(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lab")
	reg, err := newRegistry()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := intent.Load(lab9)
	if err != nil {
		t.Fatal(err)
	}
	l, err := startLabFor(dir, reg, f, labProfiles{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	t.Setenv(labEnv, dir)
	backups := filepath.Join(dir, "b")
	runCLIWant(t, ExitOK, "apply", "-f", lab9, "--backup-dir", backups)
	for _, tc := range []struct{ sw, port string }{{"srl1", "ethernet-1/1"}, {"sonic1", "Ethernet0"}, {"eos1", "Ethernet1/1"}} {
		if err := twinByName(t, l, tc.sw).Play(tc.port, 3, twin.Traffic{Packets: 1000, Drops: 3, ECNMarked: 40, PauseTx: 7, PauseRx: 9, Storms: 1}); err != nil {
			t.Fatal(err)
		}
	}
	runCLIWant(t, ExitOK, "diff", "-f", lab9)
	sets := twinByName(t, l, "srl1").Sets()
	runCLIWant(t, ExitOK, "restore", "-f", lab9, "--backup", backups, "--switch", "srl1", "--switch", "eos1")
	if twinByName(t, l, "srl1").Sets() == sets {
		t.Fatal("restore sent no Set to srl1")
	}
	runCLIWant(t, ExitOK, "apply", "-f", lab9, "--backup-dir", backups)
	runCLIWant(t, ExitOK, "diff", "-f", lab9)
}

// TestLabSeedsSONiCPorts: a SONiC twin of `lab -f` carries each inventory
// port's PORT entry at the intent's speed (the operator's breakout; fec as
// minigraph.py sets it: rs at 100G only), ports outside the inventory keep
// the SKU's; a port the SKU does not have is refused naming it.
func TestLabSeedsSONiCPorts(t *testing.T) {
	reg, err := newRegistry()
	if err != nil {
		t.Fatal(err)
	}
	const head = "apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\nmetadata: {name: s}\npolicy: {preset: roce-lossless}\ninventory:\n  switches:\n"
	f, err := intent.Parse("s.yaml", []byte(head+
		"    - {name: leaf1, platform: sonic, address: \"192.0.2.1:8080\", portDefaults: {speed: 50G, cable: 3m}, ports: [{name: Ethernet0}, {name: Ethernet4, speed: 100G}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := startLabFor(t.TempDir(), reg, f, labProfiles{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	port := func(name string) map[string]any {
		v, _ := l.twins[0].Value(&gnmipb.Path{Origin: "sonic-db", Elem: []*gnmipb.PathElem{{Name: "CONFIG_DB"}, {Name: "localhost"}, {Name: "PORT"}, {Name: name}}})
		m, _ := v.(map[string]any)
		return m
	}
	if p := port("Ethernet0"); p["speed"] != "50000" || p["fec"] != nil {
		t.Errorf("PORT|Ethernet0 = %v, want speed 50000 without fec", p)
	}
	if p := port("Ethernet4"); p["speed"] != "100000" || p["fec"] != "rs" {
		t.Errorf("PORT|Ethernet4 = %v, want speed 100000 fec rs", p)
	}
	if p := port("Ethernet8"); p["speed"] != "100000" || p["fec"] != "rs" {
		t.Errorf("PORT|Ethernet8 (not in the inventory) = %v, want the SKU's", p)
	}
	f, err = intent.Parse("s.yaml", []byte(head+
		"    - {name: leaf1, platform: sonic, address: \"192.0.2.1:8080\", portDefaults: {speed: 100G, cable: 3m}, ports: [{name: Ethernet2}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if l, err := startLabFor(t.TempDir(), reg, f, labProfiles{}); err == nil || !strings.Contains(err.Error(), "port Ethernet2 is not a port of the ") {
		if l != nil {
			l.close()
		}
		t.Errorf("a port the SKU does not have: %v", err)
	}
}
