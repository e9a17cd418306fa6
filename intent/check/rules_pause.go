// The pause rules: PFC watchdog timers and platforms, global pause (FC114-FC116).

package check

import (
	"fmt"
	"slices"
	"time"

	"github.com/fabricctl/fabricctl/intent"
)

// FC114
func (c *checker) watchdogTimers() {
	if len(c.lossless) == 0 {
		return
	}
	w := &c.f.Policy.Watchdog
	at := pos(w.Pos, c.f.Policy.Pos)
	if !w.Enabled {
		fix, edits := "enable the PFC watchdog (its timers as written pass)", []Edit{set("policy.watchdog.enabled", true)}
		if !c.watchdogValid(w.Detect, w.Restore, w.Poll) {
			fix, edits = c.watchdogFix("", 0)
			fix = "enable the PFC watchdog and " + fix
			edits = append([]Edit{set("policy.watchdog.enabled", true)}, edits...)
		}
		if sws, _ := c.sonicSemiLosslessHostSwitches(); len(sws) > 0 {
			// Said out loud: the watchdog turned on runs on the other
			// switches, not on these (FC166 says so).
			fix += fmt.Sprintf("; SONiC %s %s will not run it in semi-lossless mode (FC166 then says so)", plural(len(sws), "switch", "switches"), names(sws, 5))
		}
		sev, why := Warning, ""
		if c.f.Policy.Mode == intent.ModePFCOnly {
			// pfc-only relieves congestion by pause alone (FC165): a
			// storm is not an accident there but the failure mode.
			sev, why = Error, "; policy.mode pfc-only has nothing but pause against congestion, so the watchdog is required"
		}
		c.report(sev, at, "policy.watchdog.enabled", fix,
			"PFC watchdog is off: a PFC storm or deadlock stalls the lossless queues until someone intervenes%s", why).with(edits...)
		return
	}
	if w.Detect <= 0 {
		fix, edits := c.watchdogFix("detect", 200*time.Millisecond)
		c.report(Error, at, "policy.watchdog.detect", fix, "PFC watchdog detect time is not set").with(edits...)
		return
	}
	// SONiC's pfcwd refuses a poll interval above any detection or
	// restoration time, but accepts it equal (its own defaults are
	// 200/200/200 ms); neither SONiC nor SR Linux requires restore >= detect.
	switch {
	case w.Poll > 0 && (w.Poll > w.Detect || (w.Restore > 0 && w.Poll > w.Restore)):
		bound := w.Detect
		if w.Restore > 0 {
			bound = min(bound, w.Restore)
		}
		fix, edits := c.watchdogFix("poll", bound/2)
		c.report(Error, at, "policy.watchdog.poll", fix,
			"PFC watchdog poll %v is longer than detect %v or restore %v: SONiC's pfcwd refuses a poll interval bigger than any detection or restoration time", w.Poll, w.Detect, w.Restore).with(edits...)
	case w.Poll > 0 && w.Poll == w.Detect:
		fix, edits := c.watchdogFix("poll", w.Detect/2)
		c.report(Warning, at, "policy.watchdog.poll", fix,
			"PFC watchdog poll %v equals detect %v: a storm is declared only after up to %v (detect + one poll); accepted by SONiC, but poll < detect is the intent", w.Poll, w.Detect, w.Detect+w.Poll).with(edits...)
	}
	if w.Restore < w.Detect {
		fix, edits := c.watchdogFix("restore", 2*w.Detect)
		c.report(Warning, at, "policy.watchdog.restore", fix+" (restore at least detect; SONiC's pfcwd start defaults it to 2 x detect)",
			"PFC watchdog restore %v is shorter than detect %v: under a persistent storm the queue spends longer stalled (detect) than recovered (restore)", w.Restore, w.Detect).with(edits...)
	}
}

// presetWatchdog are the roce-lossless preset's timers, which every
// platform takes.
var presetWatchdog = [3]time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 100 * time.Millisecond}

// watchdogFix is the fix of one watchdog timer: field ("detect", "restore"
// or "poll") set to v, when the timers then pass FC114 and FC115 on every
// platform of the fabric; otherwise (or with field "") the preset's timers.
func (c *checker) watchdogFix(field string, v time.Duration) (string, []Edit) {
	w := &c.f.Policy.Watchdog
	t := [3]time.Duration{w.Detect, w.Restore, w.Poll}
	names := [3]string{"detect", "restore", "poll"}
	for i, n := range names {
		if n == field {
			t[i] = c.onSteps(n, v)
			if c.watchdogValid(t[0], t[1], t[2]) {
				return fmt.Sprintf("set %s to %v", n, t[i]), []Edit{setDur("policy.watchdog."+n, t[i])}
			}
		}
	}
	var edits []Edit
	for i, n := range names {
		if cur := [3]time.Duration{w.Detect, w.Restore, w.Poll}[i]; cur != presetWatchdog[i] {
			edits = append(edits, setDur("policy.watchdog."+n, presetWatchdog[i]))
		}
	}
	return fmt.Sprintf("use the preset's timers: detect %v, restore %v, poll %v", presetWatchdog[0], presetWatchdog[1], presetWatchdog[2]), edits
}

