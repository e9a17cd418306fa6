package eos

import (
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
				{Name: "roce", DSCP: []int{26}, Priority: 3, Lossless: true, Weight: 40,
					ECN: &intent.ECN{MinBytes: 150_000, MaxBytes: 1_501_500, Probability: 100}},
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
	// Arista AVD eos_cli_config_gen: priority-flow-control.j2 (global pause
	// watchdog timers and action), ethernet-interfaces.j2 (priority-flow-
	// control on / priority N no-drop per interface) and
	// ethernet-interface-tx-queues.j2 (random-detect ecn per tx-queue);
	// the watchdog is enabled per interface as qos-profiles.j2 does.
	// Every priority and tx-queue gets its setting, drop and "no
	// random-detect ecn" where no class asks for no-drop or marking (the
	// CLI merges: an earlier apply's lines stay otherwise).
	port := func(name, mtu string) []string {
		l := []string{
			"interface " + name, "   mtu " + mtu, "   qos trust dscp", "   flowcontrol receive off", "   flowcontrol send off",
			"   priority-flow-control on",
			"   priority-flow-control priority 0 drop", "   priority-flow-control priority 1 drop", "   priority-flow-control priority 2 drop",
			"   priority-flow-control priority 3 no-drop", "   priority-flow-control priority 4 no-drop",
			"   priority-flow-control priority 5 drop", "   priority-flow-control priority 6 drop", "   priority-flow-control priority 7 drop",
			"   priority-flow-control pause watchdog",
		}
		for q := 0; q < 8; q++ {
			l = append(l, "   tx-queue "+strconv.Itoa(q))
			if q == 3 {
				l = append(l, "      random-detect ecn minimum-threshold 150000 bytes maximum-threshold 1501500 bytes max-mark-probability 100")
			} else {
				l = append(l, "      no random-detect ecn")
			}
		}
		return append(l, "!")
	}
	wantRest := append([]string{
		"priority-flow-control pause watchdog default timeout 0.2",
		"priority-flow-control pause watchdog default recovery-time 0.4",
		"priority-flow-control pause watchdog default polling-interval 0.05",
		"priority-flow-control pause watchdog action no-drop",
	}, append(port("Ethernet1", "9214"), port("Ethernet2", "9000")...)...)
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
	// Issue 27 item 3: a port that cannot carry the intent's MTU is
	// drift (a lack diff reports), not a note.
	if len(d.Lacks) != 1 || d.Lacks[0].Refuses || !strings.Contains(d.Lacks[0].What, "Ethernet1") ||
		!strings.Contains(d.Lacks[0].Reason, "below the intent's 9216") || !strings.Contains(d.Lacks[0].Fix, "mtu: 9214") {
		t.Errorf("Lacks = %+v, want one (not refusing) saying Ethernet1 cannot carry 9216", d.Lacks)
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

// TestNoGlobalAugmentsForPFC (issue 10 item 14): no-drop, ECN and the
// watchdog go per interface as CLI (above); the OpenConfig payload keeps only
// the queues' scheduling (arista-qos-augments scheduling and bandwidth), and
// no longer the global /qos/pfc/watchdog, the per-queue ECN augment or
// output/pfc priorities-no-drop.
func TestNoGlobalAugmentsForPFC(t *testing.T) {
	f := testFabric()
	d, err := Platform{}.Compile(f, &f.Switches[0])
	if err != nil {
		t.Fatal(err)
	}
	queues := 0
	for _, u := range d.Replaces {
		var names []string
		for _, e := range u.GetPath().GetElem() {
			names = append(names, e.GetName())
		}
		p := strings.Join(names, "/")
		js := string(u.GetVal().GetJsonIetfVal())
		switch {
		case p == "qos/queues/queue":
			queues++
			if strings.Contains(js, "ecn") {
				t.Errorf("queue %s carries the ECN augment: %s", u.GetPath().GetElem()[2].GetKey()["name"], js)
			}
		default:
			t.Errorf("OpenConfig replace of %s: the PFC and watchdog settings go per interface as CLI", p)
		}
	}
	if queues != len(f.Policy.Classes) {
		t.Errorf("%d queues, want one per class (%d)", queues, len(f.Policy.Classes))
	}
}

// TestWatchdogActions maps the intent's actions onto the EOS CLI (AVD
// priority_flow_control.watchdog.action: drop | no-drop globally;
// qos_profiles ... watchdog.action: drop | notify-only per port).
func TestWatchdogActions(t *testing.T) {
	for _, tc := range []struct {
		action intent.WatchdogAction
		want   string
	}{
		{intent.WatchdogDrop, "priority-flow-control pause watchdog action drop"},
		{intent.WatchdogForward, "priority-flow-control pause watchdog action no-drop"},
		{intent.WatchdogAlert, "   priority-flow-control pause watchdog port action notify-only"},
	} {
		f := testFabric()
		f.Policy.Watchdog.Action = tc.action
		d, err := Platform{}.Compile(f, &f.Switches[0])
		if err != nil {
			t.Fatal(err)
		}
		cli := d.Updates[len(d.Updates)-1].GetVal().GetAsciiVal()
		if !strings.Contains(cli, tc.want+"\n") {
			t.Errorf("action %s: CLI lacks %q:\n%s", tc.action, tc.want, cli)
		}
	}
}
