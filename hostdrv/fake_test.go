package hostdrv

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/fabricctl/fabricctl/hostdrv/internal/dcbnl"
)

// fakeKernel is a test double for Kernel that plays the kernel and an mlx5
// driver: every dcbnl request is encoded to bytes and parsed back with
// dcbnl.ParseMessage (so the encoder is exercised), the state is kept per
// interface, and replies are kernel-format payloads. It counts writes.
//
// The mlx5 model follows drivers/net/ethernet/mellanox/mlx5/core/en_dcbnl.c
// and en/port_buffer.c function by function (named in the comments): DSCP
// trust and the firmware's dscp2prio map behind the kernel's APP list, the
// software-owned buffer flag (manual_buffer), the cable length, and the
// lossless-buffer minimum computed from speed, cable and MTU
// (calculate_xoff / update_xoff_threshold), with global pause making every
// priority lossless (fill_pfc_en).
type fakeKernel struct {
	mu     sync.Mutex
	nics   map[string]*fakeNIC
	writes int
	flaps  int // PFC writes that changed pfc_en (an mlx5 link flap)
	// sent are the dcbnl SET/DEL requests received, as wire bytes (seq 1, pid 0).
	sent [][]byte
	// order logs every write as "ifname kind" (mtu, pause, dcbx, pfc, ets,
	// buffer, app-add, app-del), in the order received.
	order []string
	// onSetMTU, when set, runs after each MTU write (a test hook, e.g. to
	// cancel the apply's context there).
	onSetMTU func()
}

type fakeNIC struct {
	index, mtu int
	maxMTU     int // netdev max_mtu (IFLA_MAX_MTU)
	speedMbps  int // what mlx5e_port_linkspeed reports
	ieee       dcbnl.IEEE
	pause      Pause
	noDCB      bool // no dcbnl ops: EOPNOTSUPP as a netlink error (VF, veth)
	noPause    bool
	// noStorm: no pause storm prevention (ETHTOOL_PFC_PREVENTION_TOUT
	// answers EOPNOTSUPP: an mlx5 port without the pfcc_mask or
	// stall_detect capability, or any driver without tunables).
	noStorm bool
	// stormTout is the stall critical watermark mlx5e_get_pfc_prevention_tout
	// reads (ms, 0 = off; the fake starts at 0, a test value: the firmware's
	// default is in no source).
	stormTout uint16
	rejectPFC bool // the driver answers IEEE_SET PFC with status -EINVAL
	mlx5      bool // the mlx5 model below; false = a plain IEEE driver
	// pfcTraffic: pause frames flow, so the PFC requests/indications
	// counters move between two reads (a live lossless link).
	pfcTraffic bool
	// noBuffer: an mlx5 port whose receive buffer the driver does not
	// manage (!MLX5_BUFFER_SUPPORTED): mlx5e_dcbnl_ieee_getpfc then reports
	// delay 0 whatever cable length was set.
	noBuffer bool

	// mlx5 driver and firmware state.
	cable        uint16    // priv->dcbx.cable_len (MLX5E_DEFAULT_CABLE_LEN 7)
	manualBuffer bool      // priv->dcbx.manual_buffer
	lossy        [8]bool   // PBMC buffer[i].lossy
	xoff         uint64    // priv->dcbx.xoff
	trustDSCP    bool      // QPTS trust state (false = PCP)
	dscp2prio    [64]uint8 // QPDPM, the firmware's map (default DSCP>>3)
	dscpAppCnt   int       // priv->dcbx.dscp_app_cnt
	fwMode       bool      // DCBX owned by the firmware (MLX5E_DCBX_PARAM_VER_OPER_AUTO)
}

// fakeMLX5MaxMTU is the netdev max_mtu the fake reports (a test value above
// mlx5's MINIMUM_MAX_MTU floor of 9216, so the floor does not hide it).
const fakeMLX5MaxMTU = 9978

