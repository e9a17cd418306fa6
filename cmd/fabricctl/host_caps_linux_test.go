package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/internal/netnstest"
)

// TestHostApplyNeedsOnlyNetAdmin holds the DaemonSet's capability set
// (examples/k8s/base/host-daemonset.yaml: NET_ADMIN only) to the kernel:
// this test binary runs as fabricctl (FABRICCTL_TEST_MAIN) in a netns with
// a veth, as root but with the capability bounding set cut down by
// setpriv(1). With NET_ADMIN alone the MTU is written over rtnetlink (and
// the backup, root's file in root's directory, needs no capability); with
// no capability the write is refused with EPERM and nothing changes. (A
// veth has no DCB, so dcbnl's SET is not reached here; its check is the
// same CAP_NET_ADMIN, net/dcb/dcbnl.c dcb_doit.)
func TestHostApplyNeedsOnlyNetAdmin(t *testing.T) {
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) is not installed")
	}
	ns := netnstest.New(t)
	ns.Veth(t, "ens1f0np0", "peer0")
	for _, tc := range []struct {
		name, bounding string
		wantMTU        int
		want           string
	}{
		{"no capability", "-all", 1500, "MTU: permission denied (EPERM)"},
		{"NET_ADMIN only", "-all,+net_admin", 9000, "applied: ens1f0np0/mtu (ip link set dev ens1f0np0 mtu 9000)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			cmd := exec.Command("ip", "netns", "exec", ns.Name, setpriv, "--bounding-set", tc.bounding, "--",
				os.Args[0], "host", "apply", "-f", "-", "--host", "gpu1", "--root", root, "--partial",
				"--backup", filepath.Join(t.TempDir(), "gpu1.json"))
			cmd.Env = append(os.Environ(), "FABRICCTL_TEST_MAIN=1")
			cmd.Stdin = strings.NewReader(hostTestIntent)
			out, _ := cmd.CombinedOutput()
			l, err := ns.Netlink.LinkByName("ens1f0np0")
			if err != nil {
				t.Fatal(err)
			}
			if got := l.Attrs().MTU; got != tc.wantMTU {
				t.Errorf("MTU %d, want %d\n%s", got, tc.wantMTU, out)
			}
			if !strings.Contains(strings.ToLower(string(out)), strings.ToLower(tc.want)) {
				t.Errorf("output lacks %q:\n%s", tc.want, out)
			}
			if tc.wantMTU == 9000 {
				if err := ns.Netlink.LinkSetMTU(l, 1500); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
