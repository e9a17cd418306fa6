package hostdrv

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/dcqcntest"
	"github.com/fabricctl/fabricctl/plan"
)

// withDCQCN adds the tests' policy.dcqcn block (dcqcntest.Policy), which
// moves every parameter but gd off the mlx5 defaults the test double's
// firmware starts with.
func withDCQCN(s string) string {
	return strings.Replace(s, "  dcbx: host-static\n", "  dcbx: host-static\n"+dcqcntest.Policy, 1)
}

// changeOf returns the change at path, or nil.
func changeOf(p *Plan, path string) *plan.Change {
	for i := range p.Target.Changes {
		if p.Target.Changes[i].Path == path {
			return &p.Target.Changes[i]
		}
	}
	return nil
}

func readTree(t *testing.T, r *rig, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.files.Root, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func writeTree(t *testing.T, r *rig, name, v string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(r.files.Root, filepath.FromSlash(name)), []byte(v+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDCQCNRoundTripMLX5: policy.dcqcn is written to the mlx5 test double
// (upstream debugfs cc_params and MLNX_OFED's sysfs ecn/roce_rp|roce_np),
// read back in sync, a value changed behind fabricctl's back is drift that
// the next plan (and diff) shows and apply puts back; the fields the intent
// does not set are never touched. (TestHostGetsWhatSimulateRuns, in
// cc_sim_test.go, holds the values equal to simulate's.)
func TestDCQCNRoundTripMLX5(t *testing.T) {
	for _, mode := range []string{"debugfs", "sysfs"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			r := newRig(t, treeOpts{ecn: mode, configfs: true})
			f, h := loadIntent(t, withDCQCN)
			dir, prefix := "sys/kernel/debug/mlx5/0000:3b:00.0/cc_params/", "ens1f0np0/cc_params/"
			name := func(v intent.DCQCNValue) string { return v.MLX5 }
			if mode == "sysfs" {
				dir, prefix = "sys/class/net/ens1f0np0/ecn/", "ens1f0np0/ecn/"
				name = func(v intent.DCQCNValue) string { return v.MLNXOFED }
			}
			p, err := r.d.Plan(ctx, f, h)
			if err != nil {
				t.Fatal(err)
			}
			values := f.Policy.DCQCN.Values()
			if len(values) != dcqcntest.Fields {
				t.Fatalf("%d dcqcn values, want %d", len(values), dcqcntest.Fields)
			}
			for _, v := range values {
				c := changeOf(p, prefix+name(v))
				if c == nil || c.Action != plan.Update || c.After != strconv.FormatInt(v.Value, 10) {
					t.Errorf("%s: change %+v, want an update to %d", name(v), c, v.Value)
				}
			}
			if _, err := r.d.Apply(ctx, p); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			for _, v := range values {
				if got := readTree(t, r, dir+name(v)); got != strconv.FormatInt(v.Value, 10) {
					t.Errorf("/%s%s = %s after apply, want %d", dir, name(v), got, v.Value)
				}
			}
			// Not in the intent (gd): left as the firmware had it, never written.
			unset := map[string]string{"debugfs": "rp_gd", "sysfs": "roce_rp/rpg_gd"}[mode]
			if got := readTree(t, r, dir+unset); got != "11" {
				t.Errorf("/%s%s = %s, want it untouched (11)", dir, unset, got)
			}
			for _, l := range r.files.log {
				if strings.HasSuffix(l, "/"+unset) {
					t.Errorf("%s without policy.dcqcn.gd", l)
				}
			}
			p2, err := r.d.Plan(ctx, f, h)
			if err != nil || p2.Target.HasChanges() {
				t.Fatalf("re-plan after apply: %v\n%s", err, render(t, p2))
			}

			// Drift: the firmware's default comes back behind fabricctl's back.
			key := "rp_time_reset"
			if mode == "sysfs" {
				key = "roce_rp/rpg_time_reset"
			}
			writeTree(t, r, dir+key, "300")
			p3, err := r.d.Plan(ctx, f, h)
			if err != nil {
				t.Fatal(err)
			}
			c := changeOf(p3, prefix+key)
			if c == nil || c.Action != plan.Update || c.Before != "300" || c.After != "55" {
				t.Fatalf("drifted %s: change %+v, want 300 -> 55", key, c)
			}
			if len(p3.Steps) != 1 || !strings.Contains(p3.Steps[0].Command, "echo 55 > /"+dir+key) {
				t.Errorf("drift repair steps: %+v, want the one write", p3.Steps)
			}
			if after, err := r.d.Apply(ctx, p3); err != nil || after.Target.HasChanges() {
				t.Errorf("apply of the drift: %v", err)
			}
		})
	}
}

// TestDCQCNAbsentLeavesNICAlone: without policy.dcqcn no congestion
// parameter is read or written (only the CNP DSCP/priority of policy.roce,
// as before).
func TestDCQCNAbsentLeavesNICAlone(t *testing.T) {
	r := newRig(t, treeOpts{ecn: "debugfs", configfs: true})
	f, h := loadIntent(t, nil)
	p, err := r.d.Plan(context.Background(), f, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Target.Changes {
		if strings.Contains(c.Path, "/cc_params/rp_") || strings.Contains(c.Path, "np_min_time") {
			t.Errorf("change %s without policy.dcqcn", c.Path)
		}
	}
}

// TestDCQCNMissingFileIsANote: a kernel whose cc_params lacks a file (an
// older upstream driver has no np_min_time_between_cnps) gets the others;
// the missing one is a note with the mlxconfig equivalent, not an error.
func TestDCQCNMissingFileIsANote(t *testing.T) {
	r := newRig(t, treeOpts{ecn: "debugfs", configfs: true})
	if err := os.Remove(filepath.Join(r.files.Root, "sys/kernel/debug/mlx5/0000:3b:00.0/cc_params/np_min_time_between_cnps")); err != nil {
		t.Fatal(err)
	}
	f, h := loadIntent(t, withDCQCN)
	p, err := r.d.Plan(context.Background(), f, h)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	if changeOf(p, "ens1f0np0/cc_params/np_min_time_between_cnps") != nil || changeOf(p, "ens1f0np0/cc_params/rp_time_reset") == nil {
		t.Errorf("changes: %+v", p.Target.Changes)
	}
	found := false
	for _, n := range p.Target.Notes {
		found = found || strings.Contains(n, "np_min_time_between_cnps (policy.dcqcn.minTimeBetweenCNPs)") && strings.Contains(n, "MIN_TIME_BETWEEN_CNPS_P1=8")
	}
	if !found {
		t.Errorf("no note for the missing file: %q", p.Target.Notes)
	}
}

// bnxtRig is two bnxt_en NICs (plain IEEE dcbnl, no mlx5 model) with
// RDMA devices bnxt_re0/1 and bnxt_re's configfs subsystem loaded.
func bnxtRig(t *testing.T) (*rig, *intent.Fabric, *intent.Host) {
	r := newRig(t, treeOpts{driver: "bnxt_en", configfs: true, bnxtCC: true, ib: "bnxt_re"})
	for _, n := range r.k.nics {
		n.mlx5 = false
		n.ieee.Buffer = nil
	}
	f, h := loadIntent(t, func(s string) string {
		return strings.ReplaceAll(withDCQCN(s), "rdma: mlx5_", "rdma: bnxt_re")
	})
	return r, f, h
}

// TestDCQCNRoundTripBnxt: on bnxt_re the CNP DSCP/priority, ECN and the
// policy.dcqcn field it has (the minimum time between CNPs) are written
// to its configfs cc attributes in the driver's hex, then committed by
// writing 1 to cc/apply (configfs.c apply_store) once per device; the
// read-back is in sync; a value changed behind fabricctl's back is drift
// whose repair writes the value and applies again; the fields bnxt_re has
// no equivalent of are a note.
func TestDCQCNRoundTripBnxt(t *testing.T) {
	ctx := context.Background()
	r, f, h := bnxtRig(t)
	p, err := r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	if p.Target.Platform != "bnxt" {
		t.Errorf("platform %q, want bnxt", p.Target.Platform)
	}
	var cmds []string
	for _, s := range p.Steps {
		if strings.Contains(s.Command, "bnxt_re/bnxt_re0") {
			cmds = append(cmds, s.Command)
		}
	}
	want := []string{
		"mkdir -p /sys/kernel/config/bnxt_re/bnxt_re0",
		"echo 0x1 > /sys/kernel/config/bnxt_re/bnxt_re0/ports/1/cc/ecn_enable",
		"echo 0x30 > /sys/kernel/config/bnxt_re/bnxt_re0/ports/1/cc/cnp_dscp",
		"echo 0x6 > /sys/kernel/config/bnxt_re/bnxt_re0/ports/1/cc/cnp_prio",
		"echo 0x8 > /sys/kernel/config/bnxt_re/bnxt_re0/ports/1/cc/min_time_bet_cnp",
		"echo 0x1 > /sys/kernel/config/bnxt_re/bnxt_re0/ports/1/cc/apply",
	}
	if strings.Join(cmds, "\n") != strings.Join(want, "\n") {
		t.Errorf("bnxt_re0 steps:\n%s\nwant:\n%s", strings.Join(cmds, "\n"), strings.Join(want, "\n"))
	}
	noted := false
	for _, n := range p.Target.Notes {
		noted = noted || strings.Contains(n, "ens1f0np0: bnxt_re's congestion control takes its own parameters") && strings.Contains(n, "timeReset")
	}
	if !noted {
		t.Errorf("no note for the unmapped policy.dcqcn fields: %q", p.Target.Notes)
	}
	after, err := r.d.Apply(ctx, p)
	if err != nil || after.Target.HasChanges() {
		t.Fatalf("Apply: %v\n%s", err, render(t, after))
	}
	cc := "sys/kernel/config/bnxt_re/bnxt_re0/ports/1/cc/"
	for attr, v := range map[string]string{"cnp_dscp": "0x30", "cnp_prio": "0x6", "ecn_enable": "0x1", "min_time_bet_cnp": "0x8"} {
		if got := r.files.bnxtFW[cc+attr]; got != v {
			t.Errorf("firmware %s = %q after apply, want %q (written and applied)", attr, got, v)
		}
	}
	if p2, err := r.d.Plan(ctx, f, h); err != nil || p2.Target.HasChanges() {
		t.Fatalf("re-plan: %v\n%s", err, render(t, p2))
	}

	// Drift: the CNP DSCP changed behind fabricctl's back (bnxt_setupcc.sh
	// run by hand, say).
	writeTree(t, r, cc+"cnp_dscp", "0x1a")
	p3, err := r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	if c := changeOf(p3, "ens1f0np0/bnxt_re/cc/cnp_dscp"); c == nil || c.Before != "0x1a" || c.After != "0x30" {
		t.Fatalf("drifted cnp_dscp: %+v", c)
	}
	if c := changeOf(p3, "ens1f0np0/bnxt_re/cc/apply"); c == nil || c.Action != plan.Update {
		t.Errorf("drift repair without cc/apply: %+v", p3.Target.Changes)
	}
	if len(p3.Steps) != 2 || !strings.HasSuffix(p3.Steps[1].Command, "cc/apply") {
		t.Errorf("drift repair steps: %+v", p3.Steps)
	}
	r.files.bnxtFW[cc+"cnp_dscp"] = "0x1a"
	if after, err := r.d.Apply(ctx, p3); err != nil || after.Target.HasChanges() {
		t.Fatalf("apply of the drift: %v", err)
	}
	if got := r.files.bnxtFW[cc+"cnp_dscp"]; got != "0x30" {
		t.Errorf("firmware cnp_dscp after the repair = %q, want 0x30", got)
	}
}

// TestNICAccelerationsManualStep: policy.nicAccelerations on a ConnectX is
// the exact mlxreg command in the plan (ROCE_ACCL has no kernel
// interface), each field with its field_select bit; on another NIC, a note
// that it does not apply. Nothing is written for it.
func TestNICAccelerationsManualStep(t *testing.T) {
	accel := func(s string) string {
		return strings.Replace(s, "  dcbx: host-static\n", "  dcbx: host-static\n  nicAccelerations: {adaptiveRetransmission: true, slowRestart: false, selectiveRepeat: true}\n", 1)
	}
	r := newRig(t, treeOpts{ecn: "debugfs", configfs: true})
	f, h := loadIntent(t, accel)
	plain, _ := loadIntent(t, nil)
	p, err := r.d.Plan(context.Background(), f, h)
	if err != nil {
		t.Fatal(err)
	}
	want := "mlxreg -d 0000:3b:00.1 --yes --reg_name ROCE_ACCL --set \"roce_adp_retrans_field_select=1,roce_adp_retrans_en=1,roce_slow_restart_field_select=1,roce_slow_restart_en=0,selective_repeat_forced_en_field_select=1,selective_repeat_forced_en=1\""
	found := false
	for _, n := range p.Target.Notes {
		found = found || strings.HasPrefix(n, "ens1f1np1: manual step") && strings.Contains(n, want)
	}
	if !found {
		t.Errorf("no mlxreg manual step %q in %q", want, p.Target.Notes)
	}
	p0, err := r.d.Plan(context.Background(), plain, h)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Steps) != len(p0.Steps) {
		t.Errorf("nicAccelerations added steps: %d vs %d", len(p.Steps), len(p0.Steps))
	}

	rb, _, _ := bnxtRig(t)
	fb, hb := loadIntent(t, func(s string) string { return strings.ReplaceAll(accel(s), "rdma: mlx5_", "rdma: bnxt_re") })
	pb, err := rb.d.Plan(context.Background(), fb, hb)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(pb.Target.Notes, "\n"), "ens1f0np0: policy.nicAccelerations are ConnectX's (the ROCE_ACCL register); this NIC (bnxt_en)") {
		t.Errorf("bnxt notes: %q", pb.Target.Notes)
	}
}