func newFakeKernel(ifnames ...string) *fakeKernel {
	k := &fakeKernel{nics: map[string]*fakeNIC{}}
	for i, n := range ifnames {
		x := &fakeNIC{index: i + 2, mtu: 1500, maxMTU: fakeMLX5MaxMTU, speedMbps: 400000, mlx5: true,
			pause: Pause{RX: true, TX: true}, cable: 7, fwMode: true,
			ieee: dcbnl.IEEE{Ifname: n, ETS: &dcbnl.ETS{ETSCap: 8}, PFC: &dcbnl.PFC{Cap: 8}, Apps: []dcbnl.App{},
				// mlx5 in firmware DCBX mode, cable length 7 m (MLX5E_DEFAULT_CABLE_LEN),
				// every priority in buffer 0 (the firmware's default layout).
				Buffer: &dcbnl.Buffer{Size: [8]uint32{fakeCell * 512}, Total: fakeBufferTotal},
				DCBX:   DCBXVerIEEE | DCBXVerCEE, HasDCBX: true}}
		for b := range x.lossy {
			x.lossy[b] = true
		}
		for d := range x.dscp2prio {
			x.dscp2prio[d] = uint8(d >> 3) // the firmware's default map
		}
		k.nics[n] = x
	}
	return k
}

// fakeCell is the fake mlx5's buffer cell (port_buff_cell_sz; 128 B is the
// driver's fallback) and fakeBufferTotal its port buffer (total_size).
const (
	fakeCell        = 128
	fakeBufferTotal = fakeCell * 4096
)

// losslessMin is the smallest lossless buffer the fake takes now:
// xoff + max(max_mtu, MINIMUM_MAX_MTU) + cell (update_xoff_threshold).
func (n *fakeNIC) losslessMin() uint64 {
	return n.calcXoff() + uint64(max(n.maxMTU, 9216)) + fakeCell
}

// calcXoff is calculate_xoff: (301 + 216*cable/100) * speed/1000 +
// 272*mtu/100, speed in Mb/s and at least SPEED_40000. Written out here on
// its own (not through MLX5Headroom) so the test double and the planner
// are two readings of the driver source.
func (n *fakeNIC) calcXoff() uint64 {
	speed := uint64(n.speedMbps)
	if speed < 40000 {
		speed = 40000
	}
	return (301+216*uint64(n.cable)/100)*speed/1000 + 272*uint64(n.mtu)/100
}

// classify returns the priority the NIC gives a received packet with DSCP
// d, or -1 when the port trusts PCP (the DSCP is not looked at).
func (n *fakeNIC) classify(d int) int {
	if !n.trustDSCP {
		return -1
	}
	return int(n.dscp2prio[d])
}

func (k *fakeKernel) nic(n string) (*fakeNIC, error) {
	if x, ok := k.nics[n]; ok {
		return x, nil
	}
	return nil, syscall.ENODEV
}

func (k *fakeKernel) Link(ifname string) (LinkInfo, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	n, err := k.nic(ifname)
	if err != nil {
		return LinkInfo{}, err
	}
	return LinkInfo{Index: n.index, MTU: n.mtu, MaxMTU: n.maxMTU}, nil
}

func (k *fakeKernel) SetMTU(ifname string, mtu int) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	n, err := k.nic(ifname)
	if err != nil {
		return err
	}
	k.writes++
	k.order = append(k.order, ifname+" mtu")
	n.mtu = mtu
	if k.onSetMTU != nil {
		k.onSetMTU()
	}
	return nil
}

func (k *fakeKernel) Pause(ifname string) (Pause, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	n, err := k.nic(ifname)
	if err != nil {
		return Pause{}, err
	}
	if n.noPause {
		return Pause{}, syscall.EOPNOTSUPP
	}
	p := n.pause
	if n.mlx5 {
		p.Autoneg = false // mlx5e_ethtool_get_pauseparam never sets autoneg
	}
	return p, nil
}

func (k *fakeKernel) SetPause(ifname string, p Pause) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	n, err := k.nic(ifname)
	if err != nil {
		return err
	}
	if n.noPause {
		return syscall.EOPNOTSUPP
	}
	if n.mlx5 && p.Autoneg {
		return syscall.EINVAL // mlx5e_ethtool_set_pauseparam refuses autoneg
	}
	k.writes++
	k.order = append(k.order, ifname+" pause")
	n.pause = p
	return nil
}

