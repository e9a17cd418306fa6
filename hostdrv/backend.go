package hostdrv

import (
	"fmt"
	"io/fs"
	"math"
	"net/netip"
	"path"
	"sort"
	"strings"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/portfacts"
)

// Backend turns the policy into the desired state of one NIC for one driver
// family. It is pure apart from probing fsys (the Files root, read-only) for
// the control files the driver exposes.
type Backend interface {
	Name() string
	Quirks() Quirks
	// Desired returns the NIC's desired state and notes about settings the OS
	// cannot change (firmware-only) — those are reported, never changed.
	Desired(fsys fs.FS, p *intent.Policy, nic intent.NIC) (NICState, []string)
}

// Quirks are driver differences, as data.
type Quirks struct {
	// PFCDelayIsCable: the driver reads the PFC delay field as the cable
	// length in metres (mlx5).
	PFCDelayIsCable bool
	// AppAddReplaces: adding a DSCP APP entry replaces the existing entry for
	// that DSCP (mlx5 keeps one priority per DSCP). Elsewhere the old entry
	// is deleted explicitly after the new one is added.
	AppAddReplaces bool
	// PFCChangeFlapsLink: changing pfc_en takes the link down briefly
	// (mlx5_toggle_port_link in mlx5e_dcbnl_ieee_setpfc).
	PFCChangeFlapsLink bool
	// BufferCell is the largest unit the driver rounds receive buffer sizes
	// down to; an observed size up to BufferCell-1 bytes below the desired
	// one is in sync (0 = exact). mlx5 stores sizes in cells of
	// port_buff_cell_sz bytes (the firmware's SBCAM cap_cell_size, 128 when
	// not reported): port_set_buffer divides the size by the cell size and
	// mlx5e_port_query_buffer multiplies it back, so 256000 B reads back as
	// 255872 B with 128 B cells.
	BufferCell uint32
	// BufferSizesFirst: a buffer layout change that both resizes buffers
	// and moves priorities is sent as two requests, sizes first. mlx5
	// (mlx5e_port_manual_buffer_config) applies prio2buffer before the new
	// sizes and checks every buffer that becomes lossless against its
	// current size (update_xoff_threshold: size >= xoff + max_mtu + cell,
	// else -ENOMEM), so moving a PFC priority into a buffer that is still
	// empty fails in a single request.
	BufferSizesFirst bool
	// ETSWillingUnreported: the driver never reports the ETS willing bit
	// (mlx5e_dcbnl_ieee_getets leaves it 0; willing is the firmware DCBX
	// agent's), so it is not compared.
	ETSWillingUnreported bool
	// FullDSCPMap: the driver classifies every DSCP once one DSCP APP entry
	// exists, and the DSCPs without an entry keep the firmware's map, which
	// the kernel does not list. mlx5e_dcbnl_ieee_setapp switches the port to
	// DSCP trust on the first entry (dscp_app_cnt 0 -> mlx5e_set_trust_state
	// MLX5_QPTS_TRUST_DSCP) and writes only that DSCP (mlx5e_set_dscp2prio);
	// the firmware's default dscp2prio is DSCP>>3, so without all 64 entries
	// DSCP 24-31 land on priority 3 and 48-55 on priority 6. All 64 entries
	// are written (unlisted DSCPs -> the default class's priority).
	FullDSCPMap bool
	// LosslessXoffMLX5: a lossless receive buffer must hold at least
	// xoff + max_mtu + cell bytes, xoff computed from port speed, cable
	// length and MTU as mlx5's port_buffer.c does (calculate_xoff,
	// update_xoff_threshold; see mlx5LosslessMin). Checked at plan time.
	LosslessXoffMLX5 bool
	// DCBXFirmwareIsZero: handing DCBX back to the firmware is a setdcbx of
	// mode 0 (mlx5e_dcbnl_setdcbx: !mode -> MLX5E_DCBX_PARAM_VER_OPER_AUTO;
	// any non-zero mode without HOST is refused with status 1). Used by
	// restore.
	DCBXFirmwareIsZero bool
	// PFCDelayNeedsSoftwareBuffer: the cable length in the PFC delay field
	// changes headroom only when the driver owns the port buffer in
	// software: mlx5e_dcbnl_ieee_setpfc calls
	// mlx5e_port_manual_buffer_config only when priv->dcbx.manual_buffer is
	// set, which only mlx5e_dcbnl_setbuffer sets (and a driver load
	// clears, mlx5e_dcbnl_initialize). Otherwise the value is recorded and
	// read back, but the firmware's headroom stays as it is.
	PFCDelayNeedsSoftwareBuffer bool
}

