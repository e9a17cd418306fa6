package hostdrv

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"path"
	"slices"
	"strings"
	"syscall"
	"testing/fstest"
	"time"

	"github.com/fabricctl/fabricctl/hostdrv/internal/dcbnl"
	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/portfacts"
)

// ErrAssumed is returned by every write of an assumed driver: it plans only.
var ErrAssumed = errors.New("assumed host state: plan only, nothing is written")

// Assume returns a Driver that plans host h against an assumed observed
// state instead of the machine's NICs, so a plan (and its commands and
// netlink requests) can be made where there is no DCB-capable NIC. state is
// "fresh" (the driver defaults of mlx5_core, the usual RoCE NIC),
// "fresh:DRIVER" (the defaults of that kernel driver's backend: mlx5_core,
// or any other name for the generic dcbnl backend), or the path of a backup
// file written by host apply. Writes fail with ErrAssumed.
func Assume(state string, f *intent.Fabric, h *intent.Host) (*Driver, *Backup, error) {
	var b *Backup
	what := "backup " + state
	if drv, ok := FreshDriver(state); ok {
		if !slices.Contains(FreshDrivers(), drv) {
			return nil, nil, fmt.Errorf("--assume %s: %w", state, ErrUnknownFresh)
		}
		b = FreshBackup(h, drv)
		what = "fresh: " + drv + " driver defaults; PCI addresses " + placeholderPCI + ".N are placeholders (the NIC's own: `ethtool -i IF`, bus-info), as are the debugfs paths and mlxconfig -d arguments made from them"
	} else {
		var err error
		if b, err = ReadBackup(state); err != nil {
			return nil, nil, err
		}
	}
	return &Driver{Kernel: &assumedKernel{nics: b.NICs}, Files: assumedFiles(b), Backends: NewBackends(), Assumed: what}, b, nil
}

// ErrUnknownFresh is a fresh:DRIVER whose driver defaults fabricctl does not
// know (FreshDrivers lists those it does).
var ErrUnknownFresh = errors.New("fabricctl knows the fresh state of " + strings.Join(FreshDrivers(), " and ") +
	" only (from the drivers' sources); for another NIC, assume a backup of a real host of that NIC (host apply saves one before its first write: --backup FILE)")

// FreshDriver says whether state names a fresh state (fresh, fresh:DRIVER)
// and which driver's: fresh alone is mlx5_core's.
func FreshDriver(state string) (string, bool) {
	if state == "fresh" {
		return "mlx5_core", true
	}
	return strings.CutPrefix(state, "fresh:")
}

// FreshDrivers are the kernel drivers whose state after loading FreshBackup
// knows from their sources.
func FreshDrivers() []string { return []string{"bnxt_en", "mlx5_core"} }

// placeholderPCI stands for the PCI bus of an assumed fresh NIC: its
// function (.N) is the NIC's index in the host, so mlxconfig's per-port
// suffix (_P1, _P2) follows it; the rest is visibly not an address.
const placeholderPCI = "XXXX:XX:00"

// mlx5CCParams are the upstream mlx5 debugfs cc_params files
// (drivers/infiniband/hw/mlx5/cong.c mlx5_ib_dbg_cc_name[], without the
// rtt_resp_dscp pair, which needs the roce_cc_general capability).
func mlx5CCParams() []string {
	return []string{"rp_clamp_tgt_rate", "rp_clamp_tgt_rate_ati", "rp_time_reset", "rp_byte_reset", "rp_threshold",
		"rp_ai_rate", "rp_max_rate", "rp_hai_rate", "rp_min_dec_fac", "rp_min_rate", "rp_rate_to_set_on_first_cnp",
		"rp_dce_tcp_g", "rp_dce_tcp_rtt", "rp_rate_reduce_monitor_period", "rp_initial_alpha_value", "rp_gd",
		"np_min_time_between_cnps", "np_cnp_dscp", "np_cnp_prio_mode", "np_cnp_prio"}
}

