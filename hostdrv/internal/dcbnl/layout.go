package dcbnl

import (
	"encoding/binary"
	"fmt"
)

// Message types (rtnetlink) and dcbnl commands, from include/uapi/linux/rtnetlink.h
// and include/uapi/linux/dcbnl.h.
const (
	RTMGetDCB = 78 // RTM_GETDCB
	RTMSetDCB = 79 // RTM_SETDCB

	CmdIEEESet = 20 // DCB_CMD_IEEE_SET
	CmdIEEEGet = 21 // DCB_CMD_IEEE_GET
	CmdGDCBX   = 22 // DCB_CMD_GDCBX
	CmdSDCBX   = 23 // DCB_CMD_SDCBX
	CmdIEEEDel = 27 // DCB_CMD_IEEE_DEL
)

// Top-level attributes (enum dcbnl_attrs).
const (
	AttrIfname = 1  // DCB_ATTR_IFNAME, NUL-terminated string
	AttrIEEE   = 13 // DCB_ATTR_IEEE, nested (or a u8 status in SET/DEL replies)
	AttrDCBX   = 14 // DCB_ATTR_DCBX, u8
)

// Attributes nested in AttrIEEE (enum ieee_attrs).
const (
	AttrIEEEETS      = 1  // DCB_ATTR_IEEE_ETS, struct ieee_ets
	AttrIEEEPFC      = 2  // DCB_ATTR_IEEE_PFC, struct ieee_pfc
	AttrIEEEAppTable = 3  // DCB_ATTR_IEEE_APP_TABLE, nested AttrIEEEApp
	AttrIEEEPeerETS  = 4  // DCB_ATTR_IEEE_PEER_ETS
	AttrIEEEPeerPFC  = 5  // DCB_ATTR_IEEE_PEER_PFC
	AttrIEEEPeerApp  = 6  // DCB_ATTR_IEEE_PEER_APP
	AttrIEEEMaxrate  = 7  // DCB_ATTR_IEEE_MAXRATE, struct ieee_maxrate
	AttrIEEEBuffer   = 10 // DCB_ATTR_DCB_BUFFER, struct dcbnl_buffer
	AttrIEEEApp      = 1  // DCB_ATTR_IEEE_APP inside the APP table, struct dcb_app
)

// DCBX capability flags (DCB_CAP_DCBX_*).
const (
	DCBXHost       = 0x01
	DCBXLLDManaged = 0x02
	DCBXVerCEE     = 0x04
	DCBXVerIEEE    = 0x08
	DCBXStatic     = 0x10
)

// Transmission selection algorithms (IEEE_8021QAZ_TSA_*).
const (
	TSAStrict   = 0
	TSACBShaper = 1
	TSAETS      = 2
	TSAVendor   = 255
)

// SelectorDSCP is the APP selector for DSCP -> priority entries
// (IEEE_8021QAZ_APP_SEL_DSCP).
const SelectorDSCP = 5

// MaxTCs is IEEE_8021QAZ_MAX_TCS (also the number of priorities and buffers).
const MaxTCs = 8

// Struct sizes in bytes, as the kernel (x86-64 and arm64) lays them out.
const (
	SizeETS     = 59  // struct ieee_ets
	SizePFC     = 136 // struct ieee_pfc (u16 delay at 4, u64 arrays 8-aligned)
	SizeApp     = 4   // struct dcb_app
	SizeBuffer  = 44  // struct dcbnl_buffer
	SizeMaxrate = 64  // struct ieee_maxrate
)

var ne = binary.NativeEndian

// ETS is struct ieee_ets: IEEE 802.1Qaz Enhanced Transmission Selection.
// Index TC for TCTxBW/TCRxBW/TSA/Reco*, index priority for PrioTC.
type ETS struct {
	Willing    uint8
	ETSCap     uint8
	CBS        uint8
	TCTxBW     [MaxTCs]uint8 // percent per TC (ETS TCs sum to 100)
	TCRxBW     [MaxTCs]uint8
	TSA        [MaxTCs]uint8 // TSAStrict, TSAETS, ...
	PrioTC     [MaxTCs]uint8 // priority -> TC
	TCRecoBW   [MaxTCs]uint8
	TCRecoTSA  [MaxTCs]uint8
	RecoPrioTC [MaxTCs]uint8
}

