package dcbnl

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSetObjectFraming checks the requests dcb(8) cannot be captured sending
// on a veth (`dcb pfc|ets|buffer|maxrate set` GET first, and the GET fails):
// iproute2's dcb_set_attribute puts the object, as is, in a DCB_ATTR_IEEE
// nest opened with mnl_attr_nest_start (NLA_F_NESTED), exactly like the
// captured `dcb app add`. Assembled byte by byte here.
func TestSetObjectFraming(t *testing.T) {
	le16 := func(v int) []byte { b := make([]byte, 2); ne.PutUint16(b, uint16(v)); return b }
	le32 := func(v int) []byte { b := make([]byte, 4); ne.PutUint32(b, uint32(v)); return b }
	pad := func(b []byte) []byte {
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
		return b
	}
	want := func(attr int, obj []byte) []byte {
		ifn := pad(append(append(le16(4+10), le16(AttrIfname)...), "ens1f0np0\x00"...))
		inner := pad(append(append(le16(4+len(obj)), le16(attr)...), obj...))
		nestb := append(append(le16(4+len(inner)), le16(AttrIEEE|0x8000)...), inner...)
		body := append([]byte{0, CmdIEEESet, 0, 0}, ifn...)
		body = append(body, nestb...)
		hdr := append(le32(16+len(body)), le16(RTMSetDCB)...)
		hdr = append(hdr, le16(0x5)...) // NLM_F_REQUEST|NLM_F_ACK
		hdr = append(hdr, le32(7)...)   // seq
		hdr = append(hdr, le32(0)...)   // pid
		return append(hdr, body...)
	}
	pfc := PFC{Cap: 8, Enable: 0x08, Delay: 3}
	ets := ETS{TCTxBW: [8]uint8{50, 0, 0, 50}, TSA: [8]uint8{2, 2, 2, 2, 2, 2, 0, 2}, PrioTC: [8]uint8{0, 0, 0, 3, 0, 0, 6, 0}}
	buf := Buffer{PrioBuffer: [8]uint8{0, 0, 0, 1}, Size: [8]uint32{262144, 131072}}
	mr := Maxrate{TCMaxrate: [8]uint64{0, 0, 0, 100_000_000}}
	tests := []struct {
		name string
		req  Request
		attr int
		obj  []byte
	}{
		{"pfc", SetPFC("ens1f0np0", pfc), AttrIEEEPFC, mustMarshal(pfc)},
		{"ets", SetETS("ens1f0np0", ets), AttrIEEEETS, mustMarshal(ets)},
		{"buffer", SetBuffer("ens1f0np0", buf), AttrIEEEBuffer, mustMarshal(buf)},
		{"maxrate", SetMaxrate("ens1f0np0", mr), AttrIEEEMaxrate, mustMarshal(mr)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.req.Encode(7, 0)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(hexLines(want(tc.attr, tc.obj)), hexLines(got)); diff != "" {
				t.Errorf("Encode(Set %s) (-want +got):\n%s", tc.name, diff)
			}
		})
	}
}
