package check

import (
	"time"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/portfacts"
	"github.com/fabricctl/fabricctl/internal/profile"
)

// PlatformInfo is what the rules need to know about a switch platform. It is
// read from the switch's release profile (internal/profile), the same data
// switchdrv.Quirks, the compilers and the twins read.
type PlatformInfo struct {
	// PFC is false where the platform's configuration model cannot express PFC.
	PFC bool
	// SemiLossless is how the platform makes a port honour received
	// pause without sending any (profile semiLossless); "" where it
	// cannot, and policy.mode semi-lossless is refused (FC162).
	SemiLossless string
	// MaxLosslessPriorities per port by default (a switch can override it).
	MaxLosslessPriorities int
	// Detect, Restore and Poll bound the PFC watchdog timers the platform
	// accepts. A zero Range means the timer is not configurable there (or no
	// published bound is known) and is not checked.
	Detect, Restore, Poll Range
	// PollHalf: the poll interval may be at most half the smaller of detect
	// and restore (EOS refuses a longer one).
	PollHalf bool
	// MinWeight is the smallest ETS/DWRR weight the platform's scheduler
	// takes (SR Linux and SONiC refuse 0; 0 = any).
	MinWeight int
	// BufferCellBytes is the buffer cell the headroom is rounded up to (0 = exact).
	BufferCellBytes int64
	// DCBXAdvertise is true where fabricctl configures the switch to
	// advertise IEEE DCBX (PFC, ETS and APP TLVs) for willing hosts to follow.
	// No platform driver compiles LLDP/DCBX settings yet, so it is false for
	// all four built-in platforms.
	DCBXAdvertise bool
	// MTU bounds the port IP MTU the platform accepts (the intent's MTUs are
	// IP MTUs), converted from its interface model's own meaning (a zero
	// MTURange is not checked).
	MTU MTURange
	// XOFF, when set, is the ingress queue depth at which the platform sends
	// PFC pause for a lossless class as fabricctl programs it (mtu: the
	// policy's IP MTU). nil means the shared-buffer model: pause when the
	// priority group holds the switch's buffer minus the headroom.
	XOFF func(cl *intent.Class, mtu int) int64
	// ConfigUpdaterLimits: the platform's write path refuses to create
	// WRED profiles and leaves only AZURE_LOSSLESS's green thresholds to
	// change (SONiC 202405/202411's config updater, profile write.gcu).
	ConfigUpdaterLimits bool
	// MTUMeaning is what the platform's own interface mtu counts:
	// profile.MTUL2NoFCS (SR Linux: the Ethernet header included, FCS not)
	// or profile.MTUIP (SONiC, EOS). MTU above is already in IP MTUs.
	MTUMeaning string
}

// ipMTURange converts a profile's MTU range into IP MTUs: an L2 MTU without
// FCS (SR Linux) counts the 14-byte untagged Ethernet header (the 7220's IP
// MTU maximum 9398 against its port MTU maximum 9412, srl_nokia-interfaces).
func ipMTURange(m profile.MTU) MTURange {
	r := MTURange{Min: m.Min, Max: m.Max}
	if m.Meaning == profile.MTUL2NoFCS && !r.IsZero() {
		r.Min, r.Max = r.Min-14, r.Max-14
	}
	return r
}

// MTURange is an inclusive range of port MTUs in bytes.
type MTURange struct{ Min, Max int }

// IsZero reports whether r is unset.
func (r MTURange) IsZero() bool { return r.Min == 0 && r.Max == 0 }

// Contains reports whether mtu is within r.
func (r MTURange) Contains(mtu int) bool { return mtu >= r.Min && mtu <= r.Max }

// Range is an inclusive range of durations, optionally in steps: the
// platform's leaf counts whole Steps (whole milliseconds on SONiC and SR
// Linux; EOS takes detect and restore in 10 ms steps).
type Range struct{ Min, Max, Step time.Duration }

// IsZero reports whether r is unset.
func (r Range) IsZero() bool { return r.Min == 0 && r.Max == 0 }

// Contains reports whether d is within r and a whole number of steps.
func (r Range) Contains(d time.Duration) bool { return r.InBounds(d) && r.OnStep(d) }

// InBounds reports whether d is within r's bounds.
func (r Range) InBounds(d time.Duration) bool { return d >= r.Min && d <= r.Max }

// OnStep reports whether d is a whole number of r's steps (always, without a step).
func (r Range) OnStep(d time.Duration) bool { return r.Step <= 0 || d%r.Step == 0 }

// InfoFor adapts a release profile (internal/profile, the one place that
// holds the platform facts) into what the rules need.
func InfoFor(p *profile.Profile) PlatformInfo {
	tr := func(r profile.TimerRange) Range { return Range{Min: r.Min(), Max: r.Max(), Step: r.Step()} }
	pi := PlatformInfo{
		PFC:                   p.PFC,
		SemiLossless:          p.SemiLossless,
		MaxLosslessPriorities: p.MaxLosslessPriorities,
		Detect:                tr(p.Watchdog.Detect),
		Restore:               tr(p.Watchdog.Restore),
		Poll:                  tr(p.Watchdog.Poll),
		PollHalf:              p.Watchdog.PollHalf,
		MinWeight:             p.MinWeight,
		BufferCellBytes:       p.BufferCellBytes,
		DCBXAdvertise:         p.DCBXAdvertise,
		MTU:                   ipMTURange(p.MTU),
		MTUMeaning:            p.MTU.Meaning,
		ConfigUpdaterLimits:   p.Write.GCU != nil,
	}
	if p.Platform == string(intent.PlatformSRLinux) && p.PFC {
		// 7220 IXR (qos-pfc-xgs): the pfc-queue pauses above its
		// maximum-burst-size (srl_nokia-qos, default 51200 B), which
		// switchdrv/srl programs as portfacts.PFCQueueMBS.
		pi.XOFF = portfacts.PFCQueueMBS
	}
	return pi
}

// DefaultPlatform returns the facts of the platform's default profile
// (internal/profile/data/profiles/*.json, each naming its sources: the
// watchdog ranges of sonic-pfcwd.yang, srl_nokia-qos.yang and the EOS CLI,
// the port MTU ranges of sonic-port.yang, srl_nokia-interfaces.yang (7220
// IXR: 1500..9412) and the EOS CLI, openconfig-qos having no PFC model).
func DefaultPlatform(p intent.Platform) (PlatformInfo, bool) {
	prof, err := profile.Default(string(p))
	if err != nil {
		return PlatformInfo{}, false
	}
	return InfoFor(prof), true
}

// switchPlatform returns the facts of sw's profile (its platform's default
// when it names none or an unknown one, which the parser reported), with
// the intent's asic applied: portfacts.SwitchProfile, the profile every
// command derives sw's facts from.
func switchPlatform(sw *intent.Switch) (PlatformInfo, bool) {
	if prof := portfacts.SwitchProfile(sw); prof != nil {
		return InfoFor(prof), true
	}
	return DefaultPlatform(sw.Platform)
}
