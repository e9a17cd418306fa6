package check

import (
	"fmt"
	"strings"
)

// PFC deadlock (FC123). Lossless traffic deadlocks when the buffers it waits
// on form a cycle; up-down routing in a Clos cannot form one (Hu et al.,
// "Deadlocks in datacenter networks: why do they form, and how to avoid
// them", HotNets 2016). Statically we can see the topology, not the routes,
// so the rule flags topologies that are not an up-down Clos:
//
//   - Tiers: switches with a host linked are tier 0 (leaves); every other
//     switch's tier is its hop distance from the nearest leaf. In a Clos every
//     switch-switch link joins tier k and k+1. A link inside one tier
//     (leaf-leaf, spine-spine) that lies on a cycle lets routes go down and up
//     again (valley paths) and closes a buffer dependency cycle: warning,
//     with the cycle named.
//   - A connected group of switches with no host linked at all cannot be
//     layered; if it has a cycle (a ring of switches) it is flagged too.
//
// Parallel cables between the same two switches count as one edge (they are
// ECMP members, not a cycle). Everything is linear in switches + links.

type graphEdge struct {
	u, v int
	link int // index of the first link in the intent that forms this edge
}

type graphAdj struct{ to, edge int }

func (c *checker) pfcDeadlock() {
	if len(c.lossless) == 0 || len(c.f.Links) == 0 || !c.switchPause() {
		return // no pause between switches, no cyclic buffer dependency
	}
	id := make(map[string]int, len(c.f.Switches))
	var nodes []string
	for i := range c.f.Switches {
		n := c.f.Switches[i].Name
		if _, ok := id[n]; !ok {
			id[n] = len(nodes)
			nodes = append(nodes, n)
		}
	}
	hasHost := make([]bool, len(nodes))
	// Sized for the links between two switches (at most one edge each).
	between := 0
	for i := range c.ends {
		if c.ends[i][0].kind == endSwitch && c.ends[i][1].kind == endSwitch {
			between++
		}
	}
	pair := make(map[[2]int]int, between)
	edges := make([]graphEdge, 0, between)
	for i, l := range c.f.Links {
		ea, eb := c.ends[i][0], c.ends[i][1]
		aSw, bSw := ea.kind == endSwitch, eb.kind == endSwitch
		aHost, bHost := ea.kind == endHost, eb.kind == endHost
		var a, b int
		if aSw {
			a = id[l.A.Node]
		}
		if bSw {
			b = id[l.B.Node]
		}
		switch {
		case aSw && bHost:
			hasHost[a] = true
		case bSw && aHost:
			hasHost[b] = true
		case aSw && bSw && a != b:
			k := [2]int{min(a, b), max(a, b)}
			if _, ok := pair[k]; !ok {
				pair[k] = len(edges)
				edges = append(edges, graphEdge{a, b, i})
			}
		}
	}
	if len(edges) == 0 {
		return
	}
	// Each node's adjacency is cut from one array, sized by its degree.
	degree := make([]int, len(nodes))
	for _, ge := range edges {
		degree[ge.u]++
		degree[ge.v]++
	}
	all := make([]graphAdj, 2*len(edges))
	adj := make([][]graphAdj, len(nodes))
	for n, off := 0, 0; n < len(nodes); n++ {
		adj[n] = all[off : off : off+degree[n]]
		off += degree[n]
	}
	for e, ge := range edges {
		adj[ge.u] = append(adj[ge.u], graphAdj{ge.v, e})
		adj[ge.v] = append(adj[ge.v], graphAdj{ge.u, e})
	}

	// Tiers by multi-source BFS from the leaves.
	tier := make([]int, len(nodes))
	queue := make([]int, 0, len(nodes))
	for n := range nodes {
		tier[n] = -1
		if hasHost[n] {
			tier[n] = 0
			queue = append(queue, n)
		}
	}
	for h := 0; h < len(queue); h++ {
		u := queue[h]
		for _, a := range adj[u] {
			if tier[a.to] < 0 {
				tier[a.to] = tier[u] + 1
				queue = append(queue, a.to)
			}
		}
	}

	bridge := bridges(len(nodes), adj, len(edges))
	finder := newPathFinder(len(nodes))

	// Lateral links on a cycle, in intent order.
	for e, ge := range edges {
		if tier[ge.u] < 0 || tier[ge.u] != tier[ge.v] || bridge[e] {
			continue
		}
		cyc := finder.path(adj, ge.v, ge.u, e)
		l := c.f.Links[ge.link]
		c.report(Warning, l.Pos, linkPath(ge.link),
			"keep lossless traffic on up-down paths: remove the link, or keep the lossless classes off it (and keep the PFC watchdog on)",
			"PFC deadlock risk: link %s - %s joins two %s and closes the cycle %s, so lossless traffic can take valley paths and form a cyclic buffer dependency",
			l.A, l.B, tierName(tier[ge.u]), cycleString(nodes, closeCycle(ge.u, cyc)))
	}

	// Host-less components with a cycle.
	seen := make([]bool, len(nodes))
	for s := range nodes {
		if seen[s] || tier[s] >= 0 || len(adj[s]) == 0 {
			continue
		}
		var comp []int
		seen[s] = true
		stack := []int{s}
		for len(stack) > 0 {
			u := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			comp = append(comp, u)
			for _, a := range adj[u] {
				if !seen[a.to] {
					seen[a.to] = true
					stack = append(stack, a.to)
				}
			}
		}
		// First cycle edge (lowest link index) of the component.
		best := -1
		for _, u := range comp {
			for _, a := range adj[u] {
				if !bridge[a.edge] && (best < 0 || edges[a.edge].link < edges[best].link) {
					best = a.edge
				}
			}
		}
		if best < 0 {
			continue // a tree: no cycle
		}
		ge := edges[best]
		cyc := finder.path(adj, ge.v, ge.u, best)
		l := c.f.Links[ge.link]
		c.report(Warning, l.Pos, linkPath(ge.link),
			"if this is a Clos, add the host links so leaves and spines can be told apart; otherwise keep lossless traffic off the ring",
			"PFC deadlock risk: switches %s form a cycle with no host linked to any of %d connected switches (a ring, not an up-down Clos); routes around it can form a cyclic buffer dependency",
			cycleString(nodes, closeCycle(ge.u, cyc)), len(comp))
	}
}

