package portfacts

import (
	"fmt"
	"time"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/memo"
	"github.com/fabricctl/fabricctl/internal/profile"
)

// HeadroomRound is what the switch compilers round a port's headroom per
// lossless priority up to before they write it (SONiC BUFFER_PROFILE xoff,
// SR Linux pfc-queue reserved-bytes); sonic-swss' buffer_headroom lua
// rounds xoff to 1 KiB the same way.
const HeadroomRound = 1024

// Switch is what a switch's ports share.
type Switch struct {
	Name     string
	Platform intent.Platform
	// Profile is the switch's release profile (its platform's default
	// when it names none or an unknown one) with the intent's asic
	// applied; nil for a platform without profiles.
	Profile *profile.Profile
	// ASIC is the switch's ASIC: the intent's, else its profile's ("" when
	// neither says).
	ASIC string
	// CellBytes is the buffer cell the ASIC allocates in: the ASIC's
	// published cell, else the profile's (0 = exact).
	CellBytes int64
	// CellFactor is the SONiC headroom model's cell occupancy factor,
	// from CellFactorSource.
	CellFactor       float64
	CellFactorSource string
	// BufferBytes is the ingress buffer one port can use for lossless
	// traffic (intent switches[].buffer; 0 = not given).
	BufferBytes int64
	// MTUMeaning is what the platform's own interface mtu counts
	// (profile.MTUIP or profile.MTUL2NoFCS).
	MTUMeaning string
	// StaticXOFF: the platform pauses at a fixed per-queue depth
	// (PFCQueueMBS: SR Linux 7220's pfc-queue maximum-burst-size) rather
	// than at what is left of a shared buffer.
	StaticXOFF bool
	// Watchdog is the policy's PFC watchdog as the platform takes it.
	Watchdog Watchdog

	// Mode is the policy's RoCE mode (policy.mode).
	Mode intent.RoCEMode
	// PFCSend has bit p set for each priority on which the switch's
	// ports send PFC pause: the lossless classes' in lossless and
	// pfc-only mode, none in semi-lossless (the switch only honours
	// pause) and lossy (no PFC). Headroom and an XOFF point apply to
	// these priorities only.
	PFCSend uint8
	// PFCHonour has bit p set for each priority whose received pause
	// the switch's egress queues honour: the lossless classes' in every
	// mode with PFC (lossless, semi-lossless, pfc-only).
	PFCHonour uint8

	// lossless is each lossless class's facts that do not depend on
	// the port (its static XOFF point, its ECN as programmed), by
	// priority: a port's Lossless starts as a copy.
	lossless []Lossless
}

// Watchdog is the PFC watchdog's timers as a platform takes them: whole
// Steps (whole milliseconds on SONiC and SR Linux, 10 ms on EOS for
// detect and restore; profile watchdog ranges).
type Watchdog struct {
	Enabled                 bool
	Detect, Restore, Poll   time.Duration
	DetectStep, RestoreStep time.Duration
	PollStep                time.Duration
	// Action is what the platform does on a stuck queue: the intent's,
	// except on SR Linux, whose deadlock recovery ignores received pause
	// frames on the queue for the recovery timer and keeps transmitting
	// whatever the intent asks (forward; switchdrv/srl notes it, the
	// action is not configurable in srl_nokia-qos). ActionSource says
	// which.
	Action       intent.WatchdogAction
	ActionSource string
}

// Port is the derived facts of one switch port.
type Port struct {
	Switch *Switch
	Name   string
	Speed  int64   // bits/s
	Cable  float64 // metres
	// IPMTU is the port's IP MTU (the intent's, else the policy's).
	IPMTU int
	// PlatformMTU is the value of the platform's own interface mtu for
	// IPMTU: the same on SONiC and EOS, the L2 frame without FCS on SR
	// Linux (+14, +4 more on a VLAN-tagged subinterface).
	PlatformMTU int
	Headroom    Headroom
	// Lossless are the facts of the lossless classes this port sends
	// pause for (Switch.PFCSend), in priority order: the policy's
	// lossless classes in lossless and pfc-only mode, none in
	// semi-lossless and lossy mode, where no headroom or XOFF applies.
	Lossless []Lossless
}

