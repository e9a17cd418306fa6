package hostdrv

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricctl/fabricctl/hostdrv/internal/dcbnl"
	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/plan"
)

var update = flag.Bool("update", false, "update golden files")

const testIntent = `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: pod1}
policy:
  preset: roce-lossless
  hostMTU: 9000
  dcbx: host-static
inventory:
  hosts:
    - name: gpu1
      address: local
      nics:
        - {interface: ens1f0np0, rdma: mlx5_0, speed: 400G, cable: 3m}
        - {interface: ens1f1np1, rdma: mlx5_1, speed: 400G, cable: 2.5m}
`

func loadIntent(t testing.TB, edit func(string) string) (*intent.Fabric, *intent.Host) {
	t.Helper()
	src := testIntent
	if edit != nil {
		src = edit(src)
	}
	f, err := intent.Parse("fabric.yaml", []byte(src))
	if err != nil {
		t.Fatalf("intent.Parse: %v", err)
	}
	h := f.Host("gpu1")
	if h == nil {
		t.Fatal("host gpu1 missing from the test intent")
	}
	return f, h
}

type rig struct {
	k     *fakeKernel
	files *countingFiles
	d     *Driver
}

func newRig(t testing.TB, o treeOpts) *rig {
	ifs := []string{"ens1f0np0", "ens1f1np1"}
	root := mlx5Tree(t, o, ifs...)
	r := &rig{k: newFakeKernel(ifs...), files: &countingFiles{DirFiles: NewDirFiles(root)}}
	r.d = &Driver{Kernel: r.k, Files: r.files}
	return r
}

func (r *rig) writes() int { return r.k.writes + r.files.writes }

func render(t *testing.T, p *Plan) string {
	t.Helper()
	var b bytes.Buffer
	if err := plan.WriteText(&b, &plan.Plan{Targets: []plan.TargetPlan{p.Target}}); err != nil {
		t.Fatal(err)
	}
	b.WriteString("--- steps\n")
	for _, s := range p.Steps {
		b.WriteString(s.Command + "\n")
	}
	return b.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	file := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}

// withBuffers adds policy.hostBuffers: priority 3 (RoCE) into buffer 1 of
// 200001 B (not a whole number of mlx5's 128 B cells, so the driver rounds
// it), buffer 0 of 131072 B for the rest.
func withBuffers(s string) string {
	return strings.Replace(s, "  dcbx: host-static\n", "  dcbx: host-static\n  hostBuffers:\n    - {buffer: 0, size: 128KiB, priorities: [0, 1, 2, 4, 5, 6, 7]}\n    - {buffer: 1, size: 200001B, priorities: [3]}\n", 1)
}

func TestPlanGolden(t *testing.T) {
	tests := []struct {
		name string
		opts treeOpts
		edit func(string) string
	}{
		{"fresh-mlx5-sysfs-ecn", treeOpts{ecn: "sysfs", configfs: true}, nil},
		{"fresh-mlx5-debugfs", treeOpts{ecn: "debugfs", configfs: true}, nil},
		{"fresh-mlx5-no-ecn-no-configfs", treeOpts{}, nil},
		{"fresh-generic-full-map", treeOpts{driver: "ice", configfs: true}, func(s string) string {
			return strings.Replace(s, "  dcbx: host-static\n", "  dcbx: host-static\n  trustDSCPFullMap: true\n", 1)
		}},
		{"fresh-mlx5-buffers", treeOpts{ecn: "sysfs", configfs: true}, withBuffers},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, tc.opts)
			f, h := loadIntent(t, tc.edit)
			p, err := r.d.Plan(context.Background(), f, h)
			if err != nil {
				t.Fatalf("Plan: %v", err)
			}
			if r.writes() != 0 {
				t.Errorf("Plan wrote %d times, want 0", r.writes())
			}
			golden(t, "plan-"+tc.name+".txt", render(t, p))
		})
	}
}

