package hostdrv

import (
	"context"
	"errors"
	"syscall"
	"testing"

	"github.com/fabricctl/fabricctl/hostdrv/internal/dcbnl"
	"github.com/fabricctl/fabricctl/internal/netnstest"
	"github.com/fabricctl/fabricctl/plan"
)

// kernelRig is a veth ens1f0np0 in a private netns, driven by the real
// LinuxKernel (rtnetlink + dcbnl + ethtool ioctl in that netns).
func kernelRig(t *testing.T) (*netnstest.NS, *LinuxKernel) {
	t.Helper()
	ns := netnstest.New(t)
	ns.Veth(t, "ens1f0np0", "peer0")
	k, err := NewLinuxKernel(ns.Handle)
	if err != nil {
		t.Fatalf("NewLinuxKernel: %v", err)
	}
	t.Cleanup(k.Close)
	return ns, k
}

// TestKernelDCBOnVeth: the real kernel accepts our framing and answers
// EOPNOTSUPP, as for any netdev without dcbnl ops (veth, VFs, representors).
func TestKernelDCBOnVeth(t *testing.T) {
	_, k := kernelRig(t)
	for _, req := range []dcbnl.Request{
		dcbnl.GetIEEE("ens1f0np0"),
		dcbnl.AddApps("ens1f0np0", []dcbnl.App{{Selector: dcbnl.SelectorDSCP, Priority: 3, Protocol: 26}}),
		dcbnl.SetDCBX("ens1f0np0", DCBXHost|DCBXVerIEEE),
		dcbnl.SetPFC("ens1f0np0", dcbnl.PFC{Enable: 0x08}),
	} {
		_, err := k.DCB(req)
		if !errors.Is(err, syscall.EOPNOTSUPP) {
			t.Errorf("DCB(%s) on a veth = %v, want EOPNOTSUPP", dcbnl.CmdName(req.Cmd), err)
		}
	}
	_, err := k.DCB(dcbnl.GetIEEE("nosuch0"))
	if !errors.Is(err, syscall.ENODEV) {
		t.Errorf("DCB(IEEE_GET) on a missing interface = %v, want ENODEV", err)
	}
}

// TestKernelPlanApply runs the driver against the real kernel: DCB fails
// with the clear VF message, the MTU is applied and read back for real, and a
// missing interface is ENODEV, named.
func TestKernelPlanApply(t *testing.T) {
	ns, k := kernelRig(t)
	ctx := context.Background()
	f, h := loadIntent(t, nil)
	h.NICs = h.NICs[:1] // ens1f0np0 only
	d := &Driver{Kernel: k, Files: NewDirFiles(t.TempDir())}

	p, err := d.Plan(ctx, f, h)
	var se *SettingError
	if !errors.As(err, &se) || !errors.Is(err, syscall.EOPNOTSUPP) {
		t.Fatalf("Plan on a veth = %v, want a *SettingError wrapping EOPNOTSUPP", err)
	}
	if se.Interface != "ens1f0np0" || se.Setting != "DCB (DCBX, APP, PFC, ETS)" {
		t.Errorf("SettingError names %q / %q, want ens1f0np0 / DCB (DCBX, APP, PFC, ETS)", se.Interface, se.Setting)
	}
	t.Logf("veth plan error (as an operator sees it): %v", err)

	after, err := d.Apply(ctx, p)
	if !errors.Is(err, syscall.EOPNOTSUPP) {
		t.Errorf("Apply on a veth = %v, want the DCB EOPNOTSUPP error again", err)
	}
	l, lerr := ns.Netlink.LinkByName("ens1f0np0")
	if lerr != nil {
		t.Fatal(lerr)
	}
	if l.Attrs().MTU != 9000 {
		t.Errorf("MTU after apply = %d, want 9000", l.Attrs().MTU)
	}
	for _, c := range after.Target.Changes {
		if c.Path == "ens1f0np0/mtu" && c.Action != plan.NoOp {
			t.Errorf("read-back MTU change %v %s -> %s, want no-op", c.Action, c.Before, c.After)
		}
	}

	h.NICs[0].Interface = "nosuch0"
	_, err = d.Plan(ctx, f, h)
	if !errors.As(err, &se) || !errors.Is(err, syscall.ENODEV) || se.Interface != "nosuch0" {
		t.Errorf("Plan for a missing interface = %v, want a *SettingError for nosuch0 wrapping ENODEV", err)
	}
}

// TestKernelPauseOnVeth: veth has no pause ioctl; the kernel says EOPNOTSUPP.
func TestKernelPauseOnVeth(t *testing.T) {
	_, k := kernelRig(t)
	if _, err := k.Pause("ens1f0np0"); !errors.Is(err, syscall.EOPNOTSUPP) {
		t.Errorf("Pause(veth) = %v, want EOPNOTSUPP", err)
	}
	if _, err := k.Link("nosuch0"); !errors.Is(err, syscall.ENODEV) {
		t.Errorf("Link(missing) = %v, want ENODEV", err)
	}
}

// TestKernelBackupRestoreMTU: on a real veth (no DCB ops: EOPNOTSUPP), a
// plan with that error writes nothing; --partial writes the MTU after
// saving a backup; restore puts the MTU back and reads back clean (the
// saved NIC had no DCB, so none is expected now).
func TestKernelBackupRestoreMTU(t *testing.T) {
	ns, k := kernelRig(t)
	ctx := context.Background()
	f, h := loadIntent(t, nil)
	h.NICs = h.NICs[:1]
	d := &Driver{Kernel: k, Files: NewDirFiles(t.TempDir())}
	p, err := d.Plan(ctx, f, h)
	if !errors.Is(err, syscall.EOPNOTSUPP) {
		t.Fatalf("Plan on a veth = %v, want EOPNOTSUPP", err)
	}
	if res, err := d.ApplyWith(ctx, p, ApplyOptions{}); err == nil || res.Written() != 0 {
		t.Fatalf("ApplyWith without --partial: %v, %d written", err, res.Written())
	}
	file := t.TempDir() + "/b.json"
	res, err := d.ApplyWith(ctx, p, ApplyOptions{Partial: true, BackupFile: file})
	if res.Written() != 1 || err == nil {
		t.Fatalf("ApplyWith --partial: %v, %d written; want the MTU written and the DCB error", err, res.Written())
	}
	if l, _ := ns.Netlink.LinkByName("ens1f0np0"); l.Attrs().MTU != 9000 {
		t.Fatalf("MTU = %d, want 9000", l.Attrs().MTU)
	}
	b, err := ReadBackup(file)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := d.Restore(ctx, b)
	if err != nil || rr.ReadBack.Target.HasChanges() {
		t.Fatalf("Restore: %v %q", err, rr.Notes())
	}
	if l, _ := ns.Netlink.LinkByName("ens1f0np0"); l.Attrs().MTU != 1500 {
		t.Errorf("MTU after restore = %d, want 1500", l.Attrs().MTU)
	}
}
