package intent

import (
	"cmp"
	"fmt"
	"sort"
	"strings"
	"time"
)

// APIVersion is the only intent format version this build understands.
const APIVersion = "fabricctl.io/v1alpha1"

// Kind is the value of the top-level kind key.
const Kind = "Fabric"

// Platform names a switch operating system / model family.
type Platform string

// Known switch platforms.
const (
	PlatformSRLinux    Platform = "srlinux"
	PlatformSONiC      Platform = "sonic"
	PlatformEOS        Platform = "eos"
	PlatformOpenConfig Platform = "openconfig"
)

// Platforms lists every platform name the intent accepts, sorted.
func Platforms() []Platform {
	return []Platform{PlatformEOS, PlatformOpenConfig, PlatformSONiC, PlatformSRLinux}
}

// DCBXMode says who owns the DCB configuration of host NICs.
type DCBXMode string

const (
	// DCBXHostStatic: the host OS sets PFC/ETS/APP itself (IEEE, not willing);
	// the switch does not advertise for the host to follow.
	DCBXHostStatic DCBXMode = "host-static"
	// DCBXSwitchWilling: the switch advertises DCBX TLVs and the host NIC is
	// willing and follows them; fabricctl only verifies on the host.
	DCBXSwitchWilling DCBXMode = "switch-willing"
)

// WatchdogAction is what the PFC watchdog does with a stuck queue.
type WatchdogAction string

const (
	WatchdogDrop    WatchdogAction = "drop"
	WatchdogForward WatchdogAction = "forward"
	WatchdogAlert   WatchdogAction = "alert"
)

// Fabric is a parsed, defaulted and normalised intent. All sizes are bytes,
// all rates bits per second, all lengths metres and all times time.Duration.
// A Fabric is read-only once Parse returns it.
type Fabric struct {
	Name  string
	Files []string // the files it was read from, in order
	// Sources are the bytes that were parsed, in order: what a remote host
	// must be sent and what a saved plan's intent hash covers, without
	// reading the files (or stdin) again.
	Sources    []Source
	Policy     Policy
	Switches   []Switch // sorted by name
	Hosts      []Host   // sorted by name
	Links      []Link
	Validation Validation
	// Derive is what the command line changes in the facts derived from
	// the fabric (intent/portfacts reads it; the zero value derives from
	// the intent alone). Set it with WithDerive, before any command
	// reads the fabric, so every command sees the same facts.
	Derive Derive
	Pos    Pos
}

// Derive holds the command-line inputs of the derived facts.
type Derive struct {
	// CellFactor, when > 0, is the SONiC headroom model's buffer-cell
	// occupancy factor on every switch (--cell-factor), in place of each
	// switch ASIC's own (intent.ASIC.CellFactor; 1 without a known ASIC).
	CellFactor float64
}

// WithDerive returns a copy of f whose derived facts take d. The copy
// shares f's slices (a Fabric is read-only).
func (f *Fabric) WithDerive(d Derive) *Fabric {
	g := *f
	g.Derive = d
	return &g
}

// Policy is the fabric-wide QoS policy that every switch and host implements.
type Policy struct {
	// Preset is the name of the preset the classes started from ("" = none).
	Preset string
	// Mode is the RoCE mode (policy.mode; never empty after Parse): the
	// preset's classes follow it (applyMode), and intent/portfacts
	// derives from it which priorities each switch port sends and
	// honours pause on.
	Mode RoCEMode
	// Classes sorted by priority. Exactly one has Default set; at most one has CNP set.
	Classes []Class
	// MTU is the switch port MTU in bytes, as an IP MTU: the largest IP packet
	// the port carries, the meaning of SONiC's PORT mtu, EOS's mtu and a Linux
	// netdev's MTU (so it compares directly with HostMTU). Compilers whose
	// model counts the frame (SR Linux interface mtu and OpenConfig interface
	// mtu: L2 without FCS) add the Ethernet header.
	MTU int
	// HostMTU is the host netdev MTU in bytes.
	HostMTU int
	// RoCEPathMTU is the RDMA path MTU (256..4096).
	RoCEPathMTU int
	DCBX        DCBXMode
	Watchdog    Watchdog
	// GlobalPause is 802.3x link-level pause; must be false where PFC is on.
	GlobalPause bool
	RoCE        RoCEHost
	// MaxLosslessPriorities caps lossless classes per port (platform may lower it).
	MaxLosslessPriorities int
	// TrustDSCPFullMap installs all 64 DSCP->priority APP entries on hosts (mlnx_qos
	// --trust dscp style) instead of only the class DSCPs.
	TrustDSCPFullMap bool
	// HostBuffer is the NIC receive buffer layout (dcbnl BUFFER: priority ->
	// buffer and buffer sizes); nil leaves the NIC's buffers alone.
	HostBuffer *HostBuffer
	// DCQCN is the host congestion-control parameters hosts get
	// (policy.dcqcn); nil leaves the NICs' values alone.
	DCQCN *DCQCN
	// NICAccelerations is the ConnectX lossy-RoCE accelerations
	// (policy.nicAccelerations); nil leaves the NICs' values alone.
	NICAccelerations *NICAccelerations
	// HostPauseStormPrevention is the host NICs' pause storm prevention
	// (policy.hostPauseStormPrevention, the mlx5 ethtool tunable
	// pfc-prevention-tout); nil leaves the NICs' values alone.
	HostPauseStormPrevention *PauseStormPrevention
	Fields                   Fields // where each key written for it is (nil: nothing written)
	Pos                      Pos
}

