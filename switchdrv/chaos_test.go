package switchdrv_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

// TestChaos is a randomized fault test: many applies against four twins,
// each run with random rejects, hung Sets, dropped connections (before and
// after the commit), acknowledged-but-lost Sets, Sets committed after their
// client gave up, wedged management planes and Ctrl-C, at every step (before the run, at the Set, at its verify, at
// the rollback's restore). After every run each twin is either fully on the
// run's configuration or identical to its state before the run, and the
// outcome says which: nil (exit 0) = all on the new configuration,
// ErrRolledBack (exit 4) = all as before, any other error (exit 1) = each
// switch's status names its state.
//
// Seeded and reproducible: the seed is printed on failure, and
// FABRICCTL_CHAOS_SEED=<seed> replays the same fault schedule. Bounded: no
// run starts after FABRICCTL_CHAOS_BUDGET (default 15s, 3s with -short).
func TestChaos(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("FABRICCTL_CHAOS_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("FABRICCTL_CHAOS_SEED=%q: %v", s, err)
		}
	}
	budget := 15 * time.Second
	if testing.Short() {
		budget = 3 * time.Second
	}
	if s := os.Getenv("FABRICCTL_CHAOS_BUDGET"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("FABRICCTL_CHAOS_BUDGET=%q: %v", s, err)
		}
		budget = d
	}
	run := 0
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("chaos seed %d failed in run %d; replay: FABRICCTL_CHAOS_SEED=%d go test -run TestChaos ./switchdrv/", seed, run, seed)
		}
	})
	t.Logf("chaos seed %d (replay: FABRICCTL_CHAOS_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	l := newLab(t, 4, 0)
	stop := time.Now().Add(budget)
	outcomes := map[string]int{}
	// unit is the transport timeout, and every fault's duration is drawn
	// in proportion to it (chaosFaults). 250 ms on a quiet machine; it
	// doubles whenever a run's plan, made before any fault, does not fit
	// in it: the machine is too busy for that timeout (a loaded CI
	// machine), and every time in the test scales with it, so the faults
	// keep their meaning (a commit-late fault stays within one timeout of
	// the Set's deadline, as settle assumes).
	unit := 250 * time.Millisecond
	for run = 1; time.Now().Before(stop) && run <= 300; run++ {
		f := fakeFabric(l.f.Switches...)
		f.Policy.Classes[1].ECN = &intent.ECN{MinBytes: int64(100000 + 1000*rng.IntN(1000)), MaxBytes: 1500000, Probability: 100}
		parallel, canary := 1+rng.IntN(4), rng.IntN(3)
		before := make([]string, len(l.twins))
		for i, tw := range l.twins {
			before[i] = state(t, tw)
		}
		var eng *switchdrv.Engine
		var p *plan.Plan
		for {
			eng = &switchdrv.Engine{Registry: l.eng.Registry, BackupDir: l.eng.BackupDir,
				Transport: transport.Options{Timeout: unit, Backoff: time.Millisecond, Attempts: 2},
				Parallel:  parallel, Canary: canary}
			var err error
			p, err = eng.Plan(t.Context(), f, nil)
			if err == nil && switchdrv.Errors(p) == nil {
				break
			}
			eng.Close()
			if perr := errors.Join(err, switchdrv.Errors(p)); !strings.Contains(perr.Error(), "DeadlineExceeded") || unit >= 32*time.Second {
				t.Fatalf("run %d: plan (no fault injected yet, timeout %s): %v", run, unit, perr)
			}
			unit *= 2
			t.Logf("run %d: a plan without faults did not fit in the timeout on this machine now; timeout and fault durations scaled to %s", run, unit)
		}
		ctx, cancel := context.WithCancel(t.Context())
		faults := chaosFaults(rng, len(l.twins), unit)
		var mu sync.Mutex
		fire := func(step, sw string) {
			mu.Lock()
			defer mu.Unlock()
			for _, fl := range faults {
				if !fl.done && fl.step == step && (sw == "" || l.twins[fl.twin].Name() == sw) {
					fl.done = true
					fl.inject(l.twins[fl.twin], cancel)
				}
			}
		}
		eng.Progress = func(ev switchdrv.Event) { fire(ev.Step, ev.Switch) }
		fire("start", "")
		res, err := eng.Apply(ctx, f, p)
		cancel()
		eng.Close()
		for _, tw := range l.twins {
			tw.Hang(false)
			tw.SetDelay(0)
		}
		outcomes[outcome(err)]++
		checkChaos(t, run, l, f, before, res, err, unit)
		if t.Failed() {
			t.Logf("run %d: parallel %d canary %d, faults: %s", run, eng.Parallel, eng.Canary, describe(faults))
			return
		}
	}
	t.Logf("chaos: %d runs, seed %d, outcomes %v", run-1, seed, outcomes)
}

func outcome(err error) string {
	switch {
	case err == nil:
		return "applied"
	case errors.Is(err, switchdrv.ErrRolledBack):
		return "rolled-back"
	}
	return "error"
}

type chaosFault struct {
	twin   int
	step   string // "start" or the progress step it fires at (set, verify, rollback)
	what   string
	inject func(tw *twin.Twin, cancel context.CancelFunc)
	done   bool
}

// wedge makes every RPC of tw hang for d, then serves again.
func wedge(tw *twin.Twin, d time.Duration) {
	tw.Hang(true)
	time.AfterFunc(d, func() { tw.Hang(false) })
}

