// Package eos compiles the intent into gNMI SetRequests for Arista EOS:
// openconfig-qos with arista-qos-augments (JSON_IETF, no origin) for the
// queues' scheduling, and EOS CLI over gNMI (origin "cli", ascii_val) for
// the rest, in the form Arista's own generator writes it (aristanetworks/avd
// eos_cli_config_gen templates).
//
// Through OpenConfig + augments (replaced, fabricctl owns them):
//   - /qos/queues/queue[name=<prio>] per class: scheduling (STRICT or
//     ROUND_ROBIN with bandwidth %).
//
// Through CLI (merged, one update): the DSCP -> traffic-class map
// (`qos map dscp ... to traffic-class N`, every DSCP, since EOS's default map
// sends DSCP 8-63 to TC 1-7); the PFC pause watchdog's timers and action
// (`priority-flow-control pause watchdog default timeout|recovery-time|
// polling-interval`, `... action drop|no-drop`, AVD priority-flow-control.j2);
// and per port `mtu` (the IP MTU), `qos trust dscp`, `flowcontrol
// receive/send off`, `priority-flow-control on` (or `no
// priority-flow-control`), `priority-flow-control priority N no-drop` for
// each lossless priority and `... drop` for every other one of 0-7,
// `priority-flow-control pause watchdog` (AVD ethernet-interfaces.j2,
// qos-profiles.j2) and, on every tx-queue 0-7, `tx-queue N` / `random-detect
// ecn minimum-threshold X bytes maximum-threshold Y bytes
// max-mark-probability P` for an ECN class's, `no random-detect ecn` for
// the others (AVD ethernet-interface-tx-queues.j2): the CLI merges, so each
// setting is written, whatever an earlier intent left. OpenConfig queues no
// class uses are deleted. The global OpenConfig augments for PFC
// (/qos/pfc/watchdog, output/pfc priorities-no-drop, the per-queue ecn
// augment) are not used: AVD configures none of them, and EOS applies PFC and
// ECN per interface. CLI settings are read back with `show running-config
// all` over origin cli.
package eos

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/switchdrv"
)

// OriginCLI is the gNMI origin EOS takes CLI commands on.
const OriginCLI = "cli"

// quirks are read from the EOS profile (internal/profile/data/profiles/eos.json).
var quirks = switchdrv.DefaultQuirks(intent.PlatformEOS)

const (
	pollMinMS = 5
	pollMaxMS = 30000
	// Ethernet interface "mtu" takes 68..9214 on EOS hardware (cEOS/vEOS
	// stop at 9194); "mtu 9216" is refused and takes the whole CLI update
	// with it.
	mtuMin = 68
	mtuMax = 9214
)

// Platform is the Arista EOS platform.
type Platform struct{}

// Register adds the EOS platform to r.
func Register(r *switchdrv.Registry) error { return r.Register(Platform{}) }

// Name implements switchdrv.Platform.
func (Platform) Name() intent.Platform { return intent.PlatformEOS }

// Quirks implements switchdrv.Platform.
func (Platform) Quirks() switchdrv.Quirks { return quirks }

type (
	queue struct {
		Name   string `json:"name"`
		Config struct {
			Name string `json:"name"`
			// EOS ignores queue-id: the queue name is the tx-queue number.
			Scheduling string `json:"arista-qos-augments:scheduling"`
			Bandwidth  *int   `json:"arista-qos-augments:bandwidth,omitempty"`
		} `json:"config"`
	}
)

// ECNMaxBytes bounds random-detect ecn thresholds (AVD
// ethernet_interfaces tx_queues random_detect ecn threshold min/max:
// 1..256000000).
const ECNMaxBytes = 256_000_000