// PFCPreventionTimeout plays mlx5e_get_pfc_prevention_tout (en_ethtool.c).
func (k *fakeKernel) PFCPreventionTimeout(ifname string) (uint16, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	n, err := k.nic(ifname)
	if err != nil {
		return 0, err
	}
	if n.noStorm || !n.mlx5 {
		return 0, syscall.EOPNOTSUPP
	}
	return n.stormTout, nil
}

// SetPFCPreventionTimeout plays mlx5e_set_pfc_prevention_tout: auto
// (0xffff) is 100 ms, 0 is off, anything else outside 80-8000 ms EINVAL.
func (k *fakeKernel) SetPFCPreventionTimeout(ifname string, v uint16) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	n, err := k.nic(ifname)
	if err != nil {
		return err
	}
	if n.noStorm || !n.mlx5 {
		return syscall.EOPNOTSUPP
	}
	if v == 0xffff {
		v = 100
	}
	if v != 0 && (v < 80 || v > 8000) {
		return syscall.EINVAL
	}
	k.writes++
	k.order = append(k.order, ifname+" pfc-prevention-tout")
	n.stormTout = v
	return nil
}

func (k *fakeKernel) DCB(req dcbnl.Request) ([][]byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	raw, err := req.Encode(1, 0)
	if err != nil {
		return nil, err
	}
	_, r, err := dcbnl.ParseMessage(raw)
	if err != nil {
		return nil, syscall.EINVAL
	}
	n, err := k.nic(r.Ifname())
	if err != nil {
		return nil, err
	}
	if n.noDCB {
		return nil, syscall.EOPNOTSUPP
	}
	if r.Type == dcbnl.RTMSetDCB {
		k.sent = append(k.sent, raw)
	}
	switch r.Cmd {
	case dcbnl.CmdIEEEGet:
		s := n.ieee
		if s.PFC != nil {
			pfc := *s.PFC
			if n.pfcTraffic {
				for p := range pfc.Requests {
					n.ieee.PFC.Requests[p] += uint64(p + 1)
					n.ieee.PFC.Indications[p] += uint64(2 * (p + 1))
				}
				pfc.Requests, pfc.Indications = n.ieee.PFC.Requests, n.ieee.PFC.Indications
			}
			if n.mlx5 {
				// mlx5e_dcbnl_ieee_getpfc: delay = cable_len only when
				// MLX5_BUFFER_SUPPORTED.
				pfc.Delay = 0
				if !n.noBuffer {
					pfc.Delay = n.cable
				}
			}
			s.PFC = &pfc
		}
		if n.noBuffer {
			// mlx5e_dcbnl_getbuffer fails with EOPNOTSUPP and
			// dcbnl_ieee_fill leaves DCB_ATTR_DCB_BUFFER out.
			s.Buffer = nil
		}
		if n.mlx5 && s.ETS != nil {
			// mlx5e_dcbnl_ieee_getets never fills in willing: it reads 0.
			// mlx5e_dcbnl_ieee_getets reads the firmware's bandwidth
			// allocation: a strict TC reads back 100 % (MLX5E_MAX_BW_ALLOC,
			// what mlx5e_build_tc_tx_bw programs for it), whatever was sent.
			ets := *s.ETS
			ets.Willing = 0
			for tc := range ets.TCTxBW {
				if ets.TSA[tc] == dcbnl.TSAStrict {
					ets.TCTxBW[tc] = 100
				}
			}
			s.ETS = &ets
		}
		s.Apps = append([]dcbnl.App(nil), n.ieee.Apps...)
		return [][]byte{s.Payload()}, nil
	case dcbnl.CmdSDCBX:
		k.writes++
		k.order = append(k.order, r.Ifname()+" dcbx")
		for _, a := range r.Attrs {
			if a.Kind() == dcbnl.AttrDCBX {
				return [][]byte{dcbnl.StatusPayload(r.Cmd, n.setDCBX(a.Data[0]))}, nil
			}
		}
		return [][]byte{dcbnl.StatusPayload(r.Cmd, 1)}, nil
	case dcbnl.CmdIEEESet, dcbnl.CmdIEEEDel:
		k.writes++
		return [][]byte{dcbnl.StatusPayload(r.Cmd, k.ieeeSetDel(n, r))}, nil
	}
	return nil, syscall.EOPNOTSUPP
}

