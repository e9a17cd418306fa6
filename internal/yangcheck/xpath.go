package yangcheck

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/antchfx/xpath"
	"github.com/openconfig/goyang/pkg/yang"
)

// YANG XPath (RFC 7950 section 10) is XPath 1.0 plus a few functions. The
// expressions are evaluated with github.com/antchfx/xpath over the data tree
// (dnode, through nav). Before compiling, rewriteXPath turns the YANG
// idioms the shipped modules use into what antchfx evaluates:
//
//   - prefix:name name tests lose their prefix: the navigator matches local
//     names (the models here have no two sibling nodes of one local name
//     from different modules);
//   - current() becomes /@_current_, an attribute of the root that the
//     navigator resolves to the node whose expression is evaluated (antchfx
//     has no user functions);
//   - relative paths outside predicates start at current() (anchorRelative:
//     antchfx misreads the right operand of a comparison otherwise);
//   - re-match(s, p) becomes matches(s, concat('^(?:', p, ')$')): YANG's
//     XSD regular expressions are anchored, XPath 2.0 matches() is not;
//   - a string literal 'prefix:identity' becomes 'identity': the navigator
//     gives identityref leaves their bare identity name, because SR Linux
//     compares them with unprefixed literals (type = 'bridged') while
//     OpenConfig prefixes them ('ianaift:ethernetCsmacd'); the models here
//     define no two identities of one name that such a test compares.
//
// The other functions the modules use (not, starts-with, string,
// string-length, substring-before/after, concat, count, boolean, number,
// true, false) are XPath 1.0 and built into antchfx. deref(),
// derived-from(-or-self)(), enum-value() and bit-is-set() are used by none
// of the shipped modules' must/when/path statements; an expression antchfx
// cannot compile is reported by (*Schema).XPathErrors.

const currentName = "_current_"

// rewriteXPath rewrites a YANG XPath expression for antchfx; prefixes maps
// the import prefixes of the expression's module to module names.
func rewriteXPath(expr string, prefixes map[string]string) string {
	var b strings.Builder
	rw := xrewriter{src: expr, prefixes: prefixes, out: &b}
	rw.run(len(expr))
	return b.String()
}

type xrewriter struct {
	src      string
	i        int
	prefixes map[string]string
	out      *strings.Builder
}

func isNameStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isNameChar(c byte) bool {
	return isNameStart(c) || c == '-' || c == '.' || (c >= '0' && c <= '9')
}

// run copies src[i:end] to out, rewriting as documented above.
func (r *xrewriter) run(end int) {
	for r.i < end {
		c := r.src[r.i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(r.src[r.i+1:end], c)
			if j < 0 {
				r.out.WriteString(r.src[r.i:end])
				r.i = end
				return
			}
			lit := r.src[r.i+1 : r.i+1+j]
			if p, local, ok := strings.Cut(lit, ":"); ok && r.prefixes[p] != "" && !strings.ContainsAny(local, ": /") {
				lit = local
			}
			q := string(c)
			if strings.Contains(lit, q) {
				q = "'"
				if c == '\'' {
					q = `"`
				}
			}
			r.out.WriteString(q + lit + q)
			r.i += j + 2
		case isNameStart(c):
			j := r.i
			for j < end && isNameChar(r.src[j]) {
				j++
			}
			name := r.src[r.i:j]
			// prefix:local (not the axis separator ::)
			if j+1 < end && r.src[j] == ':' && r.src[j+1] != ':' && (isNameStart(r.src[j+1]) || r.src[j+1] == '*') {
				r.i = j + 1
				continue
			}
			k := j
			for k < end && (r.src[k] == ' ' || r.src[k] == '\t' || r.src[k] == '\n') {
				k++
			}
			isCall := k < end && r.src[k] == '('
			switch {
			case isCall && name == "current":
				close := strings.IndexByte(r.src[k:end], ')')
				if close < 0 {
					r.out.WriteString(name)
					r.i = j
					continue
				}
				r.out.WriteString("/@" + currentName)
				r.i = k + close + 1
			case isCall && name == "re-match":
				args, after := splitArgs(r.src, k, end)
				if len(args) != 2 {
					r.out.WriteString(name)
					r.i = j
					continue
				}
				r.out.WriteString("matches(")
				r.i = args[0][0]
				r.run(args[0][1])
				r.out.WriteString(", concat('^(?:', ")
				r.i = args[1][0]
				r.run(args[1][1])
				r.out.WriteString(", ')$'))")
				r.i = after
			default:
				r.out.WriteString(name)
				r.i = j
			}
		default:
			r.out.WriteByte(c)
			r.i++
		}
	}
}

