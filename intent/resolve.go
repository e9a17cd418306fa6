package intent

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fabricctl/fabricctl/internal/profile"
)

// part is one decoded YAML document with the file it came from.
type part struct {
	file string
	raw  *rawFile
}

func withFile(p Pos, file string) Pos {
	p.File = file
	return p
}

// MaxObjects bounds the switch ports, host NICs and links that ranges may
// expand to in one fabric (a 2,000-switch fabric has about 200,000; this is
// five times that): it stops a few lines of ranges from multiplying into
// millions. The README's "Limits" states it with the byte and memory bounds;
// cmd/fabricctl's TestLargestIntentMemory runs every command on it.
const MaxObjects = 1_000_000

// MaxPortsPerSwitch bounds the ports of one switch. The largest switches
// shipping have a few hundred front-panel ports (a 16-slot modular chassis:
// 576 x 400G), about 2,300 with every port broken out four ways; 4,096 is
// above all of them, and keeps one switch's payload, plan and backup to a
// few MB. A typo in a range ({1..100000}) is caught here, by name, instead
// of growing render and plan to gigabytes.
const MaxPortsPerSwitch = 4096

// resolver turns raw documents into a Fabric, collecting errors.
type resolver struct {
	errs    *errList
	f       *Fabric
	objects int
	limit   int  // the expansion budget; 0 = MaxObjects
	over    bool // the budget is spent: expand nothing more
	// arena holds the Fields the resolver makes (ports', links'), keyBuf
	// is where their keys are gathered.
	arena  fieldArena
	keyBuf []keyPos
	// portNames is what each port entry's name expanded to: the leaves of
	// a fabric mostly repeat one or two (Ethernet{0..252..4}), so their
	// ports share the names, read only. portSeen is ports' index of one
	// switch's names, emptied for the next.
	// nameBuf and compBuf hold what zip returns when a name or address
	// has no range, nicBuf is hosts' list of one entry's NICs, and
	// nicSlab is where the hosts' NIC lists are cut from.
	nameBuf, compBuf [1]string
	nicBuf           []nicAddrs
	nicSlab          []NIC
	portNames        map[string]expansion
	portSeen         map[string]Pos
	cached           int // names held in portNames
}

type expansion struct {
	names  []string
	err    error
	sorted bool // names are in natural order (a range is)
}

// expandPort is Expand of a port entry's name, each name expanded once
// per fabric, and whether the names are in natural order. The names are
// shared: never written. What is kept is bounded like the fabric (at most
// a switch's ports per name, MaxObjects in all), so that names that fail
// later cannot pile up.
func (r *resolver) expandPort(name string) ([]string, bool, error) {
	if e, ok := r.portNames[name]; ok {
		return e.names, e.sorted, e.err
	}
	names, err := Expand(name)
	sorted := false // not worked out for what is not kept
	if len(names) <= MaxPortsPerSwitch && r.cached+len(names) <= MaxObjects {
		sorted = true
		for i := 1; i < len(names) && sorted; i++ {
			sorted = !naturalLess(names[i], names[i-1])
		}
		if r.portNames == nil {
			r.portNames = map[string]expansion{}
		}
		r.portNames[name] = expansion{names, err, sorted}
		r.cached += len(names)
	}
	return names, sorted, err
}

// portFields is where a port entry's values are: its own keys, and those
// of portDefaults it does not set (a value from portDefaults is where
// portDefaults sets it).
func (r *resolver) portFields(def, own Fields, file string) Fields {
	def, own = fieldsIn(def, file), fieldsIn(own, file)
	switch {
	case def.Len() == 0:
		return own
	case own.Len() == 0:
		return def
	}
	r.keyBuf = append(r.keyBuf[:0], own.l.keys...)
	for _, k := range def.l.keys {
		if !own.Has(*k.key) {
			r.keyBuf = append(r.keyBuf, k)
		}
	}
	return r.arena.fields(file, r.keyBuf)
}

func (r *resolver) budget() int {
	if r.limit > 0 {
		return r.limit
	}
	return MaxObjects
}

// spend counts n expanded objects against the budget (MaxObjects); false
// when over. The overrun is reported once: after it nothing is expanded, so a
// short file of aliased ranges cannot make the resolver rebuild millions of
// ports per switch.
func (r *resolver) spend(n int, pos Pos, path func() string) bool {
	if r.over {
		return false
	}
	r.objects += n
	if r.objects > r.budget() {
		r.overrun(pos, path())
		return false
	}
	return true
}

func (r *resolver) overrun(pos Pos, path string) {
	r.over = true
	r.errorf(pos, path, "the fabric expands to more than %d ports, NICs and links; split it or check the ranges", r.budget())
}

func (r *resolver) errorf(pos Pos, path, format string, a ...any) {
	r.errs.add(pos, path, format, a...)
}