// TestApplyConverges: the first apply writes and the read-back is clean;
// a second plan is empty and a second apply writes nothing at all.
func TestApplyConverges(t *testing.T) {
	tests := []struct {
		name string
		opts treeOpts
		edit func(string) string
	}{
		{"mlx5-sysfs-ecn", treeOpts{ecn: "sysfs", configfs: true}, nil},
		{"mlx5-debugfs", treeOpts{ecn: "debugfs", configfs: true}, nil},
		{"mlx5-bare", treeOpts{}, nil},
		{"mlx5-buffers", treeOpts{}, withBuffers},
		{"generic-full-map", treeOpts{driver: "ice", configfs: true}, func(s string) string {
			return strings.Replace(s, "  dcbx: host-static\n", "  dcbx: host-static\n  trustDSCPFullMap: true\n", 1)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			r := newRig(t, tc.opts)
			f, h := loadIntent(t, tc.edit)
			p, err := r.d.Plan(ctx, f, h)
			if err != nil {
				t.Fatal(err)
			}
			if !p.Target.HasChanges() || len(p.Steps) == 0 {
				t.Fatalf("first plan has no changes on a fresh host")
			}
			after, err := r.d.Apply(ctx, p)
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if after.Target.HasChanges() {
				t.Errorf("read-back after apply still has changes:\n%s", render(t, after))
			}
			if r.writes() == 0 {
				t.Errorf("first apply wrote nothing")
			}
			if r.k.flaps != 2 {
				t.Errorf("first apply changed PFC %d times, want once per NIC (2)", r.k.flaps)
			}

			w := r.writes()
			p2, err := r.d.Plan(ctx, f, h)
			if err != nil {
				t.Fatal(err)
			}
			if p2.Target.HasChanges() || len(p2.Steps) != 0 {
				t.Errorf("second plan: changes %v, %d steps; want none:\n%s", p2.Target.HasChanges(), len(p2.Steps), render(t, p2))
			}
			if _, err := r.d.Apply(ctx, p2); err != nil {
				t.Fatalf("second Apply: %v", err)
			}
			if got := r.writes() - w; got != 0 {
				t.Errorf("second apply wrote %d times (kernel %d, files %v), want 0", got, r.k.writes, r.files.log)
			}
			if r.k.flaps != 2 {
				t.Errorf("second apply flapped the link (PFC writes that changed pfc_en: %d, want still 2)", r.k.flaps)
			}
		})
	}
}

