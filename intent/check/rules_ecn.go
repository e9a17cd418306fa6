// The ECN rules: ECN on lossless classes, Kmin/Kmax/Pmax and their suggested
// values, SONiC's one WRED profile (FC109, FC110, FC128).

package check

import (
	"fmt"

	"github.com/fabricctl/fabricctl/intent"
)

// FC109
func (c *checker) ecnLossless() {
	for _, cl := range c.lossless {
		if cl.CNP {
			continue // FC107: a CNP class must not be lossless; ECN on it would mark the notifications themselves
		}
		if cl.ECN == nil {
			kmin, kmax := c.ecnSuggestion()
			c.report(Error, pos(cl.Pos, c.f.Policy.Pos), classPath(cl)+".ecn",
				fmt.Sprintf("add ecn: {min: %s, max: %s, probability: 100%%}%s", intent.FormatSize(kmin), intent.FormatSize(kmax), ecnSuggestionNote(kmax)),
				"lossless class %s has no ECN marking: without DCQCN every congestion event is resolved by PFC pauses alone (head-of-line blocking, pause storms, deadlock risk)", cl.Name)
		}
	}
}

// FC110
func (c *checker) ecnThresholds() {
	p := &c.f.Policy
	for i := range p.Classes {
		cl := &p.Classes[i]
		e := cl.ECN
		if e == nil {
			continue
		}
		at := c.ecnPos(cl)
		if e.MinBytes >= e.MaxBytes {
			kmin, kmax := c.ecnSuggestion()
			c.report(Error, at, classPath(cl)+".ecn.min",
				fmt.Sprintf("set min below max (e.g. min %s, max %s)", intent.FormatSize(kmin), intent.FormatSize(kmax)),
				"class %s: ECN Kmin %s is not below Kmax %s", cl.Name, bytesStr(e.MinBytes), bytesStr(e.MaxBytes))
		}
		if p.MTU > 0 && e.MinBytes < int64(p.MTU) {
			fix := fmt.Sprintf("set min to at least %s (one MTU)", intent.FormatSize(int64(p.MTU)))
			if e.MaxBytes <= int64(p.MTU) {
				kmin, kmax := c.ecnSuggestion()
				fix = fmt.Sprintf("set min to at least one MTU and max above it (e.g. min %s, max %s)", intent.FormatSize(kmin), intent.FormatSize(kmax))
			}
			c.report(Error, at, classPath(cl)+".ecn.min", fix,
				"class %s: ECN Kmin %s is below one MTU (%s): a single frame in the queue gets marked, so DCQCN throttles on no congestion", cl.Name, bytesStr(e.MinBytes), bytesStr(int64(p.MTU)))
		}
		if e.Probability < 1 || e.Probability > 100 {
			c.report(Error, at, classPath(cl)+".ecn.probability",
				"use a marking probability of 1-100% (100% in the NVIDIA defaults)",
				"class %s: ECN mark probability %d%% is out of range 1-100", cl.Name, e.Probability)
		}
	}
}

// The NVIDIA lossless defaults for ECN (nv set qos roce: min 150 KB, max
// 1.5 MB), which the roce-lossless preset uses.
const (
	defaultKmin = 150_000
	defaultKmax = 1_500_000
)

// ecnSuggestion returns ECN thresholds a fix can suggest that pass FC110
// and FC111 on every switch of the fabric: the NVIDIA defaults, with Kmax
// lowered to the smallest XOFF depth (buffer minus the headroom of all
// lossless priorities on the port needing the most) and Kmin kept between
// one MTU and Kmax. Values are whole kilobytes.
func (c *checker) ecnSuggestion() (kmin, kmax int64) {
	kmin, kmax = defaultKmin, defaultKmax
	n := int64(max(1, len(c.lossless)))
	for i := range c.f.Switches {
		sw := &c.f.Switches[i]
		pi, ok := c.platform(sw)
		if !ok || !pi.PFC || sw.BufferBytes <= 0 {
			continue
		}
		if wp, _, wv := c.worstPort(sw, pi.BufferCellBytes); wp != nil {
			if depth := sw.BufferBytes - wv.perPrio*n; depth > 0 && depth < kmax {
				kmax = depth
			}
		}
	}
	kmax = kmax / 1000 * 1000
	mtu := (int64(c.f.Policy.MTU) + 999) / 1000 * 1000
	if kmin*2 > kmax {
		kmin = kmax / 10 / 1000 * 1000
	}
	kmin = max(kmin, mtu)
	return kmin, kmax
}

