package intent

import (
	"iter"
	"strconv"
	"strings"
)

// Fields knows the keys written in one YAML mapping and the position of
// their values, so that errors and check findings point at the value they
// are about (policy.watchdog.poll at "poll: 300ms", not at the block's first
// key). Elements expanded from one range share one Fields. The zero Fields
// knows no key.
//
// A fabric has one per mapping written (about 40,000 for 2,000 switches and
// 16,000 hosts), so it is a pointer to a short list rather than a map: the
// lists are cut from a few large blocks (fieldArena), a lookup runs through
// a mapping's few keys, and the file, the same for every key, is held once.
type Fields struct{ l *fieldList }

// fieldList is the keys of one mapping, in the order written (merged keys
// first), each once.
type fieldList struct {
	file string
	keys []keyPos
}

// keyPos is one key and where its value is (in fieldList's file). The
// key is the decoder's own spelling of it (its codec's, made once), so a
// pointer to it is all a key costs.
type keyPos struct {
	key       *string
	line, col int32
}

func (k keyPos) pos(file string) Pos { return Pos{File: file, Line: int(k.line), Col: int(k.col)} }

// Lookup returns the position of key's value and whether key was written.
func (fs Fields) Lookup(key string) (Pos, bool) {
	if fs.l == nil {
		return Pos{}, false
	}
	for _, k := range fs.l.keys {
		if *k.key == key {
			return k.pos(fs.l.file), true
		}
	}
	return Pos{}, false
}

// Has reports whether key was written.
func (fs Fields) Has(key string) bool {
	_, ok := fs.Lookup(key)
	return ok
}

// At returns the position of key's value, or fallback when key was not
// written (a default, a preset or portDefaults the element did not set).
func (fs Fields) At(key string, fallback Pos) Pos {
	if p, ok := fs.Lookup(key); ok && p.IsValid() {
		return p
	}
	return fallback
}

// Len is how many keys were written.
func (fs Fields) Len() int {
	if fs.l == nil {
		return 0
	}
	return len(fs.l.keys)
}

// Equal reports whether fs and o know the same keys at the same
// positions, in whatever order they were written (go-cmp uses it).
func (fs Fields) Equal(o Fields) bool {
	if fs.Len() != o.Len() {
		return false
	}
	for k, p := range fs.All() {
		if q, ok := o.Lookup(k); !ok || q != p {
			return false
		}
	}
	return true
}

// All yields every key written and its value's position, in the order
// written.
func (fs Fields) All() iter.Seq2[string, Pos] {
	return func(yield func(string, Pos) bool) {
		if fs.l == nil {
			return
		}
		for _, k := range fs.l.keys {
			if !yield(*k.key, k.pos(fs.l.file)) {
				return
			}
		}
	}
}

// fieldArena cuts Fields from blocks that double up to a few thousand
// keys: one allocation per thousand keys of a large inventory rather than
// one per mapping, and little for a small file. What it hands out is
// never written again.
type fieldArena struct {
	keys  []keyPos
	lists []fieldList
}

// fields returns a Fields of a copy of keys in file (the zero Fields when
// there are none).
func (a *fieldArena) fields(file string, keys []keyPos) Fields {
	n := len(keys)
	if n == 0 {
		return Fields{}
	}
	if cap(a.keys)-len(a.keys) < n {
		a.keys = make([]keyPos, 0, max(n, min(2*cap(a.keys), 2048), 32))
	}
	l := len(a.keys)
	a.keys = append(a.keys, keys...)
	if len(a.lists) == cap(a.lists) {
		a.lists = make([]fieldList, 0, max(min(2*cap(a.lists), 512), 8))
	}
	a.lists = append(a.lists, fieldList{file: file, keys: a.keys[l : l+n : l+n]})
	return Fields{&a.lists[len(a.lists)-1]}
}

// setKey sets key's position in keys[start:] (the keys of the mapping
// being read), replacing an earlier one: a later merge, or an explicit key
// after merged ones, wins.
func setKey(keys []keyPos, start int, key *string, line, col int) []keyPos {
	kp := keyPos{key: key, line: int32(line), col: int32(col)}
	for i := start; i < len(keys); i++ {
		if keys[i].key == key || *keys[i].key == *key {
			keys[i] = kp
			return keys
		}
	}
	return append(keys, kp)
}

