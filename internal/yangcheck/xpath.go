package yangcheck

import (
	"fmt"
	"strings"

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
//   - current() becomes /_current_, a child of the root that the navigator
//     resolves to the node whose expression is evaluated (antchfx has no
//     user functions);
//   - re-match(s, p) becomes matches(s, concat('^(?:', p, ')$')): YANG's
//     XSD regular expressions are anchored, XPath 2.0 matches() is not;
//   - a string literal 'prefix:identity' becomes 'module:identity', the
//     JSON (RFC 7951) form the navigator gives identityref leaves.
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
				lit = r.prefixes[p] + ":" + local
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
				r.out.WriteString("/" + currentName)
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
	s     *Schema
	cache map[xkey]*xpath.Expr
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
	e, err := xpath.Compile(rewriteXPath(expr, x.s.prefixesOf(n)))
	if err != nil {
		x.s.noteXPathError(expr, err)
		x.cache[k] = nil
		return nil, fmt.Errorf("XPath %q: %w", expr, err)
	}
	x.cache[k] = e
	return e, nil
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
type nav struct {
	n    *dnode
	cur  *dnode // what current() is
	virt bool   // on the /_current_ child of the root (which is cur)
}

func (v *nav) NodeType() xpath.NodeType {
	if v.n.parent == nil && !v.virt {
		return xpath.RootNode
	}
	return xpath.ElementNode
}

func (v *nav) LocalName() string {
	if v.virt {
		return currentName
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
	v.virt = false
}

func (v *nav) MoveToParent() bool {
	if v.virt {
		v.virt = false
		// current()'s parent is its real parent.
		v.n = v.n.parent
		return v.n != nil
	}
	if v.n.parent == nil {
		return false
	}
	v.n = v.n.parent
	return true
}

func (v *nav) MoveToNextAttribute() bool { return false }

func (v *nav) MoveToChild() bool {
	if v.virt {
		if len(v.n.kids) == 0 {
			return false
		}
		v.virt = false
		v.n = v.n.kids[0]
		return true
	}
	if len(v.n.kids) > 0 {
		v.n = v.n.kids[0]
		return true
	}
	if v.n.parent == nil && v.cur != nil {
		v.n, v.virt = v.cur, true
		return true
	}
	return false
}

func (v *nav) root() *dnode {
	r := v.n
	if v.virt {
		for r.parent != nil {
			r = r.parent
		}
		return r
	}
	return r.parent
}

func (v *nav) MoveToFirst() bool {
	if v.virt {
		r := v.root()
		if len(r.kids) > 0 {
			v.n, v.virt = r.kids[0], false
		}
		return true
	}
	p := v.n.parent
	if p == nil || v.n.idx < 0 {
		return false
	}
	v.n = p.kids[0]
	return true
}

func (v *nav) MoveToNext() bool {
	if v.virt {
		return false
	}
	p := v.n.parent
	if p == nil || v.n.idx < 0 {
		return false
	}
	if v.n.idx+1 < len(p.kids) {
		v.n = p.kids[v.n.idx+1]
		return true
	}
	if p.parent == nil && v.cur != nil {
		v.n, v.virt = v.cur, true
		return true
	}
	return false
}

func (v *nav) MoveToPrevious() bool {
	if v.virt {
		r := v.root()
		if len(r.kids) == 0 {
			return false
		}
		v.n, v.virt = r.kids[len(r.kids)-1], false
		return true
	}
	p := v.n.parent
	if p == nil || v.n.idx <= 0 {
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
// current()) and returns its boolean value (XPath 1.0 boolean()).
func evalBool(e *xpath.Expr, ctx *dnode) bool {
	res := e.Evaluate(&nav{n: ctx, cur: ctx})
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
func evalNodes(e *xpath.Expr, ctx *dnode) []*dnode {
	it := e.Select(&nav{n: ctx, cur: ctx})
	var out []*dnode
	for it.MoveNext() {
		n := it.Current().(*nav)
		out = append(out, n.n)
	}
	return out
}
