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
	tree = normalize(tree).(map[string]any)
	c := &checker{s: s, ds: true}
	root := &dnode{}
	b := &builder{s: s, c: c}
	if origin == OriginSONiCDB {
		tables := sonicTables(tree, opts.Namespace)
		c.sonic(sonicDBPath(opts.Namespace), tables)
		b.sonic(root, tables, sonicBase(opts.Namespace))
	} else {
		c.rootMembers(tree)
		b.object(root, nil, tree, "")
	}
	for i := range c.out {
		if c.out[i].Rule == "" {
			c.out[i].Rule = RuleSchema
		}
	}
	v := &dsValidator{s: s, opts: opts, x: &xexprs{s: s, cache: map[xkey]*xpath.Expr{}}, out: c.out}
	v.walk(root)
	v.mandatory(root, nil)
	sort.SliceStable(v.out, func(i, j int) bool { return v.out[i].Path < v.out[j].Path })
	return v.out
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
}

// object adds the members of obj (the value of node e, nil = data root)
// under d.
func (b *builder) object(d *dnode, e *yang.Entry, obj map[string]any, path string) {
	for _, name := range sortedKeys(obj) {
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
		b.value(d, ch, obj[name], path+"/"+name)
	}
}

func (b *builder) value(d *dnode, ch *yang.Entry, v any, path string) {
	switch {
	case ch.IsLeaf():
		d.add(&dnode{e: ch, name: ch.Name, path: path, isLeaf: true, val: b.canon(ch, v)})
	case ch.IsLeafList():
		arr, ok := v.([]any)
		if !ok {
			arr = []any{v}
		}
		for _, it := range arr {
			val := b.canon(ch, it)
			d.add(&dnode{e: ch, name: ch.Name, path: path + "[.=" + val + "]", isLeaf: true, val: val})
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
// booleans true/false, identityrefs as module:identity.
func (b *builder) canon(e *yang.Entry, v any) string {
	s := scalarString(v)
	if e.Type != nil && e.Type.Kind == yang.Yidentityref && !strings.Contains(s, ":") && e.Type.IdentityBase != nil {
		for _, id := range e.Type.IdentityBase.Values {
			if id.Name == s {
				return identityModule(id) + ":" + s
			}
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
}

func (b *builder) sonicKey(td *dnode, te *yang.Entry, key string, fields map[string]any, path string) {
	if ch := te.Dir[key]; ch != nil && ch.IsContainer() {
		b.sonicFields(td.add(&dnode{e: ch, name: ch.Name, path: path}), ch, nil, fields, path)
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
			ed.add(&dnode{e: ke, name: k, path: path, isLeaf: true, val: parts[i]})
		}
	}
	b.sonicFields(ed, list, keys, fields, path)
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
			d.add(&dnode{e: ch, name: name, path: fpath, isLeaf: true, val: scalarString(fields[f])})
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
				d.add(&dnode{e: ch, name: name, path: fpath, isLeaf: true, val: it})
			}
		case ch == nil && inner != nil:
			kname := strings.Fields(inner.Key)[0]
			ed := d.add(&dnode{e: inner, name: inner.Name, path: fpath})
			if ke := inner.Dir[kname]; ke != nil {
				ed.add(&dnode{e: ke, name: kname, path: fpath, isLeaf: true, val: f})
			}
			for n, l := range inner.Dir {
				if n != kname {
					ed.add(&dnode{e: l, name: n, path: fpath, isLeaf: true, val: scalarString(fields[f])})
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
	s.mu.Lock()
	c, ok := s.conds[e]
	s.mu.Unlock()
	if ok {
		return c
	}
	c = &conds{}
	stmtConds(e.Node, false, c)
	if e.Node != nil {
		if a, ok := e.Node.ParentNode().(*yang.Augment); ok {
			stmtConds(a, true, c)
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
	s.mu.Lock()
	if s.conds == nil {
		s.conds = map[*yang.Entry]*conds{}
	}
	s.conds[e] = c
	s.mu.Unlock()
	return c
}

type dsValidator struct {
	s    *Schema
	opts DatastoreOptions
	x    *xexprs
	out  Violations
}

func (v *dsValidator) addf(path, rule, format string, a ...any) {
	v.out = append(v.out, Violation{Path: path, Rule: rule, Msg: fmt.Sprintf(format, a...)})
}

// featureOn evaluates an if-feature expression (YANG 1.1: names, not, and,
// or, parentheses) written in the module of n.
func (v *dsValidator) featureOn(expr string, n yang.Node) bool {
	toks := strings.Fields(strings.NewReplacer("(", " ( ", ")", " ) ").Replace(expr))
	pm := v.s.prefixesOf(n)
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
	} else {
		name = t
	}
	if unreleasedFeatures[name] && v.opts.Features == nil {
		return false
	}
	if v.opts.Features == nil {
		return true
	}
	return v.opts.Features[mod+":"+name]
}

// check evaluates the if-feature and when conditions of data node k (child
// of d); it reports and returns false when k may not exist.
func (v *dsValidator) allowed(d, k *dnode, cs *conds) bool {
	for _, f := range cs.features {
		if !v.featureOn(f.expr, f.node) {
			v.addf(k.path, RuleFeature, "unknown element %q: if-feature %q is false on this device", k.name, f.expr)
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
		if !evalBool(e, ctx) {
			v.addf(k.path, RuleWhen, "when condition %q not satisfied", w.expr)
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
			e, err := v.x.compile(m.Name, m)
			if err != nil {
				continue
			}
			if !evalBool(e, k) {
				msg := fmt.Sprintf("must condition %q not satisfied", m.Name)
				if m.ErrorMessage != nil && m.ErrorMessage.Name != "" {
					msg = m.ErrorMessage.Name
				}
				vi := Violation{Path: k.path, Rule: RuleMust, Msg: msg}
				if m.ErrorAppTag != nil {
					vi.AppTag = m.ErrorAppTag.Name
				}
				v.out = append(v.out, vi)
			}
		}
		if k.isLeaf {
			v.leafref(k)
			continue
		}
		v.walk(k)
		v.mandatory(k, k.e)
	}
}

// leafref checks require-instance of a leafref leaf.
func (v *dsValidator) leafref(k *dnode) {
	t := k.e.Type
	if t == nil || t.Kind != yang.Yleafref || t.OptionalInstance || t.Path == "" {
		return
	}
	e, err := v.x.compile(t.Path, typeNode(k.e))
	if err != nil {
		return
	}
	for _, n := range evalNodes(e, k) {
		if n.val == k.val {
			return
		}
	}
	v.addf(k.path, RuleLeafref, "leafref %q: no %s with value %q exists (require-instance)", t.Path, lastStep(t.Path), k.val)
}

// typeNode is the statement whose module the leafref path is written in.
func typeNode(e *yang.Entry) yang.Node {
	if e.Type != nil && e.Type.Base != nil {
		return e.Type.Base
	}
	return e.Node
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
	var dir []*yang.Entry
	if e == nil {
		// The data root: every top-level node of every module, the
		// OpenConfig one where names clash (gNMI's default origin).
		names := make([]string, 0, len(v.s.top))
		for n := range v.s.top {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			var pick *yang.Entry
			for _, c := range v.s.top[n] {
				if pick == nil || strings.HasPrefix(v.s.module(c), "openconfig-") {
					pick = c
				}
			}
			dir = append(dir, pick)
		}
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
		path := d.path + "/" + ch.Name
		switch {
		case ch.IsLeaf():
			if ch.Mandatory == yang.TSTrue {
				v.addf(path, RuleMandatory, "mandatory leaf %q is missing", ch.Name)
			}
		case ch.IsList() || ch.IsLeafList():
			if ch.ListAttr != nil && uint64(present[ch]) < ch.ListAttr.MinElements {
				v.addf(path, RuleMandatory, "%q has %d entries, min-elements is %d", ch.Name, present[ch], ch.ListAttr.MinElements)
			}
		case ch.IsContainer():
			if c, ok := ch.Node.(*yang.Container); ok && c.Presence != nil {
				continue
			}
			// A non-presence container exists when its parent does: its
			// mandatory descendants are required.
			dummy := &dnode{e: ch, name: ch.Name, path: path, parent: d, idx: -1}
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
		if !evalBool(e, ctx) {
			return false
		}
	}
	return true
}

// choice checks a choice of d: a mandatory choice needs a case with data;
// the case in use has its mandatory nodes checked.
func (v *dsValidator) choice(d *dnode, ch *yang.Entry, present map[*yang.Entry]int) {
	var active *yang.Entry
	for k := range present {
		for p := k; p != nil && p != d.e; p = p.Parent {
			if p.Parent == ch {
				active = p
				break
			}
		}
	}
	if active == nil {
		if ch.Mandatory == yang.TSTrue && v.couldExist(d, ch) {
			v.addf(d.path+"/"+ch.Name, RuleMandatory, "mandatory choice %q has no case", ch.Name)
		}
		return
	}
	if active.IsCase() {
		v.mandatoryIn(d, sortedDir(active), present)
	} else {
		v.mandatoryIn(d, []*yang.Entry{active}, present)
	}
}