// FieldPos returns the position of the value a field path names, as errors
// and check findings spell paths (policy.classes[roce].ecn.max,
// inventory.switches[leaf1].ports[ethernet-1/1].speed, inventory.links[3]),
// or, when that value was not written (a default or a preset), the position
// of the nearest enclosing element that was. ok is false when the path
// names nothing of f.
func (f *Fabric) FieldPos(path string) (Pos, bool) {
	var buf [8]pathSeg // a path has at most six steps: none allocated
	segs := appendPath(buf[:0], path)
	if len(segs) == 0 {
		return Pos{}, false
	}
	// at is the deepest position found so far; fs the keys of that element.
	at, fs := f.Pos, Fields{}
	key := func(k string) bool {
		if p, ok := fs.Lookup(k); ok && p.IsValid() {
			at = p
			return true
		}
		return false
	}
	enter := func(p Pos, fields Fields) {
		if p.IsValid() {
			at = p
		}
		fs = fields
	}
	i := 0
	next := func() (name, index string, ok bool) {
		if i >= len(segs) {
			return "", "", false
		}
		s := segs[i]
		i++
		return s.name, s.index, true
	}
	top, _, _ := next()
	switch top {
	case "policy":
		p := &f.Policy
		enter(p.Pos, p.Fields)
		name, idx, ok := next()
		if !ok {
			return at, true
		}
		key(name)
		switch name {
		case "classes":
			if idx == "" {
				return at, true
			}
			cl := p.ClassByName(idx)
			if cl == nil {
				return at, true
			}
			enter(cl.Pos, cl.Fields)
			name, _, ok := next()
			if !ok {
				return at, true
			}
			// ECN thresholds from the preset point at the class that
			// took them, when the class is written out.
			if found := key(name); name == "ecn" && cl.ECN != nil && (found || cl.Fields.Len() == 0) {
				enter(cl.ECN.Pos, cl.ECN.Fields)
				if name, _, ok := next(); ok {
					key(name)
				}
			}
		case "watchdog":
			enter(p.Watchdog.Pos, p.Watchdog.Fields)
			if name, _, ok := next(); ok {
				key(name)
			}
		case "roce":
			enter(p.RoCE.Pos, p.RoCE.Fields)
			if name, _, ok := next(); ok {
				key(name)
			}
		case "hostBuffers":
			// policy.hostBuffers[buffer=N]: the entry of buffer index N.
			b, err := strconv.Atoi(strings.TrimPrefix(idx, "buffer="))
			if hb := p.HostBuffer; hb != nil && err == nil && b >= 0 && b < len(hb.BufferPos) && hb.BufferPos[b].IsValid() {
				enter(hb.BufferPos[b], hb.BufferFields[b])
				if name, _, ok := next(); ok {
					key(name)
				}
			}
		}
		return at, true
	case "validation":
		enter(f.Validation.Pos, f.Validation.Fields)
		if name, _, ok := next(); ok {
			if key(name) && name == "lossy" && f.Validation.Lossy.Fields.Len() > 0 {
				enter(f.Validation.Lossy.Pos, f.Validation.Lossy.Fields)
				if name, _, ok := next(); ok {
					key(name)
				}
			}
		}
		return at, true
	case "inventory":
	default:
		return Pos{}, false
	}
	list, idx, ok := next()
	if !ok {
		return at, true
	}
	switch list {
	case "switches":
		sw := f.Switch(idx)
		if sw == nil {
			return at, true
		}
		enter(sw.Pos, sw.Fields)
		name, idx, ok := next()
		if !ok {
			return at, true
		}
		key(name)
		switch name {
		case "ports":
			p := sw.Port(idx)
			if p == nil {
				return at, true
			}
			enter(p.Pos, p.Fields)
			if name, _, ok := next(); ok {
				key(name)
			}
			return at, true
		case "credentials":
			enter(sw.Credentials.Pos, sw.Credentials.Fields)
		case "tls":
			enter(sw.TLS.Pos, sw.TLS.Fields)
		default:
			return at, true
		}
		if name, _, ok := next(); ok {
			key(name)
		}
	case "hosts":
		h := f.Host(idx)
		if h == nil {
			return at, true
		}
		enter(h.Pos, h.Fields)
		name, idx, ok := next()
		if !ok {
			return at, true
		}
		key(name)
		switch name {
		case "nics":
			for j := range h.NICs {
				if n := &h.NICs[j]; n.Interface == idx {
					enter(n.Pos, n.Fields)
					if name, _, ok := next(); ok {
						key(name)
					}
					break
				}
			}
		case "ssh":
			enter(h.SSH.Pos, h.SSH.Fields)
			if name, _, ok := next(); ok {
				key(name)
			}
		}
	case "links":
		n, err := strconv.Atoi(idx)
		if err != nil || n < 0 || n >= len(f.Links) {
			return at, true
		}
		l := &f.Links[n]
		enter(l.Pos, l.Fields)
		if name, _, ok := next(); ok {
			key(name)
		}
	}
	return at, true
}

type pathSeg struct{ name, index string }

// splitPath splits a.b[x].c[y] into {a} {b x} {c y}. An index may hold dots
// and slashes (port names): only the brackets delimit it.
func splitPath(path string) []pathSeg { return appendPath(nil, path) }

// appendPath is splitPath appending to out.
func appendPath(out []pathSeg, path string) []pathSeg {
	for path != "" {
		var seg pathSeg
		end := strings.IndexAny(path, ".[")
		if end < 0 {
			out = append(out, pathSeg{name: path})
			break
		}
		seg.name = path[:end]
		path = path[end:]
		if path[0] == '[' {
			close := strings.IndexByte(path, ']')
			if close < 0 {
				out = append(out, seg)
				break
			}
			seg.index = path[1:close]
			path = path[close+1:]
		}
		out = append(out, seg)
		path = strings.TrimPrefix(path, ".")
	}
	return out
}
