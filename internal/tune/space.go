package tune

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/check"
	"github.com/fabricctl/fabricctl/intent/portfacts"
	"github.com/fabricctl/fabricctl/internal/sim"
	"github.com/fabricctl/fabricctl/switchdrv/eos"
)

// Edit is a change of the intent in check's terms (check.Apply makes it).
type Edit = check.Edit

// Setting is one point of the search: the RoCE class's ECN thresholds as
// the intent writes them and the hosts' DCQCN parameters.
type Setting struct {
	Kmin, Kmax int64 // bytes
	Pmax       int   // percent marked at Kmax
	DCQCN      sim.DCQCN
	// PFCOnly is the pfc-only mode (--modes): PFC without ECN marking.
	PFCOnly bool
}

// Limit is what one platform accepts for a class's ECN thresholds and
// marking probability, with where that comes from.
type Limit struct {
	Platform intent.Platform `json:"platform"`
	MinBytes int64           `json:"minBytes"`
	MaxBytes int64           `json:"maxBytes"`
	MinProb  int             `json:"minProbability"`
	MaxProb  int             `json:"maxProbability"`
	Source   string          `json:"source"`
}

// maxUint32 bounds SR Linux's pfc-queue maximum-burst-size (uint32), which
// fabricctl derives from Kmax on 7220 (intent.PFCQueueMBS).
const maxUint32 = 1<<32 - 1

// Limits are the ECN ranges of the four compilers' payloads. The intent's
// own rules come on top: probability 1-100 and Kmin at least one MTU
// (FC110), Kmax at most the XOFF point (FC111).
var Limits = []Limit{
	{intent.PlatformSONiC, 0, math.MaxInt64, 0, 100,
		"sonic-wred-profile.yang: green_min_threshold/green_max_threshold uint64 bytes, green_drop_probability uint64 0..100"},
	{intent.PlatformSRLinux, 0, maxUint32, 0, 100,
		"srl_nokia-qos.yang: wred-slope min-threshold/max-threshold uint64 bytes, max-drop-probability-percent percentage 0..100; 7220's pfc-queue maximum-burst-size (Kmax + one frame, intent.PFCQueueMBS) is a uint32"},
	{intent.PlatformEOS, 1, eos.ECNMaxBytes, 0, 100,
		"switchdrv/eos: random-detect ecn thresholds 1..256,000,000 bytes (AVD tx_queues random_detect ecn), max-mark-probability percent"},
	{intent.PlatformOpenConfig, 0, math.MaxInt64, 0, 100,
		"openconfig-qos-mem-mgmt.yang: wred uniform min-threshold/max-threshold uint64 bytes, max-drop-probability-percent oc-types:percentage 0..100"},
}

// Bounds are the constraints every setting of a search meets.
type Bounds struct {
	// KminFloor is one MTU (FC110), KmaxCeil the smallest XOFF point of
	// any switch port (FC111, portfacts Lossless.XOFF; the platforms'
	// range when no XOFF point is known).
	KminFloor int64 `json:"minFloorBytes"`
	KmaxCeil  int64 `json:"maxCeilingBytes"`
	MinProb   int   `json:"minProbability"`
	MaxProb   int   `json:"maxProbability"`
	// Platforms are the limits of the platforms the intent's switches use
	// (all four when it has no switch: the synthetic star is SONiC, but
	// the tuned intent may be compiled for any).
	Platforms []Limit `json:"platforms"`
	// CellBytes is the distinct buffer cells of the switches (portfacts),
	// to show the thresholds as programmed.
	CellBytes []int64 `json:"cellBytes,omitempty"`
	// XOFFSource names the port whose XOFF point is KmaxCeil.
	XOFFSource string `json:"xoffSource,omitempty"`
	// Shared is set when switches give every ECN class one WRED profile
	// with the earliest marking of them (SONiC 202405/202411's config
	// updater, check's FC128) and another class has ECN: the tuned class
	// then gets exactly its setting only at or before that one (min and
	// max at most Shared's, probability at least), which the search keeps
	// to, so that what was simulated is what is programmed.
	Shared *SharedECN `json:"shared,omitempty"`
}

