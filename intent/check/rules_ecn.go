// The ECN rules: ECN on lossless classes, Kmin/Kmax/Pmax and their suggested
// values, SONiC's one WRED profile (FC109, FC110, FC128).

package check

import (
	"fmt"

	"github.com/fabricctl/fabricctl/intent"
)

// FC109
func (c *checker) ecnLossless() {
	if c.f.Policy.Mode == intent.ModePFCOnly {
		return // pfc-only has no ECN by design (FC161, FC165)
	}
	for _, cl := range c.lossless {
		if cl.CNP {
			continue // FC107: a CNP class must not be lossless; ECN on it would mark the notifications themselves
		}
		if cl.ECN == nil {
			kmin, kmax := c.ecnSuggestion()
			prob, note := 100, ecnSuggestionNote(kmax)
			if o, shared := c.sharedECN(kmax); o != nil {
				// SONiC 202405/202411 give every ECN class one WRED
				// profile (FC128): take the setting the others have.
				kmin, kmax, prob = o.ECN.MinBytes, o.ECN.MaxBytes, o.ECN.Probability
				note = fmt.Sprintf(" (class %s's: SONiC 202405/202411 switches give every ECN class one WRED profile, FC128)", o.Name)
			} else if shared != nil {
				note += fmt.Sprintf("; FC128 then warns: class %s's ECN setting does not fit, and SONiC 202405/202411 give both the earliest marking", shared.Name)
			}
			x := c.report(Error, pos(cl.Pos, c.f.Policy.Pos), classPath(cl)+".ecn",
				fmt.Sprintf("add ecn: {min: %s, max: %s, probability: %d%%}%s", sizeText(kmin), sizeText(kmax), prob, note),
				"lossless class %s has no ECN marking: without DCQCN every congestion event is resolved by PFC pauses alone (head-of-line blocking, pause storms, deadlock risk)", cl.Name)
			x.with(setSize(classPath(cl)+".ecn.min", kmin), setSize(classPath(cl)+".ecn.max", kmax), set(classPath(cl)+".ecn.probability", fmt.Sprintf("%d%%", prob)))
			c.noECNRoom(x, kmin, kmax)
		}
	}
}

