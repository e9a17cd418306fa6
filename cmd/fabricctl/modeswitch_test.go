package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/protobuf/proto"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/applied"
	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
)

// modeSwitchPorts are the two ports of the mode-switch fabric's switch,
// per platform (ports the profiled twins' factory data has).
var modeSwitchPorts = map[intent.Platform][2]string{
	intent.PlatformSRLinux:    {"ethernet-1/1", "ethernet-1/2"},
	intent.PlatformSONiC:      {"Ethernet0", "Ethernet8"},
	intent.PlatformEOS:        {"Ethernet1", "Ethernet2"},
	intent.PlatformOpenConfig: {"Ethernet1", "Ethernet2"},
}

// modeSwitchFabric is the text of one switch of platform pl (release
// profile prof, "" for the platform's default) under policy.mode m, with
// the PFC watchdog on (the roce-lossless preset's).
func modeSwitchFabric(m string, pl intent.Platform, prof string) string {
	ps := modeSwitchPorts[pl]
	profLine := ""
	if prof != "" {
		profLine = "      profile: " + prof + "\n"
	}
	return "apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\n" +
		"policy: {preset: roce-lossless, mode: " + m + ", mtu: 9100}\n" +
		"inventory:\n  switches:\n    - name: leaf1\n      platform: " + string(pl) + "\n" + profLine +
		"      address: 192.0.2.1:57400\n" +
		"      portDefaults: {speed: 100G, cable: 3m}\n      ports:\n        - name: " + ps[0] + "\n        - name: " + ps[1] + "\n"
}

// compileMode compiles f's switch; nil where its platform refuses the
// mode (EOS and OpenConfig cannot express some: FC162, FC106).
func compileMode(t *testing.T, reg *switchdrv.Registry, f *intent.Fabric) *gnmipb.SetRequest {
	t.Helper()
	p, err := reg.Lookup(f.Switches[0].Platform)
	if err != nil {
		t.Fatal(err)
	}
	d, err := p.Compile(f, &f.Switches[0])
	if errors.Is(err, switchdrv.ErrModeUnsupported) {
		return nil
	}
	if err != nil {
		t.Fatalf("compile %s: %v", f.Policy.Mode, err)
	}
	return d.SetRequest()
}

