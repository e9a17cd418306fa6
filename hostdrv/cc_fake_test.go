package hostdrv

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// mlx5FirmwareCC are the congestion parameters of a ConnectX as the test
// double's firmware holds them before anything is written: mlx5's
// defaults as `mlxconfig q` prints them (the ones internal/sim's
// MLX5Defaults cites), by upstream debugfs name, with the MLNX_OFED sysfs
// name of the same parameter.
var mlx5FirmwareCC = map[string]struct {
	ofed  string
	value int64
}{
	"rp_clamp_tgt_rate":             {"roce_rp/clamp_tgt_rate", 0},
	"rp_clamp_tgt_rate_ati":         {"roce_rp/clamp_tgt_rate_after_time_inc", 1},
	"rp_time_reset":                 {"roce_rp/rpg_time_reset", 300},
	"rp_byte_reset":                 {"roce_rp/rpg_byte_reset", 32767},
	"rp_threshold":                  {"roce_rp/rpg_threshold", 1},
	"rp_ai_rate":                    {"roce_rp/rpg_ai_rate", 5},
	"rp_max_rate":                   {"roce_rp/rpg_max_rate", 0},
	"rp_hai_rate":                   {"roce_rp/rpg_hai_rate", 50},
	"rp_min_dec_fac":                {"roce_rp/rpg_min_dec_fac", 50},
	"rp_min_rate":                   {"roce_rp/rpg_min_rate", 1},
	"rp_rate_to_set_on_first_cnp":   {"roce_rp/rate_to_set_on_first_cnp", 0},
	"rp_dce_tcp_g":                  {"roce_rp/dce_tcp_g", 1019},
	"rp_dce_tcp_rtt":                {"roce_rp/dce_tcp_rtt", 1},
	"rp_rate_reduce_monitor_period": {"roce_rp/rate_reduce_monitor_period", 4},
	"rp_initial_alpha_value":        {"roce_rp/initial_alpha_value", 1023},
	"rp_gd":                         {"roce_rp/rpg_gd", 11},
	"np_min_time_between_cnps":      {"roce_np/min_time_between_cnps", 4},
}

// playCC plays the drivers behind the congestion-control files: upstream
// mlx5's debugfs cc_params (cong.c set_param: kstrtou32 base 0, else
// -EINVAL; get_param prints "%u"; writing np_cnp_prio also sets
// np_cnp_prio_mode to 0) and bnxt_re's configfs cc attributes (configfs.c:
// sscanf "%x", the attribute's mask or range, shown as "%#x"; values are
// staged until "1" is written to apply, which hands them to the
// firmware). Anything else is not handled.
func (c *countingFiles) playCC(name string, data []byte) (bool, error) {
	full := filepath.Join(c.Root, filepath.FromSlash(name))
	v := strings.TrimSpace(string(data))
	switch {
	case strings.Contains(name, "/cc_params/"):
		if _, err := os.Stat(full); err != nil {
			return true, err
		}
		n, err := strconv.ParseUint(v, 0, 32)
		if err != nil {
			return true, syscall.EINVAL
		}
		if path.Base(name) == "np_cnp_prio" {
			if err := os.WriteFile(filepath.Join(filepath.Dir(full), "np_cnp_prio_mode"), []byte("0\n"), 0o644); err != nil {
				return true, err
			}
		}
		return true, os.WriteFile(full, fmt.Appendf(nil, "%d\n", n), 0o644)
	case strings.HasPrefix(name, bnxtCCRoot+"/") && path.Base(path.Dir(name)) == "cc":
		if _, err := os.Stat(full); err != nil {
			return true, err
		}
		h := strings.TrimPrefix(strings.TrimPrefix(v, "0x"), "0X")
		n, err := strconv.ParseUint(h, 16, 32)
		if err != nil {
			return true, syscall.EINVAL // the driver's sscanf would leave val unset
		}
		switch path.Base(name) {
		case "apply":
			if n == 1 { // BNXT_RE_MODIFY_CC
				c.mu.Lock()
				defer c.mu.Unlock()
				if c.bnxtFW == nil {
					c.bnxtFW = map[string]string{}
				}
				ents, err := os.ReadDir(filepath.Dir(full))
				if err != nil {
					return true, err
				}
				for _, e := range ents {
					if e.Name() == "apply" {
						continue
					}
					b, err := os.ReadFile(filepath.Join(filepath.Dir(full), e.Name()))
					if err != nil {
						return true, err
					}
					c.bnxtFW[path.Join(path.Dir(name), e.Name())] = strings.TrimSpace(string(b))
				}
			}
			return true, nil
		case "cnp_dscp":
			if n > 0x3f {
				return true, syscall.EINVAL
			}
		case "cnp_prio":
			n &= 0x07
		case "ecn_enable":
			n &= 0xff
		case "min_time_bet_cnp":
			n &= 0xffff
		}
		return true, os.WriteFile(full, []byte(bnxtHex(int64(n))+"\n"), 0o644)
	}
	return false, nil
}

// mkdirBnxtRE plays bnxt_re's configfs make_group: the directory of an
// existing RDMA device gets ports/1/cc (the P5/P7 attribute set,
// bnxt_re_cc_attrs_ext, in part) and ports/1/tunables; an unknown device
// is ENODEV (__get_rdev_from_name).
func (c *countingFiles) mkdirBnxtRE(dev string) error {
	if _, err := os.Stat(filepath.Join(c.Root, "sys/class/infiniband", dev)); err != nil {
		return syscall.ENODEV
	}
	base := filepath.Join(c.Root, filepath.FromSlash(bnxtCCRoot), dev)
	if err := os.Mkdir(base, 0o755); err != nil {
		return err
	}
	cc := filepath.Join(base, "ports/1/cc")
	if err := os.MkdirAll(cc, 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(base, "ports/1/tunables"), 0o755); err != nil {
		return err
	}
	for name, v := range map[string]string{
		"apply": "ecn status : Disabled", "advanced": "0", "cnp_dscp": "0", "cnp_prio": "0", "cc_mode": "0x1",
		"ecn_enable": "0", "g": "0x8", "init_cr": "0x3e8", "inact_th": "0x1f4", "init_tr": "0x3e8", "rtt": "0x28",
		"roce_dscp": "0", "roce_prio": "0", "ecn_marking": "0", "disable_prio_vlan_tx": "0", "min_time_bet_cnp": "0",
	} {
		if err := os.WriteFile(filepath.Join(cc, name), []byte(v+"\n"), 0o644); err != nil {
			return err
		}
	}
	return nil
}
