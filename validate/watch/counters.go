package watch

import (
	"slices"
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
	prios  []int       // priorities in use, ascending
	prioIx [8]int      // priority -> index in prios, -1 = not in use
	shapes *shapeCache // shared by the switches of one platform
	mu     sync.Mutex  // guards what follows
	vals   []uint64    // ports*prios*nKinds + ports (discards)
	seen   []bool      // the switch has reported the counter
	// owner says what a slot's value is the sum of: 0 nothing yet, id+1
	// the one single-counter leaf of shape id (its value is vals[slot]
	// itself), sharedSlot several leaves, whose last values scalar holds.
	// Most counters are one leaf (SR Linux, EOS, OpenConfig send counters
	// leaf by leaf), and a map entry per leaf was the largest part of a
	// streaming switch's memory (37 KB of 64 KB for 64 SR Linux ports).
	owner []int32
	// scalar holds the last value of every single-counter leaf of a
	// shared slot, keyed compactly by its slot and shape; leaves holds the
	// contributions of JSON values (SONiC sends a hash whole), keyed by
	// path.
	scalar map[leafKey]uint64
	leaves map[string]*leafState
}

// sharedSlot marks a slot fed by more than one leaf (owner).
const sharedSlot = -1

// leafKey names a scalar leaf: two leaves that feed one counter differ in
// shape (dropped-packets and egq-dropped-packets, in-profile and
// out-profile).
type leafKey struct {
	slot  slot
	shape int32
}

// shapeInfo is what a leaf shape (its path without the interface key)
// feeds, the same for every port: decided once by validate's decoder.
type shapeInfo struct {
	id       int32
	relevant bool
	prio     int // -1: per-port (PFC buffer discards)
	kind     int
}

// shapeCache maps leaf shapes to what they feed; one per platform. raw
// maps the wire bytes of a leaf's prefix and path to its shape and port
// (ingestRaw): the same bytes on every switch of the platform.
type shapeCache struct {
	mu  sync.RWMutex
	m   map[string]*shapeInfo
	raw map[string]rawLeaf
}

func newShapeCache() *shapeCache {
	return &shapeCache{m: map[string]*shapeInfo{}, raw: map[string]rawLeaf{}}
}

func (sc *shapeCache) get(k string) *shapeInfo {
	sc.mu.RLock()
	defer sc.mu.RUnlock()
	return sc.m[k]
}

func (sc *shapeCache) put(k string, info *shapeInfo) *shapeInfo {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if old := sc.m[k]; old != nil {
		return old
	}
	info.id = int32(len(sc.m))
	sc.m[strings.Clone(k)] = info
	return info
}

type leafState struct {
	contrib []contribution
}

func newSwitchCounters(src *validate.SwitchCounters, prios []int, shapes *shapeCache) *switchCounters {
	c := &switchCounters{name: src.Switch, src: src, ports: map[string]int{}, prios: prios, shapes: shapes,
		scalar: map[leafKey]uint64{}, leaves: map[string]*leafState{}}
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
	c.owner = make([]int32, n)
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
	prio, k, ok := parseCounter(name)
	if !ok {
		return 0, false
	}
	return c.slotFor(pi, prio, k)
}

func (c *switchCounters) slotFor(pi, prio, kind int) (slot, bool) {
	if prio < 0 {
		return slot(c.discardBase() + pi), true
	}
	if c.prioIx[prio] < 0 {
		return 0, false
	}
	return slot((pi*len(c.prios)+c.prioIx[prio])*nKinds + kind), true
}

