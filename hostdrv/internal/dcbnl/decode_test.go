package dcbnl

import (
	"errors"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// kernelReply assembles an IEEE_GET reply the way net/dcb/dcbnl.c does
// (dcbnl_ieee_fill: IFNAME, IEEE nest without NLA_F_NESTED holding ETS, PFC
// and the APP table, then DCBX), byte by byte and independently of the
// package's own reply encoder.
func kernelReply() []byte {
	le := func(v uint16) []byte { b := make([]byte, 2); ne.PutUint16(b, v); return b }
	attr := func(typ uint16, data []byte) []byte {
		b := append(le(uint16(4+len(data))), le(typ)...)
		b = append(b, data...)
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
		return b
	}
	ets := make([]byte, 59)
	ets[1] = 8                                      // ets_cap
	copy(ets[3:], []byte{50, 0, 0, 50, 0, 0, 0, 0}) // tc_tx_bw
	copy(ets[19:], []byte{2, 0, 0, 2, 0, 0, 0, 0})  // tc_tsa: TC6 strict(0), TC0/TC3 ETS
	copy(ets[27:], []byte{0, 0, 0, 3, 0, 0, 6, 0})  // prio_tc
	pfc := make([]byte, 136)
	pfc[0], pfc[1] = 8, 0x08         // cap 8, pfc_en prio 3
	ne.PutUint16(pfc[4:], 3)         // delay: 3 m cable on mlx5
	ne.PutUint64(pfc[8+3*8:], 12345) // requests[3]
	ne.PutUint64(pfc[72+3*8:], 678)  // indications[3]
	app := func(sel, prio uint8, proto uint16) []byte { return append([]byte{sel, prio}, le(proto)...) }
	table := append(attr(1, app(5, 3, 26)), attr(1, app(5, 6, 48))...)
	ieee := append(attr(1, ets), attr(2, pfc)...)
	ieee = append(ieee, attr(3, table)...)
	b := []byte{0, CmdIEEEGet, 0, 0}
	b = append(b, attr(1, []byte("ens1f0np0\x00"))...)
	b = append(b, attr(13, ieee)...)
	b = append(b, attr(14, []byte{DCBXHost | DCBXVerIEEE})...)
	return b
}

func wantKernelReply() IEEE {
	ets := &ETS{ETSCap: 8,
		TCTxBW: [8]uint8{50, 0, 0, 50}, TSA: [8]uint8{2, 0, 0, 2}, PrioTC: [8]uint8{0, 0, 0, 3, 0, 0, 6, 0}}
	pfc := &PFC{Cap: 8, Enable: 0x08, Delay: 3}
	pfc.Requests[3], pfc.Indications[3] = 12345, 678
	return IEEE{
		Ifname: "ens1f0np0", ETS: ets, PFC: pfc,
		Apps: []App{{SelectorDSCP, 3, 26}, {SelectorDSCP, 6, 48}},
		DCBX: DCBXHost | DCBXVerIEEE, HasDCBX: true,
	}
}

func TestDecodeIEEE(t *testing.T) {
	got, err := DecodeIEEE(kernelReply())
	if err != nil {
		t.Fatalf("DecodeIEEE: %v", err)
	}
	if diff := cmp.Diff(wantKernelReply(), got); diff != "" {
		t.Errorf("DecodeIEEE mismatch (-want +got):\n%s", diff)
	}
}

func TestReplyPayloadRoundTrip(t *testing.T) {
	want := wantKernelReply()
	want.Buffer = &Buffer{PrioBuffer: [8]uint8{0, 0, 0, 1}, Size: [8]uint32{130000, 262144}, Total: 524288}
	want.Maxrate = &Maxrate{}
	want.PeerPFC = &PFC{Cap: 8, Enable: 0x08}
	got, err := DecodeIEEE(want.Payload())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DecodeIEEE(Payload()) mismatch (-want +got):\n%s", diff)
	}
	// Byte-identical to the kernel's layout for the fields both carry.
	base := wantKernelReply()
	if diff := cmp.Diff(kernelReply(), base.Payload()); diff != "" {
		t.Errorf("IEEE.Payload differs from the kernel layout (-want +got):\n%s", diff)
	}
}

