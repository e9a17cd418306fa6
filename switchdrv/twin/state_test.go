package twin_test

import (
	"context"
	"strings"
	"testing"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

// getText is the JSON text a Get of type typ answers for path.
func getText(t *testing.T, c gnmipb.GNMIClient, path string, typ gnmipb.GetRequest_DataType) string {
	t.Helper()
	r, err := c.Get(context.Background(), &gnmipb.GetRequest{Path: []*gnmipb.Path{p(t, path)}, Encoding: gnmipb.Encoding_JSON_IETF, Type: typ})
	if err != nil {
		t.Fatalf("Get %s %s: %v", typ, path, err)
	}
	var b strings.Builder
	for _, n := range r.GetNotification() {
		for _, u := range n.GetUpdate() {
			b.Write(u.GetVal().GetJsonIetfVal())
		}
	}
	return b.String()
}

// TestSRLinuxStateApartFromConfig: an SR Linux twin keeps its counters
// (config false) apart from its configuration, as the device keeps its
// state datastore apart from running: a Get of type CONFIG (what fabricctl
// plan and diff ask for) does not see them (gNMI specification 3.3.1: CONFIG
// is the config true data), ALL and STATE do, and a Set after traffic is
// validated on the configuration alone (before, the counters sat in the
// validated datastore and every Set failed "config false (state) node
// cannot be set").
func TestSRLinuxStateApartFromConfig(t *testing.T) {
	for _, name := range []string{"srlinux-24.10", "srlinux-25.3"} {
		t.Run(name, func(t *testing.T) {
			tw := strictTwin(t, name)
			_, c := dial(t, tw)
			if err := tw.Play("ethernet-1/1", 3, twin.Traffic{Packets: 100, Drops: 2, ECNMarked: 7, PauseTx: 4, PauseRx: 5}); err != nil {
				t.Fatal(err)
			}
			const qos = "/qos"
			for _, tc := range []struct {
				typ  gnmipb.GetRequest_DataType
				want bool
			}{{gnmipb.GetRequest_CONFIG, false}, {gnmipb.GetRequest_ALL, true}, {gnmipb.GetRequest_STATE, true}, {gnmipb.GetRequest_OPERATIONAL, true}} {
				got := getText(t, c, qos, tc.typ)
				for _, leaf := range []string{"pfc-pause-frames-generated", "transmitted-packets"} {
					if strings.Contains(got, leaf) != tc.want {
						t.Errorf("Get %s %s: %s present = %v, want %v:\n%.400s", tc.typ, qos, leaf, !tc.want, tc.want, got)
					}
				}
			}
			// A Get of the counter leaf itself: state, not configuration.
			leaf := "/qos/interfaces/interface[interface-id=ethernet-1/1]/pfc/statistics/pfc-priority[index=3]/pfc-pause-frames-received"
			if got := getText(t, c, leaf, gnmipb.GetRequest_CONFIG); got != "" {
				t.Errorf("Get CONFIG %s = %s, want nothing", leaf, got)
			}
			if got := getText(t, c, leaf, gnmipb.GetRequest_STATE); got != "5" {
				t.Errorf("Get STATE %s = %q, want 5", leaf, got)
			}
			// The configuration a Set must be validated on: a valid Set
			// after traffic commits.
			if _, err := c.Set(context.Background(), srlPFCSet(t, map[string]string{"srlinux-24.10": "[3]", "srlinux-25.3": "3"}[name])); err != nil {
				t.Fatalf("Set after counters moved: %v", err)
			}
			// The counters survive the Set and keep counting.
			if err := tw.Play("ethernet-1/1", 3, twin.Traffic{PauseTx: 6}); err != nil {
				t.Fatal(err)
			}
			v, _ := tw.Value(p(t, "/qos/interfaces/interface[interface-id=ethernet-1/1]/pfc/statistics/pfc-priority[index=3]/pfc-pause-frames-generated"))
			if s, _ := v.(interface{ String() string }); s == nil || s.String() != "10" {
				t.Errorf("pause frames generated after the Set = %v, want 10", v)
			}
			if got := getText(t, c, "/qos/classifiers", gnmipb.GetRequest_STATE); got != "" && strings.Contains(got, "queue-statistics") {
				t.Errorf("state of /qos/classifiers carries counters of another subtree: %s", got)
			}
		})
	}
}

// TestEOSStateTypeReadsStateOnly: on a target that does not fold its
// configuration into its state (EOS, OpenConfig), STATE is the config false
// data alone, CONFIG the configuration alone (gNMI 3.3.1).
func TestEOSStateTypeReadsStateOnly(t *testing.T) {
	tw, c := client(t, twin.Options{Name: "sw", Platform: "eos"})
	if _, err := c.Set(context.Background(), &gnmipb.SetRequest{Update: []*gnmipb.Update{{Path: p(t, "/qos/interfaces/interface[interface-id=Ethernet1/1]"),
		Val: ietf(`{"interface-id":"Ethernet1/1","config":{"interface-id":"Ethernet1/1"}}`)}}}); err != nil {
		t.Fatal(err)
	}
	if err := tw.Play("Ethernet1/1", 3, twin.Traffic{Packets: 9}); err != nil {
		t.Fatal(err)
	}
	cfg, st, all := getText(t, c, "/qos", gnmipb.GetRequest_CONFIG), getText(t, c, "/qos", gnmipb.GetRequest_STATE), getText(t, c, "/qos", gnmipb.GetRequest_ALL)
	if strings.Contains(cfg, "transmit-pkts") || !strings.Contains(cfg, `"config"`) {
		t.Errorf("CONFIG = %s, want the configuration without counters", cfg)
	}
	if !strings.Contains(st, "transmit-pkts") || strings.Contains(st, `"config"`) {
		t.Errorf("STATE = %s, want the counters without the configuration", st)
	}
	if !strings.Contains(all, "transmit-pkts") || !strings.Contains(all, `"config"`) {
		t.Errorf("ALL = %s, want both", all)
	}
}
