package check

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fabricctl/fabricctl/intent"
)

// A fix is a promise: applied, it clears its finding and raises no other
// error. These tests apply every mechanical fix (Finding.Edits) that check
// suggests over the examples, every case of TestRules, the contradicting
// fixes issue 27 names, and a generated corpus, and run check again.

// fixCase builds a fabric afresh each time (a fix is applied to its own copy).
type fixCase struct {
	name  string
	build func() (*intent.Fabric, error)
}

// tryFix applies x's edits to a fresh fabric of fc and checks the promise:
// x's finding is gone (fewer findings of its rule at its path, none with
// its message), no error at a rule and path that had none, and no new
// warning unless the fix names its rule (a consequence said out loud).
func tryFix(fc fixCase, before []Finding, x Finding) (problems []string) {
	fail := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	f, err := fc.build()
	if err != nil {
		fail("rebuild: %v", err)
		return problems
	}
	if err := Apply(f, x.Edits); err != nil {
		fail("apply %v: %v", x.Edits, err)
		return problems
	}
	after := Run(f, Options{})
	// A rule that aggregates ports (FC112, FC125) names the first port of
	// a group: a fix that moves one port out of the group moves the path
	// of what is left, which is the same finding, not a new one.
	// FC102 points at whichever of two classes comes later: a fix that
	// reorders classes moves it, so it is the same finding by its DSCP.
	key := func(y Finding) string {
		if sw, _, ok := strings.Cut(y.Path, "].ports["); ok {
			return y.ID + " " + sw + "]"
		}
		if m := dscpInBoth.FindStringSubmatch(y.Message); y.ID == "FC102" && m != nil {
			return y.ID + " DSCP " + m[1]
		}
		// FC128 points at the later of two ECN classes: the same by the pair.
		if m := ecnPair.FindStringSubmatch(y.Message); y.ID == "FC128" && m != nil {
			return y.ID + " " + min(m[1], m[2]) + " " + max(m[1], m[2])
		}
		return y.ID + " " + y.Path
	}
	had := map[string]Severity{}
	n := 0
	for _, y := range before {
		had[key(y)] = max(had[key(y)], y.Severity)
		if key(y) == key(x) && y.Severity >= Warning {
			n++
		}
	}
	m := 0
	for _, y := range after {
		if key(y) == key(x) && y.Severity >= Warning {
			m++
			if y.Message == x.Message {
				fail("the finding is still there: %s", y)
			}
		}
		if y.Severity < Warning {
			continue
		}
		sev, seen := had[key(y)]
		switch {
		case y.Severity == Error && (!seen || sev < Error):
			fail("raised a new error: %s", y)
		case y.Severity == Warning && !seen && !strings.Contains(x.Fix, y.ID):
			fail("raised a new warning the fix does not name: %s", y)
		}
	}
	if n > 0 && m >= n {
		fail("%d findings of %s at %s before, %d after", n, x.ID, x.Path, m)
	}
	return problems
}

var (
	dscpInBoth = regexp.MustCompile(`^DSCP (\d+) is in both`)
	ecnPair    = regexp.MustCompile(`^classes (\S+) and (\S+) have different ECN settings`)
)

// checkFixes runs check on each case and applies every fix with edits.
// It returns, per rule, how many fixes were applied.
func checkFixes(t *testing.T, cases []fixCase) map[string]int {
	t.Helper()
	applied := map[string]int{}
	for _, fc := range cases {
		f, err := fc.build()
		if err != nil {
			t.Errorf("%s: %v", fc.name, err)
			continue
		}
		before := Run(f, Options{})
		for _, x := range before {
			if r := ruleByID(x.ID); r != nil && r.Fix == "edit" && x.Severity >= Warning && len(x.Edits) == 0 {
				t.Errorf("%s: rule %s says its fixes are edits, but this one has none: %s\n  fix: %s", fc.name, x.ID, x, x.Fix)
			}
			if len(x.Edits) == 0 {
				continue
			}
			applied[x.ID]++
			if p := tryFix(fc, before, x); len(p) > 0 {
				t.Errorf("%s: %s\n  fix: %s\n  edits: %v\n  %s", fc.name, x, x.Fix, x.Edits, strings.Join(p, "\n  "))
			}
		}
	}
	return applied
}

