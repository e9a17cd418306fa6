package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the signal tests run this test binary as fabricctl itself
// (FABRICCTL_TEST_MAIN=1): a real process, real signals, no go build.
//
// The tests' switch locks go to a directory of their own ($XDG_RUNTIME_DIR,
// which every fabricctl they start inherits), not to the machine's
// /run/fabricctl.
func TestMain(m *testing.M) {
	if os.Getenv("FABRICCTL_TEST_MAIN") == "1" {
		os.Exit(mainWith(func() { fmt.Fprintln(os.Stderr, signalsReady) }))
	}
	dir, err := os.MkdirTemp("", "fabricctl-test-run-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_RUNTIME_DIR", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// exitLimit is how soon after a signal fabricctl must have exited: 1 s (the
// race detector's slower exit gets 2 s) on a quiet machine, plus twice what
// a whole fabricctl run (start, `version`, exit) takes here and now
// (exitAllowance): a busy machine slows every process, and the limit says
// "fabricctl gave up on its blocked read", not "the machine was quiet".
var exitLimit = map[bool]time.Duration{false: time.Second, true: 2 * time.Second}[raceEnabled]

var (
	allowanceOnce sync.Once
	allowance     time.Duration
)

// exitAllowance is exitLimit plus twice the slowest of three runs of
// `fabricctl version` as a subprocess, measured once per test binary.
func exitAllowance(t *testing.T) time.Duration {
	t.Helper()
	allowanceOnce.Do(func() {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		var slowest time.Duration
		for range 3 {
			cmd := exec.Command(exe, "version")
			cmd.Env = append(os.Environ(), "FABRICCTL_TEST_MAIN=1")
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("fabricctl version: %v\n%s", err, out)
			}
			slowest = max(slowest, time.Since(start))
		}
		allowance = exitLimit + 2*slowest
	})
	t.Logf("exit limit %s (1 s, plus twice the slowest of three fabricctl runs here)", allowance)
	return allowance
}

// signalsReady is what the subprocess prints once it catches signals.
const signalsReady = "fabricctl-test: signals are caught"

// proc is fabricctl running as a subprocess.
type proc struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	stderr *lockedBuffer
	done   chan struct{}
	code   int
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func startFabricctl(t *testing.T, stdin io.Reader, args ...string) *proc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: exec.Command(exe, args...), stderr: &lockedBuffer{}, done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), "FABRICCTL_TEST_MAIN=1")
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = stdin, &p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		p.code = p.cmd.ProcessState.ExitCode()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// waitSignalReady waits until the process catches SIGINT and SIGTERM
// (signal.NotifyContext ran): a signal sent earlier would kill it with the
// Go runtime's default action, which is not what is being tested.
func (p *proc) waitSignalReady(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute) // a loaded machine starts processes slowly
	for !strings.Contains(p.stderr.String(), signalsReady) {
		if time.Now().After(deadline) {
			t.Fatalf("fabricctl never said it catches signals:\n%s", p.stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// signalAndWait sends sig and returns how long the process took to exit
// (failing the test after within).
func (p *proc) signalAndWait(t *testing.T, sig os.Signal, within time.Duration) time.Duration {
	t.Helper()
	p.waitSignalReady(t)
	select {
	case <-p.done:
		t.Fatalf("fabricctl exited (%d) before the signal:\n%s", p.code, p.stderr.String())
	default:
	}
	start := time.Now()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
		return time.Since(start)
	case <-time.After(within):
		t.Fatalf("fabricctl did not exit within %s of %v:\n%s", within, sig, p.stderr.String())
	}
	return 0
}

// TestSignalEndsBlockedReads: Ctrl-C or SIGTERM ends a command within 1 s
// while it waits on a FIFO nobody writes to, or on a stdin that never
// closes, and the exit code is not 0. (Before, only SIGKILL stopped them.)
func TestSignalEndsBlockedReads(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "intent.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// An *os.File, so the child reads it directly (exec copies any other
	// reader in a goroutine that Wait would wait for).
	stdin, stdinW, err := os.Pipe() // the writer stays open: no EOF
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); stdinW.Close() })
	cases := []struct {
		name  string
		sig   os.Signal
		stdin io.Reader
		args  []string
	}{
		{"check FIFO SIGINT", os.Interrupt, nil, []string{"check", "-f", fifo}},
		{"render FIFO SIGTERM", syscall.SIGTERM, nil, []string{"render", "-f", fifo}},
		{"plan stdin SIGINT", os.Interrupt, stdin, []string{"plan", "-f", "-"}},
		{"check stdin SIGTERM", syscall.SIGTERM, stdin, []string{"check", "-f", "-"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			limit := exitAllowance(t)
			p := startFabricctl(t, tc.stdin, tc.args...)
			p.waitSignalReady(t)
			// Wait until it is blocked in the open of the FIFO or the
			// read of the pipe (an event, not a guess of how long that
			// takes).
			waitFor(t, "fabricctl blocks in its read", 60*time.Second, func() bool {
				return blockedIn(t, p.cmd.Process.Pid, "fifo_open", "wait_for_partner", "pipe_read", "pipe_wait", "pipe_wait_readable")
			})
			took := p.signalAndWait(t, tc.sig, 10*limit)
			if took > limit {
				t.Errorf("exit took %s after the signal, want under %s", took, limit)
			}
			if p.code == ExitOK {
				t.Errorf("exit 0 after an interrupted %s", tc.args[0])
			}
			if !strings.Contains(p.stderr.String(), "interrupted") {
				t.Errorf("exit %d: stderr does not say it was interrupted:\n%s", p.code, p.stderr.String())
			}
		})
	}
}