// Backends selects a backend by kernel driver name.
type Backends struct {
	byDriver map[string]Backend
	fallback Backend
}

// NewBackends returns the built-in set: mlx5 for mlx5_core, bnxt for
// bnxt_en, generic dcbnl for everything else.
func NewBackends() *Backends {
	return &Backends{byDriver: map[string]Backend{"mlx5_core": MLX5{}, "bnxt_en": BNXT{}}, fallback: Generic{}}
}

// For returns the backend for a kernel driver name ("" = unknown).
func (b *Backends) For(driver string) Backend {
	if be, ok := b.byDriver[driver]; ok {
		return be
	}
	return b.fallback
}

// Generic drives any NIC with IEEE dcbnl ops through the kernel's standard
// interfaces only: DCBX, APP, PFC (delay untouched), ETS, pause, MTU, RDMA-CM.
type Generic struct{}

// Name implements Backend.
func (Generic) Name() string { return "generic" }

// Quirks implements Backend.
func (Generic) Quirks() Quirks { return Quirks{} }

// Desired implements Backend.
func (Generic) Desired(fsys fs.FS, p *intent.Policy, nic intent.NIC) (NICState, []string) {
	st, notes := baseDesired(fsys, p, nic)
	drv := driverName(fsys, nic.Interface)
	if p.DCQCN != nil {
		notes = append(notes, fmt.Sprintf("%s: policy.dcqcn: fabricctl knows no congestion-control interface of this NIC's driver (%s; it writes mlx5's and bnxt_re's): not written", nic.Interface, orUnknown(drv)))
	}
	if n := accelNotSupported(p, nic, drv); n != "" {
		notes = append(notes, n)
	}
	return st, notes
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// mlx5BufferCellMax bounds mlx5's receive buffer cell (port_buff_cell_sz).
// The driver falls back to 128 B; the firmware may report a larger cell, so
// sizes are compared with a 1 KiB tolerance, far below any buffer size that
// matters (a lossless buffer needs xoff + MTU, tens of KB).
const mlx5BufferCellMax = 1024

// MLX5 is the NVIDIA ConnectX (mlx5_core) backend: Generic plus the cable
// length in the PFC delay field and the ECN/CNP controls the driver exposes
// (out-of-tree sysfs ecn/roce_np|roce_rp, or upstream debugfs cc_params).
type MLX5 struct{}

// Name implements Backend.
func (MLX5) Name() string { return "mlx5" }

// Quirks implements Backend.
func (MLX5) Quirks() Quirks {
	return Quirks{PFCDelayIsCable: true, AppAddReplaces: true, PFCChangeFlapsLink: true, ETSWillingUnreported: true,
		BufferCell: mlx5BufferCellMax, BufferSizesFirst: true, FullDSCPMap: true, LosslessXoffMLX5: true,
		DCBXFirmwareIsZero: true, PFCDelayNeedsSoftwareBuffer: true}
}

// Desired implements Backend.
func (m MLX5) Desired(fsys fs.FS, p *intent.Policy, nic intent.NIC) (NICState, []string) {
	st, notes := baseDesired(fsys, p, nic)
	switch {
	case !m.Quirks().FullDSCPMap || st.Apps == nil:
	case st.VerifyOnly:
		notes = append(notes, fmt.Sprintf("%s: DCBX is switch-willing: the switch's APP TLVs set the DSCP entries, and every DSCP the switch does not advertise keeps mlx5's firmware map (DSCP>>3: DSCP 24-31 on priority 3, 48-55 on 6); advertise all 64 DSCPs from the switch, or use dcbx host-static", nic.Interface))
	default:
		// See Quirks.FullDSCPMap: every DSCP gets an entry on mlx5, whatever
		// policy.trustDSCPFullMap says.
		for d, pr := range p.DSCPToPriority() {
			st.Apps[d] = pr
		}
	}
	// mlx5e_dcbnl_ieee_setpfc takes delay as the cable length in metres when
	// 0 < delay < 1000 (MLX5E_MAX_CABLE_LENGTH) and ignores it otherwise.
	switch {
	case st.PFC == nil || nic.CableMeters <= 0:
	case nic.CableMeters >= portfacts.MLX5MaxCableM:
		notes = append(notes, fmt.Sprintf("%s: cable %g m: mlx5 accepts a PFC cable length below 1000 m only; the driver's value is left as it is", nic.Interface, nic.CableMeters))
	default:
		// The cable portfacts' NIC headroom is computed with.
		c, _ := portfacts.MLX5DriverCable(nic.CableMeters)
		st.PFC.Delay = uint16(c)
		st.PFC.ManageDelay = true
	}
	var ecnPrios []int
	for _, c := range p.Classes {
		if c.ECN != nil {
			ecnPrios = append(ecnPrios, c.Priority)
		}
	}
	sort.Ints(ecnPrios)
	// offPrios: policy.mode pfc-only runs no DCQCN, so the NIC's
	// notification and reaction points are turned off on the lossless
	// priorities (ConnectX firmware enables them on every priority by
	// default: ROCE_CC_PRIO_MASK 255). Every other mode keeps DCQCN on the
	// ECN classes' priorities (lossy needs it most: it is the only brake).
	var offPrios []int
	if p.Mode == intent.ModePFCOnly {
		offPrios = p.LosslessPriorities()
	}
	sysECN := path.Join("sys/class/net", nic.Interface, "ecn")
	switch {
	case exists(fsys, sysECN):
		// NVIDIA's out-of-tree driver (MLNX_OFED).
		for _, x := range []struct {
			prios []int
			v     string
		}{{ecnPrios, "1"}, {offPrios, "0"}} {
			for _, pr := range x.prios {
				for _, side := range []string{"roce_np", "roce_rp"} {
					st.Files = append(st.Files, File{
						Setting: fmt.Sprintf("ecn/%s/enable/%d", side, pr),
						Path:    path.Join(sysECN, side, "enable", fmt.Sprint(pr)), Value: x.v})
				}
			}
		}
		st.Files = append(st.Files,
			File{Setting: "ecn/roce_np/cnp_dscp", Path: path.Join(sysECN, "roce_np/cnp_dscp"), Value: fmt.Sprint(p.RoCE.CNPDSCP)},
			File{Setting: "ecn/roce_np/cnp_802p_prio", Path: path.Join(sysECN, "roce_np/cnp_802p_prio"), Value: fmt.Sprint(p.RoCE.CNPPriority)})
		files, n := mlx5DCQCN(fsys, p, nic, sysECN, false)
		st.Files, notes = append(st.Files, files...), append(notes, n...)
	default:
		cc := ""
		if pci := pciAddress(fsys, nic.Interface); pci != "" {
			cc = path.Join("sys/kernel/debug/mlx5", pci, "cc_params")
		}
		if cc != "" && exists(fsys, cc) {
			// Upstream mlx5: CNP DSCP/priority in debugfs; the per-priority
			// DCQCN enable is firmware only.
			// Writing np_cnp_prio also sets np_cnp_prio_mode to 0 (use the
			// configured priority; drivers/infiniband/hw/mlx5/cong.c); the mode
			// is still compared so a later "1" shows up as drift.
			st.Files = append(st.Files,
				File{Setting: "cc_params/np_cnp_dscp", Path: path.Join(cc, "np_cnp_dscp"), Value: fmt.Sprint(p.RoCE.CNPDSCP)},
				File{Setting: "cc_params/np_cnp_prio_mode", Path: path.Join(cc, "np_cnp_prio_mode"), Value: "0"},
				File{Setting: "cc_params/np_cnp_prio", Path: path.Join(cc, "np_cnp_prio"), Value: fmt.Sprint(p.RoCE.CNPPriority)})
			files, n := mlx5DCQCN(fsys, p, nic, cc, true)
			st.Files, notes = append(st.Files, files...), append(notes, n...)
			if len(ecnPrios) > 0 {
				notes = append(notes, fmt.Sprintf("%s: ECN/DCQCN on priority %s is a firmware setting on upstream mlx5 (mlxconfig -d %s set ROCE_CC_PRIO_MASK_%s=%#x, then a firmware reset): not changed",
					nic.Interface, joinInts(ecnPrios), pciOr(fsys, nic.Interface), mlxPort(fsys, nic.Interface), prioMask(ecnPrios)))
			}
			if len(offPrios) > 0 {
				notes = append(notes, fmt.Sprintf("%s: policy.mode pfc-only runs no DCQCN, and turning it off on priority %s is a firmware setting on upstream mlx5 (mlxconfig -d %s set ROCE_CC_PRIO_MASK_%s=%#x, then a firmware reset): not changed, so the NIC still reacts to any CNP it gets (the switches mark no ECN, so none should come)",
					nic.Interface, joinInts(offPrios), pciOr(fsys, nic.Interface), mlxPort(fsys, nic.Interface), 0xff&^prioMask(offPrios)))
			}
		} else {
			notes = append(notes, fmt.Sprintf("%s: no ECN/CNP control found (neither /sys/class/net/%s/ecn nor debugfs mlx5 cc_params): CNP DSCP %d / priority %d and ECN on priority %s are firmware settings (mlxconfig -d %s set CNP_DSCP_%[7]s=%[8]d CNP_802P_PRIO_%[7]s=%[9]d ROCE_CC_PRIO_MASK_%[7]s=%#[10]x, then a firmware reset): not changed",
				nic.Interface, nic.Interface, p.RoCE.CNPDSCP, p.RoCE.CNPPriority, joinInts(ecnPrios), pciOr(fsys, nic.Interface), mlxPort(fsys, nic.Interface), p.RoCE.CNPDSCP, p.RoCE.CNPPriority, prioMask(ecnPrios)))
			if p.DCQCN != nil {
				notes = append(notes, fmt.Sprintf("%s: policy.dcqcn: no runtime control found either: only mlxconfig sets it here: %s, then a firmware reset: not changed",
					nic.Interface, mlxconfigDCQCN(fsys, p, nic)))
			}
		}
	}
	if n := roceAccelNote(fsys, p, nic); n != "" {
		notes = append(notes, n)
	}
	return st, notes
}

// mlxPort returns mlxconfig's per-port suffix for the netdev ("P1", "P2"):
// each port of a ConnectX adapter is its own PCI function, port N being
// function N-1 (0000:3b:00.0 -> _P1, 0000:3b:00.1 -> _P2), and mlxconfig
// names per-port parameters with that suffix. Unknown -> "P<n>" is left for
// the operator to fill in.
func mlxPort(fsys fs.FS, ifname string) string {
	pci := pciAddress(fsys, ifname)
	_, fn, ok := strings.Cut(pci, ".")
	if !ok {
		return "P<n>"
	}
	var f int
	if _, err := fmt.Sscanf(fn, "%x", &f); err != nil || f < 0 || f > 7 {
		return "P<n>"
	}
	return fmt.Sprintf("P%d", f+1)
}

func prioMask(prios []int) int {
	m := 0
	for _, p := range prios {
		m |= 1 << p
	}
	return m
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	if len(s) == 0 {
		return "(none)"
	}
	return strings.Join(s, ",")
}

// baseDesired is what every dcbnl driver gets from the policy.
func baseDesired(fsys fs.FS, p *intent.Policy, nic intent.NIC) (NICState, []string) {
	var notes []string
	st := NICState{Interface: nic.Interface, MTU: p.HostMTU}

	mode := uint8(DCBXHost | DCBXVerIEEE)
	willing := false
	if p.DCBX == intent.DCBXSwitchWilling {
		mode, willing = DCBXLLDManaged|DCBXVerIEEE, true
		st.VerifyOnly = true
	}
	st.DCBX = &mode

	// DSCP trust: the class DSCPs, or the whole 64-entry map.
	st.Apps = map[int]int{}
	if p.TrustDSCPFullMap {
		for d, pr := range p.DSCPToPriority() {
			st.Apps[d] = pr
		}
	} else {
		for _, c := range p.Classes {
			for _, d := range c.DSCP {
				st.Apps[d] = c.Priority
			}
		}
	}

	st.PFC = &PFC{Enable: p.PFCBitmap()}

	// ETS: each class's priority is also its TC; other priorities go to the
	// default class's TC; unused TCs are strict with 0 %, as iproute2's
	// `dcb ets set ... tc-tsa all:strict` leaves them: an ETS TC with 0 %
	// is refused by bnxt_en (bnxt_ets_validate: "rejecting ETS config
	// starving a TC"), and strict is TSA 0, so nothing non-zero goes above
	// the device's max TC either.
	def := 0
	if d := p.DefaultClass(); d != nil {
		def = d.Priority
	}
	ets := ETS{Willing: willing}
	for pr := range ets.PrioTC {
		ets.PrioTC[pr] = uint8(def)
		ets.TSA[pr] = TSAStrict
	}
	for _, c := range p.Classes {
		if c.Priority < 0 || c.Priority > 7 {
			continue
		}
		ets.PrioTC[c.Priority] = uint8(c.Priority)
		if c.Strict {
			ets.TSA[c.Priority], ets.BW[c.Priority] = TSAStrict, 0
		} else {
			ets.TSA[c.Priority], ets.BW[c.Priority] = TSAETS, uint8(c.Weight)
		}
	}
	st.ETS = &ets

	if hb := p.HostBuffer; hb != nil {
		var bu Buffer
		for pr, b := range hb.PrioToBuffer {
			bu.PrioBuffer[pr] = uint8(b)
		}
		for i, sz := range hb.Sizes {
			switch {
			case sz <= 0:
			case sz > math.MaxUint32:
				notes = append(notes, fmt.Sprintf("%s: receive buffer %d size %d B does not fit dcbnl's 32-bit buffer_size: left to the driver", nic.Interface, i, sz))
			default:
				bu.Size[i] = uint32(sz)
			}
		}
		st.Buffer = &bu
	}

	if len(p.LosslessPriorities()) > 0 || !p.GlobalPause {
		st.Pause = &Pause{RX: p.GlobalPause, TX: p.GlobalPause}
	}

	if sp := p.HostPauseStormPrevention; sp != nil {
		v := *sp
		st.StormPrevention = &v
	}

	if nic.RDMADevice != "" {
		notes = append(notes, gidNotes(fsys, nic)...)
	}

	// RDMA-CM defaults through configfs.
	if nic.RDMADevice != "" && (p.RoCE.ToS != 0 || p.RoCE.Mode != "") {
		const cmRoot = "sys/kernel/config/rdma_cm"
		if exists(fsys, cmRoot) {
			port := nic.RDMAPort
			if port == 0 {
				port = 1
			}
			dir := path.Join(cmRoot, nic.RDMADevice)
			pdir := path.Join(dir, "ports", fmt.Sprint(port))
			if p.RoCE.ToS != 0 {
				st.Files = append(st.Files, File{Setting: "rdma_cm/default_roce_tos", Path: path.Join(pdir, "default_roce_tos"), Value: fmt.Sprint(p.RoCE.ToS), Mkdir: dir})
			}
			if p.RoCE.Mode != "" {
				st.Files = append(st.Files, File{Setting: "rdma_cm/default_roce_mode", Path: path.Join(pdir, "default_roce_mode"), Value: p.RoCE.Mode, Mkdir: dir})
			}
		} else {
			notes = append(notes, fmt.Sprintf("%s: /sys/kernel/config/rdma_cm is missing (modprobe rdma_cm; mount -t configfs none /sys/kernel/config): RDMA-CM default ToS %d / mode %q not set — verbs-only apps (NCCL) need NCCL_IB_TC=%d anyway",
				nic.Interface, p.RoCE.ToS, p.RoCE.Mode, p.RoCE.ToS))
		}
	}
	return st, notes
}

func exists(fsys fs.FS, name string) bool {
	_, err := fs.Stat(fsys, name)
	return err == nil
}

// pciAddress returns the PCI address of the netdev's device
// (the last element of the /sys/class/net/<if>/device symlink), or "".
func pciAddress(fsys fs.FS, ifname string) string {
	if rl, ok := fsys.(fs.ReadLinkFS); ok {
		if t, err := rl.ReadLink(path.Join("sys/class/net", ifname, "device")); err == nil {
			return path.Base(t)
		}
	}
	return ""
}

func pciOr(fsys fs.FS, ifname string) string {
	if pci := pciAddress(fsys, ifname); pci != "" {
		return pci
	}
	return "<pci address of " + ifname + ">"
}

// driverName returns the kernel driver bound to the netdev's device, or "".
func driverName(fsys fs.FS, ifname string) string {
	if rl, ok := fsys.(fs.ReadLinkFS); ok {
		if t, err := rl.ReadLink(path.Join("sys/class/net", ifname, "device/driver")); err == nil {
			return path.Base(t)
		}
	}
	return ""
}

// RoCEv2GIDs returns the GID table indexes of the RDMA port that are RoCE v2
// GIDs of netdev (/sys/class/infiniband/<dev>/ports/<p>/gid_attrs/{types,ndevs}),
// ascending. Unused entries (types unreadable, GID all zero) are skipped.
func RoCEv2GIDs(fsys fs.FS, ibdev string, port int, netdev string) []int {
	base := path.Join("sys/class/infiniband", ibdev, "ports", fmt.Sprint(port))
	ents, err := fs.ReadDir(fsys, path.Join(base, "gids"))
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		var i int
		if _, err := fmt.Sscanf(e.Name(), "%d", &i); err != nil {
			continue
		}
		typ, err := fs.ReadFile(fsys, path.Join(base, "gid_attrs/types", e.Name()))
		if err != nil || strings.TrimSpace(string(typ)) != "RoCE v2" {
			continue
		}
		nd, err := fs.ReadFile(fsys, path.Join(base, "gid_attrs/ndevs", e.Name()))
		if err != nil || strings.TrimSpace(string(nd)) != netdev {
			continue
		}
		gid, err := fs.ReadFile(fsys, path.Join(base, "gids", e.Name()))
		if err != nil || strings.Trim(strings.TrimSpace(string(gid)), "0:") == "" {
			continue
		}
		out = append(out, i)
	}
	sort.Ints(out)
	return out
}

