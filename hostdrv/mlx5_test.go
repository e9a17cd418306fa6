package hostdrv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricctl/fabricctl/hostdrv/internal/dcbnl"
	"github.com/fabricctl/fabricctl/plan"
)

// sentAppCount returns how many APP entries the IEEE_SET requests carried.
func sentAppCount(t *testing.T, k *fakeKernel, ifn string) int {
	t.Helper()
	n := 0
	for _, raw := range k.sent {
		_, r, err := dcbnl.ParseMessage(raw)
		if err != nil {
			t.Fatal(err)
		}
		if r.Cmd != dcbnl.CmdIEEESet || r.Ifname() != ifn {
			continue
		}
		for _, a := range r.Attrs {
			for _, c := range a.Nested {
				if c.Kind() == dcbnl.AttrIEEEAppTable {
					n += len(c.Nested)
				}
			}
		}
	}
	return n
}

// TestMLX5PartialDSCPMapMisclassifies shows the bug item 1 fixes, on the
// test double's model of mlx5e_dcbnl_ieee_setapp: writing only the class
// DSCPs (what the generic backend does) switches the port to DSCP trust and
// leaves the other DSCPs on the firmware's map, DSCP>>3, so DSCP 24-31 land
// on the lossless priority 3 and 49-55 on the CNP priority 6, while the
// switches put them in the default class. The mlx5 backend writes all 64.
func TestMLX5PartialDSCPMapMisclassifies(t *testing.T) {
	ctx := context.Background()
	f, h := loadIntent(t, nil)
	want := f.Policy.DSCPToPriority()

	// The generic backend on an mlx5 NIC: only DSCP 26 and 48 written.
	r := newRig(t, treeOpts{configfs: true})
	generic := &Backends{byDriver: map[string]Backend{}, fallback: Generic{}}
	r.d.Backends = generic
	p, err := r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.d.Apply(ctx, p); err != nil {
		t.Fatal(err)
	}
	n := r.k.nics["ens1f0np0"]
	if len(n.ieee.Apps) != 2 {
		t.Fatalf("kernel lists %d APP entries after a partial map, want 2", len(n.ieee.Apps))
	}
	for d := 24; d <= 31; d++ {
		if d != 26 && n.classify(d) != 3 {
			t.Errorf("partial map: DSCP %d -> priority %d, want 3 (the firmware's DSCP>>3)", d, n.classify(d))
		}
	}
	for d := 49; d <= 55; d++ {
		if n.classify(d) != 6 {
			t.Errorf("partial map: DSCP %d -> priority %d, want 6 (the firmware's DSCP>>3)", d, n.classify(d))
		}
	}

	// The mlx5 backend: every DSCP written, every DSCP where the intent says.
	r = newRig(t, treeOpts{configfs: true})
	p, err = r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.d.Apply(ctx, p); err != nil {
		t.Fatal(err)
	}
	n = r.k.nics["ens1f0np0"]
	if got := sentAppCount(t, r.k, "ens1f0np0"); got != 64 {
		t.Errorf("mlx5: %d APP entries sent, want 64", got)
	}
	if len(n.ieee.Apps) != 64 || n.dscpAppCnt != 64 {
		t.Errorf("mlx5: kernel lists %d entries (driver count %d), want 64", len(n.ieee.Apps), n.dscpAppCnt)
	}
	for d := range 64 {
		if got := n.classify(d); got != want[d] {
			t.Errorf("mlx5: DSCP %d -> priority %d, want %d", d, got, want[d])
		}
	}
}

// kindsOf returns the fake kernel's write log for one interface.
func kindsOf(k *fakeKernel, ifn string) []string {
	var out []string
	for _, o := range k.order {
		if x, ok := strings.CutPrefix(o, ifn+" "); ok {
			out = append(out, x)
		}
	}
	return out
}

// TestApplyOrderPauseFirstTrustLast: 802.3x pause goes off before PFC and
// the buffers, and DSCP trust (the first APP entry) comes after PFC is on.
func TestApplyOrderPauseFirstTrustLast(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, treeOpts{configfs: true})
	f, h := loadIntent(t, withBuffers)
	p, err := r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.d.Apply(ctx, p); err != nil {
		t.Fatal(err)
	}
	got := kindsOf(r.k, "ens1f0np0")
	want := []string{"mtu", "dcbx", "pause", "pfc", "buffer", "buffer", "ets", "app-add"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("write order on ens1f0np0 (-want +got):\n%s", diff)
	}
	// Netlink sequence numbers follow the final order.
	for i, s := range p.Steps {
		if len(s.Netlink) >= 12 {
			if seq := int(s.Netlink[8]) | int(s.Netlink[9])<<8; seq != i+1 {
				t.Errorf("step %d (%s) has nlmsg_seq %d", i+1, s.Command, seq)
			}
		}
	}
}