// FreshBackup is the state a NIC has after the driver loads, per backend,
// as the driver sources set it:
//   - mlx5_core (en_dcbnl.c mlx5e_dcbnl_initialize, mlx5e_ets_init,
//     mlx5e_trust_initialize): DCBX owned by the firmware (cap CEE|IEEE,
//     no HOST), no APP entries (PCP trust), PFC off, cable length 7 m
//     (MLX5E_DEFAULT_CABLE_LEN), ETS priority 0 on TC 1 and 1 on TC 0, the
//     others on their own TC, every TC vendor TSA at 100 %; every priority
//     in receive buffer 0. Not from the source (firmware defaults, assumed):
//     802.3x pause on, MTU 1500, max_mtu 9978, buffer sizes and total_size
//     unknown (0: the sum check is skipped).
//   - any other driver, generic backend (as bnxt_en's bnxt_dcb_init for a
//     PF without a firmware LLDP agent): DCBX host IEEE, no APP entries,
//     PFC off, ETS all priorities on TC 0, 8 TCs; no buffer object; pause on
//     and MTU 1500 assumed.
//
// Every driver: the NIC's RDMA device (nics[].rdma) with, when the intent
// gives the NIC an IPv4 address, the RoCE v2 GID the kernel makes of it
// (index 3 on mlx5: RoCE v1 and v2 of the link-local address first, then of
// the IPv4 address); configfs mounted with rdma_cm loaded
// (/sys/kernel/config/rdma_cm) but no directory for the device yet, which
// apply creates; on mlx5_core debugfs mounted with the upstream driver's
// cc_params (drivers/infiniband/hw/mlx5/cong.c), whose values the firmware
// holds and no source gives: they read "unknown" (so the plan writes
// them); on bnxt_en bnxt_re's configfs subsystem (/sys/kernel/config/
// bnxt_re) without the device's directory, which apply creates. The PCI address is a placeholder (placeholderPCI).
//
// Speed comes from the intent's NIC speed.
func FreshBackup(h *intent.Host, driver string) *Backup {
	b := &Backup{Version: BackupVersion, Host: h.Name, Taken: time.Unix(0, 0).UTC()}
	for i, nic := range h.NICs {
		b.NICs = append(b.NICs, freshObs(i, nic, driver))
	}
	return b
}

// freshObs is FreshBackup's state of the i-th NIC.
func freshObs(i int, nic intent.NIC, driver string) nicObs {
	pci := fmt.Sprintf("%s.%d", placeholderPCI, i%8)
	o := nicObs{Interface: nic.Interface, Driver: driver, PCI: pci, Index: i + 2,
		MTU: 1500, SpeedMbps: int(nic.Speed / 1_000_000), Pause: &Pause{Autoneg: true, RX: true, TX: true}}
	o.Files = map[string]string{}
	if nic.RDMADevice != "" {
		o.Dirs = append(o.Dirs, "sys/kernel/config/rdma_cm", path.Join("sys/class/infiniband", nic.RDMADevice))
		if a, err := netip.ParseAddr(nic.Address); err == nil && a.Is4() {
			port := nic.RDMAPort
			if port == 0 {
				port = 1
			}
			base := path.Join("sys/class/infiniband", nic.RDMADevice, "ports", fmt.Sprint(port))
			v4 := a.As4()
			o.Files[path.Join(base, "gids/3")] = fmt.Sprintf("0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", v4[0], v4[1], v4[2], v4[3])
			o.Files[path.Join(base, "gid_attrs/types/3")] = "RoCE v2"
			o.Files[path.Join(base, "gid_attrs/ndevs/3")] = nic.Interface
		}
	}
	if driver == "mlx5_core" {
		cc := path.Join("sys/kernel/debug/mlx5", pci, "cc_params")
		for _, f := range mlx5CCParams() {
			o.Files[path.Join(cc, f)] = "unknown"
		}
	}
	if driver == "bnxt_en" && nic.RDMADevice != "" {
		// bnxt_re loaded with its configfs subsystem; the device's
		// directory is made by the first mkdir (apply's).
		o.Dirs = append(o.Dirs, bnxtCCRoot)
	}
	if driver == "mlx5_core" {
		dcbx := uint8(DCBXVerCEE | DCBXVerIEEE)
		o.DCBX, o.MaxMTU = &dcbx, portfacts.MLX5FreshMaxMTU
		o.PFC = &dcbnl.PFC{Cap: 8, Delay: mlx5DefaultCableM}
		ets := dcbnl.ETS{ETSCap: 8}
		for tc := range ets.PrioTC {
			ets.PrioTC[tc], ets.TSA[tc], ets.TCTxBW[tc] = uint8(tc), dcbnl.TSAVendor, 100
		}
		ets.PrioTC[0], ets.PrioTC[1] = 1, 0
		o.ETS = &ets
		o.Buffer = &dcbnl.Buffer{}
	} else {
		dcbx := uint8(DCBXHost | DCBXVerIEEE)
		o.DCBX = &dcbx
		o.PFC = &dcbnl.PFC{Cap: 8}
		o.ETS = &dcbnl.ETS{ETSCap: 8}
	}
	o.Apps = []dcbnl.App{}
	return o
}

