package hostdrv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"syscall"
	"unsafe"

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
//
// Only NETLINK_ROUTE is opened: the netlink library's default handle also
// opens NETLINK_XFRM and NETLINK_NETFILTER, which are modules on Debian
// (CONFIG_XFRM_USER=m, CONFIG_NETFILTER_NETLINK=m). Where they are not
// loaded and cannot be (no modprobe, a container without CAP_SYS_MODULE),
// socket() fails with EPROTONOSUPPORT and every host command failed with
// "rtnetlink: protocol not supported" (seen in the soft-RoCE VM,
// internal/rdmavm).
func NewLinuxKernel(ns netns.NsHandle) (*LinuxKernel, error) {
	h, err := netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
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

// Link implements Kernel. IFLA_MAX_MTU is read from the RTM_GETLINK reply
// directly (the netlink library's LinkAttrs does not carry it).
func (k *LinuxKernel) Link(ifname string) (LinkInfo, error) {
	l, err := k.h.LinkByName(ifname)
	if err != nil {
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) {
			return LinkInfo{}, syscall.ENODEV
		}
		return LinkInfo{}, err
	}
	li := LinkInfo{Index: l.Attrs().Index, MTU: l.Attrs().MTU}
	li.MaxMTU, _ = k.maxMTU(li.Index) // optional: 0 when not reported
	return li, nil
}

func (k *LinuxKernel) maxMTU(index int) (int, error) {
	req := nl.NewNetlinkRequest(unix.RTM_GETLINK, 0)
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Index = int32(index)
	req.AddData(msg)
	req.Sockets = map[int]*nl.SocketHandle{unix.NETLINK_ROUTE: k.dcb}
	msgs, err := req.Execute(unix.NETLINK_ROUTE, unix.RTM_NEWLINK)
	if err != nil {
		return 0, err
	}
	for _, m := range msgs {
		if len(m) < unix.SizeofIfInfomsg {
			continue
		}
		attrs, err := nl.ParseRouteAttr(m[unix.SizeofIfInfomsg:])
		if err != nil {
			return 0, err
		}
		for _, a := range attrs {
			if a.Attr.Type == unix.IFLA_MAX_MTU && len(a.Value) >= 4 {
				return int(nl.NativeEndian().Uint32(a.Value)), nil
			}
		}
	}
	return 0, nil
}

// SetMTU implements Kernel: it sends setLinkMTURequest, the same bytes
// `-o netlink` shows (only the sequence number differs).
func (k *LinuxKernel) SetMTU(ifname string, mtu int) error {
	l, err := k.h.LinkByName(ifname)
	if err != nil {
		return syscall.ENODEV
	}
	raw := setLinkMTURequest(0, l.Attrs().Index, mtu)
	req := nl.NewNetlinkRequest(unix.RTM_NEWLINK, unix.NLM_F_ACK)
	req.AddRawData(raw[unix.SizeofNlMsghdr:])
	req.Sockets = map[int]*nl.SocketHandle{unix.NETLINK_ROUTE: k.dcb}
	_, err = req.Execute(unix.NETLINK_ROUTE, 0)
	return err
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

// setLinkMTURequest is the request `ip link set dev X mtu N` sends, for
// `-o netlink` and for SetMTU: RTM_NEWLINK with NLM_F_REQUEST|NLM_F_ACK, an
// ifinfomsg naming the interface by index and one IFLA_MTU attribute
// (iproute2 ip/iplink.c iplink_modify uses RTM_NEWLINK for `set`; captured
// with strace in testdata/iproute2/ip-link-set-mtu.txt). The netlink
// library's LinkSetMTU sends RTM_SETLINK instead, which the kernel handles
// the same way (rtnl_setlink and rtnl_newlink both end in do_setlink for an
// existing device) but which is not what the command line twin sends.
func setLinkMTURequest(seq uint32, index, mtu int) []byte {
	req := nl.NewNetlinkRequest(unix.RTM_NEWLINK, unix.NLM_F_ACK)
	req.Seq = seq
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Index = int32(index)
	req.AddData(msg)
	b := make([]byte, 4)
	nl.NativeEndian().PutUint32(b, uint32(mtu))
	req.AddData(nl.NewRtAttr(unix.IFLA_MTU, b))
	return req.Serialize()
}

// ifreqData is struct ifreq with ifr_data (include/uapi/linux/if.h): the
// name, then the pointer to the ethtool request, padded to sizeof(ifreq).
type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [24 - unsafe.Sizeof(uintptr(0))]byte
}

// ethtoolIoctl passes req (an ethtool command struct) to SIOCETHTOOL on
// ifname, over an AF_INET datagram socket opened in the namespace, as
// ethtool(8) does (ethtool.c ioctl_init). The kernel writes its answer
// into req.
func (k *LinuxKernel) ethtoolIoctl(ifname string, req []byte) error {
	if len(ifname) >= unix.IFNAMSIZ {
		return syscall.ENODEV
	}
	var fd int
	open := func() (err error) {
		fd, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		return err
	}
	var err error
	if k.ns.IsOpen() {
		err = inNetns(k.ns, open)
	} else {
		err = open()
	}
	if err != nil {
		return fmt.Errorf("ethtool socket: %w", err)
	}
	defer unix.Close(fd)
	var ifr ifreqData
	copy(ifr.name[:], ifname)
	ifr.data = unsafe.Pointer(&req[0])
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	runtime.KeepAlive(req)
	if errno != 0 {
		return errno
	}
	return nil
}

// PFCPreventionTimeout implements Kernel: ETHTOOL_GTUNABLE.
func (k *LinuxKernel) PFCPreventionTimeout(ifname string) (uint16, error) {
	req := pfcPreventionRequest(false, 0)
	if err := k.ethtoolIoctl(ifname, req); err != nil {
		return 0, err
	}
	return binary.NativeEndian.Uint16(req[tunableHeader:]), nil
}

// SetPFCPreventionTimeout implements Kernel: ETHTOOL_STUNABLE.
func (k *LinuxKernel) SetPFCPreventionTimeout(ifname string, v uint16) error {
	return k.ethtoolIoctl(ifname, pfcPreventionRequest(true, v))
}