// cliSeconds renders d in seconds as the EOS CLI takes it (AVD
// priority_flow_control.watchdog: "0.01" or "60", up to 2 fraction digits
// for timeout and recovery-time, 3 for polling-interval).
func cliSeconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// Compile implements switchdrv.Platform.
func (Platform) Compile(f *intent.Fabric, sw *intent.Switch) (*switchdrv.Desired, error) {
	return switchdrv.Compile(intent.PlatformEOS, f, sw, func(d *switchdrv.Desired) error {
		return (&compiler{f: f, sw: sw, d: d}).compile()
	})
}

type compiler struct {
	f  *intent.Fabric
	sw *intent.Switch
	d  *switchdrv.Desired
}

func (c *compiler) compile() error {
	p := &c.f.Policy
	lossless := p.LosslessPriorities()
	if len(lossless) > 0 && p.GlobalPause {
		return fmt.Errorf("802.3x flow control and PFC are mutually exclusive")
	}
	if p.Mode == intent.ModeSemiLossless {
		// EOS's per-priority PFC is one switch: `priority-flow-control
		// priority N no-drop` makes the port send pause and honour it
		// (aristanetworks/avd eos_cli_config_gen), and arista-qos-augments
		// has only priorities-no-drop (a bitmap, no direction); no
		// receive-only PFC is documented (profile eos semiLossless).
		return switchdrv.ModeUnsupported(p.Mode, "EOS cannot honour received pause without sending it: priority-flow-control priority N no-drop (and OpenConfig priorities-no-drop) turns both on, and no receive-only PFC is documented; use mode lossless on EOS switches")
	}
	for _, cl := range p.Classes {
		var q queue
		q.Name = strconv.Itoa(cl.Priority)
		q.Config.Name = q.Name
		if cl.Strict {
			q.Config.Scheduling = "STRICT"
		} else {
			if cl.Weight < 0 || cl.Weight > 100 {
				return fmt.Errorf("class %s: bandwidth %d%% outside 0..100", cl.Name, cl.Weight)
			}
			w := cl.Weight
			q.Config.Scheduling, q.Config.Bandwidth = "ROUND_ROBIN", &w
		}
		if e := cl.ECN; e != nil && (e.MinBytes < 1 || e.MaxBytes > ECNMaxBytes) {
			return fmt.Errorf("class %s: ecn thresholds %d..%d bytes outside EOS's 1..%d", cl.Name, e.MinBytes, e.MaxBytes, ECNMaxBytes)
		}
		if err := c.d.Replace(q, switchdrv.Elem("qos"), switchdrv.Elem("queues"), switchdrv.Elem("queue", "name", q.Name)); err != nil {
			return err
		}
	}
	// A queue no class uses any more (a class moved to another priority:
	// CNP from 6 to 5) keeps the scheduling an earlier apply replaced
	// into it unless its entry goes: deleted (gNMI Delete of a path the
	// switch lacks is no error, gNMI specification 3.4.6), EOS puts the
	// queue back to its default scheduling.
	for q := 0; q < 8; q++ {
		if !slices.ContainsFunc(p.Classes, func(cl intent.Class) bool { return cl.Priority == q }) {
			c.d.Deletes = append(c.d.Deletes, &gnmipb.Path{Elem: []*gnmipb.PathElem{switchdrv.Elem("qos"), switchdrv.Elem("queues"), switchdrv.Elem("queue", "name", strconv.Itoa(q))}})
		}
	}
	if wd := p.Watchdog; len(lossless) > 0 && wd.Enabled {
		det, rec, poll := int(wd.Detect.Milliseconds()), int(wd.Restore.Milliseconds()), int(wd.Poll.Milliseconds())
		switch {
		case det < quirks.WatchdogMin || det > quirks.WatchdogMax:
			return fmt.Errorf("pfc watchdog detect %dms outside EOS's %d..%d ms", det, quirks.WatchdogMin, quirks.WatchdogMax)
		case rec < quirks.WatchdogMin || rec > quirks.WatchdogMax:
			return fmt.Errorf("pfc watchdog restore %dms outside EOS's %d..%d ms", rec, quirks.WatchdogMin, quirks.WatchdogMax)
		case poll < pollMinMS || poll > pollMaxMS:
			return fmt.Errorf("pfc watchdog poll %dms outside EOS's %d..%d ms", poll, pollMinMS, pollMaxMS)
		case 2*poll > min(det, rec):
			return fmt.Errorf("pfc watchdog poll %dms is more than half of min(detect %dms, restore %dms), which EOS rejects", poll, det, rec)
		// The CLI takes the timers in seconds with 2 (timeout, recovery)
		// and 3 (polling) fraction digits: anything finer would be
		// refused or rounded.
		case wd.Detect%(10*time.Millisecond) != 0 || wd.Restore%(10*time.Millisecond) != 0:
			return fmt.Errorf("pfc watchdog detect %v and restore %v: EOS takes them in steps of 10ms", wd.Detect, wd.Restore)
		case wd.Poll%time.Millisecond != 0:
			return fmt.Errorf("pfc watchdog poll %v: EOS takes it in steps of 1ms", wd.Poll)
		}
		switch wd.Action {
		case intent.WatchdogDrop, intent.WatchdogForward, intent.WatchdogAlert:
		default:
			return fmt.Errorf("pfc watchdog action %q has no EOS equivalent", wd.Action)
		}
	}
	mtus := make([]int, len(c.sw.Ports))
	lowered := map[int][]string{} // the intent's MTU -> ports
	var over []int
	for i, port := range c.sw.Ports {
		mtu := c.f.PortMTU(port)
		switch {
		case mtu < mtuMin:
			return fmt.Errorf("port %s: mtu %d below EOS's minimum %d", port.Name, mtu, mtuMin)
		case mtu > mtuMax:
			if lowered[mtu] == nil {
				over = append(over, mtu)
			}
			lowered[mtu] = append(lowered[mtu], port.Name)
			mtu = mtuMax
		}
		mtus[i] = mtu
	}
	// A port that cannot carry the intent's MTU is drift, not a note
	// (check reports it too, FC125): apply writes the most EOS takes.
	for _, m := range over {
		c.d.Lacks = append(c.d.Lacks, plan.Lack{What: "ports " + strings.Join(lowered[m], ", ") + " mtu",
			Reason: fmt.Sprintf("EOS interface mtu (the IP MTU) is at most %d, below the intent's %d: apply writes %d, and larger packets are dropped", mtuMax, m, mtuMax),
			Fix:    fmt.Sprintf("set mtu: %d on these ports and their link peers in the intent (FC125, FC117)", mtuMax)})
	}
	c.d.Updates = append(c.d.Updates, &gnmipb.Update{
		Path: &gnmipb.Path{Origin: OriginCLI},
		Val:  &gnmipb.TypedValue{Value: &gnmipb.TypedValue_AsciiVal{AsciiVal: c.cli(lossless, mtus)}},
	})
	return nil
}