// TestBnxtRestoreApplies: restoring a backup puts bnxt_re's cc attributes
// back and commits them with cc/apply, as apply does: without the commit
// the firmware would keep the values the restore meant to undo.
func TestBnxtRestoreApplies(t *testing.T) {
	ctx := context.Background()
	r, f, h := bnxtRig(t)
	for _, dev := range []string{"bnxt_re0", "bnxt_re1"} {
		if err := r.files.Mkdir(bnxtCCRoot + "/" + dev); err != nil {
			t.Fatal(err)
		}
	}
	p, err := r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "gpu1.json")
	if _, err := r.d.ApplyWith(ctx, p, ApplyOptions{BackupFile: file}); err != nil {
		t.Fatalf("ApplyWith: %v", err)
	}
	cc := "sys/kernel/config/bnxt_re/bnxt_re0/ports/1/cc/"
	if r.files.bnxtFW[cc+"cnp_dscp"] != "0x30" {
		t.Fatalf("firmware cnp_dscp after apply = %q", r.files.bnxtFW[cc+"cnp_dscp"])
	}
	b, err := ReadBackup(file)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := r.d.Restore(ctx, b)
	if err != nil || rr.ReadBack.Target.HasChanges() {
		t.Fatalf("Restore: %v", err)
	}
	for attr, want := range map[string]string{"cnp_dscp": "0", "cnp_prio": "0", "ecn_enable": "0", "min_time_bet_cnp": "0"} {
		if got := r.files.bnxtFW[cc+attr]; got != want {
			t.Errorf("firmware %s after restore = %q, want %q (written back and applied)", attr, got, want)
		}
	}
}

