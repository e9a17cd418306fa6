package hostdrv

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
)

// TestKernelPFCPreventionOnVeth: the real kernel, through the ioctl
// LinuxKernel sends (SIOCETHTOOL in the veth's namespace), answers
// EOPNOTSUPP to ETHTOOL_GTUNABLE and ETHTOOL_STUNABLE of
// pfc-prevention-tout on a veth (net/ethtool/ioctl.c: no get_tunable /
// set_tunable op), ENODEV for a missing interface; and a host plan that
// wants the prevention on is then an error naming the NIC and the setting,
// and apply without --partial writes nothing (the MTU stays as it was).
func TestKernelPFCPreventionOnVeth(t *testing.T) {
	ns, k := kernelRig(t)
	if _, err := k.PFCPreventionTimeout("ens1f0np0"); !errors.Is(err, syscall.EOPNOTSUPP) {
		t.Errorf("PFCPreventionTimeout(veth) = %v, want EOPNOTSUPP", err)
	}
	if err := k.SetPFCPreventionTimeout("ens1f0np0", 100); !errors.Is(err, syscall.EOPNOTSUPP) {
		t.Errorf("SetPFCPreventionTimeout(veth) = %v, want EOPNOTSUPP", err)
	}
	if _, err := k.PFCPreventionTimeout("nosuch0"); !errors.Is(err, syscall.ENODEV) {
		t.Errorf("PFCPreventionTimeout(missing) = %v, want ENODEV", err)
	}

	ctx := context.Background()
	f, h := loadIntent(t, withStorm("auto"))
	h.NICs = h.NICs[:1]
	d := &Driver{Kernel: k, Files: NewDirFiles(t.TempDir())}
	p, err := d.Plan(ctx, f, h)
	var se *SettingError
	found := false
	for _, e := range unjoin(err) {
		if errors.As(e, &se) && se.Setting == "pfc-prevention-tout" && se.Interface == "ens1f0np0" && errors.Is(e, syscall.EOPNOTSUPP) {
			found = true
			if !strings.Contains(e.Error(), "cannot do policy.hostPauseStormPrevention") {
				t.Errorf("error does not say the NIC cannot do it: %v", e)
			}
		}
	}
	if !found {
		t.Fatalf("Plan on a veth with hostPauseStormPrevention auto = %v, want an ens1f0np0 pfc-prevention-tout EOPNOTSUPP error", err)
	}
	t.Logf("veth plan error (as an operator sees it): %v", err)
	res, err := d.ApplyWith(ctx, p, ApplyOptions{})
	if err == nil || res.Written() != 0 {
		t.Fatalf("ApplyWith: %v, %d written; want nothing written", err, res.Written())
	}
	if l, _ := ns.Netlink.LinkByName("ens1f0np0"); l.Attrs().MTU != 1500 {
		t.Errorf("MTU = %d after a refused apply, want 1500 untouched", l.Attrs().MTU)
	}

	// Off on a NIC without the prevention is a note, not an error.
	f, h = loadIntent(t, withStorm("off"))
	h.NICs = h.NICs[:1]
	_, err = d.Plan(ctx, f, h)
	for _, e := range unjoin(err) {
		if errors.As(e, &se) && se.Setting == "pfc-prevention-tout" {
			t.Errorf("off on a veth: %v", e)
		}
	}
}

// unjoin flattens errors.Join trees (the host error wraps the join).
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, unjoin(e)...)
		}
		return out
	}
	if u := errors.Unwrap(err); u != nil {
		if inner := unjoin(u); len(inner) > 1 {
			return inner
		}
	}
	return []error{err}
}
