package check

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fabricctl/fabricctl/intent"
)

// Rule is one static check. ID is stable across releases; Severity is the
// most severe finding the rule can report (some also report lesser ones).
type Rule struct {
	ID       string
	Name     string
	Severity Severity
	Summary  string
	run      func(*checker)
}

// Rules returns the rule table, in ID order (a copy: callers may not change
// what Run does).
func Rules() []Rule { return slices.Clone(ruleTable) }

// ruleTable is every rule Run applies. Keep IDs stable: add new rules at the
// end, never renumber.
var ruleTable = []Rule{
	{ParseErrorID, "intent-parses", Error, "the intent is well-formed: YAML syntax, known keys, types, units and value ranges (reported by the parser)", nil},
	{"FC101", "dscp-range", Error, "DSCP values of classes and the host CNP DSCP are within 0-63", (*checker).dscpRange},
	{"FC102", "dscp-unique", Error, "a DSCP value belongs to at most one class", (*checker).dscpUnique},
	{"FC103", "priority-range", Error, "class priorities and the host CNP priority are within 0-7", (*checker).priorityRange},
	{"FC104", "priority-unique", Error, "each 802.1p priority (traffic class, queue) belongs to at most one class; never the CNP class and a lossless one", (*checker).priorityUnique},
	{"FC105", "lossless-limit", Error, "lossless priorities per port do not exceed the platform limit (2 by default), the switch override or the policy cap", (*checker).losslessLimit},
	{"FC106", "pfc-expressible", Error, "every switch carrying lossless classes runs a known platform that can express PFC (plain OpenConfig cannot)", (*checker).pfcExpressible},
	{"FC107", "cnp-class", Error, "a single CNP class exists, is strict priority and is not lossless", (*checker).cnpClass},
	{"FC108", "cnp-host", Error, "the CNP DSCP and priority hosts send with match the switches' CNP class, and neither lands on a PFC-enabled priority", (*checker).cnpHost},
	{"FC109", "ecn-lossless", Error, "every lossless class but the CNP class has ECN marking (DCQCN)", (*checker).ecnLossless},
	{"FC110", "ecn-thresholds", Error, "ECN Kmin < Kmax, Kmin >= one MTU, mark probability 1-100%", (*checker).ecnThresholds},
	{"FC111", "ecn-before-pfc", Error, "ECN Kmax is at most the queue depth at which the ingress sends XOFF (the platform's own XOFF point: SR Linux 7220 the pfc-queue maximum-burst-size; else buffer minus headroom), so ECN fires before PFC", (*checker).ecnBeforePFC},
	{"FC112", "headroom", Error, "each port's buffer holds the PFC headroom of all its lossless priorities (max of the IEEE, SONiC and mlx5 models and, for the switch's ASIC, the vendor's lookup table)", (*checker).headroomFits},
	{"FC113", "ets-weights", Error, "ETS weights of the non-strict classes sum to 100%", (*checker).etsWeights},
	{"FC114", "watchdog-timers", Error, "PFC watchdog on where PFC is used, with poll < detect <= restore (poll above detect or restore is an error, the rest warnings)", (*checker).watchdogTimers},
	{"FC115", "watchdog-platform", Error, "PFC watchdog timers are within the ranges each platform accepts", (*checker).watchdogPlatform},
	{"FC116", "global-pause", Error, "802.3x global pause is off where PFC is on", (*checker).globalPause},
	{"FC117", "link-mtu", Error, "MTU is equal on both ends of switch links and the host MTU is not above the switch port MTU", (*checker).linkMTU},
	{"FC118", "roce-path-mtu", Error, "the RoCE path MTU is 256-4096 and fits in the host MTU with the RoCEv2 headers", (*checker).rocePathMTU},
	{"FC119", "host-tos", Error, "host RoCE ToS is the RoCE class DSCP << 2 with ECT(0) (a lossless class; without PFC the ECN class): CE and not-ECT are errors, ECT(1) a warning", (*checker).hostToS},
	{"FC120", "dcbx-owner", Error, "a single owner of host DCB settings: host-static, or switch-willing only where fabricctl configures the host-facing switches to advertise DCBX", (*checker).dcbxOwner},
	{"FC121", "link-endpoints", Error, "links join existing switch ports and host NICs, never an endpoint to itself", (*checker).linkEndpoints},
	{"FC122", "link-port-reuse", Error, "no switch port or host NIC is used by two links", (*checker).linkPortReuse},
	{"FC123", "pfc-deadlock", Warning, "no cyclic buffer dependency among switches for lossless traffic (links form an up-down Clos)", (*checker).pfcDeadlock},
	{"FC124", "link-ends", Warning, "both ends of a link agree on speed and cable length (headroom is computed from them)", (*checker).linkEnds},
	{"FC125", "port-mtu-platform", Error, "every switch port's IP MTU is within the range its platform accepts (EOS 68-9214, SONiC 68-9216, SR Linux 7220 IXR 1486-9398 = port mtu 1500-9412 less the Ethernet header; from the switch's profile)", (*checker).portMTUPlatform},
	{"FC126", "lossless-reached", Error, "every lossless class is reached by some DSCP (its own list, or every unlisted DSCP as the default class)", (*checker).losslessReached},
	{"FC127", "line-rate", Error, "switch ports and RoCE NICs run at 1G or more (speed 400M is 400 Mb/s: did you mean 400G?)", (*checker).lineRate},
	{"FC128", "sonic-one-wred", Warning, "on SONiC 202405/202411, whose config updater creates no WRED profile, every ECN class has the same ECN setting (they share AZURE_LOSSLESS)", (*checker).sonicOneWRED},
}

// roceOverhead is what RoCEv2 adds on top of the RDMA payload inside the
// netdev MTU, as the kernel subtracts it in iboe_get_mtu (include/rdma/ib_addr.h):
// GRH/IP 40 + UDP 8 + BTH 12 + XRC ext 4 + AtomicETH 28 + ICRC 4.
const roceOverhead = 96

// FC101
func (c *checker) dscpRange() {
	for i := range c.f.Policy.Classes {
		cl := &c.f.Policy.Classes[i]
		for _, d := range cl.DSCP {
			if d < 0 || d > 63 {
				c.report(Error, pos(cl.Pos, c.f.Policy.Pos), classPath(cl)+".dscp",
					"use DSCP values 0-63 (6 bits of the IP header)",
					"DSCP %d of class %s is out of range 0-63", d, cl.Name)
			}
		}
	}
	r := &c.f.Policy.RoCE
	if d := r.CNPDSCP; d < 0 || d > 63 {
		c.report(Error, pos(r.Pos, c.f.Policy.Pos), "policy.roce.cnpDSCP",
			"use the CNP class's DSCP (48 in the preset)",
			"host CNP DSCP %d is out of range 0-63", d)
	}
}

