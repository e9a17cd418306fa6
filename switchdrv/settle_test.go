package switchdrv_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricctl/fabricctl/switchdrv"
)

// lateCommitRun applies the lab's plan while leaf2's Set commits only late
// after it arrived (twin.CommitLateNextSet), with interrupt run when leaf2's
// Set has gone out. After the late commit has landed, leaf2 must be what
// Apply said: rolled back means as before the run.
func lateCommitRun(t *testing.T, timeout, late time.Duration, interrupt func(cancel context.CancelFunc)) {
	t.Helper()
	l := newLab(t, 2, 0)
	l.eng.Transport.Timeout = timeout
	l.eng.Parallel = 2
	before := []string{state(t, l.twins[0]), state(t, l.twins[1])}
	p := l.plan(t)
	l.twins[0].RejectNextSet() // the run fails, so leaf2 must be rolled back
	landed := l.twins[1].CommitLateNextSet(late)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	l.eng.Progress = func(ev switchdrv.Event) {
		if ev.Switch == "leaf2" && ev.Step == "set" && interrupt != nil {
			interrupt(cancel)
		}
	}
	res, err := l.eng.Apply(ctx, l.f, p)
	select {
	case <-landed:
	case <-time.After(10 * time.Second):
		t.Fatal("leaf2's late Set never finished")
	}
	if !errors.Is(err, switchdrv.ErrRolledBack) {
		t.Fatalf("Apply error = %v, want ErrRolledBack", err)
	}
	for i, tw := range l.twins {
		if diff := cmp.Diff(before[i], state(t, tw)); diff != "" {
			t.Errorf("%s not as before although Apply said rolled back (status %s) (-want +got):\n%s",
				tw.Name(), res.Targets[i].Status, diff)
		}
	}
}

// TestCtrlCWhileSetCommitsLate is the race TestChaos found (seed
// 1796237361712921761, run 55): Ctrl-C while a Set is in flight; the
// device commits it after the client would have been told "canceled". An
// interrupted run must not read leaf2 back before its Set has answered.
func TestCtrlCWhileSetCommitsLate(t *testing.T) {
	lateCommitRun(t, 2*time.Second, 300*time.Millisecond, func(cancel context.CancelFunc) {
		time.AfterFunc(50*time.Millisecond, cancel) // after the Set went out
	})
}

// TestDeadlineWhileSetCommitsLate: the Set's deadline passes and the device
// commits it afterwards (it ignores the grpc-timeout it was sent, up to one
// transport timeout late). Rollback must let the outcome settle before it
// decides that nothing of the run is on leaf2.
func TestDeadlineWhileSetCommitsLate(t *testing.T) {
	lateCommitRun(t, 200*time.Millisecond, 300*time.Millisecond, nil)
}