func TestApplyState(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, treeOpts{ecn: "sysfs", configfs: true})
	n := r.k.nics["ens1f0np0"]
	// Pre-existing: DSCP 26 on the wrong priority, a stale DSCP 10 entry, and
	// an ethertype entry (selector 1) that fabricctl must leave alone.
	seedApps(t, n, dcbnl.App{Selector: 5, Priority: 0, Protocol: 26}, dcbnl.App{Selector: 5, Priority: 1, Protocol: 10})
	n.ieee.Apps = append(n.ieee.Apps, dcbnl.App{Selector: 1, Priority: 4, Protocol: 0x8906})
	f, h := loadIntent(t, nil)
	p, err := r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.d.Apply(ctx, p); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	// mlx5: all 64 DSCPs listed (26 -> 3, 48 -> 6, the rest -> the default
	// class's priority 0), the ethertype entry left alone.
	dscp, other := 0, 0
	for _, a := range n.ieee.Apps {
		switch {
		case a.Selector != 5:
			other++
			if a != (dcbnl.App{Selector: 1, Priority: 4, Protocol: 0x8906}) {
				t.Errorf("non-DSCP APP entry changed: %+v", a)
			}
		default:
			dscp++
			want := uint8(0)
			switch a.Protocol {
			case 26:
				want = 3
			case 48:
				want = 6
			}
			if a.Priority != want {
				t.Errorf("APP dscp %d -> prio %d, want %d", a.Protocol, a.Priority, want)
			}
		}
	}
	if dscp != 64 || other != 1 {
		t.Errorf("APP table after apply: %d DSCP entries and %d others, want 64 and 1", dscp, other)
	}
	// Unused traffic classes are strict (TSA 0) with 0 %, as iproute2's
	// tc-tsa all:strict sends them.
	wantETS := dcbnl.ETS{ETSCap: 8,
		TCTxBW: [8]uint8{50, 0, 0, 50, 0, 0, 0, 0},
		TSA:    [8]uint8{TSAETS, TSAStrict, TSAStrict, TSAETS, TSAStrict, TSAStrict, TSAStrict, TSAStrict},
		PrioTC: [8]uint8{0, 0, 0, 3, 0, 0, 6, 0}}
	if diff := cmp.Diff(wantETS, *n.ieee.ETS); diff != "" {
		t.Errorf("ETS after apply (-want +got):\n%s", diff)
	}
	if n.ieee.PFC.Enable != 0x08 || n.cable != 3 {
		t.Errorf("PFC after apply: pfc_en %#x cable %d, want 0x08 cable 3 (3 m cable)", n.ieee.PFC.Enable, n.cable)
	}
	if got := r.k.nics["ens1f1np1"].cable; got != 3 {
		t.Errorf("PFC delay for a 2.5 m cable = %d, want 3 (rounded up)", got)
	}
	if n.ieee.DCBX != DCBXHost|DCBXVerIEEE {
		t.Errorf("DCBX after apply = %#x, want host ieee (0x09)", n.ieee.DCBX)
	}
	if n.mtu != 9000 || n.pause.RX || n.pause.TX || n.pause.Autoneg {
		t.Errorf("after apply: mtu %d pause %+v; want 9000, rx/tx off, autoneg as mlx5 reports it (off: set_pauseparam refuses autoneg)", n.mtu, n.pause)
	}
	for file, want := range map[string]string{
		"sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos":  "106",
		"sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_mode": "RoCE v2",
		"sys/class/net/ens1f0np0/ecn/roce_np/enable/3":               "1",
		"sys/class/net/ens1f0np0/ecn/roce_rp/enable/3":               "1",
		"sys/class/net/ens1f0np0/ecn/roce_rp/enable/0":               "0",
		"sys/class/net/ens1f0np0/ecn/roce_np/cnp_dscp":               "48",
		"sys/class/net/ens1f0np0/ecn/roce_np/cnp_802p_prio":          "6",
	} {
		b, err := os.ReadFile(filepath.Join(r.files.Root, file))
		if err != nil {
			t.Errorf("read /%s: %v", file, err)
			continue
		}
		if got := strings.TrimSpace(string(b)); got != want {
			t.Errorf("/%s = %q, want %q", file, got, want)
		}
	}
}

