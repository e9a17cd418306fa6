package yangcheck

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/antchfx/xpath"
	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/openconfig/goyang/pkg/yang"
)

// Rules a Violation of ValidateDatastore names (Violation.Rule).
const (
	RuleSchema    = "schema"     // members, types, keys, config false (Validate's checks)
	RuleLeafref   = "leafref"    // require-instance: the referenced node does not exist
	RuleMust      = "must"       // a must expression is false
	RuleWhen      = "when"       // a node exists whose when expression is false
	RuleMandatory = "mandatory"  // a mandatory leaf or choice, or min-elements, is missing
	RuleFeature   = "if-feature" // a node behind a feature the device does not have
)

// DatastoreOptions tells ValidateDatastore what device it validates for.
type DatastoreOptions struct {
	// Features is the device's feature set: "module:feature" -> enabled
	// (e.g. "srl_nokia-features:qos-pfc-xgs"). A node whose if-feature is
	// false under it is unknown to the device. nil means every feature of
	// released software is enabled: all but the unreleased ones SR Linux
	// gates its development stream with (future-0-0).
	Features map[string]bool
	// Namespace is the CONFIG_DB namespace of a sonic-db tree ("" =
	// "localhost").
	Namespace string
}

// ValidateDatastore validates one origin's whole datastore, as a device's
// management layer validates the result of a Set before committing it:
// Validate's schema checks on every node, then leafref require-instance,
// must and when (YANG XPath over tree), mandatory nodes (leaves,
// choices, min-elements; honouring when, if-feature, choice and presence)
// and if-feature against opts.Features.
//
// tree is the datastore of origin as a JSON-shaped Go value
// (map[string]any, []any for lists and leaf-lists, string, bool,
// json.Number or other numbers):
//   - origin "" / "openconfig" (and any other YANG origin): the data root,
//     RFC 7951 member names, module-qualified or not (a twin strips the
//     qualifiers);
//   - origin "sonic-db": {"CONFIG_DB": {"<namespace>": {TABLE: {KEY: {field:
//     value}}}}}, or the table map itself, mapped onto the sonic-yang
//     modules as sonic-yang-mgmt does;
//   - origin "cli" is not YANG-modelled: nil.
//
// The result is sorted by path; a must with an error-message reports the
// module's text (e.g. SR Linux's) as Msg. It is safe for concurrent use.
func (s *Schema) ValidateDatastore(origin string, tree map[string]any, opts DatastoreOptions) Violations {
	if origin == OriginCLI {
		return nil
	}
	root, c, v := s.build(origin, tree, opts)
	defer v.x.release()
	v.out = c.out
	v.walk(root)
	v.mandatory(root, nil)
	sort.SliceStable(v.out, func(i, j int) bool { return v.out[i].Path < v.out[j].Path })
	return v.out
}

// build turns a datastore into a data tree (with the schema's defaults),
// running the schema checks on the way.
func (s *Schema) build(origin string, tree map[string]any, opts DatastoreOptions) (*dnode, *checker, *dsValidator) {
	if needsNormalize(tree) {
		tree = normalize(tree).(map[string]any)
	}
	c := &checker{s: s, ds: true}
	v := &dsValidator{s: s, opts: opts, x: &xexprs{s: s, cache: map[xkey]*xpath.Expr{}}}
	root := &dnode{}
	b := &builder{s: s, c: c, v: v}
	if origin == OriginSONiCDB {
		tables := sonicTables(tree, opts.Namespace)
		c.sonic(sonicDBPath(opts.Namespace), tables)
		b.sonic(root, tables, sonicBase(opts.Namespace))
		b.defaults(root, nil)
	} else {
		c.rootMembers(tree)
		b.object(root, nil, tree, "")
	}
	for i := range c.out {
		if c.out[i].Rule == "" {
			c.out[i].Rule = RuleSchema
		}
	}
	return root, c, v
}

// needsNormalize reports whether v holds Go numbers (not json.Number).
func needsNormalize(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for _, c := range x {
			if needsNormalize(c) {
				return true
			}
		}
	case []any:
		for _, c := range x {
			if needsNormalize(c) {
				return true
			}
		}
	case int, int64, uint64, uint32, float64:
		return true
	}
	return false
}

// normalize turns Go numbers into json.Number so every leaf has one
// canonical string.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, c := range x {
			out[k] = normalize(c)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = normalize(c)
		}
		return out
	case int:
		return json.Number(strconv.Itoa(x))
	case int64:
		return json.Number(strconv.FormatInt(x, 10))
	case uint64:
		return json.Number(strconv.FormatUint(x, 10))
	case uint32:
		return json.Number(strconv.FormatUint(uint64(x), 10))
	case float64:
		return json.Number(strconv.FormatFloat(x, 'f', -1, 64))
	}
	return v
}

