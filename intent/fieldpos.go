package intent

import (
	"strconv"
	"strings"
)

// Fields maps the keys written in one YAML mapping to the position of their
// values, so that errors and check findings point at the value they are
// about (policy.watchdog.poll at "poll: 300ms", not at the block's first
// key). Elements expanded from one range share one Fields. A nil Fields
// knows no key.
type Fields map[string]Pos

// At returns the position of key's value, or fallback when key was not
// written (a default, a preset or portDefaults the element did not set).
func (fs Fields) At(key string, fallback Pos) Pos {
	if p, ok := fs[key]; ok && p.IsValid() {
		return p
	}
	return fallback
}

// FieldPos returns the position of the value a field path names, as errors
// and check findings spell paths (policy.classes[roce].ecn.max,
// inventory.switches[leaf1].ports[ethernet-1/1].speed, inventory.links[3]),
// or, when that value was not written (a default or a preset), the position
// of the nearest enclosing element that was. ok is false when the path
// names nothing of f.
func (f *Fabric) FieldPos(path string) (Pos, bool) {
	segs := splitPath(path)
	if len(segs) == 0 {
		return Pos{}, false
	}
	// at is the deepest position found so far; fs the keys of that element.
	at, fs := f.Pos, Fields(nil)
	key := func(k string) bool {
		if p, ok := fs[k]; ok && p.IsValid() {
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
			if found := key(name); name == "ecn" && cl.ECN != nil && (found || cl.Fields == nil) {
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
			if key(name) && name == "lossy" && f.Validation.Lossy.Fields != nil {
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
func splitPath(path string) []pathSeg {
	var out []pathSeg
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