// cli renders the settings the models lack as EOS configuration lines, in
// the order and form of Arista AVD's eos_cli_config_gen templates; mtus are
// the ports' MTUs, in port order.
func (c *compiler) cli(lossless []int, mtus []int) string {
	p := &c.f.Policy
	var b strings.Builder
	byTC := map[int][]string{}
	for d, prio := range p.DSCPToPriority() {
		byTC[prio] = append(byTC[prio], strconv.Itoa(d))
	}
	// EOS configurations list at most 8 DSCP values per `qos map dscp`
	// command (as EOS itself writes its default map); longer lists go on
	// several lines, which every EOS accepts.
	const dscpPerLine = 8
	for tc := 0; tc < 8; tc++ {
		ds := byTC[tc]
		for len(ds) > 0 {
			n := min(len(ds), dscpPerLine)
			fmt.Fprintf(&b, "qos map dscp %s to traffic-class %d\n", strings.Join(ds[:n], " "), tc)
			ds = ds[n:]
		}
	}
	wd := p.Watchdog
	watchdog := len(lossless) > 0 && wd.Enabled
	if watchdog {
		// AVD priority-flow-control.j2: the global defaults and action
		// (drop | no-drop: stop honouring pause, SONiC's "forward").
		fmt.Fprintf(&b, "priority-flow-control pause watchdog default timeout %s\n", cliSeconds(wd.Detect))
		fmt.Fprintf(&b, "priority-flow-control pause watchdog default recovery-time %s\n", cliSeconds(wd.Restore))
		fmt.Fprintf(&b, "priority-flow-control pause watchdog default polling-interval %s\n", cliSeconds(wd.Poll))
		switch wd.Action {
		case intent.WatchdogDrop:
			b.WriteString("priority-flow-control pause watchdog action drop\n")
		case intent.WatchdogForward:
			b.WriteString("priority-flow-control pause watchdog action no-drop\n")
		}
	}
	ecnOf := map[int]*intent.ECN{}
	for _, cl := range p.Classes {
		if cl.ECN != nil {
			ecnOf[cl.Priority] = cl.ECN
		}
	}
	for i, port := range c.sw.Ports {
		fmt.Fprintf(&b, "interface %s\n", port.Name)
		fmt.Fprintf(&b, "   mtu %d\n", mtus[i])
		b.WriteString("   qos trust dscp\n")
		if !p.GlobalPause {
			b.WriteString("   flowcontrol receive off\n   flowcontrol send off\n")
		}
		// The CLI update merges into the running configuration: a line
		// an earlier apply wrote stays unless this one takes it away, in
		// another policy.mode or with a lossless class on another
		// priority (RoCE moved from 3 to 4 kept "priority-flow-control
		// priority 3 no-drop"). So every priority 0-7 gets its setting
		// written, no-drop for a lossless one and drop for the others,
		// and a port without a lossless priority (lossy) gets PFC off:
		// the forms of AVD ethernet-interfaces.j2 ("no
		// priority-flow-control" for priority_flow_control.enabled false,
		// "priority-flow-control priority N drop" for priorities[].no_drop
		// false).
		if len(lossless) > 0 {
			b.WriteString("   priority-flow-control on\n")
		} else {
			b.WriteString("   no priority-flow-control\n")
		}
		for prio := 0; prio < 8; prio++ {
			if slices.Contains(lossless, prio) {
				fmt.Fprintf(&b, "   priority-flow-control priority %d no-drop\n", prio)
			} else {
				fmt.Fprintf(&b, "   priority-flow-control priority %d drop\n", prio)
			}
		}
		if watchdog {
			// AVD qos-profiles.j2: the watchdog is enabled per port; the
			// alert-only action exists only per port.
			b.WriteString("   priority-flow-control pause watchdog\n")
			if wd.Action == intent.WatchdogAlert {
				b.WriteString("   priority-flow-control pause watchdog port action notify-only\n")
			}
		} else {
			// The "no" forms of the lines above (EOS resets a setting
			// with "no" and its keywords; AVD writes no "off" form).
			b.WriteString("   no priority-flow-control pause watchdog\n")
			b.WriteString("   no priority-flow-control pause watchdog port action\n")
		}
		// Every tx-queue 0-7 gets its ECN setting: the thresholds of the
		// ECN class on it, else "no random-detect ecn", which resets the
		// queue's marking whatever its thresholds (AVD
		// ethernet-interface-tx-queues.j2 writes the setting): an
		// earlier apply's marking stays otherwise, on a queue whose
		// class moved away, turned ECN off, or lost it to pfc-only.
		for q := 0; q < 8; q++ {
			fmt.Fprintf(&b, "   tx-queue %d\n", q)
			if e := ecnOf[q]; e != nil {
				fmt.Fprintf(&b, "      random-detect ecn minimum-threshold %d bytes maximum-threshold %d bytes max-mark-probability %d\n",
					e.MinBytes, e.MaxBytes, e.Probability)
			} else {
				b.WriteString("      no random-detect ecn\n")
			}
		}
		b.WriteString("!\n")
	}
	return b.String()
}
