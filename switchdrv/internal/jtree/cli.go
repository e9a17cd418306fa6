package jtree

import (
	"slices"
	"strconv"
	"strings"
)

// CLISep joins a CLI sub-mode line to the line that opened its section in
// the flat form CLILines returns ("interface Ethernet1/1 >> mtu 9216").
const CLISep = " >> "

// CLILines flattens CLI configuration text into lines that carry their
// sections: a line belongs to every less-indented line above it (EOS nests
// sub-modes, e.g. interface > tx-queue), joined with CLISep. Empty lines and
// "!" comments/section ends are dropped; a "!" in column 0 closes every
// section.
func CLILines(text string) []string {
	var out []string
	type open struct {
		indent int
		flat   string
	}
	var stack []open
	for _, raw := range strings.Split(text, "\n") {
		l := strings.TrimSpace(raw)
		if l == "" || strings.HasPrefix(l, "!") {
			if l == "!" && raw == "!" {
				stack = stack[:0]
			}
			continue
		}
		indent := len(raw) - len(strings.TrimLeft(raw, " \t"))
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		flat := l
		if len(stack) > 0 {
			flat = stack[len(stack)-1].flat + CLISep + l
		}
		stack = append(stack, open{indent, flat})
		out = append(out, flat)
	}
	return out
}

// CLINo splits a "no" form: "x >> no mtu 9216" -> "x >> mtu 9216", true.
func CLINo(l string) (string, bool) {
	head, last := "", l
	if i := strings.LastIndex(l, CLISep); i >= 0 {
		head, last = l[:i+len(CLISep)], l[i+len(CLISep):]
	}
	rest, ok := strings.CutPrefix(last, "no ")
	return head + rest, ok
}

// CLIApply applies flat lines to a configuration the way a CLI session
// does: a line is added once (the sections it is in first), a "no" line
// removes its target (a section line with everything in the section) or
// resets the single-valued setting it names (ResetBy). A
// single-valued line (CLIKey) replaces the one of the same key; a line that
// opens a section of lines is never replaced that way (tx-queue 3 does not
// replace tx-queue 4).
func CLIApply(config, lines []string) []string {
	sections := map[string]bool{}
	for _, l := range append(slices.Clone(config), lines...) {
		for i := strings.Index(l, CLISep); i >= 0; {
			sections[l[:i]] = true
			j := strings.Index(l[i+len(CLISep):], CLISep)
			if j < 0 {
				break
			}
			i += len(CLISep) + j
		}
	}
	remapped := false
	// mapAt: how many other lines come before the DSCP map (-1: no map
	// yet, it goes where its first line is added).
	mapAt := slices.IndexFunc(config, func(l string) bool { _, _, ok := dscpMap(l); return ok })
	for _, l := range lines {
		if ds, _, ok := dscpMap(l); ok {
			// EOS "qos map dscp D... to traffic-class N" sets each
			// listed DSCP's class: a DSCP leaves the line that mapped it
			// before.
			config = dropDSCPs(config, ds)
			config = append(config, l)
			remapped = true
			continue
		}
		if target, ok := CLINo(l); ok {
			config = slices.DeleteFunc(config, func(x string) bool {
				return x == target || strings.HasPrefix(x, target+CLISep) || ResetBy(x, target, sections[x])
			})
			continue
		}
		for i := strings.Index(l, CLISep); i >= 0; {
			if !slices.Contains(config, l[:i]) {
				config = append(config, l[:i])
			}
			j := strings.Index(l[i+len(CLISep):], CLISep)
			if j < 0 {
				break
			}
			i += len(CLISep) + j
		}
		if slices.Contains(config, l) {
			continue
		}
		if key, ok := CLIKey(l); ok && !sections[l] {
			// "mtu 9216" replaces "mtu 1500" in the same section.
			if i := slices.IndexFunc(config, func(x string) bool { k, ok := CLIKey(x); return ok && k == key && !sections[x] }); i >= 0 {
				config[i] = l
				continue
			}
		}
		config = append(config, l)
	}
	if remapped {
		config = groupDSCPMap(config, mapAt)
	}
	return config
}

// dscpMap parses EOS's "qos map dscp D1 D2 ... to traffic-class N" (a
// top-level line): the DSCPs and the class.
func dscpMap(l string) (ds []int, tc int, ok bool) {
	rest, ok := strings.CutPrefix(l, "qos map dscp ")
	if !ok {
		return nil, 0, false
	}
	f := strings.Fields(rest)
	n := len(f)
	if n < 4 || f[n-3] != "to" || f[n-2] != "traffic-class" {
		return nil, 0, false
	}
	tc, err := strconv.Atoi(f[n-1])
	if err != nil {
		return nil, 0, false
	}
	for _, s := range f[:n-3] {
		d, err := strconv.Atoi(s)
		if err != nil || d < 0 || d > 63 {
			return nil, 0, false
		}
		ds = append(ds, d)
	}
	return ds, tc, true
}

