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

// maxRefine bounds the files whose syntax errors are located again: a
// suspect line costs two more parses of the file (BenchmarkLocateSyntaxError),
// and maxSearch the files where, with no suspect confirmed, a binary search
// parses a prefix about log2(lines) times. An intent is rarely a tenth of
// either; a larger file keeps yaml.v3's line.
const (
	maxRefine = 1 << 20
	maxSearch = 128 << 10
)

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
		l := 0
		// The lines that look wrong first, each confirmed by the parser
		// (the text up to it fails, up to the line before it parses): two
		// parses where a search takes about log2(lines).
		for _, n := range suspectLines(lines, ends, 3) {
			if !parses(lines[:n]) {
				if n == 1 || ends[n-2] != nil || parses(lines[:n-1]) {
					l = n
				}
				break
			}
		}
		if l == 0 && len(data) <= maxSearch {
			l = firstFailingLine(lines, yline)
		}
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
	if len(data) > maxRefine {
		// Too large to parse again: the first line from yaml.v3's on
		// that looks wrong, unconfirmed (a lexical scan, no parse).
		ends, _ := openAtLineEnds(lines)
		for _, n := range suspectLines(lines, ends, 0) {
			if n >= yline {
				line = n
				break
			}
		}
	}
	if line < 1 || line > len(lines) {
		return syntaxError{line: max(yline, 1), col: 1, msg: ymsg}
	}
	col, words := explainLine(lines, line)
	if words == "" {
		return syntaxError{line: line, col: col, msg: ymsg}
	}
	return syntaxError{line: line, col: col, msg: words + " (YAML parser: " + ymsg + ")"}
}

// parses reports whether lines parse as YAML (every document).
func parses(lines []string) bool {
	dec := yaml.NewDecoder(strings.NewReader(strings.Join(lines, "\n") + "\n"))
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
// would be the cut's, not the text's. hint is yaml.v3's line: when it is
// the start of the block the parser was in (its context mark), the search
// parses that block alone (the lines from hint on), which is as good as
// parsing the whole prefix until the mistake, and much cheaper in a large
// file; the answer is then confirmed on the whole text, else searched there.
func firstFailingLine(lines []string, hint int) int {
	open, _ := openAtLineEnds(lines)
	// search finds the first n in [from, len(lines)] such that
	// lines[from-1:n] does not parse.
	search := func(from int) int {
		fails := func(n int) bool { return open[n-1] == nil && !parses(lines[from-1:n]) }
		lo, hi := from, len(lines)
		if !fails(hi) {
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
	if hint > 1 && hint <= len(lines) {
		if n := search(hint); n > 0 && open[n-1] == nil && !parses(lines[:n]) && (open[n-2] != nil || parses(lines[:n-1])) {
			return n
		}
	}
	// The whole text ends inside a flow collection or quoted scalar (an
	// unclosed [ or "): 0, and the caller points at the opener.
	return search(1)
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
func explainLine(lines []string, n int) (col int, words string) {
	var w blockWalker
	for _, p := range lines[:n-1] {
		w.push(p)
	}
	return w.explain(lines[n-1])
}

// suspectLines returns, in order, the lines whose indentation or flow
// syntax explain finds wrong given the lines above them, at most max of
// them. Lines inside a multi-line flow collection or quoted scalar are not
// judged. A suspect is only that: a plain scalar continued on a deeper line
// is valid YAML.
func suspectLines(lines []string, ends []*opener, max int) []int {
	var w blockWalker
	var out []int
	for i, l := range lines {
		if i > 0 && ends[i-1] != nil {
			continue
		}
		if _, words := w.explain(l); words != "" {
			out = append(out, i+1)
			if len(out) == max {
				break
			}
		}
		w.push(l)
	}
	return out
}

// blockWalker follows the blocks a YAML text opens, line by line: open is
// the blocks open above the current line, innermost last; open[i].indent is
// where the contents of open[i] start.
type blockWalker struct {
	open []level
	// blockIndent is the indentation of a block scalar's header (| or >)
	// while its lines follow, else -1 (or 0 before the first line).
	blockIndent int
	inScalar    bool
}

// push takes line p as read.
func (w *blockWalker) push(p string) {
	t := strings.TrimSpace(p)
	pi := indentOf(p)
	if w.inScalar {
		if t == "" || pi > w.blockIndent {
			return
		}
		w.inScalar = false
	}
	if t == "" || strings.HasPrefix(t, "#") || t == "---" || t == "..." {
		return
	}
	for len(w.open) > 0 && w.open[len(w.open)-1].indent >= pi {
		w.open = w.open[:len(w.open)-1]
	}
	w.open = append(w.open, level{indent: pi, text: t})
	// "- key: v": the item's keys start after "- ".
	if strings.HasPrefix(t, "- ") {
		rest := strings.TrimLeft(t[2:], " ")
		w.open = append(w.open, level{indent: pi + len(t) - len(rest), text: rest})
	}
	if st := stripComment(t); strings.HasSuffix(st, "|") || strings.HasSuffix(st, ">") || strings.HasSuffix(st, "|-") || strings.HasSuffix(st, ">-") {
		w.blockIndent, w.inScalar = pi, true
	}
}

// explain judges line l against the blocks open above it: the column
// (1-based) of its offending token and what is wrong, or "" when nothing is
// seen wrong.
func (w *blockWalker) explain(l string) (col int, words string) {
	ind := indentOf(l)
	col = ind + 1
	t := strings.TrimSpace(l)
	if w.inScalar && (t == "" || ind > w.blockIndent) {
		return col, "" // a line of a block scalar: text
	}
	// A tab in the indentation.
	if i := strings.IndexByte(l, '\t'); i >= 0 && strings.TrimLeft(l[:i], " ") == "" {
		return i + 1, "a tab character indents this line: YAML indents with spaces only"
	}
	// An unquoted range inside a flow collection.
	if c, item := unquotedFlowRange(l); c > 0 {
		return c, fmt.Sprintf("the range %s is unquoted inside [ ] or { }, where braces are YAML syntax: quote the item, \"%s\"", item, item)
	}
	if t == "" || strings.HasPrefix(t, "#") || t == "---" || t == "..." {
		return col, ""
	}
	open := w.open
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
				if strings.HasPrefix(open[i].text, "- ") && !strings.HasPrefix(t, "- ") && t != "-" {
					return col, fmt.Sprintf("%s (column %d) is at the indentation of the list items above it but is not one: start it with \"- \", or indent it under `%s`",
						key, col, shorten(stripComment(open[i].text)))
				}
				return col, "" // aligned with a block: not an indentation mistake
			}
			if open[i].indent < ind {
				outer := "`" + keyOf(open[i].text) + "`"
				if strings.HasPrefix(open[i].text, "- ") {
					// The item's dash and its keys: one line, two levels.
					return col, fmt.Sprintf("%s (column %d) is indented less than the keys of the list item %s (column %d) and deeper than its dash (column %d): align it with the keys",
						key, col, outer, open[i+1].indent+1, open[i].indent+1)
				}
				return col, fmt.Sprintf("%s (column %d) is indented less than the keys under %s (column %d) and deeper than %s (column %d): align it with one of them",
					key, col, outer, open[i+1].indent+1, outer, open[i].indent+1)
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
