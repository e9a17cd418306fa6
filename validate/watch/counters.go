package watch

import (
	"strconv"
	"strings"
	"sync"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/validate"
)

// Counter kinds, per port and priority in use.
const (
	kDrops = iota
	kECN
	kPFCTx
	kPFCRx
	kWatchdog
	kProfileDrops // SR Linux per-profile drops, folded into kDrops at export
	nKinds
)

var kindOf = map[string]int{
	validate.CounterDrops:        kDrops,
	validate.CounterECNMarked:    kECN,
	validate.CounterPFCTx:        kPFCTx,
	validate.CounterPFCRx:        kPFCRx,
	validate.CounterWatchdog:     kWatchdog,
	validate.CounterProfileDrops: kProfileDrops,
}

// slot addresses one counter of a switch: port*prios*nKinds + prio*nKinds + kind,
// or, for the per-port PFC buffer discards, base + port.
type slot int32

// contribution is what one update added to one slot.
type contribution struct {
	slot slot
	v    uint64
}

// switchCounters holds the latest counters of one switch, as the sum of the
// latest contribution of every subscribed path (a normalised counter can be
// the sum of several leaves, and a SONiC hash update carries many).
type switchCounters struct {
	name   string
	src    *validate.SwitchCounters
	ports  map[string]int
	prios  []int      // priorities in use, ascending
	prioIx [8]int     // priority -> index in prios, -1 = not in use
	mu     sync.Mutex // guards what follows
	vals   []uint64   // ports*prios*nKinds + ports (discards)
	seen   []bool     // the switch has reported the counter
	leaves map[string]*leafState
}

type leafState struct {
	// scalar leaves map to at most one slot (cached after the first
	// update); JSON values (SONiC hashes) are decoded every time.
	scalar  bool
	slot    slot // -1 = the leaf feeds no exported counter
	last    uint64
	contrib []contribution
}

func newSwitchCounters(src *validate.SwitchCounters, prios []int) *switchCounters {
	c := &switchCounters{name: src.Switch, src: src, ports: map[string]int{}, prios: prios, leaves: map[string]*leafState{}}
	for i := range c.prioIx {
		c.prioIx[i] = -1
	}
	for i, p := range prios {
		c.prioIx[p] = i
	}
	for i, p := range src.Ports {
		c.ports[p] = i
	}
	n := len(src.Ports)*len(prios)*nKinds + len(src.Ports)
	c.vals = make([]uint64, n)
	c.seen = make([]bool, n)
	return c
}

func (c *switchCounters) discardBase() int { return len(c.src.Ports) * len(c.prios) * nKinds }

// slotOf maps a normalised counter of a port to its slot (false: not
// exported: a port outside the inventory or a priority not in use).
func (c *switchCounters) slotOf(port, name string) (slot, bool) {
	pi, ok := c.ports[port]
	if !ok {
		return 0, false
	}
	if name == validate.CounterPFCDiscards {
		return slot(c.discardBase() + pi), true
	}
	// "q3.drops" / "p3.pfc_tx"
	if len(name) < 3 || (name[0] != 'q' && name[0] != 'p') {
		return 0, false
	}
	num, kind, ok := strings.Cut(name[1:], ".")
	if !ok {
		return 0, false
	}
	prio, err := strconv.Atoi(num)
	if err != nil || prio < 0 || prio > 7 || c.prioIx[prio] < 0 {
		return 0, false
	}
	k, ok := kindOf[kind]
	if !ok {
		return 0, false
	}
	return slot((pi*len(c.prios)+c.prioIx[prio])*nKinds + k), true
}

// contributions decodes one update into slot contributions.
func (c *switchCounters) contributions(prefix *gnmipb.Path, u *gnmipb.Update) []contribution {
	var out []contribution
	for key, m := range c.src.Decode(prefix, u) {
		port := strings.TrimPrefix(key, c.name+"/")
		for name, v := range m {
			if s, ok := c.slotOf(port, name); ok {
				out = append(out, contribution{s, v})
			}
		}
	}
	return out
}

func isScalar(tv *gnmipb.TypedValue) bool {
	switch tv.GetValue().(type) {
	case *gnmipb.TypedValue_UintVal, *gnmipb.TypedValue_IntVal, *gnmipb.TypedValue_StringVal:
		return true
	}
	return false
}

