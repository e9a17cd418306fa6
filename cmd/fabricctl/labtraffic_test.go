package main

import (
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
)

const labTraffic = "testdata/labtraffic.yaml"

// labSwitchClient dials switch name of the lab in dir over gNMI, as any
// gNMI client would (the lab's CA and credentials).
func labSwitchClient(t *testing.T, dir, name string) *transport.Client {
	t.Helper()
	f, err := intent.Load(labTraffic)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := useLab(f, dir); err != nil {
		t.Fatal(err)
	}
	c, err := transport.Dial(context.Background(), *f.Switch(name), transport.Options{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// sonicQueueDrops reads SAI_QUEUE_STAT_DROPPED_PACKETS of port:q from a
// SONiC switch's COUNTERS_DB, as watch and validate do.
func sonicQueueDrops(t *testing.T, c *transport.Client, port string, q int) string {
	t.Helper()
	qk := port + ":" + strconv.Itoa(q)
	p := &gnmipb.Path{Elem: []*gnmipb.PathElem{{Name: "COUNTERS"}, {Name: port}, {Name: "Queues"}, {Name: qk}, {Name: "SAI_QUEUE_STAT_DROPPED_PACKETS"}}}
	ns, err := c.GetTarget(context.Background(), "COUNTERS_DB", []*gnmipb.Path{p})
	if err != nil {
		t.Fatalf("COUNTERS_DB %s: %v", qk, err)
	}
	for _, n := range ns {
		for _, u := range n.GetUpdate() {
			return strings.Trim(string(u.GetVal().GetJsonIetfVal())+u.GetVal().GetStringVal(), `"`)
		}
	}
	return ""
}

var droppedRow = regexp.MustCompile(`(?m)^  (\S+ \S+) priority (\d): (\d+) dropped`)

// TestLabTrafficWrongApply: traffic played into a kept lab goes through
// what the twins hold, read back over gNMI, not through the intent. After
// apply an incast drops nothing; with PFC removed from one port of the
// SONiC leaf by a direct gNMI Set (PORT_QOS_MAP|Ethernet0 pfc_enable
// deleted, as an operator's mistake would), the same incast drops on
// exactly that port, and its drop counter in COUNTERS_DB says so.
func TestLabTrafficWrongApply(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lab")
	startKeptLab(t, "-f", labTraffic, "--dir", dir)
	traffic := func() string {
		t.Helper()
		return runCLIWant(t, ExitOK, "lab", "traffic", "incast:3:1", "--once", "--traffic-duration", "2ms", "-f", labTraffic, "--lab", dir)
	}
	out := traffic()
	if !strings.Contains(out, ", 0 dropped,") || droppedRow.MatchString(out) {
		t.Fatalf("the incast through the applied intent drops:\n%s", out)
	}
	leaf1 := labSwitchClient(t, dir, "leaf1")
	if got := sonicQueueDrops(t, leaf1, "Ethernet0", 3); got != "0" && got != "" {
		t.Fatalf("leaf1 Ethernet0:3 drops before the wrong Set: %q", got)
	}
	field := &gnmipb.Path{Origin: "sonic-db", Elem: []*gnmipb.PathElem{{Name: "CONFIG_DB"}, {Name: "localhost"}, {Name: "PORT_QOS_MAP"}, {Name: "Ethernet0"}, {Name: "pfc_enable"}}}
	if _, err := leaf1.Set(context.Background(), &gnmipb.SetRequest{Delete: []*gnmipb.Path{field}}); err != nil {
		t.Fatalf("direct gNMI Set: %v", err)
	}
	out = traffic()
	rows := droppedRow.FindAllStringSubmatch(out, -1)
	if len(rows) != 1 || rows[0][1] != "leaf1 Ethernet0" || rows[0][2] != "3" {
		t.Fatalf("after PFC was removed from leaf1 Ethernet0: want drops there and nowhere else:\n%s", out)
	}
	if got := sonicQueueDrops(t, leaf1, "Ethernet0", 3); got != rows[0][3] {
		t.Errorf("leaf1 COUNTERS_DB Ethernet0:3 SAI_QUEUE_STAT_DROPPED_PACKETS %q, want the run's %s", got, rows[0][3])
	}
}

// TestLabTrafficWrongApplySRLinux: PFC turned off on the SR Linux leaf's
// uplink by a direct gNMI Set (/qos/interfaces/interface[interface-id=
// ethernet-1/32]/pfc/pfc-enable false): the leaf never pauses the spine,
// and an incast across the spine into a receiver of that leaf that does
// not drain (its pause holds the leaf's egress, the leaf's queue grows
// past the pfc-queue's maximum-burst-size, 1.5 MB above the ECN max)
// drops at that uplink and nowhere else. (A 3:1 incast into a draining
// receiver drops nothing there: ECN keeps the queue below that depth.)
func TestLabTrafficWrongApplySRLinux(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lab")
	startKeptLab(t, "-f", labTraffic, "--dir", dir)
	traffic := func() string {
		t.Helper()
		return runCLIWant(t, ExitOK, "lab", "traffic", "slow-receiver:0", "--once", "--traffic-duration", "2ms", "-f", labTraffic, "--lab", dir)
	}
	if out := traffic(); !strings.Contains(out, ", 0 dropped,") {
		t.Fatalf("the stuck receiver drops through the applied intent within 2ms:\n%s", out)
	}
	leaf2 := labSwitchClient(t, dir, "leaf2")
	p := &gnmipb.Path{Elem: []*gnmipb.PathElem{{Name: "qos"}, {Name: "interfaces"}, {Name: "interface", Key: map[string]string{"interface-id": "ethernet-1/32"}},
		{Name: "pfc"}, {Name: "pfc-enable"}}}
	req := &gnmipb.SetRequest{Update: []*gnmipb.Update{{Path: p, Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: []byte("false")}}}}}
	if _, err := leaf2.Set(context.Background(), req); err != nil {
		t.Fatalf("direct gNMI Set: %v", err)
	}
	out := traffic()
	rows := droppedRow.FindAllStringSubmatch(out, -1)
	if len(rows) != 1 || rows[0][1] != "leaf2 ethernet-1/32" || rows[0][2] != "3" {
		t.Fatalf("after PFC was turned off on leaf2 ethernet-1/32: want drops there and nowhere else:\n%s", out)
	}
}

// TestLabStormFiresAlerts: a kept lab of the user's fabric with the storm
// scenario playing (a receiver that never drains) moves the twins'
// counters at the simulated rates; fabricctl watch against the lab
// (--lab) exports pause, ECN and drop series for the lab's switches, and
// a real Prometheus (Debian's package) scraping it with the shipped
// alert rules (examples/prometheus, for: shortened to 2s, evaluated every
// second) fires FabricctlPFCWatchdogTriggered, FabricctlPFCStorm and
// FabricctlLosslessQueueDrops. Every wait polls Prometheus' API with a
// generous bound: rule evaluation is an event, not a fixed sleep.
func TestLabStormFiresAlerts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a lab and Prometheus")
	}
	dir := filepath.Join(t.TempDir(), "lab")
	out := startKeptLab(t, "-f", labTraffic, "--dir", dir, "--traffic", "storm")
	if !strings.Contains(out.String(), "now move at the simulated per-second rates") {
		t.Fatalf("lab --keep --traffic storm does not play rates:\n%s", out.String())
	}
	watchAddr := startWatch(t, labTraffic, "--lab", dir, "--interval", "200ms", "--no-drift")

	rules := filepath.Join(t.TempDir(), "rules.yaml")
	shortFor(t, "../../examples/prometheus/fabricctl-rules.yaml", rules, "2s")
	base := startPrometheus(t, rules, watchAddr)
	// Generous: a loaded machine scrapes and evaluates late; each wait
	// ends at its event.
	waitProm := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(3 * time.Minute)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("Prometheus: no %s within 3 minutes", what)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	waitProm("readiness", func() bool { _, err := httpGet(base + "/-/ready"); return err == nil })
	waitProm("three switches up", func() bool {
		return len(promQuery(t, base, `fabricctl_target_up{job="fabricctl-watch"} == 1`)) == 3
	})
	// The series the traffic moves, for the switches of the lab, growing.
	for _, m := range []string{"fabricctl_switch_pfc_pause_frames_total", "fabricctl_switch_ecn_marked_packets_total", "fabricctl_switch_queue_drops_total", "fabricctl_switch_pfc_watchdog_storms_total"} {
		waitProm(m+" growing", func() bool {
			return len(promQuery(t, base, `sum(rate(`+m+`[5s])) > 0`)) == 1
		})
	}
	for _, sw := range []string{"leaf1", "leaf2", "spine1"} {
		if r := promQuery(t, base, `fabricctl_switch_queue_drops_total{switch="`+sw+`"}`); len(r) == 0 {
			t.Errorf("no drop series for %s", sw)
		}
	}
	for _, alert := range []string{"FabricctlPFCWatchdogTriggered", "FabricctlPFCStorm", "FabricctlLosslessQueueDrops"} {
		waitProm(alert+" firing", func() bool {
			return len(promQuery(t, base, `ALERTS{alertname="`+alert+`",alertstate="firing"}`)) > 0
		})
	}
	// The watchdog fired where the storm is: the ports the simulated run
	// counted triggers on.
	for _, r := range promQuery(t, base, `ALERTS{alertname="FabricctlPFCWatchdogTriggered",alertstate="firing"}`) {
		if r.Metric["priority"] != "3" {
			t.Errorf("watchdog alert %v: want the lossless priority 3", r.Metric)
		}
	}
}

