package yangcheck

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/openconfig/goyang/pkg/yang"
)

// schemaDiff lists how two schemas differ in the data nodes under the
// given top-level nodes ("qos", "interface", "sonic-port", ...; every
// top-level node when none): nodes one has and the other lacks, and, for
// nodes both have, what a device checks that differs (kind, config,
// mandatory, defaults, presence, keys, unique, element bounds, the type
// with its ranges, lengths, patterns, enums and leafref path, must with its
// error-message, when). Nodes whose if-feature is false under feats (nil:
// every released feature; a release's absent features are off) are left
// out on either side. Descriptions, revisions and the
// layout of the module text do not count. It is how a derived release
// schema (ReleaseSchema) is held to the release's own modules.
func schemaDiff(a, b *Schema, feats map[string]bool, tops ...string) []string {
	var out []string
	va := &dsValidator{s: a, opts: DatastoreOptions{Features: feats}}
	vb := &dsValidator{s: b, opts: DatastoreOptions{Features: feats}}
	names := tops
	if len(names) == 0 {
		seen := map[string]bool{}
		for n := range a.top {
			seen[n] = true
		}
		for n := range b.top {
			seen[n] = true
		}
		for n := range seen {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	for _, n := range names {
		ea, eb := entryAt(a, n), entryAt(b, n)
		switch {
		case ea == nil && eb == nil:
			out = append(out, "/"+n+": in neither schema")
		case ea == nil:
			out = append(out, "/"+n+": only in the second")
		case eb == nil:
			out = append(out, "/"+n+": only in the first")
		default:
			out = diffEntry(va, vb, ea, eb, "/"+n, out)
		}
	}
	return out
}

// entryAt is the schema node at a path of local names ("sonic-port/PORT").
func entryAt(s *Schema, p string) *yang.Entry {
	steps := strings.Split(p, "/")
	e := s.topEntry(steps[0])
	for _, st := range steps[1:] {
		if e == nil {
			return nil
		}
		e = e.Dir[st]
	}
	return e
}

func diffEntry(a, b *dsValidator, ea, eb *yang.Entry, p string, out []string) []string {
	sa, sb := entrySig(a, ea), entrySig(b, eb)
	for _, k := range sigKeys(sa, sb) {
		if sa[k] != sb[k] {
			out = append(out, fmt.Sprintf("%s: %s %q -> %q", p, k, sa[k], sb[k]))
		}
	}
	seen := map[string]bool{}
	kids := func(v *dsValidator, e *yang.Entry) map[string]*yang.Entry {
		m := map[string]*yang.Entry{}
		for n, c := range e.Dir {
			if c.ReadOnly() || !v.featuresOn(c) {
				continue // state, or not on this release
			}
			m[n] = c
			seen[n] = true
		}
		return m
	}
	da, db := kids(a, ea), kids(b, eb)
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		ca, cb := da[n], db[n]
		switch {
		case cb == nil:
			out = append(out, p+"/"+n+": only in the first")
		case ca == nil:
			out = append(out, p+"/"+n+": only in the second")
		default:
			out = diffEntry(a, b, ca, cb, p+"/"+n, out)
		}
	}
	return out
}

func sigKeys(a, b map[string]string) []string {
	seen := map[string]bool{}
	for k := range a {
		seen[k] = true
	}
	for k := range b {
		seen[k] = true
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// entrySig is what a device checks of one schema node, as strings.
func entrySig(v *dsValidator, e *yang.Entry) map[string]string {
	s := v.s
	m := map[string]string{}
	switch {
	case e.IsLeafList():
		m["kind"] = "leaf-list"
	case e.IsLeaf():
		m["kind"] = "leaf"
	case e.IsList():
		m["kind"] = "list"
	case e.IsChoice():
		m["kind"] = "choice"
	case e.IsCase():
		m["kind"] = "case"
	default:
		m["kind"] = "container"
	}
	if e.Config != yang.TSUnset {
		m["config"] = e.Config.String()
	}
	if e.Mandatory != yang.TSUnset {
		m["mandatory"] = e.Mandatory.String()
	}
	if len(e.Default) > 0 {
		m["default"] = strings.Join(e.Default, ",")
	}
	if e.Key != "" {
		m["key"] = e.Key
	}
	if e.ListAttr != nil {
		if e.ListAttr.MinElements != 0 {
			m["min-elements"] = fmt.Sprint(e.ListAttr.MinElements)
		}
		if e.ListAttr.MaxElements != ^uint64(0) {
			m["max-elements"] = fmt.Sprint(e.ListAttr.MaxElements)
		}
		if e.ListAttr.OrderedBy != nil {
			m["ordered-by"] = e.ListAttr.OrderedBy.Name
		}
	}
	switch x := e.Node.(type) {
	case *yang.Container:
		if x.Presence != nil {
			m["presence"] = "yes"
		}
	case *yang.List:
		var us []string
		for _, u := range x.Unique {
			us = append(us, u.Name)
		}
		if len(us) > 0 {
			sort.Strings(us)
			m["unique"] = strings.Join(us, "; ")
		}
	}
	if e.Type != nil {
		m["type"] = typeSig(e.Type)
		if off := enumsOff(v, e); len(off) > 0 && e.Type.Enum != nil {
			var on []string
			for _, n := range e.Type.Enum.Names() {
				if !slices.Contains(off, n) {
					on = append(on, n)
				}
			}
			m["type"] = strings.Replace(m["type"], strings.Join(e.Type.Enum.Names(), ","), strings.Join(on, ","), 1)
		}
	}
	c := s.condsOf(e)
	var musts []string
	for _, mu := range c.musts {
		t := mu.Name
		if mu.ErrorMessage != nil {
			t += " [" + mu.ErrorMessage.Name + "]"
		}
		for _, x := range mu.Extensions {
			if strings.HasSuffix(x.Keyword, ":if-feature") {
				t += " {if-feature " + x.Argument + "}"
			}
		}
		musts = append(musts, t)
	}
	if len(musts) > 0 {
		sort.Strings(musts)
		m["must"] = strings.Join(musts, " && ")
	}
	var ws []string
	for _, w := range c.whens {
		ws = append(ws, w.expr)
	}
	if len(ws) > 0 {
		sort.Strings(ws)
		m["when"] = strings.Join(ws, " && ")
	}
	return m
}

// typeSig renders the checks of a type.
func typeSig(t *yang.YangType) string {
	var b strings.Builder
	b.WriteString(t.Kind.String())
	if len(t.Range) > 0 {
		b.WriteString(" range " + t.Range.String())
	}
	if len(t.Length) > 0 {
		b.WriteString(" length " + t.Length.String())
	}
	if len(t.Pattern) > 0 {
		b.WriteString(" pattern " + strings.Join(t.Pattern, "|"))
	}
	if len(t.POSIXPattern) > 0 {
		b.WriteString(" posix-pattern " + strings.Join(t.POSIXPattern, "|"))
	}
	if t.Enum != nil {
		b.WriteString(" enum " + strings.Join(t.Enum.Names(), ","))
	}
	if t.Bit != nil {
		b.WriteString(" bits " + strings.Join(t.Bit.Names(), ","))
	}
	if t.Path != "" {
		b.WriteString(" path " + t.Path)
	}
	if t.OptionalInstance {
		b.WriteString(" require-instance false")
	}
	if t.FractionDigits != 0 {
		fmt.Fprintf(&b, " fraction-digits %d", t.FractionDigits)
	}
	if t.IdentityBase != nil {
		b.WriteString(" base " + t.IdentityBase.Name)
	}
	if len(t.Type) > 0 {
		var ms []string
		for _, u := range t.Type {
			ms = append(ms, typeSig(u))
		}
		b.WriteString(" union(" + strings.Join(ms, " | ") + ")")
	}
	return b.String()
}

// enumsOff are the enum values of a leaf's own enumeration type whose
// if-feature is false (see dsValidator.enumFeature).
func enumsOff(v *dsValidator, e *yang.Entry) []string {
	if e.Node == nil || e.Node.Statement() == nil {
		return nil
	}
	var off []string
	for _, st := range e.Node.Statement().SubStatements() {
		if st.Keyword != "type" {
			continue
		}
		for _, en := range st.SubStatements() {
			for _, f := range en.SubStatements() {
				if en.Keyword == "enum" && f.Keyword == "if-feature" && !v.featureOn(f.Argument, e.Node) {
					off = append(off, en.Argument)
				}
			}
		}
	}
	return off
}
