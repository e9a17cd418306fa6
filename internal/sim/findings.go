package sim

import (
	"fmt"
	"sort"
	"time"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/check"
)

// Rule IDs of check --simulate. They are not in check's static rule table
// (they need a simulation); check --simulate adds them to its findings.
const (
	RuleDrops    = "FC150" // sim-lossless-drops: the standard incast drops on a lossless priority
	RulePause    = "FC151" // sim-pause-spread: pause reaches beyond the congested switch's neighbours
	RuleWatchdog = "FC152" // sim-watchdog: the PFC watchdog fires under the standard incast
	RuleDeadlock = "FC153" // sim-deadlock: a pause cycle stops lossless traffic
)

// Rules describes the simulation rules; check --list-rules lists them as
// needing --simulate.
var Rules = []check.Rule{
	{ID: RuleDrops, Name: "sim-lossless-drops", Severity: check.Error, Summary: "the standard incast per lossless class drops nothing on that priority"},
	{ID: RulePause, Name: "sim-pause-spread", Severity: check.Warning, Summary: "PFC pause stays within one hop of the congested port"},
	{ID: RuleWatchdog, Name: "sim-watchdog", Severity: check.Warning, Summary: "the PFC watchdog does not fire under the standard incast"},
	{ID: RuleDeadlock, Name: "sim-deadlock", Severity: check.Error, Summary: "no pause cycle stops lossless traffic"},
}

// StandardIncast is what check --simulate runs per lossless class: at most
// 16 senders into one receiver for 1 ms of fabric time with the hosts' DCQCN
// (the intent's policy.dcqcn over mlx5's defaults).
const (
	StandardFanIn    = 16
	StandardDuration = time.Millisecond
)

// Findings runs the standard incast for every lossless class of f and
// turns what goes wrong into findings: drops on the lossless priority
// (FC150), pause sent by a switch other than the congested one (FC151),
// watchdog triggers (FC152) and deadlock (FC153). An intent with fewer than
// three linked hosts is simulated on a synthetic star of its first switch.
func Findings(f *intent.Fabric) []check.Finding {
	var out []check.Finding
	hosts := 0
	if n, err := FromIntent(f); err == nil {
		hosts = len(n.hostNames())
	}
	fanIn := StandardFanIn
	if hosts >= 3 {
		fanIn = min(hosts-1, StandardFanIn)
	}
	for _, cl := range f.Policy.Classes {
		if !cl.Lossless {
			continue
		}
		spec := fmt.Sprintf("incast:%d:1", fanIn)
		sc, err := ParseSpec(spec)
		if err != nil {
			continue
		}
		sc.Class = cl.Name
		n, err := Build(f, sc, StarOptions{}, DefaultSeed)
		if err != nil {
			out = append(out, check.Finding{ID: RuleDrops, Severity: check.Warning, Pos: cl.Pos, Path: "policy.classes[" + cl.Name + "]",
				Message: "not simulated: " + err.Error(), Fix: "fix the inventory's links so every host is reachable"})
			continue
		}
		// The DCQCN the hosts get (policy.dcqcn over mlx5's defaults) and
		// their loss recovery, as simulate runs them.
		dc := DCQCNFromPolicy(&f.Policy)
		r := New(n, Options{Duration: StandardDuration, DCQCN: &dc, Recovery: RecoveryFor(&f.Policy)}).Run()
		out = append(out, r.findings(n, cl, spec)...)
	}
	check.Sort(out)
	return out
}

func (r *Result) findings(n *Network, cl intent.Class, spec string) []check.Finding {
	var out []check.Finding
	where := spec
	if r.Synthetic {
		where += " (synthetic star)"
	}
	pos := func(p PortResult) (intent.Pos, string) {
		if p.Pos.Line > 0 && p.Path != "" {
			return p.Pos, p.Path
		}
		return cl.Pos, "policy.classes[" + cl.Name + "]"
	}
	var spread []string
	var spreadPos intent.Pos
	var spreadPath string
	for _, p := range r.Ports {
		if p.Priority != cl.Priority {
			continue
		}
		ps, path := pos(p)
		if p.Drops > 0 {
			out = append(out, check.Finding{ID: RuleDrops, Severity: check.Error, Pos: ps, Path: path,
				Message: fmt.Sprintf("simulated %s: %s drops %d frames on lossless priority %d (%d headroom overflow, %d watchdog)", where, p.Name(), p.Drops, cl.Priority, p.HeadroomDrops, p.WatchdogDrops),
				Fix:     "raise the port's buffer/headroom (fabricctl headroom) or lower the XOFF threshold; run fabricctl simulate for the detail"})
		}
		if p.WatchdogTriggers > 0 {
			out = append(out, check.Finding{ID: RuleWatchdog, Severity: check.Warning, Pos: ps, Path: path,
				Message: fmt.Sprintf("simulated %s: the PFC watchdog fired %d times on %s priority %d", where, p.WatchdogTriggers, p.Name(), cl.Priority),
				Fix:     "a standard incast should not look like a storm: raise policy.watchdog.detect or fix the congestion control"})
		}
		if !p.Host && p.Node != r.CongestedSwitch && p.PauseSent > 0 {
			if spread == nil {
				spreadPos, spreadPath = ps, path
			}
			spread = append(spread, p.Name())
		}
	}
	if len(spread) > 0 {
		sort.Strings(spread)
		out = append(out, check.Finding{ID: RulePause, Severity: check.Warning, Pos: spreadPos, Path: spreadPath,
			Message: fmt.Sprintf("simulated %s: pause spreads beyond the congested switch %s: %s also send PFC pause on priority %d", where, r.CongestedSwitch, names(spread), cl.Priority),
			Fix:     "let ECN act before PFC (lower ECN Kmin/Kmax below the XOFF point, FC111) so congestion stays at the edge"})
	}
	if len(r.Deadlocks) > 0 {
		first := r.Deadlocks[0]
		var triggers int64
		for _, d := range r.Deadlocks {
			triggers += d.WatchdogTriggers
		}
		end := "the last one held to the end of the run"
		if !r.Deadlocks[len(r.Deadlocks)-1].AtEnd {
			end = "each resolved"
		}
		out = append(out, check.Finding{ID: RuleDeadlock, Severity: check.Error, Pos: cl.Pos, Path: "policy.classes[" + cl.Name + "]",
			Message: fmt.Sprintf("simulated %s: pause cycle %v stopped lossless traffic at %s; %d %s (%s), PFC watchdog triggers meanwhile: %d",
				where, first.Cycle, dur(first.At), len(r.Deadlocks), map[bool]string{true: "episode", false: "episodes"}[len(r.Deadlocks) == 1], end, triggers),
			Fix: "remove the cyclic buffer dependency (an up-down Clos, FC123) and keep the PFC watchdog on"})
	}
	return out
}

func names(v []string) string {
	if len(v) > 6 {
		return fmt.Sprintf("%v and %d more", v[:6], len(v)-6)
	}
	return fmt.Sprint(v)
}
