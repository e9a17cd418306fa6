package hostdrv

import (
	"github.com/fabricctl/fabricctl/hostdrv/internal/dcbnl"
)

// Kernel is what hostdrv needs from the kernel besides files: rtnetlink
// (dcbnl and link MTU) and the ethtool pause and tunable ioctls. The calls take no
// context (netlink has none); Driver checks ctx between them.
type Kernel interface {
	// Link returns the interface index, MTU and maximum MTU; a missing
	// interface is an error that wraps syscall.ENODEV.
	Link(ifname string) (LinkInfo, error)
	// SetMTU sets the MTU with the request setLinkMTURequest builds, the
	// RTM_NEWLINK `ip link set dev X mtu N` sends. CLI twin: that command.
	SetMTU(ifname string, mtu int) error
	// DCB sends one dcbnl request and returns the reply payloads (after the
	// netlink header). Netlink errors (e.g. EOPNOTSUPP from a driver without
	// dcbnl ops) are returned as syscall.Errno; the reply's status byte is the
	// caller's to check.
	DCB(req dcbnl.Request) ([][]byte, error)
	// Pause reads global pause. CLI twin: `ethtool -a X`.
	Pause(ifname string) (Pause, error)
	// SetPause writes global pause. CLI twin: `ethtool -A X rx off tx off`.
	SetPause(ifname string, p Pause) error
	// PFCPreventionTimeout reads the ethtool tunable pfc-prevention-tout
	// (ms, 0 = off) with the request pfcPreventionRequest builds; a driver
	// without it answers syscall.EOPNOTSUPP. CLI twin: `ethtool
	// --get-tunable X pfc-prevention-tout`.
	PFCPreventionTimeout(ifname string) (uint16, error)
	// SetPFCPreventionTimeout writes it (0 off, 65535 auto, else ms). CLI
	// twin: `ethtool --set-tunable X pfc-prevention-tout 100`.
	SetPFCPreventionTimeout(ifname string, v uint16) error
}

// LinkInfo is what rtnetlink reports about an interface that hostdrv uses.
type LinkInfo struct {
	Index int
	MTU   int
	// MaxMTU is IFLA_MAX_MTU (the netdev's max_mtu; 0 = not reported).
	MaxMTU int
}
