package clab

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestE2EScriptFailsLoudlyAndCleansUp runs containerlab/e2e.sh for real,
// with test doubles of containerlab, docker, modprobe and sshpass (scripts
// that record their arguments), inside a fresh network namespace in which
// nothing is reachable. It proves the script's control flow on a machine
// without Docker: it stops at the first broken step and names it, never
// deploys an intent that fails check, and destroys a deployed lab on the
// way out.
func TestE2EScriptFailsLoudlyAndCleansUp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fabricctl")
	}
	if os.Geteuid() != 0 {
		t.Skip("e2e.sh refuses to run without root (containerlab and ip netns need it)")
	}
	for _, c := range []string{"bash", "unshare", "go", "ssh-keygen", "awk", "timeout"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Skipf("%s is not installed", c)
		}
	}
	tmp := t.TempDir()
	labs := filepath.Join(tmp, "containerlab")
	for _, f := range []string{"e2e.sh", "hosts/host-setup.sh", "srl-leafspine/srl-leafspine.clab.yml", "srl-leafspine/fabric.yaml"} {
		copyFile(t, filepath.Join(labsDir, f), filepath.Join(labs, f))
	}
	bin := filepath.Join(tmp, "fabricctl")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/fabricctl").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	fake := filepath.Join(tmp, "fakebin")
	calls := filepath.Join(tmp, "calls.log")
	for name, code := range map[string]int{"containerlab": 0, "docker": 1, "modprobe": 1, "sshpass": 1} {
		script := "#!/bin/sh\n# test double of " + name + ": records its arguments\necho \"" + name + " $*\" >> " + calls + "\nexit " + string(rune('0'+code)) + "\n"
		if err := os.MkdirAll(fake, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(fake, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run := func(t *testing.T, reports string) (string, error) {
		t.Helper()
		if err := os.WriteFile(calls, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		// unshare -n: a new network namespace with only a down loopback, so
		// the script's probes of the lab addresses reach nothing.
		cmd := exec.Command("unshare", "-n", "bash", filepath.Join(labs, "e2e.sh"), "srl-leafspine")
		cmd.Env = append(os.Environ(), "PATH="+fake+":"+os.Getenv("PATH"), "FABRICCTL="+bin, "READY_TIMEOUT=1",
			"REPORTS_DIR="+reports, "SRL_PASSWORD=do-not-print-me")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	readCalls := func(t *testing.T) string {
		t.Helper()
		b, err := os.ReadFile(calls)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	t.Run("unreachable hosts", func(t *testing.T) {
		reports := filepath.Join(tmp, "reports-a")
		out, err := run(t, reports)
		if err == nil {
			t.Fatalf("e2e.sh succeeded with no lab behind it:\n%s", out)
		}
		if !strings.Contains(out, `FAILED at step "wait for the hosts (sshd)"`) {
			t.Errorf("output does not name the broken step:\n%s", out)
		}
		c := readCalls(t)
		deploy := strings.Index(c, "containerlab deploy -t "+filepath.Join(labs, "srl-leafspine", "srl-leafspine.clab.yml"))
		destroy := strings.Index(c, "containerlab destroy -t "+filepath.Join(labs, "srl-leafspine", "srl-leafspine.clab.yml")+" --cleanup")
		if deploy < 0 || destroy < deploy {
			t.Errorf("want deploy, then destroy on the way out; calls:\n%s", c)
		}
		if _, err := os.Stat(filepath.Join(reports, "check.json")); err != nil {
			t.Errorf("no check report: %v", err)
		}
		if _, err := os.Stat(filepath.Join(labs, "srl-leafspine", "lab_key.pub")); err != nil {
			t.Errorf("the lab key the hosts bind was not generated: %v", err)
		}
		if strings.Contains(out, "do-not-print-me") {
			t.Error("the script printed SRL_PASSWORD")
		}
	})

	t.Run("intent fails check", func(t *testing.T) {
		intent := filepath.Join(labs, "srl-leafspine", "fabric.yaml")
		b, err := os.ReadFile(intent)
		if err != nil {
			t.Fatal(err)
		}
		broken := strings.Replace(string(b), "mtu: 9216", "mtu: 9216\n  globalPause: true", 1)
		if err := os.WriteFile(intent, []byte(broken), 0o644); err != nil {
			t.Fatal(err)
		}
		reports := filepath.Join(tmp, "reports-b")
		out, err := run(t, reports)
		if err == nil {
			t.Fatalf("e2e.sh succeeded with an intent that fails check:\n%s", out)
		}
		if !strings.Contains(out, `FAILED at step "check"`) {
			t.Errorf("output does not name the check step:\n%s", out)
		}
		if c := readCalls(t); strings.Contains(c, "containerlab") {
			t.Errorf("containerlab was called although check failed:\n%s", c)
		}
		if b, err := os.ReadFile(filepath.Join(reports, "exit-codes.txt")); err != nil || !strings.Contains(string(b), "check exit 3") {
			t.Errorf("exit-codes.txt = %q, %v; want check exit 3", b, err)
		}
	})
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, st.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
}
