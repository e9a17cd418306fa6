package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// waitFor waits until cond holds, failing the test after a generous bound
// (a busy machine is slow, not stuck).
func waitFor(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSignalDuringRestoreWaitsForTheSet (issue 29): Ctrl-C while restore's
// Set is under way on the switch (the twin takes 2 s to commit it) does not
// cancel that Set: restore says which switch write it waits for, the Set
// completes, is read back, and restore reports the switch restored and
// verified (exit 0: true to the switch). Before, the Set was sent with the
// cancellable context: Ctrl-C turned it into an unknown outcome, restore
// waited silently for the Set's deadline and two reads (20 s and more,
// 620 s on SONiC) and then reported what it found.
func TestSignalDuringRestoreWaitsForTheSet(t *testing.T) {
	l, dir := testLab(t)
	backups := filepath.Join(dir, "b")
	runCLIWant(t, ExitOK, "apply", "-f", l.file, "--backup-dir", backups)
	leaf1 := twinByName(t, l, "leaf1")
	arrived, done := leaf1.SlowNextSet(2 * time.Second)
	p := startFabricctl(t, nil, "restore", "-f", l.file, "--backup", backups, "--switch", "leaf1")
	p.waitSignalReady(t)
	select {
	case <-arrived:
	case <-p.done:
		t.Fatalf("restore exited %d before its Set arrived:\n%s%s", p.code, p.stdout.String(), p.stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("restore's Set never arrived:\n%s", p.stderr.String())
	}
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("restore still running 60 s after Ctrl-C (its Set takes 2 s):\n%s", p.stderr.String())
	}
	select {
	case <-done:
	default:
		t.Error("restore exited before its Set's handler returned")
	}
	out, errOut := p.stdout.String(), p.stderr.String()
	if p.code != ExitOK || !strings.Contains(out, "switch leaf1: restored from") {
		t.Errorf("restore interrupted during its Set: exit %d, want 0 and leaf1 restored and verified:\n%s%s", p.code, out, errOut)
	}
	if !strings.Contains(errOut, "waiting for the switch writes already sent to finish and be read back: leaf1 (restore, sent") {
		t.Errorf("the wait does not say what it waits for:\n%s", errOut)
	}
	if code, _, _ := runCLI(t, t.Context(), "diff", "-f", l.file, "--switch", "leaf1"); code != ExitChanges {
		t.Errorf("leaf1 after the restore: diff exit %d, want 2 (back to before apply)", code)
	}
}

// TestSecondSignalAbandonsRestore: a second Ctrl-C while restore waits for
// a Set that takes minutes (SONiC's Set timeout is 620 s) abandons it at
// once: exit 1, the switch named with its outcome unknown.
func TestSecondSignalAbandonsRestore(t *testing.T) {
	l, dir := testLab(t)
	backups := filepath.Join(dir, "b")
	runCLIWant(t, ExitOK, "apply", "-f", l.file, "--backup-dir", backups)
	leaf2 := twinByName(t, l, "leaf2")
	arrived, _ := leaf2.SlowNextSet(3 * time.Minute)
	p := startFabricctl(t, nil, "restore", "-f", l.file, "--backup", backups, "--switch", "leaf2")
	p.waitSignalReady(t)
	select {
	case <-arrived:
	case <-p.done:
		t.Fatalf("restore exited %d before its Set arrived:\n%s%s", p.code, p.stdout.String(), p.stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("restore's Set never arrived:\n%s", p.stderr.String())
	}
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "restore says it waits and how to abandon", 60*time.Second, func() bool {
		return strings.Contains(p.stderr.String(), "Ctrl-C again abandons them")
	})
	start := time.Now()
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("restore still running 60 s after the second Ctrl-C (the Set takes 3 minutes):\n%s", p.stderr.String())
	}
	errOut := p.stderr.String()
	if p.code != ExitError || !strings.Contains(errOut, "switch leaf2 (restore, sent") || !strings.Contains(errOut, "outcome unknown") {
		t.Errorf("second Ctrl-C: exit %d after %s, want 1 and leaf2's outcome unknown:\n%s", p.code, time.Since(start), errOut)
	}
}

// TestSecondSignalAbandonsApply: as restore, apply waits after Ctrl-C for
// the Set it sent (here one that hangs until its deadline) and says so; a
// second Ctrl-C abandons it at once, naming the switch, outcome unknown.
func TestSecondSignalAbandonsApply(t *testing.T) {
	l, dir := testLab(t)
	arrived := twinByName(t, l, "leaf1").HangNextSetArrived()
	p := startFabricctl(t, nil, "apply", "-f", l.file, "--backup-dir", filepath.Join(dir, "b"), "--parallel", "1", "--timeout", "2m")
	p.waitSignalReady(t)
	select {
	case <-arrived:
	case <-p.done:
		t.Fatalf("apply exited %d before its Set arrived:\n%s", p.code, p.stderr.String())
	case <-time.After(2 * time.Minute):
		t.Fatalf("apply's Set never arrived:\n%s", p.stderr.String())
	}
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "apply says it waits and how to abandon", time.Minute, func() bool {
		return strings.Contains(p.stderr.String(), "Ctrl-C again abandons them")
	})
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		t.Fatalf("apply still running a minute after the second Ctrl-C (its Set hangs for 2 minutes):\n%s", p.stderr.String())
	}
	errOut := p.stderr.String()
	if p.code != ExitError || !strings.Contains(errOut, "switch leaf1 (set, sent") || !strings.Contains(errOut, "outcome unknown") {
		t.Errorf("second Ctrl-C: exit %d, want 1 and leaf1's outcome unknown:\n%s", p.code, errOut)
	}
}
