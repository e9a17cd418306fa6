package switchdrv_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

// fakeSRL is a TEST DOUBLE platform: a small SR Linux-shaped compiler (DSCP
// policy, one WRED-ECN profile with thresholds, per-port PFC) that exists so
// the plan/apply/rollback machinery can be tested without the real platform
// packages. The real compilers are exercised by the end-to-end tests in
// cmd/fabricctl.
type fakeSRL struct{ cell int64 }

func (fakeSRL) Name() intent.Platform { return intent.PlatformSRLinux }

func (p fakeSRL) Quirks() switchdrv.Quirks {
	return switchdrv.Quirks{PFC: true, MaxLosslessPriorities: 2, BufferCellBytes: p.cell}
}

func path(s string) *gnmipb.Path {
	p, err := transport.ParsePath(s)
	if err != nil {
		panic(err)
	}
	return p
}

func jsonVal(v any) *gnmipb.TypedValue {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: b}}
}

func (fakeSRL) Compile(f *intent.Fabric, sw *intent.Switch) (*switchdrv.Desired, error) {
	d := &switchdrv.Desired{Switch: sw.Name, Platform: sw.Platform, Encoding: gnmipb.Encoding_JSON_IETF}
	var dscp []any
	var ecn *intent.ECN
	for _, c := range f.Policy.Classes {
		for _, v := range c.DSCP {
			dscp = append(dscp, map[string]any{"value": v, "forwarding-class": fmt.Sprintf("fc%d", c.Priority)})
		}
		if c.ECN != nil {
			ecn = c.ECN
		}
	}
	d.Replaces = append(d.Replaces, &gnmipb.Update{
		Path: path("/qos/classifiers/dscp-policy[name=ROCE_DSCP]"),
		Val:  jsonVal(map[string]any{"name": "ROCE_DSCP", "dscp": dscp}),
	})
	if ecn != nil {
		d.Replaces = append(d.Replaces, &gnmipb.Update{
			Path: path("/qos/buffer-management/queue-management-profile[name=ROCE_ECN]"),
			Val: jsonVal(map[string]any{"srl_nokia-qos:wred": map[string]any{"wred-slope": []any{map[string]any{
				"traffic-type": "all", "drop-probability": "all", "enable-ecn": true,
				"min-threshold": fmt.Sprint(ecn.MinBytes), "max-threshold": fmt.Sprint(ecn.MaxBytes),
			}}}}),
		})
	}
	for _, port := range sw.Ports {
		d.Replaces = append(d.Replaces, &gnmipb.Update{
			Path: path("/qos/interfaces/interface[interface-id=" + port.Name + "]"),
			Val: jsonVal(map[string]any{
				"interface-ref": map[string]any{"interface": port.Name},
				"pfc":           map[string]any{"pfc-enable": true, "pfc-mapping-profile": "ROCE_PFC"},
			}),
		})
	}
	return d, nil
}

func fakeFabric(sws ...intent.Switch) *intent.Fabric {
	return &intent.Fabric{
		Name: "pod1",
		Policy: intent.Policy{Classes: []intent.Class{
			{Name: "default", Priority: 0, Default: true, Weight: 50},
			{Name: "roce", DSCP: []int{26}, Priority: 3, Lossless: true, Weight: 50,
				ECN: &intent.ECN{MinBytes: 150000, MaxBytes: 1500000, Probability: 100}},
			{Name: "cnp", DSCP: []int{48}, Priority: 6, Strict: true, CNP: true},
		}},
		Switches: sws,
	}
}

type lab struct {
	f     *intent.Fabric
	twins []*twin.Twin
	eng   *switchdrv.Engine
}

