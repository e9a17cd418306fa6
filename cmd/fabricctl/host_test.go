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
		{"listen without watch", []string{"host", "apply", "-f", f, "--listen", ":0"}, ExitUsage},
		{"unknown host", []string{"host", "plan", "-f", f, "--host", "nosuch"}, ExitError},
		{"missing file", []string{"host", "diff", "-f", filepath.Join(dir, "missing.yaml"), "--host", "gpu1"}, ExitError},
		{"restore without backup", []string{"host", "restore"}, ExitUsage},
		{"restore of a missing backup", []string{"host", "restore", "--backup", filepath.Join(dir, "none.json")}, ExitError},
		{"restore of a file that is not a backup", []string{"host", "restore", "--backup", f}, ExitError},
		{"assume with netns", []string{"host", "plan", "-f", f, "--host", "gpu1", "--assume", "fresh", "--netns", "x"}, ExitUsage},
		{"assume a missing backup", []string{"host", "plan", "-f", f, "--host", "gpu1", "--assume", filepath.Join(dir, "none.json")}, ExitError},
		// Issue 27 item 7: a driver whose fresh state fabricctl does not
		// know is a usage error, not the generic backend's guess.
		{"assume fresh:foo", []string{"host", "plan", "-f", f, "--host", "gpu1", "--assume", "fresh:foo"}, ExitUsage},
		{"diff assume fresh:foo", []string{"host", "diff", "-f", f, "--host", "gpu1", "--assume", "fresh:foo"}, ExitUsage},
		{"apply takes no assume", []string{"host", "apply", "-f", f, "--host", "gpu1", "--assume", "fresh"}, ExitUsage},
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

// TestHostPlanAssumeFresh: on a machine without the NIC, plan --assume fresh
// prints every command and netlink request the host would get: issue 27
// item 7, the RDMA-CM ToS and mode and mlx5's CNP cc_params too (they
// were left out: the fresh state had no RDMA device, configfs or debugfs),
// with the PCI address marked as a placeholder; diff --assume works as
// the README's commands table says (exit 2 on drift).
func TestHostPlanAssumeFresh(t *testing.T) {
	code, out, errOut := runHost(t, hostTestIntent, "host", "plan", "-f", "-", "--host", "gpu1", "--assume", "fresh", "-o", "commands")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"# note: planned against an assumed host state (fresh: mlx5_core driver defaults; PCI addresses XXXX:XX:00.N are placeholders",
		"ethtool -A ens1f0np0 rx off tx off\ndcb pfc set dev ens1f0np0 prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off delay 3\n",
		"dcb app add dev ens1f0np0 dscp-prio 0:0 1:0 2:0",
		"mkdir -p /sys/kernel/config/rdma_cm/mlx5_0\necho 106 > /sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos\necho 'RoCE v2' > /sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_mode\n",
		"echo 48 > /sys/kernel/debug/mlx5/XXXX:XX:00.0/cc_params/np_cnp_dscp\necho 0 > /sys/kernel/debug/mlx5/XXXX:XX:00.0/cc_params/np_cnp_prio_mode\necho 6 > /sys/kernel/debug/mlx5/XXXX:XX:00.0/cc_params/np_cnp_prio\n",
		"mlxconfig -d XXXX:XX:00.0 set ROCE_CC_PRIO_MASK_P1=0x8",
		// The intent gives the NIC no address: a fresh NIC has no RoCE v2 GID.
		"ens1f0np0: mlx5_0 port 1 has no RoCE v2 GID",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runHost(t, hostTestIntent, "host", "plan", "-f", "-", "--host", "gpu1", "--assume", "fresh", "-o", "netlink")
	if code != ExitOK || !strings.Contains(out, "# dcb dcbx set dev ens1f0np0 host ieee\n") || !strings.Contains(out, "# ip link set dev ens1f0np0 mtu") {
		t.Errorf("-o netlink: exit %d\n%s", code, out)
	}
	// With the NIC's address in the intent, the assumed fresh NIC has the
	// RoCE v2 GID the kernel makes of it.
	withAddr := strings.Replace(hostTestIntent, "cable: 3m}", "cable: 3m, address: 10.0.0.1}", 1)
	if code, out, _ = runHost(t, withAddr, "host", "plan", "-f", "-", "--host", "gpu1", "--assume", "fresh", "-o", "commands"); code != ExitOK || strings.Contains(out, "RoCE v2 GID") {
		t.Errorf("fresh NIC with an address: exit %d, GID note:\n%s", code, out)
	}
	if code, out, errOut = runHost(t, hostTestIntent, "host", "diff", "-f", "-", "--host", "gpu1", "--assume", "fresh"); code != ExitChanges || !strings.Contains(out, "rdma_cm/default_roce_tos") {
		t.Errorf("host diff --assume fresh: exit %d, want %d with the RDMA-CM ToS\n%s\n%s", code, ExitChanges, out, errOut)
	}
}
