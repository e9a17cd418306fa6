package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/switchdrv"
)

func TestDiffAndResultGolden(t *testing.T) {
	td, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	p := &plan.Plan{Fabric: "pod1", Targets: []plan.TargetPlan{
		{Name: "leaf1", Kind: plan.KindSwitch, Platform: "srlinux"},
		{Name: "leaf2", Kind: plan.KindSwitch, Platform: "sonic", Changes: []plan.Change{
			{Action: plan.Update, Path: "sonic-db:/CONFIG_DB/localhost/PORT_QOS_MAP/Ethernet4/pfc_enable", Before: "3,4", After: "3", Reason: "differs from the intent"},
			{Action: plan.Create, Path: "sonic-db:/CONFIG_DB/localhost/QUEUE/Ethernet4|3", After: `{"scheduler":"FABRICCTL_TC3"}`},
			{Action: plan.Delete, Path: "sonic-db:/CONFIG_DB/localhost/QUEUE/Ethernet4|5", Before: `{"scheduler":"OLD"}`},
		}},
		{Name: "leaf3", Kind: plan.KindSwitch, Platform: "eos", Error: "switch leaf3: get /qos: rpc error: code = DeadlineExceeded desc = context deadline exceeded"},
		// Issue 27 item 3: what the switch lacks and apply cannot write
		// is drift, with its reason and fix.
		{Name: "leaf4", Kind: plan.KindSwitch, Platform: "sonic", Lacks: []plan.Lack{{What: "PFC watchdog (PFC_WD)",
			Reason: "CONFIG_DB has no PFC_WD table: the watchdog was not started", Fix: "run on the switch: `sudo pfcwd start --action drop --restoration-time 400 Ethernet0 200; sudo config save -y`"}}},
	}}
	var b strings.Builder
	if err := writeDiff(&b, p); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, td, "diff_drift.golden", b.String())

	// One target failed, none drifted: not "In sync: 3 targets."
	p.Targets = slices.DeleteFunc(p.Targets, func(t plan.TargetPlan) bool { return t.Name == "leaf4" })
	p.Targets[1].Changes = nil
	b.Reset()
	if err := writeDiff(&b, p); err != nil {
		t.Fatal(err)
	}
	if want := "In sync: 2 of 3 targets; 1 failed (not compared).\n"; !strings.HasSuffix(b.String(), want) {
		t.Errorf("diff with a failed target ends:\n%s\nwant it to end with %q", b.String(), want)
	}

	res := &switchdrv.Result{Fabric: "pod1", Status: "rolled-back", Targets: []switchdrv.TargetResult{
		{Name: "leaf1", Status: switchdrv.StatusRolledBack, Changes: 26, Backup: ".fabricctl/backups/pod1-20260101T000000.000000000Z.json"},
		{Name: "leaf2", Status: switchdrv.StatusUnchanged},
		{Name: "leaf3", Status: switchdrv.StatusFailed, Changes: 2, Backup: ".fabricctl/backups/pod1-20260101T000000.000000000Z.json", Error: "switch leaf3: set cli:/: rpc error: code = InvalidArgument desc = commit failed"},
		{Name: "leaf4", Status: switchdrv.StatusSkipped, Changes: 5, Backup: ".fabricctl/backups/pod1-20260101T000000.000000000Z.json"},
	}}
	for _, format := range []string{"text", "json"} {
		b.Reset()
		if err := writeResult(&b, res, nil, guardResult{}, format); err != nil {
			t.Fatal(err)
		}
		checkGolden(t, td, "apply_result."+format+".golden", b.String())
	}
}