// SharedECN is the earliest marking of the other ECN classes that share
// one WRED profile with the tuned class.
type SharedECN struct {
	Classes     []string `json:"classes"`
	MinBytes    int64    `json:"minBytes"`
	MaxBytes    int64    `json:"maxBytes"`
	Probability int      `json:"probability"`
}

// boundsOf derives the constraints of f's RoCE class cl from the intent's
// derived facts (intent/portfacts) and the platforms' ranges.
func boundsOf(f *intent.Fabric, cl *intent.Class) Bounds {
	b := Bounds{KminFloor: int64(max(f.Policy.MTU, 1)), KmaxCeil: math.MaxInt64, MinProb: 1, MaxProb: 100}
	platforms := map[intent.Platform]bool{}
	shared := false
	for i := range f.Switches {
		sw := &f.Switches[i]
		platforms[sw.Platform] = true
		if p := portfacts.SwitchProfile(sw); p != nil && p.Write.GCU != nil {
			shared = true // switchdrv/sonic gcuWRED: one WRED profile, the earliest marking
		}
		facts := portfacts.Ports(f, sw)
		for _, pf := range facts {
			if c := pf.Switch.CellBytes; c > 0 && !slices.Contains(b.CellBytes, c) {
				b.CellBytes = append(b.CellBytes, c)
			}
			l := pf.LosslessAt(cl.Priority)
			// A static XOFF point follows Kmax (SR Linux 7220's
			// pfc-queue MBS is Kmax plus a frame): it bounds nothing.
			if l == nil || l.XOFF < 0 || l.StaticXOFF >= 0 && l.XOFF == l.StaticXOFF {
				continue
			}
			if l.XOFF < b.KmaxCeil {
				b.KmaxCeil, b.XOFFSource = l.XOFF, fmt.Sprintf("%s:%s XOFF point %d B (%s)", sw.Name, pf.Name, l.XOFF, l.XOFFSource)
			}
		}
	}
	slices.Sort(b.CellBytes)
	for i := range f.Policy.Classes {
		o := &f.Policy.Classes[i]
		if !shared || o.Name == cl.Name || o.ECN == nil {
			continue
		}
		if b.Shared == nil {
			b.Shared = &SharedECN{MinBytes: o.ECN.MinBytes, MaxBytes: o.ECN.MaxBytes, Probability: o.ECN.Probability}
		}
		sh := b.Shared
		sh.Classes = append(sh.Classes, o.Name)
		sh.MinBytes, sh.MaxBytes, sh.Probability = min(sh.MinBytes, o.ECN.MinBytes), min(sh.MaxBytes, o.ECN.MaxBytes), max(sh.Probability, o.ECN.Probability)
	}
	for _, l := range Limits {
		if len(platforms) == 0 || platforms[l.Platform] {
			b.Platforms = append(b.Platforms, l)
			b.KminFloor = max(b.KminFloor, l.MinBytes)
			hi := l.MaxBytes
			if l.Platform == intent.PlatformSRLinux {
				// the pfc-queue MBS is Kmax + one frame, rounded up to 1 KiB
				hi -= int64(f.Policy.MTU) + 18 + 1023
			}
			b.KmaxCeil = min(b.KmaxCeil, hi)
			b.MinProb, b.MaxProb = max(b.MinProb, l.MinProb), min(b.MaxProb, l.MaxProb)
		}
	}
	return b
}