func (r *resolver) resolve(parts []part) {
	var policy, validation *part
	var nameFrom Pos
	for i := range parts {
		p := &parts[i]
		raw := p.raw
		top := withFile(raw.Pos, p.file)
		if raw.APIVersion != "" && raw.APIVersion != APIVersion {
			r.errorf(top, "apiVersion", "unsupported apiVersion %q (this fabricctl reads %s)", raw.APIVersion, APIVersion)
		}
		if raw.Kind != "" && raw.Kind != Kind {
			r.errorf(top, "kind", "kind %q: want %s", raw.Kind, Kind)
		}
		if raw.Metadata != nil && raw.Metadata.Name != "" && r.nameFits(withFile(raw.Metadata.Pos, p.file), "metadata.name", "fabric name", raw.Metadata.Name) {
			if r.f.Name != "" && r.f.Name != raw.Metadata.Name {
				r.errorf(withFile(raw.Metadata.Pos, p.file), "metadata.name",
					"fabric name %q differs from %q given at %s", raw.Metadata.Name, r.f.Name, nameFrom)
			} else if r.f.Name == "" {
				r.f.Name, nameFrom = raw.Metadata.Name, withFile(raw.Metadata.Pos, p.file)
			}
		}
		if raw.Policy != nil {
			if policy != nil {
				r.errorf(withFile(raw.Policy.Pos, p.file), "policy", "policy is defined twice (also at %s); keep one policy per fabric",
					withFile(policy.raw.Policy.Pos, policy.file))
			} else {
				policy = p
			}
		}
		if raw.Validation != nil {
			if validation != nil {
				r.errorf(withFile(raw.Validation.Pos, p.file), "validation", "validation is defined twice (also at %s)",
					withFile(validation.raw.Validation.Pos, validation.file))
			} else {
				validation = p
			}
		}
	}
	if len(parts) > 0 {
		r.f.Pos = withFile(parts[0].raw.Pos, parts[0].file)
	}
	if r.f.Name == "" && len(parts) > 0 {
		base := filepath.Base(parts[0].file)
		r.f.Name = strings.TrimSuffix(base, filepath.Ext(base))
	}
	if policy == nil {
		pos := Pos{}
		if len(parts) > 0 {
			pos = withFile(parts[0].raw.Pos, parts[0].file)
		}
		r.errorf(pos, "policy", "no policy in any file: add one, e.g. `policy: {preset: roce-lossless}`")
	} else {
		r.policy(policy.raw.Policy, policy.file)
	}
	r.validation(validation)
	// Size the lists for the entries (ranges may add more).
	nsw, nh, nl := 0, 0, 0
	for _, p := range parts {
		if inv := p.raw.Inventory; inv != nil {
			nsw, nh, nl = nsw+len(inv.Switches), nh+len(inv.Hosts), nl+len(inv.Links)
		}
	}
	if nsw > 0 { // nil stays nil
		r.f.Switches = make([]Switch, 0, nsw)
	}
	if nh > 0 {
		r.f.Hosts = make([]Host, 0, nh)
	}
	if nl > 0 {
		r.f.Links = make([]Link, 0, nl)
	}
	names := make(map[string]Pos, nsw+nh)
	for _, p := range parts {
		if p.raw.Inventory == nil {
			continue
		}
		for i := range p.raw.Inventory.Switches {
			r.switches(&p.raw.Inventory.Switches[i], p.file, i, names)
		}
		for i := range p.raw.Inventory.Hosts {
			r.hosts(&p.raw.Inventory.Hosts[i], p.file, i, names)
		}
		for i := range p.raw.Inventory.Links {
			r.links(&p.raw.Inventory.Links[i], p.file, i)
		}
	}
	// An inventory mostly lists its hosts (and often its switches) in
	// order: a list whose names strictly increase is what any sort makes
	// of it, and is not sorted again.
	if !increasing(len(r.f.Switches), func(i int) string { return r.f.Switches[i].Name }) {
		sort.Slice(r.f.Switches, func(i, j int) bool { return naturalLess(r.f.Switches[i].Name, r.f.Switches[j].Name) })
	}
	if !increasing(len(r.f.Hosts), func(i int) string { return r.f.Hosts[i].Name }) {
		sort.Slice(r.f.Hosts, func(i, j int) bool { return naturalLess(r.f.Hosts[i].Name, r.f.Hosts[j].Name) })
	}
}