// dnode is a node of a data tree: the root (e == nil), a container, a list
// entry, a leaf or one leaf-list value.
type dnode struct {
	e      *yang.Entry
	name   string // local name
	path   string // data path for messages
	parent *dnode
	kids   []*dnode
	idx    int
	isLeaf bool
	val    string
	raw    any // the leaf's JSON value as given
	// dflt marks a node the schema's defaults put there (a leaf with a
	// default, or a non-presence container): the device has it too, and its
	// when being false removes it silently instead of failing.
	dflt bool
}

// where is the data path of d for messages; a node the defaults added has
// its path made only when a message needs it.
func (d *dnode) where() string {
	if d.path == "" && d.parent != nil {
		return d.parent.where() + "/" + d.name
	}
	return d.path
}

func (d *dnode) add(k *dnode) *dnode {
	k.parent = d
	k.idx = len(d.kids)
	d.kids = append(d.kids, k)
	return k
}

// builder turns a JSON datastore into dnodes; what the schema does not know
// is left out (the schema checks report it).
type builder struct {
	s *Schema
	c *checker
	v *dsValidator
}

// object adds the members of obj (the value of node e, nil = data root)
// under d.
func (b *builder) object(d *dnode, e *yang.Entry, obj map[string]any, path string) {
	// Member order does not matter to the checks (violations are sorted at
	// the end; members have distinct names), so the map is not sorted.
	for name, val := range obj {
		mod, local := splitQName(name)
		var ch *yang.Entry
		if e == nil {
			for _, cand := range b.s.top[local] {
				if mod == "" || b.s.module(cand) == mod {
					if ch == nil || strings.HasPrefix(b.s.module(cand), "openconfig-") {
						ch = cand
					}
				}
			}
		} else {
			ch, _ = b.c.child(e, local)
		}
		if ch == nil || ch.ReadOnly() {
			continue
		}
		b.value(d, ch, val, path+"/"+name)
	}
	b.defaults(d, e)
}

// defaults adds what the device instantiates by itself below d (entry e,
// nil = root): leaves with a default and non-presence containers, as
// libyang does, unless a feature they need is off. A choice's defaults are
// added only for the case in use.
func (b *builder) defaults(d *dnode, e *yang.Entry) {
	var present map[*yang.Entry]bool
	if len(d.kids) > 0 {
		present = make(map[*yang.Entry]bool, len(d.kids))
		for _, k := range d.kids {
			present[k.e] = true
		}
	}
	var dir []*yang.Entry
	if e == nil {
		dir = b.v.topEntries()
	} else {
		dir = sortedDir(e)
	}
	b.defaultsIn(d, dir, present)
}

func (b *builder) defaultsIn(d *dnode, dir []*yang.Entry, present map[*yang.Entry]bool) {
	for _, ch := range dir {
		if ch.ReadOnly() || ch.RPC != nil || ch.Kind == yang.NotificationEntry {
			continue
		}
		if ch.IsChoice() {
			if active := activeCase(d, ch, present); active != nil {
				if active.IsCase() {
					b.defaultsIn(d, sortedDir(active), present)
				}
			}
			continue
		}
		if present[ch] || !b.v.featuresOn(ch) {
			continue
		}
		switch {
		case ch.IsLeaf():
			if ch.Mandatory == yang.TSTrue {
				continue
			}
			def := ""
			if len(ch.Default) > 0 {
				def = ch.Default[0]
			} else if ch.Type != nil && ch.Type.HasDefault {
				def = ch.Type.Default
			} else {
				continue
			}
			d.add(&dnode{e: ch, name: ch.Name, isLeaf: true, val: b.canon(ch, def), dflt: true})
		case ch.IsLeafList():
			for _, def := range ch.Default {
				d.add(&dnode{e: ch, name: ch.Name, isLeaf: true, val: b.canon(ch, def), dflt: true})
			}
		case ch.IsContainer():
			if c, ok := ch.Node.(*yang.Container); ok && c.Presence != nil {
				continue
			}
			b.defaults(d.add(&dnode{e: ch, name: ch.Name, dflt: true}), ch)
		}
	}
}

// activeCase returns the case (or shorthand node) of choice ch that has data
// among present, or nil.
func activeCase(d *dnode, ch *yang.Entry, present map[*yang.Entry]bool) *yang.Entry {
	for k := range present {
		for p := k; p != nil && p != d.e; p = p.Parent {
			if p.Parent == ch {
				return p
			}
		}
	}
	return nil
}

