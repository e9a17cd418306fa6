package dcbnl

import (
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// dcbmsg is struct dcbmsg {u8 dcb_family; u8 cmd; u16 dcb_pad}.
type dcbmsg struct{ cmd uint8 }

func (m dcbmsg) Len() int          { return sizeDcbmsg }
func (m dcbmsg) Serialize() []byte { return []byte{unix.AF_UNSPEC, m.cmd, 0, 0} }

func rtAttr(a Attr) *nl.RtAttr {
	ra := nl.NewRtAttr(int(a.Type), a.Data)
	for _, c := range a.Nested {
		ra.AddChild(rtAttr(c))
	}
	return ra
}

// Netlink builds the request as an nl.NetlinkRequest with NLM_F_REQUEST |
// NLM_F_ACK, the flags iproute2's dcb uses. Its sequence number comes from
// nl's counter (or the socket's, when executed on a shared socket).
func (r Request) Netlink() *nl.NetlinkRequest {
	req := nl.NewNetlinkRequest(int(r.Type), unix.NLM_F_ACK)
	req.AddData(dcbmsg{cmd: r.Cmd})
	for _, a := range r.Attrs {
		req.AddData(rtAttr(a))
	}
	return req
}

// Encode returns the request's wire bytes with the given sequence number and
// port id.
func (r Request) Encode(seq, pid uint32) ([]byte, error) {
	req := r.Netlink()
	req.Seq, req.Pid = seq, pid
	return req.Serialize(), nil
}