// HostBuffer is a host NIC's receive buffer layout, as `dcb buffer set dev X
// prio-buffer 0:0 ... 3:1 buffer-size 0:128K 1:256K` sets it.
type HostBuffer struct {
	PrioToBuffer [8]int   // buffer index (0..7) of each priority
	Sizes        [8]int64 // bytes per buffer index; 0 = leave to the driver
	Fields       Fields   // where each key written for it is (nil: nothing written)
	Pos          Pos
	// BufferPos and BufferFields are where the entry of each buffer index
	// is written and its keys (zero: not listed); field paths name an entry
	// policy.hostBuffers[buffer=N].
	BufferPos    [8]Pos
	BufferFields [8]Fields
}

// Class is one traffic class: a set of DSCP values mapped to one 802.1p
// priority, which is also the switch traffic class, queue and host TC.
type Class struct {
	Name     string
	DSCP     []int  // sorted, unique
	Priority int    // 0..7; also the TC / queue index
	Lossless bool   // PFC enabled on Priority
	Strict   bool   // strict priority scheduling; otherwise ETS/DWRR with Weight
	Weight   int    // ETS weight in percent (0 when Strict)
	ECN      *ECN   // nil = no ECN marking
	CNP      bool   // the class that carries congestion notification packets
	Default  bool   // catch-all for every DSCP not listed in another class
	Fields   Fields // where each key written for it is (nil: nothing written)
	Pos      Pos
}

// ECN holds WRED-ECN marking thresholds for a class queue.
type ECN struct {
	MinBytes    int64
	MaxBytes    int64
	Probability int    // percent at MaxBytes, 1..100
	Fields      Fields // where each key written for it is (nil: nothing written)
	Pos         Pos
}

// Watchdog is the PFC storm / deadlock watchdog.
type Watchdog struct {
	Enabled bool
	Detect  time.Duration
	Restore time.Duration
	Poll    time.Duration
	Action  WatchdogAction
	Fields  Fields // where each key written for it is (nil: nothing written)
	Pos     Pos
}

// RoCEHost is what host NICs and RDMA-CM must use.
type RoCEHost struct {
	// ToS is the IP ToS byte RDMA traffic is sent with: DSCP<<2 | ECN bits.
	ToS int
	// CNPDSCP and CNPPriority are what the NIC sends CNPs with.
	CNPDSCP     int
	CNPPriority int
	// Mode is the RDMA-CM default RoCE mode ("RoCE v2").
	Mode   string
	Fields Fields // where each key written for it is (nil: nothing written)
	Pos    Pos
}

// Credentials says where to read a switch's gNMI username and password. The
// values themselves never appear in the intent.
type Credentials struct {
	UsernameEnv  string
	PasswordEnv  string
	UsernameFile string
	PasswordFile string
	Fields       Fields // where each key written for it is (nil: nothing written)
	Pos          Pos
}

// TLS is a switch's gNMI TLS settings. Paths are resolved relative to the
// intent file that named them.
type TLS struct {
	CA         string // CA bundle to verify the target
	Cert       string // client certificate (mTLS)
	Key        string // client key (mTLS)
	ServerName string // override for verification
	Insecure   bool   // plaintext gRPC, only when asked for explicitly
	SkipVerify bool   // TLS without verifying the target
	Fields     Fields // where each key written for it is (nil: nothing written)
	Pos        Pos
}

// Switch is one switch of the inventory.
type Switch struct {
	Name        string
	Platform    Platform
	Address     string // gNMI host:port
	Credentials Credentials
	TLS         TLS
	// Proxy is the HTTP CONNECT proxy gNMI goes through (http://host:port),
	// "" for none: the proxy environment variables are never used.
	Proxy string
	// Profile is the platform release profile (internal/profile); the
	// parser fills in the platform's default (profile.Default) when the intent names none.
	Profile string
	// ASIC is the switching ASIC the intent names ("" = the profile's).
	ASIC string
	// MaxLosslessPriorities overrides the platform limit (0 = platform default).
	MaxLosslessPriorities int
	// BufferBytes is the ingress headroom pool available per port (0 = unknown,
	// headroom is computed and reported but not checked against a budget).
	BufferBytes int64
	Ports       []Port // sorted in natural order of Name
	Fields      Fields // where each key written for it is (nil: nothing written)
	Pos         Pos
}