func ruleByID(id string) *Rule {
	for i := range ruleTable {
		if ruleTable[i].ID == id {
			return &ruleTable[i]
		}
	}
	return nil
}

// mutated builds goodFabric with a fault, its classes sorted by priority as
// the parser leaves them (and Apply keeps them).
func mutated(mutate func(f *intent.Fabric)) func() (*intent.Fabric, error) {
	return func() (*intent.Fabric, error) {
		f := goodFabric()
		mutate(f)
		slices.SortStableFunc(f.Policy.Classes, func(a, b intent.Class) int { return a.Priority - b.Priority })
		return f, nil
	}
}

// contradictions are the fixes issue 27 found contradicting other rules,
// each a fabric whose fix, on main before it, broke its promise.
func contradictions() []fixCase {
	return []fixCase{
		// FC119 said "use ToS 106" where the ToS was 106: DSCP 26 was
		// claimed by a second class, which takes it.
		{"dscp 26 in two classes", mutated(func(f *intent.Fabric) {
			f.Policy.Classes = append(f.Policy.Classes, intent.Class{Name: "bulk", DSCP: []int{10, 26}, Priority: 4, Weight: 10, Pos: at(30)})
			class(f, "default").Weight = 40
		})},
		// FC108 said "set the host CNP priority to 3", the lossless
		// priority FC104 forbids CNPs on.
		{"cnp class on priority 3", mutated(func(f *intent.Fabric) { class(f, "cnp").Priority = 3 })},
		// FC113 said "adjust the weights" where the CNP class belongs in
		// strict priority and the others already added up.
		{"cnp class on a 10% weight", mutated(func(f *intent.Fabric) {
			cnp := class(f, "cnp")
			cnp.Strict, cnp.Weight = false, 10
		})},
		// FC125 told the user to set 9398 (SR Linux's maximum) on link
		// peers that are SONiC (maximum 9216).
		{"srlinux ports at 9500 with sonic peers", mutated(func(f *intent.Fabric) {
			for _, sw := range []int{0, 1} {
				for j := range f.Switches[sw].Ports {
					f.Switches[sw].Ports[j].MTU = 9500
				}
			}
		})},
	}
}

// TestContradictingFixTexts: the four fix texts of issue 27 say what their
// edits do, and no longer contradict the rules they ran into.
func TestContradictingFixTexts(t *testing.T) {
	cs := contradictions()
	find := func(i int, id string) Finding {
		t.Helper()
		f, _ := cs[i].build()
		for _, x := range Run(f, Options{}) {
			if x.ID == id {
				return x
			}
		}
		t.Fatalf("%s: no %s", cs[i].name, id)
		return Finding{}
	}
	if x := find(0, "FC119"); strings.Contains(x.Fix, "use ToS 106") || !strings.Contains(x.Fix, "remove DSCP 26 from class bulk") {
		t.Errorf("FC119 with DSCP 26 in two classes: fix %q (want: remove DSCP 26 from class bulk, not ToS 106 again)", x.Fix)
	}
	if x := find(1, "FC108"); strings.Contains(x.Fix, "priority to 3") || !strings.Contains(x.Fix, "priority 6") {
		t.Errorf("FC108 with CNP on priority 3: fix %q (want the CNP class back on 6, not the hosts onto 3)", x.Fix)
	}
	if x := find(2, "FC113"); !strings.Contains(x.Fix, "strict: true on CNP class cnp") || strings.Contains(x.Fix, "adjust the weights") {
		t.Errorf("FC113 with the CNP class on 10%%: fix %q (want: make it strict)", x.Fix)
	}
	f, _ := cs[3].build()
	for _, x := range Run(f, Options{}) {
		if x.ID != "FC125" {
			continue
		}
		if strings.Contains(x.Fix, "9398 on the srlinux ports and on their link peers") || !strings.Contains(x.Fix, "mtu: 9216") {
			t.Errorf("FC125 with sonic peers: fix %q (want 9216 on both ends of the spine links)", x.Fix)
		}
	}
}

