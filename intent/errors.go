package intent

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Error is one problem in an intent, with its position and field path.
type Error struct {
	Pos  Pos
	Path string // field path, e.g. policy.classes[roce].ecn.min
	Msg  string
	// Omitted, when > 0, marks the last entry of a long list: it is not
	// an error itself but says how many more were not collected.
	Omitted int
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Pos.String())
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in an intent, sorted by position.
type Errors []*Error

func (es Errors) Error() string {
	switch len(es) {
	case 0:
		return "no errors"
	case 1:
		return es[0].Error()
	}
	n := len(es)
	for _, e := range es {
		if e.Omitted > 0 {
			n += e.Omitted - 1
		}
	}
	lines := make([]string, 0, len(es)+1)
	lines = append(lines, fmt.Sprintf("%d errors in intent:", n))
	for _, e := range es {
		lines = append(lines, "  "+e.Error())
	}
	return strings.Join(lines, "\n")
}

// Sort orders errors by file, line, column, then path (in natural order:
// links[8] before links[10]) and message.
func (es Errors) Sort() {
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if c := a.Pos.Compare(b.Pos); c != 0 {
			return c < 0
		}
		if a.Path != b.Path {
			return naturalLess(a.Path, b.Path)
		}
		return a.Msg < b.Msg
	})
}

// errList collects errors while decoding.
type errList struct {
	errs Errors
	// limit stops collecting after this many (a garbage file can produce
	// thousands); the last entry says how many more were dropped.
	limit   int
	dropped int
}

func (l *errList) add(pos Pos, path, format string, a ...any) {
	if l.limit > 0 && len(l.errs) >= l.limit {
		l.dropped++
		return
	}
	for i, v := range a {
		if s, ok := v.(string); ok && len(s) > maxQuoted {
			a[i] = clip(s)
		}
	}
	l.errs = append(l.errs, &Error{Pos: pos, Path: clipPath(path), Msg: fmt.Sprintf(format, a...)})
}

// addText adds an error whose message is written in full: it is fabricctl's
// own text, which bounds what it quotes from the file.
func (l *errList) addText(pos Pos, path, msg string) {
	if l.limit > 0 && len(l.errs) >= l.limit {
		l.dropped++
		return
	}
	l.errs = append(l.errs, &Error{Pos: pos, Path: clipPath(path), Msg: msg})
}

// clipPath clips each [name] of a field path that is longer than maxQuoted.
func clipPath(p string) string {
	if len(p) <= maxQuoted {
		return p
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(p, '[')
		if i < 0 {
			break
		}
		j := strings.IndexByte(p[i:], ']')
		if j < 0 {
			break
		}
		b.WriteString(p[:i+1])
		b.WriteString(clip(p[i+1 : i+j]))
		b.WriteByte(']')
		p = p[i+j+1:]
	}
	b.WriteString(p)
	return b.String()
}

// maxQuoted bounds a value an error quotes (a key, a name, a string from
// the file): a 299 KB key is shown by its start and its length.
const maxQuoted = 160

// clip cuts s to its first maxQuoted bytes (on a rune boundary) and says how
// long it was.
func clip(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:cut], len(s))
}

func (l *errList) result() error {
	if len(l.errs) == 0 {
		return nil
	}
	l.errs.Sort()
	if l.dropped > 0 {
		last := l.errs[len(l.errs)-1]
		l.errs = append(l.errs, &Error{Pos: last.Pos, Msg: fmt.Sprintf("... and %d more errors not shown", l.dropped), Omitted: l.dropped})
	}
	return l.errs
}