func (b *builder) value(d *dnode, ch *yang.Entry, v any, path string) {
	switch {
	case ch.IsLeaf():
		d.add(&dnode{e: ch, name: ch.Name, isLeaf: true, val: b.canon(ch, v), raw: v})
	case ch.IsLeafList():
		arr, ok := v.([]any)
		if !ok {
			arr = []any{v}
		}
		for _, it := range arr {
			val := b.canon(ch, it)
			d.add(&dnode{e: ch, name: ch.Name, path: path + "[.=" + val + "]", isLeaf: true, val: val, raw: it})
		}
	case ch.IsList():
		arr, ok := v.([]any)
		if !ok {
			arr = []any{v}
		}
		keys := strings.Fields(ch.Key)
		for _, it := range arr {
			obj, ok := it.(map[string]any)
			if !ok {
				continue
			}
			p := path
			for _, k := range keys {
				if kv, ok := lookupMember(obj, k); ok {
					p += "[" + k + "=" + scalarString(kv) + "]"
				}
			}
			b.object(d.add(&dnode{e: ch, name: ch.Name, path: p}), ch, obj, p)
		}
	case ch.IsContainer():
		obj, ok := v.(map[string]any)
		if !ok {
			return
		}
		b.object(d.add(&dnode{e: ch, name: ch.Name, path: path}), ch, obj, path)
	}
}

// canon is the string value of a leaf for XPath: numbers as written,
// booleans true/false, identityrefs as the bare identity name (SR Linux
// compares them to unprefixed literals, 'bridged'; rewriteXPath strips
// the prefix of a prefixed literal, so both idioms compare alike).
func (b *builder) canon(e *yang.Entry, v any) string {
	s := scalarString(v)
	if e.Type != nil && e.Type.Kind == yang.Yidentityref {
		if _, local, ok := strings.Cut(s, ":"); ok {
			return local
		}
	}
	return s
}

func sonicBase(ns string) string {
	if ns == "" {
		ns = "localhost"
	}
	return OriginSONiCDB + ":/CONFIG_DB/" + ns
}

func sonicDBPath(ns string) *gnmipb.Path {
	if ns == "" {
		ns = "localhost"
	}
	return &gnmipb.Path{Origin: OriginSONiCDB, Elem: []*gnmipb.PathElem{{Name: "CONFIG_DB"}, {Name: ns}}}
}

// sonicTables returns the table map of a sonic-db datastore.
func sonicTables(tree map[string]any, ns string) map[string]any {
	if ns == "" {
		ns = "localhost"
	}
	if db, ok := tree["CONFIG_DB"].(map[string]any); ok {
		if t, ok := db[ns].(map[string]any); ok {
			return t
		}
		return map[string]any{}
	}
	return tree
}

// sonic adds the CONFIG_DB tables as sonic-yang data: module container /
// table container / list entries (keys split on "|") with their fields.
func (b *builder) sonic(root *dnode, tables map[string]any, base string) {
	mods := map[*yang.Entry]*dnode{}
	for _, t := range sortedKeys(tables) {
		te := b.s.tables[t]
		obj, ok := tables[t].(map[string]any)
		if te == nil || !ok {
			continue
		}
		mc := te.Parent
		md := mods[mc]
		if md == nil {
			md = root.add(&dnode{e: mc, name: mc.Name, path: base})
			mods[mc] = md
		}
		td := md.add(&dnode{e: te, name: te.Name, path: base + "/" + t})
		for _, key := range sortedKeys(obj) {
			fields, ok := obj[key].(map[string]any)
			if !ok {
				continue
			}
			b.sonicKey(td, te, key, fields, base+"/"+t+"/"+key)
		}
	}
	for mc, md := range mods {
		for _, td := range md.kids {
			b.defaults(td, td.e)
		}
		b.defaults(md, mc)
	}
}

func (b *builder) sonicKey(td *dnode, te *yang.Entry, key string, fields map[string]any, path string) {
	if ch := te.Dir[key]; ch != nil && ch.IsContainer() {
		cd := td.add(&dnode{e: ch, name: ch.Name, path: path})
		b.sonicFields(cd, ch, nil, fields, path)
		b.defaults(cd, ch)
		return
	}
	parts := strings.Split(key, "|")
	var list *yang.Entry
	for _, l := range sortedDir(te) {
		if !l.IsList() || len(strings.Fields(l.Key)) != len(parts) {
			continue
		}
		ok := true
		for i, k := range strings.Fields(l.Key) {
			if ke := l.Dir[k]; ke != nil && b.c.value(ke, ke.Type, parts[i], true) != "" {
				ok = false
			}
		}
		if list == nil || ok {
			list = l
		}
		if ok {
			break
		}
	}
	if list == nil {
		return
	}
	ed := td.add(&dnode{e: list, name: list.Name, path: path})
	keys := strings.Fields(list.Key)
	for i, k := range keys {
		if ke := list.Dir[k]; ke != nil {
			ed.add(&dnode{e: ke, name: k, path: path, isLeaf: true, val: parts[i], raw: parts[i]})
		}
	}
	b.sonicFields(ed, list, keys, fields, path)
	b.defaults(ed, list)
}

