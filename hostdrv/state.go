package hostdrv

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fabricctl/fabricctl/hostdrv/internal/dcbnl"
	"github.com/fabricctl/fabricctl/intent"
)

// DCBX mode flags (DCB_CAP_DCBX_*), re-exported for backends and renderers.
const (
	DCBXHost       = dcbnl.DCBXHost
	DCBXLLDManaged = dcbnl.DCBXLLDManaged
	DCBXVerCEE     = dcbnl.DCBXVerCEE
	DCBXVerIEEE    = dcbnl.DCBXVerIEEE
	DCBXStatic     = dcbnl.DCBXStatic
)

// TSA values (IEEE_8021QAZ_TSA_*).
const (
	TSAStrict = dcbnl.TSAStrict
	TSAETS    = dcbnl.TSAETS
)

// ETS is the part of the ETS object fabricctl manages.
type ETS struct {
	Willing bool
	PrioTC  [8]uint8 // priority -> traffic class
	TSA     [8]uint8 // per TC: TSAStrict or TSAETS
	BW      [8]uint8 // per TC: percent (ETS TCs sum to 100)
}

// String renders e as `dcb ets set` arguments.
func (e ETS) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "willing %s prio-tc", onOff(e.Willing))
	for p, tc := range e.PrioTC {
		fmt.Fprintf(&b, " %d:%d", p, tc)
	}
	b.WriteString(" tc-tsa")
	for tc, tsa := range e.TSA {
		fmt.Fprintf(&b, " %d:%s", tc, tsaName(tsa))
	}
	b.WriteString(" tc-bw")
	for tc, bw := range e.BW {
		fmt.Fprintf(&b, " %d:%d", tc, bw)
	}
	return b.String()
}

// etsBWOnly returns e with the bandwidth of every TC that is not an ETS TC
// set to 0: only ETS TCs share bandwidth, and drivers report anything for
// the others (mlx5 reads a strict TC back as 100 %, MLX5E_MAX_BW_ALLOC), so
// comparing it would show drift that apply can never remove.
//
// A TC no priority maps to and with 0 % is compared as strict whatever TSA
// the driver reports: it carries no traffic, and fabricctl sends unused TCs
// as strict (drivers and switch advertisements report ETS 0 % as well).
func (e ETS) etsBWOnly() ETS {
	for tc, tsa := range e.TSA {
		if tsa != TSAETS {
			e.BW[tc] = 0
		}
	}
	for tc := range e.TSA {
		used := false
		for _, ptc := range e.PrioTC {
			used = used || int(ptc) == tc
		}
		if !used && e.BW[tc] == 0 && e.TSA[tc] == TSAETS {
			e.TSA[tc] = TSAStrict
		}
	}
	return e
}

