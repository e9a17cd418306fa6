// The host rules: RDMA-CM ToS and the DCBX owner (FC119, FC120).

package check

import (
	"fmt"
	"slices"

	"github.com/fabricctl/fabricctl/intent"
)

// FC119
func (c *checker) hostToS() {
	p := &c.f.Policy
	r := &p.RoCE
	at := pos(r.Pos, p.Pos)
	tos := r.ToS
	if tos < 0 || tos > 255 {
		x := c.report(Error, at, "policy.roce.tos", "use DSCP << 2 | 2, e.g. 106 for DSCP 26", "ToS %d is out of range 0-255", tos)
		m := p.DSCPToPriority()
		reached := -1 // a DSCP of the RoCE class that lands in it
		roce := p.RoCEClass()
		if roce != nil {
			for _, d := range roce.DSCP {
				if d >= 0 && d < 64 && m[d] == roce.Priority {
					reached = d
					break
				}
			}
		}
		switch {
		case reached >= 0:
			d := reached
			x.Fix = fmt.Sprintf("use DSCP << 2 | 2: ToS %d for class %s's DSCP %d", d<<2|2, roce.Name, d)
			x.with(set("policy.roce.tos", d<<2|2))
		case roce != nil && !roce.CNP && len(roce.DSCP) == 0:
			if d := c.freeDSCP(); d >= 0 {
				x.Fix = fmt.Sprintf("list DSCP %d in class %s (it lists none, FC126) and use ToS %d (DSCP %d << 2 | ECT(0))", d, roce.Name, d<<2|2, d)
				x.with(set("policy.roce.tos", d<<2|2), set(classPath(roce)+".dscp", intList([]int{d})))
			}
		}
		return
	}
	dscp, ecn := tos>>2, tos&3
	// The DSCP RDMA traffic should carry: its own, if it lands in a lossless
	// class (or, without lossless classes, in the RoCE class); otherwise a
	// DSCP of the class it belongs in that the switches really classify
	// there (a DSCP listed twice goes to the later class, FC102).
	m := p.DSCPToPriority()
	prio := m[dscp]
	cl := p.ClassByPriority(prio)
	want := dscp
	var wantEdits []Edit // besides the ToS: what makes want land where it should
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
		var fix string
		var edits []Edit
		switch {
		case to != nil && len(to.DSCP) > 0:
			reached := -1 // a DSCP of to that lands in to
			for _, d := range to.DSCP {
				if d >= 0 && d < 64 && m[d] == to.Priority {
					reached = d
					break
				}
			}
			if reached >= 0 {
				want = reached
				fix = fmt.Sprintf("use ToS %d (DSCP %d << 2 | ECT(0))", want<<2|2, want)
				edits = []Edit{set("policy.roce.tos", want<<2|2)}
				break
			}
			other := p.ClassByPriority(m[to.DSCP[0]])
			if other == nil || other == to || to.DSCP[0] < 0 || to.DSCP[0] > 63 || !c.canDrop(other, to, to.DSCP[0]) {
				fix = fmt.Sprintf("list a DSCP in class %s that no other class takes (FC102) and send RDMA traffic with it", to.Name)
				break
			}
			// Every DSCP of the class is taken by a later class: give the
			// first back (FC102), the ToS stays or takes it.
			d := to.DSCP[0]
			want = d
			wantEdits = []Edit{set(classPath(other)+".dscp", intList(without(other.DSCP, d)))}
			fix = fmt.Sprintf("remove DSCP %d from class %s, which takes it from class %s (FC102)", d, other.Name, to.Name)
			if dscp != d {
				fix += fmt.Sprintf(", and use ToS %d (DSCP %d << 2 | ECT(0))", d<<2|2, d)
			}
			edits = append([]Edit{set("policy.roce.tos", d<<2|2)}, wantEdits...)
		case lossless && !c.lossless[0].CNP:
			// No lossless class lists a DSCP: list the ToS's, unless the
			// CNP or another lossless class needs it; then 26 (the
			// preset's) or the first DSCP no class lists.
			l := c.lossless[0]
			d := dscp
			if o := c.dscpOwner(d); o != nil && (o.CNP || o.Lossless || d == r.CNPDSCP) {
				d = c.freeDSCP()
			}
			if d < 0 {
				fix = fmt.Sprintf("list a DSCP no other class uses in lossless class %s (FC126) and send RDMA traffic with it", l.Name)
				break
			}
			want = d
			wantEdits = []Edit{set(classPath(l)+".dscp", intList(append(slices.Clone(l.DSCP), d)))}
			if d == dscp {
				fix = fmt.Sprintf("list DSCP %d in lossless class %s (FC126), keeping ToS %d", d, l.Name, d<<2|2)
			} else {
				fix = fmt.Sprintf("list DSCP %d in lossless class %s (FC126) and use ToS %d (DSCP %d << 2 | ECT(0))", d, l.Name, d<<2|2, d)
			}
			if o := c.dscpOwner(d); o != nil {
				fix += fmt.Sprintf(" (and remove it from class %s)", o.Name)
				wantEdits = append(wantEdits, set(classPath(o)+".dscp", intList(without(o.DSCP, d))))
			}
			edits = append([]Edit{set("policy.roce.tos", d<<2|2)}, wantEdits...)
		default:
			fix = fmt.Sprintf("use ToS %d (DSCP %d << 2 | ECT(0))", want<<2|2, want)
		}
		lands := fmt.Sprintf("priority %d", prio)
		if cl != nil {
			lands = fmt.Sprintf("class %s (priority %d)", cl.Name, prio)
		}
		if lossless {
			c.report(Error, at, "policy.roce.tos", fix,
				"ToS %d carries DSCP %d, which lands in %s, not a lossless class: RDMA traffic would be dropped under congestion", tos, dscp, lands).with(edits...)
		} else {
			c.report(Error, at, "policy.roce.tos", fix,
				"ToS %d carries DSCP %d, which lands in %s, not the RoCE class %s: RDMA traffic would miss its queue and ECN marking", tos, dscp, lands, roce.Name).with(edits...)
		}
	}
	// The ECN bits' fix: ECT(0) on the DSCP above (with what makes it land,
	// so that this fix alone leaves no FC119 behind).
	fix := fmt.Sprintf("use ToS %d (DSCP %d << 2 | ECT(0))", want<<2|2, want)
	edits := append([]Edit{set("policy.roce.tos", want<<2|2)}, wantEdits...)
	switch ecn {
	case 3:
		c.report(Error, at, "policy.roce.tos", fix,
			"ToS %d has ECN bits 11 (CE): every packet arrives marked as congested and DCQCN throttles senders to their minimum rate", tos).with(edits...)
	case 0:
		c.report(Error, at, "policy.roce.tos", fix,
			"ToS %d has ECN bits 00 (not-ECT): switches cannot mark it, so ECN/DCQCN cannot work%s", tos, map[bool]string{true: " and PFC does all the work", false: " and, without PFC, congestion drops it"}[lossless]).with(edits...)
	case 1:
		c.report(Warning, at, "policy.roce.tos", fix,
			"ToS %d has ECN bits 01 (ECT(1)): DCQCN deployments and the NVIDIA defaults use ECT(0); some switches treat ECT(1) as L4S", tos).with(edits...)
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
				pl, len(sws), plural(len(sws), "switch", "switches"), names(sws, 5)).with(set("policy.dcbx", intent.DCBXHostStatic))
		}
	default:
		c.report(Error, pos(p.Pos), "policy.dcbx",
			"set dcbx to host-static (host sets PFC/ETS/APP, not willing) or switch-willing (switch advertises, host follows)",
			"dcbx mode %q names no single owner of the host DCB settings", p.DCBX).with(set("policy.dcbx", intent.DCBXHostStatic))
	}
}

// freeDSCP returns a DSCP no class lists and the hosts' CNPs do not use:
// 26 (the preset's RDMA DSCP) when free, else the lowest; -1 if none.
func (c *checker) freeDSCP() int {
	cnp := c.f.Policy.RoCE.CNPDSCP
	if c.dscpOwner(26) == nil && cnp != 26 {
		return 26
	}
	for d := range 64 {
		if c.dscpOwner(d) == nil && d != cnp {
			return d
		}
	}
	return -1
}
