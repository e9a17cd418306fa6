package check

import (
	"fmt"
	"strconv"
	"strings"
)

// A range in the intent (name: gpu{1..8}) makes one element per value, and
// a rule finds the same problem in each: one typo, eight findings. The text
// output shows such findings once. Findings group when they have the same
// rule, severity and position (they come from one place in the file), and
// their paths, messages and fixes differ only in numbers that step evenly
// from one finding to the next (the range's values). The group is written
// with those numbers as the range they came from (host gpu{1..8}), followed
// by a line naming its subjects (8 hosts: gpu1 .. gpu8).
//
// The JSON output is not grouped: it keeps one finding per element, each
// with its own path, so that a program need not parse ranges back; the
// findings of one group share their file, line, col and id.

// textGroup is one line of the text output: a finding, or several written
// as one.
type textGroup struct {
	Finding         // the first, or the group written with ranges
	subjects string // "8 hosts: gpu1 .. gpu8", or "" for one finding
}

// groupFindings groups consecutive findings (fs sorted, as Run returns
// them) that differ only in evenly stepping numbers.
func groupFindings(fs []Finding) []textGroup {
	var out []textGroup
	eachGroup(fs, func(g *textGroup) { out = append(out, *g) })
	return out
}

// eachGroup calls yield with each group of groupFindings in turn, without
// collecting them (WriteText writes each as it comes). g is yield's only
// until it returns.
func eachGroup(fs []Finding, yield func(g *textGroup)) {
	var one, g textGroup // one of each for the whole list: yield gets a pointer
	for i := 0; i < len(fs); {
		j := i + 1
		for j < len(fs) && sameSource(fs[i], fs[j]) {
			j++
		}
		var ok bool
		if g, ok = group(fs[i:j]); ok {
			yield(&g)
		} else {
			for k := i; k < j; k++ {
				one.Finding = fs[k]
				yield(&one)
			}
		}
		i = j
	}
}

// sameSource reports whether two findings are from one rule at one place,
// with texts of the same shape.
func sameSource(a, b Finding) bool {
	return a.ID == b.ID && a.Severity == b.Severity && a.Pos == b.Pos && a.Pos.Line > 0 &&
		a.Path != b.Path && sameShape(a.Path, b.Path) && sameShape(a.Message, b.Message) && sameShape(a.Fix, b.Fix)
}

func sameShape(a, b string) bool {
	ta, tb := tokens(a), tokens(b)
	if len(ta) != len(tb) {
		return false
	}
	for k := range ta {
		if ta[k] != tb[k] && !(isNumber(ta[k]) && isNumber(tb[k])) {
			return false
		}
	}
	return true
}

// group writes fs (two or more findings of one source) as one, or reports
// false when their numbers do not step evenly.
func group(fs []Finding) (textGroup, bool) {
	if len(fs) < 2 {
		return textGroup{}, false
	}
	var g textGroup
	g.Finding = fs[0]
	var ok bool
	pick := func(get func(Finding) string) string {
		var s string
		s, ok = rangeOf(fs, get)
		return s
	}
	if g.Path = pick(func(f Finding) string { return f.Path }); !ok {
		return textGroup{}, false
	}
	if g.Message = pick(func(f Finding) string { return f.Message }); !ok {
		return textGroup{}, false
	}
	if g.Fix = pick(func(f Finding) string { return f.Fix }); !ok {
		return textGroup{}, false
	}
	g.subjects = subjects(fs)
	return g, true
}

// rangeOf writes the texts get returns for fs as one, each number that
// differs between them as {first..last} (or {first..last..step}). ok is
// false when some number does not step evenly.
func rangeOf(fs []Finding, get func(Finding) string) (string, bool) {
	toks := make([][]string, len(fs))
	for i, f := range fs {
		toks[i] = tokens(get(f))
	}
	var b strings.Builder
	for k, t := range toks[0] {
		same := true
		for _, o := range toks[1:] {
			same = same && o[k] == t
		}
		if same {
			b.WriteString(t)
			continue
		}
		r, ok := numberRange(toks, k)
		if !ok {
			return "", false
		}
		b.WriteString(r)
	}
	return b.String(), true
}

// numberRange writes the numbers at token k of toks as a range in the
// intent's syntax, when they step evenly (a zero-padded range keeps its
// width).
func numberRange(toks [][]string, k int) (string, bool) {
	first, last := toks[0][k], toks[len(toks)-1][k]
	v0, err0 := strconv.Atoi(first)
	v1, err1 := strconv.Atoi(toks[1][k])
	if err0 != nil || err1 != nil {
		return "", false
	}
	step := v1 - v0
	if step <= 0 {
		return "", false
	}
	padded := len(first) > 1 && first[0] == '0'
	for i, t := range toks {
		v, err := strconv.Atoi(t[k])
		if err != nil || v != v0+i*step || (padded && len(t[k]) != len(first)) || (!padded && t[k] != strconv.Itoa(v)) {
			return "", false
		}
	}
	if step == 1 {
		return "{" + first + ".." + last + "}", true
	}
	return fmt.Sprintf("{%s..%s..%d}", first, last, step), true
}

// subjects names what a group is about, from the first element of its
// paths that differs: "8 hosts: gpu1 .. gpu8", "3 links: links[0] .. links[2]".
func subjects(fs []Finding) string {
	n := len(fs)
	first, last := fs[0].Path, fs[n-1].Path
	// Find the first [..] that differs.
	for off := 0; ; {
		i := strings.IndexByte(first[off:], '[')
		if i < 0 {
			break
		}
		i += off
		j := strings.IndexByte(first[i:], ']')
		if j < 0 {
			break
		}
		j += i
		prefix := first[:i+1]
		if !strings.HasPrefix(last, prefix) {
			break
		}
		lk := strings.IndexByte(last[i:], ']')
		if lk < 0 {
			break
		}
		a, z := first[i+1:j], last[i+1:i+lk]
		if a == z {
			off = j + 1
			continue
		}
		list := first[strings.LastIndexByte(first[:i], '.')+1 : i] // hosts, links, ports
		if isNumber(a) {
			a, z = list+"["+a+"]", list+"["+z+"]"
		}
		sep := ", "
		if n > 2 {
			sep = " .. "
		}
		return fmt.Sprintf("%d %s: %s%s%s", n, list, a, sep, z)
	}
	return fmt.Sprintf("%d findings from this line", n)
}

// tokens splits s into runs of digits, runs of letters and single other
// characters.
func tokens(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		j := i + 1
		switch {
		case isDigit(s[i]):
			for j < len(s) && isDigit(s[j]) {
				j++
			}
		case isLetter(s[i]):
			for j < len(s) && isLetter(s[j]) {
				j++
			}
		}
		out = append(out, s[i:j])
		i = j
	}
	return out
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isNumber(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }) < 0
}
