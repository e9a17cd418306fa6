// The scheduling rule: ETS weights and strict classes (FC113).

package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fabricctl/fabricctl/intent"
)

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