// Check reports why s breaks a bound (nil when it meets them all).
func (b Bounds) Check(s Setting) error {
	switch {
	case s.PFCOnly:
		return nil
	case s.Kmin < b.KminFloor:
		return fmt.Errorf("ECN min %d B is below one MTU (%d B, FC110)", s.Kmin, b.KminFloor)
	case s.Kmin >= s.Kmax:
		return fmt.Errorf("ECN min %d B is not below max %d B (FC110)", s.Kmin, s.Kmax)
	case s.Kmax > b.KmaxCeil:
		return fmt.Errorf("ECN max %d B is above %d B (%s)", s.Kmax, b.KmaxCeil, b.XOFFSource)
	case s.Pmax < b.MinProb || s.Pmax > b.MaxProb:
		return fmt.Errorf("ECN probability %d%% is outside %d-%d%%", s.Pmax, b.MinProb, b.MaxProb)
	}
	if sh := b.Shared; sh != nil && (s.Kmin > sh.MinBytes || s.Kmax > sh.MaxBytes || s.Pmax < sh.Probability) {
		return fmt.Errorf("ECN %d..%d B at %d%% marks later than class %s's %d..%d B at %d%%, which shares its WRED profile (FC128): the earliest of the two is programmed", s.Kmin, s.Kmax, s.Pmax, strings.Join(sh.Classes, ", "), sh.MinBytes, sh.MaxBytes, sh.Probability)
	}
	for _, l := range b.Platforms {
		if s.Kmin < l.MinBytes || s.Kmax > l.MaxBytes || s.Pmax < l.MinProb || s.Pmax > l.MaxProb {
			return fmt.Errorf("ECN %d..%d B at %d%% is outside what %s takes (%s)", s.Kmin, s.Kmax, s.Pmax, l.Platform, l.Source)
		}
	}
	return nil
}

// Effective is s as the switches program it: with a shared WRED profile,
// the earliest marking of s and the other classes' (switchdrv/sonic
// gcuWRED: lowest thresholds, highest probability).
func (b Bounds) Effective(s Setting) Setting {
	if sh := b.Shared; sh != nil && !s.PFCOnly && s.Kmax > 0 {
		s.Kmin, s.Kmax, s.Pmax = min(s.Kmin, sh.MinBytes), min(s.Kmax, sh.MaxBytes), max(s.Pmax, sh.Probability)
	}
	return s
}

// dim is one searched parameter: its levels in increasing order, and how
// a level sets a Setting.
type dim struct {
	name   string
	levels []float64
	set    func(*Setting, float64)
	get    func(Setting) float64
	// coarse is the indexes the first grid tries (nil: the base's only)
	coarse []int
}

// geometric returns n values from lo to hi, equally spaced in log scale,
// rounded to step, deduplicated.
func geometric(lo, hi float64, n int, step float64) []float64 {
	var out []float64
	for i := range n {
		v := lo * math.Pow(hi/lo, float64(i)/float64(max(n-1, 1)))
		v = math.Round(v/step) * step
		if len(out) == 0 || v > out[len(out)-1] {
			out = append(out, v)
		}
	}
	return out
}

// withLevel adds v (the base's value) to levels, in order.
func withLevel(levels []float64, v float64) []float64 {
	if slices.Contains(levels, v) {
		return levels
	}
	levels = append(levels, v)
	slices.Sort(levels)
	return levels
}

