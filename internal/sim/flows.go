package sim

import (
	"fmt"
	"sort"

	"github.com/fabricctl/fabricctl/intent"
)

// FlowEnds is one flow of fabricctl validate's plan: a host NIC sending to
// another host NIC.
type FlowEnds struct {
	FromHost, FromNIC string
	ToHost, ToNIC     string
	// Size is the message of the flow (0 = send for the whole run).
	Size int64
}

// ScenarioFromFlows is the scenario that runs the flows of one validate
// round at the same time, on the intent's own topology (never a synthetic
// star), every flow on the first lossless class (the class validate's
// traffic is marked with). A host with one linked NIC lets the simulator
// route as it does for simulate (ECMP shortest paths); a flow whose host
// has several linked NICs (rails) is pinned to the named NICs' switches:
// its path is a shortest path over switches between them, the first in
// the intent's switch order.
func ScenarioFromFlows(f *intent.Fabric, name string, flows []FlowEnds) (*Scenario, error) {
	if len(flows) == 0 {
		return nil, fmt.Errorf("scenario %s: no flows", name)
	}
	sc := &Scenario{Name: name, spec: "flows"}
	g := newSwitchGraph(f)
	for _, fl := range flows {
		fs := FlowSpec{From: fl.FromHost, To: fl.ToHost, Size: fl.Size}
		if g.nics[fl.FromHost] > 1 || g.nics[fl.ToHost] > 1 {
			a, ok := g.attach[fl.FromHost+":"+fl.FromNIC]
			b, ok2 := g.attach[fl.ToHost+":"+fl.ToNIC]
			if !ok || !ok2 {
				return nil, fmt.Errorf("flow %s:%s -> %s:%s: a NIC without a link to a switch in the intent", fl.FromHost, fl.FromNIC, fl.ToHost, fl.ToNIC)
			}
			mid := g.path(a, b)
			if mid == nil {
				return nil, fmt.Errorf("flow %s:%s -> %s:%s: no path between switches %s and %s", fl.FromHost, fl.FromNIC, fl.ToHost, fl.ToNIC, a, b)
			}
			fs.Path = append(append([]string{fl.FromHost}, mid...), fl.ToHost)
		}
		sc.Flows = append(sc.Flows, fs)
	}
	return sc, nil
}

// switchGraph is the intent's switches and their links, and where each
// host NIC is attached.
type switchGraph struct {
	adj    map[string][]string
	attach map[string]string // "host:nic" -> switch
	nics   map[string]int    // host -> linked NICs
}

func newSwitchGraph(f *intent.Fabric) *switchGraph {
	g := &switchGraph{adj: map[string][]string{}, attach: map[string]string{}, nics: map[string]int{}}
	order := map[string]int{}
	for i, s := range f.Switches {
		order[s.Name] = i
	}
	isSw := func(n string) bool { _, ok := order[n]; return ok }
	for _, l := range f.Links {
		a, b := l.A, l.B
		switch {
		case isSw(a.Node) && isSw(b.Node):
			g.adj[a.Node] = append(g.adj[a.Node], b.Node)
			g.adj[b.Node] = append(g.adj[b.Node], a.Node)
		case isSw(a.Node) && f.Host(b.Node) != nil:
			g.attach[b.Node+":"+b.Port] = a.Node
			g.nics[b.Node]++
		case isSw(b.Node) && f.Host(a.Node) != nil:
			g.attach[a.Node+":"+a.Port] = b.Node
			g.nics[a.Node]++
		}
	}
	for n := range g.adj {
		sort.SliceStable(g.adj[n], func(i, j int) bool { return order[g.adj[n][i]] < order[g.adj[n][j]] })
	}
	return g
}

// path is a shortest switch path from a to b (both included), BFS in the
// intent's switch order; nil when b cannot be reached.
func (g *switchGraph) path(a, b string) []string {
	prev := map[string]string{a: ""}
	queue := []string{a}
	for len(queue) > 0 && b != a {
		cur := queue[0]
		queue = queue[1:]
		if cur == b {
			break
		}
		for _, nb := range g.adj[cur] {
			if _, seen := prev[nb]; !seen {
				prev[nb] = cur
				queue = append(queue, nb)
			}
		}
	}
	if _, ok := prev[b]; !ok {
		return nil
	}
	var out []string
	for n := b; n != ""; n = prev[n] {
		out = append([]string{n}, out...)
		if n == a {
			break
		}
	}
	return out
}