func (b *builder) sonicFields(d *dnode, e *yang.Entry, keys []string, fields map[string]any, path string) {
	var inner *yang.Entry
	for _, ch := range sortedDir(e) {
		if ch.IsList() && len(strings.Fields(ch.Key)) == 1 && len(ch.Dir) == 2 {
			inner = ch
		}
	}
	for _, f := range sortedKeys(fields) {
		fpath := path + "/" + f
		name := strings.TrimSuffix(f, "@")
		ch := e.Dir[name]
		switch {
		case ch != nil && contains(keys, name):
		case ch != nil && ch.IsLeaf():
			d.add(&dnode{e: ch, name: name, path: fpath, isLeaf: true, val: scalarString(fields[f]), raw: scalarString(fields[f])})
		case ch != nil && ch.IsLeafList():
			var items []string
			switch x := fields[f].(type) {
			case string:
				items = strings.Split(x, ",")
			case []any:
				for _, it := range x {
					items = append(items, scalarString(it))
				}
			}
			for _, it := range items {
				d.add(&dnode{e: ch, name: name, path: fpath, isLeaf: true, val: it, raw: it})
			}
		case ch == nil && inner != nil:
			kname := strings.Fields(inner.Key)[0]
			ed := d.add(&dnode{e: inner, name: inner.Name, path: fpath})
			if ke := inner.Dir[kname]; ke != nil {
				ed.add(&dnode{e: ke, name: kname, path: fpath, isLeaf: true, val: f, raw: f})
			}
			for n, l := range inner.Dir {
				if n != kname {
					ed.add(&dnode{e: l, name: n, path: fpath, isLeaf: true, val: scalarString(fields[f]), raw: scalarString(fields[f])})
				}
			}
		}
	}
}

// condition is a when or if-feature of an entry, written in the module of
// node; up marks one that applies from the parent data node (on an
// augment, a uses, a choice or a case).
type condition struct {
	expr string
	node yang.Node
	up   bool
}

// conds are the conditions of one schema entry.
type conds struct {
	whens    []condition
	features []condition
	musts    []*yang.Must
}

func stmtConds(n yang.Node, up bool, c *conds) {
	var when *yang.Value
	var feats []*yang.Value
	switch x := n.(type) {
	case *yang.Container:
		when, feats = x.When, x.IfFeature
		c.musts = append(c.musts, x.Must...)
	case *yang.Leaf:
		when, feats = x.When, x.IfFeature
		c.musts = append(c.musts, x.Must...)
	case *yang.LeafList:
		when, feats = x.When, x.IfFeature
		c.musts = append(c.musts, x.Must...)
	case *yang.List:
		when, feats = x.When, x.IfFeature
		c.musts = append(c.musts, x.Must...)
	case *yang.Choice:
		when, feats = x.When, x.IfFeature
	case *yang.Case:
		when, feats = x.When, x.IfFeature
	case *yang.Augment:
		when, feats = x.When, x.IfFeature
	case *yang.Uses:
		when, feats = x.When, x.IfFeature
	}
	if when != nil {
		c.whens = append(c.whens, condition{expr: when.Name, node: n, up: up})
	}
	for _, f := range feats {
		c.features = append(c.features, condition{expr: f.Name, node: n, up: up})
	}
}