// onSteps rounds v down to the steps of timer name on every platform of
// the fabric (EOS counts detect and restore in 10 ms).
func (c *checker) onSteps(name string, v time.Duration) time.Duration {
	for _, pi := range c.pfcPlatforms() {
		r := map[string]Range{"detect": pi.Detect, "restore": pi.Restore, "poll": pi.Poll}[name]
		if r.Step > 0 && v%r.Step != 0 {
			v -= v % r.Step
		}
	}
	return v
}

// pfcPlatforms returns the facts of each PFC platform the switches run.
func (c *checker) pfcPlatforms() []PlatformInfo {
	seen := map[intent.Platform]bool{}
	var out []PlatformInfo
	for i := range c.f.Switches {
		sw := &c.f.Switches[i]
		if seen[sw.Platform] {
			continue
		}
		seen[sw.Platform] = true
		if pi, ok := c.opts.Platform(sw.Platform); ok && pi.PFC {
			out = append(out, pi)
		}
	}
	return out
}

// watchdogValid reports whether the timers pass FC114 (errors and
// warnings) and FC115 on every platform of the fabric.
func (c *checker) watchdogValid(detect, restore, poll time.Duration) bool {
	if detect <= 0 || poll <= 0 || poll >= detect || restore < detect || poll > restore {
		return false
	}
	for _, pi := range c.pfcPlatforms() {
		for _, t := range []struct {
			v time.Duration
			r Range
		}{{detect, pi.Detect}, {restore, pi.Restore}, {poll, pi.Poll}} {
			if !t.r.IsZero() && !t.r.Contains(t.v) {
				return false
			}
		}
		if pi.PollHalf && 2*poll > min(detect, restore) {
			return false
		}
	}
	return true
}

// FC115
func (c *checker) watchdogPlatform() {
	w := &c.f.Policy.Watchdog
	if len(c.lossless) == 0 || !w.Enabled {
		return
	}
	by := map[intent.Platform][]string{}
	for i := range c.f.Switches {
		sw := &c.f.Switches[i]
		by[sw.Platform] = append(by[sw.Platform], sw.Name)
	}
	plats := make([]intent.Platform, 0, len(by))
	for p := range by {
		plats = append(plats, p)
	}
	slices.Sort(plats)
	at := pos(w.Pos, c.f.Policy.Pos)
	for _, p := range plats {
		pi, ok := c.opts.Platform(p)
		if !ok || !pi.PFC {
			continue
		}
		sws := by[p]
		// A zero timer is not "unset" here: the intent's defaults fill every
		// timer, so 0 was written, and the compilers refuse it.
		for _, t := range []struct {
			name string
			val  time.Duration
			r    Range
		}{{"detect", w.Detect, pi.Detect}, {"restore", w.Restore, pi.Restore}, {"poll", w.Poll, pi.Poll}} {
			if t.r.IsZero() || t.r.Contains(t.val) {
				continue
			}
			if t.r.InBounds(t.val) {
				fix, edits := c.watchdogFix(t.name, t.val)
				c.report(Error, at, "policy.watchdog."+t.name,
					fmt.Sprintf("set %s to a multiple of %v: %s", t.name, t.r.Step, fix),
					"PFC watchdog %s %v is not a multiple of the %v that %s counts it in (%d %s: %s)",
					t.name, t.val, t.r.Step, p, len(sws), plural(len(sws), "switch", "switches"), names(sws, 5)).with(edits...)
				continue
			}
			fix, edits := c.watchdogFix(t.name, max(t.r.Min, min(t.val, t.r.Max)))
			c.report(Error, at, "policy.watchdog."+t.name,
				fmt.Sprintf("set %s within %v-%v: %s", t.name, t.r.Min, t.r.Max, fix),
				"PFC watchdog %s %v is outside the %v-%v that %s accepts (%d %s: %s)",
				t.name, t.val, t.r.Min, t.r.Max, p, len(sws), plural(len(sws), "switch", "switches"), names(sws, 5)).with(edits...)
		}
		if bound := min(w.Detect, w.Restore); pi.PollHalf && w.Poll > 0 && 2*w.Poll > bound {
			fix, edits := c.watchdogFix("poll", bound/2)
			c.report(Error, at, "policy.watchdog.poll",
				fmt.Sprintf("set poll to at most %v: %s", bound/2, fix),
				"PFC watchdog poll %v is more than half of min(detect %v, restore %v), which %s refuses (%d %s: %s)",
				w.Poll, w.Detect, w.Restore, p, len(sws), plural(len(sws), "switch", "switches"), names(sws, 5)).with(edits...)
		}
	}
}

// FC116
func (c *checker) globalPause() {
	p := &c.f.Policy
	if p.GlobalPause && len(c.lossless) > 0 {
		c.report(Error, pos(p.Pos), "policy.globalPause",
			"set globalPause: false",
			"802.3x global pause is on while PFC is used on priority %s: the two are mutually exclusive (a global pause stops every class)", c.losslessPrios()).
			with(set("policy.globalPause", false))
	}
}