// splitArgs returns the [start,end) spans of the arguments of the call whose
// "(" is at open, and the index after its ")".
func splitArgs(s string, open, end int) ([][2]int, int) {
	var args [][2]int
	depth := 0
	start := open + 1
	for i := open; i < end; i++ {
		switch c := s[i]; c {
		case '\'', '"':
			j := strings.IndexByte(s[i+1:end], c)
			if j < 0 {
				return nil, end
			}
			i += j + 1
		case '(', '[':
			depth++
		case ')', ']':
			depth--
			if depth == 0 {
				args = append(args, [2]int{start, i})
				return args, i + 1
			}
		case ',':
			if depth == 1 {
				args = append(args, [2]int{start, i})
				start = i + 1
			}
		}
	}
	return nil, end
}

// prefixMap returns the prefix -> module map in effect for statement n
// (its module's own prefix and its imports).
func prefixMap(n yang.Node) map[string]string {
	m := map[string]string{}
	mod := yang.RootNode(n)
	if mod == nil {
		return m
	}
	name := mod.Name
	if mod.Kind() == "submodule" && mod.BelongsTo != nil {
		name = mod.BelongsTo.Name
	}
	m[mod.GetPrefix()] = name
	m[""] = name
	for _, imp := range mod.Import {
		if imp.Prefix != nil {
			m[imp.Prefix.Name] = imp.Name
		}
	}
	return m
}

// xexprs compiles expressions once per validation (an antchfx Expr keeps
// evaluation state, so one is not shared between goroutines).
type xexprs struct {
	s        *Schema
	cache    map[xkey]*xpath.Expr
	index    map[int]map[string]*dnode // indexed lookups, built on first use
	specCopy []ixSpec
	relIndex map[relKey]map[string]*dnode
	absolute map[*xpath.Expr]bool // contextFree, by expression
	results  map[*xpath.Expr]bool // values of the context-free ones
}

type xkey struct {
	expr string
	node yang.Node
}

// compile returns the compiled form of a YANG expression written in the
// module of statement n, or an error antchfx gave.
func (x *xexprs) compile(expr string, n yang.Node) (*xpath.Expr, error) {
	mod := yang.RootNode(n)
	k := xkey{expr, mod}
	if e, ok := x.cache[k]; ok {
		if e == nil {
			return nil, fmt.Errorf("XPath %q cannot be evaluated", expr)
		}
		return e, nil
	}
	pool, _ := x.s.exprPool.LoadOrStore(k, &sync.Pool{})
	if e, ok := pool.(*sync.Pool).Get().(*xpath.Expr); ok {
		x.cache[k] = e
		return e, nil
	}
	src := expr
	if pm := x.s.prefixesOf(n); strings.HasPrefix(pm[""], "srl_nokia") {
		// SR Linux's idioms only: SONiC validates with libyang itself.
		src = srlIdioms(expr)
	}
	e, err := xpath.Compile(x.s.indexLookups(anchorRelative(rewriteXPath(src, x.s.prefixesOf(n)))))
	if err != nil {
		x.s.noteXPathError(expr, err)
		x.cache[k] = nil
		return nil, fmt.Errorf("XPath %q: %w", expr, err)
	}
	x.cache[k] = e
	return e, nil
}

// release gives the compiled expressions back to the schema's pools for
// the next validation (a compiled expression is used by one at a time).
func (x *xexprs) release() {
	for k, e := range x.cache {
		if e == nil {
			continue
		}
		if pool, ok := x.s.exprPool.Load(k); ok {
			pool.(*sync.Pool).Put(e)
		}
	}
	x.cache = nil
}

// XPathErrors returns the must/when/leafref expressions of the schema that
// could not be compiled during the validations so far (expression -> error);
// the tests require it to stay empty for the shipped modules.
func (s *Schema) XPathErrors() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.xerrs))
	for k, v := range s.xerrs {
		out[k] = v
	}
	return out
}

func (s *Schema) noteXPathError(expr string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.xerrs == nil {
		s.xerrs = map[string]string{}
	}
	s.xerrs[expr] = err.Error()
}