// closeCycle turns the path v..u that avoids edge u-v into the cycle u, v, ..., (back to u).
func closeCycle(u int, path []int) []int {
	if len(path) == 0 {
		return []int{u}
	}
	return append([]int{u}, path[:len(path)-1]...)
}

func tierName(t int) string {
	switch t {
	case 0:
		return "leaves (switches with hosts)"
	case 1:
		return "spines (tier 1)"
	}
	return fmt.Sprintf("tier-%d switches", t)
}

// cycleString renders a -> b -> c -> a, eliding the middle of long cycles.
func cycleString(nodes []string, cyc []int) string {
	const maxShown = 12
	parts := make([]string, 0, maxShown+2)
	for i, n := range cyc {
		if len(cyc) > maxShown && i == maxShown-2 {
			parts = append(parts, fmt.Sprintf("... (%d more)", len(cyc)-maxShown+1))
			parts = append(parts, nodes[cyc[len(cyc)-1]])
			break
		}
		parts = append(parts, nodes[n])
	}
	parts = append(parts, nodes[cyc[0]])
	return strings.Join(parts, " -> ")
}

// bridges marks the edges whose removal disconnects the graph (Tarjan's
// low-link, iterative so deep graphs cannot overflow the stack).
func bridges(n int, adj [][]graphAdj, m int) []bool {
	isBridge := make([]bool, m)
	disc := make([]int, n)
	low := make([]int, n)
	for i := range disc {
		disc[i] = -1
	}
	type frame struct{ node, parentEdge, next int }
	t := 0
	for s := range n {
		if disc[s] >= 0 {
			continue
		}
		disc[s], low[s] = t, t
		t++
		stack := []frame{{s, -1, 0}}
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if f.next < len(adj[f.node]) {
				a := adj[f.node][f.next]
				f.next++
				if a.edge == f.parentEdge {
					continue
				}
				if disc[a.to] < 0 {
					disc[a.to], low[a.to] = t, t
					t++
					stack = append(stack, frame{a.to, a.edge, 0})
				} else if disc[a.to] < low[f.node] {
					low[f.node] = disc[a.to]
				}
				continue
			}
			stack = stack[:len(stack)-1]
			if len(stack) > 0 {
				p := &stack[len(stack)-1]
				if low[f.node] < low[p.node] {
					low[p.node] = low[f.node]
				}
				if low[f.node] > disc[p.node] {
					isBridge[f.parentEdge] = true
				}
			}
		}
	}
	return isBridge
}

// pathFinder finds shortest paths by BFS, reusing its buffers across calls.
type pathFinder struct {
	prev  []int
	mark  []int
	epoch int
	queue []int
}

func newPathFinder(n int) *pathFinder {
	return &pathFinder{prev: make([]int, n), mark: make([]int, n)}
}

// path returns the nodes from src to dst (both included) avoiding edge skip,
// or nil when there is none.
func (pf *pathFinder) path(adj [][]graphAdj, src, dst, skip int) []int {
	pf.epoch++
	pf.queue = append(pf.queue[:0], src)
	pf.mark[src] = pf.epoch
	pf.prev[src] = -1
	for h := 0; h < len(pf.queue); h++ {
		u := pf.queue[h]
		if u == dst {
			var out []int
			for x := dst; x >= 0; x = pf.prev[x] {
				out = append(out, x)
			}
			for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
				out[i], out[j] = out[j], out[i]
			}
			return out
		}
		for _, a := range adj[u] {
			if a.edge == skip || pf.mark[a.to] == pf.epoch {
				continue
			}
			pf.mark[a.to] = pf.epoch
			pf.prev[a.to] = u
			pf.queue = append(pf.queue, a.to)
		}
	}
	return nil
}