// oldOrder puts the pause steps last, where apply used to send them.
func oldOrder(steps []Step) []Step {
	var out, pause []Step
	for _, s := range steps {
		if s.kind == kindPause {
			pause = append(pause, s)
			continue
		}
		out = append(out, s)
	}
	return append(out, pause...)
}

// TestENOMEMWithPauseOnAt400G reproduces the first-apply failure on the
// test double: with 802.3x pause still on, fill_pfc_en makes every buffer
// that has a priority lossless, so moving priority 3 into buffer 1 makes
// buffer 0 (128 KiB) lossless too, below the 400G minimum: ENOMEM. With
// pause off first, as apply now does, the same layout goes through.
func TestENOMEMWithPauseOnAt400G(t *testing.T) {
	ctx := context.Background()
	f, h := loadIntent(t, withBuffers)

	r := newRig(t, treeOpts{configfs: true})
	p, err := r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	p.Steps = oldOrder(p.Steps)
	_, err = r.d.Apply(ctx, p)
	if err == nil || !strings.Contains(err.Error(), "ens1f0np0: buffer: ") || !strings.Contains(err.Error(), "ENOMEM") {
		t.Fatalf("apply with pause still on = %v, want ENOMEM on the buffer", err)
	}

	r = newRig(t, treeOpts{configfs: true})
	p, err = r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	after, err := r.d.Apply(ctx, p)
	if err != nil {
		t.Fatalf("apply with pause off first: %v", err)
	}
	if after.Target.HasChanges() {
		t.Errorf("read-back has changes:\n%s", render(t, after))
	}
	if n := r.k.nics["ens1f0np0"]; n.lossy[1] || !n.lossy[0] {
		t.Errorf("buffer lossy bits %v, want buffer 1 lossless and buffer 0 lossy", n.lossy)
	}
}

// TestMLX5HeadroomMatchesDriverFormula: the planner's minimum and the test
// double's (two separate readings of port_buffer.c calculate_xoff and
// update_xoff_threshold) agree, and hand-worked values come out.
func TestMLX5HeadroomMatchesDriverFormula(t *testing.T) {
	tests := []struct {
		speed, cable, mtu int
		xoff, min         uint64
	}{
		// (301 + 216*7/100) * 100000/1000 + 272*1500/100 = 316*100 + 4080
		{100000, 7, 1500, 35680, 35680 + 9978 + 128},
		// (301 + 6) * 400 + 24480
		{400000, 3, 9000, 147280, 147280 + 9978 + 128},
		// below 40G counts as 40G: (301 + 216) * 40 + 2720
		{25000, 100, 1000, 23400, 23400 + 9978 + 128},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%dMbps-%dm-mtu%d", tc.speed, tc.cable, tc.mtu), func(t *testing.T) {
			h := MLX5Headroom{SpeedMbps: tc.speed, CableM: tc.cable, MTU: tc.mtu, MaxMTU: fakeMLX5MaxMTU, Cell: fakeCell}
			if h.Xoff() != tc.xoff || h.Min() != tc.min {
				t.Errorf("xoff %d min %d, want %d %d", h.Xoff(), h.Min(), tc.xoff, tc.min)
			}
			n := &fakeNIC{speedMbps: tc.speed, cable: uint16(tc.cable), mtu: tc.mtu, maxMTU: fakeMLX5MaxMTU}
			if n.losslessMin() != h.Min() {
				t.Errorf("test double minimum %d, planner %d", n.losslessMin(), h.Min())
			}
		})
	}
	// max_mtu below MINIMUM_MAX_MTU counts as 9216.
	if got := (MLX5Headroom{SpeedMbps: 100000, CableM: 7, MTU: 1500, MaxMTU: 1500}).Min(); got != 35680+9216+128 {
		t.Errorf("min with max_mtu 1500 = %d, want %d", got, 35680+9216+128)
	}
}

