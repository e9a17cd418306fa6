package switchdrv_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv"
)

// otherRun is a second fabricctl run on the same switches with another
// intent (different ECN thresholds), as a colleague's apply would be.
func otherRun(t *testing.T, l *lab) (*intent.Fabric, *switchdrv.Engine) {
	t.Helper()
	f := fakeFabric(l.f.Switches...)
	f.Policy.Classes[1].ECN = &intent.ECN{MinBytes: 200000, MaxBytes: 1600000, Probability: 100}
	eng := &switchdrv.Engine{Registry: l.eng.Registry, BackupDir: t.TempDir(), Transport: l.eng.Transport}
	t.Cleanup(eng.Close)
	return f, eng
}

// TestConcurrentAppliesConditionalRollback: run A applies leaf1 and leaf2;
// before it reaches leaf3, run B applies all three with its own intent and
// succeeds; then A fails on leaf3. A's rollback must not undo B's verified
// apply: it reads each switch back, finds B's configuration (not what A
// wrote), leaves it and says so (not ErrRolledBack: exit 1). The twins are
// slowed down (injected delay) as a loaded management plane is.
func TestConcurrentAppliesConditionalRollback(t *testing.T) {
	l := newLab(t, 3, 0)
	for _, tw := range l.twins {
		tw.SetDelay(10 * time.Millisecond)
	}
	l.eng.Parallel = 1
	pa := l.plan(t)
	fb, engB := otherRun(t, l)
	pb, err := engB.Plan(t.Context(), fb, nil)
	if err != nil || switchdrv.Errors(pb) != nil {
		t.Fatalf("plan B: %v %v", err, switchdrv.Errors(pb))
	}
	var resB *switchdrv.Result
	var errB error
	l.eng.Progress = func(ev switchdrv.Event) {
		if ev.Switch == "leaf3" && ev.Step == "set" && resB == nil {
			resB, errB = engB.Apply(t.Context(), fb, pb)
			l.twins[2].RejectNextSet() // A's own Set on leaf3 fails
		}
	}
	resA, errA := l.eng.Apply(t.Context(), l.f, pa)
	if errB != nil || resB.Status != "applied" {
		t.Fatalf("run B: %v (%+v), want applied", errB, resB)
	}
	// B's configuration is on every switch.
	pbAgain, err := engB.Plan(t.Context(), fb, nil)
	if err != nil {
		t.Fatal(err)
	}
	if pbAgain.HasChanges() {
		t.Errorf("run B exited 0 but its configuration is gone: %+v", pbAgain.Targets)
	}
	if errA == nil || errors.Is(errA, switchdrv.ErrRolledBack) || !errors.Is(errA, switchdrv.ErrChangedByOther) {
		t.Fatalf("run A error = %v, want ErrChangedByOther (and not ErrRolledBack)", errA)
	}
	var got []string
	for _, tr := range resA.Targets {
		got = append(got, tr.Name+"="+tr.Status)
		if tr.Status == switchdrv.StatusChangedByOther && !strings.Contains(tr.Error, "changed by another writer after our write; left as is") {
			t.Errorf("%s: error %q does not say it was left as is", tr.Name, tr.Error)
		}
		if strings.HasPrefix(tr.Error, ";") {
			t.Errorf("%s: error text starts with a separator: %q", tr.Name, tr.Error)
		}
	}
	want := []string{"leaf1=changed-by-another-writer", "leaf2=changed-by-another-writer", "leaf3=changed-by-another-writer"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("run A statuses (-want +got):\n%s", diff)
	}
}

