package yangcheck

import (
	"fmt"
	"strings"
	"sync"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/openconfig/goyang/pkg/yang"
)

// FillDefaults adds to v, the decoded JSON_IETF value at data path p, every
// config leaf the schema gives a default (its own or its type's) that v
// lacks, in v's containers and list entries and in the non-presence
// containers below them (RFC 7950 7.6.1: a leaf with a default takes it
// whenever its parent exists; a non-presence container exists whenever its
// parent does). Leaves inside choice cases are left alone (their default
// applies only to the active case), as are state nodes. Member names are
// matched with or without module prefixes; added members get the local
// name. Boolean defaults are added as JSON booleans, every other default as
// its YANG string form (a comparison in canonical form treats "0" and 0
// alike). v is changed in place; a path the schema does not know is an
// error.
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
	for _, ch := range sortedDir(e) {
		if ch.ReadOnly() || ch.IsChoice() || ch.IsCase() {
			continue
		}
		val, ok := lookupMember(obj, ch.Name)
		switch {
		case ok:
			s.fill(ch, val)
		case ch.IsLeaf():
			if d, ok := ch.SingleDefaultValue(); ok {
				obj[ch.Name] = defaultJSON(ch, d)
			}
		case ch.IsContainer() && !isPresence(ch) && s.hasDefaults(ch):
			sub := map[string]any{}
			s.fillObject(ch, sub)
			obj[ch.Name] = sub
		}
	}
}

func isPresence(e *yang.Entry) bool {
	c, ok := e.Node.(*yang.Container)
	return ok && c.Presence != nil
}

var hasDefaultsCache sync.Map // *yang.Entry -> bool

// hasDefaults reports whether a non-presence container holds, at any depth
// through non-presence containers, a config leaf with a default.
func (s *Schema) hasDefaults(e *yang.Entry) bool {
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
		if ch.IsContainer() && !isPresence(ch) && s.hasDefaults(ch) {
			found = true
			break
		}
	}
	hasDefaultsCache.Store(e, found)
	return found
}

func defaultJSON(e *yang.Entry, d string) any {
	if e.Type != nil && e.Type.Kind == yang.Ybool {
		return d == "true"
	}
	return d
}