func TestPFCNotRewrittenWhenRight(t *testing.T) {
	r := newRig(t, treeOpts{ecn: "sysfs", configfs: true})
	for _, n := range r.k.nics {
		n.ieee.PFC.Enable, n.cable = 0x08, 3
	}
	f, h := loadIntent(t, nil)
	p, err := r.d.Plan(context.Background(), f, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Target.Changes {
		if c.Path == "ens1f0np0/pfc" && c.Action != plan.NoOp {
			t.Errorf("PFC already right but planned %v %s -> %s", c.Action, c.Before, c.After)
		}
	}
	for _, s := range p.Steps {
		if s.Path == "ens1f0np0/pfc" {
			t.Errorf("step %q writes PFC that is already right (mlx5 would flap the link)", s.Command)
		}
	}
	if _, err := r.d.Apply(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	// ens1f1np1 has a 2.5 m cable -> delay 3 too: no PFC write anywhere.
	if r.k.flaps != 0 {
		t.Errorf("apply changed pfc_en %d times, want 0", r.k.flaps)
	}
}

func TestApplyRefusesStalePlan(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, treeOpts{configfs: true})
	f, h := loadIntent(t, nil)
	p, err := r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	r.k.nics["ens1f0np0"].ieee.PFC.Enable = 0x10 // someone else changed PFC meanwhile
	if _, err := r.d.Apply(ctx, p); !errors.Is(err, plan.ErrStale) {
		t.Fatalf("Apply(stale plan) = %v, want plan.ErrStale", err)
	}
	if r.writes() != 0 {
		t.Errorf("a refused stale plan wrote %d times", r.writes())
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name    string
		break_  func(r *rig)
		setting string
		errno   syscall.Errno
		driver  bool // the failure came in the reply's status byte
		inApply bool
		affects string // plan paths that may still differ after the failure
	}{
		{"no dcbnl ops (VF)", func(r *rig) { r.k.nics["ens1f0np0"].noDCB = true }, "DCB (DCBX, APP, PFC, ETS)", syscall.EOPNOTSUPP, false, false, ""},
		{"interface missing", func(r *rig) { delete(r.k.nics, "ens1f1np1") }, "link", syscall.ENODEV, false, false, ""},
		{"driver rejects PFC", func(r *rig) { r.k.nics["ens1f0np0"].rejectPFC = true }, "PFC", syscall.EINVAL, true, true, "ens1f0np0/pfc"},
		{"rdma device missing", func(r *rig) {
			os.Remove(filepath.Join(r.files.Root, "sys/class/infiniband/mlx5_1"))
		}, "rdma_cm/default_roce_tos", syscall.ENODEV, false, true, "ens1f1np1/rdma_cm/"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			r := newRig(t, treeOpts{configfs: true})
			tc.break_(r)
			f, h := loadIntent(t, nil)
			p, err := r.d.Plan(ctx, f, h)
			if !tc.inApply {
				checkSettingErr(t, err, tc.setting, tc.errno, tc.driver)
				if p == nil || p.Target.Error == "" {
					t.Fatalf("plan has no Error for a failed setting")
				}
				// The other NIC is still planned.
				if len(p.Steps) == 0 {
					t.Errorf("no steps for the healthy NIC")
				}
				return
			}
			if err != nil {
				t.Fatalf("Plan: %v", err)
			}
			after, err := r.d.Apply(ctx, p)
			checkSettingErr(t, err, tc.setting, tc.errno, tc.driver)
			// Everything else converged.
			for _, c := range after.Target.Changes {
				if c.Action != plan.NoOp && !strings.HasPrefix(c.Path, tc.affects) {
					t.Errorf("after a failed %s, %s still differs: %s -> %s", tc.setting, c.Path, c.Before, c.After)
				}
			}
		})
	}
}

func checkSettingErr(t *testing.T, err error, setting string, errno syscall.Errno, driver bool) {
	t.Helper()
	var se *SettingError
	if !errors.As(err, &se) {
		t.Fatalf("error %v is not a *SettingError", err)
	}
	if se.Setting != setting || se.Interface == "" {
		t.Errorf("SettingError{Interface %q, Setting %q}, want setting %q and an interface", se.Interface, se.Setting, setting)
	}
	if !errors.Is(err, errno) {
		t.Errorf("error %v does not wrap %v", err, errno)
	}
	var de *dcbnl.DriverError
	if got := errors.As(err, &de); got != driver {
		t.Errorf("error %v: from the reply status byte = %v, want %v", err, got, driver)
	}
}

