package switchdrv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/profile"
	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/switchdrv/internal/jtree"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
)

// Engine plans, applies and restores switch configuration over gNMI. Build
// one per command; the zero values of the tuning fields are sensible.
type Engine struct {
	Registry *Registry
	// Transport tunes every gNMI client (timeouts, retries, --insecure, log).
	Transport transport.Options
	// Log gets one record per switch and step; nil discards.
	Log *slog.Logger
	// Parallel bounds how many switches are worked on at once (default 8).
	Parallel int
	// Canary, when > 0, applies to the first Canary switches (in name order)
	// first, then to the rest in batches of Parallel, stopping at the first
	// failure.
	Canary int
	// BackupDir receives, before any write, one backup file per Apply run
	// holding every changed switch's snapshot (required by Apply).
	BackupDir string
	// Progress, when set, is called (never concurrently) as each switch
	// moves through apply.
	Progress func(Event)
	// Defaults returns the YANG defaults of a platform's models (e.g.
	// yangcheck.Platform) for the platforms whose Quirks.SchemaDefaults
	// ask for them; nil compares without filling defaults.
	Defaults func(intent.Platform) (DefaultsFiller, error)
	// DeviceCheck, when set, is asked by Plan whether the switch would
	// accept the SetRequest given its observed state (a twin of its release
	// profile: write semantics and whole-datastore validation); an error
	// fails the target's plan with the device's reason, notes (e.g. SONiC
	// ports that will flap) join the plan's notes.
	DeviceCheck func(ctx context.Context, c *transport.Client, sw *intent.Switch, req *gnmipb.SetRequest) (notes []string, err error)
	// NoPayload makes Plan leave TargetPlan.Payload and Basis empty: the
	// plan is neither saved nor shown as JSON (it is shown as text, or
	// applied by this engine in this process), so its SetRequests are not
	// encoded (protojson) and the observed state is not hashed at all.
	NoPayload bool
	// ShowOnly says Plan's result is only shown (plan -o text, diff; with
	// NoPayload, as a basis needs every value's text): no
	// Apply of this engine follows, so nothing Plan reads becomes a
	// backup and its reads are for comparison only: a value the switch
	// answers in the very text fabricctl would write is compared as text
	// and never decoded. The plan is not kept for Apply.
	ShowOnly bool
	// KeepReadBacks makes Plan keep what it read of each switch for the
	// next ReadBack of that switch (of the same intent), which then sends
	// no Get: validate's readback plan and the configuration its
	// prediction runs on (internal/applied) share one read per switch.
	KeepReadBacks bool

	progressMu sync.Mutex

	// mu guards conns, planned and readBacks.
	mu sync.Mutex
	// conns holds one connection per switch for the engine's life: plan
	// and apply of one run dial each switch once and ask its
	// Capabilities once.
	conns map[string]*conn
	// planned is what Plan read and built for each switch, so that an
	// Apply of that same plan in this process neither reads the switch a
	// second time nor decodes the payload again.
	planned map[string]*planned
	// readBacks is what Plan read of each switch, with KeepReadBacks.
	readBacks map[string]*ReadBack
}

// conn is one switch's connection and what its Capabilities said.
type conn struct {
	mu   sync.Mutex
	addr string
	c    *transport.Client
	caps *transport.Capabilities
}

// planned is one switch's plan as built in this process.
type planned struct {
	values  *decoded // the payload's values, decoded by the plan's Compare
	snap    *Snapshot
	req     *gnmipb.SetRequest
	paths   []*gnmipb.Path         // ownedPaths(req): what verify reads back
	keys    []string               // their PathKeys
	get     *transport.PreparedGet // the Get of paths the plan sent, or nil
	payload []byte
}

