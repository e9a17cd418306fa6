package tune

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/check"
	"github.com/fabricctl/fabricctl/intent/portfacts"
	"github.com/fabricctl/fabricctl/internal/sim"
)

// ModeResult is the search of one RoCE mode (Options.Modes): the best
// setting found in it, or why the fabric's platforms cannot compile it.
type ModeResult struct {
	Mode intent.RoCEMode
	// Refused says why the intent's switches cannot express the mode, as
	// check's FC106 and FC162 say it ("" = searched).
	Refused string
	// Best is the mode's best setting inside its bounds; nil when none
	// was simulated (a refused mode, or no setting within the budget).
	Best *Score
	// Evaluated is the settings simulated in this mode (each over every
	// scenario).
	Evaluated int
	Bounds    Bounds
}

// modeOf is the policy's mode, lossless when it states none (a policy
// built in code).
func modeOf(p *intent.Policy) intent.RoCEMode {
	if p.Mode == "" {
		return intent.ModeLossless
	}
	return p.Mode
}

// platformInfo is what check knows of sw's platform: its release profile
// (portfacts.SwitchProfile, with the intent's asic), else the platform's
// default profile; ok is false for a platform check does not know (FC106
// reports it whatever the mode).
func platformInfo(sw *intent.Switch) (check.PlatformInfo, bool) {
	if prof := portfacts.SwitchProfile(sw); prof != nil {
		return check.InfoFor(prof), true
	}
	return check.DefaultPlatform(sw.Platform)
}

// Refusal says why f's switches cannot compile mode m, from the facts
// check's rules read (check.PlatformInfo of each switch's profile): a
// platform that cannot express PFC carries no lossless class (FC106), so
// no mode with PFC (lossless, semi-lossless, pfc-only); semi-lossless
// needs a platform that honours received pause without sending any
// (FC162: SR Linux and SONiC, not EOS). "" when every switch can.
func Refusal(f *intent.Fabric, m intent.RoCEMode) string {
	type refused struct {
		platform intent.Platform
		rule     string
		switches []string
	}
	var rs []*refused
	for i := range f.Switches {
		sw := &f.Switches[i]
		pi, ok := platformInfo(sw)
		if !ok {
			continue
		}
		rule := ""
		switch {
		case m.PFC() && !pi.PFC:
			rule = "FC106: it cannot express PFC"
		case m == intent.ModeSemiLossless && pi.SemiLossless == "":
			rule = "FC162: it cannot honour received pause without sending pause"
		default:
			continue
		}
		k := slices.IndexFunc(rs, func(r *refused) bool { return r.platform == sw.Platform && r.rule == rule })
		if k < 0 {
			rs = append(rs, &refused{platform: sw.Platform, rule: rule})
			k = len(rs) - 1
		}
		rs[k].switches = append(rs[k].switches, sw.Name)
	}
	var out []string
	for _, r := range rs {
		names := strings.Join(r.switches, ", ")
		if n := len(r.switches); n > 3 {
			names = fmt.Sprintf("%s, %s, ... (%d switches)", r.switches[0], r.switches[1], n)
		}
		out = append(out, fmt.Sprintf("platform %s (%s): %s", r.platform, names, r.rule))
	}
	return strings.Join(out, "; ")
}

// withMode is f as mode m sets up the class tune works on: simulate
// --compare-modes' transformation (sim.WithMode), which works on the
// policy's RoCE class, so only when that is cl. f itself when m is its
// own mode.
func withMode(f *intent.Fabric, cl *intent.Class, m intent.RoCEMode) (*intent.Fabric, error) {
	if m == modeOf(&f.Policy) {
		return f, nil
	}
	if rc := f.Policy.RoCEClass(); rc == nil || rc.Name != cl.Name {
		return nil, fmt.Errorf("mode %s: tune sets a mode up on the policy's RoCE class (the first lossless class), not on class %s", m, cl.Name)
	}
	return sim.WithMode(f, string(m))
}

// modeEdits make the intent's policy run in mode to: policy.mode (and
// policy.preset roce-lossless for a roce-lossy intent leaving lossy, which
// that preset refuses), and the fields of classes the files write that
// would contradict it (check's FC160 and FC161 fixes): lossless: false on
// every written lossless class in lossy mode, lossless: true on class cl
// where the mode needs PFC, ecn.enabled: false on every written ECN block
// in pfc-only mode, and enabled again on cl's where the mode marks.
// The preset's classes follow the mode when the intent is parsed.
func modeEdits(pol *intent.Policy, cl *intent.Class, to intent.RoCEMode) []Edit {
	var out []Edit
	if pol.Preset == intent.PresetRoCELossy && to != intent.ModeLossy {
		out = append(out, Edit{Path: "policy.preset", Value: intent.PresetRoCELossless})
	}
	out = append(out, Edit{Path: "policy.mode", Value: string(to)})
	for _, c := range pol.Classes {
		p := "policy.classes[" + c.Name + "]"
		losslessWritten := c.Fields.Has("lossless")
		ecnWritten := c.Fields.Has("ecn")
		switch {
		case to == intent.ModeLossy && losslessWritten && c.Lossless:
			out = append(out, Edit{Path: p + ".lossless", Value: "false"})
		case to.PFC() && c.Name == cl.Name && losslessWritten && !c.Lossless:
			out = append(out, Edit{Path: p + ".lossless", Value: "true"})
		}
		switch {
		case !to.ECN() && ecnWritten && c.ECN != nil:
			out = append(out, Edit{Path: p + ".ecn.enabled", Value: "false"})
		case to.ECN() && c.Name == cl.Name && ecnWritten && c.ECN == nil:
			out = append(out, Edit{Path: p + ".ecn.enabled", Value: "true"})
		}
	}
	return out
}