// TestConcurrentApplyRollsBackOwnWrites: when the other run changed only
// leaf2, A still rolls back leaf1 (it holds what A wrote) and leaves leaf2.
func TestConcurrentApplyRollsBackOwnWrites(t *testing.T) {
	l := newLab(t, 3, 0)
	before := state(t, l.twins[0])
	l.eng.Parallel = 1
	pa := l.plan(t)
	fb, engB := otherRun(t, l)
	pb, err := engB.Plan(t.Context(), fb, []string{"leaf2"})
	if err != nil || switchdrv.Errors(pb) != nil {
		t.Fatalf("plan B: %v %v", err, switchdrv.Errors(pb))
	}
	l.eng.Progress = func(ev switchdrv.Event) {
		if ev.Switch == "leaf3" && ev.Step == "set" {
			if _, err := engB.Apply(t.Context(), fb, pb); err != nil {
				t.Errorf("run B: %v", err)
			}
			l.twins[2].RejectNextSet()
		}
	}
	res, err := l.eng.Apply(t.Context(), l.f, pa)
	if !errors.Is(err, switchdrv.ErrChangedByOther) {
		t.Fatalf("run A error = %v, want ErrChangedByOther", err)
	}
	var got []string
	for _, tr := range res.Targets {
		got = append(got, tr.Name+"="+tr.Status)
	}
	if diff := cmp.Diff([]string{"leaf1=rolled-back", "leaf2=changed-by-another-writer", "leaf3=failed"}, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, state(t, l.twins[0])); diff != "" {
		t.Errorf("leaf1 not restored (-want +got):\n%s", diff)
	}
	if p, _ := engB.Plan(t.Context(), fb, []string{"leaf2"}); p.HasChanges() {
		t.Errorf("run B's leaf2 was undone by run A's rollback")
	}
}

// TestRollbackUnknownOutcomeReadBack: the restore Set's connection drops
// after the switch saved it. The restore is read back and reported
// rolled back and verified, not ROLLBACK FAILED.
func TestRollbackUnknownOutcomeReadBack(t *testing.T) {
	l := newLab(t, 2, 0)
	l.eng.Parallel = 1
	before := state(t, l.twins[0])
	p := l.plan(t)
	l.twins[1].RejectNextSet()
	l.eng.Progress = func(ev switchdrv.Event) {
		if ev.Switch == "leaf1" && ev.Step == "rollback" {
			l.twins[0].DropNextSet(true) // the restore commits, the reply is lost
		}
	}
	res, err := l.eng.Apply(t.Context(), l.f, p)
	if !errors.Is(err, switchdrv.ErrRolledBack) {
		t.Fatalf("Apply error = %v, want ErrRolledBack", err)
	}
	if res.Targets[0].Status != switchdrv.StatusRolledBack {
		t.Errorf("leaf1 status %s, want rolled-back", res.Targets[0].Status)
	}
	if diff := cmp.Diff(before, state(t, l.twins[0])); diff != "" {
		t.Errorf("leaf1 not restored (-want +got):\n%s", diff)
	}
}

// TestRollbackFailureMessage: a switch that was applied and whose restore
// failed says "rollback: ..." without an empty text and separator first.
func TestRollbackFailureMessage(t *testing.T) {
	l := newLab(t, 2, 0)
	l.eng.Parallel = 1
	p := l.plan(t)
	l.twins[1].RejectNextSet()
	l.eng.Progress = func(ev switchdrv.Event) {
		if ev.Switch == "leaf2" && ev.Step == "failed" {
			l.twins[0].RejectNextSet()
		}
	}
	res, _ := l.eng.Apply(context.WithoutCancel(t.Context()), l.f, p)
	if got := res.Targets[0].Error; !strings.HasPrefix(got, "rollback: ") {
		t.Errorf("leaf1 error = %q, want it to start with \"rollback: \"", got)
	}
}

