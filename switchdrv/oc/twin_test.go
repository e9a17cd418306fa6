package oc_test

import (
	"context"
	"fmt"
	"testing"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/profile"
	"github.com/fabricctl/fabricctl/internal/yangcheck"
	"github.com/fabricctl/fabricctl/switchdrv/oc"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

// TestAcceptedByStrictTarget: the OpenConfig payload, sent to a twin of the
// openconfig profile with full validation and an empty datastore, is
// accepted: the MTU merge names the interface's key leaf config/name and its
// mandatory config/type (openconfig-interfaces; ethernetCsmacd, what every
// Ethernet port already is), so it does not depend on the target having
// created the interface.
func TestAcceptedByStrictTarget(t *testing.T) {
	prof, err := profile.Lookup("openconfig")
	if err != nil {
		t.Fatal(err)
	}
	s, err := yangcheck.Platform(intent.PlatformOpenConfig)
	if err != nil {
		t.Fatal(err)
	}
	tw, err := twin.Start(twin.Options{Name: "oc1", Profile: prof, Factory: true, Schema: s, Validator: twin.YANGValidator(s, prof)})
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	f, err := intent.Parse("oc.yaml", []byte(fmt.Sprintf(`apiVersion: fabricctl.io/v1alpha1
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
`, tw.Addr())))
	if err != nil {
		t.Fatal(err)
	}
	d, err := oc.Platform{}.Compile(f, &f.Switches[0])
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(tw.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := gnmipb.NewGNMIClient(conn).Set(context.Background(), d.SetRequest()); err != nil {
		st, _ := status.FromError(err)
		t.Errorf("strict openconfig twin refused the Set: %s", st.Message())
	}
}
