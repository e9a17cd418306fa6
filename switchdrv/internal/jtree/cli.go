package jtree

import (
	"slices"
	"strings"
)

// CLISep joins a CLI sub-mode line to the line that opened its section in
// the flat form CLILines returns ("interface Ethernet1/1 >> mtu 9216").
const CLISep = " >> "

// CLILines flattens CLI configuration text into lines that carry their
// section: an indented line belongs to the last unindented one. Empty lines
// and "!" comments/section ends are dropped.
func CLILines(text string) []string {
	var out []string
	section := ""
	for _, raw := range strings.Split(text, "\n") {
		l := strings.TrimSpace(raw)
		if l == "" || strings.HasPrefix(l, "!") {
			if l == "!" && raw == "!" {
				section = ""
			}
			continue
		}
		indented := raw[0] == ' ' || raw[0] == '\t'
		switch {
		case indented && section != "":
			out = append(out, section+CLISep+l)
		default:
			section = l
			out = append(out, l)
		}
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
// does: a line is added once (its section line first), a "no" line removes
// its target (a section line with everything in the section).
func CLIApply(config, lines []string) []string {
	for _, l := range lines {
		if target, ok := CLINo(l); ok {
			config = slices.DeleteFunc(config, func(x string) bool {
				return x == target || strings.HasPrefix(x, target+CLISep)
			})
			continue
		}
		if i := strings.Index(l, CLISep); i >= 0 && !slices.Contains(config, l[:i]) {
			config = append(config, l[:i])
		}
		if slices.Contains(config, l) {
			continue
		}
		if key, ok := CLIKey(l); ok {
			// "mtu 9216" replaces "mtu 1500" in the same section.
			if i := slices.IndexFunc(config, func(x string) bool { k, ok := CLIKey(x); return ok && k == key }); i >= 0 {
				config[i] = l
				continue
			}
		}
		config = append(config, l)
	}
	return config
}

// CLIText renders flat lines back as indented configuration text.
func CLIText(config []string) string {
	var b strings.Builder
	for _, l := range config {
		if strings.Contains(l, CLISep) {
			continue
		}
		b.WriteString(l)
		b.WriteByte('\n')
		children := false
		for _, c := range config {
			if rest, ok := strings.CutPrefix(c, l+CLISep); ok {
				b.WriteString("   ")
				b.WriteString(rest)
				b.WriteByte('\n')
				children = true
			}
		}
		if children {
			b.WriteString("!\n")
		}
	}
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
	return l[:i+len(CLISep)] + strings.Join(words[:len(words)-1], " "), true
}
