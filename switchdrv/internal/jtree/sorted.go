package jtree

import (
	"bytes"
	"slices"
	"sync"
)

// SortedText appends to b what ExactText appends of Decode(js) (members
// sorted, those named in skip left out at the top), but works on the text
// itself, without decoding it into a tree. js must be valid JSON. ok is
// false where it cannot tell the two equal (a string with an escape or a
// character ExactText refuses, a member name with a ':', two members of
// the same name); then nothing of b is to be used.
func SortedText(b, js []byte, skip []string) ([]byte, bool) {
	f := sorters.Get().(*sorter)
	f.js, f.i, f.members = js, 0, f.members[:0]
	f.ws()
	b, ok := f.value(b, skip, 0)
	if ok {
		f.ws()
		ok = f.i == len(js)
	}
	clear(f.members[:cap(f.members)])
	f.js = nil
	sorters.Put(f)
	return b, ok
}

// sorters are reused with their member stacks.
var sorters = sync.Pool{New: func() any { return &sorter{} }}

type sorter struct {
	js      []byte
	i       int
	members []sortMember // the members of the objects being written
}

type sortMember struct {
	name       []byte
	start, end int // the value's text
}

func (f *sorter) ws() {
	for f.i < len(f.js) {
		switch f.js[f.i] {
		case ' ', '\t', '\n', '\r':
			f.i++
		default:
			return
		}
	}
}

func (f *sorter) value(b []byte, skip []string, depth int) ([]byte, bool) {
	if f.i >= len(f.js) || depth > maxDepth {
		return b, false
	}
	switch c := f.js[f.i]; {
	case c == '{':
		return f.object(b, skip, depth+1)
	case c == '[':
		f.i++
		b = append(b, '[')
		f.ws()
		if f.i < len(f.js) && f.js[f.i] == ']' {
			f.i++
			return append(b, ']'), true
		}
		for {
			f.ws()
			var ok bool
			if b, ok = f.value(b, nil, depth+1); !ok {
				return b, false
			}
			f.ws()
			if f.i >= len(f.js) {
				return b, false
			}
			switch f.js[f.i] {
			case ',':
				f.i++
				b = append(b, ',')
			case ']':
				f.i++
				return append(b, ']'), true
			default:
				return b, false
			}
		}
	case c == '"':
		s, ok := f.str()
		if !ok {
			return b, false
		}
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"'), true
	default: // a number or a literal: written as it is
		start := f.i
		for f.i < len(f.js) {
			switch f.js[f.i] {
			case ',', ']', '}', ' ', '\t', '\n', '\r':
				return append(b, f.js[start:f.i]...), f.i > start
			}
			f.i++
		}
		return append(b, f.js[start:f.i]...), f.i > start
	}
}

// str reads a string that ExactText writes as it is (printable ASCII
// without '"', '\\', '<', '>' and '&') and returns its text.
func (f *sorter) str() ([]byte, bool) {
	f.i++ // "
	start := f.i
	for f.i < len(f.js) {
		switch c := f.js[f.i]; {
		case c == '"':
			f.i++
			return f.js[start : f.i-1], true
		case c < 0x20 || c >= 0x7f, c == '\\', c == '<', c == '>', c == '&':
			return nil, false
		}
		f.i++
	}
	return nil, false
}

// skipValue moves past one value (valid JSON).
func (f *sorter) skipValue() bool {
	depth := 0
	for f.i < len(f.js) {
		switch c := f.js[f.i]; {
		case c == '"':
			f.i++
			for f.i < len(f.js) && f.js[f.i] != '"' {
				if f.js[f.i] == '\\' {
					f.i++
				}
				f.i++
			}
			if f.i >= len(f.js) {
				return false
			}
			f.i++
			if depth == 0 {
				return true
			}
		case c == '{' || c == '[':
			depth++
			f.i++
		case c == '}' || c == ']':
			if depth == 0 {
				return false
			}
			depth--
			f.i++
			if depth == 0 {
				return true
			}
		case depth == 0: // a number or a literal
			for f.i < len(f.js) {
				switch f.js[f.i] {
				case ',', ']', '}', ' ', '\t', '\n', '\r':
					return true
				}
				f.i++
			}
			return true
		default:
			f.i++
		}
	}
	return false
}

func (f *sorter) object(b []byte, skip []string, depth int) ([]byte, bool) {
	if depth > maxDepth {
		return b, false
	}
	f.i++ // {
	base := len(f.members)
	b, ok := f.objectMembers(b, skip, depth, base)
	f.members = f.members[:base]
	return b, ok
}

// objectMembers is object after the '{': the members are collected above base
// in f.members.
func (f *sorter) objectMembers(b []byte, skip []string, depth, base int) ([]byte, bool) {
	f.ws()
	if f.i < len(f.js) && f.js[f.i] == '}' {
		f.i++
		return append(b, '{', '}'), true
	}
	for {
		f.ws()
		if f.i >= len(f.js) || f.js[f.i] != '"' {
			return b, false
		}
		name, ok := f.str()
		if !ok || bytes.IndexByte(name, ':') >= 0 {
			return b, false
		}
		f.ws()
		if f.i >= len(f.js) || f.js[f.i] != ':' {
			return b, false
		}
		f.i++
		f.ws()
		start := f.i
		if !f.skipValue() || f.i == start {
			return b, false
		}
		f.members = append(f.members, sortMember{name: name, start: start, end: f.i})
		f.ws()
		if f.i >= len(f.js) {
			return b, false
		}
		if f.js[f.i] == ',' {
			f.i++
			continue
		}
		if f.js[f.i] != '}' {
			return b, false
		}
		f.i++
		break
	}
	end := f.i
	ms := f.members[base:]
	slices.SortFunc(ms, func(a, b sortMember) int { return bytes.Compare(a.name, b.name) })
	b = append(b, '{')
	first := true
	for i, m := range ms {
		if i > 0 && bytes.Equal(ms[i-1].name, m.name) {
			return b, false // Decode keeps the later one: not worth telling
		}
		if named(skip, m.name) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, m.name...)
		b = append(b, '"', ':')
		f.i = m.start
		var ok bool
		if b, ok = f.value(b, nil, depth); !ok || f.i != m.end {
			return b, false
		}
	}
	f.i = end
	return append(b, '}'), true
}

// named reports whether name is one of names.
func named(names []string, name []byte) bool {
	for _, n := range names {
		if n == string(name) {
			return true
		}
	}
	return false
}
