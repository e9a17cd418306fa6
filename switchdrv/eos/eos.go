// Package eos compiles the intent into gNMI SetRequests for Arista EOS:
// openconfig-qos with arista-qos-augments (JSON_IETF, no origin) where they
// cover the setting, and EOS CLI over gNMI (origin "cli", ascii_val) for the
// rest.
//
// Through OpenConfig + augments (replaced, fabricctl owns them):
//   - /qos/queues/queue[name=<prio>] per class: scheduling (STRICT or
//     ROUND_ROBIN with bandwidth %), and the ECN thresholds of ECN classes;
//   - /qos/pfc/watchdog (arista-qos-augments): action and timers;
//   - /qos/interfaces/interface[interface-id=<port>] per inventory port:
//     output/pfc priorities-no-drop.
//
// Through CLI (merged, one update): the DSCP -> traffic-class map
// (`qos map dscp ... to traffic-class N`, every DSCP, since EOS's default map
// sends DSCP 8-63 to TC 1-7), and per port `mtu`, `qos trust dscp`,
// `flowcontrol receive/send off` and `priority-flow-control on` (the
// augments set which priorities are no-drop but cannot turn PFC on).
// CLI lines cannot be read back as JSON; plan compares only the OpenConfig
// paths.
package eos

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv"
)

// OriginCLI is the gNMI origin EOS takes CLI commands on.
const OriginCLI = "cli"

const aug = "arista-qos-augments:"

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
		ECN *struct {
			Config ecnConfig `json:"config"`
		} `json:"arista-qos-augments:ecn,omitempty"`
	}
	ecnConfig struct {
		Min         int64  `json:"min-threshold"`
		Max         int64  `json:"max-threshold"`
		Unit        string `json:"threshold-unit"`
		MaxDropRate int    `json:"max-drop-rate"`
	}
	watchdog struct {
		Config struct {
			Action         string `json:"action"`
			Timeout        string `json:"default-timeout"`
			RecoveryTime   string `json:"default-recovery-time"`
			PollingInteval string `json:"default-polling-interval"`
		} `json:"config"`
	}
	qosInterface struct {
		ID     string `json:"interface-id"`
		Config struct {
			ID string `json:"interface-id"`
		} `json:"config"`
		Output struct {
			PFC struct {
				Config struct {
					NoDrop string `json:"priorities-no-drop"`
				} `json:"config"`
			} `json:"arista-qos-augments:pfc"`
		} `json:"output"`
	}
)

var watchdogAction = map[intent.WatchdogAction]string{
	intent.WatchdogDrop:    "DROP",
	intent.WatchdogForward: "IGNORE_PFC",
	intent.WatchdogAlert:   "NOTIFY_ONLY",
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

// seconds renders d in seconds with the given fraction digits (decimal64).
func seconds(d time.Duration, digits int) string {
	return strconv.FormatFloat(d.Seconds(), 'f', digits, 64)
}

func (c *compiler) compile() error {
	p := &c.f.Policy
	lossless := p.LosslessPriorities()
	if len(lossless) > 0 && p.GlobalPause {
		return fmt.Errorf("802.3x flow control and PFC are mutually exclusive")
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
		if e := cl.ECN; e != nil {
			if e.MaxBytes > 4294967294 {
				return fmt.Errorf("class %s: ecn max %d bytes above the model's 4294967294", cl.Name, e.MaxBytes)
			}
			q.ECN = &struct {
				Config ecnConfig `json:"config"`
			}{Config: ecnConfig{Min: e.MinBytes, Max: e.MaxBytes, Unit: "BYTES", MaxDropRate: e.Probability}}
		}
		if err := c.d.Replace(q, switchdrv.Elem("qos"), switchdrv.Elem("queues"), switchdrv.Elem("queue", "name", q.Name)); err != nil {
			return err
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
		// The augments carry the timers as decimal64 seconds with 2
		// (timeout, recovery) and 3 (polling) fraction digits: anything
		// finer would be rounded silently.
		case wd.Detect%(10*time.Millisecond) != 0 || wd.Restore%(10*time.Millisecond) != 0:
			return fmt.Errorf("pfc watchdog detect %v and restore %v: EOS takes them in steps of 10ms", wd.Detect, wd.Restore)
		case wd.Poll%time.Millisecond != 0:
			return fmt.Errorf("pfc watchdog poll %v: EOS takes it in steps of 1ms", wd.Poll)
		}
		var w watchdog
		act, ok := watchdogAction[wd.Action]
		if !ok {
			return fmt.Errorf("pfc watchdog action %q has no EOS equivalent", wd.Action)
		}
		w.Config.Action = act
		w.Config.Timeout = seconds(wd.Detect, 2)
		w.Config.RecoveryTime = seconds(wd.Restore, 2)
		w.Config.PollingInteval = seconds(wd.Poll, 3)
		if err := c.d.Replace(w, switchdrv.Elem("qos"), switchdrv.Elem(aug+"pfc"), switchdrv.Elem("watchdog")); err != nil {
			return err
		}
	}
	if len(lossless) > 0 {
		noDrop := fmt.Sprintf("%02x", p.PFCBitmap())
		for _, port := range c.sw.Ports {
			var qi qosInterface
			qi.ID, qi.Config.ID = port.Name, port.Name
			qi.Output.PFC.Config.NoDrop = noDrop
			if err := c.d.Replace(qi, switchdrv.Elem("qos"), switchdrv.Elem("interfaces"), switchdrv.Elem("interface", "interface-id", port.Name)); err != nil {
				return err
			}
		}
	}
	mtus := make([]int, len(c.sw.Ports))
	var lowered []string
	for i, port := range c.sw.Ports {
		mtu := c.f.PortMTU(port)
		switch {
		case mtu < mtuMin:
			return fmt.Errorf("port %s: mtu %d below EOS's minimum %d", port.Name, mtu, mtuMin)
		case mtu > mtuMax:
			lowered = append(lowered, port.Name)
			mtu = mtuMax
		}
		mtus[i] = mtu
	}
	if len(lowered) > 0 {
		c.d.Notes = append(c.d.Notes, fmt.Sprintf("EOS interface MTU is at most %d: ports %s get mtu %d (check that hosts send no larger frames)", mtuMax, strings.Join(lowered, ", "), mtuMax))
	}
	c.d.Updates = append(c.d.Updates, &gnmipb.Update{
		Path: &gnmipb.Path{Origin: OriginCLI},
		Val:  &gnmipb.TypedValue{Value: &gnmipb.TypedValue_AsciiVal{AsciiVal: c.cli(len(lossless) > 0, mtus)}},
	})
	return nil
}

// cli renders the settings the models lack as EOS configuration lines; mtus
// are the ports' MTUs, in port order.
func (c *compiler) cli(pfc bool, mtus []int) string {
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
	for i, port := range c.sw.Ports {
		fmt.Fprintf(&b, "interface %s\n", port.Name)
		fmt.Fprintf(&b, "   mtu %d\n", mtus[i])
		b.WriteString("   qos trust dscp\n")
		if !p.GlobalPause {
			b.WriteString("   flowcontrol receive off\n   flowcontrol send off\n")
		}
		if pfc {
			b.WriteString("   priority-flow-control on\n")
		}
		b.WriteString("!\n")
	}
	return b.String()
}
