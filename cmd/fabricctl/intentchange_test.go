package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/portfacts"
	"github.com/fabricctl/fabricctl/internal/applied"
	"github.com/fabricctl/fabricctl/internal/sim"
	"github.com/fabricctl/fabricctl/switchdrv"
)

// intentChange is an edit of the roce-lossless preset's classes an
// operator makes and applies again (policy.classes overrides the preset's
// class of the same name field by field).
type intentChange struct {
	name    string
	classes string // the policy.classes block, "" for the preset as it is
	// base, where set, is A's policy.classes block and both A and B are
	// written with preset none (a renamed or removed class cannot be said
	// as an override of the preset's).
	base string
	// policy are more policy lines of B (two-space indent).
	policy string
	// stale is, per platform, a line the text diff must show as a "-"
	// before the edit's apply (what the old intent left).
	stale map[intent.Platform]string
}

var intentChanges = []intentChange{
	{name: "roce-priority-3-to-4", classes: "    - {name: roce, priority: 4}\n",
		stale: map[intent.Platform]string{
			// AVD ethernet-interfaces.j2: a priority's no-drop is its own
			// line, taken away only by "priority-flow-control priority N
			// drop" (priorities[].no_drop false).
			intent.PlatformEOS: "priority-flow-control priority 3 no-drop",
		}},
	// Priority 5 is outside SONiC's template lossless range 3-4.
	{name: "roce-priority-3-to-5", classes: "    - {name: roce, priority: 5}\n",
		stale: map[intent.Platform]string{intent.PlatformEOS: "priority-flow-control priority 3 no-drop"}},
	{name: "roce-dscp-26-to-24", classes: "    - {name: roce, dscp: [24]}\n"},
	{name: "roce-ecn-off", classes: "    - {name: roce, ecn: {enabled: false}}\n",
		stale: map[intent.Platform]string{
			// AVD ethernet-interface-tx-queues.j2: the tx-queue's
			// random-detect ecn stays until "no random-detect ecn".
			intent.PlatformEOS: "random-detect ecn minimum-threshold 150000 bytes",
		}},
	{name: "cnp-priority-6-to-5", classes: "    - {name: cnp, priority: 5}\n"},
	// The RoCE class renamed, same priority, DSCP and ECN: every object
	// a compiler names after the class (SR Linux's and OpenConfig's
	// FABRICCTL_ECN_<CLASS>, OpenConfig's queue, forwarding group and
	// scheduler input <CLASS>, SONiC's SCHEDULER FABRICCTL_<CLASS> and
	// WRED_PROFILE FABRICCTL_ECN_<CLASS>) must leave with the old name.
	{name: "roce-renamed", base: presetClassesYAML, classes: strings.Replace(presetClassesYAML, "name: roce,", "name: rocev2,", 1)},
	// The CNP class removed: DSCP 48 falls to the default class.
	{name: "cnp-removed", base: presetClassesYAML, classes: presetClassesYAML[:strings.Index(presetClassesYAML, "    - {name: cnp")]},
	// The PFC watchdog's action changed: on EOS a global line of one
	// value (AVD priority-flow-control.j2), which a second apply must
	// replace, not add to.
	{name: "watchdog-action-drop-to-forward", policy: "  watchdog: {action: forward}\n",
		stale: map[intent.Platform]string{intent.PlatformEOS: "priority-flow-control pause watchdog action drop"}},
}

// presetClassesYAML is the roce-lossless preset's classes written out
// (intent/preset.go presetClasses).
const presetClassesYAML = "    - {name: default, priority: 0, weight: 50%, default: true}\n" +
	"    - {name: roce, dscp: [26], priority: 3, lossless: true, weight: 50%, ecn: {min: 150000B, max: 1501500B, probability: 100%}}\n" +
	"    - {name: cnp, dscp: [48], priority: 6, strict: true, cnp: true}\n"

// intentChangeFabric is the mode-switch fabric's switch (platform pl,
// profile prof) in mode lossless with the preset's classes edited by
// classes.
func intentChangeFabric(pl intent.Platform, prof, classes string) string {
	return intentChangeFabricWith(pl, prof, "roce-lossless", classes, "")
}