// client returns the engine's connection to sw, dialling it the first time.
func (e *Engine) client(ctx context.Context, sw *intent.Switch) (*conn, error) {
	e.mu.Lock()
	if e.conns == nil {
		e.conns = map[string]*conn{}
	}
	cn := e.conns[sw.Name]
	if cn == nil || cn.addr != sw.Address {
		cn = &conn{addr: sw.Address}
		e.conns[sw.Name] = cn
	}
	e.mu.Unlock()
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.c == nil {
		c, err := transport.Dial(ctx, *sw, e.transportFor(sw))
		if err != nil {
			return nil, err
		}
		cn.c = c
	}
	return cn, nil
}

// transportFor is Engine.Transport for sw: without a SetTimeout of its
// own, a Set gets the time sw's release profile says the device may take
// (SONiC: sonic-gnmi waits 600 s on the config updater), at least Timeout.
func (e *Engine) transportFor(sw *intent.Switch) transport.Options {
	opts := e.Transport
	if opts.SetTimeout == 0 {
		if p, err := profile.LookupFor(string(sw.Platform), sw.Profile); err == nil {
			opts.SetTimeout = p.Write.SetTimeout()
		}
	}
	return opts
}

// capabilities asks sw's target once per engine what it supports.
func (e *Engine) capabilities(ctx context.Context, cn *conn, sw *intent.Switch) (*transport.Capabilities, error) {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.caps != nil {
		return cn.caps, nil
	}
	caps, err := cn.c.Capabilities(ctx, requiredModels[sw.Platform]...)
	if err != nil {
		return nil, err
	}
	cn.caps = caps
	return caps, nil
}

// Close closes every connection the engine opened and forgets what Plan
// read. The engine can be used again afterwards (it dials anew).
func (e *Engine) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	// Each connection's close tears down its transport and waits for its
	// goroutines; closed one after another, 200 switches' connections took
	// 15-25 ms of the run, on one core.
	var g errgroup.Group
	g.SetLimit(e.parallel())
	for _, cn := range e.conns {
		if cn.c != nil {
			g.Go(cn.c.Close)
		}
	}
	_ = g.Wait()
	e.conns, e.planned, e.readBacks = nil, nil, nil
}

// ForgetReads drops what Plan read, so that the next Apply reads every
// switch again (and refuses one that changed since as stale). Call it when
// time passed between plan and apply, e.g. while a person read the plan.
func (e *Engine) ForgetReads() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.planned, e.readBacks = nil, nil
}

func (e *Engine) remember(name string, pl *planned) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.planned == nil {
		e.planned = map[string]*planned{}
	}
	e.planned[name] = pl
}

// takePlanned returns (and forgets) what Plan read for tp's switch, when
// it is what tp says: the same payload and basis.
func (e *Engine) takePlanned(tp *plan.TargetPlan) *planned {
	e.mu.Lock()
	defer e.mu.Unlock()
	pl := e.planned[tp.Name]
	if pl == nil || pl.snap.Basis != tp.Basis || !bytes.Equal(pl.payload, tp.Payload) {
		return nil
	}
	delete(e.planned, tp.Name)
	return pl
}

// Event is one step of one switch during Apply, for a progress display.
type Event struct {
	Switch string // "" for an event of the whole rollout (stage)
	Step   string // stage, backup, set, verify, applied, failed, rollback, rolled-back, rollback-failed, skipped, restore, restored, restore-failed
	Detail string
	Err    error
	Took   time.Duration
	// Until, on an event that starts a write (set, rollback, restore): when
	// the write and its read-back will be over at the latest (the Set's
	// transport deadline and the reads after it).
	Until time.Time
}

func (e *Engine) log() *slog.Logger {
	if e.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.Log
}

// quirks returns p's quirks with the defaults filler of Engine.Defaults.
func (e *Engine) quirks(p Platform) (Quirks, error) {
	q := p.Quirks()
	if q.SchemaDefaults && q.Defaults == nil && e.Defaults != nil {
		d, err := e.Defaults(p.Name())
		if err != nil {
			return q, fmt.Errorf("YANG defaults of %s: %w", p.Name(), err)
		}
		q.Defaults = d
	}
	return q, nil
}

