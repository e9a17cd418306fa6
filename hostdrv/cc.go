package hostdrv

import (
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/fabricctl/fabricctl/intent"
)

// Host congestion control: policy.dcqcn written to the NIC's own control
// files, read back and compared like every other control file (Files), and
// policy.nicAccelerations, which no kernel interface reaches (ROCE_ACCL is a
// firmware access register): plan shows the exact mlxreg command as a
// manual step.

// mlx5DCQCN returns the control files of policy.dcqcn on an mlx5 NIC whose
// congestion parameters live in dir, either the upstream debugfs
// cc_params directory (debugfs true: file names from cong.c
// mlx5_ib_dbg_cc_name[], "%u" values, MODIFY_CONG_PARAMS on write) or
// MLNX_OFED's /sys/class/net/<if>/ecn (en_sysfs.c mlx5e_fill_rp_attributes
// and mlx5e_fill_np_attributes: roce_rp/<name>, roce_np/<name>). Values are
// decimal in the firmware's units (intent.DCQCNParams). A file this
// kernel or driver lacks (np_min_time_between_cnps came after the others
// upstream) is a note, never a write.
func mlx5DCQCN(fsys fs.FS, p *intent.Policy, nic intent.NIC, dir string, debugfs bool) ([]File, []string) {
	var files []File
	var missing []string
	for _, v := range p.DCQCN.Values() {
		name, setting := v.MLNXOFED, "ecn/"+v.MLNXOFED
		if debugfs {
			name, setting = v.MLX5, "cc_params/"+v.MLX5
		}
		fp := path.Join(dir, name)
		if !exists(fsys, fp) {
			missing = append(missing, fmt.Sprintf("%s (policy.dcqcn.%s)", name, v.Key))
			continue
		}
		files = append(files, File{Setting: setting, Path: fp, Value: fmt.Sprint(v.Value)})
	}
	var notes []string
	if len(missing) > 0 {
		notes = append(notes, fmt.Sprintf("%s: /%s has no %s (an older driver): not written; on this NIC only mlxconfig sets %s (then a firmware reset)",
			nic.Interface, dir, strings.Join(missing, ", "), mlxconfigDCQCN(fsys, p, nic)))
	}
	return files, notes
}

// mlxconfigDCQCN renders policy.dcqcn as the mlxconfig command that sets
// the same values as persistent firmware configuration: NVIDIA's
// parameter names are the MLNX_OFED sysfs names in upper case with the
// port suffix (RPG_TIME_RESET_P1, as `mlxconfig -d <dev> q` lists them).
func mlxconfigDCQCN(fsys fs.FS, p *intent.Policy, nic intent.NIC) string {
	var kv []string
	for _, v := range p.DCQCN.Values() {
		kv = append(kv, fmt.Sprintf("%s_%s=%d", strings.ToUpper(path.Base(v.MLNXOFED)), mlxPort(fsys, nic.Interface), v.Value))
	}
	return fmt.Sprintf("`mlxconfig -d %s set %s`", pciOr(fsys, nic.Interface), strings.Join(kv, " "))
}

// roceAccelNote is policy.nicAccelerations as a manual step. The ConnectX
// lossy-RoCE accelerations are fields of the ROCE_ACCL access register
// (NVIDIA "Adaptive Retransmission: Parameters Control", ROCE_ACCL layout:
// each <x>_en field is written only when its <x>_field_select bit is set
// in the same SET); no kernel driver exposes them, so fabricctl neither
// writes nor reads them. mlxreg without --overwrite changes only the named
// fields; the register is runtime state, lost at a firmware reset.
func roceAccelNote(fsys fs.FS, p *intent.Policy, nic intent.NIC) string {
	set := p.NICAccelerations.Set()
	if len(set) == 0 {
		return ""
	}
	var kv []string
	for _, f := range set {
		sel := strings.TrimSuffix(f.Register, "_en") + "_field_select"
		if f.Register == "selective_repeat_forced_en" {
			sel = "selective_repeat_forced_en_field_select"
		}
		v := 0
		if f.Value {
			v = 1
		}
		kv = append(kv, fmt.Sprintf("%s=1,%s=%d", sel, f.Register, v))
	}
	pci := pciOr(fsys, nic.Interface)
	return fmt.Sprintf("%s: manual step (policy.nicAccelerations: the ROCE_ACCL register has no kernel interface, so fabricctl cannot write or read it back; runtime state, repeat after a firmware reset or reboot): mlxreg -d %s --yes --reg_name ROCE_ACCL --set \"%s\" ; check with: mlxreg -d %s --yes --reg_name ROCE_ACCL --get",
		nic.Interface, pci, strings.Join(kv, ","), pci)
}