// bigIntent writes an intent of n switches with many ports each: large
// enough that parsing and checking it takes a while.
func bigIntent(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\nmetadata: {name: big}\npolicy: {preset: roce-lossless}\ninventory:\n  switches:\n")
	for i := range n {
		fmt.Fprintf(&b, "    - name: leaf%d\n      platform: srlinux\n      address: 127.0.0.1:1\n      portDefaults: {speed: 400G, cable: 3m}\n      ports:\n", i)
		for j := range 64 {
			fmt.Fprintf(&b, "        - {name: ethernet-1/%d, description: \"port %d of leaf %d\"}\n", j+1, j, i)
		}
	}
	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSignalDuringLargeParse: SIGINT while check parses a large file ends
// it within 1 s and not with exit 0.
func TestSignalDuringLargeParse(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and parses a large intent")
	}
	path := bigIntent(t, 3000) // 192,000 ports, 9.5 MB (within intent.MaxNodes): seconds of parsing
	p := startFabricctl(t, nil, "check", "-f", path)
	p.waitSignalReady(t)
	time.Sleep(150 * time.Millisecond)
	select {
	case <-p.done:
		t.Skipf("check finished (%d) in under 150ms; nothing to interrupt on this machine", p.code)
	default:
	}
	limit := exitAllowance(t)
	took := p.signalAndWait(t, os.Interrupt, 10*limit)
	if took > limit {
		t.Errorf("exit took %s after SIGINT, want under %s", took, limit)
	}
	if p.code == ExitOK {
		t.Errorf("check interrupted mid-run exited 0")
	}
}

// TestSignalDuringApplyRollsBack: SIGINT while a Set hangs ends apply with
// the switches rolled back and verified (exit 4), even though the rollback
// takes longer than the grace period: a write is never cut short.
func TestSignalDuringApplyRollsBack(t *testing.T) {
	l, dir := testLab(t)
	before := map[string]string{}
	for _, tw := range l.twins {
		before[tw.Name()] = fmt.Sprint(datastore(t, tw))
	}
	leaf1 := twinByName(t, l, "leaf1")
	arrived := leaf1.HangNextSetArrived()
	p := startFabricctl(t, nil, "apply", "-f", l.file, "--backup-dir", filepath.Join(dir, "b"), "--parallel", "1", "--log-level", "info")
	// Wait until leaf1's Set is in flight and hangs (an event: a loaded
	// machine takes its time to get there).
	select {
	case <-arrived:
	case <-p.done:
		t.Fatalf("apply exited %d before its Set reached leaf1:\n%s", p.code, p.stderr.String())
	case <-time.After(2 * time.Minute):
		t.Fatalf("apply's Set never reached leaf1:\n%s", p.stderr.String())
	}
	for _, tw := range l.twins {
		tw.SetDelay(1200 * time.Millisecond) // the rollback is slow
	}
	took := p.signalAndWait(t, os.Interrupt, 30*time.Second)
	if p.code != ExitRolledBack {
		t.Fatalf("apply interrupted during a Set exited %d after %s, want 4:\n%s\n%s", p.code, took, p.stdout.String(), p.stderr.String())
	}
	if took <= signalGrace {
		t.Errorf("apply ended %s after the signal, within the grace period: the test no longer shows that a rollback is waited for", took)
	}
	for _, tw := range l.twins {
		tw.SetDelay(0)
		if got := fmt.Sprint(datastore(t, tw)); got != before[tw.Name()] {
			t.Errorf("%s not as before the run", tw.Name())
		}
	}
	sc := bufio.NewScanner(strings.NewReader(p.stdout.String()))
	for sc.Scan() {
		if strings.Contains(sc.Text(), "applied") && !strings.Contains(sc.Text(), "Apply:") {
			t.Errorf("a switch reported applied after the interrupt: %s", sc.Text())
		}
	}
}
