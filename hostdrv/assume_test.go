package hostdrv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricctl/fabricctl/plan"
)

// TestAssumeFresh plans a host with no NIC at all against mlx5's driver
// defaults and prints every command and netlink request; nothing can be
// written.
func TestAssumeFresh(t *testing.T) {
	f, h := loadIntent(t, withBuffers)
	d, _, err := Assume("fresh", f, h)
	if err != nil {
		t.Fatal(err)
	}
	if got := driverName(d.Files, "ens1f1np1"); got != "mlx5_core" {
		t.Fatalf("assumed driver = %q", got)
	}
	p, err := d.Plan(context.Background(), f, h)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	var cmds, nl bytes.Buffer
	if err := WriteCommands(&cmds, p); err != nil {
		t.Fatal(err)
	}
	if err := WriteNetlink(&nl, p); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"ip link set dev ens1f0np0 mtu 9000",
		"dcb dcbx set dev ens1f0np0 host ieee",
		"ethtool -A ens1f0np0 rx off tx off",
		"dcb pfc set dev ens1f0np0 prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off delay 3",
		"dcb app add dev ens1f0np0 dscp-prio 0:0 1:0",
		"ROCE_CC_PRIO_MASK_P2=0x8",
	} {
		if !strings.Contains(cmds.String(), want) {
			t.Errorf("commands lack %q:\n%s", want, cmds.String())
		}
	}
	if n := strings.Count(nl.String(), "\n# dcb ") + strings.Count(nl.String(), "\n# ip link"); n < 10 {
		t.Errorf("netlink output has %d requests:\n%s", n, nl.String())
	}
	if _, err := d.Apply(context.Background(), p); !errors.Is(err, ErrAssumed) {
		t.Errorf("Apply on an assumed state = %v, want ErrAssumed", err)
	}
}

// TestAssumeBackup: a backup taken on the test double plans, without the
// NIC, exactly the steps the NIC itself would get.
func TestAssumeBackup(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, treeOpts{ecn: "debugfs", configfs: true})
	f, h := loadIntent(t, withBuffers)
	real, err := r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "b.json")
	if err := WriteBackup(file, real.Backup()); err != nil {
		t.Fatal(err)
	}
	d, _, err := Assume(file, f, h)
	if err != nil {
		t.Fatal(err)
	}
	assumed, err := d.Plan(ctx, f, h)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	var a, b bytes.Buffer
	_ = WriteNetlink(&a, real)
	_ = WriteNetlink(&b, assumed)
	if a.String() != b.String() {
		t.Errorf("netlink from the backup differs from the NIC's (-nic +backup):\n%s", cmp.Diff(a.String(), b.String()))
	}
}

// TestAssumeBackupOfAnAppliedHostIsInSync (issue 27 item 7): host diff
// --assume FILE compares the intent with a saved host: the backup of a host
// that apply configured (control files and configfs directories included)
// has nothing to change, so diff exits 0 on it as on the host.
func TestAssumeBackupOfAnAppliedHostIsInSync(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, treeOpts{ecn: "debugfs", configfs: true})
	f, h := loadIntent(t, withBuffers)
	p, err := r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.d.Apply(ctx, p); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	after, err := r.d.Plan(ctx, f, h)
	if err != nil || after.Target.HasChanges() {
		t.Fatalf("re-plan on the host: %v, changes %v", err, after.Target.Changes)
	}
	file := filepath.Join(t.TempDir(), "b.json")
	if err := WriteBackup(file, after.Backup()); err != nil {
		t.Fatal(err)
	}
	d, _, err := Assume(file, f, h)
	if err != nil {
		t.Fatal(err)
	}
	assumed, err := d.Plan(ctx, f, h)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	for _, c := range assumed.Target.Changes {
		if c.Action != plan.NoOp {
			t.Errorf("the applied host's backup still plans %s %s (%s -> %s)", c.Action, c.Path, c.Before, c.After)
		}
	}
}

// TestAssumeUnknownFreshDriver: fresh:DRIVER of a driver whose defaults
// fabricctl does not know is refused, not planned with a guess.
func TestAssumeUnknownFreshDriver(t *testing.T) {
	f, h := loadIntent(t, withBuffers)
	if _, _, err := Assume("fresh:foo", f, h); !errors.Is(err, ErrUnknownFresh) {
		t.Errorf("Assume(fresh:foo) = %v, want ErrUnknownFresh", err)
	}
	for _, drv := range FreshDrivers() {
		if _, _, err := Assume("fresh:"+drv, f, h); err != nil {
			t.Errorf("Assume(fresh:%s) = %v", drv, err)
		}
	}
}

// TestFreshLosslessMinimumIsHostPlans: the minimum check holds host
// buffers to (FreshLosslessMinimum, FC129) is the one `host plan --assume
// fresh` refuses a buffer below, NIC by NIC, for NICs with their own speed
// and cable and for a NIC that takes them from its link.
func TestFreshLosslessMinimumIsHostPlans(t *testing.T) {
	for _, tc := range []struct{ name, nics string }{
		{"own speed and cable", ""},
		{"speed and cable from the link", "link"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, h := loadIntent(t, func(s string) string {
				s = strings.Replace(s, "  dcbx: host-static\n", "  dcbx: host-static\n  hostBuffers:\n    - {buffer: 1, size: 60KB, priorities: [3]}\n", 1)
				if tc.nics == "link" {
					s = strings.Replace(s, "{interface: ens1f1np1, rdma: mlx5_1, speed: 400G, cable: 2.5m}", "{interface: ens1f1np1, rdma: mlx5_1}", 1)
					s = strings.Replace(s, "  hosts:\n", "  switches:\n    - name: leaf1\n      platform: sonic\n      address: 127.0.0.1:1\n      credentials: {usernameEnv: U, passwordEnv: P}\n      ports: [{name: Ethernet0, speed: 100G, cable: 7m}]\n  hosts:\n", 1)
					s += "  links:\n    - [gpu1:ens1f1np1, leaf1:Ethernet0]\n"
				}
				return s
			})
			d, _, err := Assume("fresh", f, h)
			if err != nil {
				t.Fatal(err)
			}
			_, err = d.Plan(context.Background(), f, h)
			if err == nil {
				t.Fatal("host plan --assume fresh took a 60 KB lossless buffer")
			}
			for _, nic := range h.NICs {
				m, ok := FreshLosslessMinimum(f, h, nic)
				if !ok || !slices.Equal(m.Lossless, []int{1}) {
					t.Fatalf("%s: FreshLosslessMinimum = %+v, %v; want buffer 1 lossless", nic.Interface, m, ok)
				}
				want := fmt.Sprintf("%s: buffer: lossless buffer 1 of 60000 B is below mlx5's minimum %d B", nic.Interface, m.Min)
				if !strings.Contains(err.Error(), want) {
					t.Errorf("host plan says\n%v\nwant %q (check's number)", err, want)
				}
			}
		})
	}
}
