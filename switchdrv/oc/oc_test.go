package oc

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricctl/fabricctl/intent"
)

// TestClassifierTerms: one term per class with DSCPs in class order, the
// default class last as a catch-all without conditions, for IPv4 and IPv6.
func TestClassifierTerms(t *testing.T) {
	f := &intent.Fabric{
		Policy: intent.Policy{MTU: 9216, Classes: []intent.Class{
			{Name: "default", Priority: 0, Weight: 50, Default: true},
			{Name: "roce", DSCP: []int{26}, Priority: 3, Lossless: true, Weight: 50},
			{Name: "cnp", DSCP: []int{48}, Priority: 6, Strict: true, CNP: true},
		}},
		Switches: []intent.Switch{{Name: "s1", Platform: intent.PlatformOpenConfig, Ports: []intent.Port{{Name: "Ethernet1"}}}},
	}
	d, err := Platform{}.Compile(f, &f.Switches[0])
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, u := range d.Replaces {
		elems := u.GetPath().GetElem()
		if elems[len(elems)-1].GetName() != "classifier" {
			continue
		}
		var c classifier
		if err := json.Unmarshal(u.GetVal().GetJsonIetfVal(), &c); err != nil {
			t.Fatal(err)
		}
		for _, term := range c.Terms.Term {
			s := term.ID + "->" + term.Actions.Config.TargetGroup
			if term.Conditions == nil {
				s += " (any)"
			}
			got[c.Name] = append(got[c.Name], s)
		}
	}
	want := []string{"10-roce->ROCE", "20-cnp->CNP", "99-default->DEFAULT (any)"}
	if diff := cmp.Diff(map[string][]string{ClassifierV4: want, ClassifierV6: want}, got); diff != "" {
		t.Errorf("classifier terms mismatch (-want +got):\n%s", diff)
	}
	if len(d.Notes) != 1 || d.Notes[0] != NotePFC {
		t.Errorf("Notes = %q, want the PFC note", d.Notes)
	}
}

// TestInterfaceMTUIsL2 (issue 10 item 16): the intent's MTU is the IP MTU;
// openconfig-interfaces' interface config/mtu is the frame size ("the mtu is
// set to the operational default -- e.g., 1514 bytes on an Ethernet
// interface"), so 9216 becomes 9230.
func TestInterfaceMTUIsL2(t *testing.T) {
	f := &intent.Fabric{
		Policy: intent.Policy{MTU: 9216, Classes: []intent.Class{
			{Name: "default", Priority: 0, Weight: 100, Default: true},
		}},
		Switches: []intent.Switch{{Name: "s1", Platform: intent.PlatformOpenConfig, Ports: []intent.Port{{Name: "Ethernet1"}, {Name: "Ethernet2", MTU: 1500}}}},
	}
	d, err := Platform{}.Compile(f, &f.Switches[0])
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, u := range d.Updates {
		el := u.GetPath().GetElem()
		if el[0].GetName() == "interfaces" {
			var ifc ocInterface
			if err := json.Unmarshal(u.GetVal().GetJsonIetfVal(), &ifc); err != nil {
				t.Fatal(err)
			}
			got[el[1].GetKey()["name"]] = strconv.Itoa(ifc.Config.MTU)
		}
	}
	if diff := cmp.Diff(map[string]string{"Ethernet1": "9230", "Ethernet2": "1514"}, got); diff != "" {
		t.Errorf("interface mtu (-want +got):\n%s", diff)
	}
}
