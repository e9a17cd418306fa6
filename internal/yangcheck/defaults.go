package yangcheck

import (
	"encoding/json"
	"strings"

	"github.com/openconfig/goyang/pkg/yang"
)

// Defaults edits a datastore tree (the data root of a YANG origin, RFC 7951
// member names, qualified or not) the way targets differ in reporting YANG
// default values (gNMI specification 2.4.3; RFC 6243's report-all and trim
// modes):
//   - populate (trim false): every container and list entry present gets
//     the leaves with a YANG default that it lacks (e.g. openconfig-qos
//     red/uniform/config drop and enable-ecn = false);
//   - trim (trim true): leaves equal to their default are removed.
//
// Leaves inside a choice are left alone (which case holds is the data's
// business). tree is changed in place and returned.
func (s *Schema) Defaults(tree map[string]any, trim bool) map[string]any {
	for k, v := range tree {
		_, local := splitQName(k)
		for _, e := range s.top[local] {
			s.defaults(e, v, trim)
		}
	}
	return tree
}

func (s *Schema) defaults(e *yang.Entry, v any, trim bool) {
	switch {
	case e.IsList():
		list, _ := v.([]any)
		for _, it := range list {
			if m, ok := it.(map[string]any); ok {
				s.object(e, m, trim)
			}
		}
	case e.IsContainer():
		if m, ok := v.(map[string]any); ok {
			s.object(e, m, trim)
		}
	}
}

func (s *Schema) object(e *yang.Entry, obj map[string]any, trim bool) {
	keys := map[string]bool{}
	if e.IsList() {
		for _, k := range strings.Fields(e.Key) {
			keys[k] = true
		}
	}
	for _, ch := range e.Dir {
		if ch.IsChoice() || ch.IsCase() {
			continue
		}
		name, v, ok := memberOf(obj, ch.Name)
		if ch.IsLeaf() {
			if len(ch.Default) != 1 || keys[ch.Name] {
				continue
			}
			def := defaultValue(ch.Type, ch.Default[0])
			switch {
			case !trim && !ok:
				obj[ch.Name] = def
			case trim && ok && scalarString(v) == scalarString(def):
				delete(obj, name)
			}
			continue
		}
		if ok {
			s.defaults(ch, v, trim)
		}
	}
}

// memberOf finds member local of obj, qualified or not.
func memberOf(obj map[string]any, local string) (string, any, bool) {
	if v, ok := obj[local]; ok {
		return local, v, true
	}
	for k, v := range obj {
		if _, l := splitQName(k); l == local {
			return k, v, true
		}
	}
	return "", nil, false
}

// defaultValue is a YANG default in RFC 7951 JSON: booleans as booleans,
// 8-32 bit integers as numbers, everything else (64-bit integers,
// decimal64, enumerations, identities, strings) as strings.
func defaultValue(t *yang.YangType, def string) any {
	if t == nil {
		return def
	}
	switch t.Kind {
	case yang.Ybool:
		return def == "true"
	case yang.Yint8, yang.Yint16, yang.Yint32, yang.Yuint8, yang.Yuint16, yang.Yuint32:
		return json.Number(def)
	}
	return def
}

// DefaultsAt is Defaults for the value v of the node at path elems (names
// qualified or not, keys ignored): populate (trim false) or trim the YANG
// defaults below it. v is changed in place and returned; a path the schema
// does not know leaves v as it is.
func (s *Schema) DefaultsAt(elems []string, v any, trim bool) any {
	if len(elems) == 0 {
		if m, ok := v.(map[string]any); ok {
			s.Defaults(m, trim)
		}
		return v
	}
	_, local := splitQName(elems[0])
	for _, e := range s.top[local] {
		cur := e
		for _, n := range elems[1:] {
			_, l := splitQName(n)
			cur = dataChild(cur, l)
			if cur == nil {
				break
			}
		}
		if cur == nil {
			continue
		}
		if cur.IsList() {
			// a path to one list entry (keys given) holds the entry itself
			if m, ok := v.(map[string]any); ok {
				s.object(cur, m, trim)
				return v
			}
		}
		s.defaults(cur, v, trim)
		return v
	}
	return v
}

// dataChild is the data child local of e, looking through choices and cases.
func dataChild(e *yang.Entry, local string) *yang.Entry {
	if ch := e.Dir[local]; ch != nil && !ch.IsChoice() && !ch.IsCase() {
		return ch
	}
	for _, ch := range e.Dir {
		if ch.IsChoice() || ch.IsCase() {
			if f := dataChild(ch, local); f != nil {
				return f
			}
		}
	}
	return nil
}