func TestDecodeEmptyAppTable(t *testing.T) {
	s := IEEE{Ifname: "x", Apps: []App{}}
	got, err := DecodeIEEE(s.Payload())
	if err != nil {
		t.Fatal(err)
	}
	if got.Apps == nil {
		t.Errorf("DecodeIEEE(empty APP table).Apps = nil, want an empty non-nil table (present but empty)")
	}
}

func TestDecodeStatus(t *testing.T) {
	tests := []struct {
		name    string
		payload []byte
		errno   error // errors.Is target, nil = success expected
		driver  bool  // want a *DriverError
		bad     bool  // want ErrMalformed
	}{
		{name: "ieee set ok", payload: StatusPayload(CmdIEEESet, 0)},
		{name: "ieee set EOPNOTSUPP", payload: StatusPayload(CmdIEEESet, -int8(syscall.EOPNOTSUPP)), errno: syscall.EOPNOTSUPP, driver: true},
		{name: "ieee del EINVAL", payload: StatusPayload(CmdIEEEDel, -int8(syscall.EINVAL)), errno: syscall.EINVAL, driver: true},
		{name: "sdcbx ok", payload: StatusPayload(CmdSDCBX, 0)},
		{name: "sdcbx refused", payload: StatusPayload(CmdSDCBX, 1), driver: true},
		{name: "raw byte 0xa1 is -95", payload: []byte{0, CmdIEEESet, 0, 0, 5, 0, 13, 0, 0xa1, 0, 0, 0}, errno: syscall.EOPNOTSUPP, driver: true},
		{name: "no status attribute", payload: []byte{0, CmdIEEESet, 0, 0}, bad: true},
		{name: "empty status attribute", payload: []byte{0, CmdIEEESet, 0, 0, 4, 0, 13, 0}, bad: true},
		{name: "truncated", payload: []byte{0, CmdIEEESet}, bad: true},
		{name: "attribute overruns", payload: []byte{0, CmdIEEESet, 0, 0, 40, 0, 13, 0, 0}, bad: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := DecodeStatus(tc.payload)
			var de *DriverError
			if got := errors.As(err, &de); got != tc.driver {
				t.Errorf("DecodeStatus() = %v; is *DriverError: got %v, want %v", err, got, tc.driver)
			}
			if tc.errno != nil && !errors.Is(err, tc.errno) {
				t.Errorf("DecodeStatus() = %v, want errors.Is(%v)", err, tc.errno)
			}
			if got := errors.Is(err, ErrMalformed); got != tc.bad {
				t.Errorf("DecodeStatus() = %v; ErrMalformed: got %v, want %v", err, got, tc.bad)
			}
			if !tc.driver && !tc.bad && err != nil {
				t.Errorf("DecodeStatus() = %v, want nil", err)
			}
		})
	}
}

func TestDecodeDCBX(t *testing.T) {
	got, err := DecodeDCBX(DCBXPayload(DCBXLLDManaged | DCBXVerIEEE))
	if err != nil {
		t.Fatal(err)
	}
	if got != DCBXLLDManaged|DCBXVerIEEE {
		t.Errorf("DecodeDCBX = %#x, want %#x", got, DCBXLLDManaged|DCBXVerIEEE)
	}
	if _, err := DecodeDCBX([]byte{0, CmdGDCBX, 0, 0}); !errors.Is(err, ErrMalformed) {
		t.Errorf("DecodeDCBX(no attribute) = %v, want ErrMalformed", err)
	}
}

// TestDecodeTruncatedNeverPanics feeds every prefix of a valid reply, and
// corrupts each length byte, to all decoders.
func TestDecodeTruncatedNeverPanics(t *testing.T) {
	full := kernelReply()
	for i := range len(full) {
		_, _ = DecodeIEEE(full[:i])
		_ = DecodeStatus(full[:i])
		_, _ = DecodeDCBX(full[:i])
		c := append([]byte(nil), full...)
		c[i] ^= 0xff
		_, _ = DecodeIEEE(c)
	}
}

func FuzzDecodeIEEE(f *testing.F) {
	f.Add(kernelReply())
	f.Add(StatusPayload(CmdIEEESet, -95))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = DecodeIEEE(b)
		_ = DecodeStatus(b)
		_, _, _ = ParseMessage(b)
	})
}