// spread picks k indexes spread over n levels, ends included.
func spread(n, k int) []int {
	if n <= k {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	var out []int
	for i := range k {
		out = append(out, int(math.Round(float64(i)*float64(n-1)/float64(k-1))))
	}
	return slices.Compact(out)
}

// dims builds the search's parameters around base within b. ECN sizes are
// whole kilobytes (as the intent writes them); DCQCN values are in mlx5's
// units (cong.c: rates in Mb/s, times in microseconds, dce_tcp_g of 1024).
func dims(b Bounds, base Setting, withDCQCN bool) []dim {
	const kb = 1000
	kmaxHi := math.Min(float64(b.KmaxCeil), 4e6)
	pmaxLevels := []float64{1, 2, 5, 10, 20, 35, 50, 75, 100}
	if sh := b.Shared; sh != nil {
		kmaxHi = math.Min(kmaxHi, float64(sh.MaxBytes))
		pmaxLevels = slices.DeleteFunc(pmaxLevels, func(v float64) bool { return v < float64(sh.Probability) })
	}
	kminLo := math.Ceil(float64(b.KminFloor)/kb) * kb
	kmaxLo := 2 * kminLo
	kmaxHi = math.Floor(kmaxHi/kb) * kb
	var ds []dim
	kminHi := kmaxHi / 2
	if sh := b.Shared; sh != nil {
		kminHi = math.Min(kminHi, float64(sh.MinBytes))
	}
	kmin := dim{name: "ecn.min", levels: geometric(kminLo, math.Max(kminLo, kminHi), 14, kb),
		set: func(s *Setting, v float64) { s.Kmin = int64(v) }, get: func(s Setting) float64 { return float64(s.Kmin) }}
	kmax := dim{name: "ecn.max", levels: geometric(math.Min(kmaxLo, kmaxHi), kmaxHi, 14, kb),
		set: func(s *Setting, v float64) { s.Kmax = int64(v) }, get: func(s Setting) float64 { return float64(s.Kmax) }}
	pmax := dim{name: "ecn.probability", levels: pmaxLevels,
		set: func(s *Setting, v float64) { s.Pmax = int(v) }, get: func(s Setting) float64 { return float64(s.Pmax) }}
	ds = append(ds, kmin, kmax, pmax)
	if withDCQCN {
		us := float64(sim.Microsecond)
		ds = append(ds,
			dim{name: "dcqcn.aiRate", levels: []float64{1e6, 5e6, 10e6, 20e6, 50e6, 100e6, 200e6, 400e6},
				set: func(s *Setting, v float64) { s.DCQCN.AIRate = v }, get: func(s Setting) float64 { return s.DCQCN.AIRate }},
			dim{name: "dcqcn.haiRate", levels: []float64{10e6, 50e6, 100e6, 200e6, 500e6, 1000e6, 2000e6},
				set: func(s *Setting, v float64) { s.DCQCN.HAIRate = v }, get: func(s Setting) float64 { return s.DCQCN.HAIRate }},
			dim{name: "dcqcn.timeReset", levels: []float64{2 * us, 5 * us, 10 * us, 20 * us, 50 * us, 100 * us, 300 * us, 600 * us},
				set: func(s *Setting, v float64) { s.DCQCN.TimeReset = sim.Time(v) }, get: func(s Setting) float64 { return float64(s.DCQCN.TimeReset) }},
			dim{name: "dcqcn.rateReduceMonitorPeriod", levels: []float64{1 * us, 2 * us, 4 * us, 8 * us, 16 * us, 32 * us, 50 * us},
				set: func(s *Setting, v float64) { s.DCQCN.RateReducePeriod = sim.Time(v) }, get: func(s Setting) float64 { return float64(s.DCQCN.RateReducePeriod) }},
			dim{name: "dcqcn.minDecreaseFactor", levels: []float64{10, 25, 50, 75, 90},
				set: func(s *Setting, v float64) { s.DCQCN.MinDecFactor = v / 100 }, get: func(s Setting) float64 { return math.Round(s.DCQCN.MinDecFactor * 100) }},
			dim{name: "dcqcn.g", levels: []float64{960, 992, 1008, 1016, 1019, 1020, 1022},
				set: func(s *Setting, v float64) { s.DCQCN.G = (1024 - v) / 1024 }, get: func(s Setting) float64 { return math.Round(1024 - s.DCQCN.G*1024) }},
		)
	}
	for i := range ds {
		d := &ds[i]
		if v := d.get(base); v > 0 && (i > 1 || base.Kmin >= int64(kminLo) && float64(base.Kmax) <= kmaxHi) {
			d.levels = withLevel(d.levels, v)
		}
	}
	ds[0].coarse = spread(len(ds[0].levels), 5)
	ds[1].coarse = spread(len(ds[1].levels), 5)
	ds[2].coarse = nil
	for _, v := range []float64{5, 20, 100} {
		if i := slices.Index(ds[2].levels, v); i >= 0 {
			ds[2].coarse = append(ds[2].coarse, i)
		}
	}
	if len(ds[2].coarse) == 0 {
		ds[2].coarse = spread(len(ds[2].levels), 3)
	}
	return ds
}

// nearest is the index of the level closest to v.
func nearest(levels []float64, v float64) int {
	best := 0
	for i, l := range levels {
		if math.Abs(l-v) < math.Abs(levels[best]-v) {
			best = i
		}
	}
	return best
}

// Edits is s as changes of the intent: the class's ECN block, and (with
// dcqcn) the policy.dcqcn fields (CONTRACTS names, mlx5 units: rates in
// Mb/s, times in microseconds) that differ from base.
//
// pfc-only is policy.mode: pfc-only and, on every class of pol whose ECN
// block the files write (a preset's follows the mode), ecn.enabled:
// false (the policy.mode branch's FC151 and its fix).
func (s Setting) Edits(pol *intent.Policy, cl *intent.Class, base Setting, dcqcn bool) []Edit {
	path := "policy.classes[" + cl.Name + "]"
	var out []Edit
	if s.PFCOnly {
		out = append(out, Edit{Path: "policy.mode", Value: "pfc-only"})
		for _, c := range pol.Classes {
			if c.Fields.Has("ecn") && c.ECN != nil {
				out = append(out, Edit{Path: "policy.classes[" + c.Name + "].ecn.enabled", Value: "false"})
			}
		}
	} else if cl.ECN == nil || cl.ECN.MinBytes != s.Kmin || cl.ECN.MaxBytes != s.Kmax || cl.ECN.Probability != s.Pmax {
		out = append(out,
			Edit{Path: path + ".ecn.min", Value: sizeText(s.Kmin)},
			Edit{Path: path + ".ecn.max", Value: sizeText(s.Kmax)},
			Edit{Path: path + ".ecn.probability", Value: strconv.Itoa(s.Pmax) + "%"})
	}
	if !dcqcn {
		return out
	}
	d, b := s.DCQCN, base.DCQCN
	add := func(field string, differ bool, v string) {
		if differ {
			out = append(out, Edit{Path: "policy.dcqcn." + field, Value: v})
		}
	}
	add("aiRate", d.AIRate != b.AIRate, intent.FormatRate(int64(d.AIRate)))
	add("haiRate", d.HAIRate != b.HAIRate, intent.FormatRate(int64(d.HAIRate)))
	add("timeReset", d.TimeReset != b.TimeReset, durText(d.TimeReset))
	add("rateReduceMonitorPeriod", d.RateReducePeriod != b.RateReducePeriod, durText(d.RateReducePeriod))
	add("minDecreaseFactor", d.MinDecFactor != b.MinDecFactor, strconv.Itoa(int(math.Round(d.MinDecFactor*100)))+"%")
	add("g", d.G != b.G, strconv.Itoa(int(math.Round(1024-d.G*1024))))
	return out
}

// sizeText writes b in whole kilobytes where it is one (the search's
// levels are), else in bytes: both read back exactly.
func sizeText(b int64) string {
	if b%1000 == 0 {
		return strconv.FormatInt(b/1000, 10) + "KB"
	}
	return strconv.FormatInt(b, 10) + "B"
}

// durText writes t as the intent's durations read it: whole
// microseconds (mlx5's unit) where it is, else nanoseconds.
func durText(t sim.Time) string {
	if t%sim.Microsecond == 0 {
		return strconv.FormatInt(int64(t/sim.Microsecond), 10) + "us"
	}
	return strconv.FormatInt(int64(t/sim.Nanosecond), 10) + "ns"
}

// Corners are the extreme ECN settings the search can try on f's class
// (the lowest and highest levels of min and max, probability 1 and 100 %
// where the bounds take them), each inside the bounds: what a test
// compiles for every platform to show that no tuned value falls outside
// what one accepts.
func Corners(f *intent.Fabric, class string) ([]Setting, error) {
	cl, err := RoCEClass(f, class)
	if err != nil {
		return nil, err
	}
	b := boundsOf(f, cl)
	base := baseSetting(f, cl)
	ds := dims(b, base, false)
	var out []Setting
	ends := func(l []float64) []float64 { return []float64{l[0], l[len(l)-1]} }
	for _, kmin := range ends(ds[0].levels) {
		for _, kmax := range ends(ds[1].levels) {
			for _, p := range ends(ds[2].levels) {
				s := base
				s.Kmin, s.Kmax, s.Pmax = int64(kmin), int64(kmax), int(p)
				if b.Check(s) == nil && !slices.Contains(out, s) {
					out = append(out, s)
				}
			}
		}
	}
	return out, nil
}