func (r *resolver) policy(rp *rawPolicy, file string) {
	p := &r.f.Policy
	p.Pos = withFile(rp.Pos, file)
	p.Fields = fieldsIn(rp.Keys, file)
	preset := PresetNone
	if rp.Preset != nil {
		preset = *rp.Preset
		if preset != PresetRoCELossless && preset != PresetRoCELossy && preset != PresetNone {
			r.errs.addText(p.Fields.At("preset", p.Pos), "policy.preset", unknownValue("preset", preset, Presets()))
		}
	}
	if preset != PresetNone {
		p.Preset = preset
	}
	p.Mode = ModeLossless
	if preset == PresetRoCELossy {
		p.Mode = ModeLossy
	}
	if rp.Mode != nil {
		m := RoCEMode(*rp.Mode)
		switch m {
		case ModeLossless, ModeLossy, ModeSemiLossless, ModePFCOnly:
			if preset == PresetRoCELossy && m != ModeLossy {
				r.errorf(p.Fields.At("mode", p.Pos), "policy.mode", "preset %s is the lossy mode's preset; with mode %s use preset %s", PresetRoCELossy, m, PresetRoCELossless)
			}
			p.Mode = m
		default:
			r.errs.addText(p.Fields.At("mode", p.Pos), "policy.mode", unknownValue("mode", *rp.Mode, Modes()))
		}
	}
	p.Classes = presetClasses(preset)
	applyMode(p.Mode, p.Classes)
	presetPos := p.Fields.At("preset", p.Pos)
	for i := range p.Classes { // preset classes point at the preset that chose them
		p.Classes[i].Pos = presetPos
		if p.Classes[i].ECN != nil {
			p.Classes[i].ECN.Pos = presetPos
		}
	}
	p.MTU = deref(rp.MTU, DefaultMTU)
	p.HostMTU = deref(rp.HostMTU, DefaultHostMTU)
	p.RoCEPathMTU = deref(rp.RoCEPathMTU, DefaultRoCEPathMTU)
	switch p.RoCEPathMTU {
	case 256, 512, 1024, 2048, 4096:
	default:
		r.errorf(p.Pos, "policy.rocePathMTU", "%d is not an RDMA path MTU (256, 512, 1024, 2048 or 4096)", p.RoCEPathMTU)
	}
	p.DCBX = DCBXMode(deref(rp.DCBX, string(DCBXHostStatic)))
	if p.DCBX != DCBXHostStatic && p.DCBX != DCBXSwitchWilling {
		r.errs.addText(p.Fields.At("dcbx", p.Pos), "policy.dcbx", unknownValue("DCBX mode", string(p.DCBX), []string{string(DCBXHostStatic), string(DCBXSwitchWilling)}))
	}
	p.GlobalPause = deref(rp.GlobalPause, false)
	p.MaxLosslessPriorities = deref(rp.MaxLosslessPriorities, DefaultMaxLosslessPriorities)
	p.TrustDSCPFullMap = deref(rp.TrustDSCPFullMap, false)

	r.hostBuffers(rp.HostBuffers, file)
	r.dcqcn(rp.DCQCN, file)
	r.nicAccelerations(rp.NICAccelerations, file)
	p.HostPauseStormPrevention = rp.HostPauseStormPrevention

	p.Watchdog = DefaultWatchdog
	p.Watchdog.Pos = p.Pos
	if w := rp.Watchdog; w != nil {
		p.Watchdog.Pos = withFile(w.Pos, file)
		p.Watchdog.Fields = fieldsIn(w.Keys, file)
		p.Watchdog.Enabled = deref(w.Enabled, true)
		p.Watchdog.Detect = time.Duration(deref(w.Detect, Duration(DefaultWatchdog.Detect)))
		p.Watchdog.Restore = time.Duration(deref(w.Restore, Duration(DefaultWatchdog.Restore)))
		p.Watchdog.Poll = time.Duration(deref(w.Poll, Duration(DefaultWatchdog.Poll)))
		p.Watchdog.Action = WatchdogAction(deref(w.Action, string(WatchdogDrop)))
		switch p.Watchdog.Action {
		case WatchdogDrop, WatchdogForward, WatchdogAlert:
		default:
			r.errs.addText(p.Watchdog.Fields.At("action", p.Watchdog.Pos), "policy.watchdog.action", unknownValue("action", string(p.Watchdog.Action), []string{string(WatchdogDrop), string(WatchdogForward), string(WatchdogAlert)}))
		}
	}

	seen := map[string]Pos{}
	for i := range rp.Classes {
		r.class(&rp.Classes[i], file, i, seen)
	}
	sort.SliceStable(p.Classes, func(i, j int) bool { return p.Classes[i].Priority < p.Classes[j].Priority })
	r.classInvariants()

	p.RoCE = RoCEHost{Mode: DefaultRoCEMode, Pos: p.Pos}
	if c := p.RoCEClass(); c != nil && len(c.DSCP) > 0 {
		p.RoCE.ToS = c.DSCP[0]<<2 | 2 // ECT(0)
	}
	if c := p.CNPClass(); c != nil {
		if len(c.DSCP) > 0 {
			p.RoCE.CNPDSCP = c.DSCP[0]
		}
		p.RoCE.CNPPriority = c.Priority
	}
	if rr := rp.RoCE; rr != nil {
		p.RoCE.Pos = withFile(rr.Pos, file)
		p.RoCE.Fields = fieldsIn(rr.Keys, file)
		p.RoCE.ToS = deref(rr.ToS, p.RoCE.ToS)
		p.RoCE.CNPDSCP = deref(rr.CNPDSCP, p.RoCE.CNPDSCP)
		p.RoCE.CNPPriority = deref(rr.CNPPriority, p.RoCE.CNPPriority)
		p.RoCE.Mode = deref(rr.Mode, p.RoCE.Mode)
		if p.RoCE.Mode != "RoCE v2" && p.RoCE.Mode != "IB/RoCE v1" {
			r.errs.addText(p.RoCE.Fields.At("mode", p.RoCE.Pos), "policy.roce.mode", unknownValue("RoCE mode", p.RoCE.Mode, []string{"RoCE v2", "IB/RoCE v1"}))
		}
	}
}

// hostBuffers builds the NIC receive buffer layout: each buffer index at most
// once, each priority in at most one buffer, unlisted priorities in buffer 0.
func (r *resolver) hostBuffers(rbs []rawBuffer, file string) {
	if len(rbs) == 0 {
		return
	}
	hb := &HostBuffer{Pos: withFile(rbs[0].Pos, file), Fields: fieldsIn(rbs[0].Keys, file)}
	seenBuf := map[int]bool{}
	seenPrio := map[int]string{}
	for i, rb := range rbs {
		pos := withFile(rb.Pos, file)
		path := fmt.Sprintf("policy.hostBuffers[%d]", i)
		if rb.Buffer == nil {
			continue // reported by the decoder
		}
		b := *rb.Buffer
		if seenBuf[b] {
			r.errorf(pos, path+".buffer", "buffer %d is listed twice", b)
			continue
		}
		seenBuf[b] = true
		if b >= 0 && b < len(hb.BufferPos) {
			hb.BufferPos[b], hb.BufferFields[b] = pos, fieldsIn(rb.Keys, file)
		}
		if rb.Size != nil {
			hb.Sizes[b] = int64(*rb.Size)
			if hb.Sizes[b] > 1<<32-1 {
				r.errorf(pos, path+".size", "%d bytes does not fit the kernel's u32 buffer size", hb.Sizes[b])
			}
		}
		for _, p := range rb.Priorities {
			if prev, dup := seenPrio[p]; dup {
				r.errorf(pos, path+".priorities", "priority %d is already in %s", p, prev)
				continue
			}
			seenPrio[p] = fmt.Sprintf("buffer %d", b)
			hb.PrioToBuffer[p] = b
		}
	}
	r.f.Policy.HostBuffer = hb
}

