package tune

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/check"
)

// modesSwitches are a SONiC and an SR Linux switch (both compile every
// mode); modesEOS and modesOC add switches that cannot.
const modesSwitches = `inventory:
  switches:
    - name: sonic1
      platform: sonic
      address: "192.0.2.2:8080"
      buffer: 2MB
      portDefaults: {speed: 100G, cable: 3m}
      ports:
        - name: Ethernet{0..4..4}
    - name: srl1
      platform: srlinux
      address: "192.0.2.1:57400"
      portDefaults: {speed: 100G, cable: 3m}
      ports:
        - name: ethernet-1/{1..2}
`

const modesEOS = `    - name: eos{1..4}
      platform: eos
      address: "192.0.2.{3..6}:6030"
      buffer: 2MB
      portDefaults: {speed: 100G, cable: 3m, mtu: 9214}
      ports:
        - name: Ethernet{1..2}/1
`

const modesOC = `    - name: oc1
      platform: openconfig
      address: "192.0.2.9:6030"
      buffer: 2MB
      portDefaults: {speed: 100G, cable: 3m}
      ports:
        - name: Ethernet{1..2}
`

// modeFabrics are intents whose platforms and policies ask different
// things of a change of mode: every platform that can (SR Linux, SONiC),
// EOS (no semi-lossless, FC162), OpenConfig (no PFC, FC106: lossy only);
// classes the preset gives, classes the file writes (lossless, ecn), the
// roce-lossy preset, and a pfc-only intent.
var modeFabrics = []struct{ name, text string }{
	{"sonic and srlinux, preset", head + "policy:\n  preset: roce-lossless\n" + modesSwitches},
	{"with eos, class ecn written", head + "policy:\n  preset: roce-lossless\n  classes:\n    - name: roce\n      ecn: {min: 150KB, max: 1.5MB, probability: 100%}\n" + modesSwitches + modesEOS},
	{"with openconfig", head + "policy:\n  preset: roce-lossless\n  mode: lossy\n" + modesSwitches + modesOC},
	{"roce-lossy preset", head + "policy:\n  preset: roce-lossy\n" + modesSwitches},
	{"classes written", head + "policy:\n  preset: none\n  classes:\n    - {name: default, priority: 0, default: true, weight: 50%}\n" +
		"    - {name: roce, dscp: [26], priority: 3, lossless: true, weight: 50%, ecn: {min: 150KB, max: 1.5MB, probability: 100%}}\n" +
		"    - {name: cnp, dscp: [48], priority: 6, strict: true, cnp: true}\n" + modesSwitches},
	{"pfc-only", head + "policy:\n  preset: roce-lossless\n  mode: pfc-only\n" + modesSwitches + modesEOS},
}

// errorsOf are the rule IDs of fs's errors.
func errorsOf(fs []check.Finding) []string {
	var out []string
	for _, x := range fs {
		if x.Severity == check.Error && !slices.Contains(out, x.ID) {
			out = append(out, x.ID)
		}
	}
	slices.Sort(out)
	return out
}

// TestModeRefusalIsCheck: tune refuses a mode exactly where check refuses
// the intent in that mode (FC106: a platform without PFC; FC162: a
// platform that cannot honour pause without sending it): every mode of
// every fabric is written into the intent with tune's own edits (what
// --write would make), parsed back, and checked. Where tune does not
// refuse it, the edited intent is in that mode and check finds no error
// the intent did not have: the mode's edits are a promise kept.
func TestModeRefusalIsCheck(t *testing.T) {
	for _, tf := range modeFabrics {
		t.Run(tf.name, func(t *testing.T) {
			f := parse(t, tf.text)
			cl := f.Policy.RoCEClass()
			if cl == nil {
				t.Fatal("no RoCE class")
			}
			base := baseSetting(f, cl)
			had := errorsOf(check.Run(f, check.Options{}))
			for _, name := range intent.Modes() {
				m := intent.RoCEMode(name)
				s := base
				s.Mode = m
				if m.ECN() && s.Kmax == 0 {
					s.Kmin, s.Kmax, s.Pmax = 150_000, 1_500_000, 100 // the preset's
				}
				g := f
				if m != base.Mode {
					srcs, _, err := Write(f.Sources, s.Edits(&f.Policy, cl, base, true))
					if err != nil {
						t.Fatalf("mode %s: write: %v", m, err)
					}
					if g, err = intent.ParseSources(srcs...); err != nil {
						t.Fatalf("mode %s: the edited intent does not parse: %v\n%s", m, err, srcs[0].Data)
					}
				}
				if got := modeOf(&g.Policy); got != m {
					t.Errorf("mode %s: the edited intent is in mode %s", m, got)
				}
				errs := errorsOf(check.Run(g, check.Options{}))
				refusedByCheck := slices.Contains(errs, "FC106") || slices.Contains(errs, "FC162")
				why := Refusal(f, m)
				if (why != "") != refusedByCheck {
					t.Errorf("mode %s: tune's refusal %q, check's errors %v: they disagree", m, why, errs)
				}
				if why != "" {
					continue
				}
				var added []string
				for _, id := range errs {
					if !slices.Contains(had, id) {
						added = append(added, id)
					}
				}
				if len(added) > 0 {
					t.Errorf("mode %s: the edited intent has check errors %v the intent had not (%v)", m, added, had)
				}
			}
		})
	}
	// The refusals say which switches and why.
	f := parse(t, modeFabrics[1].text)
	if got, want := Refusal(f, intent.ModeSemiLossless), "platform eos (eos1, eos2, ... (4 switches)): FC162: it cannot honour received pause without sending pause"; got != want {
		t.Errorf("Refusal(semi-lossless) = %q, want %q", got, want)
	}
	f = parse(t, modeFabrics[2].text)
	if got := Refusal(f, intent.ModeLossless); !strings.Contains(got, "platform openconfig (oc1): FC106") {
		t.Errorf("Refusal(lossless) with an OpenConfig switch = %q", got)
	}
	if got := Refusal(f, intent.ModeLossy); got != "" {
		t.Errorf("Refusal(lossy) = %q, want none: every platform marks ECN", got)
	}
}

