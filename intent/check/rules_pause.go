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
		c.report(Warning, at, "policy.watchdog.enabled",
			"enable the PFC watchdog (e.g. detect 200ms, restore 400ms, poll 100ms)",
			"PFC watchdog is off: a PFC storm or deadlock stalls the lossless queues until someone intervenes")
		return
	}
	if w.Detect <= 0 {
		c.report(Error, at, "policy.watchdog.detect", "set detect (e.g. 200ms)", "PFC watchdog detect time is not set")
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
		c.report(Error, at, "policy.watchdog.poll",
			fmt.Sprintf("set poll below %v (e.g. %v)", bound, bound/2),
			"PFC watchdog poll %v is longer than detect %v or restore %v: SONiC's pfcwd refuses a poll interval bigger than any detection or restoration time", w.Poll, w.Detect, w.Restore)
	case w.Poll > 0 && w.Poll == w.Detect:
		c.report(Warning, at, "policy.watchdog.poll",
			fmt.Sprintf("set poll below %v (e.g. %v)", w.Detect, w.Detect/2),
			"PFC watchdog poll %v equals detect %v: a storm is declared only after up to %v (detect + one poll); accepted by SONiC, but poll < detect is the intent", w.Poll, w.Detect, w.Detect+w.Poll)
	}
	if w.Restore < w.Detect {
		c.report(Warning, at, "policy.watchdog.restore",
			fmt.Sprintf("set restore to at least %v (SONiC's pfcwd start defaults it to 2 x detect)", w.Detect),
			"PFC watchdog restore %v is shorter than detect %v: under a persistent storm the queue spends longer stalled (detect) than recovered (restore)", w.Restore, w.Detect)
	}
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
				c.report(Error, at, "policy.watchdog."+t.name,
					fmt.Sprintf("set %s to a multiple of %v", t.name, t.r.Step),
					"PFC watchdog %s %v is not a multiple of the %v that %s counts it in (%d %s: %s)",
					t.name, t.val, t.r.Step, p, len(sws), plural(len(sws), "switch", "switches"), names(sws, 5))
				continue
			}
			c.report(Error, at, "policy.watchdog."+t.name,
				fmt.Sprintf("set %s within %v-%v", t.name, t.r.Min, t.r.Max),
				"PFC watchdog %s %v is outside the %v-%v that %s accepts (%d %s: %s)",
				t.name, t.val, t.r.Min, t.r.Max, p, len(sws), plural(len(sws), "switch", "switches"), names(sws, 5))
		}
		if bound := min(w.Detect, w.Restore); pi.PollHalf && w.Poll > 0 && 2*w.Poll > bound {
			c.report(Error, at, "policy.watchdog.poll",
				fmt.Sprintf("set poll to at most %v", bound/2),
				"PFC watchdog poll %v is more than half of min(detect %v, restore %v), which %s refuses (%d %s: %s)",
				w.Poll, w.Detect, w.Restore, p, len(sws), plural(len(sws), "switch", "switches"), names(sws, 5))
		}
	}
}

// FC116
func (c *checker) globalPause() {
	p := &c.f.Policy
	if p.GlobalPause && len(c.lossless) > 0 {
		c.report(Error, pos(p.Pos), "policy.globalPause",
			"set globalPause: false",
			"802.3x global pause is on while PFC is used on priority %s: the two are mutually exclusive (a global pause stops every class)", c.losslessPrios())
	}
}