func TestSwitchWillingIsVerifyOnly(t *testing.T) {
	r := newRig(t, treeOpts{configfs: true})
	f, h := loadIntent(t, func(s string) string { return strings.Replace(s, "host-static", "switch-willing", 1) })
	p, err := r.d.Plan(context.Background(), f, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Steps {
		if strings.HasPrefix(s.Command, "dcb ") {
			t.Errorf("switch-willing plan writes DCB: %s", s.Command)
		}
	}
	if _, err := r.d.Apply(context.Background(), p); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if r.k.flaps != 0 {
		t.Errorf("switch-willing apply changed PFC")
	}
}

func TestSettingErrorMessage(t *testing.T) {
	// The operator-facing wording the issue asks for.
	err := settingErr("ens1f0np0", "PFC", syscall.EOPNOTSUPP)
	if got, want := err.Error(), "ens1f0np0: PFC: driver has no DCB support (EOPNOTSUPP) — is this a VF?"; got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
}

func TestDCBXMatches(t *testing.T) {
	host := uint8(DCBXHost | DCBXVerIEEE)
	notHost := uint8(DCBXLLDManaged | DCBXVerIEEE)
	tests := []struct {
		want, have uint8
		match      bool
	}{
		{host, DCBXHost | DCBXVerIEEE, true},              // mlx5 after `dcb dcbx set host ieee`
		{host, DCBXVerCEE | DCBXVerIEEE, false},           // mlx5 firmware mode
		{host, DCBXLLDManaged | DCBXVerIEEE, false},       // lldpad owns it
		{host, DCBXHost | DCBXVerCEE, false},              // host CEE
		{host, DCBXHost | DCBXVerCEE | DCBXVerIEEE, true}, // host, both versions
		{notHost, DCBXVerCEE | DCBXVerIEEE, true},         // mlx5 firmware mode is willing
		{notHost, DCBXLLDManaged | DCBXVerIEEE, true},     // LLDP agent
		{notHost, DCBXHost | DCBXVerIEEE, false},          // host-managed: will not follow the switch
	}
	for _, tc := range tests {
		if got := dcbxMatches(tc.want, tc.have); got != tc.match {
			t.Errorf("dcbxMatches(want %s, have %s) = %v, want %v", dcbxString(tc.want), dcbxString(tc.have), got, tc.match)
		}
	}
}

// TestPFCDelayOnlyChange: mlx5 toggles the link only when pfc_en changes; a
// cable length change rewrites PFC without a flap, and says so.
func TestPFCDelayOnlyChange(t *testing.T) {
	r := newRig(t, treeOpts{configfs: true})
	for _, n := range r.k.nics {
		n.ieee.PFC.Enable, n.cable = 0x08, 7 // mlx5's default cable length is 7 m
	}
	f, h := loadIntent(t, nil)
	p, err := r.d.Plan(context.Background(), f, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Target.Changes {
		if c.Path == "ens1f0np0/pfc" {
			if c.Action != plan.Update || strings.Contains(c.Reason, "flaps") {
				t.Errorf("delay-only PFC change = %v (%s), want an update without a link-flap warning", c.Action, c.Reason)
			}
		}
	}
	if _, err := r.d.Apply(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if r.k.flaps != 0 || r.k.nics["ens1f0np0"].cable != 3 {
		t.Errorf("after apply: %d pfc_en changes, cable %d; want 0 and 3", r.k.flaps, r.k.nics["ens1f0np0"].cable)
	}
}

func TestMLX5CableTooLong(t *testing.T) {
	f, _ := loadIntent(t, nil)
	st, notes := MLX5{}.Desired(NewDirFiles(t.TempDir()), &f.Policy, intent.NIC{Interface: "ens1f0np0", CableMeters: 1500})
	if st.PFC.ManageDelay {
		t.Errorf("a 1500 m cable sets the PFC delay to %d; mlx5 ignores >= 1000, want it unmanaged", st.PFC.Delay)
	}
	if len(notes) == 0 {
		t.Errorf("no note about the ignored cable length")
	}
}

// TestApplyWithPFCTraffic: on a live lossless link the PFC counters
// (requests/indications in struct ieee_pfc) move between the plan and the
// apply; that is traffic, not a change of configuration, so the plan is not
// stale and apply goes ahead.
func TestApplyWithPFCTraffic(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, treeOpts{configfs: true})
	for _, n := range r.k.nics {
		n.pfcTraffic = true
	}
	f, h := loadIntent(t, nil)
	p, err := r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	after, err := r.d.Apply(ctx, p)
	if err != nil {
		t.Fatalf("Apply with pause frames flowing: %v", err)
	}
	if after.Target.HasChanges() {
		t.Errorf("read-back after apply still has changes:\n%s", render(t, after))
	}
	// A plan of an in-sync host stays valid while the counters move.
	p2, err := r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	p3, err := r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	if p2.Target.Basis != p3.Target.Basis {
		t.Errorf("basis moved with the PFC counters alone: %s then %s", p2.Target.Basis, p3.Target.Basis)
	}
}

// TestMLX5NoPortBuffer: an mlx5 port whose buffer the driver does not
// manage reads the PFC delay back as 0 whatever was written, so the cable
// length cannot be set: the plan says so in a note instead of planning a
// PFC write that never reads back (and failing every apply).
func TestMLX5NoPortBuffer(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, treeOpts{configfs: true})
	for _, n := range r.k.nics {
		n.noBuffer = true
		n.ieee.PFC.Enable = 0x08
	}
	f, h := loadIntent(t, nil)
	p, err := r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Target.Changes {
		if strings.HasSuffix(c.Path, "/pfc") && c.Action != plan.NoOp {
			t.Errorf("%s: %v %q -> %q; want no change (pfc_en right, delay not reported)", c.Path, c.Action, c.Before, c.After)
		}
	}
	note := false
	for _, n := range p.Target.Notes {
		if strings.Contains(n, "ens1f0np0") && strings.Contains(n, "cable length") {
			note = true
		}
	}
	if !note {
		t.Errorf("no note that the cable length is not set; notes: %q", p.Target.Notes)
	}
	if _, err := r.d.Apply(ctx, p); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if r.k.flaps != 0 {
		t.Errorf("apply changed pfc_en %d times, want 0", r.k.flaps)
	}
}

// TestSwitchWillingInSyncOnMLX5: with DCBX switch-willing, an mlx5 NIC whose
// firmware took the switch's advertisement (DCBX firmware mode, APP, PFC and
// ETS as the intent says) is in sync. mlx5 never reports the ETS willing
// bit (it reads 0), so that bit cannot be compared there.
func TestSwitchWillingInSyncOnMLX5(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, treeOpts{configfs: true})
	f, h := loadIntent(t, func(s string) string { return strings.Replace(s, "host-static", "switch-willing", 1) })
	for _, n := range r.k.nics {
		n.ieee.Apps = []dcbnl.App{{Selector: 5, Priority: 3, Protocol: 26}, {Selector: 5, Priority: 6, Protocol: 48}}
		n.ieee.PFC.Enable = 0x08
		n.cable = 3
		*n.ieee.ETS = dcbnl.ETS{Willing: 1, ETSCap: 8,
			TCTxBW: [8]uint8{50, 0, 0, 50, 0, 0, 0, 0},
			TSA:    [8]uint8{TSAETS, TSAETS, TSAETS, TSAETS, TSAETS, TSAETS, TSAStrict, TSAETS},
			PrioTC: [8]uint8{0, 0, 0, 3, 0, 0, 6, 0}}
	}
	p, err := r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Target.Changes {
		if c.Action != plan.NoOp && !strings.HasSuffix(c.Path, "/mtu") && !strings.HasSuffix(c.Path, "/pause") && !strings.Contains(c.Path, "/rdma_cm/") {
			t.Errorf("%s: %v %q -> %q; want in sync", c.Path, c.Action, c.Before, c.After)
		}
	}
}

