package hostdrv

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/safchain/ethtool"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/fabricctl/fabricctl/hostdrv/internal/dcbnl"
)

// LinuxKernel is Kernel on Linux, in one network namespace.
type LinuxKernel struct {
	ns  netns.NsHandle
	h   *netlink.Handle
	dcb *nl.SocketHandle
}

// NewLinuxKernel opens rtnetlink in the namespace ns (netns.None() = the
// current one). Close it when done.
func NewLinuxKernel(ns netns.NsHandle) (*LinuxKernel, error) {
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return nil, fmt.Errorf("rtnetlink: %w", err)
	}
	s, err := nl.GetNetlinkSocketAt(ns, netns.None(), unix.NETLINK_ROUTE)
	if err != nil {
		h.Close()
		return nil, fmt.Errorf("rtnetlink (dcbnl): %w", err)
	}
	tv := unix.NsecToTimeval(nl.SocketTimeoutTv.Nano())
	_ = s.SetReceiveTimeout(&tv)
	_ = s.SetSendTimeout(&tv)
	return &LinuxKernel{ns: ns, h: h, dcb: &nl.SocketHandle{Socket: s}}, nil
}

// Close releases the netlink sockets.
func (k *LinuxKernel) Close() {
	k.h.Close()
	k.dcb.Close()
}

// Link implements Kernel.
func (k *LinuxKernel) Link(ifname string) (int, int, error) {
	l, err := k.h.LinkByName(ifname)
	if err != nil {
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) {
			return 0, 0, syscall.ENODEV
		}
		return 0, 0, err
	}
	return l.Attrs().Index, l.Attrs().MTU, nil
}

// SetMTU implements Kernel.
func (k *LinuxKernel) SetMTU(ifname string, mtu int) error {
	l, err := k.h.LinkByName(ifname)
	if err != nil {
		return syscall.ENODEV
	}
	return k.h.LinkSetMTU(l, mtu)
}

// DCB implements Kernel.
func (k *LinuxKernel) DCB(req dcbnl.Request) ([][]byte, error) {
	r := req.Netlink()
	r.Sockets = map[int]*nl.SocketHandle{unix.NETLINK_ROUTE: k.dcb}
	return r.Execute(unix.NETLINK_ROUTE, 0)
}

func (k *LinuxKernel) ethtool(f func(e *ethtool.Ethtool) error) error {
	// The ioctl socket must live in the namespace: open it there.
	var e *ethtool.Ethtool
	var err error
	if k.ns.IsOpen() {
		err = inNetns(k.ns, func() error {
			e, err = ethtool.NewEthtool()
			return err
		})
	} else {
		e, err = ethtool.NewEthtool()
	}
	if err != nil {
		return err
	}
	defer e.Close()
	return f(e)
}

// Pause implements Kernel.
func (k *LinuxKernel) Pause(ifname string) (Pause, error) {
	var p Pause
	err := k.ethtool(func(e *ethtool.Ethtool) error {
		ep, err := e.GetPause(ifname)
		p = Pause{Autoneg: ep.Autoneg != 0, RX: ep.RxPause != 0, TX: ep.TxPause != 0}
		return err
	})
	return p, err
}

// SetPause implements Kernel.
func (k *LinuxKernel) SetPause(ifname string, p Pause) error {
	return k.ethtool(func(e *ethtool.Ethtool) error {
		_, err := e.SetPause(ifname, ethtool.Pause{Autoneg: b2u(p.Autoneg), RxPause: b2u(p.RX), TxPause: b2u(p.TX)})
		return err
	})
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// setLinkMTURequest is the RTM_SETLINK request `ip link set dev X mtu N`
// (and netlink.LinkSetMTU) sends, for `-o netlink`.
func setLinkMTURequest(seq uint32, index, mtu int) []byte {
	req := nl.NewNetlinkRequest(unix.RTM_SETLINK, unix.NLM_F_ACK)
	req.Seq = seq
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Index = int32(index)
	req.AddData(msg)
	b := make([]byte, 4)
	nl.NativeEndian().PutUint32(b, uint32(mtu))
	req.AddData(nl.NewRtAttr(unix.IFLA_MTU, b))
	return req.Serialize()
}