// setDCBX plays mlx5e_dcbnl_setdcbx: LLD_MANAGED refused; mode 0 hands
// DCBX to the firmware (cap loses HOST); any other mode without HOST is
// refused; a HOST mode switches to host and becomes the reported cap.
func (n *fakeNIC) setDCBX(mode uint8) int8 {
	if !n.mlx5 {
		n.ieee.DCBX = mode
		return 0
	}
	switch {
	case mode&DCBXLLDManaged != 0:
		return 1
	case mode == 0:
		n.fwMode = true
		n.ieee.DCBX &^= DCBXHost
		return 0
	case mode&DCBXHost == 0:
		return 1
	}
	n.fwMode = false
	n.ieee.DCBX = mode
	return 0
}

func (k *fakeKernel) ieeeSetDel(n *fakeNIC, r dcbnl.Request) int8 {
	ifn := r.Ifname()
	for _, a := range r.Attrs {
		if a.Kind() != dcbnl.AttrIEEE {
			continue
		}
		for _, c := range a.Nested {
			switch c.Kind() {
			case dcbnl.AttrIEEEPFC:
				k.order = append(k.order, ifn+" pfc")
				if n.rejectPFC {
					return -int8(syscall.EINVAL)
				}
				var p dcbnl.PFC
				if err := p.UnmarshalBinary(c.Data); err != nil {
					return -int8(syscall.EINVAL)
				}
				if st := k.setPFC(n, p); st != 0 {
					return st
				}
			case dcbnl.AttrIEEEBuffer:
				k.order = append(k.order, ifn+" buffer")
				if st := n.setBuffer(c.Data); st != 0 {
					return st
				}
			case dcbnl.AttrIEEEETS:
				k.order = append(k.order, ifn+" ets")
				var e dcbnl.ETS
				if err := e.UnmarshalBinary(c.Data); err != nil {
					return -int8(syscall.EINVAL)
				}
				if st := n.validateETS(e); st != 0 {
					return st
				}
				e.ETSCap = n.ieee.ETS.ETSCap
				*n.ieee.ETS = e
			case dcbnl.AttrIEEEAppTable:
				if r.Cmd == dcbnl.CmdIEEESet {
					k.order = append(k.order, ifn+" app-add")
				} else {
					k.order = append(k.order, ifn+" app-del")
				}
				for _, x := range c.Nested {
					var app dcbnl.App
					if err := app.UnmarshalBinary(x.Data); err != nil {
						return -int8(syscall.EINVAL)
					}
					var st int8
					switch {
					case !n.mlx5:
						st = n.plainApp(r.Cmd == dcbnl.CmdIEEESet, app)
					case r.Cmd == dcbnl.CmdIEEESet:
						st = n.mlx5SetApp(app)
					default:
						st = n.mlx5DelApp(app)
					}
					if st != 0 {
						return st
					}
				}
			}
		}
	}
	return 0
}

// validateETS: mlx5e_dbcnl_validate_ets (prio_tc < 8, ETS bandwidth sums
// to 100 when any TC is ETS); bnxt_ets_validate for a non-mlx5 NIC (no
// non-zero TSA or bandwidth at or above ets_cap).
func (n *fakeNIC) validateETS(e dcbnl.ETS) int8 {
	sum, haveETS := 0, false
	for tc := range e.TSA {
		if e.PrioTC[tc] >= 8 {
			return -int8(syscall.EINVAL)
		}
		if e.TSA[tc] == dcbnl.TSAETS {
			haveETS = true
			sum += int(e.TCTxBW[tc])
		}
		if !n.mlx5 && tc >= int(n.ieee.ETS.ETSCap) && (e.TSA[tc] != 0 || e.TCTxBW[tc] != 0) {
			return -int8(syscall.EINVAL)
		}
		if !n.mlx5 && e.TSA[tc] == dcbnl.TSAETS && e.TCTxBW[tc] == 0 {
			return -int8(syscall.EINVAL) // bnxt: "rejecting ETS config starving a TC"
		}
	}
	if n.mlx5 && haveETS && sum != 100 {
		return -int8(syscall.EINVAL)
	}
	return 0
}