// sharedECN returns the class whose ECN setting a new ECN class should
// copy: on a fabric with SONiC switches that share one WRED profile among
// the ECN classes (FC128), the first ECN class, when its setting passes
// FC110 and FC111 (Kmax at most kmax, the suggestion's). When that class's
// setting does not, it is returned as other (FC128 will warn); both nil
// where no WRED profile is shared or no class has ECN.
func (c *checker) sharedECN(kmax int64) (use, other *intent.Class) {
	shared := false
	for i := range c.f.Switches {
		if pi, ok := c.platform(&c.f.Switches[i]); ok && pi.ConfigUpdaterLimits {
			shared = true
		}
	}
	if !shared {
		return nil, nil
	}
	for i := range c.f.Policy.Classes {
		o := &c.f.Policy.Classes[i]
		if e := o.ECN; e != nil {
			if c.ecnValid(e) && e.MaxBytes <= kmax {
				return o, nil
			}
			return nil, o
		}
	}
	return nil, nil
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
			x := c.report(Error, at, classPath(cl)+".ecn.min",
				fmt.Sprintf("set min below max (e.g. min %s, max %s)", sizeText(kmin), sizeText(kmax)),
				"class %s: ECN Kmin %s is not below Kmax %s", cl.Name, bytesStr(e.MinBytes), bytesStr(e.MaxBytes))
			x.with(setSize(classPath(cl)+".ecn.min", kmin), setSize(classPath(cl)+".ecn.max", kmax))
			c.noECNRoom(x, kmin, kmax)
		}
		if p.MTU > 0 && e.MinBytes < int64(p.MTU) {
			fix := fmt.Sprintf("set min to at least %s (one MTU)", sizeText(int64(p.MTU)))
			edits := []Edit{setSize(classPath(cl)+".ecn.min", int64(p.MTU))}
			kmin, kmax := int64(p.MTU), e.MaxBytes
			if e.MaxBytes <= int64(p.MTU) {
				kmin, kmax = c.ecnSuggestion()
				fix = fmt.Sprintf("set min to at least one MTU and max above it (e.g. min %s, max %s)", sizeText(kmin), sizeText(kmax))
				edits = []Edit{setSize(classPath(cl)+".ecn.min", kmin), setSize(classPath(cl)+".ecn.max", kmax)}
			}
			x := c.report(Error, at, classPath(cl)+".ecn.min", fix,
				"class %s: ECN Kmin %s is below one MTU (%s): a single frame in the queue gets marked, so DCQCN throttles on no congestion", cl.Name, bytesStr(e.MinBytes), bytesStr(int64(p.MTU)))
			x.with(edits...)
			if e.MaxBytes <= int64(p.MTU) {
				c.noECNRoom(x, kmin, kmax)
			}
		}
		if e.Probability < 1 || e.Probability > 100 {
			c.report(Error, at, classPath(cl)+".ecn.probability",
				"use a marking probability of 1-100% (100% in the NVIDIA defaults)",
				"class %s: ECN mark probability %d%% is out of range 1-100", cl.Name, e.Probability).
				with(set(classPath(cl)+".ecn.probability", "100%"))
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

// noECNRoom turns x's suggested thresholds into a decision where they
// have no room: Kmin (at least one MTU, FC110) not below Kmax (at most the
// smallest XOFF point, FC111). What frees buffer is a person's choice.
func (c *checker) noECNRoom(x *Finding, kmin, kmax int64) {
	if kmin < kmax {
		return
	}
	x.Fix = fmt.Sprintf("shorten cables, use fewer lossless priorities or raise buffer: the smallest XOFF point leaves ECN max at most %s, not above min (at least one MTU, %s)", bytesStr(kmax), bytesStr(int64(c.f.Policy.MTU)))
	x.Edits = nil
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
func (c *checker) lowerKmaxFix(cl *intent.Class, depth int64) (string, []Edit) {
	e := cl.ECN
	kmax := depth / 1000 * 1000
	if kmax <= 0 {
		kmax = depth
	}
	fix := fmt.Sprintf("lower ECN max to at most %s", sizeText(kmax))
	edits := []Edit{setSize(classPath(cl)+".ecn.max", kmax)}
	if e.MinBytes >= kmax {
		kmin := max(kmax/10/1000*1000, (int64(c.f.Policy.MTU)+999)/1000*1000)
		if kmin >= kmax {
			// Kmin must stay at least one MTU (FC110): below the XOFF
			// point there is no room for an ECN ramp.
			return fmt.Sprintf("shorten cables, use fewer lossless priorities or raise buffer: XOFF at %s leaves no room for ECN min (at least one MTU, %s) below max", bytesStr(depth), bytesStr(int64(c.f.Policy.MTU))), nil
		}
		fix += fmt.Sprintf(" and min below it (e.g. %s)", sizeText(kmin))
		edits = append(edits, setSize(classPath(cl)+".ecn.min", kmin))
	}
	return fix + ", or shorten cables / use fewer lossless priorities to free buffer", edits
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
			// The setting both get is the one that marks earlier at Kmax
			// (it passes FC111 wherever the other does).
			// A setting that fails FC110 is no candidate; with neither
			// valid, both get the suggested thresholds.
			src, dst := first, cl
			if a.MaxBytes < b.MaxBytes || (a.MaxBytes == b.MaxBytes && a.MinBytes < b.MinBytes) {
				src, dst = cl, first
			}
			if !c.ecnValid(src.ECN) {
				src, dst = dst, src
			}
			e := *src.ECN
			setting := fmt.Sprintf("class %s's: min %s, max %s, probability %d%%, on class %s", src.Name, sizeText(e.MinBytes), sizeText(e.MaxBytes), e.Probability, dst.Name)
			var edits []Edit
			kmin, kmax := e.MinBytes, e.MaxBytes
			if !c.ecnValid(&e) {
				kmin, kmax = c.ecnSuggestion()
				e = intent.ECN{MinBytes: kmin, MaxBytes: kmax, Probability: 100}
				setting = fmt.Sprintf("min %s, max %s, probability 100%% on both%s", sizeText(kmin), sizeText(kmax), ecnSuggestionNote(kmax))
				edits = ecnEdits(src, e)
			}
			edits = append(edits, ecnEdits(dst, e)...)
			x := c.report(Warning, pos(cl.ECN.Pos, cl.Pos, p.Pos), classPath(cl)+".ecn",
				fmt.Sprintf("give the ECN classes one ECN setting (%s), or accept the earliest marking of them on these switches", setting),
				"classes %s and %s have different ECN settings but share WRED_PROFILE|AZURE_LOSSLESS on %s (their config updater creates no other WRED profile): both get the earliest marking of the two", first.Name, cl.Name, on)
			x.with(edits...)
			c.noECNRoom(x, kmin, kmax)
		}
	}
}

// ecnValid reports whether e passes FC110.
func (c *checker) ecnValid(e *intent.ECN) bool {
	return e.MinBytes < e.MaxBytes && e.MinBytes >= int64(c.f.Policy.MTU) && e.Probability >= 1 && e.Probability <= 100
}

// ecnEdits sets class cl's ECN thresholds to e.
func ecnEdits(cl *intent.Class, e intent.ECN) []Edit {
	return []Edit{setSize(classPath(cl)+".ecn.min", e.MinBytes), setSize(classPath(cl)+".ecn.max", e.MaxBytes), set(classPath(cl)+".ecn.probability", fmt.Sprintf("%d%%", e.Probability))}
}
