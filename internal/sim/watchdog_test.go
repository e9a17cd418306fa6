package sim

import (
	"testing"
	"time"

	"github.com/fabricctl/fabricctl/intent"
)

// TestWatchdog: a receiver that never drains pauses its switch port for
// ever; the PFC watchdog fires on that queue after the detect time, and the
// action shows: drop empties the queue into watchdog drops, forward sends
// the frames on despite the pause (the NIC's buffer then overflows).
func TestWatchdog(t *testing.T) {
	for _, action := range []intent.WatchdogAction{intent.WatchdogDrop, intent.WatchdogForward} {
		f := parse(t, minimalIntent)
		f.Policy.Watchdog = intent.Watchdog{Enabled: true, Detect: 200 * time.Microsecond, Restore: 400 * time.Microsecond, Poll: 50 * time.Microsecond, Action: action}
		r := run(t, f, "slow-receiver:0", StarOptions{}, Options{Duration: 600 * time.Microsecond})
		q := r.Port("sim-leaf:p5", 3)
		if q == nil {
			t.Fatalf("%s: no row for the receiver's switch port", action)
		}
		t.Logf("%s: %s; triggers %d at %v, watchdog drops %d, tx %d", action, r.Verdict(), q.WatchdogTriggers, dur(q.WatchdogAt), q.WatchdogDrops, q.TxFrames)
		if q.WatchdogTriggers == 0 {
			t.Fatalf("%s: the watchdog never fired", action)
		}
		if q.WatchdogAt < 200*Microsecond || q.WatchdogAt > 200*Microsecond+2*50*Microsecond+r.Duration/Time(DefaultSamples) {
			t.Errorf("%s: fired at %v, want after the 200us detect time, within two polls", action, dur(q.WatchdogAt))
		}
		host := r.Port("h5:eth0", 3)
		switch action {
		case intent.WatchdogDrop:
			if q.WatchdogDrops == 0 {
				t.Errorf("drop: no watchdog drops")
			}
		case intent.WatchdogForward:
			if q.WatchdogDrops != 0 || host == nil || host.Drops == 0 {
				t.Errorf("forward: watchdog drops %d (want 0), receiver NIC drops %v (want > 0)", q.WatchdogDrops, host)
			}
		}
	}
	// the default detect time (200 ms) is far beyond this run: no trigger
	r := run(t, parse(t, minimalIntent), "slow-receiver:0", StarOptions{}, Options{Duration: 600 * time.Microsecond})
	if n := r.Totals(true).WatchdogTriggers; n != 0 {
		t.Errorf("default watchdog fired %d times within 600us", n)
	}
}

// TestWatchdogAsThePlatformTakesIt: the simulator runs the watchdog's
// action as the switch's platform performs it (portfacts): SR Linux's
// deadlock recovery keeps transmitting whatever the intent asks, so an
// intent's drop drops nothing there (the NIC's buffer takes the frames),
// while SONiC drops.
func TestWatchdogAsThePlatformTakesIt(t *testing.T) {
	const srl = `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: t}
policy:
  preset: roce-lossless
inventory:
  switches:
    - name: leaf1
      platform: srlinux
      address: "192.0.2.1:57400"
      ports:
        - {name: ethernet-1/1, speed: 100G, cable: 3m}
`
	for _, tc := range []struct {
		name         string
		src          string
		watchdogDrop bool
	}{{"sonic", minimalIntent, true}, {"srlinux", srl, false}} {
		f := parse(t, tc.src)
		f.Policy.Watchdog = intent.Watchdog{Enabled: true, Detect: 200 * time.Microsecond, Restore: 400 * time.Microsecond, Poll: 50 * time.Microsecond, Action: intent.WatchdogDrop}
		r := run(t, f, "slow-receiver:0", StarOptions{}, Options{Duration: 600 * time.Microsecond})
		q := r.Port("sim-leaf:p5", 3)
		if q == nil || q.WatchdogTriggers == 0 {
			t.Fatalf("%s: the watchdog never fired (%+v)", tc.name, q)
		}
		if (q.WatchdogDrops > 0) != tc.watchdogDrop {
			t.Errorf("%s, action drop: %d watchdog drops, want drops: %v", tc.name, q.WatchdogDrops, tc.watchdogDrop)
		}
	}
}
