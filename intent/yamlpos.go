package intent

import (
	"fmt"
	"io"
	"strings"

	"gopkg.in/yaml.v3"
)

// yaml.v3 reports a syntax error at its parser's context mark when it has
// one (parser.fail in yaml.v3's decode.go): the line where the enclosing
// block or flow collection began, which can be many lines above the mistake.
// Its problem mark, the token it failed on, is not exposed. So a syntax error
// is located again here, from the raw text:
//
//   - the offending line is the first line L such that the text up to and
//     including L no longer parses (block YAML cut at a line boundary parses
//     when nothing before the cut is wrong; a cut inside a flow collection or
//     a quoted scalar is not a verdict and is stepped over), found by binary
//     search;
//   - the column and the words come from that line and the lines above it:
//     a tab in the indentation, an unquoted {a..b} range inside [ ] or { },
//     a key indented deeper than its siblings, a key indented to no level of
//     the blocks above it.
//
// What cannot be explained keeps yaml.v3's own message, at the refined line.

// maxRefine bounds the files whose syntax errors are located again: the
// search parses a prefix of the file about log2(lines) times.
const maxRefine = 8 << 20

// syntaxError is a located YAML syntax error.
type syntaxError struct {
	line, col int    // 1-based
	msg       string // in words, with yaml.v3's message
}

// locateSyntaxError turns err (a yaml.v3 syntax error of data) into a
// position and a message.
func locateSyntaxError(data []byte, err error) syntaxError {
	yline := yamlErrPos("", err).Line
	ymsg := yamlErrMsg(err)
	lines := strings.Split(string(data), "\n")
	line := yline
	if len(data) <= maxRefine {
		if l := firstFailingLine(lines); l > 0 {
			line = l
		}
	}
	if line < 1 || line > len(lines) {
		return syntaxError{line: max(yline, 1), col: 1, msg: ymsg}
	}
	col, words := explainLine(lines, line, ymsg)
	if words == "" {
		return syntaxError{line: line, col: col, msg: ymsg}
	}
	return syntaxError{line: line, col: col, msg: words + " (YAML parser: " + ymsg + ")"}
}

// parsesUpTo reports whether lines[:n] parses as YAML (every document).
func parsesUpTo(lines []string, n int) bool {
	dec := yaml.NewDecoder(strings.NewReader(strings.Join(lines[:n], "\n") + "\n"))
	for {
		var node yaml.Node
		err := dec.Decode(&node)
		if err == io.EOF {
			return true
		}
		if err != nil {
			return false
		}
	}
}