// Headroom is a port's PFC headroom per lossless priority.
type Headroom struct {
	Input  intent.HeadroomInput
	Models []intent.HeadroomResult
	// Required is the largest model, Model which one.
	Required int64
	Model    intent.HeadroomModel
	// Programmed is Required rounded up to HeadroomRound: the bytes the
	// compilers write for the port's lossless priority groups.
	Programmed int64
	// Occupied is Programmed in whole buffer cells of Switch.CellBytes:
	// what the port's buffer gives each lossless priority.
	Occupied int64
}

// Lossless is one lossless class on one port.
type Lossless struct {
	Class    *intent.Class
	Priority int
	// XOFF is the priority group occupancy at which the port sends PFC
	// pause (-1 when unknown: a shared-buffer platform without a buffer
	// in the intent). XOFFSource says which bound it is.
	XOFF       int64
	XOFFSource string
	// StaticXOFF is the platform's own XOFF point as programmed (SR Linux
	// 7220: the pfc-queue maximum-burst-size, PFCQueueMBS), -1 on a
	// shared-buffer platform. XOFF is the smaller of it and the buffer.
	StaticXOFF int64
	// ECN is the class's thresholds as programmed (nil: no ECN).
	ECN *ECN
}

// ECN is a class's ECN thresholds as a platform programs them: every
// built-in compiler writes bytes as the intent gives them; the cells are
// those bytes in the switch's buffer cells, rounded up (which way an ASIC
// rounds a WRED threshold is not verified here).
type ECN struct {
	MinBytes, MaxBytes int64
	MinCells, MaxCells int64 // 0 when the cell is not known
	Probability        int
}

// SwitchOf derives the facts sw's ports share.
func SwitchOf(f *intent.Fabric, sw *intent.Switch) *Switch {
	s := &Switch{Name: sw.Name, Platform: sw.Platform, ASIC: intent.SwitchASIC(sw), BufferBytes: sw.BufferBytes, CellFactor: 1, CellFactorSource: "no known ASIC: 1"}
	s.Profile = SwitchProfile(sw)
	if s.Profile != nil {
		s.CellBytes = s.Profile.BufferCellBytes
		// The ASIC's own cell where it is published (asics.json), as
		// profile.WithASIC gives a switch that names its asic: a switch
		// that leaves its profile's ASIC implicit has the same cell.
		if a := s.Profile.ASICInfo(); a != nil && a.CellBytes > 0 && s.CellBytes > 0 {
			s.CellBytes = a.CellBytes
		}
		s.MTUMeaning = s.Profile.MTU.Meaning
		s.StaticXOFF = s.Profile.Platform == string(intent.PlatformSRLinux) && s.Profile.PFC
		wd := s.Profile.Watchdog
		s.Watchdog = Watchdog{DetectStep: wd.Detect.Step(), RestoreStep: wd.Restore.Step(), PollStep: wd.Poll.Step()}
	}
	if a, ok := intent.LookupASIC(s.ASIC); ok {
		s.CellFactor, s.CellFactorSource = a.CellFactor(), fmt.Sprintf("ASIC %s (cell %d B)", a.Name, a.CellBytes)
	}
	if f.Derive.CellFactor > 0 {
		s.CellFactor, s.CellFactorSource = f.Derive.CellFactor, "--cell-factor"
	}
	s.Mode = f.Policy.Mode
	s.PFCHonour = f.Policy.PFCBitmap()
	if s.Mode.SwitchSendsPause() {
		s.PFCSend = s.PFCHonour
	}
	for _, prio := range SendPriorities(f) {
		cl := f.Policy.ClassByPriority(prio)
		l := Lossless{Class: cl, Priority: cl.Priority, XOFF: -1, StaticXOFF: -1, XOFFSource: "unknown: no buffer in the intent"}
		if s.StaticXOFF {
			l.StaticXOFF = PFCQueueMBS(cl, f.Policy.MTU)
			l.XOFF, l.XOFFSource = l.StaticXOFF, "pfc-queue maximum-burst-size"
		}
		if cl.ECN != nil {
			l.ECN = &ECN{MinBytes: cl.ECN.MinBytes, MaxBytes: cl.ECN.MaxBytes, Probability: cl.ECN.Probability,
				MinCells: cells(cl.ECN.MinBytes, s.CellBytes), MaxCells: cells(cl.ECN.MaxBytes, s.CellBytes)}
		}
		s.lossless = append(s.lossless, l)
	}
	w := f.Policy.Watchdog
	s.Watchdog.Enabled, s.Watchdog.Detect, s.Watchdog.Restore, s.Watchdog.Poll = w.Enabled, w.Detect, w.Restore, w.Poll
	s.Watchdog.Action, s.Watchdog.ActionSource = w.Action, "the intent's"
	if sw.Platform == intent.PlatformSRLinux {
		s.Watchdog.Action, s.Watchdog.ActionSource = intent.WatchdogForward, "SR Linux deadlock recovery: forward, whatever the intent asks"
	}
	return s
}

