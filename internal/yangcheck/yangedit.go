package yangcheck

import (
	"fmt"
	"strconv"
	"strings"
)

// A module text edited statement by statement: how a release schema is
// derived from the shipped modules of a newer release (release.go). The
// text is read as YANG statements (RFC 7950 section 6: keyword, optional
// argument, ";" or a block of sub-statements; comments and quoted strings
// skipped) and each edit splices one statement, so the result is YANG text
// that goyang and libyang's yanglint read alike.

// ystmt is one statement of a module text: its keyword and argument (quoted
// parts unquoted and joined, white space collapsed for matching) and where
// its parts are in the text.
type ystmt struct {
	kw, arg          string
	start, end       int // the statement: keyword .. its ";" or "}" inclusive
	kwEnd            int
	argStart, argEnd int // the argument's text (0, 0 without one)
	open             int // index after "{", -1 when the statement ends with ";"
	subs             []*ystmt
	line             int
}

// parseYANG reads the statements of a module text.
func parseYANG(text string) ([]*ystmt, error) {
	p := &yparser{s: text}
	top, err := p.block(false)
	if err != nil {
		return nil, err
	}
	return top, nil
}

type yparser struct {
	s string
	i int
}

func (p *yparser) line() int { return strings.Count(p.s[:p.i], "\n") + 1 }

// space skips white space and comments.
func (p *yparser) space() error {
	for p.i < len(p.s) {
		switch {
		case strings.ContainsRune(" \t\r\n", rune(p.s[p.i])):
			p.i++
		case strings.HasPrefix(p.s[p.i:], "//"):
			if j := strings.IndexByte(p.s[p.i:], '\n'); j >= 0 {
				p.i += j + 1
			} else {
				p.i = len(p.s)
			}
		case strings.HasPrefix(p.s[p.i:], "/*"):
			j := strings.Index(p.s[p.i+2:], "*/")
			if j < 0 {
				return fmt.Errorf("line %d: unterminated comment", p.line())
			}
			p.i += j + 4
		default:
			return nil
		}
	}
	return nil
}