// TestLabTrafficNeedsHosts: traffic runs on the intent's own hosts and
// links (the switches read back are the intent's): a fabric without hosts
// is refused with what to add, and an unknown scenario is a usage error.
func TestLabTrafficNeedsHosts(t *testing.T) {
	code, _, errOut := runCLI(t, t.Context(), "lab", "-f", lab9, "--dir", t.TempDir(), "--traffic", "incast:2:1")
	if code != ExitError || !strings.Contains(errOut, "inventory.hosts") {
		t.Errorf("lab --traffic on a fabric without hosts: exit %d, want %d naming inventory.hosts:\n%s", code, ExitError, errOut)
	}
	code, _, errOut = runCLI(t, t.Context(), "lab", "-f", labTraffic, "--dir", t.TempDir(), "--traffic", "nope:1")
	if code != ExitUsage || !strings.Contains(errOut, "nope") {
		t.Errorf("lab --traffic nope:1: exit %d, want %d naming it:\n%s", code, ExitUsage, errOut)
	}
	code, _, errOut = runCLI(t, t.Context(), "lab", "traffic", "incast:2:1", "-f", labTraffic, "--lab", t.TempDir())
	if code != ExitError || !strings.Contains(errOut, "lab.json") {
		t.Errorf("lab traffic into a directory without a lab: exit %d, want %d:\n%s", code, ExitError, errOut)
	}
}

