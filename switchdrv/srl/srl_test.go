package srl

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"golang.org/x/sync/errgroup"
	"google.golang.org/protobuf/proto"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/portfacts"
	"github.com/fabricctl/fabricctl/switchdrv"
)

func testFabric(ports ...intent.Port) *intent.Fabric {
	return &intent.Fabric{
		Policy: intent.Policy{
			MTU: 9216,
			Classes: []intent.Class{
				{Name: "default", Priority: 0, Weight: 50, Default: true},
				{Name: "roce", DSCP: []int{26}, Priority: 3, Lossless: true, Weight: 50,
					ECN: &intent.ECN{MinBytes: 150_000, MaxBytes: 1_501_500, Probability: 100}},
				{Name: "cnp", DSCP: []int{48}, Priority: 6, Strict: true, CNP: true},
			},
			Watchdog: intent.Watchdog{Enabled: true, Detect: 200 * time.Millisecond, Restore: 400 * time.Millisecond, Action: intent.WatchdogDrop},
		},
		Switches: []intent.Switch{{Name: "leaf1", Platform: intent.PlatformSRLinux, Ports: ports}},
	}
}

// TestHeadroomProfiles: ports with equal speed, cable and MTU share one
// buffer-allocation profile; each port points at the profile of its own
// headroom, and the headroom is the largest published model's.
func TestHeadroomProfiles(t *testing.T) {
	f := testFabric(
		intent.Port{Name: "ethernet-1/1", Speed: 400e9, CableMeters: 3},
		intent.Port{Name: "ethernet-1/2", Speed: 400e9, CableMeters: 3},
		intent.Port{Name: "ethernet-1/3", Speed: 100e9, CableMeters: 100},
	)
	d, err := Platform{}.Compile(f, &f.Switches[0])
	if err != nil {
		t.Fatal(err)
	}
	profiles := map[string]int64{}
	portProfile := map[string]string{}
	for _, u := range d.Replaces {
		var v map[string]json.RawMessage
		if err := json.Unmarshal(u.GetVal().GetJsonIetfVal(), &v); err != nil {
			t.Fatal(err)
		}
		elems := u.GetPath().GetElem()
		switch last := elems[len(elems)-1]; {
		case last.GetName() == "buffer-allocation-profile":
			var bp bufferProfile
			if err := json.Unmarshal(u.GetVal().GetJsonIetfVal(), &bp); err != nil {
				t.Fatal(err)
			}
			if bp.Name == OutputBuffers {
				continue
			}
			profiles[bp.Name] = bp.Queues.PFCQueue[0].ReservedBytes
		case last.GetName() == "interface" && !strings.Contains(last.GetKey()["interface-id"], "."):
			var qi qosInterface
			if err := json.Unmarshal(u.GetVal().GetJsonIetfVal(), &qi); err != nil {
				t.Fatal(err)
			}
			portProfile[qi.ID] = qi.Input.PFCBufferProfile
		}
	}
	published400 := portfacts.HeadroomOf(intent.HeadroomInput{Speed: 400e9, CableMeters: 3, MTU: 9216}).Programmed
	_, req := intent.Headroom(intent.HeadroomInput{Speed: 400e9, CableMeters: 3, MTU: 9216})
	if published400 < req || published400-req >= 1024 {
		t.Errorf("headroom(400G, 3m) = %d, want the largest model %d rounded up to 1 KiB", published400, req)
	}
	// The compiler programs the headroom for the switch's ASIC (its profile's
	// Tomahawk 4 on a 7220 IXR-H4): the vendor lookup table, when larger.
	sw := &f.Switches[0]
	want400 := portfacts.PortOf(f, sw, sw.Ports[0]).Headroom.Programmed
	want100 := portfacts.PortOf(f, sw, sw.Ports[2]).Headroom.Programmed
	if want400 < published400 {
		t.Errorf("ASIC headroom %d below the published models' %d", want400, published400)
	}
	wantProfiles := map[string]int64{
		bufferPrefix + itoa64(want400): want400,
		bufferPrefix + itoa64(want100): want100,
	}
	if diff := cmp.Diff(wantProfiles, profiles); diff != "" {
		t.Errorf("buffer profiles mismatch (-want +got):\n%s", diff)
	}
	wantPorts := map[string]string{
		"ethernet-1/1": bufferPrefix + itoa64(want400),
		"ethernet-1/2": bufferPrefix + itoa64(want400),
		"ethernet-1/3": bufferPrefix + itoa64(want100),
	}
	if diff := cmp.Diff(wantPorts, portProfile); diff != "" {
		t.Errorf("port -> profile mismatch (-want +got):\n%s", diff)
	}
}

