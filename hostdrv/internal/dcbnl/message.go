package dcbnl

import (
	"errors"
	"fmt"
	"syscall"
)

// Netlink header flags and the nested-attribute bit (include/uapi/linux/netlink.h).
const (
	flagRequest = 0x1    // NLM_F_REQUEST
	flagAck     = 0x4    // NLM_F_ACK
	nlaNested   = 0x8000 // NLA_F_NESTED
	nlaTypeMask = 0x3fff // ^(NLA_F_NESTED | NLA_F_NET_BYTEORDER)

	sizeNlmsghdr = 16
	sizeDcbmsg   = 4 // struct dcbmsg {u8 dcb_family; u8 cmd; u16 dcb_pad}
)

// Attr is one netlink attribute: a leaf with Data, or a nest of Nested.
// Type carries NLA_F_NESTED for nests, as iproute2 sends them.
type Attr struct {
	Type   uint16
	Data   []byte
	Nested []Attr
}

// Kind is the attribute type without the NLA_F_* flag bits.
func (a Attr) Kind() uint16 { return a.Type & nlaTypeMask }

func nest(typ uint16, children ...Attr) Attr { return Attr{Type: typ | nlaNested, Nested: children} }

func leaf(typ uint16, data []byte) Attr { return Attr{Type: typ, Data: data} }

// Request is one dcbnl request: RTM_GETDCB or RTM_SETDCB with a struct dcbmsg
// header and its attributes. It is plain data; Encode lays it out.
type Request struct {
	Type  uint16 // RTMGetDCB or RTMSetDCB
	Cmd   uint8  // CmdIEEESet, ...
	Attrs []Attr
}

// Ifname returns the DCB_ATTR_IFNAME of the request.
func (r Request) Ifname() string {
	for _, a := range r.Attrs {
		if a.Kind() == AttrIfname {
			return cstring(a.Data)
		}
	}
	return ""
}

func ifnameAttr(ifname string) Attr {
	return leaf(AttrIfname, append([]byte(ifname), 0))
}

// GetIEEE reads the whole IEEE configuration: ETS, PFC, APP, MAXRATE,
// BUFFER, peer objects and the DCBX mode. CLI twin: `dcb pfc show dev X`
// (every `dcb ... show`, including `dcb dcbx show`, sends this request).
func GetIEEE(ifname string) Request {
	return Request{Type: RTMGetDCB, Cmd: CmdIEEEGet, Attrs: []Attr{ifnameAttr(ifname)}}
}

// GetDCBX reads the DCBX mode alone (DCB_CMD_GDCBX).
func GetDCBX(ifname string) Request {
	return Request{Type: RTMGetDCB, Cmd: CmdGDCBX, Attrs: []Attr{ifnameAttr(ifname)}}
}

// SetDCBX sets the DCBX mode, e.g. DCBXHost|DCBXVerIEEE.
// CLI twin: `dcb dcbx set dev X host ieee`.
func SetDCBX(ifname string, mode uint8) Request {
	return Request{Type: RTMSetDCB, Cmd: CmdSDCBX, Attrs: []Attr{ifnameAttr(ifname), leaf(AttrDCBX, []byte{mode})}}
}

func setIEEE(cmd uint8, ifname string, obj Attr) Request {
	return Request{Type: RTMSetDCB, Cmd: cmd, Attrs: []Attr{ifnameAttr(ifname), nest(AttrIEEE, obj)}}
}

func mustMarshal(m interface{ MarshalBinary() ([]byte, error) }) []byte {
	b, _ := m.MarshalBinary() // the layouts here never fail
	return b
}

// SetETS writes the whole ETS object.
// CLI twin: `dcb ets set dev X prio-tc ... tc-tsa ... tc-bw ...` (which GETs, merges and SETs).
func SetETS(ifname string, e ETS) Request {
	return setIEEE(CmdIEEESet, ifname, leaf(AttrIEEEETS, mustMarshal(e)))
}

// SetPFC writes the whole PFC object. CLI twin: `dcb pfc set dev X prio-pfc 3:on delay N`.
func SetPFC(ifname string, p PFC) Request {
	return setIEEE(CmdIEEESet, ifname, leaf(AttrIEEEPFC, mustMarshal(p)))
}

// SetBuffer writes the receive buffer layout.
// CLI twin: `dcb buffer set dev X prio-buffer ... buffer-size ...`.
func SetBuffer(ifname string, b Buffer) Request {
	return setIEEE(CmdIEEESet, ifname, leaf(AttrIEEEBuffer, mustMarshal(b)))
}

// SetMaxrate writes the per-TC rate limits (kbit/s).
// CLI twin: `dcb maxrate set dev X tc-maxrate ...`.
func SetMaxrate(ifname string, m Maxrate) Request {
	return setIEEE(CmdIEEESet, ifname, leaf(AttrIEEEMaxrate, mustMarshal(m)))
}

func appTable(apps []App) Attr {
	t := nest(AttrIEEEAppTable)
	for _, a := range apps {
		t.Nested = append(t.Nested, leaf(AttrIEEEApp, mustMarshal(a)))
	}
	return t
}