// TestFixesClearTheirFindings is the property: over every example, every
// TestRules case, the contradictions and a generated corpus, each fix with
// edits clears its finding and raises no new error; every rule whose table
// entry says "edit" has its fixes applied somewhere.
func TestFixesClearTheirFindings(t *testing.T) {
	var cases []fixCase
	cases = append(cases, exampleCases(t)...)
	cases = append(cases, contradictions()...)
	for _, rc := range ruleCases() {
		if rc.opts.Platform != nil || rc.opts.CellFactor != 0 {
			continue // the fix test runs check with default options
		}
		cases = append(cases, fixCase{"rule case " + rc.name, mutated(rc.mutate)})
	}
	cases = append(cases, generatedCorpus(2000)...)
	applied := checkFixes(t, cases)
	for _, r := range Rules() {
		if strings.HasPrefix(r.Fix, "edit") && applied[r.ID] == 0 {
			t.Errorf("rule %s (%s) says its fixes are edits, but none was applied in %d intents", r.ID, r.Name, len(cases))
		}
	}
	t.Logf("fixes applied per rule over %d intents: %v", len(cases), applied)
}

// exampleCases are the example intents (and the broken one).
func exampleCases(t *testing.T) []fixCase {
	t.Helper()
	var out []fixCase
	root := filepath.Join("..", "..", "examples")
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		var files []string
		switch {
		case e.IsDir() && (e.Name() == "mixed" || e.Name() == "broken"):
			ms, _ := filepath.Glob(filepath.Join(root, e.Name(), "*.yaml"))
			files = ms
		case !e.IsDir() && strings.HasSuffix(e.Name(), ".yaml"):
			files = []string{filepath.Join(root, e.Name())}
		case e.IsDir() && e.Name() == "modes": // one intent per file
			ms, _ := filepath.Glob(filepath.Join(root, e.Name(), "*.yaml"))
			for _, m := range ms {
				out = append(out, fixCase{"example modes/" + filepath.Base(m), func() (*intent.Fabric, error) { return intent.Load(m) }})
			}
			continue
		default:
			continue
		}
		slices.Sort(files)
		out = append(out, fixCase{"example " + e.Name(), func() (*intent.Fabric, error) { return intent.Load(files...) }})
	}
	if len(out) < 5 {
		t.Fatalf("found %d examples", len(out))
	}
	return out
}

// generatedCorpus returns n faulty variants of goodFabric, each with one to
// three faults drawn with a fixed seed (the same corpus on every run), so
// that every rule's fix meets values the hand-written cases do not.
func generatedCorpus(n int) []fixCase {
	out := make([]fixCase, n)
	for i := range out {
		seed := uint64(i)
		out[i] = fixCase{fmt.Sprintf("generated #%d", i), mutated(func(f *intent.Fabric) {
			r := rand.New(rand.NewPCG(27, seed))
			for range 1 + r.IntN(3) {
				faults[r.IntN(len(faults))](r, f)
			}
		})}
	}
	return out
}