// TestBnxtServiceProfileSkipsCNPPriority: where bnxt_re's firmware assigns
// priorities by service profile (debugfs info fw_service_prof_type_sup 1),
// cnp_prio_store refuses every write, so the plan leaves it out with a
// note instead of failing the apply.
func TestBnxtServiceProfileSkipsCNPPriority(t *testing.T) {
	ctx := context.Background()
	r, f, h := bnxtRig(t)
	for _, dev := range []string{"bnxt_re0", "bnxt_re1"} {
		p := filepath.Join(r.files.Root, "sys/kernel/debug/bnxt_re", dev)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		writeTree(t, r, "sys/kernel/debug/bnxt_re/"+dev+"/info", "fw_service_prof_type_sup : 1")
	}
	p, err := r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	if c := changeOf(p, "ens1f0np0/bnxt_re/cc/cnp_prio"); c != nil {
		t.Errorf("cnp_prio planned on a service-profile NIC: %+v", c)
	}
	if !strings.Contains(strings.Join(p.Target.Notes, "\n"), "bnxt_re0's firmware assigns the CNP priority by its service profile") {
		t.Errorf("notes: %q", p.Target.Notes)
	}
	if after, err := r.d.Apply(ctx, p); err != nil || after.Target.HasChanges() {
		t.Fatalf("Apply: %v", err)
	}
}