func newLab(t testing.TB, n int, cell int64) *lab {
	t.Helper()
	l := &lab{}
	var sws []intent.Switch
	for i := range n {
		name := fmt.Sprintf("leaf%d", i+1)
		tw, err := twin.Start(twin.Options{Name: name, Platform: intent.PlatformSRLinux, CellBytes: cell})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(tw.Close)
		l.twins = append(l.twins, tw)
		sws = append(sws, intent.Switch{Name: name, Platform: intent.PlatformSRLinux, Address: tw.Addr(),
			TLS:   intent.TLS{Insecure: true},
			Ports: []intent.Port{{Name: "ethernet-1/1"}, {Name: "ethernet-1/2"}}})
	}
	l.f = fakeFabric(sws...)
	reg := switchdrv.NewRegistry()
	if err := reg.Register(fakeSRL{cell: cell}); err != nil {
		t.Fatal(err)
	}
	l.eng = &switchdrv.Engine{Registry: reg, BackupDir: t.TempDir(),
		Transport: transport.Options{Timeout: 2 * time.Second, Backoff: time.Millisecond}}
	// Something not owned by fabricctl, and an owned subtree with a stale
	// entry, so rollback has real state to put back.
	for _, tw := range l.twins {
		if err := tw.Put(path("/system/name"), map[string]any{"host-name": tw.Name()}); err != nil {
			t.Fatal(err)
		}
		if err := tw.Put(path("/qos/classifiers/dscp-policy[name=ROCE_DSCP]"),
			map[string]any{"name": "ROCE_DSCP", "dscp": []any{map[string]any{"value": 24, "forwarding-class": "fc3"}}}); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// state is everything a twin holds under /qos and /system, as JSON text.
func state(t testing.TB, tw *twin.Twin) string {
	t.Helper()
	var parts []string
	for _, p := range []string{"/qos", "/system"} {
		v, _ := tw.Value(path(p))
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, string(b))
	}
	return strings.Join(parts, "\n")
}

func sets(l *lab) []int {
	var out []int
	for _, tw := range l.twins {
		out = append(out, tw.Sets())
	}
	return out
}

func (l *lab) plan(t *testing.T) *plan.Plan {
	t.Helper()
	p, err := l.eng.Plan(t.Context(), l.f, nil)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	if err := switchdrv.Errors(p); err != nil {
		t.Fatalf("Plan target errors: %v", err)
	}
	return p
}

func TestApplyThenNoChanges(t *testing.T) {
	l := newLab(t, 3, 0)
	p := l.plan(t)
	if !p.HasChanges() {
		t.Fatal("first plan has no changes")
	}
	res, err := l.eng.Apply(t.Context(), l.f, p)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	var got []string
	for _, tr := range res.Targets {
		got = append(got, tr.Name+"="+tr.Status)
		if tr.Backup == "" {
			t.Errorf("%s: no backup file recorded", tr.Name)
		}
	}
	if diff := cmp.Diff([]string{"leaf1=applied", "leaf2=applied", "leaf3=applied"}, got); diff != "" {
		t.Errorf("statuses mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{1, 1, 1}, sets(l)); diff != "" {
		t.Errorf("Sets per twin mismatch (-want +got):\n%s", diff)
	}
	// The stale DSCP 24 entry is gone: replace owns the subtree.
	v, _ := l.twins[0].Value(path("/qos/classifiers/dscp-policy[name=ROCE_DSCP]/dscp"))
	if b, _ := json.Marshal(v); strings.Contains(string(b), `"value":24`) {
		t.Errorf("replace kept the entry for DSCP 24: %s", b)
	}

	p2 := l.plan(t)
	if p2.HasChanges() {
		var b bytes.Buffer
		_ = plan.WriteText(&b, p2)
		t.Fatalf("plan after apply has changes:\n%s", b.String())
	}
	res2, err := l.eng.Apply(t.Context(), l.f, p2)
	if err != nil {
		t.Fatalf("re-Apply: %v", err)
	}
	if res2.Status != "no-changes" {
		t.Errorf("re-apply status = %q, want no-changes", res2.Status)
	}
	if diff := cmp.Diff([]int{1, 1, 1}, sets(l)); diff != "" {
		t.Errorf("re-apply sent Sets (-want +got):\n%s", diff)
	}
}

func TestCellRoundingIsNotDrift(t *testing.T) {
	l := newLab(t, 1, 1088)
	if _, err := l.eng.Apply(t.Context(), l.f, l.plan(t)); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	v, _ := l.twins[0].Value(path("/qos/buffer-management/queue-management-profile[name=ROCE_ECN]/wred/wred-slope"))
	b, _ := json.Marshal(v)
	if !strings.Contains(string(b), `"min-threshold":"150144"`) {
		t.Fatalf("twin did not round the threshold to a 1088 B cell: %s", b)
	}
	if p := l.plan(t); p.HasChanges() {
		t.Errorf("rounded thresholds reported as drift: %+v", p.Targets[0].Changes)
	}
}

func TestRollbackWhenThirdRejects(t *testing.T) {
	l := newLab(t, 3, 0)
	before := []string{state(t, l.twins[0]), state(t, l.twins[1]), state(t, l.twins[2])}
	p := l.plan(t)
	l.twins[2].RejectNextSet()
	l.eng.Parallel = 1 // leaf1 and leaf2 are applied before leaf3 fails
	res, err := l.eng.Apply(t.Context(), l.f, p)
	if !errors.Is(err, switchdrv.ErrRolledBack) {
		t.Fatalf("Apply error = %v, want ErrRolledBack", err)
	}
	var got []string
	for _, tr := range res.Targets {
		got = append(got, tr.Name+"="+tr.Status)
	}
	want := []string{"leaf1=rolled-back", "leaf2=rolled-back", "leaf3=failed"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statuses mismatch (-want +got):\n%s", diff)
	}
	// leaf1 and leaf2: applied then restored (2 Sets each); leaf3 rejected.
	if diff := cmp.Diff([]int{2, 2, 0}, sets(l)); diff != "" {
		t.Errorf("Sets per twin mismatch (-want +got):\n%s", diff)
	}
	for i, tw := range l.twins {
		if diff := cmp.Diff(before[i], state(t, tw)); diff != "" {
			t.Errorf("%s not back to its original state (-want +got):\n%s", tw.Name(), diff)
		}
	}
}

// TestFaults: a Set that hangs (timeout), a connection dropped after the
// switch committed (outcome unknown) and Ctrl-C in the middle all end with
// every switch either untouched or rolled back and verified.
func TestFaults(t *testing.T) {
	tests := []struct {
		name   string
		inject func(l *lab, cancel context.CancelFunc)
	}{
		{"hang", func(l *lab, _ context.CancelFunc) { l.twins[1].HangNextSet() }},
		{"drop after commit", func(l *lab, _ context.CancelFunc) { l.twins[1].DropNextSet(true) }},
		{"drop before commit", func(l *lab, _ context.CancelFunc) { l.twins[1].DropNextSet(false) }},
		{"acknowledged but not programmed (verify fails)", func(l *lab, _ context.CancelFunc) { l.twins[1].LoseNextSet() }},
		{"ctrl-c", func(l *lab, cancel context.CancelFunc) {
			// Interrupt exactly when leaf2's Set is about to go out.
			l.eng.Progress = func(ev switchdrv.Event) {
				if ev.Switch == "leaf2" && ev.Step == "set" {
					cancel()
				}
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := newLab(t, 3, 0)
			l.eng.Transport.Timeout = 500 * time.Millisecond
			l.eng.Parallel = 1
			before := []string{state(t, l.twins[0]), state(t, l.twins[1]), state(t, l.twins[2])}
			p := l.plan(t)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			tc.inject(l, cancel)
			res, err := l.eng.Apply(ctx, l.f, p)
			if !errors.Is(err, switchdrv.ErrRolledBack) {
				t.Fatalf("Apply error = %v, want ErrRolledBack", err)
			}
			if err != nil && strings.Contains(err.Error(), "password") {
				t.Errorf("error mentions a password: %v", err)
			}
			for i, tw := range l.twins {
				if diff := cmp.Diff(before[i], state(t, tw)); diff != "" {
					t.Errorf("%s half-applied (-want +got):\n%s", tw.Name(), diff)
				}
			}
			if res == nil {
				t.Fatal("Apply returned no result")
			}
			if got := res.Targets[0].Status; got != switchdrv.StatusRolledBack {
				t.Errorf("leaf1 (applied before the fault) status %s, want rolled-back", got)
			}
			for _, tr := range res.Targets {
				switch tr.Status {
				case switchdrv.StatusRolledBack, switchdrv.StatusFailed, switchdrv.StatusSkipped:
				default:
					t.Errorf("%s: status %s after a failed run", tr.Name, tr.Status)
				}
			}
		})
	}
}

func TestCanaryStopsRollout(t *testing.T) {
	l := newLab(t, 4, 0)
	l.eng.Canary = 1
	l.twins[0].RejectNextSet() // the canary fails: nobody else is touched
	_, err := l.eng.Apply(t.Context(), l.f, l.plan(t))
	if !errors.Is(err, switchdrv.ErrRolledBack) {
		t.Fatalf("Apply error = %v, want ErrRolledBack", err)
	}
	if diff := cmp.Diff([]int{0, 0, 0, 0}, sets(l)); diff != "" {
		t.Errorf("Sets after a failed canary (-want +got):\n%s", diff)
	}

	l = newLab(t, 4, 0)
	l.eng.Canary, l.eng.Parallel = 1, 2
	var stages []string
	l.eng.Progress = func(ev switchdrv.Event) {
		if ev.Step == "stage" {
			stages = append(stages, ev.Detail)
		}
	}
	l.twins[3].RejectNextSet() // second batch (leaf2, leaf3) passes, third (leaf4) fails
	_, err = l.eng.Apply(t.Context(), l.f, l.plan(t))
	if diff := cmp.Diff([]string{"canary (stage 1 of 3): leaf1", "batch 2 of 3: leaf2, leaf3", "batch 3 of 3: leaf4"}, stages); diff != "" {
		t.Errorf("stage events (-want +got):\n%s", diff)
	}
	if !errors.Is(err, switchdrv.ErrRolledBack) {
		t.Fatalf("Apply error = %v, want ErrRolledBack", err)
	}
	if diff := cmp.Diff([]int{2, 2, 2, 0}, sets(l)); diff != "" {
		t.Errorf("Sets per twin (-want +got):\n%s", diff)
	}
}

func TestDriftNamesThePath(t *testing.T) {
	l := newLab(t, 2, 0)
	if _, err := l.eng.Apply(t.Context(), l.f, l.plan(t)); err != nil {
		t.Fatal(err)
	}
	if err := l.twins[1].Put(path("/qos/interfaces/interface[interface-id=ethernet-1/2]/pfc/pfc-enable"), false); err != nil {
		t.Fatal(err)
	}
	p := l.plan(t)
	var got []plan.Change
	for _, tp := range p.Targets {
		for _, c := range tp.Changes {
			c.Reason = ""
			got = append(got, c)
		}
	}
	want := []plan.Change{{Action: plan.Update, Path: "/qos/interfaces/interface[interface-id=ethernet-1/2]/pfc/pfc-enable", Before: "false", After: "true"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("drift mismatch (-want +got):\n%s", diff)
	}
	if p.Targets[0].HasChanges() || !p.Targets[1].HasChanges() {
		t.Errorf("drift attributed to the wrong switch: %+v", p.Targets)
	}
}

func TestStalePlanRefused(t *testing.T) {
	l := newLab(t, 2, 0)
	p := l.plan(t)
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	saved, err := plan.Unmarshal(b) // as `apply plan.json` reads it
	if err != nil {
		t.Fatal(err)
	}
	// A change outside the owned paths does not make the plan stale...
	if err := l.twins[1].Put(path("/qos/interfaces/interface[interface-id=ethernet-1/9]"), map[string]any{"pfc": map[string]any{"pfc-enable": false}}); err != nil {
		t.Fatal(err)
	}
	// ...a change inside them does.
	if err := l.twins[1].Put(path("/qos/interfaces/interface[interface-id=ethernet-1/1]"), map[string]any{"pfc": map[string]any{"pfc-enable": false}}); err != nil {
		t.Fatal(err)
	}
	res, err := l.eng.Apply(t.Context(), l.f, saved)
	if !errors.Is(err, plan.ErrStale) {
		t.Fatalf("Apply of a stale plan: %v, want plan.ErrStale", err)
	}
	if diff := cmp.Diff([]int{0, 0}, sets(l)); diff != "" {
		t.Errorf("a stale plan changed switches (-want +got):\n%s", diff)
	}
	if res.Targets[1].Status != switchdrv.StatusStale {
		t.Errorf("leaf2 status = %s, want stale", res.Targets[1].Status)
	}

	// A fresh saved plan applies.
	b, _ = l.plan(t).Marshal()
	saved, _ = plan.Unmarshal(b)
	if _, err := l.eng.Apply(t.Context(), l.f, saved); err != nil {
		t.Fatalf("Apply of a saved current plan: %v", err)
	}
}

func TestRestoreFromBackup(t *testing.T) {
	l := newLab(t, 1, 0)
	before := state(t, l.twins[0])
	res, err := l.eng.Apply(t.Context(), l.f, l.plan(t))
	if err != nil {
		t.Fatal(err)
	}
	if state(t, l.twins[0]) == before {
		t.Fatal("apply changed nothing")
	}
	snaps, err := switchdrv.ReadBackup(res.Targets[0].Backup)
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) != 1 {
		t.Fatalf("backup of a one-switch run holds %d snapshots, want 1", len(snaps))
	}
	snap := snaps[0]
	if err := l.eng.Restore(t.Context(), &l.f.Switches[0], snap); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if diff := cmp.Diff(before, state(t, l.twins[0])); diff != "" {
		t.Errorf("restore mismatch (-want +got):\n%s", diff)
	}
	if err := l.eng.Restore(t.Context(), &intent.Switch{Name: "leaf9"}, snap); err == nil {
		t.Error("Restore onto another switch: got no error")
	}
}

// TestCredentialsNeverShown plans against a twin that wants a password, with
// the right and the wrong one, and looks for the secret in every output:
// plan text/json/markdown, errors, debug logs.
func TestCredentialsNeverShown(t *testing.T) {
	const pass = "hunter2-Sup3rS3cret"
	tw, err := twin.Start(twin.Options{Name: "leaf1", Platform: intent.PlatformSRLinux, Username: "admin", Password: pass})
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	for _, envPass := range []string{pass, pass + "x"} {
		t.Setenv("FABRICCTL_TEST_USER", "admin")
		t.Setenv("FABRICCTL_TEST_PASS", envPass)
		f := fakeFabric(intent.Switch{Name: "leaf1", Platform: intent.PlatformSRLinux, Address: tw.Addr(),
			TLS:         intent.TLS{Insecure: true},
			Credentials: intent.Credentials{UsernameEnv: "FABRICCTL_TEST_USER", PasswordEnv: "FABRICCTL_TEST_PASS"},
			Ports:       []intent.Port{{Name: "ethernet-1/1"}}})
		var out bytes.Buffer
		log := slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))
		reg := switchdrv.NewRegistry()
		_ = reg.Register(fakeSRL{})
		eng := &switchdrv.Engine{Registry: reg, Log: log, BackupDir: t.TempDir(), Transport: transport.Options{Log: log, Attempts: 1}}
		p, err := eng.Plan(t.Context(), f, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, format := range []string{"text", "json", "markdown"} {
			if err := plan.Write(&out, p, format); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := eng.Apply(t.Context(), f, p); err != nil {
			fmt.Fprintln(&out, err)
		}
		if envPass != pass && !p.HasErrors() {
			t.Errorf("plan with a wrong password has no error")
		}
		if strings.Contains(out.String(), "hunter2") {
			t.Errorf("the password appears in the output:\n%s", out.String())
		}
	}
}

// TestWrongPlatformRefused: a switch declared srlinux whose target announces
// SONiC models is not planned (nor written).
func TestWrongPlatformRefused(t *testing.T) {
	tw, err := twin.Start(twin.Options{Name: "leaf1", Platform: intent.PlatformSONiC})
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	reg := switchdrv.NewRegistry()
	_ = reg.Register(fakeSRL{})
	eng := &switchdrv.Engine{Registry: reg, BackupDir: t.TempDir()}
	f := fakeFabric(intent.Switch{Name: "leaf1", Platform: intent.PlatformSRLinux, Address: tw.Addr(),
		TLS: intent.TLS{Insecure: true}, Ports: []intent.Port{{Name: "ethernet-1/1"}}})
	p, err := eng.Plan(t.Context(), f, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !p.HasErrors() || !strings.Contains(p.Targets[0].Error, "srl_nokia-qos") {
		t.Errorf("plan error = %q, want one naming the missing model srl_nokia-qos", p.Targets[0].Error)
	}
	if _, err := eng.Apply(t.Context(), f, p); err == nil || tw.Sets() != 0 {
		t.Errorf("Apply of a plan with errors: err %v, %d Sets; want an error and none", err, tw.Sets())
	}
}

// TestRollbackFailure: when a restore is itself rejected, apply says so
// (not ErrRolledBack), marks the switch rollback-failed and names the backups.
func TestRollbackFailure(t *testing.T) {
	l := newLab(t, 2, 0)
	l.eng.Parallel = 1
	p := l.plan(t)
	l.twins[1].RejectNextSet()
	l.eng.Progress = func(ev switchdrv.Event) {
		if ev.Switch == "leaf2" && ev.Step == "failed" {
			l.twins[0].RejectNextSet() // leaf1's restore will be refused
		}
	}
	res, err := l.eng.Apply(t.Context(), l.f, p)
	if err == nil || errors.Is(err, switchdrv.ErrRolledBack) {
		t.Fatalf("Apply error = %v, want a rollback failure", err)
	}
	if !strings.Contains(err.Error(), l.eng.BackupDir) {
		t.Errorf("error does not name the backup directory: %v", err)
	}
	var got []string
	for _, tr := range res.Targets {
		got = append(got, tr.Name+"="+tr.Status)
	}
	if diff := cmp.Diff([]string{"leaf1=rollback-failed", "leaf2=failed"}, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
}
