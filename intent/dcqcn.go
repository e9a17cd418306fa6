package intent

import (
	"fmt"
	"math"
	"time"
)

// DCQCN is the host congestion-control reaction point (RP) and notification
// point (NP) parameters of policy.dcqcn. A nil field was not written in the
// intent: the NIC keeps its own value (the whole block absent: Policy.DCQCN
// is nil and no NIC value is touched).
//
// The fields are named after the mlx5 firmware's congestion parameters
// (include/linux/mlx5/mlx5_ifc.h cong_control_r_roce_ecn_rp/np, the upstream
// debugfs files drivers/infiniband/hw/mlx5/cong.c mlx5_ib_dbg_cc_name[]);
// DCQCNParams gives each one's key, the unit the NICs take it in and the
// range the vendor sources accept. Values are kept in Go units: time as
// time.Duration, sizes in bytes, rates in bits/s, the factor in percent.
type DCQCN struct {
	RateReduceMonitorPeriod *time.Duration // rp_rate_reduce_monitor_period
	TimeReset               *time.Duration // rp_time_reset
	ByteReset               *int64         // rp_byte_reset, bytes
	Threshold               *int           // rp_threshold
	AIRate                  *int64         // rp_ai_rate, bits/s
	HAIRate                 *int64         // rp_hai_rate, bits/s
	MinDecreaseFactor       *int           // rp_min_dec_fac, percent
	MinRate                 *int64         // rp_min_rate, bits/s
	RateOnFirstCNP          *int64         // rp_rate_to_set_on_first_cnp, bits/s; 0 = line rate
	G                       *int           // rp_dce_tcp_g
	AlphaUpdatePeriod       *time.Duration // rp_dce_tcp_rtt
	InitialAlpha            *int           // rp_initial_alpha_value
	GD                      *int           // rp_gd
	ClampTargetRate         *bool          // rp_clamp_tgt_rate
	// ClampTargetRateAfterTimeIncrease is rp_clamp_tgt_rate_ati.
	ClampTargetRateAfterTimeIncrease *bool
	MinTimeBetweenCNPs               *time.Duration // np_min_time_between_cnps
	Fields                           Fields         // where each key written for it is
	Pos                              Pos
}

// NICAccelerations are the ConnectX lossy-RoCE loss-recovery accelerations
// of the ROCE_ACCL access register (NVIDIA "Adaptive Retransmission";
// DOMAIN.md section 9). A nil field was not written: the NIC keeps its own.
type NICAccelerations struct {
	AdaptiveRetransmission *bool // roce_adp_retrans_en
	TxWindow               *bool // roce_tx_window_en
	SlowRestart            *bool // roce_slow_restart_en
	SlowRestartIdle        *bool // roce_slow_restart_idle_en
	SelectiveRepeat        *bool // selective_repeat_forced_en
	Fields                 Fields
	Pos                    Pos
}

// DCQCNParam is one policy.dcqcn field: its YAML key, the unit NIC drivers
// take it in, and the range in that unit that the vendor sources accept.
// DCQCNParams is the one home of these facts: the parser checks the ranges,
// host drivers write the values in Unit, tune searches within the range.
type DCQCNParam struct {
	Key string
	// Unit is the NIC's unit: "us" (microseconds), "B" (bytes), "Mb/s",
	// "%", "" (a plain count or code) or "bool" (0 or 1).
	Unit     string
	Min, Max int64
	// Source says where the unit and range come from.
	Source string
	// MLX5 is the upstream debugfs cc_params file (cong.c
	// mlx5_ib_dbg_cc_name[]); MLNXOFED the MLNX_OFED sysfs file under
	// /sys/class/net/<if>/ecn/ (en_sysfs.c mlx5e_fill_rp_attributes,
	// mlx5e_fill_np_attributes).
	MLX5, MLNXOFED string
	// get returns the field's value in Unit, whether it is a whole number
	// of Unit, and whether it is set.
	get func(d *DCQCN) (v int64, exact, set bool)
}

