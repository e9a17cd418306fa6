// The RoCE mode rules (policy.mode): a class's own fields that contradict
// the mode, the platforms that cannot express it, ECN and buffers in lossy
// mode, pause spreading in pfc-only mode, the PFC watchdog SONiC does not
// run in semi-lossless mode (FC160-FC166). The other rules
// follow the mode through what the parser resolved (no lossless class in
// lossy mode, no ECN in pfc-only) and through c.switchPause (switches send
// no pause in semi-lossless mode: no headroom, XOFF or deadlock rules).

package check

import (
	"fmt"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/portfacts"
)

// switchPause reports whether switches send PFC pause on the lossless
// classes in the policy's mode: the headroom (FC112), ECN-before-PFC
// (FC111) and deadlock (FC123) rules apply only then.
func (c *checker) switchPause() bool { return c.f.Policy.Mode.SwitchSendsPause() }

// tosClass is the class the hosts' RoCE ToS DSCP lands in (nil without
// classes).
func (c *checker) tosClass() *intent.Class {
	p := &c.f.Policy
	d := p.RoCE.ToS >> 2
	if d < 0 || d > 63 {
		return nil
	}
	return p.ClassByPriority(p.DSCPToPriority()[d])
}

// FC160
func (c *checker) modeLossless() {
	p := &c.f.Policy
	at := p.Fields.At("mode", p.Pos)
	switch p.Mode {
	case intent.ModeLossy:
		for _, cl := range c.lossless {
			c.report(Error, pos(cl.Pos, p.Pos), classPath(cl)+".lossless",
				fmt.Sprintf("set lossless: false on class %s (lossy mode has no PFC anywhere), or choose a mode with PFC", cl.Name),
				"class %s is lossless (PFC on priority %d) but policy.mode is lossy (at %s): no PFC anywhere, the NICs retransmit what is dropped",
				cl.Name, cl.Priority, at).with(set(classPath(cl)+".lossless", false))
		}
	case intent.ModeSemiLossless, intent.ModePFCOnly:
		if len(c.lossless) > 0 {
			return
		}
		cl := c.tosClass()
		if cl == nil || cl.CNP {
			c.report(Error, at, "policy.mode",
				"make the class the hosts' RoCE traffic is in lossless (lossless: true), or use mode lossy",
				"policy.mode is %s, which needs PFC on the RoCE class, but no class is lossless", p.Mode)
			return
		}
		c.report(Error, pos(cl.Pos, p.Pos), classPath(cl)+".lossless",
			fmt.Sprintf("set lossless: true on class %s (the hosts' RoCE class), or use mode lossy", cl.Name),
			"policy.mode is %s, which needs PFC on the RoCE class, but class %s (the hosts' ToS DSCP %d) is not lossless and no other class is",
			p.Mode, cl.Name, p.RoCE.ToS>>2).with(set(classPath(cl)+".lossless", true))
	}
}

// FC161
func (c *checker) modeECN() {
	p := &c.f.Policy
	if p.Mode != intent.ModePFCOnly {
		return
	}
	for i := range p.Classes {
		cl := &p.Classes[i]
		if cl.ECN == nil {
			continue
		}
		c.report(Error, c.ecnPos(cl), classPath(cl)+".ecn",
			fmt.Sprintf("set ecn: {enabled: false} on class %s (pfc-only marks no ECN), or use mode lossless", cl.Name),
			"class %s marks ECN but policy.mode is pfc-only (at %s): no ECN marking on switches and no DCQCN on hosts",
			cl.Name, p.Fields.At("mode", p.Pos)).with(set(classPath(cl)+".ecn.enabled", false))
	}
}

