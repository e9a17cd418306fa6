package switchdrv_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/eos"
	"github.com/fabricctl/fabricctl/switchdrv/srl"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

// TestRollbackRestoresCLI applies the real EOS compiler (OpenConfig plus CLI
// lines) to a twin that already has CLI configuration, makes the next switch
// (real SR Linux compiler) reject, and checks the EOS twin's CLI and
// OpenConfig state are exactly as before: CLI is restored line by line, not
// by replacing the running configuration.
func TestRollbackRestoresCLI(t *testing.T) {
	eosTwin, err := twin.Start(twin.Options{Name: "leaf1", Platform: intent.PlatformEOS})
	if err != nil {
		t.Fatal(err)
	}
	defer eosTwin.Close()
	srlTwin, err := twin.Start(twin.Options{Name: "leaf2", Platform: intent.PlatformSRLinux})
	if err != nil {
		t.Fatal(err)
	}
	defer srlTwin.Close()
	f, err := intent.Parse("two.yaml", fmt.Appendf(nil, `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: two}
policy: {preset: roce-lossless}
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
`, eosTwin.Addr(), srlTwin.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	seedOperatorInterfaces(t, srlTwin, f, &f.Switches[1])
	cli := &gnmipb.Path{Origin: "cli"}
	// Pre-existing CLI: hostname, an interface with a different MTU.
	c, err := transport.Dial(t.Context(), f.Switches[0], transport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Set(t.Context(), &gnmipb.SetRequest{Update: []*gnmipb.Update{{Path: cli,
		Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_AsciiVal{AsciiVal: "hostname leaf1\ninterface Ethernet1/1\n   mtu 1500\n   description uplink\n!\n"}}}}}); err != nil {
		t.Fatal(err)
	}
	before := slices.Clone(eosTwin.CLI())
	beforeOC := state(t, eosTwin)

	reg := switchdrv.NewRegistry()
	for _, r := range []func(*switchdrv.Registry) error{eos.Register, srl.Register} {
		if err := r(reg); err != nil {
			t.Fatal(err)
		}
	}
	eng := &switchdrv.Engine{Registry: reg, BackupDir: t.TempDir(), Parallel: 1}
	p, err := eng.Plan(t.Context(), f, nil)
	if err != nil || p.HasErrors() {
		t.Fatalf("Plan: %v %v", err, switchdrv.Errors(p))
	}
	srlTwin.RejectNextSet()
	res, err := eng.Apply(t.Context(), f, p)
	if !errors.Is(err, switchdrv.ErrRolledBack) {
		t.Errorf("Apply error = %v, want ErrRolledBack", err)
	}
	if res.Targets[0].Status != switchdrv.StatusRolledBack {
		t.Errorf("leaf1 status %s, want rolled-back", res.Targets[0].Status)
	}
	if diff := cmp.Diff(before, eosTwin.CLI()); diff != "" {
		t.Errorf("EOS CLI after rollback (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(beforeOC, state(t, eosTwin)); diff != "" {
		t.Errorf("EOS OpenConfig state after rollback (-want +got):\n%s", diff)
	}
	if eosTwin.Sets() != 3 { // setup, apply, restore
		t.Errorf("EOS twin Sets = %d, want 3", eosTwin.Sets())
	}
}

// seedOperatorInterfaces gives an SR Linux twin the interfaces of sw's ports
// that the intent relies on and fabricctl does not write (the operator's:
// srl.OperatorInterface), which plan checks before writing.
func seedOperatorInterfaces(t *testing.T, tw *twin.Twin, f *intent.Fabric, sw *intent.Switch) {
	t.Helper()
	for _, p := range sw.Ports {
		path := &gnmipb.Path{Elem: []*gnmipb.PathElem{{Name: "srl_nokia-interfaces:interface", Key: map[string]string{"name": p.Name}}}}
		if err := tw.Put(path, srl.OperatorInterface(f, p)); err != nil {
			t.Fatal(err)
		}
	}
}