func (s *Schema) prefixesOf(n yang.Node) map[string]string {
	mod := yang.RootNode(n)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prefixes == nil {
		s.prefixes = map[*yang.Module]map[string]string{}
	}
	m, ok := s.prefixes[mod]
	if !ok {
		m = prefixMap(n)
		s.prefixes[mod] = m
	}
	return m
}

// nav is an antchfx NodeNavigator over a data tree of dnodes. Leaves and
// leaf-list entries are element nodes whose value is their canonical
// string; containers and list entries are element nodes with children.
//
// The root has attributes that stand for nodes: @_current_ is current()
// (the node the expression is evaluated for: on it the navigator stands on
// that node, whose parent and children it then walks), and @_ix_N is the
// list entry an indexed lookup finds (see indexLookups). An attribute is
// found in O(1); a child of the root would be searched for among all the
// top-level nodes (every SR Linux interface) at each use.
type nav struct {
	n    *dnode
	cur  *dnode // what current() is
	x    *xexprs
	attr int // 0: on n; 1: on @_current_; 2+i: on @_ix_i
}

func (v *nav) NodeType() xpath.NodeType {
	if v.attr > 0 {
		return xpath.AttributeNode
	}
	if v.n.parent == nil {
		return xpath.RootNode
	}
	return xpath.ElementNode
}

func (v *nav) LocalName() string {
	switch {
	case v.attr == 1:
		return currentName
	case v.attr > 1:
		return ixName(v.attr - 2)
	}
	return v.n.name
}

func (v *nav) Prefix() string { return "" }

func (v *nav) Value() string {
	if v.n.isLeaf {
		return v.n.val
	}
	// The string value of an inner node is the concatenation of its text
	// descendants (XPath 1.0 section 5.1).
	var b strings.Builder
	var walk func(d *dnode)
	walk = func(d *dnode) {
		if d.isLeaf {
			b.WriteString(d.val)
			return
		}
		for _, k := range d.kids {
			walk(k)
		}
	}
	walk(v.n)
	return b.String()
}

func (v *nav) Copy() xpath.NodeNavigator { c := *v; return &c }

func (v *nav) MoveToRoot() {
	for v.n.parent != nil {
		v.n = v.n.parent
	}
	v.attr = 0
}

func (v *nav) MoveToParent() bool {
	if v.n.parent == nil {
		return false
	}
	v.attr = 0
	v.n = v.n.parent
	return true
}

func (v *nav) MoveToNextAttribute() bool {
	if v.cur == nil || (v.attr == 0 && v.n.parent != nil) {
		return false
	}
	if v.attr == 0 {
		v.n, v.attr = v.cur, 1
		return true
	}
	for i := v.attr - 1; v.x != nil && i < len(v.x.specs()); i++ {
		if e := v.x.lookup(i, v.cur); e != nil {
			v.n, v.attr = e, i+2
			return true
		}
	}
	return false
}

func (v *nav) MoveToChild() bool {
	if len(v.n.kids) == 0 {
		return false
	}
	v.attr = 0
	v.n = v.n.kids[0]
	return true
}

func (v *nav) MoveToFirst() bool {
	p := v.n.parent
	if v.attr > 0 || p == nil || v.n.idx < 0 {
		return false
	}
	v.n = p.kids[0]
	return true
}

func (v *nav) MoveToNext() bool {
	p := v.n.parent
	if v.attr > 0 || p == nil || v.n.idx < 0 || v.n.idx+1 >= len(p.kids) {
		return false
	}
	v.n = p.kids[v.n.idx+1]
	return true
}

func (v *nav) MoveToPrevious() bool {
	p := v.n.parent
	if v.attr > 0 || p == nil || v.n.idx <= 0 {
		return false
	}
	v.n = p.kids[v.n.idx-1]
	return true
}

func (v *nav) MoveTo(o xpath.NodeNavigator) bool {
	w, ok := o.(*nav)
	if !ok {
		return false
	}
	*v = *w
	return true
}

// evalBool evaluates a compiled expression with context node ctx (also
// current()) and returns its boolean value (XPath 1.0 boolean()). An
// expression that does not depend on its context (sonic-port's when on
// lanes reads only DEVICE_METADATA) is evaluated once per validation.
func (x *xexprs) evalBool(e *xpath.Expr, ctx *dnode) bool {
	abs, known := x.absolute[e]
	if !known {
		abs = contextFree(e.String())
		if x.absolute == nil {
			x.absolute = map[*xpath.Expr]bool{}
		}
		x.absolute[e] = abs
	}
	if abs {
		if r, ok := x.results[e]; ok {
			return r
		}
	}
	r := x.evalBoolNow(e, ctx)
	if abs {
		if x.results == nil {
			x.results = map[*xpath.Expr]bool{}
		}
		x.results[e] = r
	}
	return r
}