// FC162
func (c *checker) modePlatform() {
	p := &c.f.Policy
	if p.Mode != intent.ModeSemiLossless {
		return
	}
	for i := range c.f.Switches {
		sw := &c.f.Switches[i]
		pi, ok := c.platform(sw)
		if !ok || !pi.PFC || pi.SemiLossless != "" {
			continue // FC106 reports unknown platforms and those without PFC
		}
		c.report(Error, sw.Pos, switchPath(sw)+".platform",
			"use mode lossless on this fabric, or a platform that can honour pause without sending it (srlinux, sonic)",
			"switch %s: platform %s cannot express semi-lossless (honour received pause, never send it): its model turns sending and honouring PFC on together per priority (EOS priority-flow-control priority N no-drop; arista-qos-augments priorities-no-drop)",
			sw.Name, sw.Platform)
	}
}

// FC163
func (c *checker) lossyECN() {
	p := &c.f.Policy
	if p.Mode != intent.ModeLossy {
		return
	}
	cl := c.tosClass()
	if cl == nil || cl.CNP || cl.ECN != nil {
		return
	}
	kmin, kmax := c.lossyECNSuggestion()
	x := c.report(Error, pos(cl.Pos, p.Pos), classPath(cl)+".ecn",
		fmt.Sprintf("add ecn: {min: %s, max: %s, probability: 100%%} to class %s (the NVIDIA RoCE defaults, max at most the smallest switch buffer)", sizeText(kmin), sizeText(kmax), cl.Name),
		"policy.mode is lossy but class %s, the hosts' RoCE class (ToS DSCP %d), has no ECN marking: without PFC, ECN and DCQCN are the only congestion control, and a full queue drops",
		cl.Name, p.RoCE.ToS>>2)
	x.with(setSize(classPath(cl)+".ecn.min", kmin), setSize(classPath(cl)+".ecn.max", kmax), set(classPath(cl)+".ecn.probability", "100%"))
	c.noECNRoom(x, kmin, kmax)
}

// lossyECNSuggestion is the NVIDIA RoCE thresholds with Kmax at most the
// smallest switch buffer (a lossy queue has no headroom to keep apart).
func (c *checker) lossyECNSuggestion() (kmin, kmax int64) {
	kmin, kmax = defaultKmin, defaultKmax
	for i := range c.f.Switches {
		if b := c.f.Switches[i].BufferBytes; b > 0 && b < kmax {
			kmax = b
		}
	}
	kmax = kmax / 1000 * 1000
	mtu := (int64(c.f.Policy.MTU) + 999) / 1000 * 1000
	if kmin*2 > kmax {
		kmin = kmax / 10 / 1000 * 1000
	}
	return max(kmin, mtu), kmax
}

