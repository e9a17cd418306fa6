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
	f.js, f.i, f.out, f.members = js, 0, f.out[:0], f.members[:0]
	f.ws()
	ok := f.value(skip, 0)
	if ok {
		f.ws()
		ok = f.i == len(js)
	}
	if ok {
		b = append(b, f.out...)
	}
	clear(f.members[:cap(f.members)])
	f.js = nil
	sorters.Put(f)
	return b, ok
}

// sorters are reused with their buffers.
var sorters = sync.Pool{New: func() any { return &sorter{} }}

// sorter writes the text into out as it reads js: an object's members are
// written there as they come, then once more, sorted, after them, and that
// copy is moved down to where the object starts.
type sorter struct {
	js      []byte
	i       int
	out     []byte
	members []sortMember // the members of the objects being written
}

type sortMember struct {
	name       []byte
	start, end int // the member's value in out
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

func (f *sorter) value(skip []string, depth int) bool {
	if f.i >= len(f.js) || depth > maxDepth {
		return false
	}
	switch c := f.js[f.i]; {
	case c == '{':
		return f.object(skip, depth+1)
	case c == '[':
		f.i++
		f.out = append(f.out, '[')
		f.ws()
		if f.i < len(f.js) && f.js[f.i] == ']' {
			f.i++
			f.out = append(f.out, ']')
			return true
		}
		for {
			f.ws()
			if !f.value(nil, depth+1) {
				return false
			}
			f.ws()
			if f.i >= len(f.js) {
				return false
			}
			switch f.js[f.i] {
			case ',':
				f.i++
				f.out = append(f.out, ',')
			case ']':
				f.i++
				f.out = append(f.out, ']')
				return true
			default:
				return false
			}
		}
	case c == '"':
		s, ok := f.str()
		if !ok {
			return false
		}
		f.out = append(f.out, '"')
		f.out = append(f.out, s...)
		f.out = append(f.out, '"')
		return true
	default: // a number or a literal: written as it is
		start := f.i
		for f.i < len(f.js) {
			switch f.js[f.i] {
			case ',', ']', '}', ' ', '\t', '\n', '\r':
				f.out = append(f.out, f.js[start:f.i]...)
				return f.i > start
			}
			f.i++
		}
		f.out = append(f.out, f.js[start:f.i]...)
		return f.i > start
	}
}

// str reads a string that ExactText writes as it is (printable ASCII
// without '"', '\\', '<', '>' and '&') and returns its text.
func (f *sorter) str() ([]byte, bool) {
	end, ok := plainStringEnd(f.js, f.i)
	if !ok {
		return nil, false
	}
	s := f.js[f.i+1 : end-1]
	f.i = end
	return s, true
}

func (f *sorter) object(skip []string, depth int) bool {
	if depth > maxDepth {
		return false
	}
	f.i++ // {
	base, at := len(f.members), len(f.out)
	ok := f.objectMembers(depth)
	if ok {
		ok = f.writeSorted(skip, base, at)
	}
	f.members = f.members[:base]
	return ok
}

// objectMembers reads the members of an object (after its '{'), writing
// their values into out and noting them in members.
func (f *sorter) objectMembers(depth int) bool {
	f.ws()
	if f.i < len(f.js) && f.js[f.i] == '}' {
		f.i++
		return true
	}
	for {
		f.ws()
		if f.i >= len(f.js) || f.js[f.i] != '"' {
			return false
		}
		name, ok := f.str()
		if !ok || bytes.IndexByte(name, ':') >= 0 {
			return false
		}
		f.ws()
		if f.i >= len(f.js) || f.js[f.i] != ':' {
			return false
		}
		f.i++
		f.ws()
		start := len(f.out)
		if !f.value(nil, depth) {
			return false
		}
		f.members = append(f.members, sortMember{name: name, start: start, end: len(f.out)})
		f.ws()
		if f.i >= len(f.js) {
			return false
		}
		switch f.js[f.i] {
		case ',':
			f.i++
		case '}':
			f.i++
			return true
		default:
			return false
		}
	}
}

// writeSorted writes the object whose members are members[base:] (their
// values in out from at on) sorted, and puts it at at.
func (f *sorter) writeSorted(skip []string, base, at int) bool {
	ms := f.members[base:]
	slices.SortFunc(ms, func(a, b sortMember) int { return bytes.Compare(a.name, b.name) })
	from := len(f.out)
	f.out = append(f.out, '{')
	first := true
	for i, m := range ms {
		if i > 0 && bytes.Equal(ms[i-1].name, m.name) {
			return false // Decode keeps the later one: not worth telling
		}
		if named(skip, m.name) {
			continue
		}
		if !first {
			f.out = append(f.out, ',')
		}
		first = false
		f.out = append(f.out, '"')
		f.out = append(f.out, m.name...)
		f.out = append(f.out, '"', ':')
		f.out = append(f.out, f.out[m.start:m.end]...)
	}
	f.out = append(f.out, '}')
	n := copy(f.out[at:], f.out[from:])
	f.out = f.out[:at+n]
	return true
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
