// The scheduling rule: ETS weights and strict classes (FC113).

package check

import (
	"cmp"
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
			if cl := &p.Classes[i]; !cl.Strict && cl.Fields.Has("weight") {
				first = cl
				break
			}
		}
		var (
			fix   string
			edits []Edit
		)
		if cnp := p.CNPClass(); cnp != nil && !cnp.Strict {
			// The CNP class belongs in strict priority (FC107); out of
			// the weights, the others may already add up.
			fix, edits = c.strictCNP(cnp)
			fix = "make the CNP class strict: " + fix + " (FC107)"
		} else {
			var todo []*intent.Class
			for i := range p.Classes {
				if !p.Classes[i].Strict {
					todo = append(todo, &p.Classes[i])
				}
			}
			fix, edits = c.balance(todo)
			fix = "set the weights of the non-strict classes to " + fix + " (they add up to 100)"
		}
		c.report(Error, pos(first.Pos, p.Pos), classPath(first)+".weight", fix,
			"ETS weights of the non-strict classes sum to %d%%, not 100%% (%s)", sum, strings.Join(parts, ", ")).with(edits...)
	}
}

// strictCNP is the fix that makes the CNP class strict priority: strict:
// true on it and, when the weights of the other non-strict classes then do
// not add up to 100, those weights in proportion (FC113).
func (c *checker) strictCNP(cnp *intent.Class) (string, []Edit) {
	p := &c.f.Policy
	edits := []Edit{set(classPath(cnp)+".strict", true)}
	fix := fmt.Sprintf("set strict: true on CNP class %s", cnp.Name)
	var others []*intent.Class
	sum := 0
	for i := range p.Classes {
		if cl := &p.Classes[i]; !cl.Strict && cl != cnp {
			others = append(others, cl)
			sum += cl.Weight
		}
	}
	if len(others) == 0 {
		return fix, edits
	}
	minW := c.minWeight()
	ok := sum == 100
	for _, cl := range others {
		ok = ok && cl.Weight >= minW
	}
	if ok {
		return fix + fmt.Sprintf("; the weights of the other classes already add up to 100 (%s)", weights(others)), edits
	}
	bal, be := c.balance(others)
	return fix + " and the weights of the other classes to " + bal, append(edits, be...)
}

// minWeight is the smallest weight every switch's scheduler takes (at least 1).
func (c *checker) minWeight() int {
	m := 1
	for i := range c.f.Switches {
		if pi, ok := c.platform(&c.f.Switches[i]); ok {
			m = max(m, pi.MinWeight)
		}
	}
	return m
}

func weights(cls []*intent.Class) string {
	s := make([]string, len(cls))
	for i, cl := range cls {
		s[i] = fmt.Sprintf("%s %d%%", cl.Name, cl.Weight)
	}
	return strings.Join(s, ", ")
}

// balance returns weights for cls that add up to 100, in proportion to
// their weights now (equal when none has one), none below the smallest
// weight the switches take (largest-remainder rounding): the text and the
// edits of the weights that change.
func (c *checker) balance(cls []*intent.Class) (string, []Edit) {
	if len(cls) == 0 {
		return "", nil
	}
	minW := c.minWeight()
	total := 0
	for _, cl := range cls {
		total += max(cl.Weight, 0)
	}
	w := make([]int, len(cls))
	rem := make([]float64, len(cls))
	sum := 0
	for i, cl := range cls {
		share := 100.0 / float64(len(cls))
		if total > 0 {
			share = float64(max(cl.Weight, 0)) * 100 / float64(total)
		}
		w[i] = int(share)
		rem[i] = share - float64(w[i])
		sum += w[i]
	}
	// Hand out what rounding down left, largest remainder first.
	order := make([]int, len(cls))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rem[b], rem[a]) })
	for k := 0; sum < 100; k++ {
		w[order[k%len(order)]]++
		sum++
	}
	for i := range w { // lift the smallest to the minimum, taking from the largest
		for w[i] < minW {
			big := 0
			for j := range w {
				if w[j] > w[big] {
					big = j
				}
			}
			if w[big] <= minW {
				break
			}
			w[big]--
			w[i]++
		}
	}
	var (
		parts []string
		edits []Edit
	)
	for i, cl := range cls {
		parts = append(parts, fmt.Sprintf("%s %d%%", cl.Name, w[i]))
		if w[i] != cl.Weight {
			edits = append(edits, Edit{Path: classPath(cl) + ".weight", Value: fmt.Sprintf("%d%%", w[i])})
		}
	}
	return strings.Join(parts, ", "), edits
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
	// The fix: every non-strict class a weight of at least the minimum,
	// the weights still adding up to 100.
	var todo []*intent.Class
	for i := range c.f.Policy.Classes {
		if o := &c.f.Policy.Classes[i]; !o.Strict {
			todo = append(todo, o)
		}
	}
	bal, edits := c.balance(todo)
	if len(plats) == 0 {
		c.report(Warning, at, path,
			fmt.Sprintf("give the class a weight (e.g. %s), or make it strict", bal),
			"class %s has ETS weight %d%%: it gets no guaranteed bandwidth and starves under load", cl.Name, cl.Weight).with(edits...)
		return
	}
	slices.Sort(plats)
	var on []string
	for _, pl := range plats {
		sws := by[pl]
		on = append(on, fmt.Sprintf("%s (%d %s: %s)", pl, len(sws), plural(len(sws), "switch", "switches"), names(sws, 5)))
	}
	c.report(Error, at, path,
		fmt.Sprintf("give the class a weight of at least 1%% (e.g. %s), or make it strict", bal),
		"class %s has ETS weight %d%%, which %s refuse: a scheduler weight starts at 1", cl.Name, cl.Weight, strings.Join(on, " and ")).with(edits...)
}
