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
		ends, open := openAtLineEnds(lines)
		l := firstFailingLine(lines)
		var o *opener
		switch {
		case l > 1 && ends[l-2] != nil:
			// The failing line starts inside what an earlier line opened:
			// intents rarely continue a flow list or a quoted string over
			// lines, so its closing ] } or quote is the likely miss.
			o = ends[l-2]
		case l == 0 && len(open) > 0:
			// The text ends inside what was opened here: yaml.v3 fails
			// wherever it gives up looking for the close. The innermost:
			// an unclosed quote swallows the closers after it.
			o = &open[len(open)-1]
		case l > 0:
			line = l
		}
		if o != nil {
			what := map[byte]string{'[': "the flow list [ opened here is not closed with ]",
				'{': "the flow mapping { opened here is not closed with }",
				'"': `the "quoted string" started here does not end`, '\'': "the 'quoted string' started here does not end"}[o.c]
			if l > 0 {
				what += fmt.Sprintf(" before line %d, where the parser fails", l)
			}
			return syntaxError{line: o.line, col: o.col, msg: what + " (YAML parser: " + ymsg + ")"}
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
	open, _ := openAtLineEnds(lines)
	fails := func(n int) bool { return open[n-1] == nil && !parsesUpTo(lines, n) }
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

// opener is where a flow collection or quoted scalar starts.
type opener struct {
	line, col int // 1-based
	c         byte
}

// openAtLineEnds reports for each line the innermost flow collection ([ ]
// or { }) or quoted scalar it ends inside (nil: none), and what is still
// open at the end of the text (outermost first). It is a small YAML lexer for this one
// purpose: comments, quotes, flow brackets and block scalars (| and >) are
// known; anything else is text. A quote or bracket opens something only
// where a value starts (at the start of a line, or after ": ", "- ", "? ",
// ",", "[" or "{"); inside a plain scalar (it's, x[1]) it is text.
func openAtLineEnds(lines []string) ([]*opener, []opener) {
	out := make([]*opener, len(lines))
	var open []opener
	inQuote := func() byte {
		if n := len(open); n > 0 && (open[n-1].c == '"' || open[n-1].c == '\'') {
			return open[n-1].c
		}
		return 0
	}
	depth := func() int {
		d := 0
		for _, o := range open {
			if o.c == '[' || o.c == '{' {
				d++
			}
		}
		return d
	}
	blockIndent := -1
	for i, l := range lines {
		ind := indentOf(l)
		if blockIndent >= 0 {
			if strings.TrimSpace(l) == "" || ind > blockIndent {
				continue // a line of a block scalar
			}
			blockIndent = -1
		}
		// valueStart: a value may start here.
		valueStart := true
		for j := 0; j < len(l); j++ {
			c := l[j]
			if q := inQuote(); q != 0 {
				switch {
				case q == '"' && c == '\\':
					j++
				case q == '\'' && c == '\'' && j+1 < len(l) && l[j+1] == '\'':
					j++
				case c == q:
					open = open[:len(open)-1]
					valueStart = false
				}
				continue
			}
			switch {
			case c == ' ' || c == '\t':
				continue // spaces keep valueStart as it is
			case c == '#' && (j == 0 || l[j-1] == ' ' || l[j-1] == '\t'):
				j = len(l)
				continue
			case (c == '"' || c == '\'') && valueStart:
				open = append(open, opener{i + 1, j + 1, c})
				continue
			case (c == '[' || c == '{') && valueStart:
				open = append(open, opener{i + 1, j + 1, c})
				valueStart = true
				continue
			case (c == ']' || c == '}') && depth() > 0:
				open = open[:len(open)-1]
				valueStart = false
				continue
			case c == ',' && depth() > 0:
				valueStart = true
				continue
			case (c == '|' || c == '>') && valueStart && depth() == 0 && blockScalarHeader(l[j:]):
				blockIndent = ind
				j = len(l)
				continue
			case (c == ':' || c == '-' || c == '?') && (j+1 == len(l) || l[j+1] == ' ' || l[j+1] == '\t'):
				valueStart = true
				continue
			}
			valueStart = false
		}
		if n := len(open); n > 0 {
			o := open[n-1]
			out[i] = &o
		}
	}
	return out, open
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
				t := strings.TrimSpace(l)
				if strings.HasPrefix(open[i].text, "- ") && !strings.HasPrefix(t, "- ") && t != "-" {
					return col, fmt.Sprintf("%s (column %d) is at the indentation of the list items above it but is not one: start it with \"- \", or indent it under `%s`",
						key, col, shorten(stripComment(open[i].text)))
				}
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
