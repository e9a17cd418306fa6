package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabricctl/fabricctl/internal/netnstest"
)

// The small traps a new user meets (issue 32, item 6).

// TestIntentAsArgumentHint: an intent given without -f is a usage error
// that says how to give it, for every command that reads one with -f.
func TestIntentAsArgumentHint(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "fabric.yaml"}, `unexpected argument "fabric.yaml": the intent is given with -f (did you mean fabricctl check -f fabric.yaml?)`},
		{[]string{"check", "-f", "a.yaml", "b.yaml"}, `unexpected argument "b.yaml": each intent file needs its own -f (did you mean -f b.yaml?)`},
		{[]string{"plan", "fabric.yml"}, `did you mean fabricctl plan -f fabric.yml?`},
		{[]string{"host", "plan", "fabric.yaml"}, `did you mean fabricctl host plan -f fabric.yaml?`},
		{[]string{"validate", "fabric.yaml"}, `did you mean fabricctl validate -f fabric.yaml?`},
		{[]string{"apply", "fabric.yaml"}, `did you mean fabricctl apply -f fabric.yaml?); apply's argument is a plan file written by plan --out`},
	} {
		_, errOut, code := runFabricctl(t, tc.args...)
		if code != ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("fabricctl %s: exit %d, stderr %q; want %d and %q", strings.Join(tc.args, " "), code, errOut, ExitUsage, tc.want)
		}
	}
	// A word that is no file keeps cobra's own message.
	if _, errOut, code := runFabricctl(t, "check", "verbose"); code != ExitUsage || !strings.Contains(errOut, `unknown command "verbose"`) {
		t.Errorf("check verbose: exit %d, %q", code, errOut)
	}
}

// TestHeadroomRefusesSubGigabitSpeed: --speed 400M is refused as the intent
// refuses speed: 400M (FC127), with the same hint.
func TestHeadroomRefusesSubGigabitSpeed(t *testing.T) {
	_, errOut, code := runFabricctl(t, "headroom", "--speed", "400M")
	if code != ExitUsage || !strings.Contains(errOut, "--speed 400M: 400M is 400 Mb/s, below 1G: too slow for RoCE and surely a unit typo; did you mean 400G? (FC127)") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if _, errOut, code := runFabricctl(t, "headroom", "--speed", "1G", "--cable", "3m"); code != ExitOK {
		t.Errorf("--speed 1G: exit %d, %q", code, errOut)
	}
}

// TestCompletionScenarioAndASIC: shell completion offers simulate's built-in
// scenarios (with the intent's switch links for link-down), .yaml files for
// a path, and the ASICs of headroom --asic.
func TestCompletionScenarioAndASIC(t *testing.T) {
	complete := func(args ...string) string {
		out, errOut, code := runFabricctl(t, append([]string{"__complete"}, args...)...)
		if code != 0 {
			t.Fatalf("__complete %v: exit %d, %s", args, code, errOut)
		}
		return out
	}
	toRepoRoot(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"simulate", "-f", "examples/sonic-pod.yaml", "--scenario", ""}, []string{"incast:16:1\n", "alltoall\n", "slow-receiver:50\n", "link-down:\n", ":4\n"}},
		{[]string{"simulate", "-f", "examples/sonic-pod.yaml", "--scenario", "link-down:"}, []string{"link-down:leaf1-spine1\n", "link-down:leaf2-spine2\n"}},
		{[]string{"simulate", "-f", "examples/sonic-pod.yaml", "--scenario", "scen"}, []string{"yaml\n", "yml\n", ":8\n"}},
		{[]string{"headroom", "--speed", "400G", "--asic", "spec"}, []string{"spectrum-2\n", "spectrum-4\n", ":4\n"}},
	} {
		out := complete(tc.args...)
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("__complete %v = %q, want %q in it", tc.args, out, w)
			}
		}
	}
}

// TestWatchHelpOffersOnlyItsFlags: watch never Sets and gives each switch
// its own session, so --set-timeout and --parallel are not its flags;
// --parallel mentions remote hosts only where there are some.
func TestWatchHelpOffersOnlyItsFlags(t *testing.T) {
	help, _ := helpOf(t)
	for _, f := range []string{"--set-timeout", "--parallel"} {
		if strings.Contains(help["fabricctl watch"], f) {
			t.Errorf("watch --help lists %s", f)
		}
	}
	if _, errOut, code := runFabricctl(t, "watch", "-f", "x.yaml", "--parallel", "4"); code != ExitUsage || !strings.Contains(errOut, "unknown flag: --parallel") {
		t.Errorf("watch --parallel: exit %d, %q", code, errOut)
	}
	for path, want := range map[string]string{
		"fabricctl plan":     "switches and remote hosts worked on at once",
		"fabricctl restore":  "switches worked on at once",
		"fabricctl validate": "switches worked on at once",
	} {
		// The usage column wraps where other flags are long (--lab): read it as words.
		if !strings.Contains(strings.Join(strings.Fields(help[path]), " "), want) {
			t.Errorf("%s --help: --parallel does not read %q", path, want)
		}
	}
}

