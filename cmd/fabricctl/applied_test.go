package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fabricctl/fabricctl/examples"
	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/portfacts"
	"github.com/fabricctl/fabricctl/internal/applied"
	"github.com/fabricctl/fabricctl/internal/profile"
	"github.com/fabricctl/fabricctl/internal/sim"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
)

// labApplied starts profiled twins of f (strict: platform -> profile),
// applies f to them with plan and apply, and returns the engine that did
// (its connections serve the read-back).
func labApplied(t *testing.T, f *intent.Fabric, strict labProfiles) (*labTwins, *switchdrv.Engine) {
	t.Helper()
	reg, err := newRegistry()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	l, err := startLabFor(dir, reg, f, strict)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.close)
	eng := &switchdrv.Engine{Registry: reg, BackupDir: filepath.Join(dir, "backups"), Transport: transport.Options{Timeout: time.Minute}, Defaults: yangDefaults}
	t.Cleanup(eng.Close)
	ctx := context.Background()
	p, err := eng.Plan(ctx, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := switchdrv.Errors(p); err != nil {
		t.Fatalf("plan: %v", err)
	}
	if _, err := eng.Apply(ctx, f, p); err != nil {
		t.Fatalf("apply: %v", err)
	}
	return l, eng
}

// wantPortConfig is port p's configuration as the intent's derived facts
// say the compilers program it (intent/portfacts): PFC, headroom in
// cells and static XOFF of each lossless class, ECN of each ECN class,
// the IP MTU. OpenConfig programs no PFC (no model).
func wantPortConfig(f *intent.Fabric, sw *intent.Switch, p intent.Port) sim.PortConfig {
	pf := portfacts.PortOf(f, sw, p)
	pc := sim.PortConfig{MTU: pf.IPMTU}
	for prio := range pc.Prio {
		pc.Prio[prio].XOFF = -1
	}
	if sw.Platform != intent.PlatformOpenConfig {
		for _, l := range pf.Lossless {
			pc.Prio[l.Priority] = sim.PrioConfig{PFC: true, Headroom: pf.Headroom.Occupied, XOFF: l.StaticXOFF}
		}
		// semi-lossless: pause honoured, never sent (portfacts PFCHonour
		// without PFCSend)
		for prio := range pc.Prio {
			if pf.Switch.PFCHonour&(1<<prio) != 0 && pf.Switch.PFCSend&(1<<prio) == 0 {
				pc.Prio[prio].HonourOnly = true
			}
			// SONiC's semi-lossless is PORT pfc_asym on, and sonic-swss
			// portsorch (setPortPfcAsym) then sets PFC RX on all eight
			// priorities (0xff), not only the lossless ones.
			if sw.Platform == intent.PlatformSONiC && pf.Switch.PFCHonour != 0 && pf.Switch.PFCSend == 0 && !pc.Prio[prio].PFC {
				pc.Prio[prio].HonourOnly = true
			}
		}
	}
	cell := pf.Switch.CellBytes
	for _, cl := range f.Policy.Classes {
		if cl.ECN == nil {
			continue
		}
		e := &sim.ECNConfig{MinBytes: cl.ECN.MinBytes, MaxBytes: cl.ECN.MaxBytes, Probability: cl.ECN.Probability}
		// A model's buffer leaves read back in whole cells (the twin
		// rounds them as buffer hardware does: twin.Options.CellBytes);
		// SONiC's CONFIG_DB keeps the string written and EOS's CLI the
		// text.
		if cell > 0 && sw.Platform != intent.PlatformSONiC && sw.Platform != intent.PlatformEOS {
			e.MinBytes, e.MaxBytes = (e.MinBytes+cell-1)/cell*cell, (e.MaxBytes+cell-1)/cell*cell
		}
		pc.Prio[cl.Priority].ECN = e
	}
	return pc
}

// fmtPortConfig shows pc's MTU and the priorities of f's classes (the
// others carry no traffic; a switch keeps its template's settings there,
// e.g. SONiC's BUFFER_PG|<port>|3-4 and QUEUE|<port>|3-4).
func fmtPortConfig(f *intent.Fabric, pc sim.PortConfig) string {
	var b strings.Builder
	fmt.Fprintf(&b, "mtu %d", pc.MTU)
	for prio, c := range pc.Prio {
		if f.Policy.ClassByPriority(prio) == nil {
			continue
		}
		fmt.Fprintf(&b, "; prio %d pfc %v honour-only %v headroom %d xoff %d", prio, c.PFC, c.HonourOnly, c.Headroom, c.XOFF)
		if c.ECN != nil {
			fmt.Fprintf(&b, " ecn %d-%d/%d%%", c.ECN.MinBytes, c.ECN.MaxBytes, c.ECN.Probability)
		}
	}
	return b.String()
}

// sonicOwnProfiles is the SONiC release whose config updater lets
// fabricctl write its own buffer and WRED profiles.
const sonicOwnProfiles = "sonic-202511"