// Offsets of struct ieee_ets fields.
const (
	offETSWilling    = 0
	offETSCap        = 1
	offETSCBS        = 2
	offETSTxBW       = 3
	offETSRxBW       = 11
	offETSTSA        = 19
	offETSPrioTC     = 27
	offETSRecoBW     = 35
	offETSRecoTSA    = 43
	offETSRecoPrioTC = 51
)

// MarshalBinary lays e out as struct ieee_ets.
func (e ETS) MarshalBinary() ([]byte, error) {
	b := make([]byte, SizeETS)
	b[offETSWilling], b[offETSCap], b[offETSCBS] = e.Willing, e.ETSCap, e.CBS
	copy(b[offETSTxBW:], e.TCTxBW[:])
	copy(b[offETSRxBW:], e.TCRxBW[:])
	copy(b[offETSTSA:], e.TSA[:])
	copy(b[offETSPrioTC:], e.PrioTC[:])
	copy(b[offETSRecoBW:], e.TCRecoBW[:])
	copy(b[offETSRecoTSA:], e.TCRecoTSA[:])
	copy(b[offETSRecoPrioTC:], e.RecoPrioTC[:])
	return b, nil
}

// UnmarshalBinary reads struct ieee_ets.
func (e *ETS) UnmarshalBinary(b []byte) error {
	if len(b) < SizeETS {
		return fmt.Errorf("ieee_ets: %d bytes, want %d", len(b), SizeETS)
	}
	e.Willing, e.ETSCap, e.CBS = b[offETSWilling], b[offETSCap], b[offETSCBS]
	copy(e.TCTxBW[:], b[offETSTxBW:])
	copy(e.TCRxBW[:], b[offETSRxBW:])
	copy(e.TSA[:], b[offETSTSA:])
	copy(e.PrioTC[:], b[offETSPrioTC:])
	copy(e.TCRecoBW[:], b[offETSRecoBW:])
	copy(e.TCRecoTSA[:], b[offETSRecoTSA:])
	copy(e.RecoPrioTC[:], b[offETSRecoPrioTC:])
	return nil
}

// PFC is struct ieee_pfc: IEEE 802.1Qbb Priority-based Flow Control.
type PFC struct {
	Cap    uint8 // pfc_cap: how many priorities can be lossless
	Enable uint8 // pfc_en: bit p set = PFC on priority p
	MBC    uint8
	// Delay is "the allowance made for a round-trip propagation delay of the
	// link in bits"; mlx5 reads it as the cable length in metres.
	Delay       uint16
	Requests    [MaxTCs]uint64 // PFC frames sent, per priority (read-only)
	Indications [MaxTCs]uint64 // PFC frames received, per priority (read-only)
}

// Offsets of struct ieee_pfc fields.
const (
	offPFCCap         = 0
	offPFCEnable      = 1
	offPFCMBC         = 2
	offPFCDelay       = 4
	offPFCRequests    = 8
	offPFCIndications = 72
)

// MarshalBinary lays p out as struct ieee_pfc (padding bytes 3, 6 and 7 zero).
func (p PFC) MarshalBinary() ([]byte, error) {
	b := make([]byte, SizePFC)
	b[offPFCCap], b[offPFCEnable], b[offPFCMBC] = p.Cap, p.Enable, p.MBC
	ne.PutUint16(b[offPFCDelay:], p.Delay)
	for i := range MaxTCs {
		ne.PutUint64(b[offPFCRequests+8*i:], p.Requests[i])
		ne.PutUint64(b[offPFCIndications+8*i:], p.Indications[i])
	}
	return b, nil
}