// anchorRelative starts every relative location path of a rewritten
// expression that is outside predicates at current() (/@_current_/): there
// the context node is current() (RFC 7950 section 6.4.1), so the meaning is
// unchanged. It works around antchfx v1.3.9: a comparison (=, !=, <, ...)
// evaluates its left operand, whose predicates move the shared context
// navigator (filterQuery.Select: t.Current().MoveTo(node)), and then its
// right operand from wherever that left it (logicalQuery.Evaluate does not
// restore it; numericQuery and booleanQuery do). SR Linux's
// "/qos/buffer-management/buffer-allocation-profile[...]/queues/queue[...]/queue-name
// = ../queue-name" therefore read ../queue-name from the profile's queue
// and was false although both sides are "unicast-3". An absolute path
// starts from the root, wherever the navigator stands. Relative paths
// inside predicates keep their context (the candidate node) and the
// limitation: a comparison there with a filtered left operand and a
// relative right one would still be misread (none of the shipped modules
// has one).
func anchorRelative(expr string) string {
	var b strings.Builder
	depth := 0
	prev := byte(0) // previous non-space character outside literals
	anchor := func() { b.WriteString("/@" + currentName + "/") }
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(expr[i+1:], c)
			if j < 0 {
				b.WriteString(expr[i:])
				return b.String()
			}
			b.WriteString(expr[i : i+j+2])
			i += j + 1
			prev = c
			continue
		case c == '[':
			depth++
		case c == ']':
			depth--
		case c == '.' && depth == 0 && prev != '/' && prev != '.' && !(prev >= '0' && prev <= '9') && !(i+1 < len(expr) && expr[i+1] >= '0' && expr[i+1] <= '9'):
			anchor()
			j := i
			for j < len(expr) && expr[j] == '.' {
				j++
			}
			b.WriteString(expr[i:j])
			i = j - 1
			prev = '.'
			continue
		case isNameStart(c):
			j := i
			for j < len(expr) && isNameChar(expr[j]) {
				j++
			}
			name := expr[i:j]
			k := j
			for k < len(expr) && (expr[k] == ' ' || expr[k] == '\t' || expr[k] == '\n') {
				k++
			}
			isCall := k < len(expr) && expr[k] == '('
			operator := name == "and" || name == "or" || name == "div" || name == "mod"
			if depth == 0 && !isCall && !operator && prev != '/' && prev != '@' && prev != ':' {
				anchor()
			}
			b.WriteString(name)
			i = j - 1
			prev = 'a'
			continue
		}
		b.WriteByte(c)
		if c != ' ' && c != '\t' && c != '\n' {
			prev = c
		}
	}
	return b.String()
}

// contextFree reports whether a rewritten expression reads only absolute
// paths: outside predicates no relative step (a name not after "/", ".",
// "..") and no current() (/@_current_, /@_ix_N). Predicates are evaluated
// on the nodes the absolute path selects, so their relative names do not
// depend on the context node. Function names and operator names are not
// steps.
func contextFree(expr string) bool {
	if strings.Contains(expr, "/@") {
		return false
	}
	depth := 0
	prev := byte(0) // previous non-space character outside literals
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(expr[i+1:], c)
			if j < 0 {
				return false
			}
			i += j + 1
			prev = c
			continue
		case c == '[':
			depth++
		case c == ']':
			depth--
		case c == '*' && depth == 0 && prev != '/' && prev != ')' && prev != ']' && prev != 'a' && !(prev >= '0' && prev <= '9'):
			return false // a relative wildcard step, not a product
		case c == '.' && depth == 0 && !(prev >= '0' && prev <= '9') && !(i+1 < len(expr) && expr[i+1] >= '0' && expr[i+1] <= '9'):
			return false
		case isNameStart(c):
			j := i
			for j < len(expr) && isNameChar(expr[j]) {
				j++
			}
			name := expr[i:j]
			k := j
			for k < len(expr) && (expr[k] == ' ' || expr[k] == '\t' || expr[k] == '\n') {
				k++
			}
			isCall := k < len(expr) && expr[k] == '('
			operator := name == "and" || name == "or" || name == "div" || name == "mod"
			if depth == 0 && !isCall && !operator && prev != '/' {
				return false
			}
			i = j - 1
			prev = 'a'
			continue
		}
		if c != ' ' && c != '\t' && c != '\n' {
			prev = c
		}
	}
	return true
}

