// The rules on classes: DSCP and priority ranges and uniqueness, the lossless
// budget, PFC expressibility and the CNP class (FC101-FC108).

package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fabricctl/fabricctl/intent"
)

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
		if cnp := c.f.Policy.CNPClass(); cnp != nil && len(cnp.DSCP) > 0 && cnp.DSCP[0] >= 0 && cnp.DSCP[0] <= 63 {
			c.report(Error, pos(r.Pos, c.f.Policy.Pos), "policy.roce.cnpDSCP",
				fmt.Sprintf("set the host CNP DSCP to %d (CNP class %s's)", cnp.DSCP[0], cnp.Name),
				"host CNP DSCP %d is out of range 0-63", d).with(set("policy.roce.cnpDSCP", cnp.DSCP[0]))
			return
		}
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
				keep, drop := c.dscpKeeper(d, o, cl)
				if !c.canDrop(drop, keep, d) {
					keep, drop = drop, keep
				}
				x := c.report(Error, pos(at.Pos, c.f.Policy.Pos), classPath(at)+".dscp",
					"list each DSCP value in one class only",
					"DSCP %d is in both class %s and class %s: a packet can be classified into one queue only", d, o.Name, cl.Name)
				if c.canDrop(drop, keep, d) {
					x.Fix = fmt.Sprintf("remove DSCP %d from class %s (it stays in class %s)", d, drop.Name, keep.Name)
					x.with(set(classPath(drop)+".dscp", intList(without(drop.DSCP, d))))
				}
				continue
			}
			owner[d] = cl
		}
	}
}

// dscpKeeper says which of two classes listing DSCP d keeps it: the one d
// matters most to (the RoCE class for the hosts' RDMA DSCP, the CNP class
// for their CNP DSCP, a lossless class, a class d is the only DSCP of; the
// default class least, as it takes every unlisted DSCP anyway), else the
// first.
func (c *checker) dscpKeeper(d int, a, b *intent.Class) (keep, drop *intent.Class) {
	r := &c.f.Policy.RoCE
	score := func(cl *intent.Class) int {
		switch {
		case cl.Lossless && !cl.CNP && d == r.ToS>>2:
			return 5
		case cl.CNP && d == r.CNPDSCP:
			return 4
		case cl.Lossless && !cl.CNP:
			return 3
		case cl.Default:
			return 0
		case len(cl.DSCP) == 1:
			return 2
		}
		return 1
	}
	if score(b) > score(a) {
		return b, a
	}
	return a, b
}

// canDrop reports whether class drop can give DSCP d up to class keep
// without another rule failing: every lossless class stays reached (FC126),
// the hosts' CNP DSCP stays the CNP class's (FC108) and their RDMA DSCP
// stays lossless (FC119).
func (c *checker) canDrop(drop, keep *intent.Class, d int) bool {
	r := &c.f.Policy.RoCE
	switch {
	case drop.CNP && d == r.CNPDSCP:
		return false
	case d == r.ToS>>2 && drop.Lossless && !keep.Lossless:
		return false
	}
	return c.reachedWithout(drop, d)
}

// without returns v without x.
func without(v []int, x int) []int {
	out := []int{}
	for _, y := range v {
		if y != x {
			out = append(out, y)
		}
	}
	return out
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
		if cnp := c.f.Policy.CNPClass(); cnp != nil && cnp.Priority >= 0 && cnp.Priority <= 7 && !c.pfcOn(cnp.Priority) {
			c.report(Error, pos(r.Pos, c.f.Policy.Pos), "policy.roce.cnpPriority",
				fmt.Sprintf("set the host CNP priority to %d (CNP class %s's)", cnp.Priority, cnp.Name),
				"host CNP priority %d is out of range 0-7", p).with(set("policy.roce.cnpPriority", cnp.Priority))
			return
		}
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
				fix, edits := c.cnpMove(cnp)
				c.report(Error, at, path, fix,
					"priority %d is both lossless class %s and CNP class %s: CNPs would share the PFC-enabled queue, be paused with the traffic they should throttle, and DCQCN would react late", cl.Priority, other.Name, cnp.Name).with(edits...)
				continue
			}
			move := cl // the class whose priority the finding points at moves
			if path == classPath(o)+".priority" {
				move = o
			}
			if cnp, _ := cnpPair(o, cl); cnp != nil {
				// The CNP class moves with the hosts' CNP priority (FC108).
				fix, edits := c.cnpMove(cnp)
				c.report(Error, at, path, fix,
					"priority %d is used by class %s and class %s: a priority is one queue with one PFC and scheduling setting", cl.Priority, o.Name, cl.Name).with(edits...)
				continue
			}
			free, ok := c.freePriority(move)
			ok = ok && c.reachedAfter(move, free)
			fix := "give each class its own priority"
			if ok {
				fix = fmt.Sprintf("give class %s a priority of its own: %d is free", move.Name, free)
			}
			if o.Lossless == cl.Lossless && o.Strict == cl.Strict && !o.CNP && !cl.CNP && !o.Default && !cl.Default {
				fix += fmt.Sprintf(", or merge class %s's DSCP list into class %s", cl.Name, o.Name)
			}
			x := c.report(Error, at, path, fix,
				"priority %d is used by class %s and class %s: a priority is one queue with one PFC and scheduling setting", cl.Priority, o.Name, cl.Name)
			if ok {
				x.with(set(classPath(move)+".priority", free))
			}
			continue
		}
		owner[cl.Priority] = cl
	}
}