// TestBufferMinFollowsSpeed: the same 160 KiB lossless buffer passes the
// plan at 100G and is refused at 400G, where the minimum is 157386 B... and
// the test double agrees at apply.
func TestBufferMinFollowsSpeed(t *testing.T) {
	ctx := context.Background()
	edit := func(s string) string {
		return strings.Replace(s, "  dcbx: host-static\n", "  dcbx: host-static\n  hostBuffers:\n    - {buffer: 0, size: 160KiB, priorities: [0, 1, 2, 4, 5, 6, 7]}\n    - {buffer: 1, size: 150000B, priorities: [3]}\n", 1)
	}
	f, h := loadIntent(t, edit)
	for _, speed := range []int{100000, 400000} {
		t.Run(fmt.Sprint(speed), func(t *testing.T) {
			r := newRig(t, treeOpts{configfs: true})
			for name, n := range r.k.nics {
				n.speedMbps = speed
				dev := filepath.Join(r.files.Root, "sys/class/net", name, "speed")
				if err := os.WriteFile(dev, []byte(fmt.Sprintln(speed)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p, err := r.d.Plan(ctx, f, h)
			if speed == 400000 {
				if err == nil || !strings.Contains(err.Error(), "lossless buffer 1 of 150000 B is below mlx5's minimum 157386 B") {
					t.Fatalf("Plan at 400G = %v, want the buffer refused", err)
				}
				// The test double refuses it too (with --partial).
				res, err := r.d.ApplyWith(ctx, p, ApplyOptions{Partial: true, NoRollback: true})
				if err == nil || res.Written() == 0 {
					t.Fatalf("partial apply: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Plan at 100G: %v", err)
			}
			if _, err := r.d.Apply(ctx, p); err != nil {
				t.Fatalf("Apply at 100G: %v", err)
			}
		})
	}
}

// TestBufferSumRefusedAtPlan: buffers that do not fit total_size (as the
// driver reports it) are a plan error, and nothing is written.
func TestBufferSumRefusedAtPlan(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, treeOpts{configfs: true})
	f, h := loadIntent(t, func(s string) string {
		return strings.Replace(s, "  dcbx: host-static\n", "  dcbx: host-static\n  hostBuffers:\n    - {buffer: 0, size: 400KiB, priorities: [0, 1, 2, 4, 5, 6, 7]}\n    - {buffer: 1, size: 192KiB, priorities: [3]}\n", 1)
	})
	p, err := r.d.Plan(ctx, f, h)
	if err == nil || !strings.Contains(err.Error(), "the buffer sizes sum to 606208 B, more than the port's total_size 524288 B") {
		t.Fatalf("Plan = %v, want the sum refused", err)
	}
	res, err := r.d.ApplyWith(ctx, p, ApplyOptions{})
	if err == nil || res.Written() != 0 || r.writes() != 0 {
		t.Errorf("ApplyWith: err %v, %d written, %d writes; want nothing written", err, res.Written(), r.writes())
	}
	for _, s := range res.Steps {
		if s.Outcome != NotAttempted {
			t.Errorf("step %s: %s, want not attempted", s.Path, s.Outcome)
		}
	}
}

// TestCableLengthEffectSaid: the PFC change says whether the cable length
// sets headroom (software-owned buffer) or is cosmetic (firmware's).
func TestCableLengthEffectSaid(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		edit func(string) string
		want string
	}{
		{nil, "cosmetic here: the port buffer is the firmware's"},
		{withBuffers, "sets the xoff headroom of the lossless buffers"},
	} {
		r := newRig(t, treeOpts{configfs: true})
		f, h := loadIntent(t, tc.edit)
		p, err := r.d.Plan(ctx, f, h)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, c := range p.Target.Changes {
			if c.Path == "ens1f0np0/pfc" {
				found = strings.Contains(c.Reason, tc.want)
				if !found {
					t.Errorf("pfc reason %q, want it to say %q", c.Reason, tc.want)
				}
			}
		}
		if !found {
			t.Errorf("no pfc change")
		}
	}
}

// TestCableFromLink: a NIC without its own cable length takes the one of
// the inventory link that ends on it (the switch port's cable).
func TestCableFromLink(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, treeOpts{configfs: true})
	f, h := loadIntent(t, func(s string) string {
		s = strings.Replace(s, ", speed: 400G, cable: 3m}", "}", 1)
		return s + `  switches:
    - name: leaf1
      platform: sonic
      address: 192.0.2.1:8080
      ports:
        - {name: Ethernet0, speed: 400G, cable: 40m}
  links:
    - {a: leaf1:Ethernet0, b: gpu1:ens1f0np0}
`
	})
	p, err := r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	var pfc plan.Change
	for _, c := range p.Target.Changes {
		if c.Path == "ens1f0np0/pfc" {
			pfc = c
		}
	}
	if !strings.HasSuffix(pfc.After, "delay 40") {
		t.Errorf("ens1f0np0 pfc -> %q, want delay 40 (the link's cable)", pfc.After)
	}
}

// TestUnusedTCsStrictOnBnxtLikeDriver: a driver that refuses ETS 0 % TCs
// and anything above its TC count (bnxt_ets_validate) takes the ETS
// fabricctl sends; a class on a TC the device lacks is a plan error.
func TestUnusedTCsStrictOnBnxtLikeDriver(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, treeOpts{driver: "bnxt_en", configfs: true})
	for _, n := range r.k.nics {
		n.mlx5 = false
		n.ieee.Buffer = nil
	}
	f, h := loadIntent(t, nil)
	p, err := r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	if after, err := r.d.Apply(ctx, p); err != nil || after.Target.HasChanges() {
		t.Fatalf("Apply on a bnxt-like driver: %v", err)
	}
	for _, n := range r.k.nics {
		n.ieee.ETS.ETSCap = 4 // the CNP class's priority/TC 6 does not exist
	}
	r.k.nics["ens1f0np0"].ieee.ETS.PrioTC = [8]uint8{}
	_, err = r.d.Plan(ctx, f, h)
	if err == nil || !strings.Contains(err.Error(), "priority 6 is mapped to traffic class 6, but the device has 4 traffic classes") {
		t.Errorf("Plan with ets_cap 4 = %v, want the CNP class refused", err)
	}
}

