package remote

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLocalRun(t *testing.T) {
	tests := []struct {
		name     string
		argv     []string
		stdin    string
		want     Result
		wantExit *ExitError // nil = no error
	}{
		{
			name: "stdout and stderr",
			argv: []string{"sh", "-c", "echo out; echo err >&2"},
			want: Result{Stdout: []byte("out\n"), Stderr: []byte("err\n")},
		},
		{
			name:  "stdin",
			argv:  []string{"cat"},
			stdin: "line 1\nline 2\n",
			want:  Result{Stdout: []byte("line 1\nline 2\n")},
		},
		{
			name:     "exit code",
			argv:     []string{"sh", "-c", "echo no >&2; exit 3"},
			want:     Result{Stderr: []byte("no\n"), ExitCode: 3},
			wantExit: &ExitError{Host: "h1", Argv: []string{"sh", "-c", "echo no >&2; exit 3"}, ExitCode: 3, Stderr: "no\n"},
		},
		{
			name:     "killed by a signal",
			argv:     []string{"sh", "-c", "kill -TERM $$"},
			want:     Result{ExitCode: -1},
			wantExit: &ExitError{Host: "h1", Argv: []string{"sh", "-c", "kill -TERM $$"}, ExitCode: -1, Signal: "TERM"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Local{Name: "h1"}.Run(t.Context(), tt.argv, strings.NewReader(tt.stdin))
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(bytesEqual)); diff != "" {
				t.Errorf("Run(%q) result mismatch (-want +got):\n%s", tt.argv, diff)
			}
			if tt.wantExit == nil {
				if err != nil {
					t.Fatalf("Run(%q) error = %v, want nil", tt.argv, err)
				}
				return
			}
			var ee *ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("Run(%q) error = %v, want *ExitError", tt.argv, err)
			}
			if diff := cmp.Diff(tt.wantExit, ee); diff != "" {
				t.Errorf("Run(%q) ExitError mismatch (-want +got):\n%s", tt.argv, diff)
			}
		})
	}
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

func TestLocalRunBadCommand(t *testing.T) {
	tests := []struct {
		name string
		argv []string
	}{
		{"empty", nil},
		{"empty name", []string{""}},
		{"NUL byte", []string{"echo", "a\x00b"}},
		{"not found", []string{"/nonexistent/fabricctl-no-such-command"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Local{Name: "h1"}.Run(t.Context(), tt.argv, nil)
			if err == nil {
				t.Fatalf("Run(%q) error = nil, want an error", tt.argv)
			}
			var ee *ExitError
			if errors.As(err, &ee) {
				t.Errorf("Run(%q) error = %v, an *ExitError; want a failure to start", tt.argv, err)
			}
			if !strings.Contains(err.Error(), "host h1") {
				t.Errorf("Run(%q) error = %q, want it to name host h1", tt.argv, err)
			}
		})
	}
}

// A cancelled Run kills the command and whatever it started, and returns the
// context's error promptly instead of waiting for the command.
func TestLocalRunContextKills(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := Local{}.Run(ctx, []string{"sh", "-c", "sleep 30 & echo child $!; echo self $$; wait"}, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run() error = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Run() took %v after its context ended", d)
	}
	waitGone(t, pidsIn(t, string(res.Stdout), "child", "self")...)
}

// Run returns when the command exits even if it left a background child
// holding its stdout, and the child is killed (no orphans).
func TestLocalRunKillsLeftovers(t *testing.T) {
	start := time.Now()
	res, err := Local{}.Run(t.Context(), []string{"sh", "-c", "sleep 30 & echo child $!"}, nil)
	if err != nil {
		t.Fatalf("Run() error = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Run() took %v, want it to return when sh exits", d)
	}
	waitGone(t, pidsIn(t, string(res.Stdout), "child")...)
}

func TestLocalStartStop(t *testing.T) {
	p, err := Local{}.Start(t.Context(), []string{"sh", "-c", "sleep 30 & echo child $!; echo self $$; echo ready; wait"})
	if err != nil {
		t.Fatalf("Start() error = %v", err)
	}
	out := waitOutput(t, p, "ready")
	pids := pidsIn(t, out, "child", "self")
	for _, pid := range pids {
		if !alive(pid) {
			t.Fatalf("pid %d not running before Stop", pid)
		}
	}
	res, err := p.Stop()
	if err != nil {
		t.Errorf("Stop() error = %v, want nil (killed as asked)", err)
	}
	if res.ExitCode != -1 {
		t.Errorf("Stop() exit code = %d, want -1 (killed)", res.ExitCode)
	}
	if !strings.Contains(string(res.Stdout), "ready") {
		t.Errorf("Stop() stdout = %q, want what the command printed", res.Stdout)
	}
	waitGone(t, pids...)
	// Stop and Wait are idempotent.
	res2, err2 := p.Stop()
	res3, err3 := p.Wait()
	if diff := cmp.Diff(res, res2); diff != "" || err2 != nil {
		t.Errorf("second Stop() = %v, %v; mismatch (-want +got):\n%s", res2, err2, diff)
	}
	if diff := cmp.Diff(res, res3); diff != "" || err3 != nil {
		t.Errorf("Wait() after Stop() = %v, %v; mismatch (-want +got):\n%s", res3, err3, diff)
	}
}

func TestLocalStartContextKills(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	p, err := Local{}.Start(ctx, []string{"sh", "-c", "sleep 30 & echo child $!; echo self $$; wait"})
	if err != nil {
		t.Fatalf("Start() error = %v", err)
	}
	out := waitOutput(t, p, "self")
	cancel()
	_, err = p.Wait()
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Wait() error = %v, want context.Canceled", err)
	}
	waitGone(t, pidsIn(t, out, "child", "self")...)
}

func TestLocalStartWait(t *testing.T) {
	p, err := Local{Name: "h1"}.Start(t.Context(), []string{"sh", "-c", "echo hi; exit 2"})
	if err != nil {
		t.Fatalf("Start() error = %v", err)
	}
	res, err := p.Wait()
	var ee *ExitError
	if !errors.As(err, &ee) || ee.ExitCode != 2 || ee.Host != "h1" {
		t.Errorf("Wait() error = %#v, want *ExitError for h1 with exit code 2", err)
	}
	if got, want := string(res.Stdout), "hi\n"; got != want {
		t.Errorf("Wait() stdout = %q, want %q", got, want)
	}
	// Stop after the natural end reports that end, not a kill.
	if _, err := p.Stop(); !errors.As(err, &ee) {
		t.Errorf("Stop() after exit error = %v, want the same *ExitError", err)
	}
}

func TestLocalStartCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := (Local{}).Start(ctx, []string{"true"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Start() with a cancelled context error = %v, want context.Canceled", err)
	}
}