// faults each break goodFabric in one way, with random values.
var faults = []func(r *rand.Rand, f *intent.Fabric){
	func(r *rand.Rand, f *intent.Fabric) { f.Policy.RoCE.ToS = r.IntN(256) },
	func(r *rand.Rand, f *intent.Fabric) { f.Policy.RoCE.CNPPriority = r.IntN(8) },
	func(r *rand.Rand, f *intent.Fabric) { f.Policy.RoCE.CNPDSCP = r.IntN(64) },
	func(r *rand.Rand, f *intent.Fabric) { f.Policy.RoCE.CNPDSCP = []int{-1, 64, 99}[r.IntN(3)] },
	func(r *rand.Rand, f *intent.Fabric) { f.Policy.RoCE.CNPPriority = []int{-1, 8, 9}[r.IntN(3)] },
	func(r *rand.Rand, f *intent.Fabric) { f.Policy.RoCE.ToS = 256 + r.IntN(100) },
	func(r *rand.Rand, f *intent.Fabric) { class(f, "cnp").Priority = r.IntN(8) },
	func(r *rand.Rand, f *intent.Fabric) {
		cnp := class(f, "cnp")
		cnp.Strict, cnp.Weight = false, r.IntN(40)
	},
	func(r *rand.Rand, f *intent.Fabric) { class(f, "roce").Weight = r.IntN(101) },
	func(r *rand.Rand, f *intent.Fabric) { class(f, "default").Weight = r.IntN(60) },
	func(r *rand.Rand, f *intent.Fabric) {
		cl := f.Policy.Classes[r.IntN(len(f.Policy.Classes))]
		d := []int{26, 48, 10, 46}[r.IntN(4)]
		c := f.Policy.ClassByName(cl.Name)
		c.DSCP = append(slices.Clone(c.DSCP), d)
		slices.Sort(c.DSCP)
		c.DSCP = slices.Compact(c.DSCP)
	},
	func(r *rand.Rand, f *intent.Fabric) {
		name := fmt.Sprintf("bulk%d", len(f.Policy.Classes))
		f.Policy.Classes = append(f.Policy.Classes, intent.Class{Name: name, DSCP: []int{r.IntN(64)}, Priority: 1 + r.IntN(7), Weight: r.IntN(30), Pos: at(30)})
	},
	func(r *rand.Rand, f *intent.Fabric) { class(f, "roce").ECN = nil },
	func(r *rand.Rand, f *intent.Fabric) {
		class(f, "roce").ECN = &intent.ECN{MinBytes: int64(r.IntN(3_000_000)), MaxBytes: int64(r.IntN(3_000_000)), Probability: 100}
	},
	func(r *rand.Rand, f *intent.Fabric) {
		class(f, "roce").ECN = &intent.ECN{MinBytes: 150_000, MaxBytes: 1_500_000, Probability: r.IntN(150) - 20}
	},
	func(r *rand.Rand, f *intent.Fabric) {
		b := int64(400_000 + r.IntN(3_000_000))
		for i := range f.Switches {
			f.Switches[i].BufferBytes = b
		}
	},
	func(r *rand.Rand, f *intent.Fabric) {
		w := &f.Policy.Watchdog
		ms := func(lo, hi int) time.Duration { return time.Duration(lo+r.IntN(hi-lo)) * time.Millisecond }
		switch r.IntN(4) {
		case 0:
			w.Poll = ms(1, 1200)
		case 1:
			w.Restore = ms(1, 70000)
		case 2:
			w.Detect = ms(0, 6000)
		default:
			w.Enabled = false
			w.Poll = ms(1, 500)
		}
	},
	func(r *rand.Rand, f *intent.Fabric) { f.Policy.GlobalPause = true },
	func(r *rand.Rand, f *intent.Fabric) { f.Policy.HostMTU = 1000 + r.IntN(9000) },
	func(r *rand.Rand, f *intent.Fabric) { f.Policy.MTU = 1400 + r.IntN(8200) },
	func(r *rand.Rand, f *intent.Fabric) {
		f.Policy.RoCEPathMTU = []int{256, 512, 1024, 2048, 4096, 3000, 8192}[r.IntN(7)]
	},
	func(r *rand.Rand, f *intent.Fabric) {
		sw := &f.Switches[r.IntN(len(f.Switches))]
		sw.Ports[r.IntN(len(sw.Ports))].MTU = 1400 + r.IntN(8200)
	},
	func(r *rand.Rand, f *intent.Fabric) {
		m := 9000 + r.IntN(600)
		for i := range f.Switches {
			if r.IntN(2) == 0 {
				for j := range f.Switches[i].Ports {
					f.Switches[i].Ports[j].MTU = m
				}
			}
		}
	},
	func(r *rand.Rand, f *intent.Fabric) { f.Policy.DCBX = intent.DCBXSwitchWilling },
	func(r *rand.Rand, f *intent.Fabric) {
		sw := &f.Switches[r.IntN(len(f.Switches))]
		sw.Ports[r.IntN(len(sw.Ports))].Speed = int64(1+r.IntN(800)) * 1e6
	},
	func(r *rand.Rand, f *intent.Fabric) { f.Hosts[r.IntN(len(f.Hosts))].NICs[0].Speed = 400e6 },
	func(r *rand.Rand, f *intent.Fabric) {
		class(f, "roce").DSCP = nil
		f.Policy.RoCE.ToS = r.IntN(64)<<2 | 2
	},
	func(r *rand.Rand, f *intent.Fabric) {
		if class(f, "storage") != nil {
			return
		}
		f.Policy.Classes = append(f.Policy.Classes, intent.Class{Name: "storage", DSCP: []int{24}, Priority: 4, Lossless: true, Strict: true,
			ECN: &intent.ECN{MinBytes: int64(50_000 + r.IntN(200_000)), MaxBytes: 1_000_000, Probability: 100}, Pos: at(30)})
	},
	func(r *rand.Rand, f *intent.Fabric) { f.Policy.RoCE.Mode = "IB/RoCE v1" },
	func(r *rand.Rand, f *intent.Fabric) {
		f.Policy.HostBuffer = hostBuffer(int64(10_000 + r.IntN(200_000)))
		f.Hosts[r.IntN(len(f.Hosts))].NICs[0].CableMeters = float64(1 + r.IntN(100))
	},
	func(r *rand.Rand, f *intent.Fabric) { f.Switches[2+r.IntN(2)].ASIC = "" },
	func(r *rand.Rand, f *intent.Fabric) {
		f.Switches[r.IntN(len(f.Switches))].Platform = intent.PlatformEOS
	},
	func(r *rand.Rand, f *intent.Fabric) {
		f.Switches[r.IntN(len(f.Switches))].Platform = intent.PlatformOpenConfig
	},
	func(r *rand.Rand, f *intent.Fabric) {
		f.Switches[r.IntN(len(f.Switches))].Profile = []string{"sonic-202405", "sonic-202511", "srlinux-24.10"}[r.IntN(3)]
	},
	func(r *rand.Rand, f *intent.Fabric) { f.Policy.MaxLosslessPriorities = r.IntN(3) },
	func(r *rand.Rand, f *intent.Fabric) {
		f.Links = append(f.Links, intent.Link{A: intent.Endpoint{Node: "leaf1", Port: "ethernet-1/5"}, B: intent.Endpoint{Node: "leaf2", Port: "ethernet-1/5"}, Pos: at(120)})
		f.Switches[0].Ports[4].Speed = []int64{100e9, 400e9}[r.IntN(2)]
	},
	func(r *rand.Rand, f *intent.Fabric) {
		sw := &f.Switches[r.IntN(len(f.Switches))]
		c := float64(1 + r.IntN(300))
		for j := range sw.Ports {
			sw.Ports[j].CableMeters = c
		}
	},
	func(r *rand.Rand, f *intent.Fabric) {
		w := &f.Policy.Watchdog
		w.Detect, w.Restore, w.Poll = time.Duration(100+r.IntN(400))*time.Millisecond, time.Duration(100+r.IntN(900))*time.Millisecond, time.Duration(50+r.IntN(200))*time.Millisecond
	},
	func(r *rand.Rand, f *intent.Fabric) {
		f.Switches[2].ASIC = ""
		spineAt100G(f, 2)
	},
}