// maxInt32 is INT_MAX, the upper bound ionic_dcqcn.c gives most attributes
// (DCQCN_INT_ATTR(1, INT_MAX, ...)); the mlx5 firmware fields are u32.
const maxInt32 = math.MaxInt32

// The sources, cited in DCQCNParams' Source fields.
const (
	srcMLX5  = "mlx5: u32 firmware field (mlx5_ifc.h cong_control_r_roce_ecn_rp/np)"
	srcIonic = "ionic_dcqcn.c dcqcn_attrs"
)

// DCQCNParams returns every policy.dcqcn field in YAML order. The ranges
// are where the sources agree: the mlx5 firmware fields are 32-bit
// (mlx5_ifc.h) and the upstream driver passes any u32 through (cong.c
// set_param, kstrtou32); the AMD Pensando ionic driver refuses a value
// outside its per-attribute min/max (ionic_dcqcn.c dcqcn_attrs,
// dcqcn_param_write: -EINVAL); Broadcom bnxt_re keeps the minimum time
// between CNPs in 16 bits (configfs.c min_time_bet_cnp_store: val &
// 0xFFFF, microseconds). Units are the mlx5 firmware's, which the ionic
// attributes share by name: times in microseconds, rates in Mb/s, the
// byte counter in bytes, the decrease factor in percent (NVIDIA "DCQCN
// parameters"; the ionic defaults in ionic_dcqcn.c dcqcn_defaults are in
// the same units).
func DCQCNParams() []DCQCNParam {
	us := func(p *time.Duration) (int64, bool, bool) {
		if p == nil {
			return 0, true, false
		}
		return int64(*p / time.Microsecond), *p%time.Microsecond == 0, true
	}
	mbps := func(p *int64) (int64, bool, bool) {
		if p == nil {
			return 0, true, false
		}
		return *p / 1_000_000, *p%1_000_000 == 0, true
	}
	i64 := func(p *int64) (int64, bool, bool) {
		if p == nil {
			return 0, true, false
		}
		return *p, true, true
	}
	num := func(p *int) (int64, bool, bool) {
		if p == nil {
			return 0, true, false
		}
		return int64(*p), true, true
	}
	flag := func(p *bool) (int64, bool, bool) {
		if p == nil {
			return 0, true, false
		}
		if *p {
			return 1, true, true
		}
		return 0, true, true
	}
	return []DCQCNParam{
		{Key: "rateReduceMonitorPeriod", Unit: "us", Min: 1, Max: maxInt32, Source: srcIonic + " rate_reduce_monitor_period 1..INT_MAX; " + srcMLX5,
			MLX5: "rp_rate_reduce_monitor_period", MLNXOFED: "roce_rp/rate_reduce_monitor_period",
			get: func(d *DCQCN) (int64, bool, bool) { return us(d.RateReduceMonitorPeriod) }},
		{Key: "timeReset", Unit: "us", Min: 1, Max: 32767, Source: srcIonic + " time_reset 1..32767; " + srcMLX5,
			MLX5: "rp_time_reset", MLNXOFED: "roce_rp/rpg_time_reset",
			get: func(d *DCQCN) (int64, bool, bool) { return us(d.TimeReset) }},
		{Key: "byteReset", Unit: "B", Min: 1, Max: maxInt32, Source: srcIonic + " byte_reset 1..INT_MAX; " + srcMLX5,
			MLX5: "rp_byte_reset", MLNXOFED: "roce_rp/rpg_byte_reset",
			get: func(d *DCQCN) (int64, bool, bool) { return i64(d.ByteReset) }},
		{Key: "threshold", Unit: "", Min: 1, Max: 31, Source: srcIonic + " threshold 1..31; " + srcMLX5,
			MLX5: "rp_threshold", MLNXOFED: "roce_rp/rpg_threshold",
			get: func(d *DCQCN) (int64, bool, bool) { return num(d.Threshold) }},
		{Key: "aiRate", Unit: "Mb/s", Min: 1, Max: maxInt32, Source: srcIonic + " ai_rate 1..INT_MAX; " + srcMLX5,
			MLX5: "rp_ai_rate", MLNXOFED: "roce_rp/rpg_ai_rate",
			get: func(d *DCQCN) (int64, bool, bool) { return mbps(d.AIRate) }},
		{Key: "haiRate", Unit: "Mb/s", Min: 1, Max: maxInt32, Source: srcIonic + " hai_rate 1..INT_MAX; " + srcMLX5,
			MLX5: "rp_hai_rate", MLNXOFED: "roce_rp/rpg_hai_rate",
			get: func(d *DCQCN) (int64, bool, bool) { return mbps(d.HAIRate) }},
		{Key: "minDecreaseFactor", Unit: "%", Min: 0, Max: 100, Source: srcIonic + " min_dec_fac 0..100; " + srcMLX5,
			MLX5: "rp_min_dec_fac", MLNXOFED: "roce_rp/rpg_min_dec_fac",
			get: func(d *DCQCN) (int64, bool, bool) { return num(d.MinDecreaseFactor) }},
		{Key: "minRate", Unit: "Mb/s", Min: 1, Max: maxInt32, Source: srcIonic + " min_rate 1..INT_MAX; " + srcMLX5,
			MLX5: "rp_min_rate", MLNXOFED: "roce_rp/rpg_min_rate",
			get: func(d *DCQCN) (int64, bool, bool) { return mbps(d.MinRate) }},
		// 0 is mlx5's "line rate" (its default, mlxconfig
		// RATE_TO_SET_ON_FIRST_CNP 0); ionic refuses 0 (1..INT_MAX).
		{Key: "rateOnFirstCNP", Unit: "Mb/s", Min: 0, Max: maxInt32, Source: srcMLX5 + ", 0 = line rate; " + srcIonic + " rate_to_set_on_first_cnp 1..INT_MAX",
			MLX5: "rp_rate_to_set_on_first_cnp", MLNXOFED: "roce_rp/rate_to_set_on_first_cnp",
			get: func(d *DCQCN) (int64, bool, bool) { return mbps(d.RateOnFirstCNP) }},
		{Key: "g", Unit: "", Min: 0, Max: 1023, Source: srcIonic + " dce_tcp_g 0..1023; " + srcMLX5,
			MLX5: "rp_dce_tcp_g", MLNXOFED: "roce_rp/dce_tcp_g",
			get: func(d *DCQCN) (int64, bool, bool) { return num(d.G) }},
		{Key: "alphaUpdatePeriod", Unit: "us", Min: 1, Max: 131071, Source: srcIonic + " dce_tcp_rtt 1..131071; " + srcMLX5,
			MLX5: "rp_dce_tcp_rtt", MLNXOFED: "roce_rp/dce_tcp_rtt",
			get: func(d *DCQCN) (int64, bool, bool) { return us(d.AlphaUpdatePeriod) }},
		{Key: "initialAlpha", Unit: "", Min: 0, Max: 1023, Source: srcIonic + " initial_alpha_value 0..1023; " + srcMLX5,
			MLX5: "rp_initial_alpha_value", MLNXOFED: "roce_rp/initial_alpha_value",
			get: func(d *DCQCN) (int64, bool, bool) { return num(d.InitialAlpha) }},
		{Key: "gd", Unit: "", Min: 1, Max: 11, Source: srcIonic + " gd 1..11; " + srcMLX5,
			MLX5: "rp_gd", MLNXOFED: "roce_rp/rpg_gd",
			get: func(d *DCQCN) (int64, bool, bool) { return num(d.GD) }},
		{Key: "clampTargetRate", Unit: "bool", Min: 0, Max: 1, Source: srcIonic + " clamp_tgt_rate (bool); mlx5 1-bit clamp_tgt_rate",
			MLX5: "rp_clamp_tgt_rate", MLNXOFED: "roce_rp/clamp_tgt_rate",
			get: func(d *DCQCN) (int64, bool, bool) { return flag(d.ClampTargetRate) }},
		{Key: "clampTargetRateAfterTimeIncrease", Unit: "bool", Min: 0, Max: 1, Source: srcIonic + " clamp_tgt_rate_ati (bool); mlx5 1-bit clamp_tgt_rate_after_time_inc",
			MLX5: "rp_clamp_tgt_rate_ati", MLNXOFED: "roce_rp/clamp_tgt_rate_after_time_inc",
			get: func(d *DCQCN) (int64, bool, bool) { return flag(d.ClampTargetRateAfterTimeIncrease) }},
		{Key: "minTimeBetweenCNPs", Unit: "us", Min: 0, Max: 65535, Source: "bnxt_re configfs.c min_time_bet_cnp (16 bits, usec); " + srcMLX5 + " min_time_between_cnps",
			MLX5: "np_min_time_between_cnps", MLNXOFED: "roce_np/min_time_between_cnps",
			get: func(d *DCQCN) (int64, bool, bool) { return us(d.MinTimeBetweenCNPs) }},
	}
}