// FC164. The model (printed in the message): an incast of N senders at
// line rate into one port fills its queue to Kmin before the first mark,
// then for one DCQCN reaction time (portfacts.DCQCNReaction: the round
// trip over the port's cable plus the NIC's CNP and rate-reduce periods)
// at N-1 times the line rate before the senders slow down.
func (c *checker) lossyIncast() {
	p := &c.f.Policy
	if p.Mode != intent.ModeLossy {
		return
	}
	cl := c.tosClass()
	if cl == nil || cl.ECN == nil || !c.ecnValid(cl.ECN) {
		return // FC163, FC110
	}
	n := portfacts.IncastSenders(c.f)
	if n < 2 {
		return
	}
	var (
		bad    []string
		worst  portfacts.Incast
		worstS *intent.Switch
		worstP *intent.Port
		kmin   int64 = -1 // the largest Kmin every port can take
	)
	for i := range c.f.Switches {
		sw := &c.f.Switches[i]
		if sw.BufferBytes <= 0 {
			continue
		}
		over := false
		for j := range sw.Ports {
			pt := &sw.Ports[j]
			in := portfacts.IncastAt(&c.f.Policy, *pt, n, cl.ECN.MinBytes)
			if in.Need <= sw.BufferBytes {
				continue
			}
			over = true
			if k := sw.BufferBytes - in.Burst; kmin < 0 || k < kmin {
				kmin = k
			}
			if worstS == nil || in.Need-sw.BufferBytes > worst.Need-worstS.BufferBytes {
				worst, worstS, worstP = in, sw, pt
			}
		}
		if over {
			bad = append(bad, sw.Name)
		}
	}
	if len(bad) == 0 {
		return
	}
	kmin = kmin / 1000 * 1000
	cnpGap, rateCut := portfacts.DCQCNTimers(p)
	mtu := (int64(p.MTU) + 999) / 1000 * 1000
	fix := fmt.Sprintf("lower ECN min of class %s to %s so marking starts while the buffer can still absorb the burst", cl.Name, sizeText(kmin))
	var edits []Edit
	if kmin >= mtu && kmin < cl.ECN.MaxBytes {
		edits = []Edit{setSize(classPath(cl)+".ecn.min", kmin)}
	} else {
		fix = fmt.Sprintf("raise buffer if the ASIC has more, use shorter cables or fewer senders per port: even ECN min at one MTU (%s) leaves no room for the %s burst", bytesStr(mtu), bytesStr(worst.Burst))
	}
	c.report(Warning, c.ecnPos(cl), classPath(cl)+".ecn.min", fix,
		"lossy mode: an incast of %d senders into %s %s (%s) queues ECN min %s plus %s (%d x line rate for the %v DCQCN needs to react: the cable's round trip, the hosts' %v CNP interval and %v rate-reduce period) = %s, above its buffer of %s: the excess is dropped and retransmitted; %d %s affected: %s",
		n, worstS.Name, worstP.Name, intent.FormatRate(worstP.Speed), bytesStr(cl.ECN.MinBytes), bytesStr(worst.Burst), n-1, worst.Reaction, cnpGap, rateCut,
		bytesStr(worst.Need), bytesStr(worstS.BufferBytes), len(bad), plural(len(bad), "switch", "switches"), names(bad, 5)).with(edits...)
}

// FC165
func (c *checker) pfcOnlySpreading() {
	p := &c.f.Policy
	if p.Mode != intent.ModePFCOnly || len(c.lossless) == 0 {
		return
	}
	c.report(Warning, p.Fields.At("mode", p.Pos), "policy.mode",
		"keep pfc-only only where the workload admits its own traffic (a collective library's receiver-driven clear-to-send, as Meta's); otherwise use mode lossless, where ECN and DCQCN slow senders before pause builds",
		"pfc-only: with no ECN marking, congestion on priority %s is relieved by PFC pause alone, which spreads upstream hop by hop (congestion spreading: flows sharing a paused link stall behind the congested one, and pause storms reach the spines); the PFC watchdog is required (FC114)",
		c.losslessPrios())
}