// setPFC plays mlx5e_dcbnl_ieee_setpfc: a new pfc_en is written (and the
// link toggled) at once; a delay in 1..999 becomes the cable length; then,
// with MLX5_BUFFER_SUPPORTED and a software-owned buffer (manual_buffer),
// the buffers are recomputed, and a failure there puts the cable length
// back (pfc_en stays written).
func (k *fakeKernel) setPFC(n *fakeNIC, p dcbnl.PFC) int8 {
	if !n.mlx5 {
		n.ieee.PFC.Enable, n.ieee.PFC.Delay = p.Enable, p.Delay
		return 0
	}
	cur := n.ieee.PFC.Enable
	var changed uint32
	if p.Enable != cur {
		n.ieee.PFC.Enable = p.Enable
		k.flaps++
		changed |= chgPFC
	}
	oldCable := n.cable
	if p.Delay > 0 && p.Delay < 1000 && p.Delay != n.cable {
		n.cable = p.Delay
		changed |= chgCable
	}
	if !n.noBuffer && n.manualBuffer {
		pfc := cur
		if changed&chgPFC != 0 {
			pfc = p.Enable
		}
		if st := n.manualBufferConfig(changed, pfc, nil, nil); st != 0 {
			if changed&chgCable != 0 {
				n.cable = oldCable
			}
			return st
		}
	}
	return 0
}

// The change bits of mlx5e_port_manual_buffer_config
// (MLX5E_PORT_BUFFER_*).
const (
	chgCable = 1 << iota
	chgPFC
	chgPrio2Buffer
	chgSize
)

// setBuffer plays mlx5e_dcbnl_setbuffer: EOPNOTSUPP without buffer
// support; what changed is found against the current prio2buffer and
// sizes; the buffer becomes software-owned; then
// mlx5e_port_manual_buffer_config. A plain driver just stores the layout
// (EINVAL above total_size).
func (n *fakeNIC) setBuffer(data []byte) int8 {
	if n.noBuffer || n.ieee.Buffer == nil {
		return -int8(syscall.EOPNOTSUPP)
	}
	var b dcbnl.Buffer
	if err := b.UnmarshalBinary(data); err != nil {
		return -int8(syscall.EINVAL)
	}
	for _, bu := range b.PrioBuffer {
		if bu >= dcbnl.MaxTCs {
			return -int8(syscall.EINVAL)
		}
	}
	cur := n.ieee.Buffer
	if !n.mlx5 {
		var sum uint32
		for _, sz := range b.Size {
			sum += sz
		}
		if sum > cur.Total {
			return -int8(syscall.EINVAL)
		}
		b.Total = cur.Total
		*cur = b
		return 0
	}
	var changed uint32
	if b.PrioBuffer != cur.PrioBuffer {
		changed |= chgPrio2Buffer
	}
	if b.Size != cur.Size {
		changed |= chgSize
	}
	if changed == 0 {
		return 0
	}
	n.manualBuffer = true
	return n.manualBufferConfig(changed, 0, &b.Size, &b.PrioBuffer)
}

// fillPFCEn is fill_pfc_en: with global pause on (rx or tx) every
// priority counts as PFC-enabled.
func (n *fakeNIC) fillPFCEn() uint8 {
	if n.pause.RX || n.pause.TX {
		return 0xff
	}
	return n.ieee.PFC.Enable
}