// dropDSCPs takes the DSCPs ds out of config's qos map lines (a line left
// without a DSCP goes).
func dropDSCPs(config []string, ds []int) []string {
	out := config[:0]
	for _, l := range config {
		old, tc, ok := dscpMap(l)
		if !ok {
			out = append(out, l)
			continue
		}
		old = slices.DeleteFunc(old, func(d int) bool { return slices.Contains(ds, d) })
		if len(old) > 0 {
			out = append(out, dscpLine(old, tc))
		}
	}
	return out
}

func dscpLine(ds []int, tc int) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = strconv.Itoa(d)
	}
	return "qos map dscp " + strings.Join(s, " ") + " to traffic-class " + strconv.Itoa(tc)
}

// groupDSCPMap shows config's DSCP map as EOS lists it in its
// configuration: by traffic class, the DSCPs ascending, at most 8 a line
// (as switchdrv/eos writes it), after the first at other lines (at < 0:
// where the first map line is).
func groupDSCPMap(config []string, at int) []string {
	var byTC [8][]int
	first := -1
	out := make([]string, 0, len(config))
	for _, l := range config {
		ds, tc, ok := dscpMap(l)
		if !ok || tc < 0 || tc > 7 {
			out = append(out, l)
			continue
		}
		if first < 0 {
			first = len(out)
		}
		byTC[tc] = append(byTC[tc], ds...)
	}
	if first < 0 {
		return out
	}
	if at < 0 || at > len(out) {
		at = first
	}
	var grouped []string
	for tc, ds := range byTC {
		slices.Sort(ds)
		for len(ds) > 0 {
			n := min(len(ds), 8)
			grouped = append(grouped, dscpLine(ds[:n], tc))
			ds = ds[n:]
		}
	}
	return slices.Insert(out, at, grouped...)
}

// CLIText renders flat lines back as indented configuration text (three
// spaces per level, "!" after each top-level section).
func CLIText(config []string) string {
	var b strings.Builder
	var render func(prefix string, depth int)
	render = func(prefix string, depth int) {
		for _, l := range config {
			rest, ok := l, prefix == ""
			if !ok {
				rest, ok = strings.CutPrefix(l, prefix+CLISep)
			}
			if !ok || strings.Contains(rest, CLISep) {
				continue
			}
			b.WriteString(strings.Repeat("   ", depth))
			b.WriteString(rest)
			b.WriteByte('\n')
			render(l, depth+1)
			if depth == 0 && slices.ContainsFunc(config, func(c string) bool { return strings.HasPrefix(c, l+CLISep) }) {
				b.WriteString("!\n")
			}
		}
	}
	render("", 0)
	return b.String()
}

// topLevelSettings are the global (top-level) EOS lines that are one
// setting each, whatever their last word: the PFC pause watchdog's action
// and its default timers. AVD's priority_flow_control schema holds each as
// one value (watchdog.action: drop | no-drop; watchdog.timeout,
// recovery_time, polling_interval: one number each) and
// priority-flow-control.j2 writes one line for each, so a new value takes
// the place of the old on the switch, as "mtu" does in an interface.
var topLevelSettings = map[string]bool{
	"priority-flow-control pause watchdog action":                   true,
	"priority-flow-control pause watchdog default timeout":          true,
	"priority-flow-control pause watchdog default recovery-time":    true,
	"priority-flow-control pause watchdog default polling-interval": true,
}

// CLIKey is what makes a line single-valued: a sub-mode line's section and
// every word but the last ("interface Et1 >> mtu 9216" -> "interface Et1 >>
// mtu"), so a new value replaces the old one as in a CLI session. A
// top-level line has a key only where it is one of topLevelSettings
// ("priority-flow-control pause watchdog action drop" -> "... action");
// other top-level lines and one-word lines have none (they are set
// members).
func CLIKey(l string) (string, bool) {
	i := strings.LastIndex(l, CLISep)
	if i < 0 {
		words := strings.Fields(l)
		if len(words) < 2 {
			return "", false
		}
		if k := strings.Join(words[:len(words)-1], " "); topLevelSettings[k] {
			return k, true
		}
		return "", false
	}
	words := strings.Fields(l[i+len(CLISep):])
	if len(words) < 2 || words[0] == "no" {
		return "", false
	}
	// EOS "random-detect ecn minimum-threshold ... maximum-threshold ..."
	// is one setting of its tx-queue, whatever its arguments.
	if len(words) > 2 && words[0] == "random-detect" && words[1] == "ecn" {
		return l[:i+len(CLISep)] + "random-detect ecn", true
	}
	return l[:i+len(CLISep)] + strings.Join(words[:len(words)-1], " "), true
}

// ResetBy reports whether the configuration line x is taken away by "no
// target" as a setting reset: target names x's setting without its value
// ("no priority-flow-control" resets "priority-flow-control on", "no
// random-detect ecn" a tx-queue's thresholds, "no mtu" "mtu 9214"), as
// EOS's (and IOS-style) CLI resets a setting by its keywords. A line that
// opens a section (section) is not a setting: "no tx-queue" takes no
// tx-queue away.
func ResetBy(x, target string, section bool) bool {
	if section {
		return false
	}
	k, ok := CLIKey(x)
	return ok && k == target
}