func (r *resolver) class(rc *rawClass, file string, idx int, seen map[string]Pos) {
	p := &r.f.Policy
	pos := withFile(rc.Pos, file)
	path := "policy.classes[" + entryName(rc.Name, idx) + "]"
	if prev, dup := seen[rc.Name]; dup {
		r.errorf(pos, path, "class %q is defined twice (also at %s)", rc.Name, prev)
		return
	}
	seen[rc.Name] = pos
	c := p.ClassByName(rc.Name)
	if c == nil {
		if rc.Priority == nil {
			r.errorf(pos, path+".priority", "required field is missing (a class that is not in the preset needs a priority)")
		}
		p.Classes = append(p.Classes, Class{Name: rc.Name})
		c = &p.Classes[len(p.Classes)-1]
	}
	c.Pos = pos
	c.Fields = fieldsIn(rc.Keys, file)
	if rc.DSCP != nil {
		d := append([]int(nil), rc.DSCP...)
		sort.Ints(d)
		for i := 1; i < len(d); i++ {
			if d[i] == d[i-1] {
				r.errorf(pos, path+".dscp", "DSCP %d is listed twice", d[i])
			}
		}
		c.DSCP = d
	}
	c.Priority = deref(rc.Priority, c.Priority)
	c.Lossless = deref(rc.Lossless, c.Lossless)
	c.CNP = deref(rc.CNP, c.CNP)
	c.Default = deref(rc.Default, c.Default)
	if rc.Strict != nil {
		c.Strict = *rc.Strict
		if c.Strict {
			c.Weight = 0
		}
	}
	if rc.Weight != nil {
		if c.Strict {
			r.errorf(pos, path+".weight", "a strict-priority class has no ETS weight; remove weight or set strict: false")
		}
		w := float64(*rc.Weight)
		if w != float64(int(w)) {
			r.errorf(pos, path+".weight", "ETS weights are whole percentages, got %v", w)
		}
		c.Weight = int(w)
	}
	if e := rc.ECN; e != nil {
		epath := path + ".ecn"
		if e.Enabled != nil && !*e.Enabled {
			c.ECN = nil
		} else {
			ecn := ECN{Probability: 100}
			if c.ECN != nil {
				ecn = *c.ECN
			}
			ecn.Pos = withFile(e.Pos, file)
			ecn.Fields = fieldsIn(e.Keys, file)
			if e.Min != nil {
				ecn.MinBytes = int64(*e.Min)
			}
			if e.Max != nil {
				ecn.MaxBytes = int64(*e.Max)
			}
			if e.Probability != nil {
				ecn.Probability = int(*e.Probability)
				if *e.Probability < 1 {
					r.errorf(ecn.Pos, epath+".probability", "must be at least 1%%")
				}
			}
			if ecn.MinBytes == 0 {
				r.errorf(ecn.Pos, epath+".min", "required field is missing")
			}
			if ecn.MaxBytes == 0 {
				r.errorf(ecn.Pos, epath+".max", "required field is missing")
			}
			c.ECN = &ecn
		}
	}
}

// classInvariants checks what the model itself needs (one default class, at
// most one CNP class); everything else is a check rule.
func (r *resolver) classInvariants() {
	p := &r.f.Policy
	if len(p.Classes) == 0 {
		r.errorf(p.Pos, "policy.classes", "no classes: use `preset: roce-lossless` or list classes")
		return
	}
	var defs, cnps []*Class
	for i := range p.Classes {
		c := &p.Classes[i]
		if c.Default {
			defs = append(defs, c)
		}
		if c.CNP {
			cnps = append(cnps, c)
		}
	}
	if len(defs) == 0 {
		var empty []*Class
		for i := range p.Classes {
			if len(p.Classes[i].DSCP) == 0 {
				empty = append(empty, &p.Classes[i])
			}
		}
		if len(empty) == 1 {
			empty[0].Default = true
		} else {
			r.errorf(p.Pos, "policy.classes", "no default class: mark the class for unlisted DSCPs with `default: true`")
		}
	}
	if len(defs) > 1 {
		r.errorf(defs[1].Pos, "policy.classes["+defs[1].Name+"].default", "two default classes (%s and %s)", defs[0].Name, defs[1].Name)
	}
	if len(cnps) > 1 {
		r.errorf(cnps[1].Pos, "policy.classes["+cnps[1].Name+"].cnp", "two CNP classes (%s and %s)", cnps[0].Name, cnps[1].Name)
	}
}

func (r *resolver) validation(p *part) {
	v := Validation{
		MinBandwidthShare: 0.9,
		Duration:          10 * time.Second,
		Iterations:        10000,
		MessageSize:       65536,
		Lossy:             DefaultLossyValidation,
		// validate.DefaultPredictionTolerance
		PredictionTolerance: 0.2,
	}
	if p != nil {
		rv := p.raw.Validation
		v.Pos = withFile(rv.Pos, p.file)
		v.Fields = fieldsIn(rv.Keys, p.file)
		if rv.MinBandwidth != nil {
			v.MinBandwidthShare = float64(*rv.MinBandwidth) / 100
		}
		v.MaxP99Latency = time.Duration(deref(rv.MaxP99Latency, 0))
		v.MaxP999Latency = time.Duration(deref(rv.MaxP999Latency, 0))
		v.Duration = time.Duration(deref(rv.Duration, Duration(v.Duration)))
		v.Iterations = deref(rv.Iterations, v.Iterations)
		v.MessageSize = int64(deref(rv.MessageSize, Size(v.MessageSize)))
		v.Incast = deref(rv.Incast, 0)
		if rv.PredictionTolerance != nil {
			v.PredictionTolerance = float64(*rv.PredictionTolerance) / 100
			if v.PredictionTolerance <= 0 {
				r.errorf(v.Pos, "validation.predictionTolerance", "must be above 0%% (100%% never warns)")
			}
		}
		if v.Duration <= 0 {
			r.errorf(v.Pos, "validation.duration", "must be positive")
		}
		if v.MessageSize <= 0 {
			r.errorf(v.Pos, "validation.messageSize", "must be positive")
		}
		if rl := rv.Lossy; rl != nil {
			l := &v.Lossy
			l.Pos = withFile(rl.Pos, p.file)
			l.Fields = fieldsIn(rl.Keys, p.file)
			for _, x := range []struct {
				name string
				raw  *Percent
				dst  *float64
			}{{"maxDropRate", rl.MaxDropRate, &l.MaxDropRate}, {"maxRetransmissionRate", rl.MaxRetransmissionRate, &l.MaxRetransmissionRate}, {"maxGoodputLoss", rl.MaxGoodputLoss, &l.MaxGoodputLoss}} {
				if x.raw == nil {
					continue
				}
				if *x.raw < 0 || *x.raw > 100 {
					r.errorf(l.Pos, "validation.lossy."+x.name, "%g%% is not a share: want 0-100%%", float64(*x.raw))
					continue
				}
				*x.dst = float64(*x.raw) / 100
			}
		}
	}
	r.f.Validation = v
}