// TestRDMACMENODEVNamesTheRDMADevice: configfs answers mkdir
// rdma_cm/<ibdev> with ENODEV when there is no such RDMA device; the
// message must point at nics[].rdma, not at the (existing) interface.
func TestRDMACMENODEVNamesTheRDMADevice(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, treeOpts{configfs: true})
	os.Remove(filepath.Join(r.files.Root, "sys/class/infiniband/mlx5_1"))
	f, h := loadIntent(t, nil)
	p, err := r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.d.Apply(ctx, p)
	if !errors.Is(err, syscall.ENODEV) {
		t.Fatalf("Apply = %v, want ENODEV from configfs", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "nics[].rdma") || strings.Contains(msg, "nics[].interface") {
		t.Errorf("error %q: want it to point at nics[].rdma (the RDMA device), not nics[].interface", msg)
	}
	// The writes that followed the failed mkdir name their file.
	if !strings.Contains(msg, "/sys/kernel/config/rdma_cm/mlx5_1/ports/1/default_roce_tos") {
		t.Errorf("error %q does not name the file that could not be written", msg)
	}
}

// TestApplyInterrupted: Ctrl-C in the middle of an apply stops before the
// next step, and the error says the host is half-applied: how many steps
// ran and which settings they were, so the operator knows what changed.
func TestApplyInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := newRig(t, treeOpts{configfs: true})
	f, h := loadIntent(t, nil)
	p, err := r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	r.k.onSetMTU = cancel // the first step (ens1f0np0/mtu) runs, then Ctrl-C
	after, err := r.d.Apply(ctx, p)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Apply = %v, want context.Canceled", err)
	}
	if after != nil {
		t.Errorf("Apply returned a read-back after it was interrupted")
	}
	msg := err.Error()
	for _, want := range []string{"gpu1", fmt.Sprintf("1 of %d steps", len(p.Steps)), "ens1f0np0/mtu"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	if r.writes() != 1 {
		t.Errorf("%d writes after the interrupt, want only the one before it", r.writes())
	}
}

