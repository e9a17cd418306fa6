package main

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/fabricctl/fabricctl/switchdrv"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"golang.org/x/sys/unix"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/remote"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

const promptText = "Apply these changes to 1 switch? Only 'yes' is accepted: "

// interactiveFabric starts an SR Linux device twin and writes an intent
// for it (plus, with remoteHost, the remote host gpu9).
func interactiveFabric(t *testing.T, remoteHost bool) (tw *twin.Twin, file string) {
	t.Helper()
	tw, err := twin.Start(twin.Options{Name: "leaf1", Platform: intent.PlatformSRLinux})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tw.Close)
	y := `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: f}
policy: {preset: roce-lossless}
inventory:
  switches:
    - name: leaf1
      platform: srlinux
      address: "` + tw.Addr() + `"
      tls: {insecure: true}
      portDefaults: {speed: 400G, cable: 3m}
      ports:
        - name: ethernet-1/1
`
	if remoteHost {
		y += `  hosts:
    - name: gpu9
      address: 10.0.0.9
      nics:
        - {interface: eth0, rdma: mlx5_0, speed: 400G}
`
	}
	file = filepath.Join(t.TempDir(), "f.yaml")
	if err := os.WriteFile(file, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	seedFromIntent(t, tw, file)
	return tw, file
}

// seedFromIntent gives twin tw what the intent in file relies on and
// fabricctl does not write (seedUnderlay, as fabricctl lab does: the SR
// Linux ports' routed subinterfaces with their ip-mtu), for the switch
// of the twin's name.
func seedFromIntent(t *testing.T, tw *twin.Twin, file string) {
	t.Helper()
	f, err := intent.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	sw := f.Switch(tw.Name())
	if sw == nil {
		t.Fatalf("no switch %s in %s", tw.Name(), file)
	}
	if _, err := seedUnderlay(tw, f, sw, true); err != nil {
		t.Fatal(err)
	}
}

// datastore is the twin's whole (origin-less) datastore.
func datastore(t *testing.T, tw *twin.Twin) any {
	t.Helper()
	v, ok := tw.Value(&gnmipb.Path{})
	if !ok {
		t.Fatal("twin: no datastore root")
	}
	return v
}

// interactiveApply runs apply --interactive with stdin as the answer; the
// terminal check is a test double saying stdin is a terminal.
func interactiveApply(ctx context.Context, file, backups, planFile, output string, stdin io.Reader) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	d := &deps{stdin: stdin, stdout: &out, stderr: &errb, log: slog.New(slog.DiscardHandler)}
	o := &applyOptions{
		switchFlags:   switchFlags{files: []string{file}, timeout: 5 * time.Second, parallel: 4, hostBinary: "fabricctl"},
		output:        output,
		backupDir:     backups,
		lockDir:       switchdrv.DefaultLockDir(),
		planFile:      planFile,
		interactive:   true,
		stdinTerminal: func(r io.Reader) bool { return r == stdin },
	}
	code = exitCode(o.run(ctx, d, &out), &errb)
	return code, out.String(), errb.String()
}

// TestApplyInteractive: only a line "yes" applies; any other answer or end
// of input exits 1, writes no backup and sends no Set, and the twin's
// datastore is what it was.
func TestApplyInteractive(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answer  string
		applied bool
	}{
		{name: "yes", answer: "yes\n", applied: true},
		{name: "yes CRLF", answer: "yes\r\n", applied: true},
		{name: "no", answer: "no\n"},
		{name: "YES", answer: "YES\n"},
		{name: "y", answer: "y\n"},
		{name: "yes with spaces", answer: " yes \n"},
		{name: "empty line", answer: "\n"},
		{name: "EOF", answer: ""},
		{name: "yes then EOF without newline", answer: "yes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tw, file := interactiveFabric(t, false)
			before := datastore(t, tw)
			backups := filepath.Join(t.TempDir(), "backups")
			code, out, errOut := interactiveApply(t.Context(), file, backups, "", "text", strings.NewReader(tc.answer))

			if !strings.Contains(out, "switch leaf1 (srlinux):") || !strings.Contains(out, "Plan: ") {
				t.Errorf("the plan was not shown before the question:\n%s", out)
			}
			if !strings.Contains(errOut, promptText) {
				t.Errorf("stderr lacks the question %q:\n%s", promptText, errOut)
			}
			after := datastore(t, tw)
			if tc.applied {
				if code != ExitOK || tw.Sets() != 1 {
					t.Fatalf("got exit %d and %d Sets, want 0 and 1:\n%s%s", code, tw.Sets(), out, errOut)
				}
				if cmp.Equal(before, after) {
					t.Error("the twin's datastore did not change after yes")
				}
				if !strings.Contains(out, "switch leaf1: applied") {
					t.Errorf("no apply result:\n%s", out)
				}
				return
			}
			if code != ExitError {
				t.Errorf("got exit %d, want %d", code, ExitError)
			}
			if !strings.Contains(errOut, "fabricctl: apply cancelled: nothing was changed\n") {
				t.Errorf("stderr lacks the cancel message:\n%s", errOut)
			}
			if tw.Sets() != 0 {
				t.Errorf("got %d Sets after %q, want none", tw.Sets(), tc.answer)
			}
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("the twin's datastore changed after %q (-want +got):\n%s", tc.answer, diff)
			}
			if _, err := os.Stat(backups); !os.IsNotExist(err) {
				t.Errorf("backup dir %s: got %v, want it never created", backups, err)
			}
			if strings.Contains(out, "Apply:") {
				t.Errorf("an apply result was printed after cancelling:\n%s", out)
			}
		})
	}
}