// UnmarshalBinary reads struct ieee_pfc.
func (p *PFC) UnmarshalBinary(b []byte) error {
	if len(b) < SizePFC {
		return fmt.Errorf("ieee_pfc: %d bytes, want %d", len(b), SizePFC)
	}
	p.Cap, p.Enable, p.MBC = b[offPFCCap], b[offPFCEnable], b[offPFCMBC]
	p.Delay = ne.Uint16(b[offPFCDelay:])
	for i := range MaxTCs {
		p.Requests[i] = ne.Uint64(b[offPFCRequests+8*i:])
		p.Indications[i] = ne.Uint64(b[offPFCIndications+8*i:])
	}
	return nil
}

// App is struct dcb_app: one APP table entry. With Selector SelectorDSCP,
// Protocol is the DSCP value and Priority the 802.1p priority it maps to.
type App struct {
	Selector uint8
	Priority uint8
	Protocol uint16
}

// MarshalBinary lays a out as struct dcb_app.
func (a App) MarshalBinary() ([]byte, error) {
	b := make([]byte, SizeApp)
	b[0], b[1] = a.Selector, a.Priority
	ne.PutUint16(b[2:], a.Protocol)
	return b, nil
}

// UnmarshalBinary reads struct dcb_app.
func (a *App) UnmarshalBinary(b []byte) error {
	if len(b) < SizeApp {
		return fmt.Errorf("dcb_app: %d bytes, want %d", len(b), SizeApp)
	}
	a.Selector, a.Priority, a.Protocol = b[0], b[1], ne.Uint16(b[2:])
	return nil
}

// Buffer is struct dcbnl_buffer: receive buffer layout of the port.
type Buffer struct {
	PrioBuffer [MaxTCs]uint8  // priority -> buffer index
	Size       [MaxTCs]uint32 // bytes per buffer
	Total      uint32         // total_size (read-only on mlx5)
}

const (
	offBufPrio  = 0
	offBufSize  = 8
	offBufTotal = 40
)

// MarshalBinary lays b out as struct dcbnl_buffer.
func (bu Buffer) MarshalBinary() ([]byte, error) {
	b := make([]byte, SizeBuffer)
	copy(b[offBufPrio:], bu.PrioBuffer[:])
	for i := range MaxTCs {
		ne.PutUint32(b[offBufSize+4*i:], bu.Size[i])
	}
	ne.PutUint32(b[offBufTotal:], bu.Total)
	return b, nil
}

// UnmarshalBinary reads struct dcbnl_buffer.
func (bu *Buffer) UnmarshalBinary(b []byte) error {
	if len(b) < SizeBuffer {
		return fmt.Errorf("dcbnl_buffer: %d bytes, want %d", len(b), SizeBuffer)
	}
	copy(bu.PrioBuffer[:], b[offBufPrio:])
	for i := range MaxTCs {
		bu.Size[i] = ne.Uint32(b[offBufSize+4*i:])
	}
	bu.Total = ne.Uint32(b[offBufTotal:])
	return nil
}

// Maxrate is struct ieee_maxrate: per-TC transmit rate limits in kbit/s
// (0 = unlimited). iproute2 before 6.18 sends bytes/s here by mistake.
type Maxrate struct {
	TCMaxrate [MaxTCs]uint64
}

// MarshalBinary lays m out as struct ieee_maxrate.
func (m Maxrate) MarshalBinary() ([]byte, error) {
	b := make([]byte, SizeMaxrate)
	for i := range MaxTCs {
		ne.PutUint64(b[8*i:], m.TCMaxrate[i])
	}
	return b, nil
}

// UnmarshalBinary reads struct ieee_maxrate.
func (m *Maxrate) UnmarshalBinary(b []byte) error {
	if len(b) < SizeMaxrate {
		return fmt.Errorf("ieee_maxrate: %d bytes, want %d", len(b), SizeMaxrate)
	}
	for i := range MaxTCs {
		m.TCMaxrate[i] = ne.Uint64(b[8*i:])
	}
	return nil
}