// intentChangeFabricWith is intentChangeFabric with the preset and more
// policy lines.
func intentChangeFabricWith(pl intent.Platform, prof, preset, classes, policy string) string {
	s := modeSwitchFabric("lossless", pl, prof)
	if classes == "" && policy == "" && preset == "roce-lossless" {
		return s
	}
	block := "policy:\n  preset: " + preset + "\n  mode: lossless\n  mtu: 9100\n" + policy
	if classes != "" {
		block += "  classes:\n" + classes
	}
	return strings.Replace(s, "policy: {preset: roce-lossless, mode: lossless, mtu: 9100}\n", block, 1)
}

// texts are the change's intents A and B on platform pl.
func (ch intentChange) texts(pl intent.Platform, prof string) (a, b string) {
	if ch.base != "" {
		return intentChangeFabricWith(pl, prof, "none", ch.base, ""), intentChangeFabricWith(pl, prof, "none", ch.classes, ch.policy)
	}
	return intentChangeFabric(pl, prof, ""), intentChangeFabricWith(pl, prof, "roce-lossless", ch.classes, ch.policy)
}

// fmtClassPrios is pc as fmtPortConfig shows it, on every priority a class
// of a or b uses: a priority the edit left holds nothing of the old intent.
func fmtClassPrios(a, b *intent.Fabric, pc sim.PortConfig) string {
	var prios []int
	for _, f := range []*intent.Fabric{a, b} {
		for _, cl := range f.Policy.Classes {
			if !slices.Contains(prios, cl.Priority) {
				prios = append(prios, cl.Priority)
			}
		}
	}
	slices.Sort(prios)
	var s strings.Builder
	fmt.Fprintf(&s, "mtu %d", pc.MTU)
	for _, prio := range prios {
		c := pc.Prio[prio]
		fmt.Fprintf(&s, "; prio %d pfc %v honour-only %v headroom %d xoff %d", prio, c.PFC, c.HonourOnly, c.Headroom, c.XOFF)
		if c.ECN != nil {
			fmt.Fprintf(&s, " ecn %d-%d/%d%%", c.ECN.MinBytes, c.ECN.MaxBytes, c.ECN.Probability)
		}
	}
	return s.String()
}

// TestIntentChangeLeavesOnlyTheNewIntent: an operator edits a class (the
// RoCE class moved from priority 3 to 4, and to 5, outside SONiC's
// template lossless range; its DSCP changed; its ECN turned off; the CNP
// class moved from 6 to 5) and applies again, and the reverse edit. For
// every platform (SR Linux, SONiC 202411 and 202511, EOS, OpenConfig),
// intent A is applied to a fresh profiled twin, then B:
//
//   - diff with B before its apply shows drift (exit 2), on EOS with the
//     old priority's no-drop and the old queue's ECN as "-" lines (AVD
//     ethernet-interfaces.j2 and ethernet-interface-tx-queues.j2: the CLI
//     merges, a line stays until its "priority N drop" / "no" form);
//   - after B's apply plan is in sync, and the switch read back
//     (internal/applied) equals intent/portfacts for B port by port on
//     every priority A or B uses (PFC, headroom, ECN): nothing paused,
//     reserved or marked for A's priorities. SONiC 202405/202411 keep the
//     template's BUFFER_PG <port>|3-4 whole where B's lossless priority
//     is 3 or 4 (README SONiC): its other priority reads the headroom;
//   - the twin's configuration holds nothing a fresh twin given only B
//     does not (DSCP maps, queues, schedulers, WRED and buffer profiles,
//     priority groups, CLI lines), but what leftOnPurpose names; SONiC's
//     buffer keys are judged by what they do (sonicBufferStale).
//
// A renamed RoCE class and a removed CNP class are written with preset
// none; a change a platform compiles to the same payload (a renamed class
// on EOS, which names nothing after a class) has diff in sync instead of
// drift. The PFC watchdog's action changed drop -> forward: on the EOS
// twin before jtree's top-level settings the old action's line stayed
// beside the new one.
//
// On the code before this test, EOS kept the old priority's no-drop and
// marking, the old CNP queue and both DSCP map lines, SONiC a moved lossless
// class's priority group and egress profile, SR Linux and OpenConfig the
// WRED-ECN profile of a class whose ECN was turned off.
func TestIntentChangeLeavesOnlyTheNewIntent(t *testing.T) {
	reg, err := newRegistry()
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range twinTargets {
		name := tg.name()
		for _, ch := range intentChanges {
			for _, reverse := range []bool{false, true} {
				textA, textB := ch.texts(tg.pl, tg.prof)
				sub := name + "/" + ch.name
				stale := ch.stale[tg.pl]
				if reverse {
					textA, textB = textB, textA
					sub += "/reverse"
					stale = ""
				}
				t.Run(sub, func(t *testing.T) {
					testIntentChange(t, reg, textA, textB, stale, tg.prof == "sonic-202411")
				})
			}
		}
	}
}

