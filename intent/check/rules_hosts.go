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