// TestHostErrorsNameTheHostOnceAndHint: a host that cannot be reached over
// SSH is named once in its error (the SSH runner's error names it already),
// and the run says how to leave the hosts out.
func TestHostErrorsNameTheHostOnceAndHint(t *testing.T) {
	t.Setenv("SSH_AUTH_SOCK", "")
	file := writeIntent(t, `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: hosts}
policy: {preset: roce-lossless}
inventory:
  hosts:
    - name: gpu{1..2}
      address: 198.51.100.{1..2}
      ssh: {user: root, knownHosts: known_hosts}
      nics:
        - {interface: eth0, speed: 400G}
`)
	out, errOut, code := runFabricctl(t, "plan", "-f", file)
	if code != ExitError {
		t.Fatalf("exit %d, want %d\n%s%s", code, ExitError, out, errOut)
	}
	all := out + errOut
	if strings.Contains(all, "host gpu1: host gpu1:") || !strings.Contains(all, "host gpu1: no ssh credentials") {
		t.Errorf("host named twice or not at all:\n%s", all)
	}
	if !strings.Contains(errOut, "2 of 2 hosts failed") || !strings.Contains(errOut, "--skip-hosts leaves the hosts out") {
		t.Errorf("no --skip-hosts hint on stderr:\n%s", errOut)
	}
}

// TestValidateUDPNetnsNeedsNoSSH: hosts mapped to network namespaces with
// --netns run on this machine whatever address the intent gives them (the
// inventory of the real fabric, reused in a lab): validate asks for no SSH
// credentials. A host left unmapped is a usage error naming it and the two
// ways to run it here. Needs root for the namespaces (netnstest skips).
func TestValidateUDPNetnsNeedsNoSSH(t *testing.T) {
	t.Setenv("SSH_AUTH_SOCK", "")
	intentFor := func(n int) string {
		var b strings.Builder
		b.WriteString("apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\nmetadata: {name: netns-lab}\npolicy:\n  preset: roce-lossless\ninventory:\n  hosts:\n")
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "    - name: gpu%d\n      address: 198.51.100.%d\n      ssh: {user: root}\n      nics:\n        - {interface: eth0, speed: 10G, address: 10.97.0.%d}\n", i, i, i)
		}
		return b.String()
	}
	t.Run("unmapped host", func(t *testing.T) {
		file := writeIntent(t, intentFor(3))
		_, errOut, code := runFabricctl(t, "validate", "-f", file, "--engine", "udp", "--netns", "gpu1=a", "--netns", "gpu2=b", "--no-readback", "--no-counters")
		want := "--netns maps 2 of 3 hosts; gpu3 is neither mapped nor local: give each a --netns gpu3=NAMESPACE, or address: local in the intent"
		if code != ExitUsage || !strings.Contains(errOut, want) || strings.Contains(errOut, "ssh credentials") {
			t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut, ExitUsage, want)
		}
	})
	t.Run("all mapped", func(t *testing.T) {
		sw := netnstest.New(t) // skips unless root
		mustRun(t, sw.Command("ip", "link", "add", "br0", "type", "bridge"))
		mustRun(t, sw.Command("ip", "link", "set", "br0", "up"))
		args := []string{"validate", "--engine", "udp", "--udp-packets", "200", "--udp-rate", "2000", "--no-latency", "--no-incast"}
		for i := 1; i <= 2; i++ {
			h := netnstest.New(t)
			port := fmt.Sprintf("swp%d", i)
			mustRun(t, exec.Command("ip", "link", "add", "eth0", "netns", h.Name, "type", "veth", "peer", "name", port, "netns", sw.Name))
			mustRun(t, sw.Command("ip", "link", "set", port, "master", "br0"))
			mustRun(t, sw.Command("ip", "link", "set", port, "up"))
			mustRun(t, h.Command("ip", "addr", "add", fmt.Sprintf("10.97.0.%d/24", i), "dev", "eth0"))
			mustRun(t, h.Command("ip", "link", "set", "eth0", "up"))
			args = append(args, "--netns", fmt.Sprintf("gpu%d=%s", i, h.Name))
		}
		file := filepath.Join(t.TempDir(), "lab.yaml")
		if err := os.WriteFile(file, []byte(intentFor(2)), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "-f", file)
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		var stdout, stderr bytes.Buffer
		code := run(ctx, args, strings.NewReader(""), &stdout, &stderr)
		// The traffic ran here: its verdict (a loss on a loaded machine
		// fails a check, exit 3) is not what this test is about; asking
		// for SSH (exit 1 before any traffic) is.
		if (code != ExitOK && code != ExitCheckFailed) || strings.Contains(strings.ToLower(stderr.String()), "ssh") || !strings.Contains(stdout.String(), "traffic.loss") {
			t.Fatalf("exit %d, want the traffic run here without SSH\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
		}
	})
}