// DCQCNValue is one set policy.dcqcn field in its NIC unit.
type DCQCNValue struct {
	DCQCNParam
	Value int64
}

// Values returns the fields the intent sets, in DCQCNParams order, each in
// the unit NIC drivers take (DCQCNParam.Unit). Nil d has none.
func (d *DCQCN) Values() []DCQCNValue {
	if d == nil {
		return nil
	}
	var out []DCQCNValue
	for _, p := range DCQCNParams() {
		if v, _, set := p.get(d); set {
			out = append(out, DCQCNValue{DCQCNParam: p, Value: v})
		}
	}
	return out
}

// FormatNIC renders v in its unit for messages ("300 us", "5 Mb/s", "on").
func (v DCQCNValue) FormatNIC() string {
	switch v.Unit {
	case "bool":
		return map[bool]string{true: "on", false: "off"}[v.Value != 0]
	case "":
		return fmt.Sprint(v.Value)
	case "%":
		return fmt.Sprintf("%d%%", v.Value)
	}
	return fmt.Sprintf("%d %s", v.Value, v.Unit)
}

// NICAccelerationField is one policy.nicAccelerations field and the
// ROCE_ACCL register field it sets.
type NICAccelerationField struct {
	Key      string
	Register string // ROCE_ACCL field name, as mlxreg prints it
	Value    bool
}

