package switchdrv_test

import (
	"context"
	"fmt"
	"testing"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/profile"
	"github.com/fabricctl/fabricctl/internal/yangcheck"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/eos"
	"github.com/fabricctl/fabricctl/switchdrv/oc"
	"github.com/fabricctl/fabricctl/switchdrv/srl"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

// TestProfilesApplyAndDiffClean (issue 10, done means): for every SR Linux,
// EOS and OpenConfig profile, the compiled intent plans, applies (verified),
// then plans "no changes" and a second apply sends nothing, against a twin
// of that profile with its factory datastore and full validation against
// the profile's release YANG (issue 33: srlinux-24.10 writes and takes
// [3] where 25.3 has 3). The
// SR Linux twins first get the operator's routed subinterfaces (fabricctl
// attaches the classifier there and does not create them).
func TestProfilesApplyAndDiffClean(t *testing.T) {
	type run struct{ profile, defaults string }
	runs := []run{{"srlinux-24.10", ""}, {"srlinux-25.3", ""}, {"eos", ""},
		{"openconfig", profile.PopulateDefaults}, {"openconfig", profile.TrimDefaults}}
	for _, r := range runs {
		t.Run(r.profile+" "+r.defaults, func(t *testing.T) {
			prof, err := profile.Lookup(r.profile)
			if err != nil {
				t.Fatal(err)
			}
			pl := intent.Platform(prof.Platform)
			s, err := yangcheck.ReleaseSchema(prof.YANG.Release)
			if err != nil {
				t.Fatal(err)
			}
			tw, err := twin.Start(twin.Options{Name: "sw1", Profile: prof, Factory: true, Schema: s, Defaults: r.defaults, Validator: twin.YANGValidator(s, prof)})
			if err != nil {
				t.Fatal(err)
			}
			defer tw.Close()
			ports, lossless := "ethernet-1/{1..2}", "true"
			switch pl {
			case intent.PlatformEOS:
				ports = "Ethernet{1..2}/1"
			case intent.PlatformOpenConfig:
				ports, lossless = "Ethernet{1..2}", "false"
			}
			f, err := intent.Parse("p.yaml", fmt.Appendf(nil, `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: p}
policy:
  preset: roce-lossless
  classes:
    - name: roce
      lossless: %s
inventory:
  switches:
    - name: sw1
      platform: %s
      profile: %s
      address: %q
      tls: {insecure: true}
      portDefaults: {speed: 400G, cable: 3m}
      ports:
        - name: %q
`, lossless, pl, r.profile, tw.Addr(), ports))
			if err != nil {
				t.Fatal(err)
			}
			if pl == intent.PlatformSRLinux {
				conn, err := grpc.NewClient(tw.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
				if err != nil {
					t.Fatal(err)
				}
				base := &gnmipb.SetRequest{}
				for _, p := range f.Switches[0].Ports {
					base.Update = append(base.Update, &gnmipb.Update{
						Path: &gnmipb.Path{Elem: []*gnmipb.PathElem{{Name: "interface", Key: map[string]string{"name": p.Name}}}},
						Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: fmt.Appendf(nil,
							`{"name":%q,"admin-state":"enable","subinterface":[{"index":%d,"type":"srl_nokia-interfaces:routed","admin-state":"enable","ip-mtu":%d}]}`, p.Name, p.Subinterface, f.PortMTU(p))}},
					})
				}
				_, err = gnmipb.NewGNMIClient(conn).Set(context.Background(), base)
				conn.Close()
				if err != nil {
					t.Fatalf("base configuration refused: %v", err)
				}
			}
			reg := switchdrv.NewRegistry()
			for _, reg1 := range []func(*switchdrv.Registry) error{srl.Register, eos.Register, oc.Register} {
				if err := reg1(reg); err != nil {
					t.Fatal(err)
				}
			}
			eng := &switchdrv.Engine{Registry: reg, BackupDir: t.TempDir(), Parallel: 1,
				Defaults: func(p intent.Platform) (switchdrv.DefaultsFiller, error) { return yangcheck.Platform(p) }}
			p, err := eng.Plan(t.Context(), f, nil)
			if err != nil || p.HasErrors() {
				t.Fatalf("Plan: %v %v", err, switchdrv.Errors(p))
			}
			if _, err := eng.Apply(t.Context(), f, p); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			sets := tw.Sets()
			p, err = eng.Plan(t.Context(), f, nil)
			if err != nil || p.HasErrors() {
				t.Fatalf("second Plan: %v %v", err, switchdrv.Errors(p))
			}
			for _, tp := range p.Targets {
				for _, c := range tp.Changes {
					t.Errorf("second plan: %s %s (%s -> %s)", c.Action, c.Path, c.Before, c.After)
				}
			}
			if _, err := eng.Apply(t.Context(), f, p); err != nil {
				t.Fatalf("second Apply: %v", err)
			}
			if tw.Sets() != sets {
				t.Errorf("second apply sent %d Sets, want none", tw.Sets()-sets)
			}
		})
	}
}