// TestMLXConfigNotesNameThePort: the second port's note says _P2.
func TestMLXConfigNotesNameThePort(t *testing.T) {
	r := newRig(t, treeOpts{})
	f, h := loadIntent(t, nil)
	p, err := r.d.Plan(context.Background(), f, h)
	if err != nil {
		t.Fatal(err)
	}
	var p1, p2 bool
	for _, n := range p.Target.Notes {
		p1 = p1 || strings.HasPrefix(n, "ens1f0np0:") && strings.Contains(n, "CNP_DSCP_P1=48 CNP_802P_PRIO_P1=6 ROCE_CC_PRIO_MASK_P1=0x8")
		p2 = p2 || strings.HasPrefix(n, "ens1f1np1:") && strings.Contains(n, "-d 0000:3b:00.1 set CNP_DSCP_P2=48 CNP_802P_PRIO_P2=6 ROCE_CC_PRIO_MASK_P2=0x8")
	}
	if !p1 || !p2 {
		t.Errorf("mlxconfig notes do not name _P1 / _P2: %q", p.Target.Notes)
	}
}

// fakeState is the part of the fake's state a restore must bring back.
type fakeState struct {
	MTU        int
	Pause      Pause
	DCBXHost   bool
	PFC        uint8
	Cable      uint16
	ETS        dcbnl.ETS
	Buffer     dcbnl.Buffer
	Apps       []dcbnl.App
	TrustDSCP  bool
	ECNEnable3 string
}

func stateOf(t *testing.T, r *rig, ifn string) fakeState {
	t.Helper()
	n := r.k.nics[ifn]
	b, _ := os.ReadFile(filepath.Join(r.files.Root, "sys/class/net", ifn, "ecn/roce_np/enable/3"))
	apps := slices.Clone(n.ieee.Apps)
	slices.SortFunc(apps, func(a, b dcbnl.App) int { return int(a.Protocol) - int(b.Protocol) })
	return fakeState{MTU: n.mtu, Pause: n.pause, DCBXHost: n.ieee.DCBX&DCBXHost != 0, PFC: n.ieee.PFC.Enable, Cable: n.cable,
		ETS: *n.ieee.ETS, Buffer: *n.ieee.Buffer, Apps: apps, TrustDSCP: n.trustDSCP, ECNEnable3: strings.TrimSpace(string(b))}
}