// zip expands a name pattern and a companion pattern (address) together: the
// companion expands to 1 value (shared) or to as many as the name. What it
// returns is the caller's until the next zip.
func (r *resolver) zip(pos Pos, path func() string, name, companion, what string) (names, comps []string, ok bool) {
	names, err := expandInto(&r.nameBuf, name)
	if err != nil {
		r.errorf(pos, path()+".name", "%v", err)
		return nil, nil, false
	}
	comps, err = expandInto(&r.compBuf, companion)
	if err != nil {
		r.errorf(pos, path()+"."+what, "%v", err)
		return nil, nil, false
	}
	if len(comps) != 1 && len(comps) != len(names) {
		r.errorf(pos, path()+"."+what, "%q expands to %d values but the name %q to %d; they must match", companion, len(comps), name, len(names))
		return nil, nil, false
	}
	return names, comps, true
}

// claim takes name for the element at path (whose .name is reported when
// it is taken already).
func (r *resolver) claim(names map[string]Pos, name string, pos Pos, path func() string) bool {
	if prev, dup := names[name]; dup {
		r.errorf(pos, path()+".name", "%q is defined twice (also at %s); switch and host names are unique", name, prev)
		return false
	}
	names[name] = pos
	return true
}

func relTo(file, p string) string {
	if p == "" || filepath.IsAbs(p) || strings.HasPrefix(p, "~") {
		return p
	}
	return filepath.Join(filepath.Dir(file), p)
}

// MaxNameLen bounds a fabric, switch or host name and a switch address as
// written (before a range is expanded): 253 bytes, a DNS name's limit.
// Every message that names a switch repeats its name; a 10 MiB name was
// printed whole in each.
const MaxNameLen = 253

// nameFits refuses a name (what: "switch name", ...) longer than
// MaxNameLen, quoting only its start and length.
func (r *resolver) nameFits(pos Pos, path, what, name string) bool {
	if len(name) <= MaxNameLen {
		return true
	}
	r.errorf(pos, path, "%s of %d bytes (%s): at most %d", what, len(name), Echo(name), MaxNameLen)
	return false
}

// inventoryPath names a switch or host entry in errors by its name, as the
// decoder does (elemName): leaf1, or leaf{1..4} as written for an entry
// that expands to several; by its index only when it has no name.
func inventoryPath(list string, idx int, name string) string {
	return "inventory." + list + "[" + entryName(name, idx) + "]"
}

// entryName is how a path names a list element: its name when it has a
// usable one, else its index (the decoder's elemName rule).
func entryName(name string, idx int) string {
	if name != "" && len(name) < 80 {
		return name
	}
	return strconv.Itoa(idx)
}

func (r *resolver) switches(rs *rawSwitch, file string, idx int, names map[string]Pos) {
	if r.over {
		return
	}
	pos := withFile(rs.Pos, file)
	path := inventoryPath("switches", idx, rs.Name)
	plat := Platform(rs.Platform)
	known := false
	for _, k := range Platforms() {
		known = known || k == plat
	}
	if !known && rs.Platform != "" {
		var ks []string
		for _, k := range Platforms() {
			ks = append(ks, string(k))
		}
		r.errs.addText(fieldsIn(rs.Keys, file).At("platform", pos), path+".platform", unknownValue("platform", rs.Platform, ks))
	}
	if (len(rs.Name) > MaxNameLen || len(rs.Address) > MaxNameLen) && // the paths are built for errors only
		(!r.nameFits(pos, path+".name", "switch name", rs.Name) || !r.nameFits(pos, path+".address", "switch address", rs.Address)) {
		return
	}
	swPath := func() string { return path }
	swNames, addrs, ok := r.zip(pos, swPath, rs.Name, rs.Address, "address")
	if !ok {
		return
	}
	if len(swNames) > 1 && len(addrs) == 1 {
		r.errorf(pos, path+".address", "%d switches share the address %q; give the address a range like 10.0.0.{1..%d}", len(swNames), rs.Address, len(swNames))
		return
	}
	prof, asic := r.profile(pos, fieldsIn(rs.Keys, file), path, plat, known, rs)
	var creds Credentials
	if c := rs.Credentials; c != nil {
		cp := withFile(c.Pos, file)
		if c.Username != "" || c.Password != "" {
			r.errorf(cp, path+".credentials", "secrets never go in the intent: use usernameEnv/passwordEnv or usernameFile/passwordFile")
		}
		creds = Credentials{UsernameEnv: c.UsernameEnv, PasswordEnv: c.PasswordEnv,
			UsernameFile: relTo(file, c.UsernameFile), PasswordFile: relTo(file, c.PasswordFile), Pos: cp, Fields: fieldsIn(c.Keys, file)}
		if c.PasswordEnv != "" && c.PasswordFile != "" {
			r.errorf(cp, path+".credentials", "give passwordEnv or passwordFile, not both")
		}
		// An environment variable name that is not one is most likely the
		// secret itself, written in the wrong field: say so without it.
		for _, e := range []struct{ key, val string }{{"usernameEnv", c.UsernameEnv}, {"passwordEnv", c.PasswordEnv}} {
			if e.val != "" && !envName(e.val) {
				r.errorf(creds.Fields.At(e.key, cp), path+".credentials."+e.key,
					"not an environment variable name (letters, digits and _, not starting with a digit); if it is the secret itself, remove it from the intent and rotate it (value not shown)")
			}
		}
	}
	var tls TLS
	if t := rs.TLS; t != nil {
		tls = TLS{CA: relTo(file, t.CA), Cert: relTo(file, t.Cert), Key: relTo(file, t.Key), ServerName: t.ServerName,
			Insecure: deref(t.Insecure, false), SkipVerify: deref(t.SkipVerify, false), Pos: withFile(t.Pos, file), Fields: fieldsIn(t.Keys, file)}
		if (tls.Cert == "") != (tls.Key == "") {
			r.errorf(tls.Pos, path+".tls", "mTLS needs both cert and key")
		}
	}
	swFields := fieldsIn(rs.Keys, file)
	if rs.Proxy != "" {
		if err := checkProxy(rs.Proxy); err != nil {
			r.errorf(swFields.At("proxy", pos), path+".proxy", "%v", err)
		}
	}
	ports := r.ports(rs, file, path)
	if r.over || !r.spend(len(swNames)*max(1, len(ports)), pos, swPath) {
		return
	}
	for i, n := range swNames {
		if !r.claim(names, n, pos, swPath) {
			continue
		}
		sw := Switch{Name: n, Platform: plat, Address: addrs[min(i, len(addrs)-1)], Credentials: creds, TLS: tls, Proxy: rs.Proxy,
			Profile: prof, ASIC: asic, MaxLosslessPriorities: deref(rs.MaxLosslessPriorities, 0), Pos: pos, Fields: swFields}
		if rs.Buffer != nil {
			sw.BufferBytes = int64(*rs.Buffer)
		}
		if !strings.Contains(sw.Address, ":") {
			r.errorf(pos, path+".address", "%q: want host:port (gNMI usually listens on 57400 or 6030)", sw.Address)
		}
		sw.Ports = ports
		if len(swNames) > 1 {
			sw.Ports = append([]Port(nil), ports...)
		}
		r.f.Switches = append(r.f.Switches, sw)
	}
}