// TestApplyInteractiveNoChanges: with nothing to change apply says so and
// does not ask (stdin at EOF would otherwise cancel).
func TestApplyInteractiveNoChanges(t *testing.T) {
	tw, file := interactiveFabric(t, false)
	backups := filepath.Join(t.TempDir(), "b")
	if code, out, errOut := interactiveApply(t.Context(), file, backups, "", "text", strings.NewReader("yes\n")); code != ExitOK {
		t.Fatalf("first apply: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := interactiveApply(t.Context(), file, backups, "", "text", strings.NewReader(""))
	if code != ExitOK || tw.Sets() != 1 {
		t.Fatalf("got exit %d and %d Sets, want 0 and 1 (the first apply only):\n%s%s", code, tw.Sets(), out, errOut)
	}
	if !strings.Contains(errOut, "No changes") || strings.Contains(errOut, "Only 'yes'") {
		t.Errorf("want a no-changes note and no question on stderr:\n%s", errOut)
	}
}

// TestApplyInteractiveSavedPlan: a saved plan is shown and asked about;
// without --interactive a saved plan is applied without being shown.
func TestApplyInteractiveSavedPlan(t *testing.T) {
	tw, file := interactiveFabric(t, false)
	dir := t.TempDir()
	planFile := filepath.Join(dir, "plan.json")
	var out, errb bytes.Buffer
	if code := run(t.Context(), []string{"plan", "-f", file, "--out", planFile}, strings.NewReader(""), &out, &errb); code != ExitOK {
		t.Fatalf("plan --out: exit %d\n%s", code, errb.String())
	}
	before := datastore(t, tw)

	code, got, errOut := interactiveApply(t.Context(), file, filepath.Join(dir, "b"), planFile, "text", strings.NewReader("no\n"))
	if code != ExitError || tw.Sets() != 0 || !cmp.Equal(before, datastore(t, tw)) {
		t.Fatalf("no to a saved plan: exit %d, %d Sets, datastore changed %v; want 1, none, false", code, tw.Sets(), !cmp.Equal(before, datastore(t, tw)))
	}
	if !strings.Contains(got, "switch leaf1 (srlinux):") || !strings.Contains(errOut, promptText) {
		t.Errorf("the saved plan was not shown and asked about:\n%s%s", got, errOut)
	}

	code, got, errOut = interactiveApply(t.Context(), file, filepath.Join(dir, "b"), planFile, "text", strings.NewReader("yes\n"))
	if code != ExitOK || tw.Sets() != 1 || !strings.Contains(got, "switch leaf1: applied") {
		t.Fatalf("yes to a saved plan: exit %d, %d Sets:\n%s%s", code, tw.Sets(), got, errOut)
	}
}

// TestApplyInteractiveJSON: with -o json the plan and the question go to
// stderr and stdout stays one JSON summary.
func TestApplyInteractiveJSON(t *testing.T) {
	tw, file := interactiveFabric(t, false)
	code, out, errOut := interactiveApply(t.Context(), file, filepath.Join(t.TempDir(), "b"), "", "json", strings.NewReader("yes\n"))
	if code != ExitOK || tw.Sets() != 1 {
		t.Fatalf("got exit %d and %d Sets:\n%s%s", code, tw.Sets(), out, errOut)
	}
	if !strings.Contains(errOut, "switch leaf1 (srlinux):") || !strings.Contains(errOut, promptText) {
		t.Errorf("stderr lacks the plan or the question:\n%s", errOut)
	}
	var sum applyOutput
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Errorf("stdout is not one JSON summary: %v\n%s", err, out)
	}
}

// TestApplyInteractiveHosts: the question counts the remote hosts, and a
// "no" reaches neither the switch nor the host (fakeHost, a test double for
// SSH, records every command).
func TestApplyInteractiveHosts(t *testing.T) {
	tw, file := interactiveFabric(t, true)
	host := &fakeHost{name: "gpu9"}
	var out, errb bytes.Buffer
	stdin := strings.NewReader("no\n")
	d := &deps{stdin: stdin, stdout: &out, stderr: &errb, log: slog.New(slog.DiscardHandler)}
	o := &applyOptions{
		switchFlags: switchFlags{files: []string{file}, timeout: 5 * time.Second, parallel: 4, hostBinary: "fabricctl",
			hostRunner: func(intent.Host) (remote.Runner, error) { return host, nil }},
		output: "text", backupDir: filepath.Join(t.TempDir(), "b"), lockDir: switchdrv.DefaultLockDir(), interactive: true,
		stdinTerminal: func(io.Reader) bool { return true },
	}
	if code := exitCode(o.run(t.Context(), d, &out), &errb); code != ExitError || tw.Sets() != 0 {
		t.Fatalf("got exit %d and %d Sets, want 1 and none:\n%s%s", code, tw.Sets(), out.String(), errb.String())
	}
	if want := "Apply these changes to 1 switch and 1 host? Only 'yes' is accepted: "; !strings.Contains(errb.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, errb.String())
	}
	if diff := cmp.Diff([]string{"fabricctl host plan -f - --host gpu9 -o json"}, host.calls); diff != "" {
		t.Errorf("commands on the host (-want +got):\n%s", diff)
	}
}