// block reads statements up to a "}" (inner) or the end of the text.
func (p *yparser) block(inner bool) ([]*ystmt, error) {
	var out []*ystmt
	for {
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.i >= len(p.s) {
			if inner {
				return nil, fmt.Errorf("unexpected end of text: a block is not closed")
			}
			return out, nil
		}
		if p.s[p.i] == '}' {
			if !inner {
				return nil, fmt.Errorf("line %d: unexpected }", p.line())
			}
			return out, nil
		}
		st, err := p.statement()
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
}

func (p *yparser) statement() (*ystmt, error) {
	st := &ystmt{start: p.i, open: -1, line: p.line()}
	j := p.i
	for j < len(p.s) && !strings.ContainsRune(" \t\r\n;{}\"'", rune(p.s[j])) {
		j++
	}
	if j == p.i {
		return nil, fmt.Errorf("line %d: a keyword is missing", p.line())
	}
	st.kw, st.kwEnd, p.i = p.s[p.i:j], j, j
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.i < len(p.s) && p.s[p.i] != ';' && p.s[p.i] != '{' {
		st.argStart = p.i
		arg, err := p.argument()
		if err != nil {
			return nil, fmt.Errorf("line %d: %s: %w", st.line, st.kw, err)
		}
		st.arg, st.argEnd = strings.Join(strings.Fields(arg), " "), p.i
		if err := p.space(); err != nil {
			return nil, err
		}
	}
	switch {
	case p.i < len(p.s) && p.s[p.i] == ';':
		p.i++
	case p.i < len(p.s) && p.s[p.i] == '{':
		p.i++
		st.open = p.i
		subs, err := p.block(true)
		if err != nil {
			return nil, err
		}
		st.subs = subs
		p.i++ // "}"
	default:
		return nil, fmt.Errorf("line %d: %s %s: neither ; nor {", st.line, st.kw, st.arg)
	}
	st.end = p.i
	return st, nil
}

// argument reads an unquoted string or quoted strings joined by "+".
func (p *yparser) argument() (string, error) {
	if c := p.s[p.i]; c != '"' && c != '\'' {
		j := p.i
		for j < len(p.s) && !strings.ContainsRune(" \t\r\n;{", rune(p.s[j])) {
			j++
		}
		a := p.s[p.i:j]
		p.i = j
		return a, nil
	}
	var b strings.Builder
	for {
		c := p.s[p.i]
		j := p.i + 1
		for j < len(p.s) && p.s[j] != c {
			if c == '"' && p.s[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(p.s) {
			return "", fmt.Errorf("unterminated string")
		}
		part := p.s[p.i+1 : j]
		if c == '"' {
			part = strings.NewReplacer(`\"`, `"`, `\\`, `\`, `\n`, "\n", `\t`, "\t").Replace(part)
		}
		b.WriteString(part)
		p.i = j + 1
		save := p.i
		if err := p.space(); err != nil {
			return "", err
		}
		if p.i < len(p.s) && p.s[p.i] == '+' {
			p.i++
			if err := p.space(); err != nil {
				return "", err
			}
			if p.i < len(p.s) && (p.s[p.i] == '"' || p.s[p.i] == '\'') {
				continue
			}
			return "", fmt.Errorf("+ not followed by a quoted string")
		}
		p.i = save
		return b.String(), nil
	}
}

// EditOp is what an Edit does to the statement it names.
type EditOp string

// Edit operations.
const (
	// EditRemove removes the statement (a leaf, a must, a unique, ...).
	EditRemove EditOp = "remove"
	// EditKeyword changes the statement's keyword to Arg (leaf -> leaf-list).
	EditKeyword EditOp = "keyword"
	// EditArgument replaces the statement's argument with Arg (a range, a
	// length, a pattern).
	EditArgument EditOp = "argument"
	// EditInsert adds Text as the statement's first sub-statement.
	EditInsert EditOp = "insert"
	// EditText replaces every Arg in the statement's text with Text (a
	// part of the patterns of several typedefs); none is an error.
	EditText EditOp = "text"
)

// Edit is one difference between a shipped module and a release's own: the
// statement At (below the module statement, each step "keyword
// argument", or "keyword" alone when the parent has one statement of that
// keyword) and what to do to it. Source cites the release's text.
type Edit struct {
	Module string
	At     []string
	Op     EditOp
	Arg    string
	Text   string
	Source string
}

func (e Edit) String() string {
	return fmt.Sprintf("%s: %s %s", e.Module, e.Op, strings.Join(e.At, " / "))
}

// find returns the statement at path below sts.
func findStmt(sts []*ystmt, at []string) (*ystmt, error) {
	var cur *ystmt
	for i, step := range at {
		kw, arg, hasArg := strings.Cut(step, " ")
		arg = strings.Join(strings.Fields(arg), " ")
		var hits []*ystmt
		for _, s := range sts {
			if s.kw == kw && (!hasArg || s.arg == arg) {
				hits = append(hits, s)
			}
		}
		switch len(hits) {
		case 0:
			return nil, fmt.Errorf("no statement %q at step %d", step, i+1)
		case 1:
		default:
			return nil, fmt.Errorf("%d statements %q at step %d (name one by its argument)", len(hits), step, i+1)
		}
		cur = hits[0]
		sts = cur.subs
	}
	if cur == nil {
		return nil, fmt.Errorf("empty statement path")
	}
	return cur, nil
}

// quoteYANG quotes s as a YANG double-quoted string.
func quoteYANG(s string) string {
	return strconv.Quote(s)
}

// applyEdits returns the module text with the edits applied one after the
// other (all of them for one module); the error names the edit that does
// not apply.
func applyEdits(text string, edits []Edit) (string, error) {
	for _, e := range edits {
		sts, err := parseYANG(text)
		if err != nil {
			return "", fmt.Errorf("edit %s: %w", e, err)
		}
		st, err := findStmt(sts, append([]string{"module " + e.Module}, e.At...))
		if err != nil {
			return "", fmt.Errorf("edit %s: %w", e, err)
		}
		from, to, repl := st.start, st.end, ""
		switch e.Op {
		case EditRemove:
		case EditKeyword:
			to, repl = st.kwEnd, e.Arg
		case EditArgument:
			if st.argEnd == 0 {
				return "", fmt.Errorf("edit %s: the statement has no argument", e)
			}
			from, to, repl = st.argStart, st.argEnd, quoteYANG(e.Arg)
		case EditInsert:
			if st.open < 0 {
				from, to, repl = st.end-1, st.end, " {\n"+e.Text+"\n}"
			} else {
				from, to, repl = st.open, st.open, "\n"+e.Text+"\n"
			}
		case EditText:
			body := text[st.start:st.end]
			if e.Arg == "" || !strings.Contains(body, e.Arg) {
				return "", fmt.Errorf("edit %s: %q is not in the statement", e, e.Arg)
			}
			repl = strings.ReplaceAll(body, e.Arg, e.Text)
		default:
			return "", fmt.Errorf("edit %s: unknown operation", e)
		}
		text = text[:from] + repl + text[to:]
	}
	return text, nil
}
