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
	"google.golang.org/grpc/codes"

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
	// StatusChangedByOther: this run wrote the switch, then failed
	// elsewhere, and the switch no longer holds what this run wrote nor
	// its backup: another writer changed it since. It is left as is
	// (restoring would undo the other writer's change).
	StatusChangedByOther = "changed-by-another-writer"
)

// ErrChangedByOther marks a switch that another writer changed after this
// run wrote it; rollback left it as is.
var ErrChangedByOther = errors.New("changed by another writer after our write; left as is")

// errForeign is what a switch whose verify read another writer's values
// says; it wraps ErrChangedByOther.
var errForeign = fmt.Errorf("another writer changed it after this run's Set: %w", ErrChangedByOther)

// Result is the outcome of Apply, the JSON summary of `fabricctl apply`.
type Result struct {
	Fabric string `json:"fabric"`
	// Status: applied, no-changes, rolled-back, failed,
	// changed-by-another-writer.
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
	tp     *plan.TargetPlan
	sw     *intent.Switch
	q      Quirks
	req    *gnmipb.SetRequest
	paths  []*gnmipb.Path         // ownedPaths(req)
	keys   []string               // their PathKeys
	get    *transport.PreparedGet // the Get of paths, marshalled at its first read
	c      *transport.Client
	backup *Snapshot
	line   []byte // backup encoded (one line of the run's backup file)
	// after is the verify read-back of what this run's Set left on the
	// switch, once verified to be what the run wrote (nil when the Set
	// failed, verify could not read, or it read something else).
	after *Snapshot
	// foreign: verify read values this run did not write (another writer).
	foreign bool
	d       *Desired
	values  *decoded // d's values, decoded (by plan, or at the first use)
	res     *TargetResult
	start   time.Time
	sent    bool  // a Set was sent (its effect may be on the switch)
	setErr  error // the Set's own error, if any
	// setDeadline is the deadline the Set carried to the switch: a switch
	// that honours it cannot commit the Set after it.
	setDeadline time.Time
	failure     error
}