// SendPriorities are the priorities on which switches send PFC pause, in
// ascending order (Switch.PFCSend as a list; the same on every switch):
// the policy's lossless priorities where the mode has switches send pause
// (lossless, pfc-only), none otherwise.
func SendPriorities(f *intent.Fabric) []int {
	if !f.Policy.Mode.SwitchSendsPause() {
		return nil
	}
	return f.Policy.LosslessPriorities()
}

// HonourPriorities are the priorities whose received pause switches
// honour, in ascending order (Switch.PFCHonour as a list): the policy's
// lossless priorities in every mode with PFC.
func HonourPriorities(f *intent.Fabric) []int {
	if !f.Policy.Mode.PFC() {
		return nil
	}
	return f.Policy.LosslessPriorities()
}

// SwitchProfile is sw's release profile with its asic applied: the one
// it names, else its platform's default (nil for neither).
func SwitchProfile(sw *intent.Switch) *profile.Profile {
	var p *profile.Profile
	if sw.Profile != "" {
		p, _ = profile.LookupFor(string(sw.Platform), sw.Profile)
	}
	if p == nil {
		p, _ = profile.Default(string(sw.Platform))
	}
	if p == nil {
		return nil
	}
	if q, err := p.WithASIC(sw.ASIC); err == nil {
		return q
	}
	return p
}

// Ports derives the facts of each of sw's ports, in order.
func Ports(f *intent.Fabric, sw *intent.Switch) []Port {
	s := SwitchOf(f, sw)
	out := make([]Port, len(sw.Ports))
	// one array holds every port's lossless classes (a compile asks for
	// the ports of thousands of switches)
	n := len(s.lossless)
	buf := make([]Lossless, len(sw.Ports)*n)
	for i := range sw.Ports {
		out[i] = s.port(f, sw.Ports[i], buf[i*n:i*n:(i+1)*n])
	}
	return out
}

// PortOf derives the facts of port p of sw.
func PortOf(f *intent.Fabric, sw *intent.Switch, p intent.Port) Port {
	return SwitchOf(f, sw).Port(f, p)
}

// Port derives the facts of port p of switch s (f is s's fabric): for a
// caller that asks about many ports of one switch, or about a port with
// the speed and cable of the link it is on.
func (s *Switch) Port(f *intent.Fabric, p intent.Port) Port {
	return s.port(f, p, make([]Lossless, 0, len(s.lossless)))
}

// PortHeadroom is the headroom of port p of switch s (Port(f,
// p).Headroom without the rest of the port's facts): for the compilers,
// which write it for every port of thousands of switches.
func (s *Switch) PortHeadroom(f *intent.Fabric, p intent.Port) Headroom {
	return s.headroom(intent.HeadroomInput{Speed: p.Speed, CableMeters: p.CableMeters, MTU: f.PortMTU(p), CellFactor: s.CellFactor, ASIC: s.ASIC})
}

