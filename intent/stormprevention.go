package intent

import (
	"fmt"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// PauseStormPrevention is policy.hostPauseStormPrevention: the host NICs'
// own pause storm prevention, as the Linux mlx5 driver takes it (the ethtool
// tunable ETHTOOL_PFC_PREVENTION_TOUT, "pfc-prevention-tout", a u16 in
// milliseconds; include/uapi/linux/ethtool.h). A NIC that is stuck sending
// pause (a hung driver or host) stops sending it after this stall time, so
// its switch port's queue moves again; drivers/net/ethernet/mellanox/mlx5/
// core/en_ethtool.c mlx5e_set_pfc_prevention_tout takes 80-8000 ms,
// PFC_STORM_PREVENTION_AUTO (0xffff) as 100 ms
// (MLX5E_PFC_PREVEN_AUTO_TOUT_MSEC) and 0 as off, and
// mlx5e_get_pfc_prevention_tout reads back the critical stall watermark
// (so auto reads back as 100). Both answer EOPNOTSUPP without the pfcc_mask
// and stall_detect capabilities.
//
// The value is the stall time; PauseStormOff (0) and PauseStormAuto (-1)
// are the two words.
type PauseStormPrevention time.Duration

// The words of policy.hostPauseStormPrevention and the mlx5 range.
const (
	PauseStormOff  PauseStormPrevention = 0
	PauseStormAuto PauseStormPrevention = -1
	// PauseStormMin and PauseStormMax are mlx5's
	// MLX5E_PFC_PREVEN_TOUT_MIN_MSEC and _MAX_MSEC.
	PauseStormMin = 80 * time.Millisecond
	PauseStormMax = 8000 * time.Millisecond
	// PauseStormAutoTimeout is what auto means on mlx5
	// (MLX5E_PFC_PREVEN_AUTO_TOUT_MSEC) and what the NIC reads back.
	PauseStormAutoTimeout = 100 * time.Millisecond
	// PauseStormTunableAuto is PFC_STORM_PREVENTION_AUTO, the u16 auto is
	// written as (include/uapi/linux/ethtool.h).
	PauseStormTunableAuto = 0xffff
)

// String renders p as the intent writes it: off, auto or 150ms.
func (p PauseStormPrevention) String() string {
	switch p {
	case PauseStormOff:
		return "off"
	case PauseStormAuto:
		return "auto"
	}
	return time.Duration(p).String()
}

// Tunable is the u16 written to ETHTOOL_PFC_PREVENTION_TOUT: 0 (off),
// 0xffff (auto) or the stall time in ms.
func (p PauseStormPrevention) Tunable() uint16 {
	if p == PauseStormAuto {
		return PauseStormTunableAuto
	}
	return uint16(time.Duration(p) / time.Millisecond)
}

// ReadBack is what the NIC reports after p is written (mlx5 reads the
// critical stall watermark back: 100 for auto).
func (p PauseStormPrevention) ReadBack() uint16 {
	if p == PauseStormAuto {
		return uint16(PauseStormAutoTimeout / time.Millisecond)
	}
	return p.Tunable()
}

// On reports whether p turns the prevention on.
func (p PauseStormPrevention) On() bool { return p != PauseStormOff }

// ParsePauseStormPrevention reads "off", "auto" or a stall time of whole
// milliseconds within 80ms-8s.
func ParsePauseStormPrevention(s string) (PauseStormPrevention, error) {
	switch strings.TrimSpace(s) {
	case "off":
		return PauseStormOff, nil
	case "auto":
		return PauseStormAuto, nil
	}
	d, err := ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("want off, auto or a stall time 80ms-8s: %v", err)
	}
	if d == 0 {
		return 0, fmt.Errorf("%s: write off to turn the prevention off", strings.TrimSpace(s))
	}
	if d%time.Millisecond != 0 {
		return 0, fmt.Errorf("%s is not a whole number of milliseconds (the NIC takes pfc-prevention-tout in ms)", d)
	}
	if d < PauseStormMin || d > PauseStormMax {
		return 0, fmt.Errorf("%s is out of range 80ms-8s (mlx5 en_ethtool.c mlx5e_set_pfc_prevention_tout; or write off, or auto for mlx5's 100ms)", d)
	}
	return PauseStormPrevention(d), nil
}

func (p *PauseStormPrevention) decodeNode(n *yaml.Node) error {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
		return fmt.Errorf("%s is a boolean: write off, auto or a stall time 80ms-8s (e.g. 100ms)", n.Value)
	}
	v, err := scalarString(n)
	if err != nil {
		return err
	}
	if n.Tag == "!!int" && v == "0" {
		return fmt.Errorf("0: write off to turn the prevention off")
	}
	if n.Tag == "!!int" {
		return fmt.Errorf("%s needs a unit (e.g. %sms), or write off or auto", v, v)
	}
	*p, err = ParsePauseStormPrevention(v)
	return err
}
