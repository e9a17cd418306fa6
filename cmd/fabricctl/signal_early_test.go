//go:build linux

package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSignalBeforeMain (issue 29): a SIGINT that comes while fabricctl is
// still initializing its packages (before main, before cobra) is caught
// and ends the command as "interrupted" (exit 1), not by the default
// action (killed by the signal: 130 in a shell). Before, the handler was
// installed in main, after every package's init (~15 ms): 1 of 40 runs
// signalled early died that way.
//
// The child is held inside its package inits deterministically: it runs
// with GODEBUG=inittrace=1, which writes a line to stderr as each package
// finishes its init, and its stderr is a pipe shrunk to one page that the
// test stops reading once os/signal's line came. The child fills the
// pipe and blocks in the init of some later package (the pipe holds about
// 60 lines; about 180 more packages come before main). Only then is the
// signal sent; then the pipe is drained and the child goes on.
func TestSignalBeforeMain(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "intent.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	size, err := unix.FcntlInt(w.Fd(), unix.F_SETPIPE_SZ, 4096)
	if err != nil {
		t.Skipf("cannot shrink a pipe here: %v", err)
	}
	cmd := exec.Command(exe, "check", "-f", fifo)
	cmd.Env = append(os.Environ(), "FABRICCTL_TEST_MAIN=1", "GODEBUG=inittrace=1")
	cmd.Stderr = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	// Read one byte at a time up to os/signal's init line, and no further.
	var seen bytes.Buffer
	one := make([]byte, 1)
	for !strings.Contains(seen.String(), "init os/signal @") || !strings.HasSuffix(seen.String(), "\n") {
		if _, err := r.Read(one); err != nil {
			t.Fatalf("child's stderr ended before os/signal's init (%v):\n%s", err, seen.String())
		}
		seen.WriteByte(one[0])
	}
	// Wait until the child is blocked writing to the full pipe (a thread
	// of it sleeps in pipe_write): it is inside an init.
	deadline := time.Now().Add(60 * time.Second)
	for !blockedInPipeWrite(t, cmd.Process.Pid) {
		if time.Now().After(deadline) {
			n, _ := unix.IoctlGetInt(int(r.Fd()), unix.TIOCINQ) // FIONREAD
			t.Fatalf("the child never blocked writing its stderr pipe (%d of %d bytes in it)", n, size)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(r) // lets the child go on; ends when it exits
	err = cmd.Wait()
	all := seen.String() + string(rest)
	if i := strings.Index(all, "init main @"); i >= 0 && i < seen.Len()+size {
		t.Fatalf("main's init was already in the pipe when the signal was sent: the child was not held before main")
	}
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		t.Fatalf("fabricctl was killed by %v (the default action): the signal came before its handler", ws.Signal())
	}
	if cmd.ProcessState.ExitCode() != ExitError || !strings.Contains(all, "interrupted") {
		t.Errorf("exit %d (%v), want 1 and \"interrupted\"; stderr after the inits:\n%s", cmd.ProcessState.ExitCode(), err, tail(all, 2000))
	}
}

// blockedInPipeWrite reports whether a thread of process pid sleeps in the
// kernel's pipe_write or anon_pipe_write (/proc/PID/task/TID/wchan).
func blockedInPipeWrite(t *testing.T, pid int) bool {
	t.Helper()
	return blockedIn(t, pid, "pipe_write")
}

// blockedIn reports whether a thread of process pid sleeps in a kernel
// function whose name ends with one of suffixes (/proc/PID/task/TID/wchan:
// "wait_for_partner" (a FIFO's open), "pipe_read", "anon_pipe_write", ...).
func blockedIn(t *testing.T, pid int, suffixes ...string) bool {
	t.Helper()
	tasks, err := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "wchan"))
	if err != nil || len(tasks) == 0 {
		t.Skipf("no /proc/%d/task/*/wchan here", pid)
	}
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, s := range suffixes {
			if strings.HasSuffix(string(b), s) {
				return true
			}
		}
	}
	return false
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