// manualBufferConfig is mlx5e_port_manual_buffer_config on the fake's
// state.
func (n *fakeNIC) manualBufferConfig(change uint32, pfcEn uint8, sizes *[8]uint32, prio *[8]uint8) int8 {
	xoff := n.calcXoff()
	minSize := n.losslessMin()
	size := n.ieee.Buffer.Size
	lossy := n.lossy
	update := false
	// update_xoff_threshold: every lossless buffer must hold the minimum.
	xoffOK := func() bool {
		for i := range size {
			if !lossy[i] && uint64(size[i]) < minSize {
				return false
			}
		}
		return true
	}
	// update_buffer_lossy: a buffer is lossless when a PFC priority maps to it.
	updateLossy := func(pfc uint8, p2b [8]uint8) bool {
		changed := false
		for i := range lossy {
			l := !bufferLossless(p2b, pfc, i)
			if l != lossy[i] {
				lossy[i], changed = l, true
			}
		}
		if changed {
			update = true
			return xoffOK()
		}
		return true
	}
	if change&chgCable != 0 {
		update = true
		if !xoffOK() {
			return -int8(syscall.ENOMEM)
		}
	}
	if change&chgPFC != 0 && !updateLossy(pfcEn, n.ieee.Buffer.PrioBuffer) {
		return -int8(syscall.ENOMEM)
	}
	if change&chgPrio2Buffer != 0 && !updateLossy(n.fillPFCEn(), *prio) {
		return -int8(syscall.ENOMEM)
	}
	if change&chgSize != 0 {
		var total, headroom uint64
		for i := range size {
			headroom += uint64(n.ieee.Buffer.Size[i])
		}
		for i := range size {
			if !lossy[i] && sizes[i] == 0 {
				return -int8(syscall.EINVAL) // lossless buffer size cannot be zero
			}
			size[i] = sizes[i]
			total += uint64(sizes[i])
		}
		spare := uint64(n.ieee.Buffer.Total) - headroom // no internal buffers in the fake
		if total > headroom && total-headroom > spare {
			return -int8(syscall.EINVAL)
		}
		update = true
		if !xoffOK() {
			return -int8(syscall.ENOMEM)
		}
	}
	if !update && xoff != n.xoff {
		update = true
		if !xoffOK() {
			return -int8(syscall.ENOMEM)
		}
	}
	n.xoff = xoff
	if update {
		for i := range size {
			size[i] -= size[i] % fakeCell // port_set_buffer: whole cells
		}
		n.ieee.Buffer.Size, n.lossy = size, lossy
	}
	if prio != nil && change&chgPrio2Buffer != 0 {
		n.ieee.Buffer.PrioBuffer = *prio
	}
	return 0
}

// mlx5SetApp plays mlx5e_dcbnl_ieee_setapp: DSCP selector only; the first
// entry switches the port to DSCP trust; only this DSCP's firmware
// priority is written; the kernel's list entry for the DSCP's old priority
// is replaced.
func (n *fakeNIC) mlx5SetApp(app dcbnl.App) int8 {
	if app.Selector != dcbnl.SelectorDSCP || app.Protocol >= 64 {
		return -int8(syscall.EINVAL)
	}
	old := dcbnl.App{Selector: dcbnl.SelectorDSCP, Protocol: app.Protocol, Priority: n.dscp2prio[app.Protocol]}
	if n.dscpAppCnt == 0 {
		n.trustDSCP = true // mlx5e_set_trust_state(MLX5_QPTS_TRUST_DSCP)
	}
	n.dscp2prio[app.Protocol] = app.Priority
	isNew := !n.listDel(old)
	if !n.listAdd(app) {
		return -int8(syscall.EEXIST)
	}
	if isNew {
		n.dscpAppCnt++
	}
	return 0
}

// mlx5DelApp plays mlx5e_dcbnl_ieee_delapp: the entry must match the
// firmware's priority; the DSCP's firmware priority goes to 0 (not back to
// DSCP>>3); the last entry switches the port back to PCP trust.
func (n *fakeNIC) mlx5DelApp(app dcbnl.App) int8 {
	if app.Selector != dcbnl.SelectorDSCP || app.Protocol >= 64 {
		return -int8(syscall.EINVAL)
	}
	if n.dscpAppCnt == 0 || app.Priority != n.dscp2prio[app.Protocol] {
		return -int8(syscall.ENOENT)
	}
	if !n.listDel(app) {
		return -int8(syscall.ENOENT)
	}
	n.dscp2prio[app.Protocol] = 0
	n.dscpAppCnt--
	if n.dscpAppCnt == 0 {
		n.trustDSCP = false
	}
	return 0
}