// TestTuneModes: --modes searches every mode the platforms compile, each
// within the budget, reports the best of each and of all, deterministic
// for a seed whatever the parallelism; a refused mode is not simulated
// and says why. With a budget of one setting per mode the intent's own
// mode cannot improve and pfc-only (PFC alone, no ECN marking holding the
// senders back) completes this incast sooner: the tuned intent is
// pfc-only, written and proved by Write.
func TestTuneModes(t *testing.T) {
	f := parse(t, modeFabrics[1].text) // sonic, srlinux, eos
	o := Options{Scenarios: []string{"incast:16:1"}, DCQCN: true, Modes: true, Seed: 3}
	var runs []*Result
	for _, par := range []int{1, 2} {
		o.Parallel = par
		r, err := Search(t.Context(), f, o)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	r := runs[0]
	var modes []string
	for _, m := range r.Modes {
		modes = append(modes, string(m.Mode))
		switch {
		case m.Mode == intent.ModeSemiLossless:
			if !strings.Contains(m.Refused, "FC162") || m.Best != nil || m.Evaluated != 0 {
				t.Errorf("semi-lossless with EOS switches: %+v, want refused (FC162) and not simulated", m)
			}
		case m.Best == nil || m.Refused != "":
			t.Errorf("mode %s: not searched: %+v", m.Mode, m)
		case m.Best.Setting.Mode != m.Mode:
			t.Errorf("mode %s: best setting %s is of another mode", m.Mode, m.Best.Setting)
		case m.Evaluated > DefaultBudget:
			t.Errorf("mode %s: %d settings, budget %d", m.Mode, m.Evaluated, DefaultBudget)
		}
		if m.Best != nil && better(m.Best, r.After) {
			t.Errorf("mode %s's best %s beats the overall best %s", m.Mode, m.Best.Setting, r.Best)
		}
	}
	if want := []string{"lossless", "lossy", "semi-lossless", "pfc-only"}; !slices.Equal(modes, want) {
		t.Errorf("modes %v, want %v", modes, want)
	}
	for i, m := range runs[1].Modes {
		if a, b := r.Modes[i], m; a.Evaluated != b.Evaluated || (a.Best == nil) != (b.Best == nil) || a.Best != nil && a.Best.Setting != b.Best.Setting {
			t.Errorf("mode %s differs with another parallelism: %+v / %+v", m.Mode, a, b)
		}
	}
	if r.Best != runs[1].Best || r.Evaluated != runs[1].Evaluated {
		t.Errorf("best %s after %d, with another parallelism %s after %d", r.Best, r.Evaluated, runs[1].Best, runs[1].Evaluated)
	}
	var text strings.Builder
	if err := r.WriteText(&text, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"MODE", "semi-lossless  -", "refused: platform eos", "<- best"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}

	// One setting per mode: pfc-only wins.
	o.Budget, o.Parallel = 1, 2
	r, err := Search(t.Context(), f, o)
	if err != nil {
		t.Fatal(err)
	}
	if r.Best.Mode != intent.ModePFCOnly || !better(r.After, r.Before) {
		t.Fatalf("best %s (FCT %.3f of the intent's): want pfc-only, better than the intent", r.Best, r.After.FCT)
	}
	if d := cmp.Diff([]Edit{{Path: "policy.mode", Value: "pfc-only"}, {Path: "policy.classes[roce].ecn.enabled", Value: "false"}}, r.Edits); d != "" {
		t.Errorf("edits (-want +got):\n%s", d)
	}
	w, err := r.Write()
	if err != nil {
		t.Fatal(err)
	}
	if w.Fabric.Policy.Mode != intent.ModePFCOnly || w.Fabric.Policy.ClassByName("roce").ECN != nil {
		t.Errorf("the written intent: mode %s, roce ECN %+v", w.Fabric.Policy.Mode, w.Fabric.Policy.ClassByName("roce").ECN)
	}
	rep := r.Report(w)
	if len(rep.Modes) != 4 || !rep.Modes[3].Best || rep.Modes[2].Refused == "" || rep.AfterSetting.Mode != "pfc-only" {
		t.Errorf("report modes %+v, after %+v", rep.Modes, rep.AfterSetting)
	}
}

// TestTuneLossyIntentModes: a lossy intent (the roce-lossy preset) has
// no lossless class; it is tuned on its RoCE class without --class, its
// own mode first, and whichever mode wins is written into an intent check
// takes (TestModeRefusalIsCheck writes each).
func TestTuneLossyIntentModes(t *testing.T) {
	f := parse(t, modeFabrics[3].text)
	r, err := Search(t.Context(), f, Options{Scenarios: []string{"incast:4:1"}, Size: 64_000, DCQCN: true, Modes: true, Budget: 2, Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	if r.Class != "roce" || r.Base.Mode != intent.ModeLossy || len(r.Modes) != 4 || r.Modes[0].Mode != intent.ModeLossy {
		t.Fatalf("class %s, base %s, modes %+v", r.Class, r.Base, r.Modes)
	}
	if len(r.Edits) > 0 {
		w, err := r.Write()
		if err != nil {
			t.Fatalf("write %v: %v", r.Edits, err)
		}
		if modeOf(&w.Fabric.Policy) != r.Best.Mode {
			t.Errorf("written mode %s, best %s", w.Fabric.Policy.Mode, r.Best)
		}
	}
}
