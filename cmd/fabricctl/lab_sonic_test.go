package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/plan"
)

// strictTestLab is testLab with profiled twins (lab's default).
func strictTestLab(t *testing.T) (*labTwins, string) {
	t.Helper()
	reg, err := newRegistry()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	l, err := startLabWith(dir, reg, labProfiles{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.close)
	return l, dir
}

// TestSecondPlanSendsNothing: after apply, a second `plan --out` of the
// lab sends nothing to any switch: the saved plan has no change and no
// payload, as the text plan says. A SONiC CONFIG_DB keeps the string that
// was written (a redis hash field); the ASIC's buffer cell rounding happens
// below it, in the SAI, so a threshold written as 150000 reads back 150000
// (the twin used to round it to 150016, and the saved plan re-sent it).
func TestSecondPlanSendsNothing(t *testing.T) {
	l, dir := strictTestLab(t)
	f := l.file
	runCLIWant(t, ExitOK, "apply", "-f", f, "--backup-dir", filepath.Join(dir, "b"))
	out := filepath.Join(dir, "plan2.json")
	text := runCLIWant(t, ExitOK, "plan", "-f", f, "--out", out)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var p plan.Plan
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	for _, tp := range p.Targets {
		for _, c := range tp.Changes {
			if c.Action != plan.NoOp {
				t.Errorf("%s: second plan changes %s %s (%s -> %s)", tp.Name, c.Action, c.Path, c.Before, c.After)
			}
		}
	}
	sets := map[string]int{}
	for _, tw := range l.twins {
		sets[tw.Name()] = tw.Sets()
	}
	res := runCLIWant(t, ExitOK, "apply", "-f", f, out, "--backup-dir", filepath.Join(dir, "b"))
	for _, tw := range l.twins {
		if tw.Sets() != sets[tw.Name()] {
			t.Errorf("%s: applying the second saved plan sent a Set\nplan:\n%s\napply:\n%s", tw.Name(), text, res)
		}
	}
}

// TestLabSONiCFactoryValuesSurviveApplyAndRestore: the sonic-202411 twin's
// factory CONFIG_DB values that fabricctl does not own (the buffer pools)
// read back as the factory file holds them
// after apply and after restore: CONFIG_DB keeps the strings written to
// it. (The twin rounded the whole datastore to its 256 B cell on each Set,
// so egress_lossless_pool size read 34287616 instead of 34287552.)
func TestLabSONiCFactoryValuesSurviveApplyAndRestore(t *testing.T) {
	l, dir := strictTestLab(t)
	tw := twinByName(t, l, "leaf2")
	tables := func() map[string]string {
		out := map[string]string{}
		for _, tb := range []string{"BUFFER_POOL"} {
			es := []*gnmipb.PathElem{{Name: "CONFIG_DB"}, {Name: "localhost"}}
			for _, n := range strings.Split(tb, "/") {
				es = append(es, &gnmipb.PathElem{Name: n})
			}
			v, _ := tw.Value(&gnmipb.Path{Origin: "sonic-db", Elem: es})
			b, _ := json.Marshal(v)
			out[tb] = string(b)
		}
		return out
	}
	factory := tables()
	if !strings.Contains(factory["BUFFER_POOL"], `"34287552"`) {
		t.Fatalf("factory BUFFER_POOL = %s, want egress_lossless_pool size 34287552 (the factory file)", factory["BUFFER_POOL"])
	}
	backups := filepath.Join(dir, "b")
	runCLIWant(t, ExitOK, "apply", "-f", l.file, "--backup-dir", backups)
	if diff := cmp.Diff(factory, tables()); diff != "" {
		t.Errorf("after apply (-factory +now):\n%s", diff)
	}
	// The ECN minimum the roce-lossless preset writes (150000 B) reads
	// back as written, not rounded to 150016.
	wred := &gnmipb.Path{Origin: "sonic-db", Elem: []*gnmipb.PathElem{{Name: "CONFIG_DB"}, {Name: "localhost"}, {Name: "WRED_PROFILE"}, {Name: "AZURE_LOSSLESS"}, {Name: "green_min_threshold"}}}
	if v, _ := tw.Value(wred); v != "150000" {
		t.Errorf("WRED_PROFILE|AZURE_LOSSLESS green_min_threshold after apply = %v, want 150000 as written", v)
	}
	runCLIWant(t, ExitOK, "restore", "-f", l.file, "--backup", backups, "--switch", "leaf2")
	if diff := cmp.Diff(factory, tables()); diff != "" {
		t.Errorf("after restore (-factory +now):\n%s", diff)
	}
}