// pfcOn reports whether a lossless class other than the CNP class has
// priority prio.
func (c *checker) pfcOn(prio int) bool {
	for _, l := range c.lossless {
		if l.Priority == prio && !l.CNP {
			return true
		}
	}
	return false
}

// usedPriorities returns the priorities the classes other than but use.
func (c *checker) usedPriorities(but *intent.Class) [8]bool {
	var used [8]bool
	for i := range c.f.Policy.Classes {
		if cl := &c.f.Policy.Classes[i]; cl != but && cl.Priority >= 0 && cl.Priority < 8 {
			used[cl.Priority] = true
		}
	}
	return used
}

// reachedAfter reports whether every lossless class but the CNP class is
// still reached by some DSCP (FC126) once class cl has priority prio.
func (c *checker) reachedAfter(cl *intent.Class, prio int) bool {
	return c.reachedIf(cl, func(x *intent.Class) { x.Priority = prio })
}

// reachedWithout is reachedAfter for class cl without DSCP d.
func (c *checker) reachedWithout(cl *intent.Class, d int) bool {
	return c.reachedIf(cl, func(x *intent.Class) { x.DSCP = without(x.DSCP, d) })
}

// reachedIf reports whether every lossless class but the CNP class is still
// reached by some DSCP (FC126) once change is made to class cl (on a copy).
func (c *checker) reachedIf(cl *intent.Class, change func(*intent.Class)) bool {
	p := c.f.Policy
	p.Classes = slices.Clone(p.Classes)
	for i := range p.Classes {
		if p.Classes[i].Name == cl.Name {
			change(&p.Classes[i])
		}
	}
	slices.SortStableFunc(p.Classes, func(a, b intent.Class) int { return a.Priority - b.Priority })
	reached := map[int]bool{}
	for _, pr := range p.DSCPToPriority() {
		reached[pr] = true
	}
	for _, x := range p.Classes {
		if x.Lossless && !x.CNP && !reached[x.Priority] {
			return false
		}
	}
	return true
}

// freePriority returns a priority no class but cl uses, other than the
// host CNP priority (which belongs to the CNP class): the lowest one.
func (c *checker) freePriority(cl *intent.Class) (int, bool) {
	used := c.usedPriorities(cl)
	for p := range 8 {
		if !used[p] && p != c.f.Policy.RoCE.CNPPriority && p != cl.Priority {
			return p, true
		}
	}
	return 0, false
}

// cnpMove is the fix for a CNP class on a PFC-enabled priority (FC104,
// FC108): the CNP class moves to the host CNP priority when no other class
// uses it, else to a free one (6, the preset's, first) and the host CNP
// priority follows, so the two agree and neither is PFC-enabled.
func (c *checker) cnpMove(cnp *intent.Class) (string, []Edit) {
	used := c.usedPriorities(cnp)
	r := &c.f.Policy.RoCE
	cands := []int{r.CNPPriority, 6, 7, 5, 4, 2, 1}
	for _, p := range cands {
		if p < 0 || p > 7 || used[p] {
			continue
		}
		if !c.reachedAfter(cnp, p) {
			// The CNP class's DSCPs are what reaches the lossless class's
			// priority: which DSCP RDMA traffic uses is a person's call.
			break
		}
		edits := []Edit{set(classPath(cnp)+".priority", p)}
		fix := fmt.Sprintf("give CNP class %s priority %d, which no other class uses and is not PFC-enabled", cnp.Name, p)
		if p == r.CNPPriority {
			fix += " (the host CNP priority)"
		} else {
			fix += fmt.Sprintf(", and set the host CNP priority to %d", p)
			edits = append(edits, set("policy.roce.cnpPriority", p))
		}
		return fix, edits
	}
	return fmt.Sprintf("give CNP class %s a priority of its own that is not PFC-enabled (the preset uses 6)", cnp.Name), nil
}