// TestAppliedReadsBackPortfacts: every example intent (and the nine-switch
// lab fabric), compiled, applied to profiled twins and read back over gNMI
// (internal/applied), gives per port exactly the figures intent/portfacts
// derives and the compilers write: PFC per priority, headroom in cells,
// static XOFF, ECN thresholds and probability, IP MTU. SONiC runs on
// sonic-202511, whose config updater takes fabricctl's own buffer and WRED
// profiles (on 202405/202411 the template's are kept:
// TestAppliedSONiCTemplateProfiles).
func TestAppliedReadsBackPortfacts(t *testing.T) {
	sets, err := examples.IntentSets("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	sets["lab9"] = []string{lab9}
	sets["oc2"] = []string{"testdata/oc2.yaml"}
	// SR Linux 24.10 writes pfc-pause-frame-priority as a leaf-list
	// (profile Shapes.PFCPauseFramePriority), 25.3 as a leaf.
	sets["srl-pod.yaml@srlinux-24.10"] = sets["srl-pod.yaml"]
	names := make([]string, 0, len(sets))
	for n := range sets {
		names = append(names, n)
	}
	sort.Strings(names)
	if _, err := profile.Lookup(sonicOwnProfiles); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			f, err := intent.Load(sets[name]...)
			if err != nil {
				t.Fatal(err)
			}
			_, srlProfile, _ := strings.Cut(name, "@")
			for i := range f.Switches {
				switch f.Switches[i].Platform {
				case intent.PlatformSONiC:
					f.Switches[i].Profile = sonicOwnProfiles
				case intent.PlatformSRLinux:
					if srlProfile != "" {
						f.Switches[i].Profile = srlProfile
					}
				}
			}
			_, eng := labApplied(t, f, labProfiles{})
			sws, err := applied.Read(context.Background(), f, eng)
			if err != nil {
				t.Fatal(err)
			}
			for i := range f.Switches {
				sw := &f.Switches[i]
				got := sws[sw.Name]
				if got == nil {
					t.Fatalf("switch %s not read", sw.Name)
				}
				for _, p := range sw.Ports {
					// Where switches send no pause (lossy,
					// semi-lossless), plan removes the template's
					// lossless BUFFER_PG too: no headroom is read back.
					want := fmtPortConfig(f, wantPortConfig(f, sw, p))
					if g := fmtPortConfig(f, got.Ports[p.Name]); g != want {
						t.Errorf("%s %s %s:\n got %s\nwant %s", sw.Platform, sw.Name, p.Name, g, want)
					}
				}
			}
		})
	}
}

// TestAppliedSONiCTemplateProfiles: on sonic-202411 (the default), whose
// config updater refuses to create buffer and WRED profiles, plan keeps
// the template's pg_lossless profile (raising its xoff where it is below
// the need) and points the ECN queues at AZURE_LOSSLESS with the earliest
// marking of the ECN classes: what is read back is that, not the intent's
// figures, and the simulator runs it.
func TestAppliedSONiCTemplateProfiles(t *testing.T) {
	f, err := intent.Load("../../examples/sonic-pod.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, eng := labApplied(t, f, labProfiles{})
	sws, err := applied.Read(context.Background(), f, eng)
	if err != nil {
		t.Fatal(err)
	}
	// the earliest marking of the ECN classes
	var e *sim.ECNConfig
	for _, cl := range f.Policy.Classes {
		if cl.ECN == nil {
			continue
		}
		if e == nil {
			e = &sim.ECNConfig{MinBytes: cl.ECN.MinBytes, MaxBytes: cl.ECN.MaxBytes, Probability: cl.ECN.Probability}
			continue
		}
		e.MinBytes, e.MaxBytes, e.Probability = min(e.MinBytes, cl.ECN.MinBytes), min(e.MaxBytes, cl.ECN.MaxBytes), max(e.Probability, cl.ECN.Probability)
	}
	for i := range f.Switches {
		sw := &f.Switches[i]
		for _, p := range sw.Ports {
			want := wantPortConfig(f, sw, p)
			got := sws[sw.Name].Ports[p.Name]
			if got.MTU != want.MTU {
				t.Errorf("%s %s: mtu %d, want %d", sw.Name, p.Name, got.MTU, want.MTU)
			}
			for _, cl := range f.Policy.Classes {
				g, w := got.Prio[cl.Priority], want.Prio[cl.Priority]
				if g.PFC != w.PFC || g.Headroom < w.Headroom || g.XOFF != w.XOFF {
					t.Errorf("%s %s prio %d: pfc %v headroom %d xoff %d, want pfc %v, headroom at least %d, xoff %d", sw.Name, p.Name, cl.Priority, g.PFC, g.Headroom, g.XOFF, w.PFC, w.Headroom, w.XOFF)
				}
				if cl.ECN != nil && (g.ECN == nil || *g.ECN != *e) {
					t.Errorf("%s %s prio %d: ecn %+v, want the shared AZURE_LOSSLESS %+v", sw.Name, p.Name, cl.Priority, g.ECN, *e)
				}
			}
		}
	}
}
