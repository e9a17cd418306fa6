package switchdrv_test

import (
	"fmt"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/profile"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/oc"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

// TestOpenConfigDefaultsAreNotDrift (issue 10 item 18): after a successful
// apply of the real OpenConfig compiler, a target that populates YANG
// defaults (openconfig-qos-elements red/uniform/config drop=false,
// enable-ecn=false) or trims leaves equal to their default (wred ... drop
// false) must plan "no changes": diff exits 0 and a second apply sends
// nothing. The twin runs the openconfig profile in each defaults mode; a
// real target also instantiates the non-presence red container the payload
// never names, which the test adds to the populate-defaults datastore.
func TestOpenConfigDefaultsAreNotDrift(t *testing.T) {
	schemas := yangSchemas(t)
	for _, mode := range []string{"populate-defaults", "trim-defaults"} {
		t.Run(mode, func(t *testing.T) {
			prof, err := profile.Lookup("openconfig")
			if err != nil {
				t.Fatal(err)
			}
			tw, err := twin.Start(twin.Options{Name: "oc1", Profile: prof, Schema: schemas[intent.PlatformOpenConfig], Defaults: mode,
				Validate: schemas[intent.PlatformOpenConfig].CheckUpdate})
			if err != nil {
				t.Fatal(err)
			}
			defer tw.Close()
			f, err := intent.Parse("oc.yaml", fmt.Appendf(nil, `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: oc}
policy:
  preset: roce-lossless
  classes:
    - name: roce
      lossless: false
inventory:
  switches:
    - name: oc1
      platform: openconfig
      address: %q
      tls: {insecure: true}
      portDefaults: {speed: 400G, cable: 3m}
      ports:
        - name: Ethernet{1..2}
`, tw.Addr()))
			if err != nil {
				t.Fatal(err)
			}
			reg := switchdrv.NewRegistry()
			if err := oc.Register(reg); err != nil {
				t.Fatal(err)
			}
			eng := &switchdrv.Engine{Registry: reg, BackupDir: t.TempDir(), Parallel: 1,
				Defaults: func(p intent.Platform) (switchdrv.DefaultsFiller, error) { return schemas[p], nil }}
			p, err := eng.Plan(t.Context(), f, nil)
			if err != nil || p.HasErrors() {
				t.Fatalf("Plan: %v %v", err, switchdrv.Errors(p))
			}
			if _, err := eng.Apply(t.Context(), f, p); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			qmp := "/qos/queue-management-profiles/queue-management-profile[name=" + oc.ECNProfile("roce") + "]"
			switch mode {
			case "populate-defaults":
				if err := tw.Put(path(qmp+"/red/uniform/config"), map[string]any{"drop": false, "enable-ecn": false}); err != nil {
					t.Fatal(err)
				}
			}
			sets := tw.Sets()
			p, err = eng.Plan(t.Context(), f, nil)
			if err != nil || p.HasErrors() {
				t.Fatalf("second Plan: %v %v", err, switchdrv.Errors(p))
			}
			for _, tp := range p.Targets {
				if tp.HasChanges() {
					t.Errorf("%s: second plan has changes: %+v", mode, tp.Changes)
				}
			}
			if _, err := eng.Apply(t.Context(), f, p); err != nil {
				t.Fatalf("second Apply: %v", err)
			}
			if tw.Sets() != sets {
				t.Errorf("%s: second apply sent %d Sets, want none", mode, tw.Sets()-sets)
			}
		})
	}
}
