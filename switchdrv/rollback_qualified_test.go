package switchdrv_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/eos"
	"github.com/fabricctl/fabricctl/switchdrv/srl"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

// TestRollbackKeepsModuleQualifiers applies the real EOS compiler to a twin
// that validates every Set against the EOS YANG, as a device does, then
// changes the intent and applies again with the next switch rejecting. The
// EOS rollback replaces the queues with the backup, whose augment leaves
// (arista-qos-augments:scheduling, :bandwidth, :ecn) must keep their module
// qualifier (RFC 7951 section 4): without it the device rejects the restore
// and the switch stays half-applied.
func TestRollbackKeepsModuleQualifiers(t *testing.T) {
	schemas := yangSchemas(t)
	eosTwin, err := twin.Start(twin.Options{Name: "leaf1", Platform: intent.PlatformEOS,
		Validate: schemas[intent.PlatformEOS].CheckUpdate})
	if err != nil {
		t.Fatal(err)
	}
	defer eosTwin.Close()
	srlTwin, err := twin.Start(twin.Options{Name: "leaf2", Platform: intent.PlatformSRLinux})
	if err != nil {
		t.Fatal(err)
	}
	defer srlTwin.Close()
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
    - name: leaf1
      platform: eos
      address: %q
      tls: {insecure: true}
      portDefaults: {speed: 400G, cable: 3m}
      ports:
        - name: Ethernet{1..2}/1
    - name: leaf2
      platform: srlinux
      address: %q
      tls: {insecure: true}
      portDefaults: {speed: 400G, cable: 3m}
      ports:
        - name: ethernet-1/{1..2}
`, ecnMin, eosTwin.Addr(), srlTwin.Addr()))
		if err != nil {
			t.Fatal(err)
		}
		if !seeded {
			seedOperatorInterfaces(t, srlTwin, f, &f.Switches[1])
			seeded = true
		}
		return f
	}
	reg := switchdrv.NewRegistry()
	for _, r := range []func(*switchdrv.Registry) error{eos.Register, srl.Register} {
		if err := r(reg); err != nil {
			t.Fatal(err)
		}
	}
	eng := &switchdrv.Engine{Registry: reg, BackupDir: t.TempDir(), Parallel: 1}
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
	before := state(t, eosTwin)
	srlTwin.RejectNextSet()
	res, err := apply(fabric("200KB"))
	if !errors.Is(err, switchdrv.ErrRolledBack) {
		t.Fatalf("second Apply error = %v, want ErrRolledBack", err)
	}
	if got := res.Targets[0].Status; got != switchdrv.StatusRolledBack {
		t.Errorf("leaf1 status %s (%s), want rolled-back", got, res.Targets[0].Error)
	}
	if got := state(t, eosTwin); got != before {
		t.Errorf("EOS state after rollback:\n%s\nwant\n%s", got, before)
	}
}