func (x *xexprs) evalBoolNow(e *xpath.Expr, ctx *dnode) bool {
	res := e.Evaluate(&nav{n: ctx, cur: ctx, x: x})
	switch r := res.(type) {
	case bool:
		return r
	case float64:
		return r != 0 && r == r
	case string:
		return r != ""
	case *xpath.NodeIterator:
		return r.MoveNext()
	}
	return false
}

// evalNodes evaluates a compiled expression with context node ctx and
// returns the data nodes it selects.
func (x *xexprs) evalNodes(e *xpath.Expr, ctx *dnode) []*dnode {
	it := e.Select(&nav{n: ctx, cur: ctx, x: x})
	var out []*dnode
	for it.MoveNext() {
		n := it.Current().(*nav)
		out = append(out, n.n)
	}
	return out
}

// Indexed lookups. The models look list entries up by key from the node
// being validated: /interface[name=current()]/breakout-mode,
// /interface[name=current()/../interface]/subinterface[...]. Evaluated
// as written, each lookup scans the whole list, so validating n ports costs
// n^2 predicate evaluations (about 0.6 s for 64 SR Linux ports). After the
// YANG idioms are rewritten, indexLookups turns such a step,
//
//	/a/b/list[key = /@_current_(/..|/name)*]
//
// (an absolute path without predicates, one key compared with current()
// or a plain path from it), into /@_ix_N: the navigator finds the entry in
// a map built once per validation. XPath's = over node-sets is true when
// some pair of string values is equal; the map compares the string value
// of the first node the value path reaches (leaves are single-valued).
var reIndexed = regexp.MustCompile(`(^|[\s(,=<>!|+*])((?:/[A-Za-z_][\w.-]*)+)\[\s*([A-Za-z_][\w.-]*)\s*=\s*/@` + currentName + `((?:/(?:\.\.|[A-Za-z_][\w.-]*))*)\s*\]`)

type ixSpec struct {
	list  []string // steps of the list's path (from the root, or from base)
	key   string
	value []string // steps from current(): ".." or a child name
	// up > 0: the list's path starts at current()'s up-th ancestor and the
	// key is compared with the literal constant (sonic-pfcwd:
	// current()/../../PFC_WD_LIST[ifname='GLOBAL']).
	up       int
	constant string
}

// reRelIndexed is the relative form: current() up to an ancestor, down to a
// list, one key compared with a string literal.
var reRelIndexed = regexp.MustCompile(`/@` + currentName + `((?:/\.\.)+)((?:/[A-Za-z_][\w.-]*)+)\[\s*([A-Za-z_][\w.-]*)\s*=\s*'([^']*)'\s*\]`)

func ixName(i int) string { return "_ix_" + strconv.Itoa(i) }

// indexLookups rewrites the indexed lookups of an (already rewritten)
// expression, registering their specs with the schema.
func (s *Schema) indexLookups(expr string) string {
	expr = reRelIndexed.ReplaceAllStringFunc(expr, func(m string) string {
		g := reRelIndexed.FindStringSubmatch(m)
		spec := ixSpec{up: strings.Count(g[1], ".."), list: strings.Split(strings.TrimPrefix(g[2], "/"), "/"), key: g[3], constant: g[4]}
		return "/@" + ixName(s.registerIndex(m, spec))
	})
	return reIndexed.ReplaceAllStringFunc(expr, func(m string) string {
		g := reIndexed.FindStringSubmatch(m)
		spec := ixSpec{list: strings.Split(strings.TrimPrefix(g[2], "/"), "/"), key: g[3]}
		if g[4] != "" {
			spec.value = strings.Split(strings.TrimPrefix(g[4], "/"), "/")
		}
		return g[1] + "/@" + ixName(s.registerIndex(g[2]+"|"+g[3]+"|"+g[4], spec))
	})
}

