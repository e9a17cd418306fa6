package watch

import (
	"math/rand/v2"
	"strings"
	"testing"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
	"github.com/fabricctl/fabricctl/validate"
)

// TestCountersSumTheirLeaves: every counter is the sum of the last value
// of each leaf that feeds it (SR Linux dropped-packets + egq-dropped-
// packets, the per-profile drops), after any sequence of updates and
// deletes, whether a slot is fed by one leaf (its value kept in the slot
// itself) or by several (kept per leaf). The reference is validate's own
// decoder applied to the leaves alive at each step.
func TestCountersSumTheirLeaves(t *testing.T) {
	ports := []string{"ethernet-1/1", "ethernet-1/2"}
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 7))
		src := &validate.SwitchCounters{Switch: "leaf1", Platform: intent.PlatformSRLinux, Ports: ports}
		c := newSwitchCounters(src, []int{0, 3, 6}, newShapeCache())
		// The leaves alive, by path, and the paths seen (to delete some).
		alive := map[string]*gnmipb.Update{}
		var paths []*gnmipb.Path
		var sb strings.Builder
		for step := range 300 {
			n := &gnmipb.Notification{}
			if len(paths) > 0 && r.IntN(5) == 0 {
				p := paths[r.IntN(len(paths))]
				n.Delete = append(n.Delete, p)
				delete(alive, transport.PathString(p))
			} else {
				// A small set of leaves, so that updates revisit them.
				rr := rand.New(rand.NewPCG(seed, uint64(r.IntN(24))))
				p := &gnmipb.Path{Elem: yangLeaf(rr, ports[rr.IntN(len(ports))])}
				u := &gnmipb.Update{Path: p, Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_UintVal{UintVal: r.Uint64N(1 << 40)}}}
				n.Update = append(n.Update, u)
				alive[transport.PathString(p)] = u
				paths = append(paths, p)
			}
			c.ingest(n, &sb)

			want := make([]uint64, len(c.vals))
			wantSeen := make([]bool, len(c.vals))
			for _, u := range alive {
				for key, m := range src.Decode(&gnmipb.Path{}, u) {
					for name, v := range m {
						if s, ok := c.slotOf(strings.TrimPrefix(key, "leaf1/"), name); ok {
							want[s] += v
							wantSeen[s] = true
						}
					}
				}
			}
			for s := range want {
				// A deleted leaf's counter stays reported (seen) at the
				// other leaves' sum, 0 when none is left.
				if c.vals[s] != want[s] || (wantSeen[s] && !c.seen[s]) {
					t.Fatalf("seed %d step %d: slot %d is %d (seen %v), the leaves alive sum to %d (seen %v)",
						seed, step, s, c.vals[s], c.seen[s], want[s], wantSeen[s])
				}
			}
		}
	}
}
