// Package watch is fabricctl watch: it streams every switch's queue, PFC,
// ECN, drop and PFC-watchdog counters with gNMI Subscribe STREAM (SAMPLE,
// at the paths validate reads once), watches the subtrees fabricctl owns
// with ON_CHANGE for drift, and exports both as Prometheus metrics.
//
// Every switch has its own session: a switch that fails or disconnects
// shows fabricctl_target_up 0 and is reconnected with exponential backoff,
// without touching the others.
package watch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/experimental"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
	"github.com/fabricctl/fabricctl/validate"
)

// Options configure a Watcher.
type Options struct {
	Fabric *intent.Fabric
	// Switches limits the watch to these switches (nil = all).
	Switches []string
	// Shard, when Count > 1, limits it further to the switches this shard
	// owns (Shard.Owns); a shard may own none of a small fabric's.
	Shard Shard
	// Detail chooses the priorities with per-port series (DetailAll when
	// empty).
	Detail Detail
	// NonZero exports a per-port counter only while its value is not zero
	// (a queue that never dropped has no drops series): fewer series on a
	// healthy fabric, at the price that a series appears with its first
	// non-zero value, so an increase() over a window that holds its first
	// sample misses that first step.
	NonZero bool
	// Transport configures the gNMI clients (TLS, credentials, logging).
	Transport transport.Options
	// SampleInterval is the counters' SAMPLE interval (DefaultSampleInterval when 0).
	SampleInterval time.Duration
	// Engine, when set, enables drift: the owned subtrees are watched with
	// ON_CHANGE and each change (and every DriftInterval) re-plans the switch
	// exactly as fabricctl diff does.
	Engine *switchdrv.Engine
	// DriftInterval is the full drift re-check period (DefaultDriftInterval
	// when 0); it also covers targets that refuse ON_CHANGE and EOS CLI
	// settings, which cannot be subscribed to.
	DriftInterval time.Duration
	// DriftDebounce waits this long after a change before re-planning, so a
	// burst of updates costs one plan (DefaultDriftDebounce when 0).
	DriftDebounce time.Duration
	// BackoffMin and BackoffMax bound the reconnect backoff (1s and 60s when 0).
	BackoffMin, BackoffMax time.Duration
	// Stale ends a session that delivered no sample for this long
	// (3 x SampleInterval when 0): a hung target looks down, not frozen.
	Stale time.Duration
	// MaxStarting bounds the sessions between their dial and their
	// initial sync at once (DefaultMaxStarting when 0); the others wait
	// for a slot before they dial.
	MaxStarting int
	Log         *slog.Logger
}

// Defaults.
const (
	DefaultSampleInterval = 10 * time.Second
	DefaultDriftInterval  = 5 * time.Minute
	DefaultDriftDebounce  = time.Second
	streamWindow          = 64 << 10
	writeBuffer           = 4 << 10
	// DefaultMaxStarting: what many sessions starting at once hold is
	// bounded by this many (each its TLS handshake, its subscription
	// request, about 90 KB for a 64-port SR Linux switch, and its initial
	// sync's full 64 KiB window, unread while the collector catches up).
	// All of a 2,000-switch fabric started at once held 125 MiB of unread
	// frames alone. 256 sessions at 100 ms round trip still bring up
	// 2,000 switches (10 windows each) in about 8 s.
	DefaultMaxStarting = 256
)

// Watcher streams the switches of a fabric.
type Watcher struct {
	opts                      Options
	updates                   atomic.Uint64
	reloadsOK, reloadsRefused atomic.Uint64

	mu      sync.Mutex // guards what follows
	fabric  *intent.Fabric
	prios   []int
	targets []*target
	shapes  map[intent.Platform]*shapeCache // kept across reloads
	running *runState                       // nil until Run

	// starting holds a token per session between its dial and its
	// initial sync (Options.MaxStarting).
	starting chan struct{}

	// scrapeCopies pools the per-scrape copies of the switches' counters
	// (a *[]countersCopy).
	scrapeCopies sync.Pool
}

type runState struct {
	ctx     context.Context
	wg      sync.WaitGroup
	stopped bool // Run is waiting for the targets to end: start none (w.mu)
}