// TestInterruptedPlanIsNotABadPlan: Ctrl-C while planning leaves targets
// with errors; apply then says it was interrupted, not "the plan has
// errors; fix them".
func TestInterruptedPlanIsNotABadPlan(t *testing.T) {
	l := newLab(t, 2, 0)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	p, err := l.eng.Plan(ctx, l.f, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !p.HasErrors() {
		t.Fatal("a plan made after Ctrl-C has no errors")
	}
	_, err = l.eng.Apply(ctx, l.f, p)
	if err == nil || strings.Contains(err.Error(), "fix them") || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("Apply after an interrupted plan: %v", err)
	}
	if diff := cmp.Diff([]int{0, 0}, sets(l)); diff != "" {
		t.Errorf("Sets (-want +got):\n%s", diff)
	}
}

// TestVerifySeesAnotherWritersValues (issue 29): run B writes and verifies
// leaf2 between run A's Set on leaf2 and A's read-back. A's verify reads
// values A did not write: the outcome is "changed by another writer"
// (ErrChangedByOther, not ErrRolledBack), and nothing is rolled back: B's
// verified leaf2 stays, and so do A's verified leaf1 and leaf3. Before, A recorded
// B's values as its own read-back, its rollback found the switch "still as
// A left it" and restored A's backup over B's verified write.
func TestVerifySeesAnotherWritersValues(t *testing.T) {
	l := newLab(t, 3, 0)
	l.eng.Parallel = 1
	pa := l.plan(t)
	fb, engB := otherRun(t, l)
	pb, err := engB.Plan(t.Context(), fb, []string{"leaf2"})
	if err != nil || switchdrv.Errors(pb) != nil {
		t.Fatalf("plan B: %v %v", err, switchdrv.Errors(pb))
	}
	var errB error
	ranB := false
	l.eng.Progress = func(ev switchdrv.Event) {
		if ev.Switch == "leaf2" && ev.Step == "verify" && !ranB {
			ranB = true
			_, errB = engB.Apply(t.Context(), fb, pb)
		}
	}
	resA, errA := l.eng.Apply(t.Context(), l.f, pa)
	if !ranB || errB != nil {
		t.Fatalf("run B (ran %v): %v", ranB, errB)
	}
	if !errors.Is(errA, switchdrv.ErrChangedByOther) || errors.Is(errA, switchdrv.ErrRolledBack) {
		t.Fatalf("run A: %v, want ErrChangedByOther", errA)
	}
	if !strings.Contains(errA.Error(), "nothing was rolled back") || !strings.Contains(errA.Error(), "leaf2") {
		t.Errorf("run A's error does not say what happened: %v", errA)
	}
	var got []string
	for _, tr := range resA.Targets {
		got = append(got, tr.Name+"="+tr.Status)
	}
	want := []string{"leaf1=applied", "leaf2=changed-by-another-writer", "leaf3=applied"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("run A statuses (-want +got):\n%s", diff)
	}
	if resA.Status != switchdrv.StatusChangedByOther {
		t.Errorf("run A status %q", resA.Status)
	}
	if p, _ := engB.Plan(t.Context(), fb, []string{"leaf2"}); p.HasChanges() {
		t.Errorf("run B's verified leaf2 was undone by run A")
	}
	if p, _ := l.eng.Plan(t.Context(), l.f, []string{"leaf1", "leaf3"}); p.HasChanges() {
		t.Errorf("run A's verified leaf1 or leaf3 was rolled back")
	}
}

// TestLostSetIsNotAnotherWriter: a Set the switch acknowledged and did not
// program leaves the switch as before; verify finds it unchanged, which is
// this run's failure, not another writer's (rolled back as usual: exit 4).
func TestLostSetIsNotAnotherWriter(t *testing.T) {
	l := newLab(t, 2, 0)
	l.eng.Parallel = 1
	p := l.plan(t)
	l.twins[1].LoseNextSet()
	_, err := l.eng.Apply(t.Context(), l.f, p)
	if !errors.Is(err, switchdrv.ErrRolledBack) || errors.Is(err, switchdrv.ErrChangedByOther) {
		t.Fatalf("Apply with a lost Set: %v, want ErrRolledBack", err)
	}
}