// port derives p's facts, its Lossless appended to buf (room for every
// lossless class).
func (s *Switch) port(f *intent.Fabric, p intent.Port, buf []Lossless) Port {
	pt := Port{Switch: s, Name: p.Name, Speed: p.Speed, Cable: p.CableMeters, IPMTU: f.PortMTU(p)}
	pt.PlatformMTU = pt.IPMTU
	if s.MTUMeaning == profile.MTUL2NoFCS {
		pt.PlatformMTU += 14 // untagged Ethernet header, no FCS
		if p.Subinterface != 0 {
			pt.PlatformMTU += 4 // one VLAN tag
		}
	}
	pt.Headroom = s.PortHeadroom(f, p)
	n := int64(len(s.lossless))
	pt.Lossless = append(buf, s.lossless...)
	if s.BufferBytes > 0 && p.Speed > 0 {
		shared := max(s.BufferBytes-pt.Headroom.Occupied*n, 0)
		for i := range pt.Lossless {
			if l := &pt.Lossless[i]; l.XOFF < 0 || shared < l.XOFF {
				l.XOFF, l.XOFFSource = shared, "the switch's buffer less every lossless priority's headroom (in cells)"
			}
		}
	}
	return pt
}

func cells(b, cell int64) int64 {
	if cell <= 0 {
		return 0
	}
	return (b + cell - 1) / cell
}

// headroom is HeadroomOf with the switch's cell applied.
func (s *Switch) headroom(in intent.HeadroomInput) Headroom {
	h := HeadroomOf(in)
	h.Occupied = h.Programmed
	if c := s.CellBytes; c > 0 && h.Occupied%c != 0 {
		h.Occupied += c - h.Occupied%c
	}
	return h
}

// HeadroomOf runs every model on in and rounds the largest as the
// compilers program it (Occupied is Programmed: no cell is known here).
func HeadroomOf(in intent.HeadroomInput) Headroom {
	return headroomMemo.Get(in, func() Headroom {
		models, req := intent.Headroom(in)
		h := Headroom{Input: in, Models: models, Required: req}
		for _, m := range models {
			if m.Bytes == req {
				h.Model = m.Model
				break
			}
		}
		h.Programmed = (req + HeadroomRound - 1) / HeadroomRound * HeadroomRound
		h.Occupied = h.Programmed
		return h
	})
}

// headroomMemo holds HeadroomOf's answers by input: the models are
// functions of the input alone (and of intent's fixed ASIC tables), and
// the ports of a fabric share a few inputs, so each is worked out once
// per process (a compile of 200 switches x 32 ports did it 12,800
// times). At most 4096 are kept. The Models slice is shared: read only.
var headroomMemo = memo.Bounded[intent.HeadroomInput, Headroom]{Max: 4096}

// PFCQueueDefaultMBS is the SR Linux 7220 pfc-queue maximum-burst-size
// default (intent.PFCQueueDefaultMBS, with its source).
const PFCQueueDefaultMBS = intent.PFCQueueDefaultMBS

// PFCQueueMBS is the pfc-queue maximum-burst-size fabricctl programs for a
// lossless class on SR Linux 7220, its static XOFF point
// (intent.PFCQueueMBS: the class's ECN Kmax plus one frame, rounded up to
// 1 KiB, never below the default).
func PFCQueueMBS(cl *intent.Class, mtu int) int64 { return intent.PFCQueueMBS(cl, mtu) }

// LosslessAt returns the facts of the lossless class on priority prio
// (nil when prio is not lossless).
func (p *Port) LosslessAt(prio int) *Lossless {
	for i := range p.Lossless {
		if p.Lossless[i].Priority == prio {
			return &p.Lossless[i]
		}
	}
	return nil
}