// registerIndex returns the number of an indexed lookup, adding it.
func (s *Schema) registerIndex(k string, spec ixSpec) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ixByKey == nil {
		s.ixByKey = map[string]int{}
	}
	i, ok := s.ixByKey[k]
	if !ok {
		i = len(s.ixSpecs)
		s.ixSpecs = append(s.ixSpecs, spec)
		s.ixByKey[k] = i
	}
	return i
}

func (x *xexprs) specs() []ixSpec {
	x.s.mu.Lock()
	defer x.s.mu.Unlock()
	if len(x.specCopy) != len(x.s.ixSpecs) {
		x.specCopy = append([]ixSpec(nil), x.s.ixSpecs...)
	}
	return x.specCopy
}

// lookup returns the entry spec i finds for current node cur, or nil.
func (x *xexprs) lookup(i int, cur *dnode) *dnode {
	sp := x.specs()[i]
	if sp.up > 0 {
		base := cur
		for j := 0; j < sp.up && base != nil; j++ {
			base = base.parent
		}
		if base == nil {
			return nil
		}
		k := relKey{i, base}
		idx, ok := x.relIndex[k]
		if !ok {
			idx = buildIndex(base, sp)
			if x.relIndex == nil {
				x.relIndex = map[relKey]map[string]*dnode{}
			}
			x.relIndex[k] = idx
		}
		return idx[sp.constant]
	}
	d := cur
	for _, st := range sp.value {
		if d == nil {
			return nil
		}
		if st == ".." {
			d = d.parent
			continue
		}
		var next *dnode
		for _, k := range d.kids {
			if k.name == st {
				next = k
				break
			}
		}
		d = next
	}
	if d == nil || !d.isLeaf {
		return nil
	}
	idx := x.index[i]
	if idx == nil {
		root := cur
		for root.parent != nil {
			root = root.parent
		}
		idx = buildIndex(root, sp)
		if x.index == nil {
			x.index = map[int]map[string]*dnode{}
		}
		x.index[i] = idx
	}
	return idx[d.val]
}

type relKey struct {
	spec int
	base *dnode
}

// buildIndex maps the key values of the entries of spec's list below base
// to the (first) entry.
func buildIndex(base *dnode, sp ixSpec) map[string]*dnode {
	idx := map[string]*dnode{}
	level := []*dnode{base}
	for _, st := range sp.list {
		var next []*dnode
		for _, n := range level {
			for _, k := range n.kids {
				if k.name == st {
					next = append(next, k)
				}
			}
		}
		level = next
	}
	for _, e := range level {
		for _, k := range e.kids {
			if k.name == sp.key && k.isLeaf {
				if _, dup := idx[k.val]; !dup {
					idx[k.val] = e
				}
			}
		}
	}
	return idx
}

// SR Linux writes boolean tests as `. = false()`, `true() = ../vlan-tagging`
// or `boolean(/qos/preserve-dscp) = false()`, meaning "the leaf's value is
// false". In XPath 1.0 (section 3.4) comparing a node-set with a boolean
// converts the node-set to a boolean (non-empty = true), so taken literally
// `. = false()` is false for every existing leaf, even one that is false,
// and SR Linux would refuse every interface (swap-src-dst-mac defaults to
// false). libyang evaluates it literally. The device evidently compares the
// value, so vendorBooleans rewrites the idiom before evaluation, with an
// absent leaf counting as false:
//
//	P = true()  -> P = string(true())
//	P = false() -> (P = string(false()) or not(P))
//	P != true() -> not(P = string(true()))
//	P != false()-> P = string(true())
//
// where P is current(), a location path (predicates without nested
// brackets allowed), or boolean(such a path). The referee (yanglint, in the
// tests) reads modules with the same rewrite applied (srlIdioms), as it does
// for vendorNotEqual's; see the README's table of idioms.
var (
	boolPath    = `[A-Za-z0-9_./:-]+(?:\[[^\[\]]*\][A-Za-z0-9_./:-]*)*`
	boolOperand = `(current\(\)|boolean\(` + boolPath + `\)|` + boolPath + `)`
	boolLeftRE  = regexp.MustCompile(`(^|[\s("'])` + boolOperand + `\s*(!?=)\s*(true|false)\(\)`)
	boolRightRE = regexp.MustCompile(`(^|[\s("'])(true|false)\(\)\s*(!?=)\s*` + boolOperand + `($|[\s)"'])`)
)