// TestJSONCarriesEdits: `check -o json` gives a mechanical fix as edits
// beside its text; the text output stays as it was.
func TestJSONCarriesEdits(t *testing.T) {
	f := goodFabric()
	f.Policy.GlobalPause = true
	fs := Run(f, Options{})
	var b strings.Builder
	if err := WriteJSON(&b, []string{"fabric.yaml"}, fs); err != nil {
		t.Fatal(err)
	}
	if want := `"edits": [
        {
          "path": "policy.globalPause",
          "value": "false"
        }
      ]`; !strings.Contains(b.String(), want) {
		t.Errorf("JSON lacks the edits %s:\n%s", want, b.String())
	}
	b.Reset()
	if err := WriteText(&b, fs, false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "edits") || !strings.Contains(b.String(), "  fix: set globalPause: false\n") {
		t.Errorf("text output changed:\n%s", b.String())
	}
}

// TestApplyRefusesWhatItCannotDo: an edit naming nothing, or a value that
// does not parse, is an error naming the edit, never a silent no-op.
func TestApplyRefusesWhatItCannotDo(t *testing.T) {
	for _, e := range []Edit{
		{"policy.classes[nope].weight", "10%"},
		{"policy.roce.tos", "lots"},
		{"inventory.switches[leaf1].ports[ethernet-9/9].mtu", "9216"},
		{"inventory.switches[leaf1].colour", "red"},
		{"policy.hostBuffers[buffer=1].size", "100KB"}, // no hostBuffers in goodFabric
	} {
		if err := Apply(goodFabric(), []Edit{e}); err == nil || !strings.Contains(err.Error(), e.Path) {
			t.Errorf("Apply(%v) = %v, want an error naming it", e, err)
		}
	}
	f := goodFabric()
	if err := Apply(f, []Edit{{"policy.classes[cnp].priority", "2"}, {"policy.watchdog.poll", "50ms"}, {"inventory.switches[leaf1].ports[ethernet-1/1].speed", "100G"}}); err != nil {
		t.Fatal(err)
	}
	if p := f.Policy.Classes; p[1].Name != "cnp" || p[1].Priority != 2 || f.Policy.Watchdog.Poll != 50*time.Millisecond || f.Switches[0].Ports[0].Speed != 100e9 {
		t.Errorf("Apply made the wrong changes: classes %+v, poll %v, speed %d", p, f.Policy.Watchdog.Poll, f.Switches[0].Ports[0].Speed)
	}
}