// condsOf collects the conditions of entry e: its own statement's, those of
// the augment that adds it, and those of the choices and cases between it
// and its parent data node.
func (s *Schema) condsOf(e *yang.Entry) *conds {
	if c, ok := s.conds.Load(e); ok {
		return c.(*conds)
	}
	c := &conds{}
	stmtConds(e.Node, false, c)
	if e.Node != nil {
		if a, ok := e.Node.ParentNode().(*yang.Augment); ok {
			stmtConds(a, true, c)
		}
	}
	// An augment's conditions: goyang keeps the augments merged into the
	// parent (the node's own statement may sit in a grouping the augment
	// uses, e.g. openconfig-if-ethernet's ethernet container).
	if e.Parent != nil {
		for _, a := range e.Parent.Augmented {
			if _, ok := a.Dir[e.Name]; ok {
				if an, ok := a.Node.(*yang.Augment); ok && (e.Node == nil || an != e.Node.ParentNode()) {
					stmtConds(an, true, c)
				}
			}
		}
	}
	// A "uses" statement's when and if-feature: goyang copies them into
	// the Extra of the nodes the grouping brings (openconfig-if-ethernet
	// augments interface with "uses ethernet-top { when ... }"). The
	// context of such a when is the parent data node.
	have := map[string]bool{}
	for _, w := range c.whens {
		have[w.expr] = true
	}
	for _, x := range e.Extra["when"] {
		if v, ok := x.(*yang.Value); ok && !have[v.Name] {
			have[v.Name] = true
			c.whens = append(c.whens, condition{expr: v.Name, node: valueNode(v, e), up: true})
		}
	}
	haveF := map[string]bool{}
	for _, f := range c.features {
		haveF[f.expr] = true
	}
	for _, x := range e.Extra["if-feature"] {
		if v, ok := x.(*yang.Value); ok && !haveF[v.Name] {
			haveF[v.Name] = true
			c.features = append(c.features, condition{expr: v.Name, node: valueNode(v, e), up: true})
		}
	}
	for p := e.Parent; p != nil && (p.IsChoice() || p.IsCase()); p = p.Parent {
		stmtConds(p.Node, true, c)
		if p.Node != nil {
			if a, ok := p.Node.ParentNode().(*yang.Augment); ok {
				stmtConds(a, true, c)
			}
		}
	}
	s.conds.Store(e, c)
	return c
}

// valueNode is the statement a Value belongs to (for its module's
// prefixes), else e's.
func valueNode(v *yang.Value, e *yang.Entry) yang.Node {
	if v.Parent != nil {
		return v.Parent
	}
	return e.Node
}

type dsValidator struct {
	s        *Schema
	opts     DatastoreOptions
	x        *xexprs
	out      Violations
	featMemo map[string]bool
	exprMemo map[featKey]bool
	refSets  map[*xpath.Expr]map[string]bool // values of absolute leafref paths
	entryOn  map[*yang.Entry]bool            // featuresOn by entry
}

// topEntries are the top-level data nodes of the schema, the OpenConfig one
// where two modules define the same name (gNMI's default origin).
func (v *dsValidator) topEntries() []*yang.Entry {
	names := make([]string, 0, len(v.s.top))
	for n := range v.s.top {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]*yang.Entry, 0, len(names))
	for _, n := range names {
		var pick *yang.Entry
		for _, c := range v.s.top[n] {
			if pick == nil || strings.HasPrefix(v.s.module(c), "openconfig-") {
				pick = c
			}
		}
		out = append(out, pick)
	}
	return out
}

// featuresOn reports whether every if-feature of entry e is true.
func (v *dsValidator) featuresOn(e *yang.Entry) bool {
	if on, ok := v.entryOn[e]; ok {
		return on
	}
	on := true
	for _, f := range v.s.condsOf(e).features {
		if !v.featureOn(f.expr, f.node) {
			on = false
			break
		}
	}
	if v.entryOn == nil {
		v.entryOn = map[*yang.Entry]bool{}
	}
	v.entryOn[e] = on
	return on
}

func (v *dsValidator) addf(path, rule, format string, a ...any) {
	v.out = append(v.out, Violation{Path: path, Rule: rule, Msg: fmt.Sprintf(format, a...)})
}

// featureOn evaluates an if-feature expression (YANG 1.1: names, not, and,
// or, parentheses) written in the module of n.
func (v *dsValidator) featureOn(expr string, n yang.Node) bool {
	pm := v.s.prefixesOf(n)
	key := featKey{expr, pm[""]}
	if r, ok := v.exprMemo[key]; ok {
		return r
	}
	r := v.evalFeature(expr, pm)
	if v.exprMemo == nil {
		v.exprMemo = map[featKey]bool{}
	}
	v.exprMemo[key] = r
	return r
}

type featKey struct{ expr, mod string }

var featTokens = strings.NewReplacer("(", " ( ", ")", " ) ")

func (v *dsValidator) evalFeature(expr string, pm map[string]string) bool {
	toks := strings.Fields(featTokens.Replace(expr))
	i := 0
	var or func() bool
	atom := func() bool {
		if i >= len(toks) {
			return false
		}
		t := toks[i]
		i++
		switch t {
		case "not":
			return !atomNot(&i, toks, or, v, pm)
		case "(":
			r := or()
			if i < len(toks) && toks[i] == ")" {
				i++
			}
			return r
		}
		return v.featureName(t, pm)
	}
	and := func() bool {
		r := atom()
		for i < len(toks) && toks[i] == "and" {
			i++
			r2 := atom()
			r = r && r2
		}
		return r
	}
	or = func() bool {
		r := and()
		for i < len(toks) && toks[i] == "or" {
			i++
			r2 := and()
			r = r || r2
		}
		return r
	}
	return or()
}

