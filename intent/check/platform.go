package check

import (
	"time"

	"github.com/fabricctl/fabricctl/intent"
)

// PlatformInfo is what the rules need to know about a switch platform. The
// switch drivers own the authoritative data (switchdrv.Quirks); callers that
// have a registry can adapt it into Options.Platform.
type PlatformInfo struct {
	// PFC is false where the platform's configuration model cannot express PFC.
	PFC bool
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
	// MTU bounds the port IP MTU the platform accepts, converted from its
	// interface model's own meaning (a zero MTURange is not checked).
	MTU MTURange
	// XOFF, when set, is the ingress queue depth at which the platform sends
	// PFC pause for a lossless class as fabricctl programs it (mtu: the
	// policy's IP MTU). nil means the shared-buffer model: pause when the
	// priority group holds the switch's buffer minus the headroom.
	XOFF func(cl *intent.Class, mtu int) int64
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

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// DefaultPlatform returns the built-in data for the four platforms:
//
//   - sonic: watchdog detect 100-5000 ms, restore 100-60000 ms, poll
//     100-1000 ms (sonic-pfcwd.yang), 2 lossless priorities (pfc_enable "3,4").
//   - srlinux: deadlock detection-timer 10-1500 ms and recovery-timer
//     100-1500 ms (srl_nokia-qos.yang; DOMAIN.md rounds both to 10-1500), no
//     configurable poll interval, 2 lossless priorities.
//   - eos: 2 lossless priorities; watchdog timeout and recovery-time
//     10-60000 ms in 10 ms steps, polling-interval 5-30000 ms in 1 ms steps
//     and at most half the smaller of the two (EOS CLI; the arista-qos-augments leaves are unbounded
//     decimal64 seconds, so the EOS compiler enforces these and so must check).
//   - openconfig: openconfig-qos has no PFC model at all; the
//     openconfig-interfaces mtu leaf is a bare uint16, so no MTU range.
//
// Port MTU ranges, all as IP MTUs (the intent's meaning): sonic 68-9216
// (sonic-port.yang PORT mtu, the IP MTU), srlinux 1486-9398 (7220 IXR:
// srl_nokia-interfaces.yang interface mtu 1500-9412 is the L2 frame without
// FCS), eos 68-9214 (EOS CLI mtu is the IP MTU: hardware refuses more, cEOS
// stops at 9194; the compiler caps it).
func DefaultPlatform(p intent.Platform) (PlatformInfo, bool) {
	switch p {
	case intent.PlatformSONiC:
		return PlatformInfo{
			PFC:                   true,
			MaxLosslessPriorities: 2,
			Detect:                Range{Min: ms(100), Max: ms(5000), Step: ms(1)},
			Restore:               Range{Min: ms(100), Max: ms(60000), Step: ms(1)},
			Poll:                  Range{Min: ms(100), Max: ms(1000), Step: ms(1)},
			MinWeight:             1,                            // SCHEDULER DWRR weight 1..100
			MTU:                   MTURange{Min: 68, Max: 9216}, // sonic-port.yang: PORT mtu range 68..9216
		}, true
	case intent.PlatformSRLinux:
		return PlatformInfo{
			PFC:                   true,
			MaxLosslessPriorities: 2,
			Detect:                Range{Min: ms(10), Max: ms(1500), Step: ms(1)},
			Restore:               Range{Min: ms(100), Max: ms(1500), Step: ms(1)},
			MinWeight:             1, // scheduler input weight 1..255
			// IP MTU: srl_nokia-interfaces.yang interface mtu is the L2 frame
			// without FCS, 1500..9412 on 7220 IXR-D/H (IP MTU at most 9398);
			// switchdrv/srl adds the 14-byte Ethernet header.
			MTU: MTURange{Min: 1486, Max: 9398},
			// 7220 IXR (qos-pfc-xgs): the pfc-queue pauses above its
			// maximum-burst-size (srl_nokia-qos, default 51200 B), which
			// switchdrv/srl programs as intent.PFCQueueMBS.
			XOFF: intent.PFCQueueMBS,
		}, true
	case intent.PlatformEOS:
		return PlatformInfo{
			PFC:                   true,
			MaxLosslessPriorities: 2,
			Detect:                Range{Min: ms(10), Max: ms(60000), Step: ms(10)},
			Restore:               Range{Min: ms(10), Max: ms(60000), Step: ms(10)},
			Poll:                  Range{Min: ms(5), Max: ms(30000), Step: ms(1)},
			PollHalf:              true,
			// EOS CLI "mtu" on Ethernet interfaces: 68..9214 on hardware (cEOS
			// stops at 9194); "mtu 9216" is refused (switchdrv/eos caps it).
			MTU: MTURange{Min: 68, Max: 9214},
		}, true
	case intent.PlatformOpenConfig:
		return PlatformInfo{PFC: false, MaxLosslessPriorities: 2}, true
	}
	return PlatformInfo{}, false
}