// profile resolves switches[].profile (default: the platform's default profile, profile.Default) and
// switches[].asic against the profiles and ASICs internal/profile knows.
func (r *resolver) profile(pos Pos, keys Fields, path string, plat Platform, known bool, rs *rawSwitch) (string, string) {
	name := rs.Profile
	if known {
		p, err := profile.LookupFor(string(plat), rs.Profile)
		if err != nil && rs.Profile != "" && !slices.Contains(profile.Names(""), rs.Profile) {
			r.errs.addText(keys.At("profile", pos), path+".profile", unknownValue("profile", rs.Profile, profile.Names(string(plat))))
		} else if err != nil {
			r.errorf(keys.At("profile", pos), path+".profile", "%v", err)
		} else {
			name = p.Name
		}
	}
	if rs.ASIC != "" {
		if _, err := profile.LookupASIC(rs.ASIC); err != nil {
			r.errs.addText(keys.At("asic", pos), path+".asic", unknownValue("asic", rs.ASIC, profile.ASICNames()))
		}
	}
	return name, rs.ASIC
}

func (r *resolver) ports(rs *rawSwitch, file, swPath string) []Port {
	var def rawPort
	if rs.PortDefaults != nil {
		def = *rs.PortDefaults
		if def.Name != "" {
			r.errorf(withFile(def.Pos, file), swPath+".portDefaults.name", "portDefaults cannot name a port")
		}
	}
	var seen map[string]Pos
	var out []Port
	inOrder := true // out is in natural order (sort.SliceIsSorted)
	// A switch of several entries (host ports, uplinks) has its names
	// expanded first, so that its ports are sized once for all of them
	// rather than grown (and copied) at each entry. Past a switch's
	// limit of ports the entries are expanded one by one as they come,
	// so that the first too many is reported before the rest expand.
	var expanded []expansion
	if len(rs.Ports) > 1 {
		expanded = make([]expansion, len(rs.Ports))
		total := 0
		for i := range rs.Ports {
			if rs.Ports[i].Name != "" {
				e := &expanded[i]
				e.names, e.sorted, e.err = r.expandPort(rs.Ports[i].Name)
				if total += len(e.names); total > MaxPortsPerSwitch {
					expanded = nil
					break
				}
			}
		}
		if expanded != nil && total > 0 {
			out = make([]Port, 0, total)
		}
	}
	for i := range rs.Ports {
		rp := &rs.Ports[i]
		pos := withFile(rp.Pos, file)
		path := func() string { return swPath + ".ports[" + entryName(rp.Name, i) + "]" } // for an error only
		if rp.Name == "" {
			r.errorf(pos, path()+".name", "required field is missing")
			continue
		}
		var names []string
		var sorted bool
		var err error
		if expanded != nil {
			names, sorted, err = expanded[i].names, expanded[i].sorted, expanded[i].err
		} else {
			names, sorted, err = r.expandPort(rp.Name)
		}
		if err != nil {
			r.errorf(pos, path()+".name", "%v", err)
			continue
		}
		if r.objects+len(out)+len(names) > r.budget() {
			r.overrun(pos, path()+".name")
			return nil
		}
		if len(out)+len(names) > MaxPortsPerSwitch {
			r.errorf(pos, path()+".name", "%s has %d ports with this entry; a switch has at most %d (check the range)", swPath, len(out)+len(names), MaxPortsPerSwitch)
			return nil
		}
		speed := rp.Speed
		if speed == nil {
			speed = def.Speed
		}
		if speed == nil {
			r.errorf(pos, path()+".speed", "required field is missing (set it here or in portDefaults)")
			continue
		}
		cable := rp.Cable
		if cable == nil {
			cable = def.Cable
		}
		cm := float64(DefaultCableMeters)
		if cable != nil {
			cm = float64(*cable)
		}
		mtu := rp.MTU
		if mtu == nil {
			mtu = def.MTU
		}
		sub := rp.Subinterface
		if sub == nil {
			sub = def.Subinterface
		}
		if out == nil { // sized for the first entry, mostly the only one
			out = make([]Port, 0, len(names))
		}
		// The names of one entry with at most one range are distinct: the
		// index of names is made for a second entry (or several ranges).
		if seen == nil && (len(out) > 0 || strings.Count(rp.Name, "{") > 1) {
			if r.portSeen == nil {
				r.portSeen = make(map[string]Pos, len(out)+len(names))
			}
			seen = r.portSeen
			clear(seen)
			for _, p := range out {
				seen[p.Name] = p.Pos
			}
		}
		// A value from portDefaults is where portDefaults sets it.
		fields := r.portFields(def.Keys, rp.Keys, file)
		start := len(out)
		for _, n := range names {
			if seen != nil {
				if prev, dup := seen[n]; dup {
					r.errorf(pos, path()+".name", "port %q is listed twice (also at %s)", n, prev)
					continue
				}
				seen[n] = pos
			}
			out = append(out, Port{Name: n, Speed: int64(*speed), CableMeters: cm, MTU: deref(mtu, 0), Subinterface: deref(sub, 0), Pos: pos, Fields: fields})
		}
		// In order so far when the entry's names, all added, are in
		// order and follow the entry before's: what sort.SliceIsSorted
		// would compare, compared once per name rather than per switch.
		inOrder = inOrder && sorted && len(out)-start == len(names) &&
			(start == 0 || len(names) == 0 || !naturalLess(out[start].Name, out[start-1].Name))
	}
	if len(out) == 0 {
		return nil // as when no entry made a port
	}
	less := func(i, j int) bool { return naturalLess(out[i].Name, out[j].Name) }
	if !inOrder && !sort.SliceIsSorted(out, less) { // a range lists them in order
		sort.SliceStable(out, less)
	}
	return out
}