// TestNoEditsSameFindings: a run with Options.NoEdits (check's text report)
// finds what a run with edits finds, every field equal but Edits, which it
// leaves nil; over the examples, every TestRules case, the contradictions,
// the generated corpus and the large generated fabric (FC131 on every
// switch, FC124 on its links).
func TestNoEditsSameFindings(t *testing.T) {
	type run struct {
		name string
		f    func() (*intent.Fabric, error)
		opts Options
	}
	var runs []run
	add := func(fcs []fixCase) {
		for _, fc := range fcs {
			runs = append(runs, run{fc.name, fc.build, Options{}})
		}
	}
	add(exampleCases(t))
	add(contradictions())
	add(generatedCorpus(500))
	for _, rc := range ruleCases() {
		runs = append(runs, run{"rule case " + rc.name, mutated(rc.mutate), rc.opts})
	}
	runs = append(runs, run{"big fabric", func() (*intent.Fabric, error) { return bigFabric(2), nil }, Options{}})
	edits := 0
	for _, r := range runs {
		f, err := r.f()
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		with := Run(f, r.opts)
		opts := r.opts
		opts.NoEdits = true
		without := Run(f, opts)
		if len(with) != len(without) {
			t.Errorf("%s: %d findings with edits, %d without", r.name, len(with), len(without))
			continue
		}
		for i := range with {
			edits += len(with[i].Edits)
			if without[i].Edits != nil {
				t.Errorf("%s: NoEdits, but %s has edits %v", r.name, without[i], without[i].Edits)
			}
			w := with[i]
			w.Edits = nil
			if !reflect.DeepEqual(w, without[i]) {
				t.Errorf("%s: finding %d\nwith edits:    %+v\nwithout edits: %+v", r.name, i, w, without[i])
			}
		}
	}
	if edits == 0 {
		t.Fatal("no run had edits: the comparison shows nothing")
	}
	t.Logf("%d runs, %d edits left out", len(runs), edits)
}