// FC166: on SONiC, semi-lossless runs no PFC watchdog (the compiler deletes
// PFC_WD|<port> and leaves pfcwd_sw_enable out; the README's RoCE modes
// section and TestSONiCSemiLosslessRunsNoPFCWatchdog say why, from
// sonic-swss qosorch/pfcwdorch/pfcactionhandler and sonic-utilities pfcwd).
// In semi-lossless only the hosts send pause, so the watchdog the intent
// turns on matters where hosts attach: a SONiC switch with a host link, or
// every SONiC switch when the intent lists no links. What breaks a host's
// pause storm up then is the host's own NIC: mlx5 (Linux
// drivers/net/ethernet/mellanox/mlx5/core/en_ethtool.c,
// mlx5e_set_pfc_prevention_tout) takes the ethtool tunable
// ETHTOOL_PFC_PREVENTION_TOUT ("pfc-prevention-tout", net/ethtool/common.c)
// in ms, 80-8000, PFC_STORM_PREVENTION_AUTO as 100 ms and 0 as off, on
// devices with the pfcc_mask and stall_detect capabilities, as the port's
// stall watermarks; en_stats.c counts the critical watermark as
// tx_pause_storm_error_events (the minor as tx_pause_storm_warning_events),
// which validate's verdict and watch read. policy.hostPauseStormPrevention
// sets it on the hosts (host apply, hostdrv), so a prevention on there
// answers the finding; its fix sets it first (auto, mlx5's 100 ms), the
// mode stays the alternative.
func (c *checker) semiLosslessWatchdog() {
	p := &c.f.Policy
	if !p.Watchdog.Enabled {
		return
	}
	if sp := p.HostPauseStormPrevention; sp != nil && sp.On() {
		return // the hosts break their own pause storms up
	}
	sws, ports := c.sonicSemiLosslessHostSwitches()
	if len(sws) == 0 {
		return
	}
	facing := fmt.Sprintf("%d %s facing hosts", ports, plural(ports, "port", "ports"))
	if len(c.f.Links) == 0 {
		facing = "the intent lists no links, so any port may face a host"
	}
	hosts := "fabricctl does not set it (policy.hostPauseStormPrevention absent) and check cannot see the NICs"
	if sp := p.HostPauseStormPrevention; sp != nil {
		hosts = "policy.hostPauseStormPrevention is off, so host apply turns it off"
	}
	c.report(Warning, pos(p.Watchdog.Pos, p.Fields.At("mode", p.Pos)), "policy.watchdog.enabled",
		"set policy.hostPauseStormPrevention: auto (host apply writes pfc-prevention-tout; mlx5 stops a stuck NIC's pause after 100 ms; a NIC without the capability fails host plan, it is not left half done); or use policy.mode lossless if the switches must break up a host's pause storm (SONiC runs the watchdog there; the switches then send pause and reserve headroom: FC111, FC112)",
		"policy.watchdog is on, but SONiC runs no PFC watchdog in semi-lossless mode (pfc_asym) on %s %s (%s): orchagent watches only the priorities pfcwd_sw_enable lists, which a semi-lossless port has not, and no watchdog action stops a port honouring pause under pfc_asym. "+
			"A host NIC stuck sending pause on priority %s (a pause storm: a hung driver, a stuck PCIe link) stops its switch port's egress queue for as long as it lasts, and what is sent toward the host fills the shared buffer and drops: no switch breaks the storm up. "+
			"The host's own pause storm prevention does: mlx5 stops sending pause after a stall timeout (ethtool --set-tunable IFACE pfc-prevention-tout MS, 80-8000 ms, auto = 100 ms, on ConnectX with the stall_detect capability) and counts it in tx_pause_storm_error_events, which validate and watch read; %s",
		plural(len(sws), "switch", "switches"), names(sws, 5), facing, c.losslessPrios(), hosts).
		with(set("policy.hostPauseStormPrevention", intent.PauseStormAuto))
}

// sonicSemiLosslessHostSwitches are the SONiC switches on which a host's
// pause storm meets no PFC watchdog in the policy's mode (FC166): in
// semi-lossless mode with a lossless class, those with a host link (and
// how many of their ports face hosts), or every SONiC switch when the
// intent lists no links.
func (c *checker) sonicSemiLosslessHostSwitches() (sws []string, ports int) {
	if c.f.Policy.Mode != intent.ModeSemiLossless || len(c.lossless) == 0 {
		return nil, 0
	}
	hostPorts := map[*intent.Switch]int{}
	for i := range c.ends {
		for j, e := range c.ends[i] {
			if o := c.ends[i][1-j]; e.port != nil && e.sw.Platform == intent.PlatformSONiC && o.nic != nil {
				hostPorts[e.sw]++
			}
		}
	}
	for i := range c.f.Switches {
		sw := &c.f.Switches[i]
		if sw.Platform != intent.PlatformSONiC {
			continue
		}
		if n := hostPorts[sw]; n > 0 || len(c.f.Links) == 0 {
			sws = append(sws, sw.Name)
			ports += n
		}
	}
	return sws, ports
}