// dscpOwner returns the class listing DSCP d, or nil.
func (c *checker) dscpOwner(d int) *intent.Class {
	for i := range c.f.Policy.Classes {
		if slices.Contains(c.f.Policy.Classes[i].DSCP, d) {
			return &c.f.Policy.Classes[i]
		}
	}
	return nil
}

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
		// DCQCN runs on the lossless classes' ECN, and in lossy mode on
		// every ECN class (the RoCE class there has no PFC).
		dcqcn := c.lossless
		if p.Mode == intent.ModeLossy {
			dcqcn = nil
			for i := range p.Classes {
				dcqcn = append(dcqcn, &p.Classes[i])
			}
		}
		for _, cl := range dcqcn {
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
			fmt.Sprintf("mark exactly one class as the CNP class: set cnp: false on class %s", cl.Name),
			"classes %s and %s are both marked as the CNP class; hosts send CNPs with one DSCP", cnps[0].Name, cl.Name).
			with(set(classPath(cl)+".cnp", false))
	}
	cl := cnps[0]
	if cl.Lossless {
		c.report(Error, pos(cl.Pos, p.Pos), classPath(cl)+".lossless",
			"set lossless: false on the CNP class",
			"CNP class %s is lossless: PFC on it can pause the congestion notifications themselves, stalling DCQCN exactly when it is needed", cl.Name).
			with(set(classPath(cl)+".lossless", false))
	}
	if !cl.Strict {
		fix, edits := c.strictCNP(cl)
		c.report(Error, pos(cl.Pos, p.Pos), classPath(cl)+".strict", fix,
			"CNP class %s is scheduled by ETS weight %d%%, not strict priority: CNPs wait behind bulk traffic and reach the sender late", cl.Name, cl.Weight).
			with(edits...)
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
		var (
			fix   string
			edits []Edit
		)
		switch {
		case len(cl.DSCP) > 0:
			fix = fmt.Sprintf("set the host CNP DSCP to %d, or add %d to class %s", cl.DSCP[0], r.CNPDSCP, cl.Name)
			edits = []Edit{set("policy.roce.cnpDSCP", cl.DSCP[0])}
		case c.dscpOwner(r.CNPDSCP) == nil:
			fix = fmt.Sprintf("add %d to class %s (it lists no DSCP)", r.CNPDSCP, cl.Name)
			edits = []Edit{set(classPath(cl)+".dscp", intList([]int{r.CNPDSCP}))}
		default:
			fix = fmt.Sprintf("list a DSCP no other class uses in class %s and send CNPs with it", cl.Name)
		}
		c.report(Error, pos(r.Pos, p.Pos), "policy.roce.cnpDSCP", fix,
			"hosts send CNPs with DSCP %d but the switches' CNP class %s matches DSCP %s: the CNPs land in %s",
			r.CNPDSCP, cl.Name, ints(cl.DSCP), lands).with(edits...)
	}
	if r.CNPPriority != cl.Priority {
		lossless := ""
		if lc := p.ClassByPriority(r.CNPPriority); lc != nil && lc.Lossless && !lc.CNP {
			lossless = fmt.Sprintf(", and priority %d is PFC-enabled (lossless class %s): the NICs queue CNPs with the traffic PFC pauses", r.CNPPriority, lc.Name)
		}
		fix, edits := fmt.Sprintf("set the host CNP priority to %d", cl.Priority), []Edit{set("policy.roce.cnpPriority", cl.Priority)}
		if c.pfcOn(cl.Priority) {
			// The CNP class itself sits on a PFC-enabled priority (FC104):
			// following it would put the hosts' CNPs there too.
			fix, edits = c.cnpMove(cl)
		}
		c.report(Error, pos(r.Pos, p.Pos), "policy.roce.cnpPriority", fix,
			"hosts send CNPs with priority %d but the CNP class %s is priority %d%s", r.CNPPriority, cl.Name, cl.Priority, lossless).with(edits...)
	}
}