// Set returns the fields the intent writes, in YAML order. Nil a has none.
func (a *NICAccelerations) Set() []NICAccelerationField {
	if a == nil {
		return nil
	}
	var out []NICAccelerationField
	for _, f := range []struct {
		key, reg string
		v        *bool
	}{
		{"adaptiveRetransmission", "roce_adp_retrans_en", a.AdaptiveRetransmission},
		{"txWindow", "roce_tx_window_en", a.TxWindow},
		{"slowRestart", "roce_slow_restart_en", a.SlowRestart},
		{"slowRestartIdle", "roce_slow_restart_idle_en", a.SlowRestartIdle},
		{"selectiveRepeat", "selective_repeat_forced_en", a.SelectiveRepeat},
	} {
		if f.v != nil {
			out = append(out, NICAccelerationField{Key: f.key, Register: f.reg, Value: *f.v})
		}
	}
	return out
}

// dcqcn resolves policy.dcqcn: every set field is checked against
// DCQCNParams' range, in the NIC's unit, and must be a whole number of it.
func (r *resolver) dcqcn(rd *rawDCQCN, file string) {
	if rd == nil {
		return
	}
	d := &DCQCN{Pos: withFile(rd.Pos, file), Fields: fieldsIn(rd.Keys, file)}
	dur := func(p *Duration) *time.Duration {
		if p == nil {
			return nil
		}
		v := time.Duration(*p)
		return &v
	}
	size := func(p *Size) *int64 {
		if p == nil {
			return nil
		}
		v := int64(*p)
		return &v
	}
	rate := func(p *Rate) *int64 {
		if p == nil {
			return nil
		}
		v := int64(*p)
		return &v
	}
	d.RateReduceMonitorPeriod = dur(rd.RateReduceMonitorPeriod)
	d.TimeReset = dur(rd.TimeReset)
	d.ByteReset = size(rd.ByteReset)
	d.Threshold = rd.Threshold
	d.AIRate = rate(rd.AIRate)
	d.HAIRate = rate(rd.HAIRate)
	if rd.MinDecreaseFactor != nil {
		f := float64(*rd.MinDecreaseFactor)
		if f != math.Trunc(f) {
			r.errorf(d.Fields.At("minDecreaseFactor", d.Pos), "policy.dcqcn.minDecreaseFactor", "%g%% is not a whole percentage (NICs take rp_min_dec_fac in whole percent)", f)
		}
		v := int(f)
		d.MinDecreaseFactor = &v
	}
	d.MinRate = rate(rd.MinRate)
	d.RateOnFirstCNP = rate(rd.RateOnFirstCNP)
	d.G = rd.G
	d.AlphaUpdatePeriod = dur(rd.AlphaUpdatePeriod)
	d.InitialAlpha = rd.InitialAlpha
	d.GD = rd.GD
	d.ClampTargetRate = rd.ClampTargetRate
	d.ClampTargetRateAfterTimeIncrease = rd.ClampTargetRateAfterTimeIncrease
	d.MinTimeBetweenCNPs = dur(rd.MinTimeBetweenCNPs)
	for _, p := range DCQCNParams() {
		v, exact, set := p.get(d)
		if !set || p.Unit == "" || p.Unit == "bool" {
			continue // plain counts: the decoder checks their range tags
		}
		at, path := d.Fields.At(p.Key, d.Pos), "policy.dcqcn."+p.Key
		switch {
		case !exact:
			r.errorf(at, path, "not a whole number of %s: NICs take %s in %s", unitWord(p.Unit), p.Key, unitWord(p.Unit))
		case v < p.Min || v > p.Max:
			r.errorf(at, path, "%s is out of range %s (%s)", formatIn(v, p.Unit), rangeIn(p), p.Source)
		}
	}
	r.f.Policy.DCQCN = d
}