type target struct {
	w   *Watcher
	sw  *intent.Switch
	ctr *switchCounters
	log *slog.Logger
	// key is what the switch's counter session depends on (reload keeps a
	// session whose key did not change).
	key   string
	drift atomic.Pointer[driftState]

	up         atomic.Bool
	lastSample atomic.Int64 // when the last counter update arrived, Unix ns; 0 = never
	reconnects atomic.Uint64
	driftPaths atomic.Int64 // -1 = unknown
	driftFails atomic.Uint64
	driftKick  chan struct{}

	cancel context.CancelFunc // set by start
	done   chan struct{}      // closed when the target's goroutines ended
}

// driftState is what drift compares a switch with; a reload that keeps the
// switch's session swaps it.
type driftState struct {
	fabric     *intent.Fabric
	desired    *switchdrv.Desired // nil: drift off, or compileErr
	compileErr error
	owned      string // the ON_CHANGE paths, as one string (reload compares them)
}

// New checks the options and prepares one session per switch.
func New(o Options) (*Watcher, error) {
	if o.Fabric == nil {
		return nil, errors.New("watch: no fabric")
	}
	if o.SampleInterval <= 0 {
		o.SampleInterval = DefaultSampleInterval
	}
	if o.DriftInterval <= 0 {
		o.DriftInterval = DefaultDriftInterval
	}
	if o.DriftDebounce <= 0 {
		o.DriftDebounce = DefaultDriftDebounce
	}
	if o.BackoffMin <= 0 {
		o.BackoffMin = time.Second
	}
	if o.BackoffMax < o.BackoffMin {
		o.BackoffMax = max(60*time.Second, o.BackoffMin)
	}
	if o.Stale <= 0 {
		o.Stale = 3 * o.SampleInterval
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.MaxStarting <= 0 {
		o.MaxStarting = DefaultMaxStarting
	}
	// Memory stays bounded when watch falls behind (at start every switch
	// sends a whole sample at once: ~640 KB for a 64-port SR Linux switch,
	// 1.3 GB for 2,000): a static HTTP/2 window of gRPC's initial 64 KiB,
	// without its bandwidth-delay growth, caps what each connection holds
	// unread. A round still arrives in 10 windows, ~1 s at 100 ms RTT.
	// The frames come from a bounded free list of the watch's own
	// (frameBuffers), not from a sync.Pool the collector empties only
	// every other cycle. What watch writes is small (the subscription,
	// window updates, pings): a 4 KiB write buffer instead of gRPC's
	// 32 KiB, which a connection holds from a frame's write to its flush
	// (2,000 TLS connections on a loaded machine held 70 MiB of them).
	o.Transport.DialOptions = append(slices.Clip(o.Transport.DialOptions),
		grpc.WithInitialWindowSize(streamWindow), grpc.WithInitialConnWindowSize(streamWindow),
		grpc.WithWriteBufferSize(writeBuffer), experimental.WithBufferPool(newFrameBuffers(frameBudget)))
	w := &Watcher{opts: o, shapes: map[intent.Platform]*shapeCache{}, starting: make(chan struct{}, o.MaxStarting)}
	prios, targets, err := w.build(o.Fabric)
	if err != nil {
		return nil, err
	}
	w.fabric, w.prios, w.targets = o.Fabric, prios, targets
	return w, nil
}

// build prepares the targets of a fabric (w.mu held, or w not shared yet).
func (w *Watcher) build(f *intent.Fabric) ([]int, []*target, error) {
	o := w.opts
	sws, err := switchdrv.Select(f, o.Switches)
	if err != nil {
		return nil, nil, err
	}
	if len(sws) == 0 {
		return nil, nil, errors.New("watch: the intent has no switches (inventory.switches)")
	}
	sws = o.Shard.pick(sws)
	prios := o.Detail.Priorities(&f.Policy)
	var targets []*target
	for _, sw := range sws {
		if w.shapes[sw.Platform] == nil {
			w.shapes[sw.Platform] = newShapeCache()
		}
		ports := make([]string, len(sw.Ports))
		for i, p := range sw.Ports {
			ports[i] = p.Name
		}
		src := &validate.SwitchCounters{Switch: sw.Name, Platform: sw.Platform, Ports: ports}
		if _, _, err := src.Paths(); err != nil {
			return nil, nil, err
		}
		t := &target{w: w, sw: sw, ctr: newSwitchCounters(src, prios, w.shapes[sw.Platform]), log: o.Log.With("switch", sw.Name),
			key: sessionKey(sw), driftKick: make(chan struct{}, 1)}
		t.driftPaths.Store(-1)
		ds := &driftState{fabric: f}
		if o.Engine != nil {
			p, err := o.Engine.Registry.Lookup(sw.Platform)
			if err != nil {
				return nil, nil, fmt.Errorf("switch %s: %w", sw.Name, err)
			}
			ds.desired, ds.compileErr = p.Compile(f, sw)
			if ds.desired != nil {
				var ps []string
				for _, p := range ownedPaths(ds.desired) {
					ps = append(ps, transport.PathString(p))
				}
				ds.owned = strings.Join(ps, "\n")
			}
		}
		t.drift.Store(ds)
		targets = append(targets, t)
	}
	return prios, targets, nil
}

// sessionKey is what a switch's counter session depends on: where and how
// it is reached and which ports it has (not where in the intent it is
// written).
func sessionKey(sw *intent.Switch) string {
	c, tl := sw.Credentials, sw.TLS
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%s|%s|%q|%q|%q|%q|%q|%q|%q|%q|%q|%v|%v|%q|", sw.Name, sw.Platform, sw.Address,
		c.UsernameEnv, c.PasswordEnv, c.UsernameFile, c.PasswordFile, tl.CA, tl.Cert, tl.Key, tl.ServerName, sw.Profile, tl.Insecure, tl.SkipVerify, sw.Proxy)
	for _, p := range sw.Ports {
		fmt.Fprintf(&b, "%q,", p.Name)
	}
	return b.String()
}