// AddApps adds APP entries. CLI twin: `dcb app add dev X dscp-prio 26:3 48:6`.
func AddApps(ifname string, apps []App) Request {
	return setIEEE(CmdIEEESet, ifname, appTable(apps))
}

// DelApps deletes APP entries. CLI twin: `dcb app del dev X dscp-prio 26:3 48:6`.
func DelApps(ifname string, apps []App) Request {
	return setIEEE(CmdIEEEDel, ifname, appTable(apps))
}

// CmdName names a dcbnl command for messages.
func CmdName(cmd uint8) string {
	switch cmd {
	case CmdIEEESet:
		return "IEEE_SET"
	case CmdIEEEGet:
		return "IEEE_GET"
	case CmdGDCBX:
		return "GDCBX"
	case CmdSDCBX:
		return "SDCBX"
	case CmdIEEEDel:
		return "IEEE_DEL"
	}
	return fmt.Sprintf("DCB_CMD(%d)", cmd)
}

// DriverError is a failure the driver reported in the reply's status byte
// while the netlink ACK said success.
type DriverError struct {
	Cmd uint8
	// Status is the raw status: a negative errno for IEEE_SET / IEEE_DEL,
	// the driver's non-zero u8 for SDCBX.
	Status int8
}

func (e *DriverError) Error() string {
	if e.Cmd != CmdSDCBX && e.Status < 0 {
		return fmt.Sprintf("driver rejected %s: %v", CmdName(e.Cmd), syscall.Errno(-int(e.Status)))
	}
	return fmt.Sprintf("driver rejected %s (status %d)", CmdName(e.Cmd), e.Status)
}

// Unwrap returns the errno for IEEE_SET / IEEE_DEL failures, so callers can
// use errors.Is(err, syscall.EOPNOTSUPP).
func (e *DriverError) Unwrap() error {
	if e.Cmd != CmdSDCBX && e.Status < 0 {
		return syscall.Errno(-int(e.Status))
	}
	return nil
}

// ErrMalformed marks a reply that does not parse as dcbnl.
var ErrMalformed = errors.New("malformed dcbnl message")

// ParseAttrs parses a run of netlink attributes, recursing into nests
// (attributes with NLA_F_NESTED set, or the known nests of IEEE replies).
func ParseAttrs(b []byte) ([]Attr, error) {
	var out []Attr
	for len(b) > 0 {
		if len(b) < 4 {
			return nil, fmt.Errorf("%w: %d trailing bytes", ErrMalformed, len(b))
		}
		l := int(ne.Uint16(b[0:2]))
		typ := ne.Uint16(b[2:4])
		if l < 4 || l > len(b) {
			return nil, fmt.Errorf("%w: attribute %d length %d of %d", ErrMalformed, typ&nlaTypeMask, l, len(b))
		}
		a := Attr{Type: typ, Data: b[4:l]}
		if typ&nlaNested != 0 {
			n, err := ParseAttrs(a.Data)
			if err != nil {
				return nil, err
			}
			a.Nested, a.Data = n, nil
		}
		out = append(out, a)
		al := (l + 3) &^ 3
		if al > len(b) {
			al = len(b)
		}
		b = b[al:]
	}
	return out, nil
}

// nested returns the children of a, parsing Data when the sender did not set
// NLA_F_NESTED (the kernel's replies do not).
func nested(a Attr) ([]Attr, error) {
	if a.Nested != nil || a.Type&nlaNested != 0 {
		return a.Nested, nil
	}
	return ParseAttrs(a.Data)
}

// Header is the netlink message header.
type Header struct {
	Len   uint32
	Type  uint16
	Flags uint16
	Seq   uint32
	Pid   uint32
}

// ParseMessage parses one whole netlink message (header, dcbmsg, attributes),
// e.g. a request captured from iproute2 or a test double's input.
func ParseMessage(b []byte) (Header, Request, error) {
	if len(b) < sizeNlmsghdr+sizeDcbmsg {
		return Header{}, Request{}, fmt.Errorf("%w: %d bytes is shorter than the headers", ErrMalformed, len(b))
	}
	h := Header{Len: ne.Uint32(b[0:]), Type: ne.Uint16(b[4:]), Flags: ne.Uint16(b[6:]), Seq: ne.Uint32(b[8:]), Pid: ne.Uint32(b[12:])}
	if int(h.Len) != len(b) {
		return h, Request{}, fmt.Errorf("%w: nlmsg_len %d, have %d bytes", ErrMalformed, h.Len, len(b))
	}
	r, err := ParsePayload(h.Type, b[sizeNlmsghdr:])
	return h, r, err
}

// ParsePayload parses the part of a dcbnl message after the netlink header.
func ParsePayload(typ uint16, p []byte) (Request, error) {
	if len(p) < sizeDcbmsg {
		return Request{}, fmt.Errorf("%w: %d bytes is shorter than struct dcbmsg", ErrMalformed, len(p))
	}
	attrs, err := ParseAttrs(p[sizeDcbmsg:])
	if err != nil {
		return Request{}, err
	}
	return Request{Type: typ, Cmd: p[1], Attrs: attrs}, nil
}