// BNXT is the Broadcom NetXtreme (bnxt_en, RoCE by bnxt_re) backend:
// Generic plus the RoCE congestion control Broadcom's bnxt_re driver
// exposes in configfs (its configfs.c; Broadcom's bnxt_setupcc.sh uses the
// same files): `mkdir /sys/kernel/config/bnxt_re/<ibdev>` creates
// ports/<n>/cc/ with one attribute per parameter. A write is parsed as hex
// (sscanf "%x") and only stages the value (cc_param.mask); writing 1 to
// cc/apply (apply_store, BNXT_RE_MODIFY_CC) hands the staged values to the
// firmware (bnxt_qplib_modify_cc). An attribute reads back the driver's
// copy ("%#x": 0x30, and 0 as 0).
type BNXT struct{}

// Name implements Backend.
func (BNXT) Name() string { return "bnxt" }

// Quirks implements Backend.
func (BNXT) Quirks() Quirks { return Quirks{} }

// bnxtCCRoot is where bnxt_re registers its configfs subsystem
// (configfs.c bnxt_re_subsys, ci_namebuf "bnxt_re").
const bnxtCCRoot = "sys/kernel/config/bnxt_re"

// Desired implements Backend.
func (BNXT) Desired(fsys fs.FS, p *intent.Policy, nic intent.NIC) (NICState, []string) {
	st, notes := baseDesired(fsys, p, nic)
	if n := accelNotSupported(p, nic, "bnxt_en"); n != "" {
		notes = append(notes, n)
	}
	if nic.RDMADevice == "" {
		if p.DCQCN != nil {
			notes = append(notes, fmt.Sprintf("%s: no RDMA device (nics[].rdma) to find bnxt_re's configfs cc directory: policy.dcqcn not written", nic.Interface))
		}
		return st, notes
	}
	if !exists(fsys, bnxtCCRoot) {
		notes = append(notes, fmt.Sprintf("%s: /%s is missing (bnxt_re without configfs support, or configfs not mounted: mount -t configfs none /sys/kernel/config): CNP DSCP %d / priority %d, ECN and policy.dcqcn not written",
			nic.Interface, bnxtCCRoot, p.RoCE.CNPDSCP, p.RoCE.CNPPriority))
		return st, notes
	}
	port := nic.RDMAPort
	if port == 0 {
		port = 1
	}
	dev := path.Join(bnxtCCRoot, nic.RDMADevice)
	cc := path.Join(dev, "ports", fmt.Sprint(port), "cc")
	ecn := 0
	if c := p.RoCEClass(); c != nil && c.ECN != nil {
		ecn = 1 // the RoCE class is ECN-marked: the NIC reacts (DCQCN)
	}
	file := func(name string, v int64) File {
		return File{Setting: "bnxt_re/cc/" + name, Path: path.Join(cc, name), Value: bnxtHex(v), Mkdir: dev}
	}
	st.Files = append(st.Files,
		file("ecn_enable", int64(ecn)),
		file("cnp_dscp", int64(p.RoCE.CNPDSCP)))
	if bnxtServiceProfiles(fsys, nic.RDMADevice) {
		// cnp_prio_store refuses every write when the firmware's service
		// profile assigns the priorities (is_qport_service_type_supported);
		// bnxt_setupcc.sh skips it then too, reading the same debugfs file.
		notes = append(notes, fmt.Sprintf("%s: %s's firmware assigns the CNP priority by its service profile (debugfs bnxt_re/%s/info fw_service_prof_type_sup 1; configfs.c cnp_prio_store refuses writes): cnp_prio %d not written, and cnp_dscp must be a DSCP the profile gives CNPs",
			nic.Interface, nic.RDMADevice, nic.RDMADevice, p.RoCE.CNPPriority))
	} else {
		st.Files = append(st.Files, file("cnp_prio", int64(p.RoCE.CNPPriority)))
	}
	var unmapped []string
	for _, v := range p.DCQCN.Values() {
		switch v.Key {
		case "minTimeBetweenCNPs":
			// min_time_bet_cnp: "minimum time between cnps ... usec"
			// (print_cc_gen1_adv), 16 bits (min_time_bet_cnp_store). Only
			// the P5/P7 attribute set has it (bnxt_re_cc_attrs_ext).
			f := file("min_time_bet_cnp", v.Value)
			if isDir(fsys, cc) && !exists(fsys, f.Path) {
				unmapped = append(unmapped, "minTimeBetweenCNPs (this chip's cc has no min_time_bet_cnp: P5/P7 only)")
				continue
			}
			st.Files = append(st.Files, f)
		default:
			unmapped = append(unmapped, v.Key)
		}
	}
	if len(unmapped) > 0 {
		notes = append(notes, fmt.Sprintf("%s: bnxt_re's congestion control takes its own parameters (cc/g, rtt, init_cr, init_tr, inact_th, ...: Broadcom's DCQCN-D/P, not mlx5's), so policy.dcqcn's %s have no equivalent there: not written",
			nic.Interface, strings.Join(unmapped, ", ")))
	}
	return st, notes
}