// FC102
func (c *checker) dscpUnique() {
	var owner [64]*intent.Class
	for i := range c.f.Policy.Classes {
		cl := &c.f.Policy.Classes[i]
		for _, d := range cl.DSCP {
			if d < 0 || d > 63 {
				continue // FC101
			}
			if o := owner[d]; o != nil && o != cl {
				at := cl
				if !written(cl, "dscp") && written(o, "dscp") {
					at = o // point at the list that was written
				}
				c.report(Error, pos(at.Pos, c.f.Policy.Pos), classPath(at)+".dscp",
					"list each DSCP value in one class only",
					"DSCP %d is in both class %s and class %s: a packet can be classified into one queue only", d, o.Name, cl.Name)
				continue
			}
			owner[d] = cl
		}
	}
}

// FC103
func (c *checker) priorityRange() {
	for i := range c.f.Policy.Classes {
		cl := &c.f.Policy.Classes[i]
		if cl.Priority < 0 || cl.Priority > 7 {
			c.report(Error, pos(cl.Pos, c.f.Policy.Pos), classPath(cl)+".priority",
				"use an 802.1p priority 0-7",
				"priority %d of class %s is out of range 0-7", cl.Priority, cl.Name)
		}
	}
	r := &c.f.Policy.RoCE
	if p := r.CNPPriority; p < 0 || p > 7 {
		c.report(Error, pos(r.Pos, c.f.Policy.Pos), "policy.roce.cnpPriority",
			"use the CNP class's priority (6 in the preset)",
			"host CNP priority %d is out of range 0-7", p)
	}
}

// FC104
func (c *checker) priorityUnique() {
	owner := map[int]*intent.Class{}
	for i := range c.f.Policy.Classes {
		cl := &c.f.Policy.Classes[i]
		if o, ok := owner[cl.Priority]; ok {
			path := classPath(cl) + ".priority"
			if !written(cl, "priority") && written(o, "priority") {
				path = classPath(o) + ".priority" // point at the priority that was written
			}
			at := pos(cl.Pos, c.f.Policy.Pos)
			if cnp, other := cnpPair(o, cl); cnp != nil && other.Lossless {
				// Merging would put the CNPs in the lossless queue, where
				// PFC pauses the very notifications that should slow the
				// senders down (FC107 says the same of a lossless CNP class).
				c.report(Error, at, path,
					fmt.Sprintf("give CNP class %s a priority of its own that is not PFC-enabled (the preset uses 6), and keep its DSCPs out of class %s", cnp.Name, other.Name),
					"priority %d is both lossless class %s and CNP class %s: CNPs would share the PFC-enabled queue, be paused with the traffic they should throttle, and DCQCN would react late", cl.Priority, other.Name, cnp.Name)
				continue
			}
			fix := "give each class its own priority"
			if o.Lossless == cl.Lossless && o.Strict == cl.Strict && !o.CNP && !cl.CNP && !o.Default && !cl.Default {
				fix += fmt.Sprintf(", or merge class %s's DSCP list into class %s", cl.Name, o.Name)
			}
			c.report(Error, at, path, fix,
				"priority %d is used by class %s and class %s: a priority is one queue with one PFC and scheduling setting", cl.Priority, o.Name, cl.Name)
			continue
		}
		owner[cl.Priority] = cl
	}
}

// written reports whether the intent sets key of class cl itself (not the
// preset).
func written(cl *intent.Class, key string) bool { return cl.Fields[key].IsValid() }

// cnpPair returns the CNP class of a and b and the other one, or nil.
func cnpPair(a, b *intent.Class) (cnp, other *intent.Class) {
	switch {
	case a.CNP:
		return a, b
	case b.CNP:
		return b, a
	}
	return nil, nil
}