// nicAccelerations resolves policy.nicAccelerations.
func (r *resolver) nicAccelerations(ra *rawNICAccel, file string) {
	if ra == nil {
		return
	}
	r.f.Policy.NICAccelerations = &NICAccelerations{
		AdaptiveRetransmission: ra.AdaptiveRetransmission,
		TxWindow:               ra.TxWindow,
		SlowRestart:            ra.SlowRestart,
		SlowRestartIdle:        ra.SlowRestartIdle,
		SelectiveRepeat:        ra.SelectiveRepeat,
		Fields:                 fieldsIn(ra.Keys, file),
		Pos:                    withFile(ra.Pos, file),
	}
}

func unitWord(u string) string {
	switch u {
	case "us":
		return "microseconds"
	case "B":
		return "bytes"
	case "Mb/s":
		return "Mb/s"
	case "%":
		return "percent"
	}
	return "units"
}

// formatIn renders v (in unit u) as the intent would write it.
func formatIn(v int64, u string) string {
	switch u {
	case "us":
		return fmt.Sprintf("%dus", v)
	case "B":
		return FormatSize(v)
	case "Mb/s":
		if v == 0 {
			return "0"
		}
		return FormatRate(v * 1_000_000)
	case "%":
		return fmt.Sprintf("%d%%", v)
	case "bool":
		return fmt.Sprint(v != 0)
	}
	return fmt.Sprint(v)
}

// Intent renders v as policy.dcqcn writes it in YAML (55us, 32767B, 5M,
// 50%, 1019, true): what a tool that proposes values (tune) prints.
func (v DCQCNValue) Intent() string { return formatIn(v.Value, v.Unit) }

func rangeIn(p DCQCNParam) string {
	return formatIn(p.Min, p.Unit) + "-" + formatIn(p.Max, p.Unit)
}
