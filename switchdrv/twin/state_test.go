package twin_test

import (
	"context"
	"strings"
	"testing"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

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

// TestSONiC202411StreamsConfigDBChanges: a change a Set makes to CONFIG_DB
// reaches an ON_CHANGE subscription of origin sonic-db, for a key and for
// a field, as sonic-gnmi on 202411 streams it (sonic-buildimage 202411's
// src/sonic-gnmi, d04415890d8b: sonic_data_client/mixed_db_client.go
// StreamRun -> streamOnChangeSubscription: a field path polls the field
// every 200 ms and sends it when it changed, a table or key path follows
// the redis keyspace, dbTableKeySubscribe). 202405's sonic-gnmi refuses
// the origin before any client runs: TestSONiC202405RefusesNativeSubscribe.
func TestSONiC202411StreamsConfigDBChanges(t *testing.T) {
	_, c := sonicTwin(t, "sonic-202411", nil)
	sub := func(path string) *gnmipb.Subscription {
		return &gnmipb.Subscription{Path: &gnmipb.Path{Elem: cfg(t, path).GetElem()}, Mode: gnmipb.SubscriptionMode_ON_CHANGE}
	}
	st, cancel := streamOf(t, c, &gnmipb.SubscriptionList{Prefix: &gnmipb.Path{Origin: "sonic-db"}, Mode: gnmipb.SubscriptionList_STREAM,
		Subscription: []*gnmipb.Subscription{sub("SCHEDULER/scheduler.0"), sub("PORT_QOS_MAP/Ethernet0/pfc_enable")}})
	defer cancel()
	first, _ := recvLeaves(t, st, true)
	if first["/CONFIG_DB/localhost/SCHEDULER/scheduler.0"] == "" || first["/CONFIG_DB/localhost/PORT_QOS_MAP/Ethernet0/pfc_enable"] != "3,4" {
		t.Fatalf("initial values: %v", first)
	}
	if code, msg := set(context.Background(), c, &gnmipb.SetRequest{Update: []*gnmipb.Update{
		{Path: cfg(t, "SCHEDULER/scheduler.0/weight"), Val: ietf(`"20"`)},
		{Path: cfg(t, "PORT_QOS_MAP/Ethernet0/pfc_enable"), Val: ietf(`"3"`)}}}); code != 0 {
		t.Fatalf("Set: %v %s", code, msg)
	}
	got := map[string]string{}
	for len(got) < 2 {
		u, _ := recvLeaves(t, st, false)
		for k, v := range u {
			got[k] = v
		}
	}
	if !strings.Contains(got["/CONFIG_DB/localhost/SCHEDULER/scheduler.0"], `"weight":"20"`) || got["/CONFIG_DB/localhost/PORT_QOS_MAP/Ethernet0/pfc_enable"] != "3" {
		t.Errorf("streamed after the Set: %v", got)
	}
}

// TestSONiC202405RefusesNativeSubscribe: sonic-gnmi of 202405 subscribes by
// target only: a Subscribe on origin sonic-db is "Unsupported origin"
// (gnmi_server/client_subscribe.go at 47a3b00e481a), while target
// COUNTERS_DB (no origin) still streams.
func TestSONiC202405RefusesNativeSubscribe(t *testing.T) {
	tw, c := sonicTwin(t, "sonic-202405", nil)
	st, cancel := streamOf(t, c, &gnmipb.SubscriptionList{Prefix: &gnmipb.Path{Origin: "sonic-db"}, Mode: gnmipb.SubscriptionList_STREAM,
		Subscription: []*gnmipb.Subscription{{Path: &gnmipb.Path{Elem: cfg(t, "SCHEDULER/scheduler.0").GetElem()}, Mode: gnmipb.SubscriptionMode_ON_CHANGE}}})
	defer cancel()
	_, err := st.Recv()
	if s, _ := status.FromError(err); s.Code() != codes.Unimplemented || s.Message() != "Unsupported origin: sonic-db" {
		t.Fatalf("Subscribe on origin sonic-db: %v, want Unimplemented \"Unsupported origin: sonic-db\"", err)
	}
	if err := tw.Play("Ethernet0", 3, twin.Traffic{Drops: 2}); err != nil {
		t.Fatal(err)
	}
	st2, cancel2 := streamOf(t, c, &gnmipb.SubscriptionList{Prefix: &gnmipb.Path{Target: "COUNTERS_DB"}, Mode: gnmipb.SubscriptionList_STREAM,
		Subscription: []*gnmipb.Subscription{{Path: p(t, "/COUNTERS/Ethernet0/Queues"), Mode: gnmipb.SubscriptionMode_SAMPLE}}})
	defer cancel2()
	if got, _ := recvLeaves(t, st2, true); len(got) == 0 {
		t.Error("target COUNTERS_DB streamed nothing")
	}
}