// ecnSuggestionNote says where suggested thresholds come from.
func ecnSuggestionNote(kmax int64) string {
	if kmax < defaultKmax {
		return " (the NVIDIA lossless defaults, with max lowered to fit under the XOFF point of the smallest switch buffer, FC111)"
	}
	return " (the NVIDIA lossless defaults)"
}

// lowerKmaxFix is FC111's fix: Kmax at most depth, and Kmin below it too
// when it is not already (FC110).
func (c *checker) lowerKmaxFix(e *intent.ECN, depth int64) string {
	kmax := depth / 1000 * 1000
	if kmax <= 0 {
		kmax = depth
	}
	fix := fmt.Sprintf("lower ECN max to at most %s", intent.FormatSize(kmax))
	if e.MinBytes >= kmax {
		kmin := max(kmax/10/1000*1000, (int64(c.f.Policy.MTU)+999)/1000*1000)
		fix += fmt.Sprintf(" and min below it (e.g. %s)", intent.FormatSize(kmin))
	}
	return fix + ", or shorten cables / use fewer lossless priorities to free buffer"
}

// ecnPos is where a class's ECN thresholds are set: the ecn block, unless
// it came from the preset (it then carries the policy's position) while the
// class itself is written out in the file.
func (c *checker) ecnPos(cl *intent.Class) intent.Pos {
	e := cl.ECN.Pos
	if !e.IsValid() || (e == c.f.Policy.Pos && cl.Pos.IsValid()) {
		return pos(cl.Pos, c.f.Policy.Pos)
	}
	return e
}

// headroom computation, shared by FC111 and FC112.

// FC128: SONiC 202405/202411's config updater refuses to create WRED
// profiles and lets only AZURE_LOSSLESS's green thresholds and probability
// change (sonic-utilities gcu_field_operation_validators.conf.json,
// rdma_config_update_validator; internal/gcu, profile write.gcu), so
// switchdrv/sonic gives every ECN class's queue AZURE_LOSSLESS: classes
// with different ECN settings share the earliest marking of them.
func (c *checker) sonicOneWRED() {
	var sw []string
	for i := range c.f.Switches {
		if pi, ok := c.platform(&c.f.Switches[i]); ok && pi.ConfigUpdaterLimits {
			sw = append(sw, c.f.Switches[i].Name)
		}
	}
	if len(sw) == 0 {
		return
	}
	on := fmt.Sprintf("1 SONiC switch (%s)", sw[0])
	if len(sw) > 1 {
		on = fmt.Sprintf("%d SONiC switches (%s .. %s)", len(sw), sw[0], sw[len(sw)-1])
	}
	p := &c.f.Policy
	var first *intent.Class
	for i := range p.Classes {
		cl := &p.Classes[i]
		if cl.ECN == nil {
			continue
		}
		if first == nil {
			first = cl
			continue
		}
		if a, b := cl.ECN, first.ECN; a.MinBytes != b.MinBytes || a.MaxBytes != b.MaxBytes || a.Probability != b.Probability {
			c.report(Warning, pos(cl.ECN.Pos, cl.Pos, p.Pos), classPath(cl)+".ecn",
				"give the ECN classes one ECN setting, or accept the earliest marking of them on these switches",
				"classes %s and %s have different ECN settings but share WRED_PROFILE|AZURE_LOSSLESS on %s (their config updater creates no other WRED profile): both get the earliest marking of the two", first.Name, cl.Name, on)
		}
	}
}
