// The rules on the switch model a profile stands for (its SKU): port
// speeds its ports run (FC131) and the lossless buffer profile its ports
// share (FC132). Both hold only while the switch's ASIC is the profile's
// model's (an intent naming another asic describes another model, whose
// front panel nothing here knows).

package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/gcu"
	"github.com/fabricctl/fabricctl/internal/profile"
)

// skuProfile returns sw's release profile when its SKU facts describe sw.
func (c *checker) skuProfile(sw *intent.Switch) (*profile.Profile, bool) {
	if !c.byProfile {
		return nil, false // the caller's own platform facts: no profile
	}
	prof, err := profile.LookupFor(string(sw.Platform), sw.Profile)
	if sw.Profile == "" || err != nil {
		if prof, err = profile.Default(string(sw.Platform)); err != nil {
			return nil, false
		}
	}
	if sw.ASIC != "" && sw.ASIC != prof.ASIC {
		return nil, false
	}
	return prof, true
}

// skuLossless is prof.SONiCLosslessProfile, read once per profile and Run.
func (c *checker) skuLossless(prof *profile.Profile) (profile.SONiCLossless, bool) {
	if c.skuLosslessByProfile == nil {
		c.skuLosslessByProfile = map[string]*profile.SONiCLossless{}
	}
	l, seen := c.skuLosslessByProfile[prof.Name]
	if !seen {
		if v, ok := prof.SONiCLosslessProfile(); ok {
			l = &v
		}
		c.skuLosslessByProfile[prof.Name] = l
	}
	if l == nil {
		return profile.SONiCLossless{}, false
	}
	return *l, true
}

// skuSharing is what FC132 asks of a profile whatever the switch: whether
// its config updater creates the intent's own buffer profiles, and the
// SKU's ports (a set), worked out once per profile and Run.
type skuSharing struct {
	creates bool
	ports   map[string]bool
}

func (c *checker) skuShared(prof *profile.Profile, l profile.SONiCLossless) *skuSharing {
	if s, ok := c.skuSharingByProfile[prof.Name]; ok {
		return s
	}
	add := gcu.Op{Op: "add", Path: []string{"BUFFER_PROFILE", "FABRICCTL_PG"}, Value: map[string]any{"pool": "ingress_lossless_pool", "xoff": "0"}}
	s := &skuSharing{creates: prof.Write.GCU.Check([]gcu.Op{add}, prof.Write.GCU.ASIC(l.SKU), "") == nil}
	if !s.creates {
		s.ports = make(map[string]bool, len(l.Ports))
		for _, p := range l.Ports {
			s.ports[p] = true
		}
	}
	if c.skuSharingByProfile == nil {
		c.skuSharingByProfile = map[string]*skuSharing{}
	}
	c.skuSharingByProfile[prof.Name] = s
	return s
}

// FC131
func (c *checker) portSpeedSKU() {
	var fast []*intent.Port // one switch's at a time
	for i := range c.f.Switches {
		sw := &c.f.Switches[i]
		prof, ok := c.skuProfile(sw)
		if !ok || prof.SKU.MaxSpeedGbps <= 0 {
			continue
		}
		top := int64(prof.SKU.MaxSpeedGbps) * 1e9
		fast = fast[:0]
		var speeds []int64
		for j := range sw.Ports {
			if p := &sw.Ports[j]; p.Speed > top {
				fast = append(fast, p)
				if !slices.Contains(speeds, p.Speed) {
					speeds = append(speeds, p.Speed)
				}
			}
		}
		if len(fast) == 0 {
			continue
		}
		slices.Sort(speeds)
		sp := make([]string, len(speeds))
		for k, s := range speeds {
			sp[k] = intent.FormatRate(s)
		}
		p := fast[0]
		ports := "port " + p.Name
		if len(fast) > 1 {
			ports = fmt.Sprintf("%d ports %s..%s", len(fast), p.Name, fast[len(fast)-1].Name)
		}
		// The fix: the SKU's speed on the ports and on what they are
		// cabled to, so both ends agree (FC124).
		var edits []Edit
		if !c.opts.NoEdits {
			edits = c.speedSKUEdits(sw, fast, top)
		}
		then := ""
		if l, ok := c.skuLossless(prof); ok && prof.Write.GCU != nil && l.SpeedMbps*1e6 == top {
			then = fmt.Sprintf("; at %s they share the SKU's lossless buffer profile, FC132", intent.FormatRate(top))
		}
		c.report(Warning, pos(p.Pos, sw.Pos), portPath(sw, p)+".speed",
			fmt.Sprintf("set speed: %s on them and on their link peers (both ends agree, FC124%s), or name the switch's real model (switches[].profile, or asic for another SKU)", intent.FormatRate(top), then),
			"switch %s, %s: speed %s is above the %s the ports of %s (%s's model: %d x %s) run at, so the headroom and buffer facts of that model do not describe this switch",
			sw.Name, ports, joinWords(sp), intent.FormatRate(top), prof.SKU.Name, prof.Name, prof.SKU.Ports, intent.FormatRate(top)).with(edits...)
	}
}