func scalarUint(tv *gnmipb.TypedValue) (uint64, bool) {
	switch v := tv.GetValue().(type) {
	case *gnmipb.TypedValue_UintVal:
		return v.UintVal, true
	case *gnmipb.TypedValue_IntVal:
		return uint64(v.IntVal), v.IntVal >= 0
	case *gnmipb.TypedValue_StringVal:
		n, err := strconv.ParseUint(v.StringVal, 10, 64)
		return n, err == nil
	}
	return 0, false
}

// pathKey names the full path of an update (prefix + path) compactly.
func pathKey(b *strings.Builder, prefix *gnmipb.Path, u *gnmipb.Update) string {
	b.Reset()
	b.WriteString(prefix.GetTarget())
	for _, elems := range [][]*gnmipb.PathElem{prefix.GetElem(), u.GetPath().GetElem()} {
		for _, e := range elems {
			b.WriteByte('/')
			b.WriteString(e.GetName())
			if len(e.GetKey()) > 0 {
				// Keys in a stable order: lists here have one or two keys.
				ks := make([]string, 0, len(e.GetKey()))
				for k := range e.GetKey() {
					ks = append(ks, k)
				}
				if len(ks) > 1 && ks[0] > ks[1] {
					ks[0], ks[1] = ks[1], ks[0]
				}
				for _, k := range ks {
					b.WriteByte('[')
					b.WriteString(k)
					b.WriteByte('=')
					b.WriteString(e.GetKey()[k])
					b.WriteByte(']')
				}
			}
		}
	}
	return b.String()
}

// ingest applies one notification; it returns the number of updates.
func (c *switchCounters) ingest(n *gnmipb.Notification, b *strings.Builder) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	prefix := n.GetPrefix()
	for _, u := range n.GetUpdate() {
		k := pathKey(b, prefix, u)
		ls := c.leaves[k]
		if ls == nil {
			ls = &leafState{slot: -1, scalar: isScalar(u.GetVal())}
			if ls.scalar {
				cs := c.contributions(prefix, u)
				if len(cs) > 1 {
					ls.scalar = false // not a single-counter leaf after all
				} else if len(cs) == 1 {
					ls.slot = cs[0].slot
				}
			}
			c.leaves[strings.Clone(k)] = ls
		}
		if ls.scalar {
			if ls.slot < 0 {
				continue
			}
			v, ok := scalarUint(u.GetVal())
			if !ok {
				continue
			}
			c.vals[ls.slot] += v - ls.last
			c.seen[ls.slot] = true
			ls.last = v
			continue
		}
		for _, old := range ls.contrib {
			c.vals[old.slot] -= old.v
		}
		ls.contrib = c.contributions(prefix, u)
		for _, nw := range ls.contrib {
			c.vals[nw.slot] += nw.v
			c.seen[nw.slot] = true
		}
	}
	for _, d := range n.GetDelete() {
		k := pathKey(b, prefix, &gnmipb.Update{Path: d})
		// A deleted leaf no longer contributes (its counters keep the
		// other leaves' sum; a vanished port's series stay at their last
		// value until the switch reports them again).
		if ls := c.leaves[k]; ls != nil {
			if ls.scalar && ls.slot >= 0 {
				c.vals[ls.slot] -= ls.last
			}
			for _, old := range ls.contrib {
				c.vals[old.slot] -= old.v
			}
			delete(c.leaves, k)
		}
	}
	return len(n.GetUpdate())
}

// snapshot calls fn for every reported counter: port, priority (-1 for
// per-port counters), kind (-1 for PFC buffer discards) and value.
func (c *switchCounters) snapshot(fn func(port string, prio, kind int, v uint64)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	np := len(c.prios)
	for pi, port := range c.src.Ports {
		for qi, prio := range c.prios {
			base := (pi*np + qi) * nKinds
			for k := 0; k < nKinds; k++ {
				switch {
				case k == kProfileDrops:
					continue
				case k == kDrops && !c.seen[base+k] && c.seen[base+kProfileDrops]:
					fn(port, prio, kDrops, c.vals[base+kProfileDrops])
				case c.seen[base+k]:
					fn(port, prio, k, c.vals[base+k])
				}
			}
		}
		if s := c.discardBase() + pi; c.seen[s] {
			fn(port, -1, -1, c.vals[s])
		}
	}
}