// atomNot evaluates the operand of "not" (an atom).
func atomNot(i *int, toks []string, or func() bool, v *dsValidator, pm map[string]string) bool {
	if *i >= len(toks) {
		return false
	}
	t := toks[*i]
	*i++
	switch t {
	case "not":
		return !atomNot(i, toks, or, v, pm)
	case "(":
		r := or()
		if *i < len(toks) && toks[*i] == ")" {
			*i++
		}
		return r
	}
	return v.featureName(t, pm)
}

func (v *dsValidator) featureName(t string, pm map[string]string) bool {
	p, name, ok := strings.Cut(t, ":")
	mod := pm[""]
	if ok {
		mod = pm[p]
		if mod == "" {
			mod = p // SR Linux's if-feature extension names modules
		}
	} else {
		name = t
	}
	return v.featureEnabled(mod, name)
}

// featureEnabled reports whether feature mod:name is on: in the set (nil:
// every released feature) and its own if-features true (RFC 7950 section
// 7.20.2: a feature whose if-feature is false cannot be supported).
func (v *dsValidator) featureEnabled(mod, name string) bool {
	k := mod + ":" + name
	if on, ok := v.featMemo[k]; ok {
		return on
	}
	if v.featMemo == nil {
		v.featMemo = map[string]bool{}
	}
	v.featMemo[k] = false // a cycle of if-features is off
	on := !unreleasedFeatures[name]
	if v.opts.Features != nil {
		on = v.opts.Features[k]
	}
	if v.s.absent[k] {
		on = false // the release does not have it, whatever the set says
	}
	if on {
		if m := v.s.ms.Modules[mod]; m != nil {
			for _, f := range m.Feature {
				if f.Name != name {
					continue
				}
				for _, iff := range f.IfFeature {
					if !v.featureOn(iff.Name, f) {
						on = false
					}
				}
			}
		}
	}
	v.featMemo[k] = on
	return on
}

// check evaluates the if-feature and when conditions of data node k (child
// of d); it reports and returns false when k may not exist.
func (v *dsValidator) allowed(d, k *dnode, cs *conds) bool {
	for _, f := range cs.features {
		if v.featuresOn(k.e) {
			break
		}
		if !v.featureOn(f.expr, f.node) {
			if !k.dflt {
				v.addf(k.where(), RuleFeature, "unknown element %q: if-feature %q is false on this device", k.name, f.expr)
			}
			return false
		}
	}
	for _, w := range cs.whens {
		ctx := k
		if w.up {
			ctx = d
		}
		e, err := v.x.compile(w.expr, w.node)
		if err != nil {
			continue
		}
		if !v.x.evalBool(e, ctx) {
			if !k.dflt {
				v.addf(k.where(), RuleWhen, "when condition %q not satisfied", w.expr)
			}
			return false
		}
	}
	return true
}

// walk checks every node below d.
func (v *dsValidator) walk(d *dnode) {
	for _, k := range d.kids {
		cs := v.s.condsOf(k.e)
		if !v.allowed(d, k, cs) {
			continue
		}
		for _, m := range cs.musts {
			if !v.mustOn(m) {
				continue
			}
			e, err := v.x.compile(m.Name, m)
			if err != nil {
				continue
			}
			if !v.x.evalBool(e, k) {
				msg := fmt.Sprintf("must condition %q not satisfied", m.Name)
				if m.ErrorMessage != nil && m.ErrorMessage.Name != "" {
					msg = m.ErrorMessage.Name
				}
				vi := Violation{Path: k.where(), Rule: RuleMust, Msg: msg}
				if m.ErrorAppTag != nil {
					vi.AppTag = m.ErrorAppTag.Name
				}
				v.out = append(v.out, vi)
			}
		}
		if k.isLeaf {
			v.leafref(k)
			v.enumFeature(k)
			continue
		}
		v.walk(k)
		v.mandatory(k, k.e)
	}
	v.unique(d)
}