// testIntentChange applies textA, then textB, to a fresh twin and holds
// the switch to textB's facts and to a fresh twin given only textB
// (TestIntentChangeLeavesOnlyTheNewIntent).
func testIntentChange(t *testing.T, reg *switchdrv.Registry, textA, textB, stale string, templatePG bool) {
	dir := t.TempDir()
	fa, fb, fileB := loadChange(t, dir, textA, textB)
	// The switch that gets A, then B; diff B before B's apply.
	l, eng, out := applyAThenDiffB(t, reg, filepath.Join(dir, "lab"), fa, fb, fileB)
	if stale != "" && !slices.ContainsFunc(strings.Split(out, "\n"), func(l string) bool {
		return strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "---") && strings.Contains(l, stale)
	}) {
		t.Errorf("diff B after applying A does not show the stale %q as a \"-\" line:\n%s", stale, out)
	}
	planApply(t, eng, fb)
	planInSync(t, eng, fb, "plan B after applying it (after A)")

	// A fresh switch given only B.
	fbFresh, err := intent.Parse("b.yaml", []byte(textB))
	if err != nil {
		t.Fatal(err)
	}
	fresh, freshEng := startTwinLab(t, reg, filepath.Join(dir, "fresh"), fbFresh)
	planApply(t, freshEng, fbFresh)

	sw := &fb.Switches[0]
	got, err := applied.ReadSwitch(context.Background(), fb, sw, eng)
	if err != nil {
		t.Fatal(err)
	}
	for _, port := range sw.Ports {
		want := wantPortConfig(fb, sw, port)
		if templatePG {
			// SONiC 202405/202411 keep the template's BUFFER_PG
			// <port>|3-4 (buffers_config.j2, pg_lossless) where B's
			// lossless priority is 3 or 4: its other priority reads the
			// range's headroom (README SONiC: splitting the range would
			// flap every port on the first apply).
			for _, pair := range [][2]int{{3, 4}, {4, 3}} {
				if want.Prio[pair[0]].PFC && !want.Prio[pair[1]].PFC {
					want.Prio[pair[1]].Headroom = want.Prio[pair[0]].Headroom
				}
			}
		}
		if g, w := fmtClassPrios(fa, fb, got.Ports[port.Name]), fmtClassPrios(fa, fb, want); g != w {
			t.Errorf("%s read back on A's and B's priorities:\n got %s\nwant %s (intent/portfacts for B)", port.Name, g, w)
		}
	}
	// What the switch holds that a fresh switch given only B does not is
	// what A left.
	after, freshConf := configLeaves(l.twins[0].Config()), configLeaves(fresh.twins[0].Config())
	var left []string
	bLossless := portfacts.SendPriorities(fb)
	for _, leaf := range after {
		if slices.Contains(freshConf, leaf) || leftOnPurpose(leaf) {
			continue
		}
		if stale, ok := sonicBufferStale(leaf, bLossless); ok && !stale {
			continue
		}
		left = append(left, leaf)
	}
	if len(left) > 0 {
		t.Errorf("the switch after A then B holds what a fresh switch given only B does not (A's leftovers):\n%s", strings.Join(left, "\n"))
	}
}

