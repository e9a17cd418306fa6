package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fabricctl/fabricctl/intent"
)

// Memory budget of every command on the largest intent fabricctl accepts
// (README "Limits"): the Go heap is held to memLimit by GOMEMLIMIT, the
// address space to addrLimit by ulimit -v, and the resident peak must stay
// under rssBudget.
const (
	memLimit  = "256MiB"
	addrLimit = 4 << 20 // KiB (ulimit -v): 4 GiB of address space
	rssBudget = 400 << 20
)

// largestIntent writes the largest accepted intent: MaxObjects ports, on
// switches of MaxPortsPerSwitch ports each, every switch unreachable
// (127.0.0.1 ports nobody listens on), in a few hundred bytes of ranges.
func largestIntent(t *testing.T) string {
	t.Helper()
	n := intent.MaxObjects / intent.MaxPortsPerSwitch
	src := fmt.Sprintf(`apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: largest}
policy: {preset: roce-lossless}
inventory:
  switches:
    - name: leaf{1..%d}
      platform: srlinux
      address: "127.0.0.1:{40001..%d}"
      tls: {insecure: true}
      portDefaults: {speed: 400G, cable: 3m}
      ports:
        - name: ethernet-1/{1..%d}
`, n, 40000+n, intent.MaxPortsPerSwitch)
	path := filepath.Join(t.TempDir(), "largest.yaml")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// peakRSS is the process's resident high-water mark (VmHWM), 0 if gone.
func peakRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// TestLargestIntentMemory runs check, render (text and JSON), plan and
// apply on the largest accepted intent under GOMEMLIMIT and ulimit -v. check
// runs to the end. The others stream switch by switch and would take
// minutes to finish on this intent, so each runs for a bounded time: it must
// not have died (out of memory) and its resident peak must be under the
// budget. Before streaming, render held every switch's payload and
// indented the whole output at once (6 GB on 4.9 M ports).
func TestLargestIntentMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every command on a 1,000,000-port intent")
	}
	if raceEnabled {
		t.Skip("the race detector multiplies memory use: the budget is measured without it")
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc to read the resident peak")
	}
	file := largestIntent(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	backups := filepath.Join(t.TempDir(), "b")
	cases := []struct {
		args    []string
		runFor  time.Duration // 0 = to the end
		wantAny []int         // exit codes accepted when it ends
	}{
		{[]string{"check", "-f", file}, 0, []int{ExitOK, ExitCheckFailed}},
		{[]string{"render", "-f", file}, 4 * time.Second, []int{ExitOK}},
		{[]string{"render", "-f", file, "-o", "json"}, 4 * time.Second, []int{ExitOK}},
		{[]string{"plan", "-f", file, "--timeout", "1s"}, 4 * time.Second, []int{ExitError}},
		{[]string{"apply", "-f", file, "--timeout", "1s", "--backup-dir", backups}, 4 * time.Second, []int{ExitError}},
	}
	for _, tc := range cases {
		name := tc.args[0]
		if slices.Contains(tc.args, "json") {
			name += " json"
		}
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command("/bin/sh", append([]string{"-c", fmt.Sprintf(`ulimit -v %d && exec "$0" "$@"`, addrLimit), exe}, tc.args...)...)
			cmd.Env = append(os.Environ(), "FABRICCTL_TEST_MAIN=1", "GOMEMLIMIT="+memLimit)
			devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer devnull.Close()
			stderr := &lockedBuffer{}
			cmd.Stdout, cmd.Stderr = devnull, stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			var peak int64
			var timeout <-chan time.Time
			if tc.runFor > 0 {
				timeout = time.After(tc.runFor)
			}
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			ended := false
			for !ended {
				select {
				case <-done:
					ended = true
				case <-timeout:
					peak = max(peak, peakRSS(cmd.Process.Pid))
					_ = cmd.Process.Kill()
					<-done
					timeout, ended = nil, true
					t.Logf("%s: stopped after %s, still working (streaming)", tc.args[0], tc.runFor)
				case <-tick.C:
					peak = max(peak, peakRSS(cmd.Process.Pid))
				}
			}
			if cmd.ProcessState.Exited() {
				code := cmd.ProcessState.ExitCode()
				ok := false
				for _, c := range tc.wantAny {
					ok = ok || c == code
				}
				if !ok || strings.Contains(stderr.String(), "out of memory") {
					t.Errorf("%s exited %d:\n%.2000s", tc.args[0], code, stderr.String())
				}
			}
			t.Logf("%s: resident peak %d MiB", tc.args[0], peak>>20)
			if peak > rssBudget {
				t.Errorf("%s: resident peak %d MiB, over the %d MiB budget", tc.args[0], peak>>20, rssBudget>>20)
			}
		})
	}
}
