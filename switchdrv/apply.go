package switchdrv

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"golang.org/x/sync/errgroup"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
)

// ErrRolledBack says apply failed on some switch and every switch changed in
// the run was restored from its backup and the restore verified by reading
// back. The fabric is as it was before the run.
var ErrRolledBack = errors.New("apply failed; every switch changed in this run was rolled back and verified")

// Statuses of a switch in a Result.
const (
	StatusUnchanged      = "unchanged"       // plan had no changes; nothing sent
	StatusApplied        = "applied"         // Set done and verified by reading back
	StatusFailed         = "failed"          // Set rejected or never sent; state verified unchanged
	StatusRolledBack     = "rolled-back"     // changed (or maybe changed), restored and verified
	StatusRollbackFailed = "rollback-failed" // restore or its verification failed: inspect by hand
	StatusSkipped        = "skipped"         // not started because of an earlier failure
	StatusStale          = "stale"           // observed state changed since the plan
)

// Result is the outcome of Apply, the JSON summary of `fabricctl apply`.
type Result struct {
	Fabric string `json:"fabric"`
	// Status: applied, no-changes, rolled-back, failed.
	Status  string         `json:"status"`
	Targets []TargetResult `json:"targets"`
}

// TargetResult is the outcome for one switch.
type TargetResult struct {
	Name     string `json:"name"`
	Platform string `json:"platform,omitempty"`
	Status   string `json:"status"`
	Changes  int    `json:"changes"`
	Backup   string `json:"backup,omitempty"`
	Error    string `json:"error,omitempty"`
	Millis   int64  `json:"ms"`
}

// work is the per-switch state of one apply run.
type work struct {
	tp      *plan.TargetPlan
	sw      *intent.Switch
	q       Quirks
	req     *gnmipb.SetRequest
	c       *transport.Client
	backup  *Snapshot
	res     *TargetResult
	start   time.Time
	sent    bool  // a Set was sent (its effect may be on the switch)
	setErr  error // the Set's own error, if any
	failure error
}

// Apply executes plan p on the fabric f: for each switch with changes, it
// reads the owned paths again and refuses the switch with plan.ErrStale when
// the state moved since planning, saves a backup, then sends the plan's one
// SetRequest and verifies it by reading back. Canary and Parallel stage the
// rollout. On any failure (including ctx cancellation) no new switch is
// started and every switch changed in this run is restored from its backup
// and verified; the error then wraps ErrRolledBack when all restores
// verified. Nothing is written anywhere before every selected switch was
// read, found current and backed up.
func (e *Engine) Apply(ctx context.Context, f *intent.Fabric, p *plan.Plan) (*Result, error) {
	res := &Result{Fabric: p.Fabric}
	if err := errorsOf(p); err != nil {
		return nil, fmt.Errorf("the plan has errors; fix them and plan again: %w", err)
	}
	var ws []*work
	for i := range p.Targets {
		tp := &p.Targets[i]
		if tp.Kind != plan.KindSwitch {
			continue
		}
		res.Targets = append(res.Targets, TargetResult{Name: tp.Name, Platform: tp.Platform, Status: StatusUnchanged, Changes: countChanges(tp)})
	}
	for i := range res.Targets {
		tr := &res.Targets[i]
		tp := targetOf(p, tr.Name)
		if !tp.HasChanges() {
			continue
		}
		sw := f.Switch(tp.Name)
		if sw == nil {
			return nil, fmt.Errorf("switch %s: in the plan but not in the intent", tp.Name)
		}
		req, err := decodePayload(tp)
		if err != nil {
			return nil, err
		}
		var q Quirks
		if plat, err := e.Registry.Lookup(sw.Platform); err == nil {
			if q, err = e.quirks(plat); err != nil {
				return nil, fmt.Errorf("switch %s: %w", sw.Name, err)
			}
		}
		tr.Status = StatusSkipped
		ws = append(ws, &work{tp: tp, sw: sw, q: q, req: req, res: tr})
	}
	if len(ws) == 0 {
		res.Status = "no-changes"
		return res, nil
	}
	if e.BackupDir == "" {
		return nil, errors.New("apply needs a backup directory")
	}
	defer func() {
		for _, w := range ws {
			if w.c != nil {
				w.c.Close()
			}
		}
	}()

	// 1. Read, check staleness, back up: all switches before any write.
	if err := e.each(ctx, ws, e.prepare); err != nil {
		for _, w := range ws {
			if w.failure != nil {
				w.res.Status, w.res.Error = StatusFailed, w.failure.Error()
				if errors.Is(w.failure, plan.ErrStale) {
					w.res.Status = StatusStale
				}
			}
		}
		res.Status = "failed"
		return res, fmt.Errorf("nothing was changed: %w", err)
	}

	// 2. Roll out in stages.
	var failed error
	for _, stage := range e.stages(ws) {
		if err := ctx.Err(); err != nil {
			failed = fmt.Errorf("interrupted: %w", err)
			break
		}
		if err := e.each(ctx, stage, e.applyOne); err != nil {
			failed = err
			break
		}
	}
	if failed == nil {
		res.Status = "applied"
		return res, nil
	}

	// 3. Roll back everything this run may have changed, even when ctx is
	// cancelled: a switch is left untouched, applied or rolled back.
	rctx := context.WithoutCancel(ctx)
	var rb []*work
	for _, w := range ws {
		if w.sent {
			rb = append(rb, w)
		}
	}
	rbErr := e.each(rctx, rb, e.rollback)
	for _, w := range ws {
		if !w.sent && w.res.Status == StatusSkipped {
			e.emit(Event{Switch: w.sw.Name, Step: "skipped"})
		}
	}
	if rbErr != nil {
		res.Status = "failed"
		return res, fmt.Errorf("apply failed: %w; ROLLBACK FAILED, inspect the switches and the backups in %s: %w", failed, e.BackupDir, rbErr)
	}
	res.Status = "rolled-back"
	return res, fmt.Errorf("%w: %w", ErrRolledBack, failed)
}