// PrioritiesInUse are the priorities of the policy's classes, ascending:
// the only priorities watch exports series for (bounded cardinality).
func PrioritiesInUse(p *intent.Policy) []int {
	var out []int
	for _, c := range p.Classes {
		if !slices.Contains(out, c.Priority) {
			out = append(out, c.Priority)
		}
	}
	slices.Sort(out)
	return out
}

// Updates is the number of counter updates ingested so far.
func (w *Watcher) Updates() uint64 { return w.updates.Load() }

// current returns the targets and fabric in force.
func (w *Watcher) current() ([]*target, *intent.Fabric) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.targets, w.fabric
}

// Run watches every switch until ctx ends; one switch's failure never
// stops the others. It returns nil when ctx is cancelled.
func (w *Watcher) Run(ctx context.Context) error {
	w.mu.Lock()
	if w.running != nil {
		w.mu.Unlock()
		return errors.New("watch: Run called twice")
	}
	rs := &runState{ctx: ctx}
	w.running = rs
	for _, t := range w.targets {
		w.start(t)
	}
	w.mu.Unlock()
	<-ctx.Done()
	w.mu.Lock()
	rs.stopped = true // a Reload from now on starts no target
	w.mu.Unlock()
	rs.wg.Wait()
	return nil
}

// start runs a target's goroutines (w.mu held, Run started).
func (w *Watcher) start(t *target) {
	rs := w.running
	if rs.stopped {
		return
	}
	ctx, cancel := context.WithCancel(rs.ctx)
	t.cancel, t.done = cancel, make(chan struct{})
	rs.wg.Add(1)
	go func() {
		defer rs.wg.Done()
		defer close(t.done)
		if w.opts.Engine == nil {
			t.run(ctx) // in this goroutine: a stack less per switch
			return
		}
		var wg sync.WaitGroup
		wg.Go(func() { t.run(ctx) })
		wg.Go(func() { t.driftLoop(ctx) })
		wg.Wait()
	}()
}

// stop ends a target's goroutines and waits for them (w.mu held).
func (t *target) stop() {
	if t.cancel != nil {
		t.cancel()
		<-t.done
	}
}

// Reloaded says what a reload did, by switch name.
type Reloaded struct {
	Added, Removed, Restarted, Kept []string
}