// Port is one front-panel port of a switch.
type Port struct {
	Name        string
	Speed       int64   // bits/s
	CableMeters float64 // cable length
	MTU         int     // IP MTU; 0 = Policy.MTU
	// Subinterface is the subinterface index classifiers attach to (SR Linux).
	Subinterface int
	Fields       Fields // where each key written for it is (nil: nothing written)
	Pos          Pos
}

// Host is one server of the inventory.
type Host struct {
	Name string
	// Address is "local" or an SSH destination host[:port].
	Address string
	SSH     SSH
	NICs    []NIC
	Fields  Fields // where each key written for it is (nil: nothing written)
	Pos     Pos
}

// IsLocal reports whether the host is this machine.
func (h Host) IsLocal() bool { return h.Address == "" || h.Address == "local" }

// SSH is how to reach a remote host.
type SSH struct {
	User       string
	Port       int
	KeyFile    string // private key; empty = ssh-agent
	KnownHosts string // known_hosts file; empty = ~/.ssh/known_hosts
	// InsecureIgnoreHostKey disables host key verification (lab use only).
	InsecureIgnoreHostKey bool
	Fields                Fields // where each key written for it is (nil: nothing written)
	Pos                   Pos
}

// NIC is one RoCE interface of a host.
type NIC struct {
	Interface  string // netdev, e.g. ens1f0np0
	RDMADevice string // ib device, e.g. mlx5_0
	RDMAPort   int    // ib port, 1 by default
	Speed      int64  // bits/s (0 = unknown)
	// CableMeters is written to the PFC delay field on drivers that read it (mlx5).
	CableMeters float64
	// Address is the IPv4 address traffic tests use on this NIC ("" = discover).
	Address string
	Fields  Fields // where each key written for it is (nil: nothing written)
	Pos     Pos
}

// Endpoint is one end of a link: a switch port or a host NIC.
type Endpoint struct {
	Node string // switch or host name
	Port string // switch port name or host interface
}

func (e Endpoint) String() string { return e.Node + ":" + e.Port }

// Link is a cable between two endpoints.
type Link struct {
	A, B   Endpoint
	Fields Fields // where each key written for it is (nil: nothing written)
	Pos    Pos
}

// Validation holds the pass thresholds of `fabricctl validate`.
type Validation struct {
	// MinBandwidthShare is the minimum bandwidth as a fraction of line rate (0..1).
	MinBandwidthShare float64
	MaxP99Latency     time.Duration // 0 = not checked
	MaxP999Latency    time.Duration // 0 = not checked
	Duration          time.Duration // per bandwidth test
	Iterations        int           // per latency test
	MessageSize       int64         // bytes
	Incast            int           // senders in the incast test (0 = hosts-1)
	Lossy             LossyValidation
	// PredictionTolerance is the relative difference (0..1] between measured
	// and predicted beyond which validate warns (default 0.2).
	PredictionTolerance float64
	Fields              Fields // where each key written for it is (nil: nothing written)
	Pos                 Pos
}

// LossyValidation are the budgets validate judges a RoCE class that is not
// lossless by (fractions 0..1). Where there is PFC, any drop fails instead.
type LossyValidation struct {
	MaxDropRate           float64 // switch queue drops / packets on the queue
	MaxRetransmissionRate float64 // recoveries / RoCE packets a NIC sent
	MaxGoodputLoss        float64 // packets sent again / RoCE packets sent
	Fields                Fields
	Pos                   Pos
}

// DefaultLossyValidation are validation.lossy's defaults. Go-back-N (the
// ConnectX default) resends about a window per loss: at 100G and a 10 us
// round trip that is ~30 packets of 4 KiB, so 0.1 % drops cost ~3 % of the
// goodput; every drop takes at least one recovery (a NAK or a timeout), so
// recoveries get the same 0.1 %; 5 % goodput loss leaves room for the ~3 %
// and fails where resends feed the congestion that causes them (simulate
// --compare-modes shows that collapse).
var DefaultLossyValidation = LossyValidation{MaxDropRate: 0.001, MaxRetransmissionRate: 0.001, MaxGoodputLoss: 0.05}

// ClassByPriority returns the class for priority p, or nil.
func (p *Policy) ClassByPriority(prio int) *Class {
	for i := range p.Classes {
		if p.Classes[i].Priority == prio {
			return &p.Classes[i]
		}
	}
	return nil
}

// ClassByName returns the named class, or nil.
func (p *Policy) ClassByName(name string) *Class {
	for i := range p.Classes {
		if p.Classes[i].Name == name {
			return &p.Classes[i]
		}
	}
	return nil
}