// losslessPrios renders the lossless priorities as "3, 4".
func (c *checker) losslessPrios() string {
	s := make([]string, len(c.lossless))
	for i, cl := range c.lossless {
		s[i] = fmt.Sprint(cl.Priority)
	}
	return strings.Join(s, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// FC105
func (c *checker) losslessLimit() {
	n := len(c.lossless)
	if n == 0 {
		return
	}
	p := &c.f.Policy
	// A switch override wins; otherwise the lower of the platform limit and
	// the policy cap applies. Group the switches over their limit by limit,
	// so a 2,000-switch fabric yields one finding per distinct limit.
	type group struct {
		why []string // where the limit comes from, deduplicated
		sws []string
	}
	over := map[int]*group{}
	var order []int
	add := func(limit int, why, sw string) {
		g := over[limit]
		if g == nil {
			g = &group{}
			over[limit] = g
			order = append(order, limit)
		}
		if !slices.Contains(g.why, why) {
			g.why = append(g.why, why)
		}
		if sw != "" {
			g.sws = append(g.sws, sw)
		}
	}
	for i := range c.f.Switches {
		sw := &c.f.Switches[i]
		pi, ok := c.platform(sw)
		if !ok || !pi.PFC {
			continue // FC106
		}
		limit, why := pi.MaxLosslessPriorities, "platform "+string(sw.Platform)
		switch {
		case sw.MaxLosslessPriorities > 0:
			limit, why = sw.MaxLosslessPriorities, "switch maxLosslessPriorities"
		case p.MaxLosslessPriorities > 0 && (limit <= 0 || p.MaxLosslessPriorities < limit):
			limit, why = p.MaxLosslessPriorities, "policy.maxLosslessPriorities"
		}
		if limit > 0 && n > limit {
			add(limit, why, sw.Name)
		}
	}
	if len(c.f.Switches) == 0 && p.MaxLosslessPriorities > 0 && n > p.MaxLosslessPriorities {
		add(p.MaxLosslessPriorities, "policy.maxLosslessPriorities", "")
	}
	slices.Sort(order)
	for _, limit := range order {
		g := over[limit]
		slices.Sort(g.why)
		on := ""
		if len(g.sws) > 0 {
			on = fmt.Sprintf(" on %d %s (%s)", len(g.sws), plural(len(g.sws), "switch", "switches"), names(g.sws, 5))
		}
		// Only what set the limit can raise it: the policy cap never lifts a
		// platform limit, only a switch's own maxLosslessPriorities does.
		raise := "the switches' maxLosslessPriorities"
		if len(g.why) == 1 && g.why[0] == "policy.maxLosslessPriorities" {
			raise = "policy.maxLosslessPriorities"
		}
		cl := c.lossless[limit]
		c.report(Error, pos(cl.Pos, p.Pos), classPath(cl)+".lossless",
			fmt.Sprintf("make at most %d classes lossless, or raise %s if the ASIC buffer profile really allows more", limit, raise),
			"%d lossless priorities (%s) exceed the limit of %d per port (%s)%s",
			n, c.losslessPrios(), limit, strings.Join(g.why, ", "), on)
	}
}

// FC106
func (c *checker) pfcExpressible() {
	for i := range c.f.Switches {
		sw := &c.f.Switches[i]
		pi, ok := c.platform(sw)
		if !ok {
			known := make([]string, 0, 4)
			for _, p := range intent.Platforms() {
				known = append(known, string(p))
			}
			c.report(Error, sw.Pos, switchPath(sw)+".platform",
				"use one of "+strings.Join(known, ", "),
				"switch %s: unknown platform %q, nothing about it can be checked", sw.Name, sw.Platform)
			continue
		}
		if !pi.PFC && len(c.lossless) > 0 {
			c.report(Error, sw.Pos, switchPath(sw)+".platform",
				"use the switch's native platform (srlinux, sonic or eos), or drop the switch from the lossless fabric",
				"switch %s: platform %s cannot express PFC (the OpenConfig QoS model has no PFC, pause or watchdog), so priority %s would not be lossless on it",
				sw.Name, sw.Platform, c.losslessPrios())
		}
	}
}

// FC107
func (c *checker) cnpClass() {
	p := &c.f.Policy
	var cnps []*intent.Class
	for i := range p.Classes {
		if p.Classes[i].CNP {
			cnps = append(cnps, &p.Classes[i])
		}
	}
	if len(cnps) == 0 {
		for _, cl := range c.lossless {
			if cl.ECN != nil {
				def := "the default class"
				if d := p.DefaultClass(); d != nil {
					def = "class " + d.Name
				}
				c.report(Warning, pos(p.Pos), "policy.classes",
					"add a strict-priority, lossy class with cnp: true (the preset uses DSCP 48 -> priority 6)",
					"no CNP class: congestion notifications travel in %s, queued behind the traffic they should throttle", def)
				return
			}
		}
		return
	}
	for _, cl := range cnps[1:] {
		c.report(Error, pos(cl.Pos, p.Pos), classPath(cl)+".cnp",
			"mark exactly one class as the CNP class",
			"classes %s and %s are both marked as the CNP class; hosts send CNPs with one DSCP", cnps[0].Name, cl.Name)
	}
	cl := cnps[0]
	if cl.Lossless {
		c.report(Error, pos(cl.Pos, p.Pos), classPath(cl)+".lossless",
			"set lossless: false on the CNP class",
			"CNP class %s is lossless: PFC on it can pause the congestion notifications themselves, stalling DCQCN exactly when it is needed", cl.Name)
	}
	if !cl.Strict {
		c.report(Error, pos(cl.Pos, p.Pos), classPath(cl)+".strict",
			"set strict: true on the CNP class",
			"CNP class %s is scheduled by ETS weight %d%%, not strict priority: CNPs wait behind bulk traffic and reach the sender late", cl.Name, cl.Weight)
	}
}

// FC108
func (c *checker) cnpHost() {
	p := &c.f.Policy
	cl := p.CNPClass()
	if cl == nil {
		return // FC107
	}
	r := &p.RoCE
	if !slices.Contains(cl.DSCP, r.CNPDSCP) && r.CNPDSCP >= 0 && r.CNPDSCP < 64 {
		lands := "the default class"
		if to := p.ClassByPriority(p.DSCPToPriority()[r.CNPDSCP]); to != nil {
			lands = fmt.Sprintf("class %s (priority %d)", to.Name, to.Priority)
		}
		c.report(Error, pos(r.Pos, p.Pos), "policy.roce.cnpDSCP",
			fmt.Sprintf("set the host CNP DSCP to %s, or add %d to class %s", ints(cl.DSCP), r.CNPDSCP, cl.Name),
			"hosts send CNPs with DSCP %d but the switches' CNP class %s matches DSCP %s: the CNPs land in %s",
			r.CNPDSCP, cl.Name, ints(cl.DSCP), lands)
	}
	if r.CNPPriority != cl.Priority {
		lossless := ""
		if lc := p.ClassByPriority(r.CNPPriority); lc != nil && lc.Lossless && !lc.CNP {
			lossless = fmt.Sprintf(", and priority %d is PFC-enabled (lossless class %s): the NICs queue CNPs with the traffic PFC pauses", r.CNPPriority, lc.Name)
		}
		c.report(Error, pos(r.Pos, p.Pos), "policy.roce.cnpPriority",
			fmt.Sprintf("set the host CNP priority to %d", cl.Priority),
			"hosts send CNPs with priority %d but the CNP class %s is priority %d%s", r.CNPPriority, cl.Name, cl.Priority, lossless)
	}
}

func ints(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

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

type headroomKey struct {
	speed int64
	cable float64
	mtu   int
	cell  int64
	asic  string
}

// headroomRound is what the compilers round the per-priority headroom up to.
const headroomRound = 1024

type headroomValue struct {
	models  []intent.HeadroomResult
	perPrio int64 // required per lossless priority, rounded up to 1 KiB and the cell
}

// portHeadroom returns the headroom of one lossless priority on p, memoised
// per (speed, cable, MTU, cell): a 64-port leaf usually has one or two.
func (c *checker) portHeadroom(sw *intent.Switch, p *intent.Port, cell int64) (headroomKey, headroomValue) {
	// The switch's ASIC adds the vendor's table as a fourth model and
	// gives the SONiC model its cell factor (issue 10 item 15);
	// --cell-factor overrides the factor.
	in := c.f.HeadroomInputFor(sw, *p)
	if c.opts.CellFactor != 0 {
		in.CellFactor = c.opts.CellFactor
	}
	k := headroomKey{p.Speed, p.CableMeters, in.MTU, cell, in.ASIC}
	if v, ok := c.headroom[k]; ok {
		return k, v
	}
	models, req := intent.Headroom(in)
	// The switch compilers program the largest model rounded up to 1 KiB
	// (switchdrv.PortHeadroom; SONiC's buffer_headroom lua rounds xoff the
	// same way): the buffer must hold that, not the exact figure.
	req = (req + headroomRound - 1) / headroomRound * headroomRound
	if cell > 0 && req%cell != 0 {
		req += cell - req%cell
	}
	v := headroomValue{models: models, perPrio: req}
	c.headroom[k] = v
	return k, v
}

func (k headroomKey) String() string {
	return fmt.Sprintf("%s, %s m, MTU %d", intent.FormatRate(k.speed), trimFloat(k.cable), k.mtu)
}

func (v headroomValue) breakdown() string {
	s := make([]string, len(v.models))
	for i, m := range v.models {
		s[i] = fmt.Sprintf("%s %s", modelShort(m.Model), bytesStr(m.Bytes))
	}
	return strings.Join(s, ", ") + "; the largest rounded up to 1 KiB, as the switches are programmed"
}

func modelShort(m intent.HeadroomModel) string {
	switch m {
	case intent.ModelIEEE:
		return "IEEE"
	case intent.ModelSONiC:
		return "SONiC"
	case intent.ModelMLX5:
		return "mlx5"
	}
	return string(m)
}

func trimFloat(f float64) string { return strings.TrimSuffix(fmt.Sprintf("%g", f), ".0") }

// worstPort returns the port of sw needing the most headroom (nil when sw
// has no port with a known speed).
func (c *checker) worstPort(sw *intent.Switch, cell int64) (*intent.Port, headroomKey, headroomValue) {
	var (
		wp *intent.Port
		wk headroomKey
		wv headroomValue
	)
	for i := range sw.Ports {
		p := &sw.Ports[i]
		if p.Speed <= 0 {
			continue
		}
		k, v := c.portHeadroom(sw, p, cell)
		if wp == nil || v.perPrio > wv.perPrio {
			wp, wk, wv = p, k, v
		}
	}
	return wp, wk, wv
}

// FC111. Assumption (printed in the message): the egress queue ECN watches
// is at most as deep as one ingress port's priority group (a single
// congested sender — the worst case: with N ingress ports feeding it the
// queue is N times deeper and ECN fires even earlier). The ingress sends
// XOFF at the platform's XOFF point (PlatformInfo.XOFF: SR Linux 7220 at the
// pfc-queue's maximum-burst-size), and in any case when the priority group
// holds the switch's buffer (the ingress buffer one port can use for
// lossless traffic) minus the headroom reserved for all lossless priorities
// of the port.
func (c *checker) ecnBeforePFC() {
	n := int64(len(c.lossless))
	if n == 0 {
		return
	}
	for _, cl := range c.lossless {
		if cl.ECN == nil || cl.ECN.MaxBytes <= cl.ECN.MinBytes {
			continue // FC109, FC110
		}
		var (
			bad      []string
			minDepth int64 = -1
			minSw    *intent.Switch
			minHead  int64
		)
		for i := range c.f.Switches {
			sw := &c.f.Switches[i]
			pi, ok := c.platform(sw)
			if !ok || !pi.PFC || (sw.BufferBytes <= 0 && pi.XOFF == nil) {
				continue
			}
			depth, head := int64(-1), int64(0)
			if pi.XOFF != nil {
				depth = pi.XOFF(cl, c.f.Policy.MTU)
			}
			if sw.BufferBytes > 0 {
				wp, _, wv := c.worstPort(sw, pi.BufferCellBytes)
				if wp == nil && depth < 0 {
					continue
				}
				if wp != nil {
					head = wv.perPrio * n
					shared := sw.BufferBytes - head
					if shared <= 0 {
						continue // FC112: the headroom alone does not fit
					}
					if depth < 0 || shared < depth {
						depth = shared
					}
				}
			}
			if cl.ECN.MaxBytes > depth {
				bad = append(bad, sw.Name)
				if minDepth < 0 || depth < minDepth {
					minDepth, minSw, minHead = depth, sw, head
				}
			}
		}
		if len(bad) == 0 {
			continue
		}
		why := fmt.Sprintf("buffer %s - headroom %s", bytesStr(minSw.BufferBytes), bytesStr(minHead))
		if minSw.BufferBytes <= 0 || minSw.BufferBytes-minHead > minDepth {
			why = fmt.Sprintf("the %s ingress queue's XOFF point", minSw.Platform)
		}
		c.report(Error, c.ecnPos(cl), classPath(cl)+".ecn.max", c.lowerKmaxFix(cl.ECN, minDepth),
			"class %s: ECN Kmax %s is above the %s at which PFC XOFF fires on %s (%s; assuming one ingress port feeds the queue), so PFC pauses before ECN marks; %d %s affected: %s",
			cl.Name, bytesStr(cl.ECN.MaxBytes), bytesStr(minDepth), minSw.Name, why,
			len(bad), plural(len(bad), "switch", "switches"), names(bad, 5))
	}
}

// FC112
func (c *checker) headroomFits() {
	n := int64(len(c.lossless))
	if n == 0 {
		return
	}
	type agg struct {
		sw       *intent.Switch
		port     *intent.Port
		ports    int
		lastPort string
		switches []string
	}
	var (
		unknown    = map[headroomKey]*agg{}
		unknownKey []headroomKey
	)
	for i := range c.f.Switches {
		sw := &c.f.Switches[i]
		pi, ok := c.platform(sw)
		if !ok || !pi.PFC {
			continue // FC106
		}
		var noSpeed []string
		over := map[headroomKey]*agg{}
		var overKey []headroomKey
		for j := range sw.Ports {
			p := &sw.Ports[j]
			if p.Speed <= 0 {
				noSpeed = append(noSpeed, p.Name)
				continue
			}
			k, v := c.portHeadroom(sw, p, pi.BufferCellBytes)
			if sw.BufferBytes <= 0 {
				a := unknown[k]
				if a == nil {
					a = &agg{sw: sw, port: p}
					unknown[k] = a
					unknownKey = append(unknownKey, k)
				}
				a.ports++
				if len(a.switches) == 0 || a.switches[len(a.switches)-1] != sw.Name {
					a.switches = append(a.switches, sw.Name)
				}
				continue
			}
			if v.perPrio*n > sw.BufferBytes {
				a := over[k]
				if a == nil {
					a = &agg{sw: sw, port: p}
					over[k] = a
					overKey = append(overKey, k)
				}
				a.ports++
				a.lastPort = p.Name
			}
		}
		if len(noSpeed) > 0 {
			c.report(Warning, sw.Pos, switchPath(sw)+".ports",
				"give every port its speed",
				"switch %s: %d %s without a speed (%s): their PFC headroom cannot be computed",
				sw.Name, len(noSpeed), plural(len(noSpeed), "port", "ports"), names(noSpeed, 5))
		}
		for _, k := range overKey {
			a, v := over[k], c.headroom[k]
			span := a.port.Name
			if a.ports > 1 {
				span = fmt.Sprintf("%d ports %s..%s", a.ports, a.port.Name, a.lastPort)
			}
			c.report(Error, pos(a.port.Pos, sw.Pos), portPath(sw, a.port),
				"shorten the cables, lower the MTU, use fewer lossless priorities, or raise buffer if the ASIC really has more",
				"switch %s, %s (%s): PFC headroom %d x %s = %s exceeds the port buffer of %s (per priority: %s)",
				sw.Name, span, k, n, bytesStr(v.perPrio), bytesStr(v.perPrio*n), bytesStr(sw.BufferBytes), v.breakdown())
		}
	}
	for _, k := range unknownKey {
		a, v := unknown[k], c.headroom[k]
		c.report(Info, pos(a.port.Pos, a.sw.Pos), portPath(a.sw, a.port),
			"set buffer on the switches to check headroom (FC112) and ECN-before-PFC (FC111) against the ASIC's buffer",
			"PFC headroom at %s: %s per lossless priority (%s), x %d = %s per port; %d %s on %d %s (%s) have no buffer, so it is not checked",
			k, bytesStr(v.perPrio), v.breakdown(), n, bytesStr(v.perPrio*n),
			a.ports, plural(a.ports, "port", "ports"), len(a.switches), plural(len(a.switches), "switch", "switches"), names(a.switches, 3))
	}
}

// FC113
func (c *checker) etsWeights() {
	p := &c.f.Policy
	var (
		sum   int
		parts []string
		first *intent.Class
	)
	for i := range p.Classes {
		cl := &p.Classes[i]
		if cl.Strict {
			continue
		}
		if first == nil {
			first = cl
		}
		sum += cl.Weight
		parts = append(parts, fmt.Sprintf("%s %d%%", cl.Name, cl.Weight))
		if cl.Weight <= 0 {
			c.zeroWeight(cl)
		}
	}
	if first != nil && sum != 100 {
		// Point at a weight that is written, if any: that is what to edit.
		for i := range p.Classes {
			if cl := &p.Classes[i]; !cl.Strict && cl.Fields["weight"].IsValid() {
				first = cl
				break
			}
		}
		c.report(Error, pos(first.Pos, p.Pos), classPath(first)+".weight",
			"adjust the weights of the non-strict classes so they add up to 100",
			"ETS weights of the non-strict classes sum to %d%%, not 100%% (%s)", sum, strings.Join(parts, ", "))
	}
}

// zeroWeight reports a non-strict class without an ETS weight: an error
// where a switch's platform refuses the weight (its compiler fails), a
// warning otherwise.
func (c *checker) zeroWeight(cl *intent.Class) {
	at, path := pos(cl.Pos, c.f.Policy.Pos), classPath(cl)+".weight"
	by := map[intent.Platform][]string{}
	var plats []intent.Platform
	for i := range c.f.Switches {
		sw := &c.f.Switches[i]
		if pi, ok := c.platform(sw); ok && cl.Weight < pi.MinWeight {
			if by[sw.Platform] == nil {
				plats = append(plats, sw.Platform)
			}
			by[sw.Platform] = append(by[sw.Platform], sw.Name)
		}
	}
	if len(plats) == 0 {
		c.report(Warning, at, path,
			"give the class a weight, or make it strict",
			"class %s has ETS weight %d%%: it gets no guaranteed bandwidth and starves under load", cl.Name, cl.Weight)
		return
	}
	slices.Sort(plats)
	var on []string
	for _, pl := range plats {
		sws := by[pl]
		on = append(on, fmt.Sprintf("%s (%d %s: %s)", pl, len(sws), plural(len(sws), "switch", "switches"), names(sws, 5)))
	}
	c.report(Error, at, path,
		"give the class a weight of at least 1%, or make it strict",
		"class %s has ETS weight %d%%, which %s refuse: a scheduler weight starts at 1", cl.Name, cl.Weight, strings.Join(on, " and "))
}

// FC114
func (c *checker) watchdogTimers() {
	if len(c.lossless) == 0 {
		return
	}
	w := &c.f.Policy.Watchdog
	at := pos(w.Pos, c.f.Policy.Pos)
	if !w.Enabled {
		c.report(Warning, at, "policy.watchdog.enabled",
			"enable the PFC watchdog (e.g. detect 200ms, restore 400ms, poll 100ms)",
			"PFC watchdog is off: a PFC storm or deadlock stalls the lossless queues until someone intervenes")
		return
	}
	if w.Detect <= 0 {
		c.report(Error, at, "policy.watchdog.detect", "set detect (e.g. 200ms)", "PFC watchdog detect time is not set")
		return
	}
	// SONiC's pfcwd refuses a poll interval above any detection or
	// restoration time, but accepts it equal (its own defaults are
	// 200/200/200 ms); neither SONiC nor SR Linux requires restore >= detect.
	switch {
	case w.Poll > 0 && (w.Poll > w.Detect || (w.Restore > 0 && w.Poll > w.Restore)):
		bound := w.Detect
		if w.Restore > 0 {
			bound = min(bound, w.Restore)
		}
		c.report(Error, at, "policy.watchdog.poll",
			fmt.Sprintf("set poll below %v (e.g. %v)", bound, bound/2),
			"PFC watchdog poll %v is longer than detect %v or restore %v: SONiC's pfcwd refuses a poll interval bigger than any detection or restoration time", w.Poll, w.Detect, w.Restore)
	case w.Poll > 0 && w.Poll == w.Detect:
		c.report(Warning, at, "policy.watchdog.poll",
			fmt.Sprintf("set poll below %v (e.g. %v)", w.Detect, w.Detect/2),
			"PFC watchdog poll %v equals detect %v: a storm is declared only after up to %v (detect + one poll); accepted by SONiC, but poll < detect is the intent", w.Poll, w.Detect, w.Detect+w.Poll)
	}
	if w.Restore < w.Detect {
		c.report(Warning, at, "policy.watchdog.restore",
			fmt.Sprintf("set restore to at least %v (SONiC's pfcwd start defaults it to 2 x detect)", w.Detect),
			"PFC watchdog restore %v is shorter than detect %v: under a persistent storm the queue spends longer stalled (detect) than recovered (restore)", w.Restore, w.Detect)
	}
}

// FC115
func (c *checker) watchdogPlatform() {
	w := &c.f.Policy.Watchdog
	if len(c.lossless) == 0 || !w.Enabled {
		return
	}
	by := map[intent.Platform][]string{}
	for i := range c.f.Switches {
		sw := &c.f.Switches[i]
		by[sw.Platform] = append(by[sw.Platform], sw.Name)
	}
	plats := make([]intent.Platform, 0, len(by))
	for p := range by {
		plats = append(plats, p)
	}
	slices.Sort(plats)
	at := pos(w.Pos, c.f.Policy.Pos)
	for _, p := range plats {
		pi, ok := c.opts.Platform(p)
		if !ok || !pi.PFC {
			continue
		}
		sws := by[p]
		// A zero timer is not "unset" here: the intent's defaults fill every
		// timer, so 0 was written, and the compilers refuse it.
		for _, t := range []struct {
			name string
			val  time.Duration
			r    Range
		}{{"detect", w.Detect, pi.Detect}, {"restore", w.Restore, pi.Restore}, {"poll", w.Poll, pi.Poll}} {
			if t.r.IsZero() || t.r.Contains(t.val) {
				continue
			}
			if t.r.InBounds(t.val) {
				c.report(Error, at, "policy.watchdog."+t.name,
					fmt.Sprintf("set %s to a multiple of %v", t.name, t.r.Step),
					"PFC watchdog %s %v is not a multiple of the %v that %s counts it in (%d %s: %s)",
					t.name, t.val, t.r.Step, p, len(sws), plural(len(sws), "switch", "switches"), names(sws, 5))
				continue
			}
			c.report(Error, at, "policy.watchdog."+t.name,
				fmt.Sprintf("set %s within %v-%v", t.name, t.r.Min, t.r.Max),
				"PFC watchdog %s %v is outside the %v-%v that %s accepts (%d %s: %s)",
				t.name, t.val, t.r.Min, t.r.Max, p, len(sws), plural(len(sws), "switch", "switches"), names(sws, 5))
		}
		if bound := min(w.Detect, w.Restore); pi.PollHalf && w.Poll > 0 && 2*w.Poll > bound {
			c.report(Error, at, "policy.watchdog.poll",
				fmt.Sprintf("set poll to at most %v", bound/2),
				"PFC watchdog poll %v is more than half of min(detect %v, restore %v), which %s refuses (%d %s: %s)",
				w.Poll, w.Detect, w.Restore, p, len(sws), plural(len(sws), "switch", "switches"), names(sws, 5))
		}
	}
}

// FC116
func (c *checker) globalPause() {
	p := &c.f.Policy
	if p.GlobalPause && len(c.lossless) > 0 {
		c.report(Error, pos(p.Pos), "policy.globalPause",
			"set globalPause: false",
			"802.3x global pause is on while PFC is used on priority %s: the two are mutually exclusive (a global pause stops every class)", c.losslessPrios())
	}
}

// FC117
func (c *checker) linkMTU() {
	p := &c.f.Policy
	if p.HostMTU > 0 && p.MTU > 0 && p.HostMTU > p.MTU {
		c.report(Error, pos(p.Pos), "policy.hostMTU",
			fmt.Sprintf("set hostMTU to at most %d (9000 with a 9216 switch MTU is usual)", p.MTU),
			"host MTU %d is above the switch MTU %d: the switches drop the hosts' largest frames", p.HostMTU, p.MTU)
	}
	for i, l := range c.f.Links {
		a, b := c.ends[i][0], c.ends[i][1]
		switch {
		case a.kind == endSwitch && b.kind == endSwitch && a.port != nil && b.port != nil:
			if ma, mb := c.f.PortMTU(*a.port), c.f.PortMTU(*b.port); ma != mb {
				c.report(Error, l.Pos, linkPath(i),
					"set the same MTU on both ports",
					"MTU differs across link %s (%d) - %s (%d): frames above %d are dropped one way", l.A, ma, l.B, mb, min(ma, mb))
			}
		case a.kind == endHost && b.kind == endSwitch && b.port != nil:
			c.hostSwitchMTU(i, l, l.A, b.sw, b.port)
		case a.kind == endSwitch && b.kind == endHost && a.port != nil:
			c.hostSwitchMTU(i, l, l.B, a.sw, a.port)
		}
	}
}

func (c *checker) hostSwitchMTU(i int, l intent.Link, h intent.Endpoint, sw *intent.Switch, port *intent.Port) {
	p := &c.f.Policy
	if port.MTU == 0 {
		return // the port uses the policy MTU: reported once above
	}
	if m := c.f.PortMTU(*port); p.HostMTU > m {
		c.report(Error, l.Pos, linkPath(i),
			fmt.Sprintf("raise the MTU of %s:%s to at least %d, or lower hostMTU", sw.Name, port.Name, p.HostMTU),
			"host %s sends frames up to MTU %d but switch port %s:%s has MTU %d", h, p.HostMTU, sw.Name, port.Name, m)
	}
}

// FC118
func (c *checker) rocePathMTU() {
	p := &c.f.Policy
	m := p.RoCEPathMTU
	if m == 0 {
		return
	}
	valid := []int{256, 512, 1024, 2048, 4096}
	if !slices.Contains(valid, m) {
		c.report(Error, pos(p.Pos), "policy.rocePathMTU",
			"use 256, 512, 1024, 2048 or 4096",
			"RoCE path MTU %d is not an InfiniBand MTU (256, 512, 1024, 2048, 4096)", m)
		return
	}
	if p.HostMTU > 0 && m+roceOverhead > p.HostMTU {
		active := 0
		for _, v := range valid {
			if v+roceOverhead <= p.HostMTU {
				active = v
			}
		}
		path := "policy.rocePathMTU"
		if !p.Fields["rocePathMTU"].IsValid() && p.Fields["hostMTU"].IsValid() {
			path = "policy.hostMTU" // the path MTU is the default: what was written is the host MTU
		}
		c.report(Error, pos(p.Pos), path,
			fmt.Sprintf("use rocePathMTU %d, or raise hostMTU to at least %d", active, m+roceOverhead),
			"RoCE path MTU %d needs a host MTU of at least %d (%d + %d B of RoCEv2 headers) but hostMTU is %d: the NIC's active MTU will be %d",
			m, m+roceOverhead, m, roceOverhead, p.HostMTU, active)
	}
}

// FC119
func (c *checker) hostToS() {
	p := &c.f.Policy
	r := &p.RoCE
	at := pos(r.Pos, p.Pos)
	tos := r.ToS
	if tos < 0 || tos > 255 {
		c.report(Error, at, "policy.roce.tos", "use DSCP << 2 | 2, e.g. 106 for DSCP 26", "ToS %d is out of range 0-255", tos)
		return
	}
	dscp, ecn := tos>>2, tos&3
	// The DSCP RDMA traffic should carry: its own, if it lands in a lossless
	// class (or, without lossless classes, in the RoCE class); otherwise the
	// RoCE class's first DSCP (intent.Policy.RoCEClass).
	prio := p.DSCPToPriority()[dscp]
	cl := p.ClassByPriority(prio)
	want := dscp
	roce := p.RoCEClass()
	lossless := len(c.lossless) > 0
	if roce != nil && (cl == nil || (lossless && !cl.Lossless) || (!lossless && cl != roce)) {
		to := roce // the class RDMA traffic belongs in
		if lossless {
			to = nil
			for _, l := range c.lossless {
				if !l.CNP && len(l.DSCP) > 0 {
					to = l
					break
				}
			}
		}
		fix := fmt.Sprintf("use ToS %d (DSCP %d << 2 | ECT(0))", want<<2|2, want)
		if to != nil && len(to.DSCP) > 0 {
			want = to.DSCP[0]
			fix = fmt.Sprintf("use ToS %d (DSCP %d << 2 | ECT(0))", want<<2|2, want)
		} else if lossless && !c.lossless[0].CNP {
			fix = fmt.Sprintf("list DSCP %d in lossless class %s (FC126), keeping ToS %d", dscp, c.lossless[0].Name, dscp<<2|2)
		}
		lands := fmt.Sprintf("priority %d", prio)
		if cl != nil {
			lands = fmt.Sprintf("class %s (priority %d)", cl.Name, prio)
		}
		if lossless {
			c.report(Error, at, "policy.roce.tos", fix,
				"ToS %d carries DSCP %d, which lands in %s, not a lossless class: RDMA traffic would be dropped under congestion", tos, dscp, lands)
		} else {
			c.report(Error, at, "policy.roce.tos", fix,
				"ToS %d carries DSCP %d, which lands in %s, not the RoCE class %s: RDMA traffic would miss its queue and ECN marking", tos, dscp, lands, roce.Name)
		}
	}
	fix := fmt.Sprintf("use ToS %d (DSCP %d << 2 | ECT(0))", want<<2|2, want)
	switch ecn {
	case 3:
		c.report(Error, at, "policy.roce.tos", fix,
			"ToS %d has ECN bits 11 (CE): every packet arrives marked as congested and DCQCN throttles senders to their minimum rate", tos)
	case 0:
		c.report(Error, at, "policy.roce.tos", fix,
			"ToS %d has ECN bits 00 (not-ECT): switches cannot mark it, so ECN/DCQCN cannot work%s", tos, map[bool]string{true: " and PFC does all the work", false: " and, without PFC, congestion drops it"}[lossless])
	case 1:
		c.report(Warning, at, "policy.roce.tos", fix,
			"ToS %d has ECN bits 01 (ECT(1)): DCQCN deployments and the NVIDIA defaults use ECT(0); some switches treat ECT(1) as L4S", tos)
	}
}

// FC120
func (c *checker) dcbxOwner() {
	p := &c.f.Policy
	switch p.DCBX {
	case intent.DCBXHostStatic:
	case intent.DCBXSwitchWilling:
		// The hosts take PFC/ETS/APP from the switches' DCBX TLVs, so every
		// switch a host is cabled to must be configured to advertise them.
		by := map[intent.Platform][]string{}
		seen := map[*intent.Switch]bool{}
		for i := range c.f.Links {
			for j := range 2 {
				e, o := c.ends[i][j], c.ends[i][1-j]
				if e.kind != endSwitch || o.kind != endHost || seen[e.sw] {
					continue
				}
				seen[e.sw] = true
				if pi, ok := c.platform(e.sw); ok && !pi.DCBXAdvertise {
					by[e.sw.Platform] = append(by[e.sw.Platform], e.sw.Name)
				}
			}
		}
		plats := make([]intent.Platform, 0, len(by))
		for pl := range by {
			plats = append(plats, pl)
		}
		slices.Sort(plats)
		for _, pl := range plats {
			sws := by[pl]
			c.report(Warning, pos(p.Pos), "policy.dcbx",
				"use dcbx host-static (fabricctl sets PFC/ETS/APP on the hosts itself), or configure DCBX advertisement on these switches out of band",
				"dcbx switch-willing: hosts follow the PFC/ETS/APP their switch advertises, but fabricctl does not configure DCBX advertisement on %s (%d host-facing %s: %s), so nobody owns what the hosts follow",
				pl, len(sws), plural(len(sws), "switch", "switches"), names(sws, 5))
		}
	default:
		c.report(Error, pos(p.Pos), "policy.dcbx",
			"set dcbx to host-static (host sets PFC/ETS/APP, not willing) or switch-willing (switch advertises, host follows)",
			"dcbx mode %q names no single owner of the host DCB settings", p.DCBX)
	}
}

// FC121
func (c *checker) linkEndpoints() {
	for i, l := range c.f.Links {
		if l.A == l.B {
			c.report(Error, l.Pos, linkPath(i), "connect two different endpoints",
				"link connects %s to itself", l.A)
			continue
		}
		for j, e := range []intent.Endpoint{l.A, l.B} {
			path := linkPath(i) + "." + "ab"[j:j+1]
			switch r := c.ends[i][j]; {
			case r.kind == endSwitch && r.port == nil:
				c.report(Error, l.Pos, path,
					fmt.Sprintf("add port %s to switch %s, or fix the port name", e.Port, r.sw.Name),
					"switch %s has no port %q", r.sw.Name, e.Port)
			case r.kind == endHost && r.nic == nil:
				c.report(Error, l.Pos, path,
					fmt.Sprintf("add NIC %s to host %s, or fix the interface name", e.Port, r.host.Name),
					"host %s has no NIC %q", r.host.Name, e.Port)
			case r.kind == endNone:
				c.report(Error, l.Pos, path,
					"add the node to the inventory, or fix the name",
					"link endpoint %s: no switch or host named %q", e, e.Node)
			}
		}
	}
}

// FC122
func (c *checker) linkPortReuse() {
	// Resolved ends are keyed by pointer (cheap to hash at 100,000 links);
	// unresolved ones (FC121) by name.
	ports := make(map[*intent.Port]int, len(c.f.Links))
	nics := make(map[*intent.NIC]int, len(c.f.Links))
	other := map[intent.Endpoint]int{}
	for i, l := range c.f.Links {
		if l.A == l.B {
			continue // FC121
		}
		for j, e := range []intent.Endpoint{l.A, l.B} {
			r := c.ends[i][j]
			var (
				prev int
				seen bool
			)
			switch {
			case r.port != nil:
				if prev, seen = ports[r.port]; !seen {
					ports[r.port] = i
				}
			case r.nic != nil:
				if prev, seen = nics[r.nic]; !seen {
					nics[r.nic] = i
				}
			default:
				if prev, seen = other[e]; !seen {
					other[e] = i
				}
			}
			if seen {
				c.report(Error, l.Pos, linkPath(i)+"."+"ab"[j:j+1],
					"a port takes one cable: remove one of the links or fix the port name",
					"%s is already used by %s (%s)", e, linkPath(prev), c.f.Links[prev].Pos)
			}
		}
	}
}

// speedCable is the speed and cable length a resolved endpoint declares (0 = not given).
func (e end) speedCable() (speed int64, cable float64, ok bool) {
	switch {
	case e.port != nil:
		return e.port.Speed, e.port.CableMeters, true
	case e.nic != nil:
		return e.nic.Speed, e.nic.CableMeters, true
	}
	return 0, 0, false
}

// FC124
func (c *checker) linkEnds() {
	for i, l := range c.f.Links {
		sa, ca, oka := c.ends[i][0].speedCable()
		sb, cb, okb := c.ends[i][1].speedCable()
		if !oka || !okb || l.A == l.B {
			continue // FC121
		}
		if sa > 0 && sb > 0 && sa != sb {
			c.report(Warning, l.Pos, linkPath(i),
				"give both ends the speed the link really runs at",
				"link %s (%s) - %s (%s): the ends disagree on speed, so the link runs at %s at best and the PFC headroom computed for the faster end is wrong",
				l.A, intent.FormatRate(sa), l.B, intent.FormatRate(sb), intent.FormatRate(min(sa, sb)))
		}
		if ca > 0 && cb > 0 && ca != cb {
			c.report(Warning, l.Pos, linkPath(i),
				"give both ends the length of the cable between them",
				"link %s (%s m) - %s (%s m): one cable, two lengths; PFC headroom grows with the cable, so the shorter figure under-reserves",
				l.A, trimFloat(ca), l.B, trimFloat(cb))
		}
	}
}

// FC125
func (c *checker) portMTUPlatform() {
	for i := range c.f.Switches {
		sw := &c.f.Switches[i]
		pi, ok := c.platform(sw)
		if !ok || pi.MTU.IsZero() {
			continue // FC106 reports an unknown platform
		}
		// One finding per switch and out-of-range MTU, ports in port order.
		type span struct {
			first *intent.Port
			last  string
			n     int
		}
		bad := map[int]*span{}
		var order []int
		for j := range sw.Ports {
			p := &sw.Ports[j]
			m := c.f.PortMTU(*p)
			if pi.MTU.Contains(m) {
				continue
			}
			s := bad[m]
			if s == nil {
				s = &span{first: p}
				bad[m] = s
				order = append(order, m)
			}
			s.n++
			s.last = p.Name
		}
		for _, m := range order {
			s := bad[m]
			ports := "port " + s.first.Name
			if s.n > 1 {
				ports = fmt.Sprintf("%d ports %s..%s", s.n, s.first.Name, s.last)
			}
			to, edge := pi.MTU.Max, "above"
			if m < pi.MTU.Min {
				to, edge = pi.MTU.Min, "below"
			}
			c.report(Error, pos(s.first.Pos, sw.Pos), portPath(sw, s.first),
				fmt.Sprintf("set mtu: %d on the %s ports and on their link peers (link MTUs must match, FC117)", to, sw.Platform),
				"switch %s (%s), %s: IP MTU %d is %s the %d-%d that %s accepts, so the switch refuses or lowers it",
				sw.Name, sw.Platform, ports, m, edge, pi.MTU.Min, pi.MTU.Max, sw.Platform)
		}
	}
}

// FC126
func (c *checker) losslessReached() {
	p := &c.f.Policy
	reached := map[int]bool{}
	for _, prio := range p.DSCPToPriority() {
		reached[prio] = true
	}
	for _, cl := range c.lossless {
		if reached[cl.Priority] || cl.CNP {
			continue // a lossless CNP class is FC107's
		}
		path := classPath(cl) + ".dscp"
		why := "it lists no DSCP"
		if len(cl.DSCP) > 0 {
			why = fmt.Sprintf("its DSCPs %s are claimed by another class", ints(cl.DSCP))
		}
		c.report(Error, pos(cl.Pos, p.Pos), path,
			fmt.Sprintf("list the DSCP RDMA traffic is sent with in class %s (dscp: [26] in the preset, with roce.tos 106)", cl.Name),
			"lossless class %s (priority %d) is reached by no DSCP (%s): no packet is ever classified into it, so PFC protects nothing and RDMA traffic lands in a lossy queue", cl.Name, cl.Priority, why)
	}
}

// minLineRate is the slowest speed a RoCE switch port or NIC is taken to
// run at; anything below is read as a unit typo (400M for 400G).
const minLineRate = 1e9

// FC127
func (c *checker) lineRate() {
	for i := range c.f.Switches {
		sw := &c.f.Switches[i]
		var slow []*intent.Port
		for j := range sw.Ports {
			if p := &sw.Ports[j]; p.Speed > 0 && p.Speed < minLineRate {
				slow = append(slow, p)
			}
		}
		if len(slow) == 0 {
			continue
		}
		p := slow[0]
		ports := "port " + p.Name
		if len(slow) > 1 {
			ports = fmt.Sprintf("%d ports %s..%s", len(slow), p.Name, slow[len(slow)-1].Name)
		}
		c.report(Error, pos(p.Pos, sw.Pos), portPath(sw, p)+".speed",
			fmt.Sprintf("write the speed with G: speed: %s", didYouMean(p.Speed)),
			"switch %s, %s: speed %s is %s, below 1G: too slow for RoCE and surely a unit typo; did you mean %s?", sw.Name, ports, intent.FormatRate(p.Speed), spelledRate(p.Speed), didYouMean(p.Speed))
	}
	for i := range c.f.Hosts {
		h := &c.f.Hosts[i]
		for j := range h.NICs {
			n := &h.NICs[j]
			if n.Speed <= 0 || n.Speed >= minLineRate {
				continue
			}
			c.report(Error, pos(n.Pos, h.Pos), fmt.Sprintf("inventory.hosts[%s].nics[%s].speed", h.Name, n.Interface),
				fmt.Sprintf("write the speed with G: speed: %s", didYouMean(n.Speed)),
				"host %s, NIC %s: speed %s is %s, below 1G: too slow for RoCE and surely a unit typo; did you mean %s?", h.Name, n.Interface, intent.FormatRate(n.Speed), spelledRate(n.Speed), didYouMean(n.Speed))
		}
	}
}

// spelledRate writes a rate below 1G in full: 400 Mb/s.
func spelledRate(r int64) string {
	switch {
	case r >= 1e6:
		return trimFloat(float64(r)/1e6) + " Mb/s"
	case r >= 1e3:
		return trimFloat(float64(r)/1e3) + " kb/s"
	}
	return fmt.Sprintf("%d b/s", r)
}

// didYouMean reads a rate below 1G as the same number of Gb/s: 400M -> 400G.
func didYouMean(r int64) string {
	switch {
	case r >= 1e6:
		return intent.FormatRate(r * 1000)
	case r >= 1e3:
		return intent.FormatRate(r * 1e6)
	}
	return intent.FormatRate(r * 1e9)
}

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
