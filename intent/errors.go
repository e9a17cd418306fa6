package intent

import (
	"fmt"
	"sort"
	"strings"
)

// Error is one problem in an intent, with its position and field path.
type Error struct {
	Pos  Pos
	Path string // field path, e.g. policy.classes[roce].ecn.min
	Msg  string
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
	lines := make([]string, 0, len(es)+1)
	lines = append(lines, fmt.Sprintf("%d errors in intent:", len(es)))
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
	l.errs = append(l.errs, &Error{Pos: pos, Path: path, Msg: fmt.Sprintf(format, a...)})
}

func (l *errList) result() error {
	if len(l.errs) == 0 {
		return nil
	}
	l.errs.Sort()
	if l.dropped > 0 {
		last := l.errs[len(l.errs)-1]
		l.errs = append(l.errs, &Error{Pos: last.Pos, Msg: fmt.Sprintf("... and %d more errors not shown", l.dropped)})
	}
	return l.errs
}