// Apply executes plan p on the fabric f. For each switch with changes it
// takes the state Plan read in this process (or, for a saved plan, reads
// the owned paths again and refuses the switch with plan.ErrStale when the
// state moved since planning) as its backup, saves the backups of all of
// them in one file of the run (writeRun), then sends each switch its plan's
// one SetRequest and verifies it by reading back. Canary and Parallel stage
// the rollout. On any failure (including ctx cancellation) no new
// switch is started and every switch changed in this run is read back and,
// if it still holds what this run wrote, restored from its backup and
// verified; one that another writer changed since is left as is
// (StatusChangedByOther, ErrChangedByOther). The error wraps ErrRolledBack
// when every such switch was restored and verified. Nothing is written
// anywhere before every selected switch was read, found current and backed
// up.
func (e *Engine) Apply(ctx context.Context, f *intent.Fabric, p *plan.Plan) (*Result, error) {
	res := &Result{Fabric: p.Fabric}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("interrupted before anything was written; nothing was changed: %w", err)
	}
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
		// A plan made by this engine carries its SetRequest and read; a
		// saved plan is decoded and read again.
		pl := e.takePlanned(tp)
		var req *gnmipb.SetRequest
		if pl != nil {
			req = pl.req
		} else {
			var err error
			if req, err = decodePayload(tp); err != nil {
				return nil, err
			}
		}
		var q Quirks
		if plat, err := e.Registry.Lookup(sw.Platform); err == nil {
			if q, err = e.quirks(plat); err != nil {
				return nil, fmt.Errorf("switch %s: %w", sw.Name, err)
			}
		}
		tr.Status = StatusSkipped
		w := &work{tp: tp, sw: sw, q: q, req: req, res: tr}
		w.d = &Desired{Switch: sw.Name, Platform: sw.Platform, Replaces: req.GetReplace(), Updates: req.GetUpdate(), Deletes: req.GetDelete()}
		if pl == nil {
			w.values = newDecoded(w.d)
		} else {
			w.paths, w.keys, w.get = pl.paths, pl.keys, pl.get
			w.backup = pl.snap
			// The same updates (pl.req holds them), decoded once.
			w.values = pl.values
		}
		if w.paths == nil {
			w.paths, w.keys = ownedPaths(req, nil)
		}
		ws = append(ws, w)
	}
	if len(ws) == 0 {
		res.Status = "no-changes"
		return res, nil
	}
	if e.BackupDir == "" {
		return nil, errors.New("apply needs a backup directory")
	}

	// 1. Read, check staleness, encode the backups: all switches before
	// any write.
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
	// One backup file for the run, every switch's snapshot in it (in the
	// plan's order, as prepare encoded them), synced with its name in the
	// directory before any switch is written.
	lines := make([][]byte, len(ws))
	for i, w := range ws {
		lines[i] = w.line
	}
	fabric := f.Name
	if fabric == "" {
		fabric = p.Fabric
	}
	path, err := writeRun(e.BackupDir, fabric, time.Now(), lines)
	if err != nil {
		for _, w := range ws {
			w.res.Status, w.res.Error = StatusFailed, "backup not written"
		}
		res.Status = "failed"
		return res, fmt.Errorf("nothing was changed: write backup in %s: %w", e.BackupDir, err)
	}
	if err := syncDir(e.BackupDir); err != nil {
		for _, w := range ws {
			w.res.Status, w.res.Error = StatusFailed, "backup directory not synced"
		}
		res.Status = "failed"
		return res, fmt.Errorf("nothing was changed: sync backup directory %s: %w", e.BackupDir, err)
	}
	for _, w := range ws {
		w.line = nil
		w.res.Backup = path
		e.emit(Event{Switch: w.sw.Name, Step: "backup", Detail: path})
		e.log().Info("backed up", "target", w.sw.Name, "file", path)
	}

	// 2. Roll out in stages.
	var failed error
	stages := e.stages(ws)
	for i, stage := range stages {
		if err := ctx.Err(); err != nil {
			failed = fmt.Errorf("interrupted: %w", err)
			break
		}
		if len(stages) > 1 {
			e.emit(Event{Step: "stage", Detail: stageDetail(i, len(stages), stage)})
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

	// 3a. Another writer is at work on these switches: verify read values
	// this run did not write. Nothing is rolled back, on any switch: a
	// restore to this run's backups (read before that writer's write, or
	// between its write and this run's) could undo its verified write, and
	// which switch holds whose write can no longer be proven.
	var foreign []string
	for _, w := range ws {
		if w.foreign {
			foreign = append(foreign, w.sw.Name)
		}
	}
	if len(foreign) > 0 {
		for _, w := range ws {
			switch {
			case !w.sent && w.res.Status == StatusSkipped:
				e.emit(Event{Switch: w.sw.Name, Step: "skipped"})
			case w.sent && w.res.Status == StatusFailed:
				w.res.Error = joinErr(w.res.Error, "not rolled back: another writer is changing these switches")
			}
		}
		res.Status = StatusChangedByOther
		return res, fmt.Errorf("%w: %s held values this run did not write when it read back its Set; another writer is changing these switches; nothing was rolled back (each switch's line says what it holds; the backups are in %s)", ErrChangedByOther, strings.Join(foreign, ", "), e.BackupDir)
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
	var others []string
	for _, w := range rb {
		if w.res.Status == StatusChangedByOther {
			others = append(others, w.sw.Name)
		}
	}
	switch {
	case rbErr != nil:
		res.Status = "failed"
		return res, fmt.Errorf("apply failed: %w; ROLLBACK FAILED, inspect the switches and the backups in %s: %w", failed, e.BackupDir, rbErr)
	case len(others) > 0:
		res.Status = "failed"
		return res, fmt.Errorf("apply failed: %w; rolled back, except %s: %w (the backups are in %s)", failed, strings.Join(others, ", "), ErrChangedByOther, e.BackupDir)
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

// stageDetail names stage i of n of a canary rollout: "canary (1 of 3):
// leaf1", then "batch 2 of 3: leaf2, leaf3".
func stageDetail(i, n int, stage []*work) string {
	names := make([]string, len(stage))
	for j, w := range stage {
		names[j] = w.sw.Name
	}
	what := fmt.Sprintf("batch %d of %d", i+1, n)
	if i == 0 {
		what = fmt.Sprintf("canary (stage 1 of %d)", n)
	}
	return what + ": " + strings.Join(names, ", ")
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
	cn, err := e.client(ctx, w.sw)
	if err != nil {
		return err
	}
	w.c = cn.c
	if w.backup == nil {
		// A saved plan: read the switch again, refuse it when it moved.
		enc := gnmipb.Encoding_JSON_IETF
		if u := append(slices.Clone(w.req.GetReplace()), w.req.GetUpdate()...); len(u) > 0 && u[0].GetVal().GetJsonVal() != nil {
			enc = gnmipb.Encoding_JSON
		}
		snap, err := e.read(ctx, cn, w.sw, enc, w.paths, w.keys, true, &w.get)
		if err != nil {
			return err
		}
		if snap.Basis != w.tp.Basis {
			return fmt.Errorf("switch %s: %w (basis %s, now %s)", w.sw.Name, plan.ErrStale, w.tp.Basis, snap.Basis)
		}
		w.backup = snap
	}
	// Encoded here, in parallel; Apply writes every switch's line into the
	// run's one backup file.
	line, err := backupLine(w.backup)
	if err != nil {
		return fmt.Errorf("switch %s: backup: %w", w.sw.Name, err)
	}
	w.line = line
	return nil
}

func (e *Engine) applyOne(ctx context.Context, w *work) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("switch %s: not started: %w", w.sw.Name, err)
	}
	e.emit(Event{Switch: w.sw.Name, Step: "set", Detail: fmt.Sprintf("%d changes", w.res.Changes), Until: time.Now().Add(w.c.SetTimeout() + w.c.Timeout())})
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("switch %s: not started: %w", w.sw.Name, err)
	}
	w.sent = true
	w.setDeadline = time.Now().Add(w.c.SetTimeout())
	// Once sent, a Set is waited for even after Ctrl-C (it is bounded by
	// the transport timeout): cancelling it would not stop the switch from
	// committing it (a cancelled gRPC call returns at once on the client,
	// while the server's handler may still be running), it would only turn
	// a known outcome into an unknown one.
	// Only the outcome is used: verify reads the switch back.
	if err := w.c.SetOutcome(context.WithoutCancel(ctx), w.req); err != nil {
		w.setErr = err
		err = e.explainSetError(w.sw, err)
		w.res.Status, w.res.Error = StatusFailed, err.Error()
		e.emit(Event{Switch: w.sw.Name, Step: "failed", Err: err, Took: time.Since(w.start)})
		return err
	}
	e.emit(Event{Switch: w.sw.Name, Step: "verify"})
	after, err := observeValues(ctx, w.c, w.sw, w.paths, w.keys, &w.get)
	if err == nil {
		var left []plan.Change
		if left, err = verifyLeft(w.d, after, w.q, w.values); err == nil && len(left) > 0 {
			err = fmt.Errorf("switch %s: verify: %d paths differ after the Set (first: %s %s)", w.sw.Name, len(left), left[0].Action, left[0].Path)
			if len(Drift(w.backup, after, w.q.BufferCellBytes)) > 0 {
				// Neither what this run wrote nor what was there
				// before: another writer's values (or a switch that
				// changed them itself). Nothing here is provably this
				// run's own write, so nothing of the run is rolled
				// back (a restore would undo the other writer's
				// verified write).
				w.foreign = true
				err = fmt.Errorf("switch %s: verify: %d paths hold values this run did not write, neither its intent nor the backup (first: %s); %w", w.sw.Name, len(left), left[0].Path, errForeign)
			}
		}
	}
	if err != nil {
		w.res.Status, w.res.Error = StatusFailed, err.Error()
		step := "failed"
		if w.foreign {
			w.res.Status, step = StatusChangedByOther, StatusChangedByOther
		}
		e.emit(Event{Switch: w.sw.Name, Step: step, Err: err, Took: time.Since(w.start)})
		return err
	}
	// Only a verified read-back is this run's own write: a rollback
	// restores the switch only while it still reads as this.
	w.after = after
	w.res.Status = StatusApplied
	// Verified: a rollback now compares the switch with what verify read
	// (w.after), so the request and the desired values are not needed any
	// more; the garbage collector may have them while other switches go on
	// (it marks everything apply still holds, every cycle).
	w.req, w.d, w.values = nil, nil, nil
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

// verifyLeft lists what the switch (read back as got) lacks of d. Leaves
// the switch added inside a replaced subtree are its defaults, not a
// failed write: only missing or different leaves, and subtrees still there
// that were deleted, count.
func verifyLeft(d *Desired, got *Snapshot, q Quirks, values *decoded) ([]plan.Change, error) {
	left, err := compare(d, got, q, values)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(left, func(c plan.Change) bool { return c.Action == plan.Delete && c.Reason != ReasonAbsent }), nil
}

// rollback puts w back to its backup, but only when the switch still holds
// what this run wrote: it reads the switch first. Unchanged since the backup
// (the Set was rejected, or never took effect): nothing to do. Still this
// run's write: restore and verify. Anything else: another writer changed it
// after this run did; restoring would silently undo that change, so it is
// left as is and reported (ErrChangedByOther).
func (e *Engine) rollback(ctx context.Context, w *work) error {
	paths, err := w.backup.paths()
	if err != nil {
		return e.rollbackFailed(w, err)
	}
	var current *Snapshot
	if errors.Is(w.setErr, transport.ErrOutcomeUnknown) && !handlerReturned(w.setErr) {
		e.emit(Event{Switch: w.sw.Name, Step: "settle", Detail: "the Set's outcome is unknown: waiting until the switch cannot still be committing it"})
		current, err = settle(ctx, w.c, w.sw, paths, w.setDeadline, w.q)
	} else {
		current, err = observe(ctx, w.c, w.sw, paths)
	}
	if err != nil {
		return e.rollbackFailed(w, fmt.Errorf("switch %s: read before restore: %w", w.sw.Name, err))
	}
	if len(Drift(w.backup, current, w.q.BufferCellBytes)) == 0 {
		// Nothing of this run is on the switch.
		if w.res.Status == StatusApplied {
			w.res.Status = StatusRolledBack // someone restored it already: it is as before
		} else {
			w.res.Status = StatusFailed
		}
		return nil
	}
	ours := false
	switch {
	case w.after != nil:
		ours = sameState(w.after, current, w.q)
	case w.setErr == nil || errors.Is(w.setErr, transport.ErrOutcomeUnknown):
		left, err := verifyLeft(w.d, current, w.q, w.values)
		ours = err == nil && len(left) == 0
	}
	if !ours {
		w.res.Status = StatusChangedByOther
		w.res.Error = joinErr(w.res.Error, ErrChangedByOther.Error())
		e.emit(Event{Switch: w.sw.Name, Step: StatusChangedByOther, Err: ErrChangedByOther})
		e.log().Warn("not rolled back: changed by another writer after this run wrote it", "target", w.sw.Name)
		return nil
	}
	e.emit(Event{Switch: w.sw.Name, Step: "rollback", Until: time.Now().Add(w.c.SetTimeout() + w.c.Timeout())})
	if err := restoreFrom(ctx, w.c, w.sw, w.backup, current, w.q); err != nil {
		return e.rollbackFailed(w, err)
	}
	w.res.Status = StatusRolledBack
	e.emit(Event{Switch: w.sw.Name, Step: "rolled-back", Detail: "verified"})
	e.log().Info("rolled back", "target", w.sw.Name)
	return nil
}

func (e *Engine) rollbackFailed(w *work, err error) error {
	w.res.Status = StatusRollbackFailed
	w.res.Error = joinErr(w.res.Error, "rollback: "+err.Error())
	e.emit(Event{Switch: w.sw.Name, Step: "rollback-failed", Err: err})
	return err
}

// joinErr appends b to the error text a with "; ", without a leading
// separator when a is empty (a switch that was applied has no error yet).
func joinErr(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// sameState reports whether two reads of the same paths hold the same
// configuration (canonical form; thresholds within a buffer cell).
func sameState(a, b *Snapshot, q Quirks) bool {
	return len(Drift(a, b, q.BufferCellBytes)) == 0 && len(Drift(b, a, q.BufferCellBytes)) == 0
}

// restoreWith reads the switch, sends snap's restore request and verifies
// by reading back.
func restoreWith(ctx context.Context, c *transport.Client, sw *intent.Switch, snap *Snapshot, q Quirks) error {
	paths, err := snap.paths()
	if err != nil {
		return err
	}
	current, err := observe(ctx, c, sw, paths)
	if err != nil {
		return fmt.Errorf("switch %s: read before restore: %w", sw.Name, err)
	}
	return restoreFrom(ctx, c, sw, snap, current, q)
}

// restoreFrom sends the request that takes current (just read) back to
// snap and verifies it by reading back. A Set whose outcome is unknown (the
// connection dropped, perhaps after the switch saved it) is read back
// before it is called failed.
func restoreFrom(ctx context.Context, c *transport.Client, sw *intent.Switch, snap, current *Snapshot, q Quirks) error {
	paths, err := snap.paths()
	if err != nil {
		return err
	}
	req, err := snap.RestoreRequest(current)
	if err != nil {
		return err
	}
	// Nothing is sent after Ctrl-C; once sent, the Set is waited for
	// (bounded by the transport's Set timeout) and read back, as apply's:
	// cancelling it would not stop the switch from committing it, it would
	// only turn a known outcome into an unknown one and a wait for the
	// deadline (settle). Only a second Ctrl-C abandons it (main).
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("switch %s: interrupted before the restore Set was sent; nothing was written: %w", sw.Name, err)
	}
	deadline := time.Now().Add(c.SetTimeout())
	setErr := c.SetOutcome(context.WithoutCancel(ctx), req)
	if setErr != nil && !errors.Is(setErr, transport.ErrOutcomeUnknown) {
		return setErr
	}
	// Once the Set went out, its outcome is read even after Ctrl-C (each
	// read is bounded by the transport timeout): a restore is reported as
	// what it did, not as "canceled". An unknown outcome is read only once
	// it has settled.
	var got *Snapshot
	if setErr != nil && !handlerReturned(setErr) {
		got, err = settle(context.WithoutCancel(ctx), c, sw, paths, deadline, q)
	} else {
		got, err = observe(context.WithoutCancel(ctx), c, sw, paths)
	}
	if err != nil {
		if setErr != nil {
			return fmt.Errorf("%w; and reading back failed too: %w", setErr, err)
		}
		return fmt.Errorf("switch %s: verify restore: %w", sw.Name, err)
	}
	if d := Drift(snap, got, q.BufferCellBytes); len(d) > 0 {
		if setErr != nil {
			return fmt.Errorf("%w; the read-back differs from the backup in %d paths (first: %s)", setErr, len(d), d[0].Path)
		}
		return fmt.Errorf("switch %s: verify restore: %d paths differ from the backup (first: %s)", sw.Name, len(d), d[0].Path)
	}
	return nil
}

// handlerReturned says whether a failed Set's error is the target's own
// reply (codes.Unknown: a handler that returned a plain error, as
// sonic-gnmi's Set does with the config updater's failure,
// gnmi_server/server.go Server.Set returning dc.Set's error). Its outcome
// is still unknown (a config updater may fail half-way), but nothing is
// still being applied: one read tells what is on the switch, with no wait
// for a set deadline that may be ten minutes (SONiC) and no second read a
// timeout later. A lost connection, a deadline or a cancellation say
// nothing of the handler: those are settled (settle).
func handlerReturned(err error) bool {
	return err != nil && transport.Code(err) == codes.Unknown
}

// settleReads bounds the reads settle makes after the Set's deadline.
const settleReads = 4

// settle reads a switch after a Set of ours whose outcome is unknown
// (cancelled, deadline passed, connection lost), once that Set can no
// longer change what is read.
//
// What no client can know: whether the server's handler for that Set is
// still running. A cancelled or timed-out unary gRPC call returns at once
// on the client; the server only learns of it (RST_STREAM, its handler's
// context is cancelled) and nothing tells the client when the handler has
// returned, or whether a commit it started will land. The server is not
// even bound to serve a later Get on the same connection after it: each
// RPC is its own stream and handler. So a read right after the failure can
// show the switch unchanged while the Set is still about to commit, and
// "nothing of this run is on the switch" would be a lie.
//
// What bounds it: the Set carried its deadline to the server
// (grpc-timeout), and a server that honours it does not commit after it.
// settle therefore waits for that deadline, then reads until two reads one
// transport timeout apart agree (at most settleReads reads). This covers a
// server that commits up to about one transport timeout past the deadline
// it was given; a server that commits later still cannot be told apart
// from one that never will, by any client. Reads that keep changing are an
// error, never a verdict.
func settle(ctx context.Context, c *transport.Client, sw *intent.Switch, paths []*gnmipb.Path, deadline time.Time, q Quirks) (*Snapshot, error) {
	window := c.Timeout()
	if err := sleepCtx(ctx, time.Until(deadline)); err != nil {
		return nil, err
	}
	prev, err := observe(ctx, c, sw, paths)
	if err != nil {
		return nil, err
	}
	for range settleReads - 1 {
		if err := sleepCtx(ctx, window); err != nil {
			return nil, err
		}
		cur, err := observe(ctx, c, sw, paths)
		if err != nil {
			return nil, err
		}
		if sameState(prev, cur, q) {
			return cur, nil
		}
		prev = cur
	}
	return nil, fmt.Errorf("switch %s: still changing %d reads after a Set whose outcome is unknown (another writer, or a commit still under way)", sw.Name, settleReads)
}

// sleepCtx waits d (nothing when d <= 0) or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
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
	c, err := transport.Dial(ctx, *sw, e.transportFor(sw))
	if err != nil {
		return err
	}
	defer c.Close()
	start := time.Now()
	e.emit(Event{Switch: sw.Name, Step: "restore", Until: start.Add(c.SetTimeout() + 2*c.Timeout())})
	if err := restoreWith(ctx, c, sw, snap, q); err != nil {
		e.emit(Event{Switch: sw.Name, Step: "restore-failed", Err: err, Took: time.Since(start)})
		return err
	}
	e.emit(Event{Switch: sw.Name, Step: "restored", Detail: "verified", Took: time.Since(start)})
	return nil
}
