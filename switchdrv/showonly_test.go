package switchdrv_test

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/srl"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

// TestShowOnlyPlansTheSame: a plan only shown (ShowOnly, as plan -o text
// and diff run it: values the switch answers in fabricctl's own text are
// compared as text, never decoded) lists the very changes, lacks and text
// of a plan read in full, on SR Linux twins in every state: empty but for
// the operator's subinterfaces, in sync, drifted (a leaf changed, a
// subtree removed), and one without a port's subinterface.
func TestShowOnlyPlansTheSame(t *testing.T) {
	const n = 5
	f, err := intent.Parse("show.yaml", fmt.Appendf(nil, benchIntent, n, 10000+n))
	if err != nil {
		t.Fatal(err)
	}
	twins := make([]*twin.Twin, n)
	for i := range f.Switches {
		sw := &f.Switches[i]
		tw, err := twin.Start(twin.Options{Name: sw.Name, Platform: intent.PlatformSRLinux, CellBytes: 256})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(tw.Close)
		twins[i] = tw
		sw.Address = tw.Addr()
		if i != 4 {
			if err := tw.Apply(baseConfig(f, sw)); err != nil {
				t.Fatal(err)
			}
		}
	}
	reg := switchdrv.NewRegistry()
	if err := srl.Register(reg); err != nil {
		t.Fatal(err)
	}
	engine := func(showOnly bool) *switchdrv.Engine {
		return &switchdrv.Engine{Registry: reg, BackupDir: t.TempDir(), Parallel: 4, NoPayload: true, ShowOnly: showOnly,
			Transport: transport.Options{Timeout: 30 * time.Second}, Defaults: yangDefaults}
	}
	// Switches 1-3 in sync, then 2 and 3 drift; 0 stays empty.
	e := engine(false)
	p, err := e.Plan(t.Context(), f, []string{"leaf2", "leaf3", "leaf4"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Apply(t.Context(), f, p); err != nil {
		t.Fatal(err)
	}
	e.Close()
	mtu, _ := transport.ParsePath("/qos/buffer-management")
	if err := twins[1].Delete(mtu); err != nil {
		t.Fatal(err)
	}
	sched, _ := transport.ParsePath("/qos/scheduler-policies")
	if err := twins[2].Delete(sched); err != nil {
		t.Fatal(err)
	}
	render := func(showOnly bool) (*plan.Plan, string) {
		e := engine(showOnly)
		defer e.Close()
		p, err := e.Plan(t.Context(), f, nil)
		if err != nil {
			t.Fatal(err)
		}
		p.Created = time.Time{}
		var b bytes.Buffer
		if err := plan.WriteText(&b, p); err != nil {
			t.Fatal(err)
		}
		return p, b.String()
	}
	full, fullText := render(false)
	shown, shownText := render(true)
	if shownText != fullText {
		t.Errorf("plan text differs when only shown:\n--- full read\n%s\n--- show only\n%s", fullText, shownText)
	}
	if !reflect.DeepEqual(full.Targets, shown.Targets) {
		t.Errorf("plan targets differ when only shown")
	}
	if !full.Targets[0].HasChanges() || !full.Targets[1].HasChanges() || !full.Targets[2].HasChanges() || full.Targets[3].HasChanges() || len(full.Targets[4].Lacks) == 0 {
		t.Errorf("the twins are not in the states the test needs: %s", fullText)
	}
}
