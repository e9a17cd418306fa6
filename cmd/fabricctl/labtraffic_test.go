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