func (e *Engine) parallel() int {
	if e.Parallel <= 0 {
		return 8
	}
	return e.Parallel
}

func (e *Engine) emit(ev Event) {
	if e.Progress == nil {
		return
	}
	e.progressMu.Lock()
	defer e.progressMu.Unlock()
	e.Progress(ev)
}

// Select returns the switches named in only (all when only is empty), in
// name order; an unknown name is an error that lists the known ones.
func Select(f *intent.Fabric, only []string) ([]*intent.Switch, error) {
	if len(only) == 0 {
		out := make([]*intent.Switch, len(f.Switches))
		for i := range f.Switches {
			out[i] = &f.Switches[i]
		}
		return out, nil
	}
	var out []*intent.Switch
	var unknown []string
	for _, n := range only {
		sw := f.Switch(n)
		if sw == nil {
			unknown = append(unknown, n)
			continue
		}
		if !slices.Contains(out, sw) {
			out = append(out, sw)
		}
	}
	if len(unknown) > 0 {
		var known []string
		for _, s := range f.Switches {
			known = append(known, s.Name)
		}
		return nil, fmt.Errorf("unknown switch %s (the intent has: %s)", strings.Join(unknown, ", "), strings.Join(known, ", "))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Plan compiles the intent for each selected switch, reads the paths the
// result touches and lists the changes. A switch that cannot be planned gets
// TargetPlan.Error and the others go on; the returned error is for problems
// with the request itself (unknown switch, unknown platform).
func (e *Engine) Plan(ctx context.Context, f *intent.Fabric, only []string) (*plan.Plan, error) {
	sws, err := Select(f, only)
	if err != nil {
		return nil, err
	}
	quirks := make([]Quirks, len(sws))
	plats := make([]Platform, len(sws))
	for i, sw := range sws {
		p, err := e.Registry.Lookup(sw.Platform)
		if err != nil {
			return nil, fmt.Errorf("switch %s: %w", sw.Name, err)
		}
		if quirks[i], err = e.quirks(p); err != nil {
			return nil, fmt.Errorf("switch %s: %w", sw.Name, err)
		}
		plats[i] = p
	}
	out := &plan.Plan{Version: plan.FormatVersion, Fabric: f.Name, Created: time.Now().UTC(), Targets: make([]plan.TargetPlan, len(sws))}
	// Switch by switch: each is compiled, read and compared in its own
	// goroutine (at most Parallel at once) and only its plan is kept, so
	// memory grows with the plans, not with every compiled payload at once.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(e.parallel())
	for i, sw := range sws {
		if ctx.Err() != nil {
			out.Targets[i] = plan.TargetPlan{Name: sw.Name, Kind: plan.KindSwitch, Platform: string(sw.Platform),
				Changes: []plan.Change{}, Error: fmt.Sprintf("switch %s: not planned: %v", sw.Name, ctx.Err())}
			continue
		}
		g.Go(func() error {
			d, err := plats[i].Compile(f, sw)
			if err != nil {
				out.Targets[i] = plan.TargetPlan{Name: sw.Name, Kind: plan.KindSwitch, Platform: string(sw.Platform),
					Changes: []plan.Change{}, Error: fmt.Sprintf("switch %s: compile: %v", sw.Name, err)}
				return nil
			}
			out.Targets[i] = e.planOne(gctx, sw, plats[i], d, quirks[i])
			return nil
		})
	}
	_ = g.Wait()
	out.Sort()
	return out, nil
}

func (e *Engine) planOne(ctx context.Context, sw *intent.Switch, pl Platform, d *Desired, q Quirks) plan.TargetPlan {
	tp := plan.TargetPlan{Name: sw.Name, Kind: plan.KindSwitch, Platform: string(sw.Platform), Changes: []plan.Change{}}
	cn, err := e.client(ctx, sw)
	if err != nil {
		tp.Error = err.Error()
		return tp
	}
	c := cn.c
	// A plan that is applied right here needs no basis: nothing checks it
	// for staleness later.
	withBasis := !e.NoPayload
	var snap *Snapshot
	var paths []*gnmipb.Path       // ownedPaths(d's request): read, then verified
	var keys []string              // their PathKeys
	var values *decoded            // d's values, once d is final
	var get *transport.PreparedGet // the Get of paths, for verify to send again
	var found *Snapshot            // the requirements' paths, when read with paths
	var foundKeys []string         // their keys, when read with paths: d.Requires' in order
	var discovered *Snapshot       // what a Refiner's Discover read
	if pr, ok := pl.(Prober); ok {
		if err := pr.Probe(ctx, c, d); err != nil {
			tp.Error = fmt.Sprintf("switch %s: %v", sw.Name, err)
			return tp
		}
	}
	if r, ok := pl.(Refiner); ok {
		// Read what the payload depends on, then plan against it.
		found, err := e.read(ctx, cn, sw, d.Encoding, r.Discover(d), nil, withBasis, nil)
		if err != nil {
			tp.Error = err.Error()
			return tp
		}
		if err := r.Refine(d, found.lookup); err != nil {
			tp.Error = fmt.Sprintf("switch %s: %v", sw.Name, err)
			return tp
		}
		discovered = found
		if err := staleOwned(ctx, c, sw, d); err != nil {
			tp.Error = err.Error()
			return tp
		}
		// The owned paths usually lie inside what was just read: no
		// second Get.
		paths, keys = ownedPaths(d.SetRequest(), nil)
		if snap = found.within(paths); snap == nil {
			if snap, err = observe(ctx, c, sw, paths); err != nil {
				tp.Error = err.Error()
				return tp
			}
		}
	} else if len(d.Owned) > 0 && withBasis {
		if _, err := e.read(ctx, cn, sw, d.Encoding, nil, nil, false, nil); err != nil {
			tp.Error = err.Error()
			return tp
		}
		if err := staleOwned(ctx, c, sw, d); err != nil {
			tp.Error = err.Error()
			return tp
		}
		paths, keys = ownedPaths(d.SetRequest(), nil)
		if snap, err = observe(ctx, c, sw, paths); err != nil {
			tp.Error = err.Error()
			return tp
		}
	} else {
		values = d.decodedValues() // the values compile built, not decoded again
		paths, keys = ownedPaths(d.SetRequest(), values)
		// The requirements are read in the same Get as the owned paths:
		// one round trip, for a plan only shown and for apply's (a Get
		// of their own, 34 paths on an SR Linux switch, cost apply one
		// RPC and 1,000 allocations per switch more). They come first,
		// so that the answers come in the order asked however many
		// owned paths a fresh switch lacks, and verify sends the owned
		// paths' tail of the same request. A plan with a basis keeps
		// its read of the owned paths alone: the basis hashes them.
		asked, askedKeys := paths, keys
		if !withBasis && len(d.Requires) > 0 {
			asked, askedKeys = withRequirements(paths, keys, d.Requires)
		}
		// The stale-object rule's lists (d.Owned; a plan with a basis
		// reads them apart, above) lead the same Get: one round trip.
		// Stale entries are rare (a class renamed or removed): only where
		// the lists hold an entry that may be one does the rule read its
		// scopes, and only where it finds one is the switch read again
		// with the deletes, so that the deleted entries are in the plan's
		// read and apply's backup.
		ownedP, ownedK := ownedLists(d)
		if len(ownedP) > 0 && !apart(ownedK, askedKeys) {
			// A path asked twice: the rule reads on its own.
			if err := staleOwned(ctx, c, sw, d); err != nil {
				tp.Error = err.Error()
				return tp
			}
			ownedP, ownedK = nil, nil
			paths, keys = ownedPaths(d.SetRequest(), values)
			asked, askedKeys = paths, keys
			if !withBasis && len(d.Requires) > 0 {
				asked, askedKeys = withRequirements(paths, keys, d.Requires)
			}
		}
		if len(ownedP) > 0 {
			asked, askedKeys = slices.Concat(ownedP, asked), slices.Concat(ownedK, askedKeys)
		}
		if snap, err = e.read(ctx, cn, sw, d.Encoding, asked, askedKeys, withBasis, &get); err != nil {
			tp.Error = err.Error()
			return tp
		}
		if no := len(ownedP); no > 0 {
			deletes := len(d.Deletes)
			maybe := mayBeStale(d, ownedP, snap.Entries[:no])
			clear(snap.Entries[:no])
			snap.Entries = snap.Entries[no:]
			asked, askedKeys = asked[no:], askedKeys[no:]
			if get != nil {
				get = get.From(no)
			}
			if maybe {
				if err := staleOwned(ctx, c, sw, d); err != nil {
					tp.Error = err.Error()
					return tp
				}
			}
			if len(d.Deletes) > deletes {
				paths, keys = ownedPaths(d.SetRequest(), values)
				asked, askedKeys = paths, keys
				if len(d.Requires) > 0 {
					asked, askedKeys = withRequirements(paths, keys, d.Requires)
				}
				if snap, err = e.read(ctx, cn, sw, d.Encoding, asked, askedKeys, withBasis, &get); err != nil {
					tp.Error = err.Error()
					return tp
				}
			}
		}
		if nr := len(asked) - len(paths); nr > 0 {
			found = &Snapshot{Version: snap.Version, Switch: snap.Switch, Platform: snap.Platform, Address: snap.Address, Taken: snap.Taken,
				Entries: snap.Entries[:nr:nr]}
			foundKeys = askedKeys[:nr]
			snap.Entries = snap.Entries[nr:]
			// Verify's Get of the owned paths is the tail of this one:
			// nothing marshalled again (nil: verify prepares its own).
			if get != nil {
				get = get.From(nr)
			}
		}
	}
	if e.KeepReadBacks {
		e.keepReadBack(sw, cn, snap, discovered)
	}
	if len(d.Requires) > 0 {
		var lacks []plan.Lack
		if found != nil {
			lacks = checkRequirements(found, d.Requires, foundKeys)
			// The requirements' entries share the array of snap's,
			// which apply keeps as the backup: not their values.
			clear(found.Entries)
		} else if lacks, err = requirements(ctx, c, sw, d.Requires); err != nil {
			tp.Error = err.Error()
			return tp
		}
		d.Lacks = append(d.Lacks, lacks...)
	}
	tp.Lacks = d.Lacks
	tp.Notes = d.Notes
	req := d.SetRequest()
	tp.Basis = snap.Basis
	if values == nil {
		values = d.decodedValues() // the values compile built, not decoded again
	}
	changes, err := compare(d, snap, q, values)
	if err != nil {
		tp.Error = err.Error()
		return tp
	}
	values.dropSources()
	// Delete only what is there: some targets (sonic-gnmi's JSON Patch)
	// refuse to remove a path that does not exist.
	var dels []*gnmipb.Path
	for _, p := range req.GetDelete() {
		if en, _ := snap.entry(jtree.PathKey(p)); en.Exists {
			dels = append(dels, p)
		}
	}
	if len(dels) < len(req.GetDelete()) {
		// apply reads back exactly the paths of the payload: the basis
		// must be of those.
		req.Delete = dels
		oldKeys := keys
		paths, keys = ownedPaths(req, values)
		// The deletes lead the owned paths: where only absent ones went,
		// the rest is the tail of the Get just sent, and verify sends
		// that tail (nothing marshalled again); else it prepares its own.
		if k := len(oldKeys) - len(keys); get == nil || k < 0 || !slices.Equal(oldKeys[k:], keys) {
			get = nil
		} else if get = get.From(k); get != nil {
			paths = get.Paths()
		}
		keep := make(map[string]bool, len(keys))
		for _, k := range keys {
			keep[k] = true
		}
		snap.Entries = slices.DeleteFunc(snap.Entries, func(en Entry) bool { return !keep[en.Path] })
		if !e.NoPayload {
			snap.Basis = snap.basis()
		}
		tp.Basis = snap.Basis
	}
	var payload []byte
	if !e.NoPayload {
		if payload, err = protojson.Marshal(req); err != nil {
			tp.Error = fmt.Sprintf("switch %s: encode SetRequest: %v", sw.Name, err)
			return tp
		}
	}
	// A SetRequest the switch would refuse for what it lacks is not
	// checked again: the lack already says why, and how to fix it.
	if e.DeviceCheck != nil && len(changes) > 0 && len(tp.Refusals()) == 0 {
		notes, err := e.DeviceCheck(ctx, c, sw, req)
		if err != nil {
			tp.Error = fmt.Sprintf("switch %s: the device would refuse this SetRequest: %v", sw.Name, err)
			return tp
		}
		tp.Notes = append(tp.Notes, notes...)
	}
	tp.Payload = payload
	tp.Changes = changes
	if !e.ShowOnly {
		e.remember(sw.Name, &planned{values: values, snap: snap, req: req, paths: paths, keys: keys, get: get, payload: payload})
	}
	e.log().Info("planned", "target", sw.Name, "changes", len(changes))
	return tp
}

// requiredModels are the YANG modules a target of each platform must
// announce in Capabilities before fabricctl writes to it. SONiC is absent:
// sonic-gnmi's CONFIG_DB paths are not YANG-modelled in Capabilities.
var requiredModels = map[intent.Platform][]string{
	intent.PlatformSRLinux:    {"srl_nokia-qos"},
	intent.PlatformEOS:        {"openconfig-qos"},
	intent.PlatformOpenConfig: {"openconfig-qos"},
}

// read checks the target announces the platform's models and speaks the
// encoding the platform compiled to, and reads paths into a snapshot.
func (e *Engine) read(ctx context.Context, cn *conn, sw *intent.Switch, enc gnmipb.Encoding, paths []*gnmipb.Path, keys []string, withBasis bool, get **transport.PreparedGet) (*Snapshot, error) {
	caps, err := e.capabilities(ctx, cn, sw)
	if err != nil {
		return nil, err
	}
	if enc != gnmipb.Encoding_JSON && enc != caps.Encoding && !slices.Contains(caps.Encodings, enc) {
		return nil, fmt.Errorf("switch %s: target does not support encoding %s (announces %v)", sw.Name, enc, caps.Encodings)
	}
	// A basis hashes the JSON text of every value: a plan with one reads
	// in full.
	return observeAs(ctx, cn.c, sw, paths, keys, !e.ShowOnly || withBasis, withBasis, get)
}

// decodePayload reads a TargetPlan's SetRequest back.
func decodePayload(tp *plan.TargetPlan) (*gnmipb.SetRequest, error) {
	if len(tp.Payload) == 0 {
		return nil, fmt.Errorf("switch %s: plan has no payload", tp.Name)
	}
	req := &gnmipb.SetRequest{}
	if err := protojson.Unmarshal(tp.Payload, req); err != nil {
		return nil, fmt.Errorf("switch %s: plan payload: %w", tp.Name, err)
	}
	return req, nil
}

// requirements reads the paths of reqs in one Get (a path the switch does
// not have is absent, not an error) and returns what each Check finds
// lacking.
func requirements(ctx context.Context, c *transport.Client, sw *intent.Switch, reqs []Requirement) ([]plan.Lack, error) {
	paths := make([]*gnmipb.Path, len(reqs))
	for i, r := range reqs {
		paths[i] = r.Path
	}
	snap, err := observeAs(ctx, c, sw, paths, nil, false, false, nil)
	if transport.Code(err) == codes.NotFound {
		snap, err = &Snapshot{}, nil // one path, which the switch does not have
	}
	if err != nil {
		return nil, fmt.Errorf("switch %s: read what the intent relies on: %w", sw.Name, err)
	}
	return checkRequirements(snap, reqs, nil), nil
}

// checkRequirements is what each Check of reqs finds lacking in snap, a
// read of their paths. keys, when not nil, are the PathKeys of reqs'
// paths, as snap's entries are in the same order (withRequirements): a
// value there is taken without working its key out again.
func checkRequirements(snap *Snapshot, reqs []Requirement, keys []string) []plan.Lack {
	var lacks []plan.Lack
	for i, r := range reqs {
		if r.Check == nil {
			continue
		}
		var v any
		ok := false
		if keys != nil {
			if ei := snap.entryIndexAt(keys[i], i); ei >= 0 && snap.Entries[ei].Exists {
				if ev, err := snap.Entries[ei].value(); err == nil {
					v, ok = ev, true
				}
			}
		}
		if !ok {
			v, ok = snap.lookup(r.Path)
		}
		if l := r.Check(v, ok && !isEmpty(v), snap.lookup); l != nil {
			lacks = append(lacks, *l)
		}
	}
	return lacks
}

// withRequirements is the paths of reqs, in order, followed by paths
// (keys: their distinct PathKeys), for one Get of both; paths and keys as
// they are when a requirement's path is one of paths or a CLI setting, or
// repeats. Only the requirements' keys are indexed: a switch has a few
// of them against a few hundred owned paths. The requirements first: a
// switch answers the paths it has in the order asked, and the reply
// reader looks for an answer's path among the next few asked after the
// last one answered (transport's replyReader, observeAs's answered), so
// a fresh switch, which lacks all of its owned paths, answers the
// requirements without a gap of a few hundred paths before them (an index
// of every asked path, twice, otherwise).
func withRequirements(paths []*gnmipb.Path, keys []string, reqs []Requirement) ([]*gnmipb.Path, []string) {
	if len(keys) != len(paths) || slices.ContainsFunc(paths, isCLIPath) {
		return paths, keys
	}
	outP := make([]*gnmipb.Path, 0, len(paths)+len(reqs))
	outK := make([]string, 0, len(paths)+len(reqs))
	reqKeys := make(map[string]bool, len(reqs))
	for _, r := range reqs {
		k := jtree.PathKey(r.Path)
		if reqKeys[k] || isCLIPath(r.Path) {
			return paths, keys
		}
		reqKeys[k] = true
		outP, outK = append(outP, r.Path), append(outK, k)
	}
	for _, k := range keys {
		if reqKeys[k] {
			return paths, keys
		}
	}
	return append(outP, paths...), append(outK, keys...)
}

// errorsOf joins the per-target errors of a plan: a target that could not
// be planned, or that lacks what its SetRequest needs (Lack.Refuses).
func errorsOf(p *plan.Plan) error {
	errs := readErrorsOf(p)
	for _, t := range p.Targets {
		if t.Error != "" {
			continue
		}
		for _, l := range t.Refusals() {
			errs = append(errs, fmt.Errorf("%s %s: %s", t.Kind, t.Name, l))
		}
	}
	return errors.Join(errs...)
}

func readErrorsOf(p *plan.Plan) []error {
	var errs []error
	for _, t := range p.Targets {
		if t.Error != "" {
			errs = append(errs, errors.New(t.Error))
		}
	}
	return errs
}

// Errors returns the per-target errors of a plan joined, nil when none:
// targets that could not be planned and targets whose lacks refuse the
// plan (plan and apply stop at both).
func Errors(p *plan.Plan) error { return errorsOf(p) }

// ReadErrors returns only the errors of targets that could not be planned
// (read, compiled): diff reports the others' lacks as drift.
func ReadErrors(p *plan.Plan) error { return errors.Join(readErrorsOf(p)...) }
