package hostdrv

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModesOnTheHost: what each policy.mode writes to a ConnectX host,
// through Plan and Apply against the fake dcbnl kernel and an mlx5 sysfs
// tree (MLNX_OFED's ecn/roce_np|roce_rp): the PFC bitmap (the RoCE
// priority in every mode with PFC, none in lossy) and DCQCN per priority
// (on where the class marks ECN, off in pfc-only). The NIC starts with
// DCQCN on priority 3, as ConnectX firmware enables it on every priority
// by default (ROCE_CC_PRIO_MASK 255).
func TestModesOnTheHost(t *testing.T) {
	for _, tc := range []struct {
		mode  string
		pfc   uint8
		dcqcn string // ecn/roce_np|roce_rp/enable/3 after apply
	}{
		{"lossless", 0x08, "1"},
		{"lossy", 0x00, "1"},
		{"semi-lossless", 0x08, "1"},
		{"pfc-only", 0x08, "0"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			ctx := context.Background()
			r := newRig(t, treeOpts{ecn: "sysfs", configfs: true})
			for _, n := range r.k.nics {
				n.ieee.PFC.Enable = 0x08 // a lossless host before
			}
			for _, side := range []string{"roce_np", "roce_rp"} {
				if err := os.WriteFile(filepath.Join(r.files.Root, "sys/class/net/ens1f0np0/ecn", side, "enable/3"), []byte("1\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			f, h := loadIntent(t, func(s string) string {
				return strings.Replace(s, "  preset: roce-lossless\n", "  preset: roce-lossless\n  mode: "+tc.mode+"\n", 1)
			})
			p, err := r.d.Plan(ctx, f, h)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.d.Apply(ctx, p); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if got := r.k.nics["ens1f0np0"].ieee.PFC.Enable; got != tc.pfc {
				t.Errorf("pfc_en after apply = %#x, want %#x", got, tc.pfc)
			}
			for _, side := range []string{"roce_np", "roce_rp"} {
				b, err := os.ReadFile(filepath.Join(r.files.Root, "sys/class/net/ens1f0np0/ecn", side, "enable/3"))
				if err != nil {
					t.Fatal(err)
				}
				if got := strings.TrimSpace(string(b)); got != tc.dcqcn {
					t.Errorf("ecn/%s/enable/3 = %q, want %q", side, got, tc.dcqcn)
				}
			}
		})
	}
}

// TestPFCOnlyUpstreamMLX5Note: on upstream mlx5 the per-priority DCQCN
// enable is firmware only: host plan says so with the mlxconfig mask that
// leaves the pfc-only priority out, rather than claiming it off.
func TestPFCOnlyUpstreamMLX5Note(t *testing.T) {
	r := newRig(t, treeOpts{ecn: "debugfs", configfs: true})
	f, h := loadIntent(t, func(s string) string {
		return strings.Replace(s, "  preset: roce-lossless\n", "  preset: roce-lossless\n  mode: pfc-only\n", 1)
	})
	p, err := r.d.Plan(context.Background(), f, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range p.Target.Notes {
		if strings.Contains(n, "pfc-only") && strings.Contains(n, "ROCE_CC_PRIO_MASK_") && strings.Contains(n, "=0xf7") {
			return
		}
	}
	t.Errorf("no pfc-only note with the mlxconfig mask 0xf7 in %q", p.Target.Notes)
}