// chaosFaults draws 0-4 faults over the twins and steps; their durations
// are drawn in 0-2.4 units (the transport timeout: 0-600 ms at 250 ms).
func chaosFaults(rng *rand.Rand, n int, unit time.Duration) []*chaosFault {
	kinds := []struct {
		what   string
		inject func(tw *twin.Twin, cancel context.CancelFunc, d time.Duration)
	}{
		{"reject", func(tw *twin.Twin, _ context.CancelFunc, _ time.Duration) { tw.RejectNextSet() }},
		{"hang-set", func(tw *twin.Twin, _ context.CancelFunc, _ time.Duration) { tw.HangNextSet() }},
		{"drop-before-commit", func(tw *twin.Twin, _ context.CancelFunc, _ time.Duration) { tw.DropNextSet(false) }},
		{"drop-after-commit", func(tw *twin.Twin, _ context.CancelFunc, _ time.Duration) { tw.DropNextSet(true) }},
		{"lose", func(tw *twin.Twin, _ context.CancelFunc, _ time.Duration) { tw.LoseNextSet() }},
		{"wedge", func(tw *twin.Twin, _ context.CancelFunc, d time.Duration) { wedge(tw, d) }},
		{"slow", func(tw *twin.Twin, _ context.CancelFunc, d time.Duration) { tw.SetDelay(d / 4) }},
		// A Set committed after its client gave up, at most 1.2 units
		// late (300ms at 250ms): within one transport timeout of its
		// deadline, what settle covers (apply.go).
		{"commit-late", func(tw *twin.Twin, _ context.CancelFunc, d time.Duration) { tw.CommitLateNextSet(d / 2) }},
		{"ctrl-c", func(_ *twin.Twin, cancel context.CancelFunc, _ time.Duration) { cancel() }},
	}
	steps := []string{"start", "set", "verify", "rollback"}
	var out []*chaosFault
	for range rng.IntN(5) {
		k := kinds[rng.IntN(len(kinds))]
		d := time.Duration(rng.IntN(600)) * unit / 250
		fl := &chaosFault{twin: rng.IntN(n), step: steps[rng.IntN(len(steps))]}
		fl.what = fmt.Sprintf("%s(%s)", k.what, d)
		fl.inject = func(tw *twin.Twin, cancel context.CancelFunc) { k.inject(tw, cancel, d) }
		out = append(out, fl)
	}
	return out
}

func describe(fs []*chaosFault) string {
	var parts []string
	for _, f := range fs {
		parts = append(parts, fmt.Sprintf("leaf%d@%s:%s", f.twin+1, f.step, f.what))
	}
	return strings.Join(parts, " ")
}

// checkChaos checks the invariant after one run.
func checkChaos(t *testing.T, run int, l *lab, f *intent.Fabric, before []string, res *switchdrv.Result, err error, unit time.Duration) {
	t.Helper()
	// Read the twins with a fresh engine and no faults: is each on f?
	check := &switchdrv.Engine{Registry: l.eng.Registry, Transport: transport.Options{Timeout: max(2*time.Second, 8*unit)}}
	defer check.Close()
	p, perr := check.Plan(context.Background(), f, nil)
	if perr != nil || switchdrv.Errors(p) != nil {
		t.Fatalf("run %d: reading the twins back: %v %v", run, perr, switchdrv.Errors(p))
	}
	isNew := map[string]bool{}
	isOld := map[string]bool{}
	for i, tw := range l.twins {
		isNew[tw.Name()] = !p.Targets[i].HasChanges()
		isOld[tw.Name()] = state(t, tw) == before[i]
		if !isNew[tw.Name()] && !isOld[tw.Name()] {
			t.Errorf("run %d: %s is neither on the new configuration nor as before the run (half-applied)", run, tw.Name())
		}
	}
	status := map[string]string{}
	if res != nil {
		for _, tr := range res.Targets {
			status[tr.Name] = tr.Status
		}
	}
	for _, tw := range l.twins {
		n := tw.Name()
		switch {
		case err == nil && !isNew[n]:
			t.Errorf("run %d: apply succeeded but %s is not on the new configuration (status %s)", run, n, status[n])
		case errors.Is(err, switchdrv.ErrRolledBack) && !isOld[n]:
			t.Errorf("run %d: apply says rolled back but %s is not as before (status %s): %v", run, n, status[n], err)
		case err == nil || errors.Is(err, switchdrv.ErrRolledBack):
		default:
			switch status[n] {
			case switchdrv.StatusApplied:
				if !isNew[n] {
					t.Errorf("run %d: %s reported applied but is not on the new configuration", run, n)
				}
			case switchdrv.StatusRolledBack, switchdrv.StatusFailed, switchdrv.StatusSkipped, switchdrv.StatusUnchanged, switchdrv.StatusStale, "":
				if !isOld[n] && !(status[n] == switchdrv.StatusUnchanged && isNew[n]) {
					t.Errorf("run %d: %s reported %q but is not as before the run: %v", run, n, status[n], err)
				}
			case switchdrv.StatusRollbackFailed:
				// Named as needing a look; it is either state (checked above).
			default:
				t.Errorf("run %d: %s status %q in a run with a single writer: %v", run, n, status[n], err)
			}
		}
	}
}
