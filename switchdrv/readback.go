package switchdrv

import (
	"context"
	"fmt"
	"slices"
	"sync"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv/internal/jtree"
)

// ReadBack is what one switch holds at the paths fabricctl owns there,
// read with plan's code (the platform's compile, probe and refine, then
// one Get of the owned paths), for a reader of the applied configuration
// (internal/applied). Lookup reads a path outside them (e.g. a profile
// that a port was pointed at by someone else) with the same client.
type ReadBack struct {
	Switch *intent.Switch
	// Snapshot is the owned paths' state, as plan compares against it.
	Snapshot *Snapshot

	e     *Engine
	cn    *conn
	found *Snapshot // what a Refiner's Discover read, or nil

	mu    sync.Mutex
	extra []*Snapshot // the paths Lookup read beyond the owned ones
}

// ReadBack reads what sw holds at the paths the intent's payload for it
// owns. After a Plan of the same intent with KeepReadBacks, it returns
// what that plan read of sw (once) and reads nothing.
func (e *Engine) ReadBack(ctx context.Context, f *intent.Fabric, sw *intent.Switch) (*ReadBack, error) {
	if rb := e.takeReadBack(sw); rb != nil {
		return rb, nil
	}
	pl, err := e.Registry.Lookup(sw.Platform)
	if err != nil {
		return nil, fmt.Errorf("switch %s: %w", sw.Name, err)
	}
	d, err := pl.Compile(f, sw)
	if err != nil {
		return nil, fmt.Errorf("switch %s: compile: %w", sw.Name, err)
	}
	cn, err := e.client(ctx, sw)
	if err != nil {
		return nil, err
	}
	rb := &ReadBack{Switch: sw, e: e, cn: cn}
	if pr, ok := pl.(Prober); ok {
		if err := pr.Probe(ctx, cn.c, d); err != nil {
			return nil, fmt.Errorf("switch %s: %v", sw.Name, err)
		}
	}
	if r, ok := pl.(Refiner); ok {
		if rb.found, err = e.read(ctx, cn, sw, d.Encoding, r.Discover(d), nil, false, nil); err != nil {
			return nil, err
		}
		if err := r.Refine(d, rb.found.lookup); err != nil {
			return nil, fmt.Errorf("switch %s: %v", sw.Name, err)
		}
	}
	paths, keys := ownedPaths(d.SetRequest(), nil)
	if rb.found != nil {
		rb.Snapshot = rb.found.within(paths)
	}
	if rb.Snapshot == nil {
		if rb.Snapshot, err = e.read(ctx, cn, sw, d.Encoding, paths, keys, false, nil); err != nil {
			return nil, err
		}
	}
	return rb, nil
}

// Lookup returns the value at p (JSON decoded, module prefixes
// stripped): from what ReadBack read when p lies inside it, else read from
// the switch (once). ok is false when the switch has nothing there.
func (r *ReadBack) Lookup(ctx context.Context, p *gnmipb.Path) (v any, ok bool, err error) {
	for _, s := range []*Snapshot{r.Snapshot, r.found} {
		if s != nil && s.covers(p) {
			v, ok = s.lookup(p)
			return jtree.StripPrefixes(jtree.Clone(v)), ok, nil
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.extra {
		if s.covers(p) {
			v, ok = s.lookup(p)
			return jtree.StripPrefixes(jtree.Clone(v)), ok, nil
		}
	}
	s, err := observeAs(ctx, r.cn.c, r.Switch, []*gnmipb.Path{p}, nil, true, false, nil)
	if err != nil {
		return nil, false, err
	}
	r.extra = append(r.extra, s)
	v, ok = s.lookup(p)
	return jtree.StripPrefixes(jtree.Clone(v)), ok, nil
}

// CLILines are the CLI configuration lines read (origin cli: EOS's
// `show running-config all`), flattened with their sections as plan
// compares them ("interface Ethernet1/1 >> mtu 9214"); nil when the
// payload has no CLI part.
func (r *ReadBack) CLILines() []string {
	for _, e := range r.Snapshot.Entries {
		if e.ASCII != nil {
			return cliLines(*e.ASCII)
		}
	}
	return nil
}

// CLISep joins a CLI sub-mode line to the line that opened its section in
// CLILines.
const CLISep = jtree.CLISep

// keepReadBack keeps what Plan read of sw for the next ReadBack: snap, the
// owned paths, and found, what a Refiner's Discover read (nil when none).
// snap is kept as a copy: the plan goes on to trim its entries to the
// deletes it sends, and its comparison fills YANG defaults into the trees
// an entry owns (compare); the copy's entries decode their JSON instead.
func (e *Engine) keepReadBack(sw *intent.Switch, cn *conn, snap, found *Snapshot) {
	kept := &Snapshot{Version: snap.Version, Switch: snap.Switch, Platform: snap.Platform, Address: snap.Address, Taken: snap.Taken,
		Basis: snap.Basis, Entries: slices.Clone(snap.Entries)}
	for i := range kept.Entries {
		if en := &kept.Entries[i]; en.own {
			en.tree, en.own = nil, false
		}
	}
	rb := &ReadBack{Switch: sw, Snapshot: kept, e: e, cn: cn, found: found}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.readBacks == nil {
		e.readBacks = map[string]*ReadBack{}
	}
	e.readBacks[sw.Name] = rb
}

// takeReadBack returns (and forgets) what Plan kept of sw, when that plan
// was of the same intent (the very switch, not one of the same name).
func (e *Engine) takeReadBack(sw *intent.Switch) *ReadBack {
	e.mu.Lock()
	defer e.mu.Unlock()
	rb := e.readBacks[sw.Name]
	if rb == nil || rb.Switch != sw {
		return nil
	}
	delete(e.readBacks, sw.Name)
	return rb
}