// parseCounter splits a normalised counter name: "q3.drops" -> 3, kDrops;
// "pfc_discards" -> -1, -1.
func parseCounter(name string) (prio, kind int, ok bool) {
	if name == validate.CounterPFCDiscards {
		return -1, -1, true
	}
	if len(name) < 3 || (name[0] != 'q' && name[0] != 'p') {
		return 0, 0, false
	}
	num, ks, ok := strings.Cut(name[1:], ".")
	if !ok {
		return 0, 0, false
	}
	prio, err := strconv.Atoi(num)
	if err != nil || prio < 0 || prio > 7 {
		return 0, 0, false
	}
	kind, ok = kindOf[ks]
	return prio, kind, ok
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
// With shape set it leaves out the interface key and returns its value:
// the shape of a leaf is the same on every port.
func pathKey(b *strings.Builder, prefix *gnmipb.Path, p *gnmipb.Path, shape bool) (key, port string) {
	b.Reset()
	b.WriteString(prefix.GetTarget())
	for _, elems := range [2][]*gnmipb.PathElem{prefix.GetElem(), p.GetElem()} {
		for _, e := range elems {
			b.WriteByte('/')
			b.WriteString(e.GetName())
			keys := e.GetKey()
			if len(keys) == 0 {
				continue
			}
			// Keys in a stable order (without allocating for the usual
			// one or two).
			var two [2]string
			names := two[:0]
			for k := range keys {
				names = append(names, k)
			}
			slices.Sort(names)
			for _, k := range names {
				if shape && k == "interface-id" {
					port = keys[k]
					continue
				}
				b.WriteByte('[')
				b.WriteString(k)
				b.WriteByte('=')
				b.WriteString(keys[k])
				b.WriteByte(']')
			}
		}
	}
	return b.String(), port
}

// ingest applies one notification; it returns the number of updates.
func (c *switchCounters) ingest(n *gnmipb.Notification, b *strings.Builder) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	prefix := n.GetPrefix()
	for _, u := range n.GetUpdate() {
		c.ingestUpdate(prefix, u, b)
	}
	for _, d := range n.GetDelete() {
		c.ingestDelete(prefix, d, b)
	}
	return len(n.GetUpdate())
}

// ingestUpdate applies one update; c.mu is held.
func (c *switchCounters) ingestUpdate(prefix *gnmipb.Path, u *gnmipb.Update, b *strings.Builder) {
	if c.ingestScalar(prefix, u, b) {
		return
	}
	k, _ := pathKey(b, prefix, u.GetPath(), false)
	ls := c.leaves[k]
	if ls == nil {
		ls = &leafState{}
		c.leaves[strings.Clone(k)] = ls
	}
	for _, old := range ls.contrib {
		c.vals[old.slot] -= old.v
	}
	ls.contrib = c.contributions(prefix, u)
	for _, nw := range ls.contrib {
		c.share(nw.slot)
		c.vals[nw.slot] += nw.v
		c.seen[nw.slot] = true
	}
}

// ingestDelete applies one deleted path; c.mu is held. A deleted leaf no
// longer contributes (its counter keeps the other leaves' sum; a vanished
// port's series stay at their last value until the switch reports them
// again).
func (c *switchCounters) ingestDelete(prefix, d *gnmipb.Path, b *strings.Builder) {
	if s, key, ok := c.scalarLeaf(prefix, d, b); ok {
		if c.owner[s] == key.shape+1 {
			c.vals[s], c.owner[s] = 0, 0
			return
		}
		c.vals[s] -= c.scalar[key]
		delete(c.scalar, key)
		return
	}
	k, _ := pathKey(b, prefix, d, false)
	if ls := c.leaves[k]; ls != nil {
		for _, old := range ls.contrib {
			c.vals[old.slot] -= old.v
		}
		delete(c.leaves, k)
	}
}

// ingestScalar takes the fast path for a single-counter leaf keyed by
// interface (SR Linux, EOS, OpenConfig): its shape says which counter it
// feeds, so only the first leaf of each shape goes through validate's
// decoder. false: not such a leaf (the caller decodes it in full).
func (c *switchCounters) ingestScalar(prefix *gnmipb.Path, u *gnmipb.Update, b *strings.Builder) bool {
	if !isScalar(u.GetVal()) {
		return false
	}
	v, ok := scalarUint(u.GetVal())
	if !ok {
		return false
	}
	info, port, ok := c.scalarShape(prefix, u, b)
	if !ok {
		return false
	}
	c.applyScalar(info, port, v)
	return true
}

