package yangcheck

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
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

// FillDefaults adds to v, the decoded JSON_IETF value at data path p, every
// config leaf the schema gives a default (its own or its type's) that v
// lacks, in v's containers and list entries and in the non-presence
// containers below them (RFC 7950 7.6.1: a leaf with a default takes it
// whenever its parent exists; a non-presence container exists whenever its
// parent does). Leaves inside choice cases are left alone (their default
// applies only to the active case), as are state nodes. Member names are
// matched with or without module prefixes; added members get the local
// name, in RFC 7951 form (defaultValue). Unlike Defaults (what a target
// reports), it creates the missing non-presence containers and uses type
// defaults too, so that two trees compare equal whatever the target left
// out. v is changed in place; a path the schema does not know is an error.
func (s *Schema) FillDefaults(p *gnmipb.Path, v any) error {
	e, err := s.entryAt(p)
	if err != nil {
		return err
	}
	s.fill(e, v)
	return nil
}

// entryAt resolves a gNMI data path (no origin or "openconfig" prefers the
// openconfig-* module at the top, as the validator does).
func (s *Schema) entryAt(p *gnmipb.Path) (*yang.Entry, error) {
	c := &checker{s: s}
	var e *yang.Entry
	for i, pe := range p.GetElem() {
		mod, local := splitQName(pe.GetName())
		if i == 0 {
			var matches []*yang.Entry
			for _, cand := range s.top[local] {
				if mod == "" || s.module(cand) == mod {
					matches = append(matches, cand)
				}
			}
			if len(matches) > 1 && (p.GetOrigin() == "" || p.GetOrigin() == "openconfig") {
				var oc []*yang.Entry
				for _, m := range matches {
					if strings.HasPrefix(s.module(m), "openconfig-") {
						oc = append(oc, m)
					}
				}
				matches = oc
			}
			if len(matches) != 1 {
				return nil, fmt.Errorf("fill defaults: %s: top-level node %q not found once in the schema", PathString(p), pe.GetName())
			}
			e = matches[0]
			continue
		}
		next, _ := c.child(e, local)
		if next == nil {
			return nil, fmt.Errorf("fill defaults: %s: %q not found in the schema", PathString(p), pe.GetName())
		}
		e = next
	}
	if e == nil {
		return nil, fmt.Errorf("fill defaults: empty path")
	}
	return e, nil
}

// fill adds defaults to v, the value of e (a list value, a list entry or a
// container).
func (s *Schema) fill(e *yang.Entry, v any) {
	switch x := v.(type) {
	case []any:
		if e.IsList() {
			for _, entry := range x {
				s.fill(e, entry)
			}
		}
	case map[string]any:
		if e.IsLeaf() || e.IsLeafList() {
			return
		}
		s.fillObject(e, x)
	}
}

func (s *Schema) fillObject(e *yang.Entry, obj map[string]any) {
	// Members are looked up by local name, and by qualified name only
	// when obj has one (a tree with prefixes stripped has none), which
	// is found out at the first miss: a miss would scan obj each time.
	qualified := 0 // unknown, 1 yes, -1 no
	for _, k := range fillKids(e) {
		ch := k.e
		val, ok := obj[ch.Name]
		if !ok && qualified == 0 {
			qualified = -1
			for name := range obj {
				if strings.IndexByte(name, ':') >= 0 {
					qualified = 1
					break
				}
			}
		}
		if !ok && qualified > 0 {
			val, ok = lookupMember(obj, ch.Name)
		}
		switch {
		case ok:
			s.fill(ch, val)
		case k.leaf:
			obj[ch.Name] = k.def
		case k.sub:
			sub := map[string]any{}
			s.fillObject(ch, sub)
			obj[ch.Name] = sub
		}
	}
}

var fillKidsCache sync.Map // *yang.Entry -> []fillKid

// fillKid is a child of a node that fillObject may add something at or
// below, with what it adds when the child is missing, worked out once.
type fillKid struct {
	e *yang.Entry
	// leaf: a leaf with a default; def is its value in RFC 7951 form (a
	// scalar, shared by every tree it is filled into).
	leaf bool
	def  any
	// sub: a non-presence container with a default below it, created
	// when missing.
	sub bool
}

// fillKids are the children of e that fillObject may add something at or
// below (config, not choices or cases, with a leaf default at or below
// them through containers and lists): the others it need not look at.
func fillKids(e *yang.Entry) []fillKid {
	if v, ok := fillKidsCache.Load(e); ok {
		return v.([]fillKid)
	}
	var out []fillKid
	for _, ch := range sortedDir(e) {
		if ch.ReadOnly() || ch.IsChoice() || ch.IsCase() {
			continue
		}
		if ch.IsLeaf() {
			if d, ok := ch.SingleDefaultValue(); ok {
				out = append(out, fillKid{e: ch, leaf: true, def: defaultValue(ch.Type, d)})
			}
			continue
		}
		if (ch.IsContainer() || ch.IsList()) && len(fillKids(ch)) > 0 {
			out = append(out, fillKid{e: ch, sub: ch.IsContainer() && !isPresence(ch) && hasDefaults(ch)})
		}
	}
	fillKidsCache.Store(e, out)
	return out
}

func isPresence(e *yang.Entry) bool {
	c, ok := e.Node.(*yang.Container)
	return ok && c.Presence != nil
}

var hasDefaultsCache sync.Map // *yang.Entry -> bool

// hasDefaults reports whether a non-presence container holds, at any depth
// through non-presence containers, a config leaf with a default.
func hasDefaults(e *yang.Entry) bool {
	if v, ok := hasDefaultsCache.Load(e); ok {
		return v.(bool)
	}
	found := false
	for _, ch := range sortedDir(e) {
		if ch.ReadOnly() || ch.IsChoice() || ch.IsCase() {
			continue
		}
		if ch.IsLeaf() {
			if _, ok := ch.SingleDefaultValue(); ok {
				found = true
				break
			}
		}
		if ch.IsContainer() && !isPresence(ch) && hasDefaults(ch) {
			found = true
			break
		}
	}
	hasDefaultsCache.Store(e, found)
	return found
}