// speedSKUEdits is FC131's fix: the SKU's speed top on sw's fast ports
// and on what they are cabled to, so both ends agree (FC124).
func (c *checker) speedSKUEdits(sw *intent.Switch, fast []*intent.Port, top int64) []Edit {
	topText := intent.FormatRate(top)
	edits := make([]Edit, 0, len(fast))
	peers := c.peersOf(sw)
	for _, q := range fast {
		edits = append(edits, Edit{Path: "inventory.switches[" + sw.Name + "].ports[" + q.Name + "].speed", Value: topText}) // portPath, in one concatenation
		switch o := peers[q]; {
		case o.kind == endSwitch && o.port != nil && o.port.Speed != top:
			edits = append(edits, Edit{Path: "inventory.switches[" + o.sw.Name + "].ports[" + o.port.Name + "].speed", Value: topText})
		case o.kind == endHost && o.nic != nil && o.nic.Speed != 0 && o.nic.Speed != top:
			edits = append(edits, Edit{Path: "inventory.hosts[" + o.host.Name + "].nics[" + o.nic.Interface + "].speed", Value: topText})
		}
	}
	return edits
}

// FC132: on a SONiC release whose config updater refuses to create buffer
// profiles, plan keeps the lossless buffer profile the SKU's ports share
// (pg_lossless_<speed>_<cable>_profile) and raises its xoff to the headroom
// the intent's ports need (switchdrv/sonic gcuBuffers); every port of the
// SKU the inventory does not list gets that xoff too. The headroom is the
// one plan writes (portfacts Headroom.Programmed); the refusal is the config
// updater's own validators' (profile write.gcu). Only ports the intent runs
// at the SKU's own speed count: buffermgrd gives a port at another speed
// the profile of that speed, which the SKU's factory state does not hold,
// so whom it is shared with is not known here (a sonic-vs lab at 40G).
func (c *checker) sharedBufferProfile() {
	if len(c.lossless) == 0 {
		return
	}
	var listed map[string]bool
	for i := range c.f.Switches {
		sw := &c.f.Switches[i]
		prof, ok := c.skuProfile(sw)
		if !ok || prof.Write.GCU == nil {
			continue
		}
		l, ok := c.skuLossless(prof)
		if !ok {
			continue
		}
		sku := c.skuShared(prof, l)
		if sku.creates {
			continue // the release creates the intent's own profiles
		}
		var need int64
		var first *intent.Port
		facts := c.switchFacts(sw)
		var ( // the port before's cable and MTU (its speed is the SKU's), whose headroom is known
			cable float64
			mtu   int
			known bool
		)
		for j := range sw.Ports {
			p := &sw.Ports[j]
			if p.Speed != l.SpeedMbps*1e6 || !sku.ports[p.Name] {
				continue
			}
			if first == nil {
				first = p
			}
			if known && p.CableMeters == cable && c.f.PortMTU(*p) == mtu {
				continue // the same headroom as the port before
			}
			cable, mtu, known = p.CableMeters, c.f.PortMTU(*p), true
			need = max(need, facts.PortHeadroom(c.f, *p).Programmed)
		}
		if first == nil || need <= l.Xoff {
			continue
		}
		// The SKU's ports the inventory lists, at any speed: one set,
		// emptied for each switch.
		if listed == nil {
			listed = make(map[string]bool, len(l.Ports))
		}
		clear(listed)
		for j := range sw.Ports {
			if p := &sw.Ports[j]; sku.ports[p.Name] {
				listed[p.Name] = true
			}
		}
		var others []string
		for _, p := range l.Ports {
			if !listed[p] {
				others = append(others, p)
			}
		}
		if len(others) == 0 {
			continue
		}
		span := others[0]
		if len(others) > 1 {
			span = others[0] + ".." + others[len(others)-1]
		}
		c.report(Warning, pos(first.Pos, sw.Pos), switchPath(sw)+".ports",
			"list the switch's other ports in the inventory with their speed and cable, so that the intent covers every port of the profile, or accept the larger xoff on them (sonic-202511's config updater lets plan write a profile of the intent's own)",
			"switch %s, profile %s (SKU %s): its config updater creates no buffer profile, so plan raises xoff of BUFFER_PROFILE|%s from %s to %s for the %d %s of the inventory, and the %d other %s of the SKU that share it (%s) get that xoff too: more headroom reserved on each, less shared buffer",
			sw.Name, prof.Name, l.SKU, l.Profile, bytesStr(l.Xoff), bytesStr(need), len(listed), plural(len(listed), "port", "ports"),
			len(others), plural(len(others), "port", "ports"), span)
	}
}

// joinWords renders "a", "a and b", "a, b and c".
func joinWords(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