func tsaName(t uint8) string {
	switch t {
	case TSAStrict:
		return "strict"
	case dcbnl.TSACBShaper:
		return "cbs"
	case TSAETS:
		return "ets"
	case dcbnl.TSAVendor:
		return "vendor"
	}
	return fmt.Sprint(t)
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// PFC is the part of the PFC object fabricctl manages.
type PFC struct {
	Enable uint8 // bit p = PFC on priority p
	// Delay is the PFC delay field; mlx5 reads it as cable length in metres.
	// ManageDelay false means the delay is left as the driver has it.
	Delay       uint16
	ManageDelay bool
}

// String renders p as `dcb pfc set` arguments.
func (p PFC) String() string {
	var b strings.Builder
	b.WriteString("prio-pfc")
	for i := range 8 {
		fmt.Fprintf(&b, " %d:%s", i, onOff(p.Enable&(1<<i) != 0))
	}
	if p.ManageDelay {
		fmt.Fprintf(&b, " delay %d", p.Delay)
	}
	return b.String()
}

func (p PFC) equal(q PFC) bool {
	return p.Enable == q.Enable && (!p.ManageDelay || p.Delay == q.Delay)
}

// Pause is 802.3x link-level (global) pause.
type Pause struct {
	Autoneg, RX, TX bool
}

// String renders p as `ethtool -A` arguments (autoneg is left alone).
func (p Pause) String() string { return fmt.Sprintf("rx %s tx %s", onOff(p.RX), onOff(p.TX)) }

// Buffer is the receive buffer layout fabricctl manages (dcbnl BUFFER,
// `dcb buffer set`). Size[i] == 0 means buffer i's size is the driver's: it
// is neither compared nor written. total_size is read-only and not here.
type Buffer struct {
	PrioBuffer [8]uint8  // priority -> buffer index
	Size       [8]uint32 // bytes per buffer index; 0 = not managed
	// AllSizes manages every size, 0 included (restore of a backup).
	AllSizes bool
}

func (b Buffer) managed(i int) bool { return b.AllSizes || b.Size[i] != 0 }

// String renders b as `dcb buffer set` arguments: every priority's buffer,
// and the sizes of the managed buffers in bytes (dcb(8) reads a bare
// integer as bytes).
func (b Buffer) String() string { return b.format(b) }

// format renders b with the sizes of the buffers that want manages (its
// non-zero sizes), so an observed size of 0 still shows.
func (b Buffer) format(want Buffer) string {
	if s := b.sizesOf(want); s != "" {
		return b.prioString() + " " + s
	}
	return b.prioString()
}

// prioString renders the prio-buffer argument.
func (b Buffer) prioString() string {
	var s strings.Builder
	s.WriteString("prio-buffer")
	for p, bu := range b.PrioBuffer {
		fmt.Fprintf(&s, " %d:%d", p, bu)
	}
	return s.String()
}

// sizesString renders the buffer-size argument of the managed buffers.
func (b Buffer) sizesString() string { return b.sizesOf(b) }

func (b Buffer) sizesOf(want Buffer) string {
	var s strings.Builder
	for i, sz := range b.Size {
		if !want.managed(i) {
			continue
		}
		if s.Len() == 0 {
			s.WriteString("buffer-size")
		}
		fmt.Fprintf(&s, " %d:%d", i, sz)
	}
	return s.String()
}

// observed returns the observed layout restricted to the buffers want
// manages, for comparison and rendering.
func (b Buffer) observed(have dcbnl.Buffer) Buffer {
	o := Buffer{PrioBuffer: have.PrioBuffer, AllSizes: b.AllSizes}
	for i := range b.Size {
		if b.managed(i) {
			o.Size[i] = have.Size[i]
		}
	}
	return o
}

// matches reports whether have is b. A size matches when have is b rounded
// down by less than cell bytes: drivers keep buffer sizes in cells of their
// own (mlx5 divides the size by its cell size, port_buff_cell_sz, and reads
// cells * cell size back), so a size that is not a multiple of the cell never
// reads back as written. cell 0 means exact comparison.
func (b Buffer) matches(have Buffer, cell uint32) bool {
	if b.PrioBuffer != have.PrioBuffer {
		return false
	}
	for i, want := range b.Size {
		if !b.managed(i) {
			continue
		}
		got := have.Size[i]
		if got > want || want-got >= max(cell, 1) {
			return false
		}
	}
	return true
}

// File is one sysfs / configfs / debugfs control file fabricctl manages.
type File struct {
	// Setting is the plan path suffix, e.g. "rdma_cm/default_roce_tos".
	Setting string
	// Path is relative to the Files root, e.g.
	// "sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos".
	Path  string
	Value string
	// Mkdir is a directory to create before writing when Path is missing
	// (configfs: the rdma_cm/<ibdev> directory).
	Mkdir string
}

// NICState is the QoS state of one RoCE interface: desired (from a Backend)
// or observed. Nil pointers mean "not managed" (desired) or "not reported by
// the driver" (observed).
type NICState struct {
	Interface string
	MTU       int
	// DCBX is the DCBX mode flags.
	DCBX *uint8
	// Apps maps DSCP -> priority (APP entries with the DSCP selector).
	Apps map[int]int
	PFC  *PFC
	ETS  *ETS
	// Pause is global 802.3x pause.
	Pause *Pause
	// Buffer is the receive buffer layout (nil: the NIC's buffers are left
	// alone).
	Buffer *Buffer
	// StormPrevention is the pause storm prevention (ethtool tunable
	// pfc-prevention-tout); nil leaves it alone.
	StormPrevention *intent.PauseStormPrevention
	Files           []File
	// VerifyOnly marks DCB settings (DCBX, APP, PFC, ETS) that another owner
	// (the switch's DCBX advertisement) sets: they are compared, never written.
	VerifyOnly bool
}

func dcbxString(m uint8) string {
	var w []string
	if m&DCBXHost != 0 {
		w = append(w, "host")
	}
	if m&DCBXLLDManaged != 0 {
		w = append(w, "lld-managed")
	}
	if m&DCBXStatic != 0 {
		w = append(w, "static")
	}
	if m&DCBXVerCEE != 0 {
		w = append(w, "cee")
	}
	if m&DCBXVerIEEE != 0 {
		w = append(w, "ieee")
	}
	if len(w) == 0 {
		return fmt.Sprintf("%#x", m)
	}
	return strings.Join(w, " ")
}

// dcbxMatches reports whether the observed mode gives the desired owner.
// Host-managed wants HOST and IEEE without LLD_MANAGED (what mlx5 reports after
// `dcb dcbx set dev X host ieee`). Anything else wants the host out of the way:
// mlx5 in firmware mode reports just "cee ieee" (0x0c), an LLDP agent sets
// LLD_MANAGED; neither has HOST.
func dcbxMatches(want, have uint8) bool {
	if want&DCBXHost == 0 {
		return have&DCBXHost == 0
	}
	return have&DCBXHost != 0 && have&DCBXLLDManaged == 0 && have&DCBXVerIEEE != 0
}

// dcbxWant renders a desired DCBX mode.
func dcbxWant(m uint8) string {
	if m&DCBXHost == 0 {
		return "not host (firmware or LLDP agent, willing)"
	}
	return dcbxString(m)
}

func sortedKeys(m map[int]int) []int {
	k := make([]int, 0, len(m))
	for d := range m {
		k = append(k, d)
	}
	sort.Ints(k)
	return k
}