// assumedKernel answers reads from a saved state and refuses writes.
type assumedKernel struct {
	nics []nicObs
}

func (k *assumedKernel) nic(ifname string) (*nicObs, error) {
	for i := range k.nics {
		if k.nics[i].Interface == ifname {
			return &k.nics[i], nil
		}
	}
	return nil, syscall.ENODEV
}

func (k *assumedKernel) Link(ifname string) (LinkInfo, error) {
	n, err := k.nic(ifname)
	if err != nil {
		return LinkInfo{}, err
	}
	idx := n.Index
	if idx == 0 {
		idx = 1
	}
	return LinkInfo{Index: idx, MTU: n.MTU, MaxMTU: n.MaxMTU}, nil
}

func (k *assumedKernel) SetMTU(string, int) error { return ErrAssumed }

func (k *assumedKernel) DCB(req dcbnl.Request) ([][]byte, error) {
	n, err := k.nic(req.Ifname())
	if err != nil {
		return nil, err
	}
	if req.Cmd != dcbnl.CmdIEEEGet {
		return nil, ErrAssumed
	}
	if n.DCBX == nil && n.PFC == nil && n.ETS == nil {
		return nil, syscall.EOPNOTSUPP // saved from a NIC without DCB
	}
	st := dcbnl.IEEE{Ifname: n.Interface, ETS: n.ETS, PFC: n.PFC, Buffer: n.Buffer, Apps: n.Apps}
	if n.DCBX != nil {
		st.DCBX, st.HasDCBX = *n.DCBX, true
	}
	return [][]byte{st.Payload()}, nil
}

func (k *assumedKernel) Pause(ifname string) (Pause, error) {
	n, err := k.nic(ifname)
	if err != nil {
		return Pause{}, err
	}
	if n.Pause == nil {
		return Pause{}, syscall.EOPNOTSUPP
	}
	return *n.Pause, nil
}

func (k *assumedKernel) SetPause(string, Pause) error { return ErrAssumed }

// PFCPreventionTimeout is the saved pfc-prevention-tout, EOPNOTSUPP where
// the NIC had none, and errStormUnknown where the state does not hold it.
func (k *assumedKernel) PFCPreventionTimeout(ifname string) (uint16, error) {
	n, err := k.nic(ifname)
	switch {
	case err != nil:
		return 0, err
	case n.StormTout != nil:
		return *n.StormTout, nil
	case n.NoStormTout:
		return 0, syscall.EOPNOTSUPP
	}
	return 0, errStormUnknown
}

func (k *assumedKernel) SetPFCPreventionTimeout(string, uint16) error { return ErrAssumed }

// readOnlyFiles is Files over an in-memory tree; writes fail.
type readOnlyFiles struct{ fstest.MapFS }

func (readOnlyFiles) WriteFile(string, []byte) error { return ErrAssumed }
func (readOnlyFiles) Mkdir(string) error             { return ErrAssumed }

// assumedFiles builds the /sys a backup implies: each interface's device
// symlink (PCI address) and driver, its speed, and the control files saved.
func assumedFiles(b *Backup) Files {
	m := fstest.MapFS{}
	for _, n := range b.NICs {
		dev := "sys/class/net/" + n.Interface
		if n.PCI != "" {
			m[dev+"/device"] = &fstest.MapFile{Data: []byte("../../../" + n.PCI), Mode: fs.ModeSymlink}
		}
		if n.Driver != "" && n.PCI != "" {
			// device resolves to sys/<pci> here (the links are relative to
			// sys/class/net/<if>); its driver link sits there.
			m["sys/"+n.PCI+"/driver"] = &fstest.MapFile{Data: []byte("bus/pci/drivers/" + n.Driver), Mode: fs.ModeSymlink}
		}
		if n.SpeedMbps > 0 {
			m[dev+"/speed"] = &fstest.MapFile{Data: fmt.Appendf(nil, "%d\n", n.SpeedMbps), Mode: 0o444}
		}
		for _, dir := range n.Dirs {
			m[path.Clean(dir)] = &fstest.MapFile{Mode: fs.ModeDir | 0o755}
		}
		for fp, v := range n.Files {
			m[path.Clean(fp)] = &fstest.MapFile{Data: []byte(v + "\n"), Mode: 0o644}
		}
	}
	return readOnlyFiles{m}
}