// newNICs returns an empty list of room for n NICs, cut from a block
// shared by many hosts (full: appending to it copies).
func (r *resolver) newNICs(n int) []NIC {
	if n > 64 {
		return make([]NIC, 0, n)
	}
	if cap(r.nicSlab)-len(r.nicSlab) < n {
		r.nicSlab = make([]NIC, 0, 1024)
	}
	l := len(r.nicSlab)
	r.nicSlab = r.nicSlab[:l+n]
	return r.nicSlab[l : l : l+n]
}

// nicIndexFrom is the number of a host's NICs above which hosts indexes
// their interfaces instead of looking through them.
const nicIndexFrom = 8

func (r *resolver) hosts(rh *rawHost, file string, idx int, names map[string]Pos) {
	if r.over {
		return
	}
	pos := withFile(rh.Pos, file)
	path := func() string { return inventoryPath("hosts", idx, rh.Name) } // built for an error only
	if (len(rh.Name) > MaxNameLen || len(rh.Address) > MaxNameLen) &&
		(!r.nameFits(pos, path()+".name", "host name", rh.Name) || !r.nameFits(pos, path()+".address", "host address", rh.Address)) {
		return
	}
	hostNames, addrs, ok := r.zip(pos, path, rh.Name, rh.Address, "address")
	if !ok {
		return
	}
	hostFields := fieldsIn(rh.Keys, file)
	ssh := SSH{User: "root", Port: 22, Pos: pos}
	if s := rh.SSH; s != nil {
		ssh = SSH{User: s.User, Port: deref(s.Port, 22), KeyFile: relTo(file, s.KeyFile), KnownHosts: relTo(file, s.KnownHosts),
			InsecureIgnoreHostKey: deref(s.InsecureIgnoreHostKey, false), Pos: withFile(s.Pos, file), Fields: fieldsIn(s.Keys, file)}
		if ssh.User == "" {
			ssh.User = "root"
		}
	}
	// Spend before expanding the NICs' address ranges (each up to 100,000).
	if !r.spend(len(hostNames)*max(1, len(rh.NICs)), pos, path) {
		return
	}
	nics := r.nicBuf[:0]
	defer func() { r.nicBuf = nics[:0] }()
	// An interface listed twice: a host's few NICs are looked through,
	// a map is made for many.
	var seen map[string]bool
	if len(rh.NICs) > nicIndexFrom {
		seen = make(map[string]bool, len(rh.NICs))
	}
	for i := range rh.NICs {
		rn := &rh.NICs[i]
		npos := withFile(rn.Pos, file)
		dup := seen[rn.Interface]
		for j := 0; seen == nil && j < i && !dup; j++ {
			dup = rh.NICs[j].Interface == rn.Interface
		}
		if dup {
			r.errorf(npos, path()+".nics["+entryName(rn.Interface, i)+"].interface", "interface %q is listed twice", rn.Interface)
			continue
		}
		if seen != nil {
			seen[rn.Interface] = true
		}
		npath := func() string { return path() + ".nics[" + entryName(rn.Interface, i) + "]" } // for an error only
		if err := checkDevName(rn.Interface, "interface"); err != nil {
			r.errorf(npos, npath()+".interface", "%v", err)
			continue
		}
		if rn.RDMA != "" {
			if err := checkDevName(rn.RDMA, "RDMA device"); err != nil {
				r.errorf(npos, npath()+".rdma", "%v", err)
				continue
			}
		}
		var one [1]string
		a, err := expandInto(&one, rn.Address)
		if err != nil {
			r.errorf(npos, npath()+".address", "%v", err)
			continue
		}
		if len(a) != 1 && len(a) != len(hostNames) {
			r.errorf(npos, npath()+".address", "%q expands to %d values but there are %d hosts", rn.Address, len(a), len(hostNames))
			continue
		}
		if len(a) == 1 && len(hostNames) > 1 && a[0] != "" {
			r.errorf(npos, npath()+".address", "%d hosts would share the address %q; give it a range", len(hostNames), rn.Address)
			continue
		}
		n := NIC{Interface: rn.Interface, RDMADevice: rn.RDMA, RDMAPort: deref(rn.RDMAPort, 1), Pos: npos, Fields: fieldsIn(rn.Keys, file)}
		if rn.Speed != nil {
			n.Speed = int64(*rn.Speed)
		}
		if rn.Cable != nil {
			n.CableMeters = float64(*rn.Cable)
		}
		if len(a) == 1 {
			nics = append(nics, nicAddrs{nic: n, one: [1]string{a[0]}})
		} else {
			nics = append(nics, nicAddrs{nic: n, addrs: a})
		}
	}
	for i, hn := range hostNames {
		if !r.claim(names, hn, pos, path) {
			continue
		}
		h := Host{Name: hn, Address: addrs[min(i, len(addrs)-1)], SSH: ssh, Pos: pos, Fields: hostFields}
		if len(hostNames) > 1 && len(addrs) == 1 && !h.IsLocal() {
			r.errorf(pos, path()+".address", "%d hosts share the address %q; give it a range", len(hostNames), rh.Address)
			return
		}
		if len(nics) > 0 {
			h.NICs = r.newNICs(len(nics))
		}
		for j := range nics {
			n := nics[j].nic
			n.Address = nics[j].addr(i)
			h.NICs = append(h.NICs, n)
		}
		r.f.Hosts = append(r.f.Hosts, h)
	}
}