// readSignal is a test double stdin: it signals its first Read (the
// question is waiting for an answer), then reads from r.
type readSignal struct {
	r       io.Reader
	reading chan struct{}
}

func (s *readSignal) Read(b []byte) (int, error) {
	select {
	case <-s.reading:
	default:
		close(s.reading)
	}
	return s.r.Read(b)
}

// TestApplyInteractiveInterrupt: Ctrl-C (the context ending) while the
// question waits for an answer cancels, and nothing is sent.
func TestApplyInteractiveInterrupt(t *testing.T) {
	tw, file := interactiveFabric(t, false)
	pr, pw := io.Pipe()
	defer pw.Close() // releases the read left behind
	stdin := &readSignal{r: pr, reading: make(chan struct{})}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out, errb bytes.Buffer
	d := &deps{stdin: stdin, stdout: &out, stderr: &errb, log: slog.New(slog.DiscardHandler)}
	o := &applyOptions{
		switchFlags: switchFlags{files: []string{file}, timeout: 5 * time.Second, parallel: 4, hostBinary: "fabricctl"},
		output:      "text", backupDir: filepath.Join(t.TempDir(), "b"), lockDir: switchdrv.DefaultLockDir(), interactive: true,
		stdinTerminal: func(io.Reader) bool { return true },
	}
	done := make(chan error, 1)
	go func() { done <- o.run(ctx, d, &out) }()
	select {
	case <-stdin.reading:
	case err := <-done:
		t.Fatalf("apply returned before asking: %v", err)
	}
	cancel()
	err := <-done
	if code := exitCode(err, io.Discard); code != ExitError || tw.Sets() != 0 {
		t.Errorf("got exit %d and %d Sets, want 1 and none: %v", code, tw.Sets(), err)
	}
	if err == nil || err.Error() != "apply cancelled: nothing was changed" {
		t.Errorf("got error %v, want apply cancelled: nothing was changed", err)
	}
}

// TestApplyInteractiveNeedsTerminal: --interactive with a stdin that is
// not a terminal (a CI job) is a usage error before any switch is
// contacted, with the real terminal check; without --interactive apply
// never asks, whatever stdin holds.
func TestApplyInteractiveNeedsTerminal(t *testing.T) {
	tw, file := interactiveFabric(t, false)
	backups := filepath.Join(t.TempDir(), "b")

	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	for _, stdin := range []io.Reader{strings.NewReader("yes\n"), devNull} {
		var out, errb bytes.Buffer
		code := run(t.Context(), []string{"apply", "-f", file, "--backup-dir", backups, "--interactive"}, stdin, &out, &errb)
		if code != ExitUsage || tw.Sets() != 0 {
			t.Errorf("stdin %T: got exit %d and %d Sets, want 64 and none", stdin, code, tw.Sets())
		}
		if !strings.Contains(errb.String(), "a prompt needs one") || strings.Contains(errb.String(), "Only 'yes'") {
			t.Errorf("stdin %T: stderr should refuse without asking:\n%s", stdin, errb.String())
		}
	}

	var out, errb bytes.Buffer
	code := run(t.Context(), []string{"apply", "-f", file, "--backup-dir", backups}, strings.NewReader("no\n"), &out, &errb)
	if code != ExitOK || tw.Sets() != 1 {
		t.Fatalf("apply without --interactive: exit %d, %d Sets; want 0 and 1:\n%s", code, tw.Sets(), errb.String())
	}
	for _, s := range []string{out.String(), errb.String()} {
		if strings.Contains(s, "Only 'yes'") || strings.Contains(s, "Apply these changes") {
			t.Errorf("apply without --interactive asked:\n%s", s)
		}
	}
}

// TestPromptTerminal: the real check says yes for a pseudo-terminal and no
// for a pipe, a file, /dev/null and a non-file reader.
func TestPromptTerminal(t *testing.T) {
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal to test with (/dev/ptmx): %v", err)
	}
	defer ptmx.Close()
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	pts, err := os.OpenFile(filepath.Join("/dev/pts", strconv.Itoa(n)), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal to test with (/dev/pts/%d): %v", n, err)
	}
	defer pts.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	t.Setenv("NO_COLOR", "1") // about colour, not about asking

	for _, tc := range []struct {
		name string
		r    io.Reader
		want bool
	}{
		{"pty", pts, true},
		{"pipe", pr, false},
		{"dev null", devNull, false},
		{"strings.Reader", strings.NewReader("yes\n"), false},
	} {
		if got := promptTerminal(tc.r); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}
