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