// TestLabTrafficBadConfigRead: what a switch answers that does not decode
// (a device that validates less than the profiled twins: bare twins,
// --empty) is an error naming the switch, the port and the entry, not a
// silent default: a SONiC QUEUE pointing at a WRED profile the switch
// lacks, an SR Linux port pointing at a pfc-mapping-profile it lacks.
func TestLabTrafficBadConfigRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lab")
	startKeptLab(t, "-f", labTraffic, "--dir", dir, "--empty")
	leaf1 := labSwitchClient(t, dir, "leaf1")
	set := func(table, key, json string) {
		t.Helper()
		p := &gnmipb.Path{Origin: "sonic-db", Elem: []*gnmipb.PathElem{{Name: "CONFIG_DB"}, {Name: "localhost"}, {Name: table}, {Name: key}}}
		req := &gnmipb.SetRequest{Replace: []*gnmipb.Update{{Path: p, Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(json)}}}}}
		if _, err := leaf1.Set(context.Background(), req); err != nil {
			t.Fatalf("direct gNMI Set %s|%s: %v", table, key, err)
		}
	}
	traffic := func(want ...string) {
		t.Helper()
		code, out, errOut := runCLI(t, t.Context(), "lab", "traffic", "incast:3:1", "--once", "-f", labTraffic, "--lab", dir)
		for _, w := range want {
			if code != ExitError || !strings.Contains(errOut, w) {
				t.Errorf("lab traffic: exit %d, want %d and %q:\n%s%s", code, ExitError, w, out, errOut)
			}
		}
	}
	set("QUEUE", "Ethernet0|3", `{"scheduler":"FABRICCTL_ROCE","wred_profile":"NOPE"}`)
	traffic("switch leaf1 port Ethernet0", "WRED_PROFILE|NOPE")
	set("QUEUE", "Ethernet0|3", `{"scheduler":"FABRICCTL_ROCE"}`)
	leaf2 := labSwitchClient(t, dir, "leaf2")
	p := &gnmipb.Path{Elem: []*gnmipb.PathElem{{Name: "qos"}, {Name: "interfaces"}, {Name: "interface", Key: map[string]string{"interface-id": "ethernet-1/2"}},
		{Name: "pfc"}, {Name: "pfc-mapping-profile"}}}
	req := &gnmipb.SetRequest{Update: []*gnmipb.Update{{Path: p, Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(`"NOPE"`)}}}}}
	if _, err := leaf2.Set(context.Background(), req); err != nil {
		t.Fatalf("direct gNMI Set: %v", err)
	}
	traffic("switch leaf2 port ethernet-1/2", "pfc-mapping-profile NOPE")
}
