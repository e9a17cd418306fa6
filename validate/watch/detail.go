package watch

import (
	"fmt"
	"slices"

	"github.com/fabricctl/fabricctl/intent"
)

// Detail chooses which priorities get per-port series, the bulk of what
// watch exports (each port has five counters per priority: queue drops,
// ECN marks, PFC pause frames sent and received, watchdog detections).
type Detail string

const (
	// DetailAll exports every priority the policy's classes use.
	DetailAll Detail = "all"
	// DetailLossless exports only the priorities of lossless classes (PFC)
	// and of the class that carries CNPs: what the example alerts and the
	// dashboard look at (drops on lossless priorities, PFC storms, ECN
	// marks against CNPs). With the roce-lossless preset that is 2 of its
	// 3 priorities (3 and 6, not the default class's 0).
	DetailLossless Detail = "lossless"
)

// ParseDetail reads a --priorities value ("" is DetailAll).
func ParseDetail(s string) (Detail, error) {
	switch d := Detail(s); d {
	case "", DetailAll:
		return DetailAll, nil
	case DetailLossless:
		return d, nil
	}
	return "", fmt.Errorf("%q: want %s or %s", s, DetailAll, DetailLossless)
}

// Priorities are the priorities that get per-port series, ascending.
func (d Detail) Priorities(p *intent.Policy) []int {
	if d != DetailLossless {
		return PrioritiesInUse(p)
	}
	var out []int
	for _, c := range p.Classes {
		if (c.Lossless || c.CNP) && !slices.Contains(out, c.Priority) {
			out = append(out, c.Priority)
		}
	}
	slices.Sort(out)
	return out
}