// leftOnPurpose says whether a configuration leaf (configLeaves) is one an
// earlier intent may leave by design, each inert:
//   - SR Linux's named forwarding classes and queues (fc<N>, unicast-<N>,
//     multicast-<N>, pfc<N>: Nokia "Named queues and forwarding classes"):
//     merged, never deleted, since an upgraded switch has all eight and
//     fabricctl cannot tell which it made (srl.go namedObjects); nothing
//     refers to one the intent no longer uses;
//   - SONiC 202405/202411's AZURE_LOSSLESS thresholds: fabricctl sets them
//     for its ECN classes where the config updater refuses its own WRED
//     profiles (gcurules.go) and cannot know the template's to put back.
func leftOnPurpose(leaf string) bool {
	for _, p := range []string{
		"@/srl_nokia-qos:qos/forwarding-classes/", "@/srl_nokia-qos:qos/queues/",
		"@/qos/forwarding-classes/", "@/qos/queues/queue[name=", "@/qos/queues/pfc-queue[",
		"sonic-db@/CONFIG_DB/localhost/WRED_PROFILE/AZURE_LOSSLESS/",
	} {
		if strings.HasPrefix(leaf, p) {
			return true
		}
	}
	return false
}

// sonicBufferStale judges a SONiC BUFFER_PG or BUFFER_QUEUE profile leaf
// (ok) by what it does rather than by what a fresh switch has: a fresh
// switch keeps the template's lossless <port>|3-4 whole where B's lossless
// priority is 3 or 4 (README SONiC), which a switch whose earlier intent
// split the range need not get back. The leaf is stale when it gives a
// priority B sends no pause for a lossless profile (an xoff headroom
// profile, egress_lossless_profile).
func sonicBufferStale(leaf string, lossless []int) (stale, ok bool) {
	rest, ok := strings.CutPrefix(leaf, "sonic-db@/CONFIG_DB/localhost/")
	if !ok {
		return false, false
	}
	table, rest, _ := strings.Cut(rest, "/")
	if table != "BUFFER_PG" && table != "BUFFER_QUEUE" {
		return false, false
	}
	key, prof, ok := strings.Cut(rest, "/profile=")
	if !ok {
		return false, false
	}
	_, n, _ := strings.Cut(key, "|")
	prio, err := strconv.Atoi(n)
	if err != nil {
		return false, false
	}
	losslessProf := prof == "egress_lossless_profile" || strings.HasPrefix(prof, "pg_lossless_") || strings.HasPrefix(prof, "FABRICCTL_PG_")
	return losslessProf && !slices.Contains(lossless, prio), true
}

// configLeaves flattens a twin's configuration (twin.Config; namespaces
// with a target, such as SONiC's STATE_DB, are state and left out) into
// "namespace/path=value" lines: a list entry is named by its scalar
// members (its keys), a CLI line is a leaf of its own.
func configLeaves(c map[string]any) []string {
	var out []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				// SONiC's template keys a port's priorities as a range
				// (BUFFER_PG <port>|3-4): one leaf per priority, so a
				// range split into its priorities reads the same.
				if port, lo, hi, ok := sonicRange(path, k); ok {
					for n := lo; n <= hi; n++ {
						walk(path+"/"+port+"|"+strconv.Itoa(n), e)
					}
					continue
				}
				walk(path+"/"+k, e)
			}
		case []any:
			for _, e := range x {
				m, ok := e.(map[string]any)
				if !ok {
					out = append(out, fmt.Sprintf("%s=%v", path, e))
					continue
				}
				var keys []string
				for k, kv := range m {
					switch kv.(type) {
					case map[string]any, []any:
					default:
						keys = append(keys, fmt.Sprintf("%s=%v", k, kv))
					}
				}
				slices.Sort(keys)
				walk(path+"["+strings.Join(keys, ",")+"]", e)
			}
		case []string:
			for _, l := range x {
				out = append(out, path+"/"+l)
			}
		default:
			out = append(out, fmt.Sprintf("%s=%v", path, v))
		}
	}
	for ns, v := range c {
		if !strings.HasSuffix(ns, "@") {
			continue
		}
		walk(ns, v)
	}
	slices.Sort(out)
	return out
}

// sonicRange parses a CONFIG_DB key "<port>|lo-hi" of a table under path.
func sonicRange(path, key string) (port string, lo, hi int, ok bool) {
	if !strings.HasPrefix(path, "sonic-db@/CONFIG_DB/") {
		return "", 0, 0, false
	}
	port, r, ok := strings.Cut(key, "|")
	if !ok {
		return "", 0, 0, false
	}
	a, b, ok := strings.Cut(r, "-")
	if !ok {
		return "", 0, 0, false
	}
	lo, err1 := strconv.Atoi(a)
	hi, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || lo > hi {
		return "", 0, 0, false
	}
	return port, lo, hi, true
}