// listAdd / listDel are net/dcb/dcbnl.c dcb_ieee_setapp (EEXIST for an
// identical entry) and dcb_ieee_delapp (ENOENT when absent) on the
// kernel's APP list.
func (n *fakeNIC) listAdd(app dcbnl.App) bool {
	for _, a := range n.ieee.Apps {
		if a == app {
			return false
		}
	}
	n.ieee.Apps = append(n.ieee.Apps, app)
	return true
}

func (n *fakeNIC) listDel(app dcbnl.App) bool {
	for i, a := range n.ieee.Apps {
		if a == app {
			n.ieee.Apps = append(n.ieee.Apps[:i:i], n.ieee.Apps[i+1:]...)
			return true
		}
	}
	return false
}

// plainApp is a driver without its own APP handling: the kernel's list.
func (n *fakeNIC) plainApp(add bool, app dcbnl.App) int8 {
	if add {
		if !n.listAdd(app) {
			return -int8(syscall.EEXIST)
		}
		return 0
	}
	if !n.listDel(app) {
		return -int8(syscall.ENOENT)
	}
	return 0
}

// treeOpts says what the temp tree that mimics an mlx5 host has.
type treeOpts struct {
	ecn      string // "sysfs" (MLNX_OFED), "debugfs" (upstream cc_params) or "" (neither)
	configfs bool   // /sys/kernel/config/rdma_cm is there
	driver   string // default mlx5_core
	// bnxtCC: bnxt_re's configfs subsystem (/sys/kernel/config/bnxt_re) is
	// there.
	bnxtCC bool
	// ib is the RDMA devices' name prefix (default mlx5_: mlx5_0, mlx5_1).
	ib string
	// memory puts the tree on tmpfs (/dev/shm) when there is one: sysfs and
	// configfs live in memory too, so benchmarks should not pay disk costs.
	memory bool
}