// unique checks the unique statements of the lists among d's children: no
// two entries may have the same values for all of a statement's leaves
// (RFC 7950 section 7.8.3; entries lacking one of them are not compared).
// SR Linux: pfc-pause-frame-priority is unique among a pfc-mapping-profile's
// pfc-queues.
func (v *dsValidator) unique(d *dnode) {
	var seen map[string]*dnode
	for _, k := range d.kids {
		l, ok := k.e.Node.(*yang.List)
		if !ok || len(l.Unique) == 0 || k.isLeaf {
			continue
		}
		for ui, u := range l.Unique {
			fields := strings.Fields(u.Name)
			key := k.e.Name + "\x00" + strconv.Itoa(ui)
			complete := true
			for _, f := range fields {
				n := k
				for _, st := range strings.Split(f, "/") {
					_, local := splitQName(st)
					var next *dnode
					for _, c := range n.kids {
						if c.name == local {
							next = c
							break
						}
					}
					n = next
					if n == nil {
						break
					}
				}
				if n == nil || !n.isLeaf {
					complete = false
					break
				}
				key += "\x00" + n.val
			}
			if !complete {
				continue
			}
			if seen == nil {
				seen = map[string]*dnode{}
			}
			if first, dup := seen[key]; dup {
				v.addf(k.where(), RuleSchema, "unique %q: same values as %s", u.Name, first.where())
				continue
			}
			seen[key] = k
		}
	}
}

// enumFeature reports an enumeration value whose enum statement has an
// if-feature that is false: the device does not know the value (SR Linux
// gates port-speed values by platform: enum 10M { if-feature
// "srl_nokia-feat:port-speed-10M"; }).
func (v *dsValidator) enumFeature(k *dnode) {
	t := k.e.Type
	if t == nil || t.Kind != yang.Yenum || t.Base == nil {
		return
	}
	// goyang keeps an enum's if-feature only in the statement tree: the
	// leaf's "type enumeration { enum ... }".
	if k.e.Node == nil || k.e.Node.Statement() == nil {
		return
	}
	var src *yang.Statement
	for _, st := range k.e.Node.Statement().SubStatements() {
		if st.Keyword == "type" {
			src = st
		}
	}
	if src == nil {
		return
	}
	for _, en := range src.SubStatements() {
		if en.Keyword != "enum" || en.Argument != k.val {
			continue
		}
		for _, f := range en.SubStatements() {
			if f.Keyword == "if-feature" && !v.featureOn(f.Argument, k.e.Node) {
				v.addf(k.where(), RuleFeature, "enum value %q is not supported on this device (if-feature %q is false)", k.val, f.Argument)
				return
			}
		}
	}
}

// mustOn reports whether a must applies under the feature set: SR Linux
// gates some with its own extension, srl_nokia-ext:if-feature "expr"
// (srl_nokia-interfaces swap-src-dst-mac: "not srl_nokia-features:fpcx").
// libyang ignores the extension; the referee's module copy drops such a
// must where the expression is false.
func (v *dsValidator) mustOn(m *yang.Must) bool {
	for _, ext := range m.Extensions {
		if strings.HasSuffix(ext.Keyword, ":if-feature") && !v.featureOn(ext.Argument, m) {
			return false
		}
	}
	return true
}

// leafref checks require-instance of a leafref leaf, or of a union with
// leafref members: a union value is valid when a non-leafref member takes
// it or a leafref member finds its instance (libyang's union resolution;
// SONiC's BUFFER_PG profile is leafref | "NULL").
func (v *dsValidator) leafref(k *dnode) {
	t := k.e.Type
	if t == nil {
		return
	}
	switch t.Kind {
	case yang.Yleafref:
		if t.OptionalInstance || t.Path == "" || v.hasInstance(k, t) {
			return
		}
		v.addf(k.where(), RuleLeafref, "leafref %q: no %s with value %q exists (require-instance)", t.Path, lastStep(t.Path), k.val)
	case yang.Yunion:
		var refs []*yang.YangType
		for _, m := range flatUnion(t) {
			if m.Kind == yang.Yleafref {
				if m.OptionalInstance || v.hasInstance(k, m) {
					return
				}
				refs = append(refs, m)
				continue
			}
			if (&checker{s: v.s, strs: true}).value(k.e, m, k.val, true) == "" {
				return
			}
		}
		if len(refs) > 0 {
			v.addf(k.where(), RuleLeafref, "union with leafref %q: no %s with value %q exists and no other member type takes it", refs[0].Path, lastStep(refs[0].Path), k.val)
		}
	}
}

func flatUnion(t *yang.YangType) []*yang.YangType {
	var out []*yang.YangType
	for _, m := range t.Type {
		if m.Kind == yang.Yunion {
			out = append(out, flatUnion(m)...)
		} else {
			out = append(out, m)
		}
	}
	return out
}