// TestNoLosslessClass: without lossless classes nothing PFC-related is sent.
func TestNoLosslessClass(t *testing.T) {
	f := testFabric(intent.Port{Name: "ethernet-1/1", Speed: 100e9, CableMeters: 3})
	f.Policy.Classes[1].Lossless = false
	d, err := Platform{}.Compile(f, &f.Switches[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range append(d.Replaces, d.Updates...) {
		s := string(u.GetVal().GetJsonIetfVal())
		for _, e := range u.GetPath().GetElem() {
			s += " " + e.GetName()
		}
		if strings.Contains(s, "pfc") {
			t.Errorf("PFC sent without a lossless class: %s", s)
		}
	}
}

func itoa64(i int64) string { return strconv.FormatInt(i, 10) }

// compiledTree merges every Replace and Update of d into one JSON tree, the
// way the switch's candidate datastore holds them after the Set (paths are
// turned into nested objects, list keys into one-entry lists), so tests can
// resolve the references between them.
type compiled struct {
	// objects maps "<list>[key]" to the JSON object written there, e.g.
	// "buffer-allocation-profile[FABRICCTL_QUEUES]".
	objects map[string]map[string]any
	// ifaces are the qos interface objects by interface-id.
	ifaces map[string]map[string]any
}

func compileSRL(t *testing.T, f *intent.Fabric) (*switchdrv.Desired, compiled) {
	t.Helper()
	d, err := Platform{}.Compile(f, &f.Switches[0])
	if err != nil {
		t.Fatal(err)
	}
	c := compiled{objects: map[string]map[string]any{}, ifaces: map[string]map[string]any{}}
	for _, u := range append(append([]*gnmipb.Update{}, d.Replaces...), d.Updates...) {
		elems := u.GetPath().GetElem()
		last := elems[len(elems)-1]
		var v map[string]any
		if err := json.Unmarshal(u.GetVal().GetJsonIetfVal(), &v); err != nil {
			continue // a leaf (mtu)
		}
		for _, k := range last.GetKey() {
			c.objects[last.GetName()+"["+k+"]"] = v
		}
		if last.GetName() == "interface" && len(elems) == 3 && elems[0].GetName() == "qos" {
			c.ifaces[last.GetKey()["interface-id"]] = v
		}
	}
	return d, c
}

func obj(v any, path ...string) map[string]any {
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	m, _ := v.(map[string]any)
	return m
}

func list(v any, path ...string) []map[string]any {
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	var out []map[string]any
	for _, e := range asSlice(v) {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

// TestOutputQueueManagementNeedsMBS (issue 10 item 10): srl_nokia-qos
// (v23.10-v25.3, grouping qos-interface-queue-root-top) puts a must on
// output/queues/queue/queue-management-profile: the interface's output
// buffer-allocation-profile must list that queue with a maximum-burst-size
// other than 0 ("cannot be configured without setting maximum burst size").
func TestOutputQueueManagementNeedsMBS(t *testing.T) {
	f := testFabric(intent.Port{Name: "ethernet-1/1", Speed: 400e9, CableMeters: 3})
	_, c := compileSRL(t, f)
	for id, qi := range c.ifaces {
		for _, q := range list(qi, "output", "queues", "queue") {
			if q["queue-management-profile"] == nil {
				continue
			}
			bap, _ := obj(qi, "output")["buffer-allocation-profile"].(string)
			if bap == "" {
				t.Errorf("interface %s: queue %v has a queue-management-profile but output has no buffer-allocation-profile", id, q["queue-name"])
				continue
			}
			p := c.objects["buffer-allocation-profile["+bap+"]"]
			if p == nil {
				t.Errorf("interface %s: output buffer-allocation-profile %s is not compiled", id, bap)
				continue
			}
			found := false
			for _, pq := range list(p, "queues", "queue") {
				if pq["queue-name"] == q["queue-name"] {
					found = true
					if mbs, _ := pq["maximum-burst-size"].(float64); mbs <= 0 {
						t.Errorf("profile %s queue %v: maximum-burst-size %v, want > 0", bap, q["queue-name"], pq["maximum-burst-size"])
					}
				}
			}
			if !found {
				t.Errorf("interface %s: profile %s has no queue %v", id, bap, q["queue-name"])
			}
		}
	}
}

// TestNamedObjectsCreated (issue 10 item 11): from SR Linux 24.3 the
// forwarding classes, queues and pfc-queues that policies name are leafrefs
// to /qos/forwarding-classes, /qos/queues/queue and /qos/queues/pfc-queue,
// and a fresh install creates none of them (Nokia SR Linux QoS guide,
// "Named queues and forwarding classes", 24.10). Every name the payloads
// reference must be created in the same Set.
func TestNamedObjectsCreated(t *testing.T) {
	f := testFabric(intent.Port{Name: "ethernet-1/1", Speed: 400e9, CableMeters: 3})
	d, c := compileSRL(t, f)
	refs := map[string]bool{}
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(k, e)
			}
		case []any:
			for _, e := range x {
				walk(key, e)
			}
		case string:
			switch key {
			case "forwarding-class":
				refs["forwarding-class["+x+"]"] = true
			case "queue-name", "unicast-queue":
				refs["queue["+x+"]"] = true
			case "pfc-queue-name":
				refs["pfc-queue["+x+"]"] = true
			}
		}
	}
	for _, u := range append(append([]*gnmipb.Update{}, d.Replaces...), d.Updates...) {
		var v any
		if json.Unmarshal(u.GetVal().GetJsonIetfVal(), &v) == nil {
			walk("", v)
		}
	}
	if len(refs) == 0 {
		t.Fatal("no references found")
	}
	for r := range refs {
		if c.objects[r] == nil {
			t.Errorf("%s is referenced but not created", r)
		}
	}
	// Standard names only, each with its own index (the pfc-queue must:
	// "default pfc queue's cannot be modified").
	for _, prio := range []int{0, 3, 6} {
		fcObj := c.objects["forwarding-class[fc"+strconv.Itoa(prio)+"]"]
		if got := obj(fcObj, "output")["unicast-queue"]; got != "unicast-"+strconv.Itoa(prio) {
			t.Errorf("fc%d unicast-queue = %v", prio, got)
		}
		if got, _ := fcObj["forwarding-class-index"].(float64); int(got) != prio {
			t.Errorf("fc%d forwarding-class-index = %v", prio, fcObj["forwarding-class-index"])
		}
		if got, _ := c.objects["queue[unicast-"+strconv.Itoa(prio)+"]"]["queue-index"].(float64); int(got) != prio {
			t.Errorf("unicast-%d queue-index = %v", prio, got)
		}
	}
	if got, _ := c.objects["pfc-queue[pfc3]"]["queue-index"].(float64); got != 3 {
		t.Errorf("pfc3 queue-index = %v, want 3", c.objects["pfc-queue[pfc3]"]["queue-index"])
	}
}

// TestPFCQueueMBSAboveKmax (issue 10 item 12): on 7220 IXR the ingress
// pfc-queue sends pause when it holds more than its maximum-burst-size
// (srl_nokia-qos: default 51200 B, feature qos-pfc-xgs), long before an ECN
// Kmax of 1,501,500 B. The compiled MBS must be above Kmax.
func TestPFCQueueMBSAboveKmax(t *testing.T) {
	f := testFabric(intent.Port{Name: "ethernet-1/1", Speed: 400e9, CableMeters: 3})
	_, c := compileSRL(t, f)
	n := 0
	for k, p := range c.objects {
		if !strings.HasPrefix(k, "buffer-allocation-profile[") {
			continue
		}
		for _, pq := range list(p, "queues", "pfc-queue") {
			n++
			mbs, _ := pq["maximum-burst-size"].(float64)
			if int64(mbs) <= f.Policy.Classes[1].ECN.MaxBytes {
				t.Errorf("%s %v: maximum-burst-size %v, want above ECN Kmax %d", k, pq["pfc-queue-name"], pq["maximum-burst-size"], f.Policy.Classes[1].ECN.MaxBytes)
			}
		}
	}
	if n == 0 {
		t.Fatal("no pfc-queue compiled")
	}
}

// TestWatchdogNote (issue 10 item 13): SR Linux deadlock recovery ignores
// received pause frames on the stuck queue for the recovery timer (it keeps
// transmitting, as SONiC's "forward" action); it never drops. The note must
// say so when the intent asks for drop or alert, and be absent for forward.
func TestWatchdogNote(t *testing.T) {
	for _, tc := range []struct {
		action intent.WatchdogAction
		note   bool
	}{{intent.WatchdogDrop, true}, {intent.WatchdogAlert, true}, {intent.WatchdogForward, false}} {
		f := testFabric(intent.Port{Name: "ethernet-1/1", Speed: 400e9, CableMeters: 3})
		f.Policy.Watchdog.Action = tc.action
		d, err := Platform{}.Compile(f, &f.Switches[0])
		if err != nil {
			t.Fatal(err)
		}
		got := false
		for _, n := range d.Notes {
			if strings.Contains(n, "deadlock recovery") {
				got = true
				if !strings.Contains(n, "ignores") || !strings.Contains(n, string(tc.action)) {
					t.Errorf("action %s: note %q does not say pause frames are ignored instead of %s", tc.action, n, tc.action)
				}
			}
		}
		if got != tc.note {
			t.Errorf("action %s: watchdog note present %v, want %v (notes %q)", tc.action, got, tc.note, d.Notes)
		}
	}
}

// TestMTUIsIPMTU (issue 10 item 16): the intent's MTU is the IP MTU (what
// SONiC's PORT mtu, EOS's mtu and a Linux netdev take); SR Linux's
// interface mtu is the L2 frame without FCS (srl_nokia-interfaces.yang:
// "Port MTU in bytes including ethernet overhead but excluding 4-bytes
// FCS"; 7220 IXR: IP MTU at most 9398 against port MTU 9412). An untagged
// subinterface adds 14 bytes, a VLAN-tagged one 18.
func TestMTUIsIPMTU(t *testing.T) {
	f := testFabric(
		intent.Port{Name: "ethernet-1/1", Speed: 400e9, CableMeters: 3},
		intent.Port{Name: "ethernet-1/2", Speed: 400e9, CableMeters: 3, Subinterface: 10},
		intent.Port{Name: "ethernet-1/3", Speed: 400e9, CableMeters: 3, MTU: 9398},
	)
	d, err := Platform{}.Compile(f, &f.Switches[0])
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, u := range d.Updates {
		el := u.GetPath().GetElem()
		if len(el) == 2 && el[1].GetName() == "mtu" {
			got[el[0].GetKey()["name"]] = string(u.GetVal().GetJsonIetfVal())
		}
	}
	want := map[string]string{"ethernet-1/1": "9230", "ethernet-1/2": "9234", "ethernet-1/3": "9412"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("interface mtu (-want +got):\n%s", diff)
	}
	f.Switches[0].Ports[2].MTU = 9400 // L2 9414: above the 7220's 9412
	if _, err := (Platform{}).Compile(f, &f.Switches[0]); err == nil {
		t.Error("IP MTU 9400 (port mtu 9414) compiled, want an error: the 7220 takes at most 9412")
	}
}

// TestSharedPathElems: the path elements without keys are one object for
// every path of every switch (sharedElems). They must survive what a run
// does with compiled requests, several switches at once: encoding them for
// gRPC concurrently (protobuf's size cache is atomic; -race checks it),
// and they must still be a plain name with no keys afterwards, else every
// later path would carry the change.
func TestSharedPathElems(t *testing.T) {
	f := testFabric(intent.Port{Name: "ethernet-1/1", Speed: 400e9, CableMeters: 3})
	f.Switches = append(f.Switches, intent.Switch{Name: "leaf2", Platform: intent.PlatformSRLinux,
		Ports: []intent.Port{{Name: "ethernet-1/2", Speed: 100e9, CableMeters: 5}}})
	var reqs []*gnmipb.SetRequest
	shared := 0
	for i := range f.Switches {
		d, err := Platform{}.Compile(f, &f.Switches[i])
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, d.SetRequest())
		for _, u := range append(append([]*gnmipb.Update{}, d.Replaces...), d.Updates...) {
			for _, e := range u.GetPath().GetElem() {
				if slices.Contains(sharedElems(), e) {
					shared++
				}
			}
		}
	}
	if shared == 0 {
		t.Fatal("no compiled path uses a shared element")
	}
	var wg sync.WaitGroup
	for range 8 {
		for _, r := range reqs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := proto.Marshal(r); err != nil {
					t.Error(err)
				}
			}()
		}
	}
	wg.Wait()
	for _, e := range sharedElems() {
		if e.GetName() == "" || strings.ContainsAny(e.GetName(), "[]/") || len(e.GetKey()) != 0 {
			t.Errorf("shared path element changed: %v", e)
		}
	}
	// A port's keyed elements are shared by the switches that have a
	// port of that name, and stay what they name.
	portElems.Range(func(pk portElemKey, e *gnmipb.PathElem) bool {
		if e.GetName() != pk.name || len(e.GetKey()) != 1 || e.GetKey()[pk.key] != pk.value {
			t.Errorf("shared port element %v changed: %v", pk, e)
		}
		return true
	})
	var g errgroup.Group
	ds := make([]*switchdrv.Desired, 2)
	for i := range ds {
		g.Go(func() (err error) {
			ds[i], err = Platform{}.Compile(f, &f.Switches[0])
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	if a, b := ds[0].Replaces[len(ds[0].Replaces)-1].GetPath().GetElem(), ds[1].Replaces[len(ds[1].Replaces)-1].GetPath().GetElem(); a[len(a)-1] != b[len(b)-1] {
		t.Errorf("two compiles of one port hold two copies of its element %v", a[len(a)-1])
	}
}
