package hostdrv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/plan"
)

// Pause storm prevention (policy.hostPauseStormPrevention) is the ethtool
// tunable ETHTOOL_PFC_PREVENTION_TOUT, which only the SIOCETHTOOL ioctl
// carries: ethtool netlink (include/uapi/linux/ethtool_netlink.h) has no
// tunable message, and ethtool(8) itself sends --get-tunable and
// --set-tunable as ETHTOOL_GTUNABLE / ETHTOOL_STUNABLE ioctls (ethtool.c
// do_gtunable, do_stunable; TestTunableRequestIsEthtools reads the bytes
// it passes). The request is struct ethtool_tunable {u32 cmd, id, type_id,
// len; data[]} followed by the value (include/uapi/linux/ethtool.h); the
// kernel (net/ethtool/ioctl.c ethtool_tunable_valid) takes
// PFC_PREVENTION_TOUT only as a u16 of length 2, and a driver without
// get_tunable/set_tunable (veth, most NICs) or, on mlx5, without the
// pfcc_mask and stall_detect capabilities answers EOPNOTSUPP.
const (
	ethtoolGTunable        = 0x48 // ETHTOOL_GTUNABLE
	ethtoolSTunable        = 0x49 // ETHTOOL_STUNABLE
	ethtoolPFCPreventionID = 3    // ETHTOOL_PFC_PREVENTION_TOUT (enum tunable_id)
	ethtoolTunableU16      = 2    // ETHTOOL_TUNABLE_U16 (enum tunable_type_id)
	tunableHeader          = 16   // sizeof(struct ethtool_tunable)
)

// stormSetting is the setting's name in plan paths and errors, as ethtool
// names the tunable (net/ethtool/common.c tunable_strings).
const stormSetting = "pfc-prevention-tout"

// pfcPreventionRequest is the struct ethtool_tunable (and its u16 value)
// that `ethtool --get-tunable X pfc-prevention-tout` (get) or
// `ethtool --set-tunable X pfc-prevention-tout V` passes to SIOCETHTOOL,
// in the host's byte order.
func pfcPreventionRequest(set bool, v uint16) []byte {
	b := make([]byte, tunableHeader+2)
	cmd := uint32(ethtoolGTunable)
	if set {
		cmd = ethtoolSTunable
	}
	binary.NativeEndian.PutUint32(b[0:], cmd)
	binary.NativeEndian.PutUint32(b[4:], ethtoolPFCPreventionID)
	binary.NativeEndian.PutUint32(b[8:], ethtoolTunableU16)
	binary.NativeEndian.PutUint32(b[12:], 2)
	binary.NativeEndian.PutUint16(b[16:], v)
	return b
}

// errStormUnknown is an assumed state's answer for a NIC whose pause storm
// prevention it does not hold (a fresh mlx5, whose firmware default no
// source gives; a backup older than the setting): the plan writes it.
var errStormUnknown = errors.New("not in the assumed state")

// stormText renders a read-back pfc-prevention-tout: off or the stall time.
func stormText(ms uint16) string {
	if ms == 0 {
		return "off"
	}
	return (time.Duration(ms) * time.Millisecond).String()
}

// stormArg is the value ethtool --set-tunable takes for sp: 0, 65535 (auto)
// or the milliseconds.
func stormArg(sp intent.PauseStormPrevention) string { return fmt.Sprint(sp.Tunable()) }

// diffStorm plans policy.hostPauseStormPrevention on one NIC. A NIC that
// cannot do it (EOPNOTSUPP) with the prevention wanted on is a plan error:
// apply then writes nothing to the host, rather than leave it with the rest
// of the policy and no storm prevention. Wanted off, such a NIC already
// has none: a note.
func (d *Driver) diffStorm(p *Plan, ifn string, sp intent.PauseStormPrevention, obs *nicObs) error {
	path := ifn + "/" + stormSetting
	restoring := p.backup != nil
	reason := "policy.hostPauseStormPrevention " + sp.String()
	if sp == intent.PauseStormAuto {
		reason += " (written 65535, PFC_STORM_PREVENTION_AUTO; mlx5 reads it back as 100ms)"
	}
	switch {
	case obs.NoStormTout && !sp.On():
		p.Target.Notes = append(p.Target.Notes, fmt.Sprintf("%s: the NIC has no pause storm prevention (ethtool tunable %s: EOPNOTSUPP): off, as policy.hostPauseStormPrevention asks", ifn, stormSetting))
		return nil
	case obs.NoStormTout:
		return settingErr(ifn, stormSetting, syscall.EOPNOTSUPP)
	case obs.stormErr != nil:
		return settingErr(ifn, stormSetting, obs.stormErr)
	}
	bs, exists := "unknown", obs.StormTout != nil
	if exists {
		bs = stormText(*obs.StormTout)
	}
	as := stormText(sp.ReadBack())
	a := change(bs, as, true)
	p.add(plan.Change{Action: a, Path: path, Before: bs, After: as, Reason: reasonOr(restoring, reason)}, false)
	if a != plan.NoOp {
		v := sp.Tunable()
		p.Steps = append(p.Steps, Step{Path: path, kind: kindStorm,
			Command: fmt.Sprintf("ethtool --set-tunable %s %s %s", ifn, stormSetting, stormArg(sp)),
			run:     func() error { return settingErr(ifn, stormSetting, d.Kernel.SetPFCPreventionTimeout(ifn, v)) }})
	}
	return nil
}

// observeStorm reads the NIC's pfc-prevention-tout into o.
func (d *Driver) observeStorm(o *nicObs) {
	v, err := d.Kernel.PFCPreventionTimeout(o.Interface)
	switch {
	case err == nil:
		o.StormTout = &v
	case errors.Is(err, syscall.EOPNOTSUPP):
		o.NoStormTout = true
	case errors.Is(err, errStormUnknown):
	default:
		o.stormErr = err // an error only where the intent sets it
	}
}