func countChanges(tp *plan.TargetPlan) int {
	n := 0
	for _, c := range tp.Changes {
		if c.Action != plan.NoOp {
			n++
		}
	}
	return n
}

func targetOf(p *plan.Plan, name string) *plan.TargetPlan {
	for i := range p.Targets {
		if p.Targets[i].Kind == plan.KindSwitch && p.Targets[i].Name == name {
			return &p.Targets[i]
		}
	}
	return nil
}

// stages splits the rollout: the canary first, then batches of Parallel;
// without a canary, one stage of everything (bounded by Parallel).
func (e *Engine) stages(ws []*work) [][]*work {
	if e.Canary <= 0 || e.Canary >= len(ws) {
		return [][]*work{ws}
	}
	out := [][]*work{ws[:e.Canary]}
	for rest := ws[e.Canary:]; len(rest) > 0; {
		n := min(e.parallel(), len(rest))
		out = append(out, rest[:n])
		rest = rest[n:]
	}
	return out
}

// each runs fn on every work item, at most Parallel at once; every item runs
// (no sibling cancellation) and the errors are joined in name order.
func (e *Engine) each(ctx context.Context, ws []*work, fn func(context.Context, *work) error) error {
	var g errgroup.Group
	g.SetLimit(e.parallel())
	var mu sync.Mutex
	var failed bool
	for _, w := range ws {
		g.Go(func() error {
			err := fn(ctx, w)
			w.failure = err // this step's outcome only
			if err != nil {
				mu.Lock()
				failed = true
				mu.Unlock()
			}
			return nil
		})
	}
	_ = g.Wait()
	if !failed {
		return nil
	}
	var errs []error
	for _, w := range ws {
		if w.failure != nil {
			errs = append(errs, w.failure)
		}
	}
	return errors.Join(errs...)
}

func (e *Engine) prepare(ctx context.Context, w *work) error {
	w.start = time.Now()
	c, err := transport.Dial(ctx, *w.sw, e.Transport)
	if err != nil {
		return err
	}
	w.c = c
	enc := gnmipb.Encoding_JSON_IETF
	if u := append(slices.Clone(w.req.GetReplace()), w.req.GetUpdate()...); len(u) > 0 && u[0].GetVal().GetJsonVal() != nil {
		enc = gnmipb.Encoding_JSON
	}
	snap, err := e.read(ctx, c, w.sw, enc, ownedPaths(w.req))
	if err != nil {
		return err
	}
	if snap.Basis != w.tp.Basis {
		return fmt.Errorf("switch %s: %w (basis %s, now %s)", w.sw.Name, plan.ErrStale, w.tp.Basis, snap.Basis)
	}
	path, err := WriteBackup(e.BackupDir, snap)
	if err != nil {
		return fmt.Errorf("switch %s: backup: %w", w.sw.Name, err)
	}
	w.backup, w.res.Backup = snap, path
	e.emit(Event{Switch: w.sw.Name, Step: "backup", Detail: path})
	e.log().Info("backed up", "target", w.sw.Name, "file", path)
	return nil
}