// LosslessPriorities returns the PFC-enabled priorities, ascending.
func (p *Policy) LosslessPriorities() []int {
	var out []int
	for _, c := range p.Classes {
		if c.Lossless {
			out = append(out, c.Priority)
		}
	}
	sort.Ints(out)
	return out
}

// PFCBitmap returns the pfc_en bitmask (bit p set for each lossless priority).
func (p *Policy) PFCBitmap() uint8 {
	var m uint8
	for _, c := range p.Classes {
		if c.Lossless && c.Priority >= 0 && c.Priority < 8 {
			m |= 1 << uint(c.Priority)
		}
	}
	return m
}

// RoCEClass returns the class RDMA data traffic belongs in: the lossless
// class of the lowest priority; without one (a platform without PFC, such as
// plain OpenConfig) the lowest-priority class with ECN that is neither the
// CNP nor the default class; nil when there is neither. Classes are kept
// sorted by priority.
func (p *Policy) RoCEClass() *Class {
	for i := range p.Classes {
		if p.Classes[i].Lossless {
			return &p.Classes[i]
		}
	}
	for i := range p.Classes {
		if c := &p.Classes[i]; c.ECN != nil && !c.CNP && !c.Default {
			return c
		}
	}
	return nil
}

// CNPClass returns the class carrying CNPs, or nil.
func (p *Policy) CNPClass() *Class {
	for i := range p.Classes {
		if p.Classes[i].CNP {
			return &p.Classes[i]
		}
	}
	return nil
}

// DefaultClass returns the catch-all class, or nil.
func (p *Policy) DefaultClass() *Class {
	for i := range p.Classes {
		if p.Classes[i].Default {
			return &p.Classes[i]
		}
	}
	return nil
}

// DSCPToPriority returns the full 64-entry DSCP -> priority map the policy
// implies: listed DSCPs go to their class, every other one to the default class.
func (p *Policy) DSCPToPriority() [64]int {
	var m [64]int
	def := 0
	if d := p.DefaultClass(); d != nil {
		def = d.Priority
	}
	for i := range m {
		m[i] = def
	}
	for _, c := range p.Classes {
		for _, d := range c.DSCP {
			if d >= 0 && d < 64 {
				m[d] = c.Priority
			}
		}
	}
	return m
}

// Switch returns the named switch, or nil.
func (f *Fabric) Switch(name string) *Switch {
	// Parse sorts switches by name: look there first (check looks up
	// the switch of each of thousands of findings), then everywhere, for a
	// Fabric built or changed by hand.
	if i := sortedIndex(len(f.Switches), func(i int) string { return f.Switches[i].Name }, name); i >= 0 {
		return &f.Switches[i]
	}
	for i := range f.Switches {
		if f.Switches[i].Name == name {
			return &f.Switches[i]
		}
	}
	return nil
}

// Host returns the named host, or nil.
func (f *Fabric) Host(name string) *Host {
	if i := sortedIndex(len(f.Hosts), func(i int) string { return f.Hosts[i].Name }, name); i >= 0 { // as Switch
		return &f.Hosts[i]
	}
	for i := range f.Hosts {
		if f.Hosts[i].Name == name {
			return &f.Hosts[i]
		}
	}
	return nil
}

// Port returns the named port of the switch, or nil.
func (s *Switch) Port(name string) *Port {
	if i := s.PortIndex(name); i >= 0 {
		return &s.Ports[i]
	}
	return nil
}

// PortIndex returns the index in Ports of the named port (Port's), or -1.
func (s *Switch) PortIndex(name string) int {
	if i := sortedIndex(len(s.Ports), func(i int) string { return s.Ports[i].Name }, name); i >= 0 { // as Fabric.Switch
		return i
	}
	for i := range s.Ports {
		if s.Ports[i].Name == name {
			return i
		}
	}
	return -1
}

// PortMTU returns the port's MTU, falling back to the policy MTU.
func (f *Fabric) PortMTU(p Port) int {
	if p.MTU != 0 {
		return p.MTU
	}
	return f.Policy.MTU
}

// Pos is a position in an intent file. Line and Col are 1-based; a zero Pos
// means "no position" (a default that came from no file).
type Pos struct {
	File string
	Line int
	Col  int
}

func (p Pos) String() string {
	switch {
	case p.File == "" && p.Line == 0:
		return "<default>"
	case p.Line == 0:
		return p.File
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Compare orders positions by file, line, then column: -1, 0 or +1.
func (p Pos) Compare(o Pos) int {
	if c := strings.Compare(p.File, o.File); c != 0 {
		return c
	}
	if c := cmp.Compare(p.Line, o.Line); c != 0 {
		return c
	}
	return cmp.Compare(p.Col, o.Col)
}

// IsValid reports whether p names a place in a file.
func (p Pos) IsValid() bool { return p.Line > 0 }
