package yangcheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/openconfig/goyang/pkg/yang"
)

// Violation is one way a payload breaks the schema.
type Violation struct {
	// Path is the data path of the offending member, module-qualified where
	// the payload qualified it, with list keys, e.g.
	// /srl_nokia-qos:qos/interfaces/interface[interface-id=ethernet-1/1]/pfc/pfc-enable.
	Path string
	Msg  string
	// Rule is what ValidateDatastore found broken (RuleSchema, RuleLeafref,
	// RuleMust, RuleWhen, RuleMandatory, RuleFeature); "" from Validate.
	Rule string
	// AppTag is the error-app-tag of a violated must, if it has one.
	AppTag string
}

func (v Violation) String() string { return v.Path + ": " + v.Msg }

// Violations is every violation of one payload; as an error it lists them all.
type Violations []Violation

func (vs Violations) Error() string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.String()
	}
	return fmt.Sprintf("%d YANG violation(s): %s", len(vs), strings.Join(parts, "; "))
}

// Origins the validator understands.
const (
	OriginSONiCDB = "sonic-db"
	OriginCLI     = "cli"
)

// CheckUpdate validates one gNMI update (JSON_IETF or JSON value) and returns
// nil or Violations.
func (s *Schema) CheckUpdate(prefix *gnmipb.Path, u *gnmipb.Update) error {
	if vs := s.ValidateUpdate(prefix, u); len(vs) > 0 {
		return vs
	}
	return nil
}

// ValidateUpdate validates one gNMI update under prefix (which may be nil).
func (s *Schema) ValidateUpdate(prefix *gnmipb.Path, u *gnmipb.Update) Violations {
	p := joinPath(prefix, u.GetPath())
	var val []byte
	switch v := u.GetVal().GetValue().(type) {
	case *gnmipb.TypedValue_JsonIetfVal:
		val = v.JsonIetfVal
	case *gnmipb.TypedValue_JsonVal:
		val = v.JsonVal
	default:
		return Violations{{Path: PathString(p), Msg: fmt.Sprintf("value is %T, want json_ietf_val", u.GetVal().GetValue())}}
	}
	return s.Validate(p, val)
}

// Validate checks the JSON_IETF value val for the node at gNMI path p and
// returns every violation, sorted by path.
func (s *Schema) Validate(p *gnmipb.Path, val []byte) Violations {
	dec := json.NewDecoder(bytes.NewReader(val))
	dec.UseNumber()
	var v any
	c := &checker{s: s}
	ps := PathString(p)
	if err := dec.Decode(&v); err != nil {
		return Violations{{Path: ps, Msg: fmt.Sprintf("invalid JSON: %v", err)}}
	}
	if dec.More() {
		return Violations{{Path: ps, Msg: "invalid JSON: trailing data after the value"}}
	}
	switch p.GetOrigin() {
	case OriginCLI:
		c.addf(ps, "origin %q is CLI text, not YANG-modelled", OriginCLI)
	case OriginSONiCDB:
		c.sonic(p, v)
	default:
		c.path(p, v)
	}
	sort.SliceStable(c.out, func(i, j int) bool { return c.out[i].Path < c.out[j].Path })
	return c.out
}

func joinPath(prefix, p *gnmipb.Path) *gnmipb.Path {
	if prefix == nil {
		return p
	}
	out := &gnmipb.Path{Origin: prefix.GetOrigin(), Target: prefix.GetTarget()}
	if p.GetOrigin() != "" {
		out.Origin = p.GetOrigin()
	}
	out.Elem = append(append(out.Elem, prefix.GetElem()...), p.GetElem()...)
	return out
}

// PathString renders p as origin:/a/b[k=v] (keys sorted).
func PathString(p *gnmipb.Path) string {
	var b strings.Builder
	if p.GetOrigin() != "" {
		b.WriteString(p.GetOrigin())
		b.WriteString(":")
	}
	if len(p.GetElem()) == 0 {
		b.WriteString("/")
	}
	for _, e := range p.GetElem() {
		b.WriteString("/")
		b.WriteString(e.GetName())
		writeKeys(&b, e.GetKey())
	}
	return b.String()
}