func (e *Engine) applyOne(ctx context.Context, w *work) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("switch %s: not started: %w", w.sw.Name, err)
	}
	e.emit(Event{Switch: w.sw.Name, Step: "set", Detail: fmt.Sprintf("%d changes", w.res.Changes)})
	w.sent = true
	if _, err := w.c.Set(ctx, w.req); err != nil {
		w.setErr = err
		err = e.explainSetError(w.sw, err)
		w.res.Status, w.res.Error = StatusFailed, err.Error()
		e.emit(Event{Switch: w.sw.Name, Step: "failed", Err: err, Took: time.Since(w.start)})
		return err
	}
	e.emit(Event{Switch: w.sw.Name, Step: "verify"})
	snap, err := observe(ctx, w.c, w.sw, ownedPaths(w.req))
	if err == nil {
		d := &Desired{Switch: w.sw.Name, Platform: w.sw.Platform, Replaces: w.req.GetReplace(), Updates: w.req.GetUpdate(), Deletes: w.req.GetDelete()}
		var left []plan.Change
		if left, err = Compare(d, snap, w.q); err == nil {
			// Leaves the switch added inside a replaced subtree are its
			// defaults, not a failed write: only missing or different
			// leaves, and subtrees still there that were deleted, fail
			// the verification.
			left = slices.DeleteFunc(left, func(c plan.Change) bool { return c.Action == plan.Delete && c.Reason != ReasonAbsent })
			if len(left) > 0 {
				err = fmt.Errorf("switch %s: verify: %d paths differ after the Set (first: %s %s)", w.sw.Name, len(left), left[0].Action, left[0].Path)
			}
		}
	}
	if err != nil {
		w.res.Status, w.res.Error = StatusFailed, err.Error()
		e.emit(Event{Switch: w.sw.Name, Step: "failed", Err: err, Took: time.Since(w.start)})
		return err
	}
	w.res.Status = StatusApplied
	w.res.Millis = time.Since(w.start).Milliseconds()
	e.emit(Event{Switch: w.sw.Name, Step: "applied", Detail: fmt.Sprintf("%d changes", w.res.Changes), Took: time.Since(w.start)})
	e.log().Info("applied", "target", w.sw.Name, "changes", w.res.Changes)
	return nil
}

// explainSetError lets the switch's platform say what a Set error means.
func (e *Engine) explainSetError(sw *intent.Switch, err error) error {
	if e.Registry == nil {
		return err
	}
	if p, lerr := e.Registry.Lookup(sw.Platform); lerr == nil {
		if x, ok := p.(SetErrorExplainer); ok {
			return x.ExplainSetError(err)
		}
	}
	return err
}

// rollback restores w from its backup and verifies. A Set that the switch
// rejected outright changed nothing: it is only verified, and restored if the
// read-back shows otherwise.
func (e *Engine) rollback(ctx context.Context, w *work) error {
	definite := w.setErr != nil && !errors.Is(w.setErr, transport.ErrOutcomeUnknown)
	if definite {
		if d, err := e.drift(ctx, w.c, w.sw, w.backup, w.q); err == nil && len(d) == 0 {
			w.res.Status = StatusFailed
			return nil
		}
	}
	e.emit(Event{Switch: w.sw.Name, Step: "rollback"})
	err := restoreWith(ctx, w.c, w.sw, w.backup, w.q)
	if err != nil {
		w.res.Status = StatusRollbackFailed
		w.res.Error = strings.TrimSpace(w.res.Error + "; rollback: " + err.Error())
		e.emit(Event{Switch: w.sw.Name, Step: "rollback-failed", Err: err})
		return err
	}
	w.res.Status = StatusRolledBack
	e.emit(Event{Switch: w.sw.Name, Step: "rolled-back", Detail: "verified"})
	e.log().Info("rolled back", "target", w.sw.Name)
	return nil
}

func (e *Engine) drift(ctx context.Context, c *transport.Client, sw *intent.Switch, want *Snapshot, q Quirks) ([]plan.Change, error) {
	paths, err := want.paths()
	if err != nil {
		return nil, err
	}
	got, err := observe(ctx, c, sw, paths)
	if err != nil {
		return nil, err
	}
	return Drift(want, got, q.BufferCellBytes), nil
}

// restoreWith sends snap's restore request and verifies by reading back.
func restoreWith(ctx context.Context, c *transport.Client, sw *intent.Switch, snap *Snapshot, q Quirks) error {
	paths, err := snap.paths()
	if err != nil {
		return err
	}
	current, err := observe(ctx, c, sw, paths)
	if err != nil {
		return fmt.Errorf("switch %s: read before restore: %w", sw.Name, err)
	}
	req, err := snap.RestoreRequest(current)
	if err != nil {
		return err
	}
	if _, err := c.Set(ctx, req); err != nil {
		return err
	}
	got, err := observe(ctx, c, sw, paths)
	if err != nil {
		return fmt.Errorf("switch %s: verify restore: %w", sw.Name, err)
	}
	if d := Drift(snap, got, q.BufferCellBytes); len(d) > 0 {
		return fmt.Errorf("switch %s: verify restore: %d paths differ from the backup (first: %s)", sw.Name, len(d), d[0].Path)
	}
	return nil
}

// Restore puts a backup back on its switch and verifies it by reading back.
// sw says how to reach the switch (address, TLS, credentials).
func (e *Engine) Restore(ctx context.Context, sw *intent.Switch, snap *Snapshot) error {
	if snap.Switch != sw.Name {
		return fmt.Errorf("backup is of switch %s, not %s", snap.Switch, sw.Name)
	}
	var q Quirks
	if e.Registry != nil {
		if p, err := e.Registry.Lookup(sw.Platform); err == nil {
			if q, err = e.quirks(p); err != nil {
				return err
			}
		}
	}
	c, err := transport.Dial(ctx, *sw, e.Transport)
	if err != nil {
		return err
	}
	defer c.Close()
	return restoreWith(ctx, c, sw, snap, q)
}