// firstFailingLine returns the 1-based number of the first line up to which
// the text does not parse, or 0 when that cannot be told. A prefix that ends
// inside a flow collection or quoted scalar counts as parsing: its failure
// would be the cut's, not the text's.
func firstFailingLine(lines []string) int {
	open := openAtLineEnds(lines)
	fails := func(n int) bool { return !open[n-1] && !parsesUpTo(lines, n) }
	lo, hi := 1, len(lines) // the answer is in [lo, hi] if it exists
	if !fails(hi) {
		// The whole text ends inside a flow collection or quoted scalar
		// (an unclosed [ or "): yaml.v3's own line stands.
		return 0
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if fails(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// openAtLineEnds reports for each line whether it ends inside a flow
// collection ([ ] or { }) or a quoted scalar. It is a small YAML lexer for
// this one purpose: comments, quotes, and block scalars (| and >) are known;
// anything else is text.
func openAtLineEnds(lines []string) []bool {
	out := make([]bool, len(lines))
	depth := 0
	var quote byte // ' or " while inside a quoted scalar
	blockIndent := -1
	for i, l := range lines {
		ind := indentOf(l)
		if blockIndent >= 0 {
			if strings.TrimSpace(l) == "" || ind > blockIndent {
				continue // a line of a block scalar
			}
			blockIndent = -1
		}
		// valueStart: a quote here opens a quoted scalar.
		valueStart := true
		for j := 0; j < len(l); j++ {
			c := l[j]
			if quote != 0 {
				switch {
				case quote == '"' && c == '\\':
					j++
				case quote == '\'' && c == '\'' && j+1 < len(l) && l[j+1] == '\'':
					j++
				case c == quote:
					quote = 0
				}
				continue
			}
			switch {
			case c == '#' && (j == 0 || l[j-1] == ' ' || l[j-1] == '\t'):
				j = len(l)
				continue
			case (c == '"' || c == '\'') && valueStart:
				quote = c
			case c == '[' || c == '{':
				if valueStart || depth > 0 {
					depth++
				}
			case (c == ']' || c == '}') && depth > 0:
				depth--
			case (c == '|' || c == '>') && valueStart && depth == 0 && blockScalarHeader(l[j:]):
				blockIndent = ind
				j = len(l)
				continue
			}
			switch c {
			case ' ', '\t', ',', '[', '{':
				valueStart = true
			case ':', '-', '?':
				valueStart = j+1 == len(l) || l[j+1] == ' ' || l[j+1] == '\t'
			default:
				valueStart = false
			}
		}
		out[i] = depth > 0 || quote != 0
	}
	return out
}

// blockScalarHeader reports whether s (from | or >) is a block scalar
// header: the indicator, optional chomping and indentation, then nothing but
// a comment.
func blockScalarHeader(s string) bool {
	s = strings.TrimLeft(s[1:], "+-0123456789")
	s = strings.TrimSpace(s)
	return s == "" || s[0] == '#'
}

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

// keyOf names the line of a block in messages: the key it writes
// ("watchdog:" of "  watchdog: {..}"), a list item as "- name: x", or the
// whole trimmed line.
func keyOf(l string) string {
	t := stripComment(strings.TrimSpace(l))
	if strings.HasPrefix(t, "- ") || t == "-" {
		return shorten(t)
	}
	if k, _, ok := strings.Cut(t, ":"); ok && !strings.ContainsAny(k, "[{\"'") {
		return k + ":"
	}
	return shorten(t)
}

// stripComment removes a trailing " # comment" (outside quotes, roughly:
// a comment needs a space before it).
func stripComment(t string) string {
	if i := strings.Index(t, " #"); i >= 0 && !strings.ContainsAny(t[:i], "\"'") {
		return strings.TrimSpace(t[:i])
	}
	return t
}

func shorten(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

// level is a block open above the offending line: a key or list item and
// the column (0-based) its contents start at.
type level struct {
	indent int
	text   string // the line, trimmed, for messages
}

// explainLine returns the column (1-based) of the offending token of line n
// and, when it can be told, what is wrong in words.
func explainLine(lines []string, n int, ymsg string) (col int, words string) {
	l := lines[n-1]
	ind := indentOf(l)
	col = ind + 1
	// A tab in the indentation.
	if i := strings.IndexByte(l, '\t'); i >= 0 && strings.TrimLeft(l[:i], " ") == "" {
		return i + 1, "a tab character indents this line: YAML indents with spaces only"
	}
	// An unquoted range inside a flow collection.
	if c, item := unquotedFlowRange(l); c > 0 {
		return c, fmt.Sprintf("the range %s is unquoted inside [ ] or { }, where braces are YAML syntax: quote the item, \"%s\"", item, item)
	}
	if strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#") {
		return col, ""
	}
	// The blocks open above line n, innermost last; open[i].indent is where
	// the contents of open[i] start.
	var open []level
	blockIndent := -1
	for _, p := range lines[:n-1] {
		t := strings.TrimSpace(p)
		pi := indentOf(p)
		if blockIndent >= 0 {
			if t == "" || pi > blockIndent {
				continue
			}
			blockIndent = -1
		}
		if t == "" || strings.HasPrefix(t, "#") || t == "---" || t == "..." {
			continue
		}
		for len(open) > 0 && open[len(open)-1].indent >= pi {
			open = open[:len(open)-1]
		}
		open = append(open, level{indent: pi, text: t})
		// "- key: v": the item's keys start after "- ".
		if strings.HasPrefix(t, "- ") {
			rest := strings.TrimLeft(t[2:], " ")
			open = append(open, level{indent: pi + len(t) - len(rest), text: rest})
		}
		if strings.HasSuffix(t, "|") || strings.HasSuffix(t, ">") {
			blockIndent = pi
		}
	}
	if len(open) == 0 {
		return col, ""
	}
	prev := open[len(open)-1]
	key := "`" + keyOf(l) + "`"
	parentOf := func(i int) string {
		for j := i - 1; j >= 0; j-- {
			if open[j].indent < open[i].indent {
				return "`" + keyOf(open[j].text) + "`"
			}
		}
		return "the top level"
	}
	switch {
	case ind > prev.indent && !opensBlock(prev.text):
		// Deeper than the line above, which holds a value of its own.
		return col, fmt.Sprintf("%s (column %d) is indented deeper than its siblings under %s (column %d): `%s` above it already has a value",
			key, col, parentOf(len(open)-1), prev.indent+1, shorten(stripComment(prev.text)))
	case ind < prev.indent:
		// Find the levels it falls between.
		for i := len(open) - 1; i >= 0; i-- {
			if open[i].indent == ind {
				return col, "" // aligned with a block: not an indentation mistake
			}
			if open[i].indent < ind {
				return col, fmt.Sprintf("%s (column %d) is indented less than the keys under %s (column %d) and deeper than %s (column %d): align it with one of them",
					key, col, "`"+keyOf(open[i].text)+"`", open[i+1].indent+1, "`"+keyOf(open[i].text)+"`", open[i].indent+1)
			}
		}
		return col, fmt.Sprintf("%s (column %d) is indented less than the first line of the document (column %d)", key, col, open[0].indent+1)
	}
	return col, ""
}

// opensBlock reports whether a line ends in a key (or list dash) whose value
// follows on the next lines: "policy:", "- ", "ports: &p".
func opensBlock(t string) bool {
	t = stripComment(t)
	if t == "-" || strings.HasSuffix(t, ":") {
		return true
	}
	if f := strings.Fields(t); len(f) >= 2 && strings.HasSuffix(f[len(f)-2], ":") && (strings.HasPrefix(f[len(f)-1], "&") || strings.HasPrefix(f[len(f)-1], "!")) {
		return true
	}
	return false
}

// unquotedFlowRange finds, in a line that opens a flow collection, a plain
// (unquoted) item holding a {a..b} range. It returns the item's 1-based
// column and text, or 0.
func unquotedFlowRange(l string) (col int, item string) {
	depth := 0
	var quote byte
	start := -1 // start of the current plain item
	for j := 0; j < len(l); j++ {
		c := l[j]
		if quote != 0 {
			if c == quote {
				quote = 0
			}
			continue
		}
		switch {
		case c == '#' && (j == 0 || l[j-1] == ' '):
			return 0, ""
		case (c == '"' || c == '\'') && start < 0:
			quote = c
		case c == '[' && start < 0:
			depth++
		case c == '{' && start < 0 && depth == 0:
			depth++ // a flow mapping
		case depth > 0 && start < 0 && c != ' ' && c != ',' && c != ']' && c != '}':
			start = j
		case depth > 0 && start >= 0 && c == '{':
			// The item runs past the range's closing brace to the next
			// , ] or }.
			end := j + 1
			if k := strings.IndexByte(l[j:], '}'); k >= 0 {
				end = j + k + 1
			}
			if k := strings.IndexAny(l[end:], ",]}"); k >= 0 {
				end += k
			} else {
				end = len(l)
			}
			it := strings.TrimSpace(l[start:end])
			// In a flow mapping the value after "key: " is the item.
			if k := strings.Index(it, ": "); k >= 0 && !strings.Contains(it[:k], "{") {
				start += k + 2
				it = strings.TrimSpace(it[k+2:])
			}
			if strings.Contains(it, "..") {
				return start + 1, shorten(it)
			}
			j = end - 1
		case depth > 0 && start >= 0 && (c == ',' || c == ']' || c == '}'):
			start = -1
			if c != ',' {
				depth--
			}
		}
	}
	return 0, ""
}
