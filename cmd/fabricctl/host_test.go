package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const hostTestIntent = `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: pod1}
policy:
  preset: roce-lossless
inventory:
  hosts:
    - name: gpu1
      address: local
      nics:
        - {interface: ens1f0np0, rdma: mlx5_0, speed: 400G, cable: 3m}
`

func runHost(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestHostUsage(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "fabric.yaml")
	if err := os.WriteFile(f, []byte(hostTestIntent), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"no intent", []string{"host", "plan"}, ExitUsage},
		{"bad output", []string{"host", "plan", "-f", f, "-o", "yaml"}, ExitUsage},
		{"commands needs dry-run", []string{"host", "apply", "-f", f, "-o", "commands"}, ExitUsage},
		{"watch with dry-run", []string{"host", "apply", "-f", f, "--watch", "--dry-run"}, ExitUsage},
		{"unknown host", []string{"host", "plan", "-f", f, "--host", "nosuch"}, ExitError},
		{"missing file", []string{"host", "diff", "-f", filepath.Join(dir, "missing.yaml"), "--host", "gpu1"}, ExitError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, _, errOut := runHost(t, "", tc.args...); got != tc.want {
				t.Errorf("fabricctl %s: exit %d, want %d (stderr %q)", strings.Join(tc.args, " "), got, tc.want, errOut)
			}
		})
	}
}

func TestHostExit(t *testing.T) {
	boom := errors.New("ens1f0np0: PFC: driver has no DCB support (EOPNOTSUPP) — is this a VF?")
	tests := []struct {
		verb              string
		detailed, changes bool
		err               error
		want              int
	}{
		{"diff", false, false, nil, ExitOK},
		{"diff", false, true, nil, ExitChanges},
		{"diff", false, true, boom, ExitError},
		{"plan", false, true, nil, ExitOK},
		{"plan", true, true, nil, ExitChanges},
		{"plan", true, false, nil, ExitOK},
		{"plan", true, true, boom, ExitError},
		{"apply", false, true, nil, ExitOK}, // apply --dry-run
	}
	for _, tc := range tests {
		var errb bytes.Buffer
		if got := exitCode(hostExit(tc.verb, tc.detailed, tc.changes, tc.err), &errb); got != tc.want {
			t.Errorf("hostExit(%s, detailed %v, changes %v, err %v) exits %d, want %d", tc.verb, tc.detailed, tc.changes, tc.err, got, tc.want)
		}
	}
}

// TestHostPlanMissingInterface: a NIC the host does not have is an error in
// the plan, never "no changes".
func TestHostPlanMissingInterface(t *testing.T) {
	f := filepath.Join(t.TempDir(), "h.yaml")
	if err := os.WriteFile(f, []byte("apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\npolicy: {preset: roce-lossless}\ninventory:\n  hosts:\n    - {name: gpu1, address: local, nics: [{interface: nosuch0}]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"plan", "diff"} {
		code, out, errOut := runCLI(t, t.Context(), "host", verb, "-f", f, "--host", "gpu1")
		if code != ExitError || strings.Contains(out, "no changes") || !strings.Contains(out+errOut, "nosuch0") {
			t.Errorf("host %s on a missing interface: exit %d\nstdout:\n%s\nstderr:\n%s", verb, code, out, errOut)
		}
	}
}