// ReloadFrom loads an intent with load and reloads it; either failing is
// counted as a refused reload (fabricctl_watch_intent_reloads_total) and
// leaves the running watch as it was.
func (w *Watcher) ReloadFrom(load func() (*intent.Fabric, error)) (Reloaded, error) {
	f, err := load()
	var r Reloaded
	if err == nil {
		r, err = w.Reload(f)
	}
	if err != nil {
		w.reloadsRefused.Add(1)
		return r, err
	}
	w.reloadsOK.Add(1)
	return r, nil
}

// Reload replaces the intent while watch runs. The new intent is checked as
// New checks it; an error leaves everything as it was. Switches that are
// new get a session, switches no longer in it (or no longer selected) are
// stopped, and a switch whose session depends on what changed (its
// address, platform, credentials, TLS, ports; or the priorities in use,
// which change every switch's series) is restarted. Every other switch
// keeps its session and counters; drift compares it with the new intent
// from now on (and at once). A switch whose owned paths changed restarts,
// so that its ON_CHANGE subscription covers them.
func (w *Watcher) Reload(f *intent.Fabric) (Reloaded, error) {
	if f == nil {
		return Reloaded{}, errors.New("watch: no fabric")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	prios, fresh, err := w.build(f)
	if err != nil {
		return Reloaded{}, err
	}
	var r Reloaded
	old := map[string]*target{}
	for _, t := range w.targets {
		old[t.sw.Name] = t
	}
	samePrios := slices.Equal(prios, w.prios)
	next := make([]*target, 0, len(fresh))
	for _, nt := range fresh {
		name := nt.sw.Name
		ot := old[name]
		delete(old, name)
		if ot != nil && samePrios && ot.key == nt.key && ot.drift.Load().owned == nt.drift.Load().owned {
			ot.drift.Store(nt.drift.Load())
			if w.opts.Engine != nil {
				ot.kick()
			}
			next = append(next, ot)
			r.Kept = append(r.Kept, name)
			continue
		}
		if ot != nil {
			ot.stop()
			r.Restarted = append(r.Restarted, name)
		} else {
			r.Added = append(r.Added, name)
		}
		if w.running != nil {
			w.start(nt)
		}
		next = append(next, nt)
	}
	for _, t := range w.targets {
		if old[t.sw.Name] == t {
			t.stop()
			r.Removed = append(r.Removed, t.sw.Name)
		}
	}
	w.fabric, w.prios, w.targets = f, prios, next
	return r, nil
}

// run keeps a session open, reconnecting with exponential backoff and full
// jitter (a fabric-wide outage does not reconnect 2,000 switches at once).
func (t *target) run(ctx context.Context) {
	o := t.w.opts
	wait := o.BackoffMin
	for ctx.Err() == nil {
		start := time.Now()
		synced, err := t.session(ctx)
		t.up.Store(false)
		if ctx.Err() != nil {
			return
		}
		t.reconnects.Add(1)
		if synced && time.Since(start) > o.BackoffMax {
			wait = o.BackoffMin // it was healthy for a while: start over
		}
		t.log.Warn("switch session ended; reconnecting", "err", err, "backoff", wait)
		d := wait/2 + rand.N(wait/2+1)
		select {
		case <-ctx.Done():
			return
		case <-time.After(d):
		}
		wait = min(2*wait, o.BackoffMax)
	}
}

// session dials the switch, opens the counter stream (and the drift
// stream) and reads until an error. synced reports whether the counter
// stream delivered its initial sync.
func (t *target) session(ctx context.Context) (synced bool, err error) {
	// A slot among the sessions starting (Options.MaxStarting), held until
	// the initial sync or the session's end.
	select {
	case t.w.starting <- struct{}{}:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	starting := true
	release := func() {
		if starting {
			starting = false
			<-t.w.starting
		}
	}
	defer release()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	c, err := transport.Dial(ctx, *t.sw, t.dialOptions())
	if err != nil {
		return false, err
	}
	defer func() {
		cancel(nil) // the streams end before their connection does
		c.Close()
	}()
	st, npaths, err := t.subscribe(ctx, c)
	if err != nil {
		return false, err
	}
	if ds := t.drift.Load(); ds.desired != nil {
		go t.driftStream(ctx, c, ds.desired)
	}
	// The stale timer ends a session whose target stopped sampling: no
	// initial sync within Stale, or no update for Stale once the switch has
	// sent data (a SAMPLE subscription to paths with no data sends
	// nothing, and that switch is not hung). It is a timer that re-arms
	// itself, not a goroutine of its own (with the one start no longer
	// spawns without drift: 7 goroutines per switch instead of 9, about
	// 3 KB less stack each).
	var last atomic.Int64 // last update, unix ns; 0 = none yet
	var syncedFlag atomic.Bool
	start := time.Now()
	stale := t.w.opts.Stale
	period := max(stale/3, time.Millisecond)
	var check *time.Timer
	check = time.AfterFunc(time.Hour, func() { // armed below, once check is set
		if ctx.Err() != nil {
			return
		}
		if !syncedFlag.Load() && time.Since(start) > stale {
			cancel(fmt.Errorf("switch %s: no initial sync within %s", t.sw.Name, stale))
			return
		}
		if l := last.Load(); l != 0 && time.Since(time.Unix(0, l)) > stale {
			cancel(fmt.Errorf("switch %s: no counter sample for %s", t.sw.Name, stale))
			return
		}
		check.Reset(period)
	})
	check.Reset(period)
	defer check.Stop()
	var msg transport.RawMessage
	var sc rawScratch
	for {
		err := st.RecvRaw(&msg)
		if err == io.EOF {
			return synced, fmt.Errorf("switch %s: the target ended the counter stream", t.sw.Name)
		}
		if err != nil {
			if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil {
				return synced, cause
			}
			return synced, err
		}
		kind, n, err := t.ctr.ingestRaw(msg.B, &sc)
		if err != nil {
			return synced, fmt.Errorf("switch %s: counter stream: %w", t.sw.Name, err)
		}
		switch kind {
		case respSync:
			if !synced {
				synced = true
				syncedFlag.Store(true)
				t.up.Store(true)
				release()
				t.log.Info("switch streaming", "paths", npaths, "interval", t.w.opts.SampleInterval)
			}
		case respUpdate:
			now := time.Now().UnixNano()
			last.Store(now)
			t.lastSample.Store(now)
			t.w.updates.Add(uint64(n))
		}
	}
}

// subscribe opens the switch's counter stream, read as wire bytes
// (ingestRaw); it returns the number of paths subscribed. The paths and
// the request (about 90 KB for a 64-port SR Linux switch) are garbage once
// sent: a session that kept them for its lifetime held 44 MiB in a
// 512-switch shard while every session started at once.
func (t *target) subscribe(ctx context.Context, c *transport.Client) (*transport.Stream, int, error) {
	prefix, paths, err := t.ctr.src.Paths()
	if err != nil {
		return nil, 0, err
	}
	subs := make([]*gnmipb.Subscription, len(paths))
	for i, p := range paths {
		subs[i] = &gnmipb.Subscription{Path: p, Mode: gnmipb.SubscriptionMode_SAMPLE, SampleInterval: uint64(t.w.opts.SampleInterval)}
	}
	st, err := c.SubscribeStreamRaw(ctx, &gnmipb.SubscriptionList{Prefix: prefix, Subscription: subs})
	return st, len(paths), err
}

// dialOptions are the transport options of the switch's connection. Over
// TLS, gRPC's framer reads without a buffer of its own: crypto/tls already
// holds a whole record and hands out its plaintext from there, so gRPC's
// 32 KiB read buffer (kept by every TLS connection: gRPC pools it only for
// a bare TCP connection, grpc/internal/transport/readyreader, v1.85.0)
// copied the record once more. Plaintext keeps gRPC's pooled buffer,
// which saves a system call per frame header.
func (t *target) dialOptions() transport.Options {
	o := t.w.opts.Transport
	if !t.sw.TLS.Insecure && !o.Insecure {
		o.DialOptions = append(slices.Clip(o.DialOptions), grpc.WithReadBufferSize(0))
	}
	return o
}

// ownedPaths are the paths the desired SetRequest writes, except CLI
// settings (origin cli), which no target streams.
func ownedPaths(d *switchdrv.Desired) []*gnmipb.Path {
	req := d.SetRequest()
	var out []*gnmipb.Path
	seen := map[string]bool{}
	add := func(p *gnmipb.Path) {
		full := &gnmipb.Path{Origin: p.GetOrigin(), Elem: append(slices.Clone(req.GetPrefix().GetElem()), p.GetElem()...)}
		if full.Origin == "" {
			full.Origin = req.GetPrefix().GetOrigin()
		}
		k := transport.PathString(full)
		if full.Origin == "cli" || seen[k] {
			return
		}
		seen[k] = true
		out = append(out, full)
	}
	for _, p := range req.GetDelete() {
		add(p)
	}
	for _, u := range req.GetReplace() {
		add(u.GetPath())
	}
	for _, u := range req.GetUpdate() {
		add(u.GetPath())
	}
	return out
}

// driftStream subscribes ON_CHANGE to the owned subtrees; every change
// after the initial sync asks driftLoop to re-plan. A target that refuses
// is logged once per session; the periodic re-check still runs.
func (t *target) driftStream(ctx context.Context, c *transport.Client, desired *switchdrv.Desired) {
	paths := ownedPaths(desired)
	if len(paths) == 0 {
		return
	}
	// One subscription list per origin: a list has one prefix.
	byOrigin := map[string][]*gnmipb.Subscription{}
	var origins []string
	for _, p := range paths {
		o := p.GetOrigin()
		if _, ok := byOrigin[o]; !ok {
			origins = append(origins, o)
		}
		q := &gnmipb.Path{Elem: p.GetElem()}
		byOrigin[o] = append(byOrigin[o], &gnmipb.Subscription{Path: q, Mode: gnmipb.SubscriptionMode_ON_CHANGE})
	}
	for _, o := range origins {
		go func() {
			st, err := c.SubscribeStream(ctx, &gnmipb.SubscriptionList{Prefix: &gnmipb.Path{Origin: o}, Subscription: byOrigin[o]})
			if err != nil {
				t.log.Warn("drift ON_CHANGE subscription refused; drift is re-checked every interval only", "err", err)
				return
			}
			synced := false
			for {
				r, err := st.Recv()
				if err != nil {
					if ctx.Err() == nil {
						t.log.Warn("drift ON_CHANGE stream ended", "err", err)
					}
					return
				}
				if r.GetSyncResponse() {
					synced = true
				}
				if synced {
					// The sync itself kicks too: a (re)connected switch is
					// compared at once.
					t.kick()
				}
			}
		}()
	}
}

func (t *target) kick() {
	select {
	case t.driftKick <- struct{}{}:
	default:
	}
}

// driftLoop re-plans the switch after ON_CHANGE events (debounced) and
// every DriftInterval, exactly as fabricctl diff does.
func (t *target) driftLoop(ctx context.Context) {
	o := t.w.opts
	tk := time.NewTicker(o.DriftInterval)
	defer tk.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
		case <-t.driftKick:
			// Debounce: a burst of changes costs one plan.
			select {
			case <-ctx.Done():
				return
			case <-time.After(o.DriftDebounce):
			}
			select {
			case <-t.driftKick:
			default:
			}
		}
		t.checkDrift(ctx)
	}
}

func (t *target) checkDrift(ctx context.Context) {
	ds := t.drift.Load()
	if ds.compileErr != nil {
		t.driftFails.Add(1)
		t.log.Error("drift: the intent does not compile for this switch", "err", ds.compileErr)
		return
	}
	p, err := t.w.opts.Engine.Plan(ctx, ds.fabric, []string{t.sw.Name})
	if err == nil && len(p.Targets) == 1 && p.Targets[0].Error != "" {
		err = errors.New(p.Targets[0].Error)
	}
	if err != nil {
		if ctx.Err() == nil {
			t.driftFails.Add(1)
			t.log.Warn("drift check failed", "err", err)
		}
		return
	}
	// Drift as diff counts it: the paths apply would write, and what the
	// switch lacks that apply cannot write (plan.Lack).
	n := len(p.Targets[0].Lacks)
	for _, c := range p.Targets[0].Changes {
		if c.Action != plan.NoOp {
			n++
		}
	}
	if old := t.driftPaths.Swap(int64(n)); old != int64(n) {
		t.log.Info("drift", "paths", n)
	}
}