func writeKeys(b *strings.Builder, keys map[string]string) {
	ks := make([]string, 0, len(keys))
	for k := range keys {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for _, k := range ks {
		fmt.Fprintf(b, "[%s=%s]", k, keys[k])
	}
}

type checker struct {
	s   *Schema
	out Violations
	// strs: CONFIG_DB encoding, every leaf value is a string.
	strs bool
	// ds: a whole datastore (ValidateDatastore): member names may be
	// unqualified (a twin keeps them so), and if-feature and mandatory
	// nodes are left to the datastore checks.
	ds bool
}

func (c *checker) addf(path, format string, a ...any) {
	c.out = append(c.out, Violation{Path: path, Msg: fmt.Sprintf(format, a...)})
}

// path resolves a YANG data path and validates v as the node's value.
func (c *checker) path(p *gnmipb.Path, v any) {
	elems := p.GetElem()
	if len(elems) == 0 {
		obj, ok := v.(map[string]any)
		if !ok {
			c.addf("/", "value at the data root must be a JSON object, got %s", jsonKind(v))
			return
		}
		c.rootMembers(obj)
		return
	}
	var e *yang.Entry
	path := ""
	for i, pe := range elems {
		mod, local := splitQName(pe.GetName())
		path += "/" + pe.GetName()
		var next *yang.Entry
		if i == 0 {
			var matches []*yang.Entry
			for _, cand := range c.s.top[local] {
				if mod == "" || c.s.module(cand) == mod {
					matches = append(matches, cand)
				}
			}
			if len(matches) > 1 && (p.GetOrigin() == "" || p.GetOrigin() == "openconfig") {
				// gNMI: no origin means origin "openconfig" (gNMI
				// specification 2.2.2.1), e.g. /interfaces is
				// openconfig-interfaces, not ietf-interfaces.
				var oc []*yang.Entry
				for _, m := range matches {
					if strings.HasPrefix(c.s.module(m), "openconfig-") {
						oc = append(oc, m)
					}
				}
				matches = oc
			}
			if len(matches) > 1 {
				c.addf(path, "ambiguous top-level node: qualify it with a module name")
				return
			}
			if len(matches) == 1 {
				next = matches[0]
			}
		} else {
			next, _ = c.child(e, local)
			if next != nil && mod != "" && c.s.module(next) != mod {
				c.addf(path, "module %q does not define %q here (it is %s)", mod, local, c.s.module(next))
				return
			}
		}
		if next == nil {
			c.addf(path, "path element %q not found in the schema", pe.GetName())
			return
		}
		e = next
		if next.ReadOnly() {
			c.addf(path, "config false (state) node cannot be set")
			return
		}
		if len(pe.GetKey()) > 0 {
			if !e.IsList() {
				c.addf(path, "keys given but %q is not a list", local)
				return
			}
			kp := c.pathKeys(e, pe.GetKey(), path)
			var b strings.Builder
			writeKeys(&b, pe.GetKey())
			path += b.String()
			if i < len(elems)-1 {
				continue
			}
			// The value is the list entry.
			obj, ok := v.(map[string]any)
			if !ok {
				c.addf(path, "list entry value must be a JSON object, got %s", jsonKind(v))
				return
			}
			c.listEntry(e, obj, path, kp)
			return
		}
		if e.IsList() && i < len(elems)-1 {
			c.addf(path, "list %q needs its keys [%s] in the path", local, e.Key)
			return
		}
	}
	c.node(e, v, path, true)
}

// pathKeys validates the keys of a path element and returns them.
func (c *checker) pathKeys(e *yang.Entry, keys map[string]string, path string) map[string]string {
	want := strings.Fields(e.Key)
	for _, k := range want {
		s, ok := keys[k]
		if !ok {
			c.addf(path, "missing key %q of list %q", k, e.Name)
			continue
		}
		if ke := e.Dir[k]; ke != nil {
			if msg := c.value(ke, ke.Type, s, true); msg != "" {
				c.addf(path+"["+k+"="+s+"]", "key %s", msg)
			}
		}
	}
	for k := range keys {
		if !contains(want, k) {
			c.addf(path, "%q is not a key of list %q (keys: %s)", k, e.Name, e.Key)
		}
	}
	return keys
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func splitQName(n string) (mod, local string) {
	if i := strings.IndexByte(n, ':'); i >= 0 {
		return n[:i], n[i+1:]
	}
	return "", n
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// rootMembers validates the members of a value at the data root: every one
// must be module-qualified (RFC 7951 section 4).
func (c *checker) rootMembers(obj map[string]any) {
	for _, name := range sortedKeys(obj) {
		path := "/" + name
		mod, local := splitQName(name)
		if mod == "" && !c.ds {
			c.addf(path, "top-level member must be module-qualified (module:%s)", local)
			continue
		}
		var e *yang.Entry
		for _, cand := range c.s.top[local] {
			if c.s.module(cand) == mod || (mod == "" && (e == nil || strings.HasPrefix(c.s.module(cand), "openconfig-"))) {
				e = cand
			}
		}
		if e == nil && mod == "" {
			c.addf(path, "unknown top-level node %q", local)
			continue
		}
		if e == nil {
			if _, ok := c.s.mods[mod]; !ok {
				c.addf(path, "unknown module %q", mod)
			} else {
				c.addf(path, "module %q has no top-level node %q", mod, local)
			}
			continue
		}
		if e.ReadOnly() {
			c.addf(path, "config false (state) node cannot be set")
			continue
		}
		c.node(e, obj[name], path, false)
	}
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// child finds the data child local of e, looking through choice and case
// nodes; cases are the case entries crossed on the way (outermost first).
func (c *checker) child(e *yang.Entry, local string) (*yang.Entry, []*yang.Entry) {
	if ch := e.Dir[local]; ch != nil && !ch.IsChoice() && !ch.IsCase() {
		return ch, nil
	}
	for _, ch := range sortedDir(e) {
		if !ch.IsChoice() && !ch.IsCase() {
			continue
		}
		if found, cases := c.child(ch, local); found != nil {
			if ch.IsCase() {
				cases = append([]*yang.Entry{ch}, cases...)
			}
			return found, cases
		}
	}
	return nil, nil
}

// node validates v as the value of schema node e. value marks the value of
// the gNMI path itself, whose direct members may use either name form.
func (c *checker) node(e *yang.Entry, v any, path string, value bool) {
	switch {
	case e.IsLeaf():
		if msg := c.value(e, e.Type, v, c.strs); msg != "" {
			c.addf(path, "%s", msg)
		}
	case e.IsLeafList():
		arr, ok := v.([]any)
		if !ok {
			c.addf(path, "leaf-list value must be a JSON array, got %s", jsonKind(v))
			return
		}
		seen := map[string]bool{}
		for i, x := range arr {
			if msg := c.value(e, e.Type, x, c.strs); msg != "" {
				c.addf(fmt.Sprintf("%s[%d]", path, i), "%s", msg)
			}
			// RFC 7950 section 7.7: configuration leaf-list values are unique.
			if k := scalarString(x); seen[k] {
				c.addf(fmt.Sprintf("%s[%d]", path, i), "duplicate leaf-list value %s", k)
			} else {
				seen[k] = true
			}
		}
	case e.IsList():
		arr, ok := v.([]any)
		if !ok {
			c.addf(path, "list value must be a JSON array of entries, got %s", jsonKind(v))
			return
		}
		seen := map[string]bool{}
		for i, x := range arr {
			obj, ok := x.(map[string]any)
			if !ok {
				c.addf(fmt.Sprintf("%s[%d]", path, i), "list entry must be a JSON object, got %s", jsonKind(x))
				continue
			}
			k := c.listEntry(e, obj, path, nil)
			if k != "" && seen[k] {
				c.addf(path+k, "duplicate list entry")
			}
			seen[k] = true
		}
	default:
		obj, ok := v.(map[string]any)
		if !ok {
			c.addf(path, "container value must be a JSON object, got %s", jsonKind(v))
			return
		}
		c.members(e, obj, path, value)
	}
}

// listEntry validates one list entry and returns its key suffix ([k=v]...).
// pathKeys are the keys the gNMI path gave for it (nil when none).
func (c *checker) listEntry(e *yang.Entry, obj map[string]any, path string, pathKeys map[string]string) string {
	var b strings.Builder
	ok := true
	for _, k := range strings.Fields(e.Key) {
		v, has := lookupMember(obj, k)
		pk, inPath := pathKeys[k]
		switch {
		case has && inPath:
			if s := scalarString(v); s != pk {
				c.addf(path+"/"+k, "key %q is %s in the value but %q in the path", k, s, pk)
			}
			fmt.Fprintf(&b, "[%s=%s]", k, pk)
		case inPath:
			fmt.Fprintf(&b, "[%s=%s]", k, pk)
		case has:
			fmt.Fprintf(&b, "[%s=%s]", k, scalarString(v))
		default:
			ok = false
			fmt.Fprintf(&b, "[%s=?]", k)
		}
	}
	key := b.String()
	if !ok {
		for _, k := range strings.Fields(e.Key) {
			if _, has := lookupMember(obj, k); !has && pathKeys[k] == "" {
				c.addf(path+key, "list entry is missing key %q", k)
			}
		}
	}
	c.keyRefs(e, obj, path+key)
	if pathKeys != nil {
		// the entry itself is the value of the path
		c.members(e, obj, path, true)
		return key
	}
	c.members(e, obj, path+key, false)
	return key
}

func lookupMember(obj map[string]any, local string) (any, bool) {
	if v, ok := obj[local]; ok {
		return v, true
	}
	for k, v := range obj {
		if _, l := splitQName(k); l == local {
			return v, true
		}
	}
	return nil, false
}

func scalarString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		if x {
			return "true"
		}
		return "false"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// members validates the members of a container or list entry e.
func (c *checker) members(e *yang.Entry, obj map[string]any, path string, value bool) {
	parentMod := c.s.module(e)
	chosen := map[*yang.Entry]*yang.Entry{} // choice -> case used
	for _, name := range sortedKeys(obj) {
		mod, local := splitQName(name)
		cpath := path + "/" + name
		ch, cases := c.child(e, local)
		if ch == nil {
			c.addf(cpath, "unknown member %q of %s", local, e.Name)
			continue
		}
		chMod := c.s.module(ch)
		switch {
		case mod != "" && mod != chMod:
			c.addf(cpath, "wrong module qualifier %q: %s is defined by %s", mod, local, chMod)
			continue
		case mod == "" && chMod != parentMod && !c.ds:
			// RFC 7951 section 4; a redundant qualifier is accepted, as
			// devices do.
			c.addf(cpath, "member must be module-qualified as %s:%s (its module differs from its parent's)", chMod, local)
		}
		if f := unreleasedFeature(ch); f != "" && !c.ds {
			c.addf(cpath, "%s exists only in unreleased builds (if-feature %s): a released device rejects it as unknown", local, f)
			continue
		}
		if f := c.s.absentFeature(ch); f != "" && !c.ds {
			c.addf(cpath, "%s is not in release %s (if-feature %s: a feature of later releases)", local, c.s.release, f)
			continue
		}
		if ch.ReadOnly() {
			c.addf(cpath, "config false (state) node cannot be set")
			continue
		}
		for _, cs := range cases {
			choice := cs.Parent
			if prev, ok := chosen[choice]; ok && prev != cs {
				c.addf(cpath, "choice %q: case %q conflicts with case %q already used", choice.Name, cs.Name, prev.Name)
			}
			chosen[choice] = cs
		}
		c.node(ch, obj[name], cpath, false)
	}
	if !c.ds {
		c.mandatory(e, obj, path)
	}
}

// mandatory reports mandatory leaves of e (not under a choice, a when or
// an if-feature) that obj lacks. A replace or a new entry without them
// is rejected by the device.
func (c *checker) mandatory(e *yang.Entry, obj map[string]any, path string) {
	for _, ch := range sortedDir(e) {
		if !ch.IsLeaf() || ch.Mandatory != yang.TSTrue || ch.ReadOnly() {
			continue
		}
		if _, hasWhen := ch.GetWhenXPath(); hasWhen {
			continue
		}
		// if-feature: the leaf may not exist on this device (goyang does
		// not evaluate features), e.g. SR Linux ecn-dscp-policy is
		// mandatory on J2 (7250) only.
		if l, ok := ch.Node.(*yang.Leaf); ok && len(l.IfFeature) > 0 {
			continue
		}
		if _, ok := lookupMember(obj, ch.Name); !ok {
			c.addf(path+"/"+ch.Name, "mandatory leaf %q is missing", ch.Name)
		}
	}
}

// keyRefs checks OpenConfig-style keys: a key leaf that is a leafref into the
// entry itself (name -> ../config/name) must equal the leaf it points to when
// the payload carries both (the device enforces the reference).
func (c *checker) keyRefs(e *yang.Entry, obj map[string]any, path string) {
	for _, k := range strings.Fields(e.Key) {
		ke := e.Dir[k]
		if ke == nil || ke.Type == nil || ke.Type.Kind != yang.Yleafref {
			continue
		}
		kv, ok := lookupMember(obj, k)
		if !ok {
			continue
		}
		rel := strings.TrimSpace(predicateRE.ReplaceAllString(ke.Type.Path, ""))
		if !strings.HasPrefix(rel, "../") {
			continue
		}
		var cur any = obj
		parts := strings.Split(strings.TrimPrefix(rel, "../"), "/")
		for i, part := range parts {
			_, parts[i] = splitQName(part)
		}
		for _, part := range parts {
			m, isObj := cur.(map[string]any)
			if !isObj {
				cur = nil
				break
			}
			cur, ok = lookupMember(m, part)
			if !ok {
				cur = nil
				break
			}
		}
		if cur == nil {
			continue
		}
		if a, b := scalarString(kv), scalarString(cur); a != b {
			c.addf(path+"/"+strings.Join(parts, "/"), "is %q but the list key %s it must equal is %q", b, k, a)
		}
	}
}

// unreleasedFeatures are features no released software has. SR Linux gates
// the leaves of its development stream with future-0-0 ("only true in 0.0
// stream, false in other streams"); goyang ignores if-feature, so without
// this such a leaf would pass here and be rejected by every real device.
var unreleasedFeatures = map[string]bool{"future-0-0": true}

// absentFeature returns the if-feature of e's own statement that needs a
// feature the schema's release does not have (Release.AbsentFeatures), ""
// when none does. Only expressions that are one name or names joined by
// "and" are read: they need every name.
func (s *Schema) absentFeature(e *yang.Entry) string {
	if len(s.absent) == 0 {
		return ""
	}
	for _, f := range s.condsOf(e).features {
		toks := strings.Fields(featTokens.Replace(f.expr))
		if slices.ContainsFunc(toks, func(t string) bool { return t == "or" || t == "not" || t == "(" }) {
			continue
		}
		pm := s.prefixesOf(f.node)
		for _, t := range toks {
			if t == "and" {
				continue
			}
			p, name, ok := strings.Cut(t, ":")
			mod := pm[""]
			if ok {
				if mod = pm[p]; mod == "" {
					mod = p
				}
			} else {
				name = t
			}
			if s.absent[mod+":"+name] {
				return f.expr
			}
		}
	}
	return ""
}

// unreleasedFeature returns the if-feature of e's own statement that names an
// unreleased feature, "" when none does.
func unreleasedFeature(e *yang.Entry) string {
	var fs []*yang.Value
	switch n := e.Node.(type) {
	case *yang.Leaf:
		fs = n.IfFeature
	case *yang.LeafList:
		fs = n.IfFeature
	case *yang.Container:
		fs = n.IfFeature
	case *yang.List:
		fs = n.IfFeature
	}
	for _, f := range fs {
		_, name := splitQName(f.Name)
		if unreleasedFeatures[name] {
			return f.Name
		}
	}
	return ""
}
