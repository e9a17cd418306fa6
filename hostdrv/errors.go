package hostdrv

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	"github.com/fabricctl/fabricctl/hostdrv/internal/dcbnl"
)

// SettingError is a failure to read or write one setting of one interface.
// Its message names the interface, the setting and the cause in words, e.g.
// "ens1f0np0: PFC: driver has no DCB support (EOPNOTSUPP) — is this a VF?".
type SettingError struct {
	Interface string
	Setting   string // "PFC", "MTU", "rdma_cm/default_roce_tos", ...
	Err       error
}

func (e *SettingError) Error() string {
	return fmt.Sprintf("%s: %s: %s", e.Interface, e.Setting, explain(e.Setting, e.Err))
}

func (e *SettingError) Unwrap() error { return e.Err }

func settingErr(iface, setting string, err error) error {
	if err == nil {
		return nil
	}
	return &SettingError{Interface: iface, Setting: setting, Err: err}
}

var errnoNames = map[syscall.Errno]string{
	syscall.EOPNOTSUPP: "EOPNOTSUPP", syscall.ENODEV: "ENODEV", syscall.EINVAL: "EINVAL",
	syscall.EPERM: "EPERM", syscall.EACCES: "EACCES", syscall.ENOENT: "ENOENT",
	syscall.EBUSY: "EBUSY", syscall.ERANGE: "ERANGE", syscall.ENOMEM: "ENOMEM",
	syscall.ENOSPC: "ENOSPC", syscall.EEXIST: "EEXIST", syscall.EIO: "EIO",
}

func errnoName(e syscall.Errno) string {
	if n, ok := errnoNames[e]; ok {
		return n
	}
	return fmt.Sprintf("errno %d", int(e))
}

// explain turns a kernel error into words an operator can act on.
func explain(setting string, err error) string {
	var de *dcbnl.DriverError
	isDriver := errors.As(err, &de)
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		if isDriver {
			return "the driver rejected the setting (" + de.Error() + ")"
		}
		return err.Error()
	}
	name := errnoName(errno)
	switch {
	case errno == syscall.ENODEV && strings.HasPrefix(setting, "rdma_cm/"):
		// configfs refuses mkdir rdma_cm/<ibdev> for an unknown RDMA device.
		return fmt.Sprintf("RDMA device not found (ENODEV) — check nics[].rdma in the intent (see `rdma link`): %v", err)
	case errno == syscall.ENODEV:
		return "interface not found (ENODEV) — check nics[].interface in the intent"
	case errno == syscall.EPERM || errno == syscall.EACCES:
		return fmt.Sprintf("permission denied (%s) — run as root (CAP_NET_ADMIN)", name)
	case errno == syscall.EOPNOTSUPP && isDriver:
		return fmt.Sprintf("the driver does not support this %s setting (EOPNOTSUPP)", setting)
	case errno == syscall.EOPNOTSUPP && setting == "pause":
		return "driver has no 802.3x pause control (EOPNOTSUPP)"
	case errno == syscall.EOPNOTSUPP && setting == stormSetting:
		return "this NIC cannot do policy.hostPauseStormPrevention: its driver has no pause storm prevention (ethtool tunable pfc-prevention-tout answers EOPNOTSUPP; mlx5 has it on ConnectX with the pfcc_mask and stall_detect capabilities); host apply writes nothing to a host whose plan has this error (without --partial): leave policy.hostPauseStormPrevention out, or off, for a fabric with such NICs"
	case errno == syscall.EINVAL && setting == stormSetting:
		return "the driver refused the stall time (EINVAL; mlx5 takes 0, 80-8000 ms or 65535 = auto)"
	case errno == syscall.EOPNOTSUPP:
		return "driver has no DCB support (EOPNOTSUPP) — is this a VF?"
	case isDriver:
		return fmt.Sprintf("the driver rejected the setting: %v (%s)", errno, name)
	}
	// err, not errno: keep what the caller wrapped around it (the file path).
	return fmt.Sprintf("%v (%s)", err, name)
}
