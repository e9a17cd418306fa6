package switchdrv

import (
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
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/fabricctl/fabricctl/intent"
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
	// BackupDir receives one snapshot file per switch before any write
	// (required by Apply).
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

	progressMu sync.Mutex
}

// Event is one step of one switch during Apply, for a progress display.
type Event struct {
	Switch string
	Step   string // backup, set, verify, applied, failed, rollback, rolled-back, rollback-failed, skipped
	Detail string
	Err    error
	Took   time.Duration
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
	desired := make([]*Desired, len(sws))
	quirks := make([]Quirks, len(sws))
	plats := make([]Platform, len(sws))
	compileErrs := make([]error, len(sws))
	for i, sw := range sws {
		p, err := e.Registry.Lookup(sw.Platform)
		if err != nil {
			return nil, fmt.Errorf("switch %s: %w", sw.Name, err)
		}
		if quirks[i], err = e.quirks(p); err != nil {
			return nil, fmt.Errorf("switch %s: %w", sw.Name, err)
		}
		plats[i] = p
		desired[i], compileErrs[i] = p.Compile(f, sw)
	}
	out := &plan.Plan{Version: plan.FormatVersion, Fabric: f.Name, Created: time.Now().UTC(), Targets: make([]plan.TargetPlan, len(sws))}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(e.parallel())
	for i, sw := range sws {
		g.Go(func() error {
			if compileErrs[i] != nil {
				out.Targets[i] = plan.TargetPlan{Name: sw.Name, Kind: plan.KindSwitch, Platform: string(sw.Platform),
					Changes: []plan.Change{}, Error: fmt.Sprintf("switch %s: compile: %v", sw.Name, compileErrs[i])}
				return nil
			}
			out.Targets[i] = e.planOne(gctx, sw, plats[i], desired[i], quirks[i])
			return nil
		})
	}
	_ = g.Wait()
	out.Sort()
	return out, nil
}

func (e *Engine) planOne(ctx context.Context, sw *intent.Switch, pl Platform, d *Desired, q Quirks) plan.TargetPlan {
	tp := plan.TargetPlan{Name: sw.Name, Kind: plan.KindSwitch, Platform: string(sw.Platform), Changes: []plan.Change{}}
	c, err := transport.Dial(ctx, *sw, e.Transport)
	if err != nil {
		tp.Error = err.Error()
		return tp
	}
	defer c.Close()
	var snap *Snapshot
	if r, ok := pl.(Refiner); ok {
		// Read what the payload depends on, then plan against it.
		found, err := e.read(ctx, c, sw, d.Encoding, r.Discover(d))
		if err != nil {
			tp.Error = err.Error()
			return tp
		}
		if err := r.Refine(d, found.lookup); err != nil {
			tp.Error = fmt.Sprintf("switch %s: %v", sw.Name, err)
			return tp
		}
		if err := staleOwned(ctx, c, sw, d); err != nil {
			tp.Error = err.Error()
			return tp
		}
		// The owned paths usually lie inside what was just read: no
		// second Get.
		if snap = found.within(ownedPaths(d.SetRequest())); snap == nil {
			if snap, err = observe(ctx, c, sw, ownedPaths(d.SetRequest())); err != nil {
				tp.Error = err.Error()
				return tp
			}
		}
	} else if len(d.Owned) > 0 {
		if _, err := e.read(ctx, c, sw, d.Encoding, nil); err != nil {
			tp.Error = err.Error()
			return tp
		}
		if err := staleOwned(ctx, c, sw, d); err != nil {
			tp.Error = err.Error()
			return tp
		}
		if snap, err = observe(ctx, c, sw, ownedPaths(d.SetRequest())); err != nil {
			tp.Error = err.Error()
			return tp
		}
	} else if snap, err = e.read(ctx, c, sw, d.Encoding, ownedPaths(d.SetRequest())); err != nil {
		tp.Error = err.Error()
		return tp
	}
	tp.Notes = d.Notes
	req := d.SetRequest()
	tp.Basis = snap.Basis
	changes, err := Compare(d, snap, q)
	if err != nil {
		tp.Error = err.Error()
		return tp
	}
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
		keep := map[string]bool{}
		for _, p := range ownedPaths(req) {
			keep[jtree.PathKey(p)] = true
		}
		snap.Entries = slices.DeleteFunc(snap.Entries, func(en Entry) bool { return !keep[en.Path] })
		tp.Basis = snap.basis()
	}
	payload, err := protojson.Marshal(req)
	if err != nil {
		tp.Error = fmt.Sprintf("switch %s: encode SetRequest: %v", sw.Name, err)
		return tp
	}
	if e.DeviceCheck != nil && len(changes) > 0 {
		notes, err := e.DeviceCheck(ctx, c, sw, req)
		if err != nil {
			tp.Error = fmt.Sprintf("switch %s: the device would refuse this SetRequest: %v", sw.Name, err)
			return tp
		}
		tp.Notes = append(tp.Notes, notes...)
	}
	tp.Payload = payload
	tp.Changes = changes
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
func (e *Engine) read(ctx context.Context, c *transport.Client, sw *intent.Switch, enc gnmipb.Encoding, paths []*gnmipb.Path) (*Snapshot, error) {
	caps, err := c.Capabilities(ctx, requiredModels[sw.Platform]...)
	if err != nil {
		return nil, err
	}
	if enc != gnmipb.Encoding_JSON && enc != caps.Encoding && !slices.Contains(caps.Encodings, enc) {
		return nil, fmt.Errorf("switch %s: target does not support encoding %s (announces %v)", sw.Name, enc, caps.Encodings)
	}
	return observe(ctx, c, sw, paths)
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

// errorsOf joins the per-target errors of a plan.
func errorsOf(p *plan.Plan) error {
	var errs []error
	for _, t := range p.Targets {
		if t.Error != "" {
			errs = append(errs, errors.New(t.Error))
		}
	}
	return errors.Join(errs...)
}

// Errors returns the per-target errors of a plan joined, nil when none.
func Errors(p *plan.Plan) error { return errorsOf(p) }