// increasing reports whether the n names at(0)... strictly increase in
// natural order (no two alike: a sort could not reorder them).
func increasing(n int, at func(int) string) bool {
	for i := 1; i < n; i++ {
		if !naturalLess(at(i-1), at(i)) {
			return false
		}
	}
	return true
}

// noRange reports whether s expands to itself (Expand's fast case).
func noRange(s string) bool { return !strings.ContainsAny(s, "{}") }

// expandInto is Expand, with a name that has no range returned in one (no
// list made for each of 16,000 host names and addresses).
func expandInto(one *[1]string, s string) ([]string, error) {
	if noRange(s) {
		one[0] = s
		return one[:], nil
	}
	return Expand(s)
}

// nicAddrs is one NIC of a host entry and the addresses its address
// expands to: addrs, or one when it has no range.
type nicAddrs struct {
	nic   NIC
	addrs []string
	one   [1]string
}

func (na *nicAddrs) addr(i int) string {
	if na.addrs == nil {
		return na.one[0]
	}
	return na.addrs[min(i, len(na.addrs)-1)]
}

// expandEnds expands both ends of a link with a range; true when it
// reported an error.
func (r *resolver) expandEnds(rl *rawLink, file string, idx int, as, bs *[]string) bool {
	var err error
	if *as, err = Expand(rl.A); err != nil {
		r.errorf(rl.aAt.in(file), linkPath(idx), "%v", err)
		return true
	}
	if *bs, err = Expand(rl.B); err != nil {
		r.errorf(rl.bAt.in(file), linkPath(idx), "%v", err)
		return true
	}
	return false
}

// linkKeys are a link's keys, as its Fields knows them.
var linkKeys = [2]string{"a", "b"}

func linkPath(idx int) string { return "inventory.links[" + strconv.Itoa(idx) + "]" }

func (r *resolver) links(rl *rawLink, file string, idx int) {
	if r.over {
		return
	}
	pos := rl.at.in(file)
	// The path is built for an error only (30,000 links, mostly none).
	var as, bs []string
	var one [2]string // both ends when neither has a range (no slices made)
	if noRange(rl.A) && noRange(rl.B) {
		one = [2]string{rl.A, rl.B}
		as, bs = one[0:1], one[1:2]
	} else if failed := r.expandEnds(rl, file, idx, &as, &bs); failed {
		return
	}
	if r.over || r.objects+len(as) > r.budget() {
		r.spend(len(as), pos, func() string { return linkPath(idx) })
		return
	}
	r.objects += len(as)
	r.keyBuf = append(r.keyBuf[:0], keyPos{&linkKeys[0], rl.aAt.line, rl.aAt.col}, keyPos{&linkKeys[1], rl.bAt.line, rl.bAt.col})
	linkFields := r.arena.fields(file, r.keyBuf)
	if len(as) != len(bs) {
		r.errorf(pos, linkPath(idx), "%q expands to %d ends but %q to %d; both sides must expand alike", rl.A, len(as), rl.B, len(bs))
		return
	}
	for i := range as {
		a, okA := splitEndpoint(as[i])
		b, okB := splitEndpoint(bs[i])
		if !okA {
			r.errorf(rl.aAt.in(file), linkPath(idx), "%q: want node:port", as[i])
		}
		if !okB {
			r.errorf(rl.bAt.in(file), linkPath(idx), "%q: want node:port", bs[i])
		}
		if okA && okB {
			r.f.Links = append(r.f.Links, Link{A: a, B: b, Pos: pos, Fields: linkFields})
		}
	}
}

// checkDevName applies the kernel's rules for netdev names (dev_valid_name:
// 1-15 bytes, not "." or "..", no '/', ':' or white space); RDMA device names
// follow the same rules. hostdrv builds sysfs and configfs paths from these
// names, so a name that could leave the directory is refused here, at its
// position in the intent.
func checkDevName(name, what string) error {
	switch {
	case name == "":
		return fmt.Errorf("%s name is empty", what)
	case len(name) > 15:
		return fmt.Errorf("%s name %q is longer than 15 bytes (the kernel's IFNAMSIZ-1)", what, name)
	case name == "." || name == "..":
		return fmt.Errorf("%s name %q is not a device name", what, name)
	}
	for _, c := range name {
		if c == '/' || c == ':' || c <= ' ' || c == 0x7f {
			return fmt.Errorf("%s name %q has a character the kernel refuses in device names (%q)", what, name, c)
		}
	}
	return nil
}

// envName reports whether s is a portable environment variable name
// (POSIX: letters, digits and underscore, not starting with a digit).
func envName(s string) bool {
	for i, c := range s {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return s != ""
}

func splitEndpoint(s string) (Endpoint, bool) {
	node, port, ok := strings.Cut(s, ":")
	if !ok || node == "" || port == "" {
		return Endpoint{}, false
	}
	return Endpoint{Node: node, Port: port}, true
}

func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// fieldsIn returns the positions of the keys written in one mapping, with
// the file they are in (the zero Fields when none were).
func fieldsIn(keys Fields, file string) Fields {
	if keys.l == nil || keys.l.file == file {
		return keys // the decoder names the file: used as it is
	}
	return Fields{&fieldList{file: file, keys: keys.l.keys}}
}

// checkProxy holds switches[].proxy to what the transport dials: an HTTP
// CONNECT proxy as http://host:port, without credentials (secrets never go
// in the intent) or a path.
func checkProxy(v string) error {
	u, err := url.Parse(v)
	switch {
	case err != nil:
		return fmt.Errorf("%q: not a URL", v)
	case u.User != nil:
		return errors.New("a proxy URL must not hold credentials (secrets never go in the intent; value not shown)")
	case u.Scheme != "http":
		return fmt.Errorf("%q: want http://host:port (an HTTP CONNECT proxy)", v)
	case u.Port() == "" || u.Hostname() == "":
		return fmt.Errorf("%q: want http://host:port", v)
	case (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("%q: want http://host:port, nothing after it", v)
	}
	return nil
}
