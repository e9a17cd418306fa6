package switchdrv_test

import (
	"slices"
	"strings"
	"testing"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/oc"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

// fakeOwned is a TEST DOUBLE platform: it writes one buffer profile per
// name in profiles (SR Linux-shaped, /qos/buffer-management/
// buffer-allocation-profile[name]) and points interface ethernet-1/1 at the
// first, declaring the list as Owned, so the plan-level stale-object rule
// (issue 10 item 17) can be tested for platforms without a Refiner.
type fakeOwned struct{ profiles []string }

func (fakeOwned) Name() intent.Platform { return intent.PlatformSRLinux }

func (fakeOwned) Quirks() switchdrv.Quirks { return switchdrv.Quirks{PFC: true} }

func (p fakeOwned) Compile(_ *intent.Fabric, sw *intent.Switch) (*switchdrv.Desired, error) {
	d := &switchdrv.Desired{Switch: sw.Name, Platform: sw.Platform, Encoding: gnmipb.Encoding_JSON_IETF}
	for _, n := range p.profiles {
		if err := d.Replace(map[string]any{"name": n, "size": n}, switchdrv.Elem("qos"), switchdrv.Elem("buffer-management"),
			switchdrv.Elem("buffer-allocation-profile", "name", n)); err != nil {
			return nil, err
		}
	}
	if err := d.Replace(map[string]any{"interface-id": "ethernet-1/1", "buffer-allocation-profile": p.profiles[0]},
		switchdrv.Elem("qos"), switchdrv.Elem("interfaces"), switchdrv.Elem("interface", "interface-id", "ethernet-1/1")); err != nil {
		return nil, err
	}
	d.Owned = []switchdrv.Owned{{
		List:   &gnmipb.Path{Elem: []*gnmipb.PathElem{{Name: "qos"}, {Name: "buffer-management"}, {Name: "buffer-allocation-profile"}}},
		Key:    "name",
		Prefix: "FABRICCTL_",
		Scope:  &gnmipb.Path{Elem: []*gnmipb.PathElem{{Name: "qos"}}},
	}}
	return d, nil
}

func TestStaleOwnedEntriesDeleted(t *testing.T) {
	tw, err := twin.Start(twin.Options{Name: "leaf1", Platform: intent.PlatformSRLinux})
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	f := &intent.Fabric{Name: "t", Switches: []intent.Switch{{Name: "leaf1", Platform: intent.PlatformSRLinux, Address: tw.Addr(), TLS: intent.TLS{Insecure: true}}}}
	run := func(p fakeOwned) *plan.Plan {
		t.Helper()
		reg := switchdrv.NewRegistry()
		if err := reg.Register(p); err != nil {
			t.Fatal(err)
		}
		eng := &switchdrv.Engine{Registry: reg, BackupDir: t.TempDir()}
		pl, err := eng.Plan(t.Context(), f, nil)
		if err != nil || pl.HasErrors() {
			t.Fatalf("Plan: %v %v", err, switchdrv.Errors(pl))
		}
		if _, err := eng.Apply(t.Context(), f, pl); err != nil {
			t.Fatalf("Apply: %v", err)
		}
		return pl
	}
	bap := func(n string) *gnmipb.Path {
		return path("/qos/buffer-management/buffer-allocation-profile[name=" + n + "]")
	}
	run(fakeOwned{[]string{"FABRICCTL_PFC_1", "FABRICCTL_PFC_2"}})
	// Someone else's profile and an interface outside fabricctl's payload
	// using FABRICCTL_PFC_2.
	tw.Put(bap("OPERATOR"), map[string]any{"name": "OPERATOR"})                                                                                                          //nolint:errcheck
	tw.Put(path("/qos/interfaces/interface[interface-id=ethernet-1/9]"), map[string]any{"interface-id": "ethernet-1/9", "buffer-allocation-profile": "FABRICCTL_PFC_2"}) //nolint:errcheck

	p := run(fakeOwned{[]string{"FABRICCTL_PFC_3"}})
	var deleted []string
	for _, c := range p.Targets[0].Changes {
		if c.Action == plan.Delete {
			deleted = append(deleted, c.Path)
		}
	}
	if want := "/qos/buffer-management/buffer-allocation-profile[name=FABRICCTL_PFC_1]"; !slices.Contains(deleted, want) {
		t.Errorf("plan deletes %q, want %s", deleted, want)
	}
	if _, ok := tw.Value(bap("FABRICCTL_PFC_1")); ok {
		t.Error("stale FABRICCTL_PFC_1 still on the switch")
	}
	for _, keep := range []string{"FABRICCTL_PFC_2", "OPERATOR", "FABRICCTL_PFC_3"} {
		if _, ok := tw.Value(bap(keep)); !ok {
			t.Errorf("%s deleted", keep)
		}
	}
	note := strings.Join(p.Targets[0].Notes, "\n")
	if !strings.Contains(note, "FABRICCTL_PFC_2] is no longer wanted but is kept: still used by") || !strings.Contains(note, "ethernet-1/9") {
		t.Errorf("notes %q do not name the kept FABRICCTL_PFC_2 and its user", note)
	}
}

// TestOwnedByReference: OpenConfig names a class's queue and forwarding
// group after the class alone (upper case, no FABRICCTL_ prefix), so the
// stale-object rule takes them as fabricctl's only where fabricctl's own
// scheduler policy FABRICCTL or classifiers FABRICCTL_V4/V6 name them on
// the switch (switchdrv.Owned.By). The RoCE class renamed rocev2: plan
// deletes the old name's queue ROCE, forwarding group ROCE and profile
// FABRICCTL_ECN_ROCE, and leaves an operator's queue and forwarding group
// OPS, which nothing of fabricctl's names, alone.
func TestOwnedByReference(t *testing.T) {
	tw, err := twin.Start(twin.Options{Name: "oc1", Platform: intent.PlatformOpenConfig})
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	reg := switchdrv.NewRegistry()
	if err := oc.Register(reg); err != nil {
		t.Fatal(err)
	}
	fabric := func(roce string) *intent.Fabric {
		t.Helper()
		f, err := intent.Parse("f.yaml", []byte("apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\n"+
			"policy:\n  preset: none\n  mode: lossy\n  classes:\n"+
			"    - {name: default, priority: 0, weight: 50%, default: true}\n"+
			"    - {name: "+roce+", dscp: [26], priority: 3, weight: 50%, ecn: {min: 150000B, max: 1501500B}}\n"+
			"    - {name: cnp, dscp: [48], priority: 6, strict: true, cnp: true}\n"+
			"inventory:\n  switches:\n    - name: oc1\n      platform: openconfig\n      address: "+tw.Addr()+"\n      tls: {insecure: true}\n"+
			"      portDefaults: {speed: 100G, cable: 3m}\n      ports:\n        - name: Ethernet1\n"))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	eng := &switchdrv.Engine{Registry: reg, BackupDir: t.TempDir()}
	defer eng.Close()
	apply := func(f *intent.Fabric) *plan.Plan {
		t.Helper()
		p, err := eng.Plan(t.Context(), f, nil)
		if err != nil || p.HasErrors() {
			t.Fatalf("Plan: %v %v", err, switchdrv.Errors(p))
		}
		if _, err := eng.Apply(t.Context(), f, p); err != nil {
			t.Fatalf("Apply: %v", err)
		}
		return p
	}
	apply(fabric("roce"))
	tw.Put(path("/qos/queues/queue[name=OPS]"), map[string]any{"name": "OPS", "config": map[string]any{"name": "OPS"}})                                              //nolint:errcheck
	tw.Put(path("/qos/forwarding-groups/forwarding-group[name=OPS]"), map[string]any{"name": "OPS", "config": map[string]any{"name": "OPS", "output-queue": "OPS"}}) //nolint:errcheck
	for _, p := range []string{"/qos/queues/queue[name=ROCE]", "/qos/forwarding-groups/forwarding-group[name=ROCE]", "/qos/queue-management-profiles/queue-management-profile[name=FABRICCTL_ECN_ROCE]"} {
		if _, ok := tw.Value(path(p)); !ok {
			t.Fatalf("%s not written by the first apply", p)
		}
	}
	p := apply(fabric("rocev2"))
	var deleted []string
	for _, c := range p.Targets[0].Changes {
		if c.Action == plan.Delete {
			deleted = append(deleted, c.Path)
		}
	}
	for _, gone := range []string{"/qos/queues/queue[name=ROCE]", "/qos/forwarding-groups/forwarding-group[name=ROCE]", "/qos/queue-management-profiles/queue-management-profile[name=FABRICCTL_ECN_ROCE]"} {
		if !slices.Contains(deleted, gone) {
			t.Errorf("plan deletes %q, want %s", deleted, gone)
		}
		if _, ok := tw.Value(path(gone)); ok {
			t.Errorf("%s still on the switch", gone)
		}
	}
	for _, keep := range []string{"/qos/queues/queue[name=OPS]", "/qos/forwarding-groups/forwarding-group[name=OPS]", "/qos/queues/queue[name=ROCEV2]", "/qos/queues/queue[name=CNP]"} {
		if _, ok := tw.Value(path(keep)); !ok {
			t.Errorf("%s deleted", keep)
		}
	}
}
