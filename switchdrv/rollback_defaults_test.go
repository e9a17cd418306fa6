package switchdrv_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/srl"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

// TestRollbackAfterDefaultsFilled: plan and verify compare with the YANG
// defaults filled into the trees they read (srl_nokia-qos defaults, e.g.
// pfc-queue maximum-burst-size), and fill a tree a read decoded for itself
// in place. The backup and the verify read-back must still say what the
// switch holds: a switch applied and verified, then rolled back because
// the next switch failed, is found to hold this run's write (not "changed
// by another writer"), restored, and the restore verifies against the
// backup. (It fails when a filled tree stays in the snapshot.)
func TestRollbackAfterDefaultsFilled(t *testing.T) {
	schemas := yangSchemas(t)
	var tws []*twin.Twin
	for _, name := range []string{"leaf1", "leaf2"} {
		tw, err := twin.Start(twin.Options{Name: name, Platform: intent.PlatformSRLinux})
		if err != nil {
			t.Fatal(err)
		}
		defer tw.Close()
		tws = append(tws, tw)
	}
	seeded := false
	fabric := func(ecnMin string) *intent.Fabric {
		f, err := intent.Parse("two.yaml", fmt.Appendf(nil, `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: two}
policy:
  preset: roce-lossless
  classes:
    - name: roce
      ecn: {min: %s}
inventory:
  switches:
    - name: leaf{1..2}
      platform: srlinux
      address: "127.0.0.1:{1..2}"
      tls: {insecure: true}
      portDefaults: {speed: 400G, cable: 3m}
      ports:
        - name: ethernet-1/{1..2}
`, ecnMin))
		if err != nil {
			t.Fatal(err)
		}
		for i := range f.Switches {
			f.Switches[i].Address = tws[i].Addr()
			if !seeded {
				seedOperatorInterfaces(t, tws[i], f, &f.Switches[i])
			}
		}
		seeded = true
		return f
	}
	reg := switchdrv.NewRegistry()
	if err := srl.Register(reg); err != nil {
		t.Fatal(err)
	}
	eng := &switchdrv.Engine{Registry: reg, BackupDir: t.TempDir(), Parallel: 1, NoPayload: true,
		Defaults: func(p intent.Platform) (switchdrv.DefaultsFiller, error) { return schemas[p], nil }}
	apply := func(f *intent.Fabric) (*switchdrv.Result, error) {
		t.Helper()
		p, err := eng.Plan(t.Context(), f, nil)
		if err != nil || p.HasErrors() {
			t.Fatalf("Plan: %v %v", err, switchdrv.Errors(p))
		}
		return eng.Apply(t.Context(), f, p)
	}
	if _, err := apply(fabric("150KB")); err != nil {
		t.Fatalf("first Apply: %v", err)
	}
	before := state(t, tws[0])
	tws[1].RejectNextSet()
	res, err := apply(fabric("200KB"))
	if !errors.Is(err, switchdrv.ErrRolledBack) {
		t.Fatalf("second Apply error = %v, want ErrRolledBack", err)
	}
	if got := res.Targets[0].Status; got != switchdrv.StatusRolledBack {
		t.Errorf("leaf1 status %s (%s), want rolled-back", got, res.Targets[0].Error)
	}
	if got := state(t, tws[0]); got != before {
		t.Errorf("leaf1 state after rollback:\n%s\nwant\n%s", got, before)
	}
}
