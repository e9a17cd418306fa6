package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/remote"
	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

// fakeHost is a TEST DOUBLE remote.Runner standing in for SSH to a host that
// runs `fabricctl host VERB -f - -o json`: it records the commands and
// answers with a canned host plan (one change until applied). The real SSH
// path is tested in hostdrv (TestFleetOverSSH).
type fakeHost struct {
	mu       sync.Mutex
	name     string
	calls    []string
	applied  bool
	failPlan bool
	// versionAsked counts `fabricctl version` calls.
	versionAsked int
}

func (h *fakeHost) Host() string { return h.name }

func (h *fakeHost) Run(_ context.Context, argv []string, stdin io.Reader) (remote.Result, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(argv) > 1 && argv[1] == "version" {
		// The same build as the one testing (the version check passes).
		h.versionAsked++
		b, _ := json.Marshal(readVersion())
		return remote.Result{Stdout: b}, nil
	}
	if stdin == nil {
		return remote.Result{}, errors.New("no stdin")
	}
	in, _ := io.ReadAll(stdin)
	if !bytes.Contains(in, []byte("kind: Fabric")) {
		return remote.Result{}, errors.New("no intent on stdin")
	}
	verb := argv[2]
	h.calls = append(h.calls, strings.Join(argv, " "))
	if h.failPlan {
		return remote.Result{ExitCode: 1}, &remote.ExitError{Host: h.name, Argv: argv, ExitCode: 1, Stderr: "ens1f0np0: DCB: driver has no DCB support"}
	}
	t := plan.TargetPlan{Name: h.name, Kind: plan.KindHost, Basis: "b", Changes: []plan.Change{}}
	if !h.applied {
		t.Changes = append(t.Changes, plan.Change{Action: plan.Update, Path: "eth0/pfc", Before: "none", After: "3"})
	}
	if verb == "apply" {
		h.applied = true
	}
	b, _ := (&plan.Plan{Fabric: "f", Targets: []plan.TargetPlan{t}}).Marshal()
	if verb == "diff" && len(t.Changes) > 0 {
		return remote.Result{Stdout: b, ExitCode: 2}, &remote.ExitError{Host: h.name, Argv: argv, ExitCode: 2}
	}
	return remote.Result{Stdout: b}, nil
}

func (h *fakeHost) Start(context.Context, []string) (remote.Process, error) {
	return nil, errors.New("fakeHost: Start is not used")
}