// TestNICNamesCannotLeaveSysfs: the interface and RDMA device names from the
// intent become sysfs/configfs paths; a name with a slash or a dot-dot
// (a typo, or a hostile pull request to a GitOps repo) must not make the
// host agent read, mkdir or write outside /sys as root.
func TestNICNamesCannotLeaveSysfs(t *testing.T) {
	tests := []struct{ name, iface, rdma string }{
		{"rdma device climbs out of configfs", "ens1f0np0", "../../../../evil/made"},
		{"rdma device with a slash", "ens1f0np0", "mlx5_0/../../../../../evil/made"},
		{"rdma device dot-dot", "ens1f0np0", ".."},
		{"interface with a slash", "ens1f0np0/../../../../../evil", "mlx5_0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, treeOpts{configfs: true, ecn: "sysfs"})
			r.k.nics[tc.iface] = r.k.nics["ens1f0np0"] // the fake kernel would even accept it
			os.MkdirAll(filepath.Join(r.files.Root, "evil"), 0o755)
			f, h := loadIntent(t, nil)
			h.NICs[0].Interface, h.NICs[0].RDMADevice = tc.iface, tc.rdma
			p, err := r.d.Plan(context.Background(), f, h)
			var se *SettingError
			if !errors.As(err, &se) || se.Interface != tc.iface {
				t.Errorf("Plan = %v, want a *SettingError for %q", err, tc.iface)
			}
			if p == nil {
				t.Fatal("no plan: the other NIC should still be planned")
			}
			for _, s := range p.Steps {
				if strings.Contains(s.Command, "evil") || strings.Contains(s.Command, "..") {
					t.Errorf("step %q reaches outside sysfs", s.Command)
				}
			}
			if _, err := r.d.Apply(context.Background(), p); err == nil {
				t.Errorf("Apply = nil error, want the bad name reported again")
			}
			ents, _ := os.ReadDir(filepath.Join(r.files.Root, "evil"))
			if len(ents) != 0 {
				t.Errorf("apply created %d entries outside sysfs", len(ents))
			}
		})
	}
}

// TestDirFilesStayUnderRoot: writes and mkdirs, like reads through
// os.DirFS, refuse names that climb out of the root.
func TestDirFilesStayUnderRoot(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(parent, "outside"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := NewDirFiles(root)
	if err := d.Mkdir("../made"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("Mkdir(../made) = %v, want fs.ErrInvalid", err)
	}
	if err := d.WriteFile("../outside", []byte("106\n")); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("WriteFile(../outside) = %v, want fs.ErrInvalid", err)
	}
	if _, err := os.Stat(filepath.Join(parent, "made")); err == nil {
		t.Errorf("Mkdir created a directory outside the root")
	}
	if b, _ := os.ReadFile(filepath.Join(parent, "outside")); string(b) != "x\n" {
		t.Errorf("WriteFile wrote outside the root: %q", b)
	}
}