// IEEE is the decoded reply to GetIEEE. Nil pointers mean the driver did not
// report that object.
type IEEE struct {
	Ifname   string
	ETS      *ETS
	PFC      *PFC
	Maxrate  *Maxrate
	Buffer   *Buffer
	Apps     []App // the APP table (nil when absent)
	PeerETS  *ETS
	PeerPFC  *PFC
	PeerApps []App
	DCBX     uint8
	HasDCBX  bool
}

// DecodeIEEE decodes the payload of an IEEE_GET reply.
func DecodeIEEE(payload []byte) (IEEE, error) {
	var out IEEE
	r, err := ParsePayload(RTMGetDCB, payload)
	if err != nil {
		return out, err
	}
	if r.Cmd != CmdIEEEGet {
		return out, fmt.Errorf("%w: reply command %s, want IEEE_GET", ErrMalformed, CmdName(r.Cmd))
	}
	for _, a := range r.Attrs {
		switch a.Kind() {
		case AttrIfname:
			out.Ifname = cstring(a.Data)
		case AttrDCBX:
			if len(a.Data) < 1 {
				return out, fmt.Errorf("%w: empty DCB_ATTR_DCBX", ErrMalformed)
			}
			out.DCBX, out.HasDCBX = a.Data[0], true
		case AttrIEEE:
			kids, err := nested(a)
			if err != nil {
				return out, err
			}
			if err := out.decodeIEEE(kids); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

func (out *IEEE) decodeIEEE(kids []Attr) error {
	for _, k := range kids {
		var err error
		switch k.Kind() {
		case AttrIEEEETS:
			out.ETS = new(ETS)
			err = out.ETS.UnmarshalBinary(k.Data)
		case AttrIEEEPeerETS:
			out.PeerETS = new(ETS)
			err = out.PeerETS.UnmarshalBinary(k.Data)
		case AttrIEEEPFC:
			out.PFC = new(PFC)
			err = out.PFC.UnmarshalBinary(k.Data)
		case AttrIEEEPeerPFC:
			out.PeerPFC = new(PFC)
			err = out.PeerPFC.UnmarshalBinary(k.Data)
		case AttrIEEEMaxrate:
			out.Maxrate = new(Maxrate)
			err = out.Maxrate.UnmarshalBinary(k.Data)
		case AttrIEEEBuffer:
			out.Buffer = new(Buffer)
			err = out.Buffer.UnmarshalBinary(k.Data)
		case AttrIEEEAppTable:
			out.Apps, err = decodeApps(k)
			if err == nil && out.Apps == nil {
				out.Apps = []App{}
			}
		case AttrIEEEPeerApp:
			out.PeerApps, err = decodeApps(k)
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrMalformed, err)
		}
	}
	return nil
}

// decodeApps reads an APP table: DCB_ATTR_IEEE_APP (1) entries, and
// DCB_ATTR_DCB_APP (2) which kernels >= 6.2 use for non-IEEE selectors.
func decodeApps(t Attr) ([]App, error) {
	kids, err := nested(t)
	if err != nil {
		return nil, err
	}
	var apps []App
	for _, k := range kids {
		if k.Kind() != AttrIEEEApp && k.Kind() != 2 {
			continue
		}
		var a App
		if err := a.UnmarshalBinary(k.Data); err != nil {
			return nil, err
		}
		apps = append(apps, a)
	}
	return apps, nil
}

// DecodeStatus checks the reply to an IEEE_SET, IEEE_DEL or SDCBX request:
// the kernel ACKs those with 0 even when the driver failed, and puts the
// driver's result in a one-byte attribute of the reply. A failure is
// returned as a *DriverError.
func DecodeStatus(payload []byte) error {
	r, err := ParsePayload(RTMSetDCB, payload)
	if err != nil {
		return err
	}
	want := uint16(AttrIEEE)
	if r.Cmd == CmdSDCBX {
		want = AttrDCBX
	}
	for _, a := range r.Attrs {
		if a.Kind() != want {
			continue
		}
		if len(a.Data) < 1 {
			return fmt.Errorf("%w: %s reply status attribute is empty", ErrMalformed, CmdName(r.Cmd))
		}
		if st := int8(a.Data[0]); st != 0 {
			return &DriverError{Cmd: r.Cmd, Status: st}
		}
		return nil
	}
	return fmt.Errorf("%w: %s reply has no status attribute", ErrMalformed, CmdName(r.Cmd))
}

// DecodeDCBX decodes the reply to GetDCBX.
func DecodeDCBX(payload []byte) (uint8, error) {
	r, err := ParsePayload(RTMGetDCB, payload)
	if err != nil {
		return 0, err
	}
	for _, a := range r.Attrs {
		if a.Kind() == AttrDCBX && len(a.Data) >= 1 {
			return a.Data[0], nil
		}
	}
	return 0, fmt.Errorf("%w: GDCBX reply has no DCB_ATTR_DCBX", ErrMalformed)
}

func cstring(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