// scalarShape resolves what a leaf keyed by interface feeds (decoding the
// first leaf of each shape with validate's decoder) and its port; false:
// the path has no interface key.
func (c *switchCounters) scalarShape(prefix *gnmipb.Path, u *gnmipb.Update, b *strings.Builder) (*shapeInfo, string, bool) {
	shapeKey, port := pathKey(b, prefix, u.GetPath(), true)
	if port == "" {
		return nil, "", false
	}
	info := c.shapes.get(shapeKey)
	if info == nil {
		info = &shapeInfo{}
		cs := c.src.Decode(prefix, u)
		if m := cs[c.name+"/"+port]; len(cs) == 1 && len(m) == 1 {
			for name := range m {
				info.prio, info.kind, info.relevant = parseCounter(name)
			}
		}
		info = c.shapes.put(shapeKey, info)
	}
	return info, port, true
}

// applyScalar stores the value v of a leaf of shape info on port; c.mu is
// held.
func (c *switchCounters) applyScalar(info *shapeInfo, port string, v uint64) {
	if !info.relevant {
		return
	}
	pi, ok := c.ports[port]
	if !ok {
		return // not an inventory port
	}
	s, ok := c.slotFor(pi, info.prio, info.kind)
	if !ok {
		return // a priority no class uses
	}
	c.seen[s] = true
	switch o := c.owner[s]; o {
	case 0, info.id + 1: // the slot's only leaf
		c.owner[s] = info.id + 1
		c.vals[s] = v
		return
	default:
		c.share(s)
	}
	key := leafKey{s, info.id}
	c.vals[s] += v - c.scalar[key]
	c.scalar[key] = v
}

// share turns slot s into one that sums several leaves: the value of its
// only leaf so far moves to scalar; c.mu is held.
func (c *switchCounters) share(s slot) {
	if o := c.owner[s]; o > 0 {
		c.scalar[leafKey{s, o - 1}] = c.vals[s]
	}
	c.owner[s] = sharedSlot
}

// scalarLeaf finds the state of a deleted scalar leaf.
func (c *switchCounters) scalarLeaf(prefix, p *gnmipb.Path, b *strings.Builder) (slot, leafKey, bool) {
	shapeKey, port := pathKey(b, prefix, p, true)
	info := c.shapes.get(shapeKey)
	pi, ok := c.ports[port]
	if info == nil || !info.relevant || !ok {
		return 0, leafKey{}, false
	}
	s, ok := c.slotFor(pi, info.prio, info.kind)
	if !ok {
		return 0, leafKey{}, false
	}
	key := leafKey{s, info.id}
	if c.owner[s] == info.id+1 {
		return s, key, true
	}
	_, ok = c.scalar[key]
	return s, key, ok
}

// snapshot calls fn for every reported counter: port, priority (-1 for
// per-port counters), kind (-1 for PFC buffer discards) and value.
func (c *switchCounters) snapshot(fn func(port string, prio, kind int, v uint64)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.each(c.vals, c.seen, fn)
}

// countersCopy is a switch's counters copied out of its lock.
type countersCopy struct {
	vals []uint64
	seen []bool
}

// copyTo copies the counters into cc (reusing its slices), holding the
// switch's lock only for the copy.
func (c *switchCounters) copyTo(cc *countersCopy) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cc.vals = append(cc.vals[:0], c.vals...)
	cc.seen = append(cc.seen[:0], c.seen...)
}

// each is snapshot over vals and seen (c's own, locked, or a copy).
func (c *switchCounters) each(vals []uint64, seen []bool, fn func(port string, prio, kind int, v uint64)) {
	np := len(c.prios)
	for pi, port := range c.src.Ports {
		for qi, prio := range c.prios {
			base := (pi*np + qi) * nKinds
			for k := 0; k < nKinds; k++ {
				switch {
				case k == kProfileDrops:
					continue
				case k == kDrops && !seen[base+k] && seen[base+kProfileDrops]:
					fn(port, prio, kDrops, vals[base+kProfileDrops])
				case seen[base+k]:
					fn(port, prio, k, vals[base+k])
				}
			}
		}
		if s := c.discardBase() + pi; seen[s] {
			fn(port, -1, -1, vals[s])
		}
	}
}
