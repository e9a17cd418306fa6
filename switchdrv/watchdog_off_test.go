package switchdrv_test

import (
	"testing"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

// TestWatchdogOffRemovesSONiCWatchdog: SONiC runs the PFC watchdog on a port
// as long as PFC_WD|<port> exists, so turning the watchdog off in the intent
// must delete those entries; plan must show the deletes, apply must make
// them, and a second plan must be empty.
func TestWatchdogOffRemovesSONiCWatchdog(t *testing.T) {
	tw, err := twin.Start(twin.Options{Name: "leaf1", Platform: intent.PlatformSONiC})
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	// PFC_WD exists only once the watchdog was started ('pfcwd
	// start_default' writes PFC_WD|GLOBAL), and SONiC's config updater
	// refuses to create it: start from a switch where it was.
	pfcwdStarted(t, tw)
	f := compileFabric(intent.PlatformSONiC, compilePolicy(), 1, 2)
	f.Switches[0].Address, f.Switches[0].TLS = tw.Addr(), intent.TLS{Insecure: true}
	eng := &switchdrv.Engine{Registry: compileRegistry(t), BackupDir: t.TempDir()}
	apply := func() *plan.Plan {
		t.Helper()
		p, err := eng.Plan(t.Context(), f, nil)
		if err != nil || p.HasErrors() {
			t.Fatalf("Plan: %v %v", err, switchdrv.Errors(p))
		}
		if _, err := eng.Apply(t.Context(), f, p); err != nil {
			t.Fatalf("Apply: %v", err)
		}
		return p
	}
	apply()
	wd := path("sonic-db:/CONFIG_DB/localhost/PFC_WD/Ethernet0")
	if _, ok := tw.Value(wd); !ok {
		t.Fatal("watchdog on: no PFC_WD|Ethernet0 after apply")
	}

	f.Policy.Watchdog = intent.Watchdog{}
	p := apply()
	var deletes []string
	for _, c := range p.Targets[0].Changes {
		if c.Action == plan.Delete {
			deletes = append(deletes, c.Path)
		}
	}
	want := map[string]bool{"sonic-db:/CONFIG_DB/localhost/PFC_WD/Ethernet0": true, "sonic-db:/CONFIG_DB/localhost/PFC_WD/Ethernet8": true}
	for _, d := range deletes {
		delete(want, d)
	}
	if len(want) > 0 {
		t.Errorf("watchdog off: plan deletes %q, missing %v", deletes, want)
	}
	for _, port := range []string{"Ethernet0", "Ethernet8"} {
		if v, ok := tw.Value(path("sonic-db:/CONFIG_DB/localhost/PFC_WD/" + port)); ok {
			t.Errorf("watchdog off: PFC_WD|%s still on the switch after apply: %v", port, v)
		}
	}
	again, err := eng.Plan(t.Context(), f, nil)
	if err != nil || again.HasErrors() {
		t.Fatalf("replan: %v %v", err, switchdrv.Errors(again))
	}
	if again.Targets[0].HasChanges() {
		t.Errorf("replan after watchdog off has changes: %+v", again.Targets[0].Changes)
	}

	// Watchdog off from the start: nothing to delete, and the plan (whose
	// payload then deletes nothing) is not refused as stale.
	fresh, err := twin.Start(twin.Options{Name: "leaf1", Platform: intent.PlatformSONiC})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	pfcwdStarted(t, fresh)
	f.Switches[0].Address = fresh.Addr()
	apply()
}

// pfcwdStarted puts PFC_WD|GLOBAL on tw as 'pfcwd start_default' leaves it
// (sonic-utilities pfcwd/main.py; default poll interval 200 ms).
func pfcwdStarted(t *testing.T, tw *twin.Twin) {
	t.Helper()
	if err := tw.Put(path("sonic-db:/CONFIG_DB/localhost/PFC_WD/GLOBAL"), map[string]any{"POLL_INTERVAL": "200"}); err != nil {
		t.Fatal(err)
	}
}