// bnxtServiceProfiles reports whether bnxt_re says the firmware assigns
// RoCE and CNP priorities by service profile: its debugfs info file has a
// line "fw_service_prof_type_sup : 1" (bnxt_setupcc.sh reads the third
// field of that line).
func bnxtServiceProfiles(fsys fs.FS, ibdev string) bool {
	b, err := fs.ReadFile(fsys, path.Join("sys/kernel/debug/bnxt_re", ibdev, "info"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "fw_service_prof_type_sup" {
			return f[len(f)-1] == "1"
		}
	}
	return false
}

// bnxtHex renders v as bnxt_re's configfs attributes print it ("%#x": 0
// is "0"), which its stores also parse ("%x" takes the 0x prefix).
func bnxtHex(v int64) string {
	if v == 0 {
		return "0"
	}
	return fmt.Sprintf("%#x", v)
}

// commitFile returns the file that makes the values written to a control
// file fp take effect, or "": bnxt_re stages cc attributes until "1" is
// written to cc/apply in the same directory (configfs.c apply_store).
func commitFile(fp string) (File, bool) {
	dir := path.Dir(fp)
	if !strings.HasPrefix(fp, bnxtCCRoot+"/") || path.Base(dir) != "cc" || path.Base(fp) == "apply" {
		return File{}, false
	}
	return File{Setting: "bnxt_re/cc/apply", Path: path.Join(dir, "apply"), Value: "0x1"}, true
}

// accelNotSupported is the note for policy.nicAccelerations on a NIC that
// is not a ConnectX: ROCE_ACCL is NVIDIA's register.
func accelNotSupported(p *intent.Policy, nic intent.NIC, driver string) string {
	if len(p.NICAccelerations.Set()) == 0 {
		return ""
	}
	if driver == "" {
		driver = "an unknown driver"
	}
	return fmt.Sprintf("%s: policy.nicAccelerations are ConnectX's (the ROCE_ACCL register); this NIC (%s) has no equivalent fabricctl knows: not applied", nic.Interface, driver)
}
