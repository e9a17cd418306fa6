package dcbnl

// Reply encoders: what the kernel sends back. fabricctl itself only decodes
// replies; these exist for test doubles that play the kernel's part and for
// decoder round-trip tests. They follow net/dcb/dcbnl.c: replies carry no
// NLA_F_NESTED bit, the IEEE nest holds ETS, MAXRATE, PFC, BUFFER and the
// APP table, and DCB_ATTR_DCBX follows the nest.

func appendAttr(b []byte, a Attr) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0)
	if a.Nested != nil {
		for _, c := range a.Nested {
			b = appendAttr(b, c)
		}
	} else {
		b = append(b, a.Data...)
	}
	l := len(b) - start
	ne.PutUint16(b[start:], uint16(l))
	ne.PutUint16(b[start+2:], a.Type)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func payload(cmd uint8, attrs ...Attr) []byte {
	b := []byte{0, cmd, 0, 0}
	for _, a := range attrs {
		b = appendAttr(b, a)
	}
	return b
}

// Payload returns the kernel's IEEE_GET reply payload (after the netlink
// header) for this state.
func (s IEEE) Payload() []byte {
	var kids []Attr
	if s.ETS != nil {
		kids = append(kids, leaf(AttrIEEEETS, mustMarshal(*s.ETS)))
	}
	if s.Maxrate != nil {
		kids = append(kids, leaf(AttrIEEEMaxrate, mustMarshal(*s.Maxrate)))
	}
	if s.PFC != nil {
		kids = append(kids, leaf(AttrIEEEPFC, mustMarshal(*s.PFC)))
	}
	if s.Buffer != nil {
		kids = append(kids, leaf(AttrIEEEBuffer, mustMarshal(*s.Buffer)))
	}
	if s.Apps != nil {
		t := Attr{Type: AttrIEEEAppTable, Nested: []Attr{}}
		for _, a := range s.Apps {
			t.Nested = append(t.Nested, leaf(AttrIEEEApp, mustMarshal(a)))
		}
		kids = append(kids, t)
	}
	if s.PeerETS != nil {
		kids = append(kids, leaf(AttrIEEEPeerETS, mustMarshal(*s.PeerETS)))
	}
	if s.PeerPFC != nil {
		kids = append(kids, leaf(AttrIEEEPeerPFC, mustMarshal(*s.PeerPFC)))
	}
	attrs := []Attr{ifnameAttr(s.Ifname), {Type: AttrIEEE, Nested: kids}}
	if s.HasDCBX {
		attrs = append(attrs, leaf(AttrDCBX, []byte{s.DCBX}))
	}
	return payload(CmdIEEEGet, attrs...)
}

// StatusPayload returns the kernel's reply payload to an IEEE_SET, IEEE_DEL
// (status = 0 or a negative errno) or SDCBX (status = the driver's u8) request.
func StatusPayload(cmd uint8, status int8) []byte {
	typ := uint16(AttrIEEE)
	if cmd == CmdSDCBX {
		typ = AttrDCBX
	}
	return payload(cmd, leaf(typ, []byte{byte(status)}))
}

// DCBXPayload returns the kernel's reply payload to GetDCBX.
func DCBXPayload(mode uint8) []byte {
	return payload(CmdGDCBX, leaf(AttrDCBX, []byte{mode}))
}