func vendorBooleans(expr string) string {
	if !strings.Contains(expr, "true()") && !strings.Contains(expr, "false()") {
		return expr
	}
	expr = boolLeftRE.ReplaceAllStringFunc(expr, func(m string) string {
		g := boolLeftRE.FindStringSubmatch(m)
		return g[1] + boolCompare(g[2], g[3], g[4])
	})
	return boolRightRE.ReplaceAllStringFunc(expr, func(m string) string {
		g := boolRightRE.FindStringSubmatch(m)
		return g[1] + boolCompare(g[4], g[3], g[2]) + g[5]
	})
}

func boolCompare(p, op, lit string) string {
	if strings.HasPrefix(p, "boolean(") {
		p = strings.TrimSuffix(strings.TrimPrefix(p, "boolean("), ")")
	}
	if op == "!=" {
		if lit == "true" {
			lit = "false"
		} else {
			lit = "true"
		}
	}
	if lit == "true" {
		return p + " = string(true())"
	}
	return "(" + p + " = string(false()) or not(" + p + "))"
}

// srlIdioms rewrites the SR Linux idioms libyang reads differently from the
// device (vendorBooleans, then vendorNotEqual). It is applied to SR Linux
// expressions before evaluation and, in the tests, to the whole text of the
// SR Linux modules the referee reads.
func srlIdioms(expr string) string {
	return vendorNotEqual(vendorBooleans(expr))
}

// SR Linux writes "the leaf is not X" as `P != 'X'` where P is a leaf that
// may be absent:
//
//	scheduler sequence: (. = 0 and ../priority = 'strict') or (. = 1 and ../priority != 'strict')
//	ipv4 admin-state:   . = 'disable' or (../../type != 'bridged' and ../../type != 'local-mirror-dest')
//	scheduler tier:     (. = 1) or (. = 0 and ../inputs/inputs != 'auto-input')
//
// In XPath 1.0 (section 3.4) a comparison with an empty node-set is false,
// so taken literally (as libyang does) a weighted scheduler, whose priority
// leaf (enum strict only) is absent, violates the first must whatever its
// sequence, and the second refuses IPv4 on every subinterface without a
// type, although the type leaf's own must forbids a type on system0 and
// loopback subinterfaces. SR Linux accepts both: Nokia's SR Linux QoS Guide
// (24.3, 24.10, "Output queue scheduler policies") says scheduler 1 "must
// have no priority configuration defined, which provides WRR scheduling
// behavior" and configures it as `scheduler 1 { input q1 { queue-name
// unicast-1 weight 1 } }`, with no priority. The device reads an absent leaf
// as "not equal", so vendorNotEqual rewrites
//
//	P != 'lit'  -> not(P = 'lit')
//	'lit' != P  -> not(P = 'lit')
//
// where P is ".", current() or a location path (predicates without nested
// brackets allowed) and 'lit' a string literal. For a path that selects
// one existing leaf both forms are equal; for an absent one the rewrite is
// true. Every such P in the shipped SR Linux modules selects at most one
// leaf (a leaf-list P would change meaning: "some value differs" becomes
// "no value equals"). Comparisons of strings (string(P) with the empty
// string), numbers and booleans are left alone: they have no empty operand.
// Read this way one must gets stricter than libyang: num-breakout-ports 1
// or 3 without a transceiver functional-type is refused ("transceiver
// functional-type must be digital-coherent-optics when ...", as its
// error-message says), where the literal reading accepts it.
var (
	neLiteral = `('[^']*'|"[^"]*")`
	neOperand = `(current\(\)|` + boolPath + `)`
	neLeftRE  = regexp.MustCompile(`(^|[\s("'])` + neOperand + `\s*!=\s*` + neLiteral)
	neRightRE = regexp.MustCompile(`(^|[\s("'])` + neLiteral + `\s*!=\s*` + neOperand + `($|[\s)"'])`)
)

func vendorNotEqual(expr string) string {
	if !strings.Contains(expr, "!=") {
		return expr
	}
	expr = neLeftRE.ReplaceAllStringFunc(expr, func(m string) string {
		g := neLeftRE.FindStringSubmatch(m)
		return g[1] + "not(" + g[2] + " = " + g[3] + ")"
	})
	return neRightRE.ReplaceAllStringFunc(expr, func(m string) string {
		g := neRightRE.FindStringSubmatch(m)
		return g[1] + "not(" + g[3] + " = " + g[2] + ")" + g[4]
	})
}
