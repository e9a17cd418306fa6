package hostdrv

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/fabricctl/fabricctl/plan"
)

// withStorm adds policy.hostPauseStormPrevention to the test intent.
func withStorm(v string) func(string) string {
	return func(s string) string {
		return strings.Replace(s, "  preset: roce-lossless\n", "  preset: roce-lossless\n  hostPauseStormPrevention: "+v+"\n", 1)
	}
}

// stormChange returns the plan's pfc-prevention-tout change of ifn.
func stormChange(t *testing.T, p *Plan, ifn string) plan.Change {
	t.Helper()
	for _, c := range p.Target.Changes {
		if c.Path == ifn+"/pfc-prevention-tout" {
			return c
		}
	}
	t.Fatalf("no %s/pfc-prevention-tout change in %+v", ifn, p.Target.Changes)
	return plan.Change{}
}

// TestHostPauseStormPrevention: policy.hostPauseStormPrevention through
// plan, apply, read-back, drift and restore against the fake mlx5
// (mlx5e_set_pfc_prevention_tout / mlx5e_get_pfc_prevention_tout: auto is
// written 0xffff and read back 100, a stall time in ms as itself, 0 off).
// The step is the ethtool command and runs after global pause and before
// PFC; written once, a second plan has nothing to do; the NIC changed
// behind fabricctl's back is drift; restore writes the saved value.
func TestHostPauseStormPrevention(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		value, arg, after string
		reads             uint16
	}{
		{"auto", "65535", "100ms", 100},
		{"250ms", "250", "250ms", 250},
		{"8s", "8000", "8s", 8000},
	} {
		t.Run(tc.value, func(t *testing.T) {
			r := newRig(t, treeOpts{ecn: "sysfs", configfs: true})
			f, h := loadIntent(t, withStorm(tc.value))
			p, err := r.d.Plan(ctx, f, h)
			if err != nil {
				t.Fatal(err)
			}
			c := stormChange(t, p, "ens1f0np0")
			if c.Action != plan.Update || c.Before != "off" || c.After != tc.after || !strings.Contains(c.Reason, "policy.hostPauseStormPrevention "+tc.value) {
				t.Errorf("change %+v: want update off -> %s for policy.hostPauseStormPrevention %s", c, tc.after, tc.value)
			}
			at := map[string]int{}
			for i, s := range p.Steps {
				at[s.Path] = i
				if s.Path == "ens1f0np0/pfc-prevention-tout" && s.Command != "ethtool --set-tunable ens1f0np0 pfc-prevention-tout "+tc.arg {
					t.Errorf("command %q, want ethtool --set-tunable ens1f0np0 pfc-prevention-tout %s", s.Command, tc.arg)
				}
			}
			pause, okPause := at["ens1f0np0/pause"]
			storm, okStorm := at["ens1f0np0/pfc-prevention-tout"]
			pfc, okPFC := at["ens1f0np0/pfc"]
			if !okPause || !okStorm || !okPFC || !(pause < storm && storm < pfc) {
				t.Errorf("steps at %v: want pause, then pfc-prevention-tout, then pfc", at)
			}
			b := p.Backup()
			if _, err := r.d.Apply(ctx, p); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			for _, ifn := range []string{"ens1f0np0", "ens1f1np1"} {
				if got := r.k.nics[ifn].stormTout; got != tc.reads {
					t.Errorf("%s: stall watermark %d after apply, want %d", ifn, got, tc.reads)
				}
			}
			again, err := r.d.Plan(ctx, f, h)
			if err != nil {
				t.Fatal(err)
			}
			if c := stormChange(t, again, "ens1f0np0"); c.Action != plan.NoOp || len(again.Steps) != 0 {
				t.Errorf("after apply: %+v, %d steps; want nothing to do", c, len(again.Steps))
			}
			r.k.nics["ens1f1np1"].stormTout = 0 // someone ran ethtool --set-tunable ... 0
			drift, err := r.d.Plan(ctx, f, h)
			if err != nil {
				t.Fatal(err)
			}
			if c := stormChange(t, drift, "ens1f1np1"); c.Action != plan.Update || c.Before != "off" || c.After != tc.after {
				t.Errorf("drift: %+v, want update off -> %s", c, tc.after)
			}
			if _, err := r.d.Restore(ctx, b); err != nil {
				t.Fatalf("Restore: %v", err)
			}
			for _, ifn := range []string{"ens1f0np0", "ens1f1np1"} {
				if got := r.k.nics[ifn].stormTout; got != 0 {
					t.Errorf("%s: stall watermark %d after restore, want 0 (off, as saved)", ifn, got)
				}
			}
		})
	}
}

// TestHostPauseStormPreventionUnsupported: a NIC that answers EOPNOTSUPP
// (an mlx5 port without stall_detect, any driver without tunables) with the
// prevention wanted on is a plan error that names the interface and says
// the NIC cannot do it, and apply writes nothing to the host (no other
// setting either): never a host with the policy half applied. Wanted off,
// the NIC already has none: a note, and the rest applies.
func TestHostPauseStormPreventionUnsupported(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, treeOpts{ecn: "sysfs", configfs: true})
	r.k.nics["ens1f1np1"].noStorm = true
	f, h := loadIntent(t, withStorm("auto"))
	p, err := r.d.Plan(ctx, f, h)
	var se *SettingError
	if !errors.As(err, &se) || se.Interface != "ens1f1np1" || se.Setting != "pfc-prevention-tout" || !errors.Is(err, syscall.EOPNOTSUPP) {
		t.Fatalf("Plan error %v: want ens1f1np1 pfc-prevention-tout EOPNOTSUPP", err)
	}
	if !strings.Contains(err.Error(), "cannot do policy.hostPauseStormPrevention") {
		t.Errorf("error does not say the NIC cannot do it: %v", err)
	}
	res, err := r.d.ApplyWith(ctx, p, ApplyOptions{})
	if err == nil || !strings.Contains(err.Error(), "nothing written") {
		t.Errorf("ApplyWith: %v, want nothing written", err)
	}
	if r.writes() != 0 || (res != nil && res.Written() != 0) {
		t.Errorf("%d writes to a host whose plan has errors: %v", r.writes(), r.k.order)
	}

	f, h = loadIntent(t, withStorm("off"))
	p, err = r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatalf("off on a NIC without prevention: %v", err)
	}
	note := false
	for _, n := range p.Target.Notes {
		note = note || strings.Contains(n, "ens1f1np1: the NIC has no pause storm prevention")
	}
	if !note {
		t.Errorf("no note for ens1f1np1 in %q", p.Target.Notes)
	}
	if _, err := r.d.Apply(ctx, p); err != nil {
		t.Fatalf("Apply: %v", err)
	}
}

// TestHostPauseStormPreventionAbsentLeavesNICAlone: without the field the
// NIC's value is neither planned nor written.
func TestHostPauseStormPreventionAbsentLeavesNICAlone(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, treeOpts{ecn: "sysfs", configfs: true})
	r.k.nics["ens1f0np0"].stormTout = 500
	f, h := loadIntent(t, nil)
	p, err := r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Target.Changes {
		if strings.Contains(c.Path, "pfc-prevention-tout") {
			t.Errorf("planned %+v without policy.hostPauseStormPrevention", c)
		}
	}
	if _, err := r.d.Apply(ctx, p); err != nil {
		t.Fatal(err)
	}
	if got := r.k.nics["ens1f0np0"].stormTout; got != 500 {
		t.Errorf("stall watermark %d, want 500 untouched", got)
	}
}