// TestAssumeBackupWithCongestionControlIsInSync: the backup of a host
// that apply configured, congestion control included (mlx5 cc_params and
// bnxt_re's configfs cc, whose directories the backup records), plans no
// changes against --assume FILE, as on the host itself.
func TestAssumeBackupWithCongestionControlIsInSync(t *testing.T) {
	ctx := context.Background()
	mlx5 := newRig(t, treeOpts{ecn: "debugfs", configfs: true})
	mf, mh := loadIntent(t, withDCQCN)
	bnxt, bf, bh := bnxtRig(t)
	for _, tc := range []struct {
		name string
		r    *rig
		f    *intent.Fabric
		h    *intent.Host
	}{{"mlx5", mlx5, mf, mh}, {"bnxt", bnxt, bf, bh}} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tc.r.d.Plan(ctx, tc.f, tc.h)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tc.r.d.Apply(ctx, p); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			after, err := tc.r.d.Plan(ctx, tc.f, tc.h)
			if err != nil || after.Target.HasChanges() {
				t.Fatalf("re-plan: %v", err)
			}
			file := filepath.Join(t.TempDir(), "b.json")
			if err := WriteBackup(file, after.Backup()); err != nil {
				t.Fatal(err)
			}
			d, _, err := Assume(file, tc.f, tc.h)
			if err != nil {
				t.Fatal(err)
			}
			assumed, err := d.Plan(ctx, tc.f, tc.h)
			if err != nil || assumed.Target.HasChanges() {
				t.Errorf("plan against the backup: %v\n%s", err, render(t, assumed))
			}
		})
	}
}
