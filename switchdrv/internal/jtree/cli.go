package jtree

import (
	"slices"
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
	for _, l := range lines {
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
	return config
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

// CLIKey is what makes a sub-mode line single-valued: its section and every
// word but the last ("interface Et1 >> mtu 9216" -> "interface Et1 >> mtu"),
// so a new value replaces the old one as in a CLI session. Top-level lines
// and one-word lines have no key (they are set members).
func CLIKey(l string) (string, bool) {
	i := strings.LastIndex(l, CLISep)
	if i < 0 {
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