// TestBackupAndRestore: apply saves the observed state (mode 0600) before
// writing; restore puts it back and reads back in sync; the fake's state
// is what it was before the apply.
func TestBackupAndRestore(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, treeOpts{ecn: "sysfs", configfs: true})
	before := stateOf(t, r, "ens1f0np0")
	f, h := loadIntent(t, withBuffers)
	p, err := r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "backups", "gpu1.json")
	res, err := r.d.ApplyWith(ctx, p, ApplyOptions{BackupFile: file})
	if err != nil {
		t.Fatalf("ApplyWith: %v", err)
	}
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup file: %v, mode %v; want 0600", err, fi.Mode())
	}
	if res.Written() != len(p.Steps) {
		t.Errorf("%d of %d steps written", res.Written(), len(p.Steps))
	}
	if stateOf(t, r, "ens1f0np0").MTU != 9000 {
		t.Fatal("apply did not apply")
	}
	b, err := ReadBackup(file)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := r.d.Restore(ctx, b)
	if err != nil {
		t.Fatalf("Restore: %v\n%q", err, rr.Notes())
	}
	if rr.ReadBack.Target.HasChanges() {
		t.Errorf("read-back after restore has changes:\n%s", render(t, rr.ReadBack))
	}
	if diff := cmp.Diff(before, stateOf(t, r, "ens1f0np0")); diff != "" {
		t.Errorf("state after restore (-before +after):\n%s", diff)
	}
	// What the kernel cannot give back: mlx5e_dcbnl_ieee_delapp sets a
	// deleted DSCP's firmware priority to 0, not back to DSCP>>3 (the
	// port is back on PCP trust, where the map is not used).
	if n := r.k.nics["ens1f0np0"]; n.dscp2prio[26] != 0 || n.trustDSCP {
		t.Errorf("firmware map after restore: dscp 26 -> %d, trust dscp %v", n.dscp2prio[26], n.trustDSCP)
	}
}

// TestApplyRollsBack: a step that fails midway stops the apply and the host
// is put back; every step's outcome is reported.
func TestApplyRollsBack(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, treeOpts{ecn: "sysfs", configfs: true})
	before0, before1 := stateOf(t, r, "ens1f0np0"), stateOf(t, r, "ens1f1np1")
	r.k.nics["ens1f1np1"].rejectPFC = true
	f, h := loadIntent(t, nil)
	p, err := r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.d.ApplyWith(ctx, p, ApplyOptions{})
	if err == nil || !strings.Contains(err.Error(), "ens1f1np1: PFC") {
		t.Fatalf("ApplyWith = %v, want the PFC failure", err)
	}
	var outcomes []Outcome
	for _, s := range res.Steps {
		outcomes = append(outcomes, s.Outcome)
		if s.Outcome == Failed && (s.Path != "ens1f1np1/pfc" || !strings.Contains(s.Err, "EINVAL")) {
			t.Errorf("failed step %s: %s", s.Path, s.Err)
		}
	}
	if !slices.Contains(outcomes, Applied) || !slices.Contains(outcomes, Failed) || !slices.Contains(outcomes, NotAttempted) {
		t.Errorf("outcomes %v, want applied, failed and not attempted", outcomes)
	}
	if !res.RolledBack || len(res.Rollback) == 0 {
		t.Fatalf("not rolled back: %q", res.Notes())
	}
	if diff := cmp.Diff(before0, stateOf(t, r, "ens1f0np0")); diff != "" {
		t.Errorf("ens1f0np0 after rollback (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(before1, stateOf(t, r, "ens1f1np1")); diff != "" {
		t.Errorf("ens1f1np1 after rollback (-before +after):\n%s", diff)
	}
}

// TestPlanErrorsWriteNothing: a plan with an error writes nothing (the MTU
// used to be written while DCB failed), unless Partial.
func TestPlanErrorsWriteNothing(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, treeOpts{configfs: true})
	r.k.nics["ens1f1np1"].noDCB = true
	f, h := loadIntent(t, nil)
	p, err := r.d.Plan(ctx, f, h)
	if err == nil || !errorsIsErrno(err, syscall.EOPNOTSUPP) {
		t.Fatalf("Plan = %v, want EOPNOTSUPP", err)
	}
	res, err := r.d.ApplyWith(ctx, p, ApplyOptions{})
	if err == nil || !strings.Contains(err.Error(), "nothing written") || r.writes() != 0 || res.Written() != 0 {
		t.Fatalf("ApplyWith = %v, %d writes; want nothing written", err, r.writes())
	}
	res, err = r.d.ApplyWith(ctx, p, ApplyOptions{Partial: true})
	if res.Written() == 0 || r.k.nics["ens1f1np1"].mtu != 9000 {
		t.Errorf("--partial wrote %d steps (err %v), want the plannable ones (MTU on ens1f1np1 too)", res.Written(), err)
	}
}

func errorsIsErrno(err error, e syscall.Errno) bool { return errors.Is(err, e) }