// hasInstance evaluates the leafref path of type t from leaf k and reports
// whether a node with k's value is there.
func (v *dsValidator) hasInstance(k *dnode, t *yang.YangType) bool {
	n := yang.Node(k.e.Node)
	if t.Base != nil {
		n = t.Base
	}
	e, err := v.x.compile(t.Path, n)
	if err != nil {
		return true
	}
	// An absolute path that does not use current() selects the same
	// nodes from every leaf: collect their values once per validation.
	if src := e.String(); strings.HasPrefix(src, "/") && !strings.Contains(src, "@") {
		set, ok := v.refSets[e]
		if !ok {
			set = map[string]bool{}
			for _, m := range v.x.evalNodes(e, k) {
				set[m.val] = true
			}
			if v.refSets == nil {
				v.refSets = map[*xpath.Expr]map[string]bool{}
			}
			v.refSets[e] = set
		}
		return set[k.val]
	}
	for _, m := range v.x.evalNodes(e, k) {
		if m.val == k.val {
			return true
		}
	}
	return false
}

func lastStep(p string) string {
	p = predicateRE.ReplaceAllString(p, "")
	if i := strings.LastIndex(p, "/"); i >= 0 {
		p = p[i+1:]
	}
	_, l := splitQName(p)
	return l
}

// mandatory reports the mandatory descendants of d (schema entry e, nil =
// root) that are missing.
func (v *dsValidator) mandatory(d *dnode, e *yang.Entry) {
	present := map[*yang.Entry]int{}
	for _, k := range d.kids {
		present[k.e]++
	}
	for ch, n := range present {
		if ch.ListAttr != nil && uint64(n) > ch.ListAttr.MaxElements && !ch.ReadOnly() {
			v.addf(d.where()+"/"+ch.Name, RuleSchema, "%q has %d entries, max-elements is %d", ch.Name, n, ch.ListAttr.MaxElements)
		}
	}
	var dir []*yang.Entry
	if e == nil {
		dir = v.topEntries()
	} else {
		dir = sortedDir(e)
	}
	v.mandatoryIn(d, dir, present)
}

func (v *dsValidator) mandatoryIn(d *dnode, dir []*yang.Entry, present map[*yang.Entry]int) {
	for _, ch := range dir {
		if ch.ReadOnly() || ch.RPC != nil || ch.Kind == yang.NotificationEntry {
			continue
		}
		if ch.IsChoice() {
			v.choice(d, ch, present)
			continue
		}
		if present[ch] > 0 && !ch.IsList() && !ch.IsLeafList() {
			continue
		}
		if !v.couldExist(d, ch) {
			continue
		}
		switch {
		case ch.IsLeaf():
			if ch.Mandatory == yang.TSTrue {
				v.addf(d.where()+"/"+ch.Name, RuleMandatory, "mandatory leaf %q is missing", ch.Name)
			}
		case ch.IsList() || ch.IsLeafList():
			if ch.ListAttr != nil && uint64(present[ch]) < ch.ListAttr.MinElements {
				v.addf(d.where()+"/"+ch.Name, RuleMandatory, "%q has %d entries, min-elements is %d", ch.Name, present[ch], ch.ListAttr.MinElements)
			}
		case ch.IsContainer():
			if c, ok := ch.Node.(*yang.Container); ok && c.Presence != nil {
				continue
			}
			// A non-presence container exists when its parent does: its
			// mandatory descendants are required.
			dummy := &dnode{e: ch, name: ch.Name, parent: d, idx: -1}
			v.mandatory(dummy, ch)
		}
	}
}

// couldExist evaluates the if-feature and when conditions of an absent
// child ch of d (its own when on a dummy node, RFC 7950 section 7.21.5).
func (v *dsValidator) couldExist(d *dnode, ch *yang.Entry) bool {
	cs := v.s.condsOf(ch)
	for _, f := range cs.features {
		if !v.featureOn(f.expr, f.node) {
			return false
		}
	}
	for _, w := range cs.whens {
		ctx := d
		if !w.up {
			ctx = &dnode{e: ch, name: ch.Name, parent: d, idx: -1}
		}
		e, err := v.x.compile(w.expr, w.node)
		if err != nil {
			return false
		}
		if !v.x.evalBool(e, ctx) {
			return false
		}
	}
	return true
}

// choice checks a choice of d: a mandatory choice needs a case with data;
// the case in use has its mandatory nodes checked.
func (v *dsValidator) choice(d *dnode, ch *yang.Entry, present map[*yang.Entry]int) {
	has := make(map[*yang.Entry]bool, len(present))
	for k, n := range present {
		has[k] = n > 0
	}
	active := activeCase(d, ch, has)
	if active == nil {
		if ch.Mandatory == yang.TSTrue && v.couldExist(d, ch) {
			v.addf(d.where()+"/"+ch.Name, RuleMandatory, "mandatory choice %q has no case", ch.Name)
		}
		return
	}
	if active.IsCase() {
		v.mandatoryIn(d, sortedDir(active), present)
	} else {
		v.mandatoryIn(d, []*yang.Entry{active}, present)
	}
}