// TestRemoteHosts: plan, diff and apply cover the inventory's remote hosts
// through hostdrv.Fleet after the switches; a host that cannot be planned
// stops apply before any switch is written.
func TestRemoteHosts(t *testing.T) {
	tw, err := twin.Start(twin.Options{Name: "leaf1", Platform: intent.PlatformSRLinux})
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "f.yaml")
	if err := os.WriteFile(file, []byte(`apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: f}
policy: {preset: roce-lossless}
inventory:
  switches:
    - name: leaf1
      platform: srlinux
      address: "`+tw.Addr()+`"
      tls: {insecure: true}
      portDefaults: {speed: 400G, cable: 3m}
      ports:
        - name: ethernet-1/1
  hosts:
    - name: gpu9
      address: 10.0.0.9
      nics:
        - {interface: eth0, rdma: mlx5_0, speed: 400G}
    - name: here
      address: local
      nics:
        - {interface: eth0, rdma: rxe0}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	seedFromIntent(t, tw, file)
	host := &fakeHost{name: "gpu9"}
	sf := func(extra ...string) switchFlags {
		s := switchFlags{files: []string{file}, timeout: 5 * time.Second, parallel: 4, hostBinary: "fabricctl",
			hostRunner: func(h intent.Host) (remote.Runner, error) {
				if h.Name != "gpu9" {
					t.Errorf("runner asked for host %s; only the remote gpu9 is in scope", h.Name)
				}
				return host, nil
			}}
		if len(extra) > 0 && extra[0] == "skip" {
			s.skipHosts = true
		}
		return s
	}
	d := &deps{stdout: io.Discard, stderr: io.Discard, log: slog.New(slog.DiscardHandler)}
	ctx := t.Context()
	code := func(err error) int { return exitCode(err, io.Discard) }

	var out bytes.Buffer
	po := &planOptions{switchFlags: sf(), output: "text", detailed: true}
	if got := code(po.run(ctx, d, &out)); got != ExitChanges {
		t.Fatalf("plan exit %d, want 2:\n%s", got, out.String())
	}
	if !strings.Contains(out.String(), "host gpu9:") || !strings.Contains(out.String(), "eth0/pfc") {
		t.Errorf("plan lacks the remote host's change:\n%s", out.String())
	}

	host.failPlan = true
	out.Reset()
	ao := &applyOptions{switchFlags: sf(), output: "text", backupDir: filepath.Join(dir, "b"), lockDir: switchdrv.DefaultLockDir()}
	if got := code(ao.run(ctx, d, &out)); got != ExitError || tw.Sets() != 0 {
		t.Fatalf("apply with an unplannable host: exit %d, %d Sets; want 1 and none", got, tw.Sets())
	}
	host.failPlan = false

	out.Reset()
	if got := code(ao.run(ctx, d, &out)); got != ExitOK {
		t.Fatalf("apply exit %d:\n%s", got, out.String())
	}
	if !strings.Contains(out.String(), "host gpu9: applied (1 changes)") || tw.Sets() != 1 {
		t.Errorf("apply did not apply switch and host (Sets %d):\n%s", tw.Sets(), out.String())
	}

	out.Reset()
	do := &diffOptions{switchFlags: sf(), output: "text"}
	if got := code(do.run(ctx, d, &out)); got != ExitOK {
		t.Errorf("diff after apply exit %d, want 0:\n%s", got, out.String())
	}
	do = &diffOptions{switchFlags: sf("skip"), output: "text"}
	before := len(host.calls)
	if got := code(do.run(ctx, d, &out)); got != ExitOK || len(host.calls) != before {
		t.Errorf("diff --skip-hosts: exit %d, host called %d times", got, len(host.calls)-before)
	}
	do = &diffOptions{switchFlags: sf(), output: "text"}
	do.hosts = []string{"here"}
	if got := code(do.run(ctx, d, &out)); got != ExitUsage {
		t.Errorf("diff --host here (local): exit %d, want 64", got)
	}

	want := []string{
		"fabricctl host plan -f - --host gpu9 -o json",
		"fabricctl host plan -f - --host gpu9 -o json",
		"fabricctl host plan -f - --host gpu9 -o json",
		"fabricctl host apply -f - --host gpu9 -o json",
		"fabricctl host diff -f - --host gpu9 -o json",
	}
	if diff := cmp.Diff(want, host.calls); diff != "" {
		t.Errorf("commands on the host (-want +got):\n%s", diff)
	}
}

// argvHost is a TEST DOUBLE remote.Runner that records each argv and
// answers fabricctl's version (this build's) and a host plan.
type argvHost struct {
	mu    sync.Mutex
	argvs [][]string
}

func (h *argvHost) Host() string { return "gpu9" }

func (h *argvHost) Run(_ context.Context, argv []string, _ io.Reader) (remote.Result, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.argvs = append(h.argvs, argv)
	if slices.Contains(argv, "version") {
		b, _ := json.Marshal(readVersion())
		return remote.Result{Stdout: b}, nil
	}
	b, _ := (&plan.Plan{Fabric: "f", Targets: []plan.TargetPlan{{Name: "gpu9", Kind: plan.KindHost, Changes: []plan.Change{}}}}).Marshal()
	return remote.Result{Stdout: b}, nil
}

func (h *argvHost) Start(context.Context, []string) (remote.Process, error) {
	return nil, errors.New("argvHost: Start is not used")
}

// TestHostBinaryIsWordsEverywhere: plan, diff and apply run --host-binary
// as words, as validate does ("sudo -n fabricctl" lets a login without
// root run it), and ask the host's fabricctl for its version first.
func TestHostBinaryIsWordsEverywhere(t *testing.T) {
	f := &intent.Fabric{Name: "f", Hosts: []intent.Host{{Name: "gpu9", Address: "10.0.0.9", NICs: []intent.NIC{{Interface: "eth0"}}}}}
	host := &argvHost{}
	s := switchFlags{hostBinary: "sudo -n /opt/fabricctl/bin/fabricctl", parallel: 1,
		hostRunner: func(intent.Host) (remote.Runner, error) { return host, nil }}
	d := &deps{log: slog.New(slog.DiscardHandler)}
	ts, err := s.runHosts(t.Context(), d, f, "plan", f.Hosts)
	if err != nil || len(ts) != 1 || ts[0].Error != "" {
		t.Fatalf("runHosts: %v %+v", err, ts)
	}
	want := [][]string{{"sudo", "-n", "/opt/fabricctl/bin/fabricctl", "version", "-o", "json"},
		{"sudo", "-n", "/opt/fabricctl/bin/fabricctl", "host", "plan", "-f", "-", "--host", "gpu9", "-o", "json"}}
	if diff := cmp.Diff(want, host.argvs); diff != "" {
		t.Errorf("remote argv (-want +got):\n%s", diff)
	}
}