// gidNotes reports an RDMA device or a RoCE v2 GID that is missing: without
// one, RoCE v2 traffic cannot start on the interface whatever the QoS.
func gidNotes(fsys fs.FS, nic intent.NIC) []string {
	port := nic.RDMAPort
	if port == 0 {
		port = 1
	}
	if !exists(fsys, path.Join("sys/class/infiniband", nic.RDMADevice)) {
		return []string{fmt.Sprintf("%s: RDMA device %s not found under /sys/class/infiniband (driver not loaded, or a different name: see `rdma link`)", nic.Interface, nic.RDMADevice)}
	}
	gids := RoCEv2GIDs(fsys, nic.RDMADevice, port, nic.Interface)
	if len(gids) == 0 {
		return []string{fmt.Sprintf("%s: %s port %d has no RoCE v2 GID on %s: give the interface an IP address (RoCE v2 GIDs are made from its addresses)", nic.Interface, nic.RDMADevice, port, nic.Interface)}
	}
	base := path.Join("sys/class/infiniband", nic.RDMADevice, "ports", fmt.Sprint(port), "gids")
	for _, i := range gids {
		b, err := fs.ReadFile(fsys, path.Join(base, fmt.Sprint(i)))
		if err == nil && !linkLocalGID(string(b)) {
			return nil
		}
	}
	return []string{fmt.Sprintf("%s: %s port %d has only link-local (fe80::) RoCE v2 GIDs on %s, which route nowhere in an L3 fabric: give the interface an IPv4 address (fabricctl validate uses its RoCE v2 IPv4 GID)", nic.Interface, nic.RDMADevice, port, nic.Interface)}
}

// linkLocalGID reports whether a GID as sysfs prints it
// ("fe80:0000:...:0001") is an IPv6 link-local address (fe80::/10).
func linkLocalGID(gid string) bool {
	a, err := netip.ParseAddr(strings.TrimSpace(gid))
	return err == nil && a.Is6() && !a.Is4In6() && a.IsLinkLocalUnicast()
}