// mlx5Tree writes a directory tree that looks like an mlx5 host's /sys for
// the interfaces ifnames[i] <-> RDMA devices mlx5_i.
func mlx5Tree(t testing.TB, o treeOpts, ifnames ...string) string {
	t.Helper()
	root := t.TempDir()
	if o.memory {
		if d, err := os.MkdirTemp("/dev/shm", "fabricctl-tree-"); err == nil {
			root = d
			t.Cleanup(func() { os.RemoveAll(d) })
		}
	}
	w := func(name, content string) {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, name string) {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	drv := o.driver
	if drv == "" {
		drv = "mlx5_core"
	}
	if err := os.MkdirAll(filepath.Join(root, "sys/bus/pci/drivers", drv), 0o755); err != nil {
		t.Fatal(err)
	}
	if o.configfs {
		if err := os.MkdirAll(filepath.Join(root, "sys/kernel/config/rdma_cm"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if o.bnxtCC {
		if err := os.MkdirAll(filepath.Join(root, bnxtCCRoot), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i, ifn := range ifnames {
		pci := fmt.Sprintf("0000:3b:00.%d", i)
		ib := fmt.Sprintf("mlx5_%d", i)
		if o.ib != "" {
			ib = fmt.Sprintf("%s%d", o.ib, i)
		}
		dev := "sys/devices/pci0000:3a/" + pci
		w(dev+"/net/"+ifn+"/mtu", "1500\n")
		w(dev+"/net/"+ifn+"/speed", "400000\n") // Mb/s, as the fake kernel's speedMbps
		rel := strings.TrimPrefix(dev, "sys/")
		link("../../bus/pci/drivers/"+drv, dev+"/driver")
		link("../../"+rel+"/net/"+ifn, "sys/class/net/"+ifn)
		link("../../../"+pci, dev+"/net/"+ifn+"/device") // as on sysfs: ../../../0000:3b:00.0
		link("../../"+rel+"/infiniband/"+ib, "sys/class/infiniband/"+ib)
		for g := range 4 {
			base := dev + "/infiniband/" + ib + "/ports/1/"
			// As on mlx5: the link-local GIDs (RoCE v1, v2) at 0 and 1, those
			// of the IPv4 address 10.0.<i>.1 (IPv4-mapped) at 2 and 3.
			gid := fmt.Sprintf("fe80:0000:0000:0000:0e42:a1ff:fe00:%04x", g)
			if g >= 2 {
				gid = fmt.Sprintf("0000:0000:0000:0000:0000:ffff:0a00:%02x01", i)
			}
			w(base+fmt.Sprintf("gids/%d", g), gid+"\n")
			typ := "IB/RoCE v1"
			if g%2 == 1 {
				typ = "RoCE v2"
			}
			w(base+fmt.Sprintf("gid_attrs/types/%d", g), typ+"\n")
			w(base+fmt.Sprintf("gid_attrs/ndevs/%d", g), ifn+"\n")
		}
		switch o.ecn {
		case "sysfs":
			for p := range 8 {
				w(fmt.Sprintf("%s/net/%s/ecn/roce_np/enable/%d", dev, ifn, p), "0\n")
				w(fmt.Sprintf("%s/net/%s/ecn/roce_rp/enable/%d", dev, ifn, p), "0\n")
			}
			w(dev+"/net/"+ifn+"/ecn/roce_np/cnp_dscp", "0\n")
			w(dev+"/net/"+ifn+"/ecn/roce_np/cnp_802p_prio", "0\n")
			for _, v := range mlx5FirmwareCC {
				w(dev+"/net/"+ifn+"/ecn/"+v.ofed, fmt.Sprintf("%d\n", v.value))
			}
		case "debugfs":
			w("sys/kernel/debug/mlx5/"+pci+"/cc_params/np_cnp_dscp", "0\n")
			w("sys/kernel/debug/mlx5/"+pci+"/cc_params/np_cnp_prio", "0\n")
			w("sys/kernel/debug/mlx5/"+pci+"/cc_params/np_cnp_prio_mode", "1\n")
			for name, v := range mlx5FirmwareCC {
				w("sys/kernel/debug/mlx5/"+pci+"/cc_params/"+name, fmt.Sprintf("%d\n", v.value))
			}
		}
	}
	return root
}

// countingFiles is a test double around DirFiles that counts writes and
// plays configfs: creating rdma_cm/<ibdev> makes ports/1/default_roce_* appear
// when the RDMA device exists, and fails with ENODEV otherwise.
type countingFiles struct {
	*DirFiles
	mu     sync.Mutex
	writes int
	log    []string
	// bnxtFW is what bnxt_re handed to the firmware (cc/apply), by
	// attribute path: the double's stand-in for bnxt_qplib_modify_cc.
	bnxtFW map[string]string
}

func (c *countingFiles) WriteFile(name string, data []byte) error {
	c.mu.Lock()
	c.writes++
	c.log = append(c.log, "write "+name)
	c.mu.Unlock()
	if handled, err := c.playCC(name, data); handled {
		return err
	}
	return c.DirFiles.WriteFile(name, data)
}

func (c *countingFiles) Mkdir(name string) error {
	c.mu.Lock()
	c.writes++
	c.log = append(c.log, "mkdir "+name)
	c.mu.Unlock()
	if dev, ok := strings.CutPrefix(name, bnxtCCRoot+"/"); ok {
		return c.mkdirBnxtRE(dev)
	}
	dev, ok := strings.CutPrefix(name, "sys/kernel/config/rdma_cm/")
	if !ok {
		return c.DirFiles.Mkdir(name)
	}
	if _, err := os.Stat(filepath.Join(c.Root, "sys/class/infiniband", dev)); err != nil {
		return syscall.ENODEV
	}
	if err := c.DirFiles.Mkdir(name); err != nil {
		return err
	}
	pdir := filepath.Join(c.Root, filepath.FromSlash(path.Join(name, "ports/1")))
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(pdir, "default_roce_tos"), []byte("0\n"), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(pdir, "default_roce_mode"), []byte("IB/RoCE v1\n"), 0o644)
}

// seedApps installs DSCP APP entries through the fake mlx5's own setapp,
// so the firmware map, trust state and entry count agree with the list.
func seedApps(t testing.TB, n *fakeNIC, apps ...dcbnl.App) {
	t.Helper()
	for _, a := range apps {
		if st := n.mlx5SetApp(a); st != 0 {
			t.Fatalf("seed APP %+v: status %d", a, st)
		}
	}
}
