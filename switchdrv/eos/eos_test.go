package eos

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricctl/fabricctl/intent"
)

func testFabric() *intent.Fabric {
	return &intent.Fabric{
		Policy: intent.Policy{
			MTU: 9214,
			Classes: []intent.Class{
				{Name: "default", Priority: 0, Weight: 40, Default: true},
				{Name: "roce", DSCP: []int{26}, Priority: 3, Lossless: true, Weight: 40},
				{Name: "storage", DSCP: []int{24, 28}, Priority: 4, Lossless: true, Weight: 20},
				{Name: "cnp", DSCP: []int{48}, Priority: 6, Strict: true, CNP: true},
			},
			Watchdog: intent.Watchdog{Enabled: true, Detect: 200 * time.Millisecond, Restore: 400 * time.Millisecond,
				Poll: 50 * time.Millisecond, Action: intent.WatchdogForward},
		},
		Switches: []intent.Switch{{Name: "leaf1", Platform: intent.PlatformEOS, Ports: []intent.Port{{Name: "Ethernet1"}, {Name: "Ethernet2", MTU: 9000}}}},
	}
}

func TestCLI(t *testing.T) {
	f := testFabric()
	d, err := Platform{}.Compile(f, &f.Switches[0])
	if err != nil {
		t.Fatal(err)
	}
	var cli []string
	for _, u := range d.Updates {
		if u.GetPath().GetOrigin() == OriginCLI {
			cli = append(cli, u.GetVal().GetAsciiVal())
		}
	}
	if len(cli) != 1 {
		t.Fatalf("%d CLI updates, want 1", len(cli))
	}
	lines := strings.Split(strings.TrimSpace(cli[0]), "\n")
	// Every DSCP is mapped exactly once, to its class.
	seen := map[int]int{}
	var rest []string
	for _, l := range lines {
		var tc int
		if strings.HasPrefix(l, "qos map dscp ") {
			fields := strings.Fields(strings.TrimPrefix(l, "qos map dscp "))
			n := len(fields)
			if n < 4 || fields[n-3] != "to" || fields[n-2] != "traffic-class" {
				t.Fatalf("bad map line %q", l)
			}
			tc, _ = strconv.Atoi(fields[n-1])
			for _, ds := range fields[:n-3] {
				dv, _ := strconv.Atoi(ds)
				if _, dup := seen[dv]; dup {
					t.Errorf("DSCP %d mapped twice", dv)
				}
				seen[dv] = tc
			}
			continue
		}
		rest = append(rest, l)
	}
	want := f.Policy.DSCPToPriority()
	for dv := 0; dv < 64; dv++ {
		if seen[dv] != want[dv] {
			t.Errorf("DSCP %d -> traffic-class %d, want %d", dv, seen[dv], want[dv])
		}
	}
	wantRest := []string{
		"interface Ethernet1", "   mtu 9214", "   qos trust dscp", "   flowcontrol receive off", "   flowcontrol send off", "   priority-flow-control on", "!",
		"interface Ethernet2", "   mtu 9000", "   qos trust dscp", "   flowcontrol receive off", "   flowcontrol send off", "   priority-flow-control on", "!",
	}
	if diff := cmp.Diff(wantRest, rest); diff != "" {
		t.Errorf("interface CLI mismatch (-want +got):\n%s", diff)
	}
}

// TestMTUWithinEOSRange: EOS takes "mtu" 68..9214 on Ethernet interfaces
// ("% Max MTU for Ethernet4 is 9194" on cEOS, 9214 on hardware); the
// intent's default jumbo MTU 9216 would make the whole CLI update fail.
func TestMTUWithinEOSRange(t *testing.T) {
	f := testFabric()
	f.Policy.MTU = 9216
	d, err := Platform{}.Compile(f, &f.Switches[0])
	if err != nil {
		t.Fatal(err)
	}
	var mtus []string
	for _, u := range d.Updates {
		for _, l := range strings.Split(u.GetVal().GetAsciiVal(), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "mtu ") {
				mtus = append(mtus, strings.TrimSpace(l))
			}
		}
	}
	if diff := cmp.Diff([]string{"mtu 9214", "mtu 9000"}, mtus); diff != "" {
		t.Errorf("interface mtu lines (-want +got):\n%s", diff)
	}
	var noted bool
	for _, n := range d.Notes {
		noted = noted || strings.Contains(n, "Ethernet1") && strings.Contains(n, "9214")
	}
	if !noted {
		t.Errorf("Notes %q do not say Ethernet1's MTU became 9214", d.Notes)
	}
	f.Switches[0].Ports[1].MTU = 60
	if _, err := (Platform{}).Compile(f, &f.Switches[0]); err == nil {
		t.Error("Compile with mtu 60: no error, want EOS's 68 minimum enforced")
	}
}

// TestWatchdogSteps: default-timeout and default-recovery-time are
// decimal64 seconds with 2 fraction digits, default-polling-interval with 3:
// a finer intent value would be rounded silently (205 ms sent as 0.20 s,
// and the poll <= half the timeout rule checked on values the switch never
// gets).
func TestWatchdogSteps(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		detect, restore, poll time.Duration
		ok                    bool
	}{
		{"steps", 200 * time.Millisecond, 400 * time.Millisecond, 50 * time.Millisecond, true},
		{"detect 205ms", 205 * time.Millisecond, 400 * time.Millisecond, 100 * time.Millisecond, false},
		{"restore 415ms", 200 * time.Millisecond, 415 * time.Millisecond, 50 * time.Millisecond, false},
		{"poll 50.5ms", 200 * time.Millisecond, 400 * time.Millisecond, 50500 * time.Microsecond, false},
	} {
		f := testFabric()
		f.Policy.Watchdog.Detect, f.Policy.Watchdog.Restore, f.Policy.Watchdog.Poll = tc.detect, tc.restore, tc.poll
		_, err := Platform{}.Compile(f, &f.Switches[0])
		if (err == nil) != tc.ok {
			t.Errorf("%s: Compile error = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

func TestAugments(t *testing.T) {
	f := testFabric()
	d, err := Platform{}.Compile(f, &f.Switches[0])
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, u := range d.Replaces {
		var names []string
		for _, e := range u.GetPath().GetElem() {
			names = append(names, e.GetName())
		}
		var v map[string]any
		if err := json.Unmarshal(u.GetVal().GetJsonIetfVal(), &v); err != nil {
			t.Fatal(err)
		}
		switch p := strings.Join(names, "/"); p {
		case "qos/arista-qos-augments:pfc/watchdog":
			c := v["config"].(map[string]any)
			got["action"] = c["action"].(string)
			got["timeout"] = c["default-timeout"].(string)
			got["recovery"] = c["default-recovery-time"].(string)
			got["poll"] = c["default-polling-interval"].(string)
		case "qos/interfaces/interface":
			got["no-drop "+u.GetPath().GetElem()[2].GetKey()["interface-id"]] = v["output"].(map[string]any)["arista-qos-augments:pfc"].(map[string]any)["config"].(map[string]any)["priorities-no-drop"].(string)
		}
	}
	want := map[string]string{
		"action": "IGNORE_PFC", "timeout": "0.20", "recovery": "0.40", "poll": "0.050",
		"no-drop Ethernet1": "18", "no-drop Ethernet2": "18", // priorities 3 and 4
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("augments mismatch (-want +got):\n%s", diff)
	}
}