// planApply plans f on eng and applies it, failing on any error.
func planApply(t *testing.T, eng *switchdrv.Engine, f *intent.Fabric) {
	t.Helper()
	ctx := context.Background()
	p, err := eng.Plan(ctx, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := switchdrv.Errors(p); err != nil {
		t.Fatalf("plan %s: %v", f.Policy.Mode, err)
	}
	if _, err := eng.Apply(ctx, f, p); err != nil {
		t.Fatalf("apply %s: %v", f.Policy.Mode, err)
	}
}

// staleLeftover is, per platform, what an apply in a mode where switches
// send pause leaves behind that a mode without pause must take away: the
// text diff must show it as drift before the second apply (a "-" line).
var staleLeftover = map[intent.Platform]string{
	// aristanetworks/avd ethernet-interfaces.j2: PFC on and the
	// priority's no-drop are their own lines, removed only by their
	// "no" / "drop" forms.
	intent.PlatformEOS: "priority-flow-control priority 3 no-drop",
	// sonic-buildimage buffers_config.j2 (BUFFER_PG <port>|3-4 by
	// buffermgrd, pg_lossless) or fabricctl's own lossless PG: sonic-swss
	// cfgmgr/buffermgr.cpp never removes a lossless PG when pfc_enable
	// goes, so fabricctl must.
	intent.PlatformSONiC: "BUFFER_PG",
}

// twinTarget is a platform, and the SONiC release profile, the change
// tests (TestModeSwitchLeavesOnlyTheNewMode,
// TestIntentChangeLeavesOnlyTheNewIntent) run a profiled twin of.
type twinTarget struct {
	pl   intent.Platform
	prof string // "" for the platform's default
}

func (tg twinTarget) name() string {
	if tg.prof != "" {
		return tg.prof
	}
	return string(tg.pl)
}

// twinTargets: every platform, SONiC both as 202411 (its config updater
// refuses new buffer profiles) and with fabricctl's own profiles (202511).
var twinTargets = []twinTarget{
	{intent.PlatformSRLinux, ""},
	{intent.PlatformSONiC, "sonic-202411"},
	{intent.PlatformSONiC, sonicOwnProfiles},
	{intent.PlatformEOS, ""},
	{intent.PlatformOpenConfig, ""},
}

// loadChange reads intent A from textA and writes intent B to dir/b.yaml,
// loaded from there as the commands load it.
func loadChange(t *testing.T, dir, textA, textB string) (fa, fb *intent.Fabric, fileB string) {
	t.Helper()
	fa, err := intent.Parse("a.yaml", []byte(textA))
	if err != nil {
		t.Fatal(err)
	}
	fileB = filepath.Join(dir, "b.yaml")
	if err := os.WriteFile(fileB, []byte(textB), 0o600); err != nil {
		t.Fatal(err)
	}
	if fb, err = intent.Load(fileB); err != nil {
		t.Fatal(err)
	}
	return fa, fb, fileB
}

// startTwinLab starts a profiled twin of f in labDir (made here), with an
// engine that plans and applies against it, backups under labDir.
func startTwinLab(t *testing.T, reg *switchdrv.Registry, labDir string, f *intent.Fabric) (*labTwins, *switchdrv.Engine) {
	t.Helper()
	if err := os.Mkdir(labDir, 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := startLabFor(labDir, reg, f, labProfiles{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.close)
	eng := &switchdrv.Engine{Registry: reg, BackupDir: filepath.Join(labDir, "backups"), Transport: transport.Options{Timeout: time.Minute}, Defaults: yangDefaults}
	t.Cleanup(eng.Close)
	return l, eng
}

// planInSync plans f against the engine's switches and fails the test
// unless the plan has no error and nothing to change; what names the plan
// in the message.
func planInSync(t *testing.T, eng *switchdrv.Engine, f *intent.Fabric, what string) {
	t.Helper()
	p, err := eng.Plan(context.Background(), f, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := switchdrv.Errors(p); err != nil {
		t.Fatal(err)
	}
	if p.HasChanges() {
		t.Errorf("%s is not in sync:\n%s", what, planText(p))
	}
}

// applyAThenDiffB starts a twin of A in labDir, points B's switches at
// it, applies A, and runs diff with B: exit 2 (changes) when A and B
// compile to different payloads, 0 (in sync) when to the same (OpenConfig
// has no PFC model; EOS names nothing after a class). It returns the twin,
// its engine and diff's output.
func applyAThenDiffB(t *testing.T, reg *switchdrv.Registry, labDir string, fa, fb *intent.Fabric, fileB string) (*labTwins, *switchdrv.Engine, string) {
	t.Helper()
	wantCode := ExitChanges
	if proto.Equal(compileMode(t, reg, fa), compileMode(t, reg, fb)) {
		wantCode = ExitOK
	}
	l, eng := startTwinLab(t, reg, labDir, fa)
	if _, err := useLab(fb, labDir); err != nil {
		t.Fatal(err)
	}
	planApply(t, eng, fa)
	code, out, errOut := runCLI(t, t.Context(), "diff", "-f", fileB, "--lab", labDir, "--skip-hosts")
	if code != wantCode {
		t.Fatalf("diff B after applying A: exit %d, want %d\n%s%s", code, wantCode, out, errOut)
	}
	return l, eng, out
}

// TestModeSwitchLeavesOnlyTheNewMode: an operator changes policy.mode and
// applies again. For every platform (SONiC on a release whose config
// updater refuses fabricctl's own buffer profiles, 202411, and on one
// that takes them, 202511) and every ordered pair of modes the platform
// compiles, mode A is applied to a fresh profiled twin, then mode B: diff
// with B before the second apply shows A's pause configuration as drift
// where B sends no pause (any change of payload is drift), and after it the switch read back
// (internal/applied) equals intent/portfacts for mode B port by port
// (PFC sent and honoured, headroom, ECN, MTU), plan is in sync, and on
// SONiC no PFC watchdog entry is left on a port that sends no pause
// (sonic-swss pfcwdorch.cpp watches only pfcwd_sw_enable's priorities,
// and sonic-utilities pfcwd/main.py skips ports without pfc_enable).
func TestModeSwitchLeavesOnlyTheNewMode(t *testing.T) {
	reg, err := newRegistry()
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range twinTargets {
		name := tg.name()
		for _, a := range intent.Modes() {
			for _, b := range intent.Modes() {
				if a == b {
					continue
				}
				t.Run(name+"/"+a+"->"+b, func(t *testing.T) {
					dir := t.TempDir()
					fa, fb, fileB := loadChange(t, dir, modeSwitchFabric(a, tg.pl, tg.prof), modeSwitchFabric(b, tg.pl, tg.prof))
					if compileMode(t, reg, fa) == nil || compileMode(t, reg, fb) == nil {
						t.Skipf("%s refuses %s or %s (FC162/FC106)", tg.pl, a, b)
					}
					// diff with mode B shows A's pause configuration as
					// drift where B's switches send none.
					l, eng, out := applyAThenDiffB(t, reg, filepath.Join(dir, "lab"), fa, fb, fileB)
					ma, mb := intent.RoCEMode(a), intent.RoCEMode(b)
					if s := staleLeftover[tg.pl]; s != "" && ma.SwitchSendsPause() && !mb.SwitchSendsPause() {
						if !strings.Contains(out, "- ") || !strings.Contains(out, s) {
							t.Errorf("diff %s after applying %s does not show the stale %s as drift:\n%s", b, a, s, out)
						}
					}

					planApply(t, eng, fb)
					sw := &fb.Switches[0]
					got, err := applied.ReadSwitch(context.Background(), fb, sw, eng)
					if err != nil {
						t.Fatal(err)
					}
					for _, p := range sw.Ports {
						want := fmtPortConfig(fb, wantPortConfig(fb, sw, p))
						if g := fmtPortConfig(fb, got.Ports[p.Name]); g != want {
							t.Errorf("%s after %s, %s read back:\n got %s\nwant %s", b, a, p.Name, g, want)
						}
					}
					planInSync(t, eng, fb, fmt.Sprintf("plan %s after applying it (from %s)", b, a))
					if tg.pl == intent.PlatformSONiC && !mb.SwitchSendsPause() {
						for _, port := range sw.Ports {
							pp := &gnmipb.Path{Origin: "sonic-db", Elem: []*gnmipb.PathElem{{Name: "CONFIG_DB"}, {Name: "localhost"}, {Name: "PFC_WD"}, {Name: port.Name}}}
							if v, ok := l.twins[0].Value(pp); ok {
								t.Errorf("%s after %s: PFC_WD|%s is left (%v): no watchdog runs on a port that sends no pause", b, a, port.Name, v)
							}
						}
					}
				})
			}
		}
	}
}

// planText is p's changes, one a line.
func planText(p *plan.Plan) string {
	var b strings.Builder
	for _, tg := range p.Targets {
		for _, c := range tg.Changes {
			fmt.Fprintf(&b, "%s %s %s: %v -> %v (%s)\n", tg.Name, c.Action, c.Path, c.Before, c.After, c.Reason)
		}
	}
	return b.String()
}
