package intent

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

// The decoder walks a yaml.Node tree into the raw* structs of rawtypes.go.
// It exists because yaml.v3's own decoding loses positions and stops being
// strict once a type implements UnmarshalYAML: here every value keeps its
// line and column, unknown and duplicate keys are errors, and all errors of a
// file are collected rather than the first.
//
// Struct tags on raw types:
//
//	yaml:"name"      the key
//	required:"true"  missing key is an error
//	range:"lo,hi"    inclusive bounds for integers
//	doc:"..."        description (JSON Schema, docs)
//	enum, enumfrom   allowed values (JSON Schema; resolve checks them)
//
// The tags of each raw type are read once, into a codec (codecFor): the
// walk over the nodes then indexes tables. A field added to a raw type with
// its tags is decoded with nothing else to change. The field path an error
// names is kept as a stack and formatted only for an error; what each
// spelling of a unit (400G) decoded to is remembered per file.
// TestDecodeReferee holds the results, errors and positions to those of the
// decoder before (testdata/referee).

// nodeDecoder is implemented by raw types that read their own node (units,
// links).
type nodeDecoder interface {
	decodeNode(n *yaml.Node) error
}

// maxVisitsFloor bounds alias expansion: a document may expand to at most
// max(maxVisitsFloor, 16 x its own node count) nodes, which stops "billion
// laughs" alias bombs in microseconds. The nodes are counted only once a
// document has expanded to maxVisitsFloor.
const maxVisitsFloor = 1_000_000

type decoder struct {
	file      string
	errs      *errList
	root      *yaml.Node // the document, counted when visits pass maxVisitsFloor
	visits    int
	maxVisits int // 0 until counted
	bombed    bool
	// units remembers what a scalar with a unit (400G, 3m) decoded to:
	// an inventory repeats a few spellings thousands of times.
	units map[unitKey]reflect.Value
	path  []pathPart // where the value being decoded is
	// keys is a stack of the keys of the mappings being read that keep
	// their keys' positions (a raw type's Keys): a mapping's are
	// keys[start:] until it is read, then they are copied to arena.
	keys  []keyPos
	arena fieldArena
}

// unitKey is one scalar as a unit type reads it (decodeNode reads the
// value and its tag only).
type unitKey struct {
	c          *codec
	tag, value string
}

func (d *decoder) pos(n *yaml.Node) Pos { return Pos{File: d.file, Line: n.Line, Col: n.Column} }

func (d *decoder) errorf(n *yaml.Node, format string, a ...any) {
	d.errs.add(d.pos(n), d.pathString(), format, a...)
}

var (
	fieldsType      = reflect.TypeOf(Fields{})
	posType         = reflect.TypeOf(Pos{})
	nodeDecoderType = reflect.TypeOf((*nodeDecoder)(nil)).Elem()
)

// pathPart is one step of the field path of the value being decoded: a
// mapping key, or a list element (named by elemName). The decoder keeps the
// steps on a stack and formats the path only when an error names it:
// decoding a fabric of 16,000 hosts formats no path at all.
type pathPart struct {
	key   string
	elem  *yaml.Node // a list element's node; nil for a key
	index int        // a list element's index
}

func (d *decoder) push(p pathPart) { d.path = append(d.path, p) }
func (d *decoder) pop()            { d.path = d.path[:len(d.path)-1] }

// pathString is the field path as errors spell it: policy.classes[roce].dscp.
func (d *decoder) pathString() string {
	path := ""
	for _, p := range d.path {
		if p.elem != nil {
			path += "[" + elemName(p.elem, p.index) + "]"
		} else {
			path = joinPath(path, p.key)
		}
	}
	return path
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "null"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "an alias"
}

// kind is kindName, except under credentials: a value written there may be
// a secret in the wrong place (credentials: "admin:hunter2"), and errors are
// printed, logged and kept in CI output, so it is not shown.
func (d *decoder) kind(n *yaml.Node) string {
	if secretPath(d.pathString()) && n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		return "a value (not shown: it may be a secret)"
	}
	return kindName(n)
}

// secretPath reports whether path is, or is inside, a switch's credentials.
func secretPath(path string) bool {
	return strings.Contains(path, ".credentials") || strings.HasSuffix(path, "]credentials")
}

// visit counts one node against the alias budget; false once it is spent
// (reported once).
func (d *decoder) visit(n *yaml.Node) bool {
	if d.bombed {
		return false
	}
	d.visits++
	if d.visits > maxVisitsFloor && d.maxVisits == 0 {
		d.maxVisits = max(maxVisitsFloor, 16*countNodes(d.root))
	}
	if d.maxVisits > 0 && d.visits > d.maxVisits {
		d.bombed = true
		d.errorf(n, "document expands to more than %d nodes through aliases (alias bomb?); refusing to read further", d.maxVisits)
		return false
	}
	return true
}

// codec is what the decoder knows of one Go type, worked out once per type
// from its reflection and struct tags (codecFor): the per-node loop then
// only indexes tables.
type codec struct {
	typ       reflect.Type
	kind      reflect.Kind
	self      bool   // *T implements nodeDecoder
	unit      bool   // ... and T is a number read from one scalar (Size, Rate, ...)
	elem      *codec // pointer and slice element
	fields    []fieldInfo
	byKey     map[string]int // key -> index into fields
	posIndex  int            // the struct's Pos field, or -1
	keysIndex int            // the struct's Keys Fields field, or -1
}

type fieldInfo struct {
	index    int
	key      string
	codec    *codec
	required bool
	lo, hi   int64
	hasRange bool
}

// maxStructFields bounds the keyed fields of one raw type (fieldSet).
const maxStructFields = 256

// fieldSet marks the fields of one mapping that were written.
type fieldSet [maxStructFields / 64]uint64

func (s *fieldSet) has(i int) bool { return s[i/64]&(1<<(i%64)) != 0 }
func (s *fieldSet) set(i int)      { s[i/64] |= 1 << (i % 64) }

var codecs sync.Map // reflect.Type -> *codec

// codecFor returns t's codec, building it (and those of the types it
// holds) on first use.
func codecFor(t reflect.Type) *codec {
	if c, ok := codecs.Load(t); ok {
		return c.(*codec)
	}
	c := buildCodec(t, map[reflect.Type]*codec{})
	actual, _ := codecs.LoadOrStore(t, c)
	return actual.(*codec)
}

func buildCodec(t reflect.Type, building map[reflect.Type]*codec) *codec {
	if c, ok := codecs.Load(t); ok {
		return c.(*codec)
	}
	if c, ok := building[t]; ok {
		return c // a type that holds itself
	}
	c := &codec{typ: t, kind: t.Kind(), posIndex: -1, keysIndex: -1}
	building[t] = c
	c.self = reflect.PointerTo(t).Implements(nodeDecoderType)
	if c.self {
		switch t.Kind() {
		case reflect.Int64, reflect.Float64:
			c.unit = true
		}
		return c
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice:
		c.elem = buildCodec(t.Elem(), building)
	case reflect.Struct:
		c.byKey = map[string]int{}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if f.Type == posType && f.Name == "Pos" {
				c.posIndex = i
				continue
			}
			if f.Type == fieldsType {
				if f.Name == "Keys" {
					c.keysIndex = i
				}
				continue
			}
			key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if key == "" || key == "-" {
				continue
			}
			fi := fieldInfo{index: i, key: key, required: f.Tag.Get("required") == "true", codec: buildCodec(f.Type, building)}
			if r := f.Tag.Get("range"); r != "" {
				lo, hi, _ := strings.Cut(r, ",")
				fi.lo, _ = strconv.ParseInt(lo, 10, 64)
				fi.hi, _ = strconv.ParseInt(hi, 10, 64)
				fi.hasRange = true
			}
			c.byKey[key] = len(c.fields)
			c.fields = append(c.fields, fi)
		}
		if len(c.fields) > maxStructFields {
			panic(fmt.Sprintf("intent: %s has %d YAML fields; the decoder takes at most %d", t, len(c.fields), maxStructFields))
		}
	}
	return c
}

// decode fills v (addressable, of c's type) from n. It reports errors and
// never panics.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, c *codec) {
	if !d.visit(n) {
		return
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			d.errorf(n, "unknown alias")
			return
		}
		d.decode(n.Alias, v, c)
		return
	}
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return
		}
		d.decode(n.Content[0], v, c)
		return
	}
	if c.self {
		cache := c.unit && n.Kind == yaml.ScalarNode
		if cache {
			if u, ok := d.units[unitKey{c, n.Tag, n.Value}]; ok {
				v.Set(u)
				return
			}
		}
		if err := v.Addr().Interface().(nodeDecoder).decodeNode(n); err != nil {
			d.errorf(n, "%v", err)
			return
		}
		if cache {
			if d.units == nil {
				d.units = map[unitKey]reflect.Value{}
			}
			u := reflect.New(c.typ).Elem() // a copy: v may be written again (merge keys)
			u.Set(v)
			d.units[unitKey{c, n.Tag, n.Value}] = u
		}
		return
	}
	switch c.kind {
	case reflect.Pointer:
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			return // explicit null = not set
		}
		nv := reflect.New(c.elem.typ)
		d.decode(n, nv.Elem(), c.elem)
		v.Set(nv)
	case reflect.Struct:
		d.decodeStruct(n, v, c)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.errorf(n, "want a list, got %s", d.kind(n))
			return
		}
		s := reflect.MakeSlice(c.typ, len(n.Content), len(n.Content))
		for i, e := range n.Content {
			d.push(pathPart{elem: e, index: i})
			d.decode(e, s.Index(i), c.elem)
			d.pop()
		}
		v.Set(s)
	case reflect.String:
		if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
			d.errorf(n, "want a string, got %s", d.kind(n))
			return
		}
		v.SetString(n.Value)
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
			d.errorf(n, "want true or false, got %s", d.kind(n))
			return
		}
		v.SetBool(n.Value == "true" || n.Value == "True" || n.Value == "TRUE")
	case reflect.Int, reflect.Int64:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
			d.errorf(n, "want an integer, got %s", d.kind(n))
			return
		}
		i, err := strconv.ParseInt(n.Value, 0, 64)
		if err != nil {
			d.errorf(n, "integer %s is out of range", n.Value)
			return
		}
		v.SetInt(i)
	case reflect.Float64:
		if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
			d.errorf(n, "want a number, got %s", d.kind(n))
			return
		}
		f, err := strconv.ParseFloat(n.Value, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			d.errorf(n, "number %s is not finite", n.Value)
			return
		}
		v.SetFloat(f)
	default:
		d.errorf(n, "internal: cannot decode into %s", c.typ)
	}
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, c *codec) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "want a mapping, got %s", d.kind(n))
		return
	}
	if c.posIndex >= 0 {
		*v.Field(c.posIndex).Addr().Interface().(*Pos) = d.pos(n)
	}
	// A raw type with a field "Keys Fields" learns where each of its keys
	// is: they are gathered on d.keys from start (-1: not kept).
	start := -1
	if c.keysIndex >= 0 {
		start = len(d.keys)
	}
	var seen fieldSet
	var seenOther map[string]*yaml.Node // keys that are no field (made when one is written)
	// YAML merge keys (<<: *defaults) first, so explicit keys override them.
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.Value == "<<" && k.Tag == "!!merge" {
			d.decodeMerge(n.Content[i+1], v, c, start)
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.errorf(k, "keys must be plain strings")
			continue
		}
		if k.Value == "<<" && k.Tag == "!!merge" {
			continue
		}
		fi, ok := c.byKey[k.Value]
		if ok {
			if seen.has(fi) {
				d.push(pathPart{key: k.Value})
				d.errorf(k, "duplicate key (first defined at line %d)", firstKey(n, i).Line)
				d.pop()
				continue
			}
			seen.set(fi)
		} else {
			if first, dup := seenOther[k.Value]; dup {
				d.push(pathPart{key: k.Value})
				d.errorf(k, "duplicate key (first defined at line %d)", first.Line)
				d.pop()
				continue
			}
			if seenOther == nil {
				seenOther = map[string]*yaml.Node{}
			}
			seenOther[k.Value] = k
			if len(d.path) == 0 && strings.HasPrefix(k.Value, "x-") {
				continue // top-level x-* keys hold YAML anchors, as in docker compose
			}
			d.errorf(k, "unknown field %q%s", k.Value, suggest(k.Value, c.fields))
			continue
		}
		f := &c.fields[fi]
		if start >= 0 {
			d.keys = setKey(d.keys, start, &f.key, val.Line, val.Column)
		}
		fv := v.Field(f.index)
		before := len(d.errs.errs)
		d.push(pathPart{key: k.Value})
		d.decode(val, fv, f.codec)
		if f.hasRange && len(d.errs.errs) == before {
			d.checkRange(val, fv, f)
		}
		d.pop()
	}
	for fi := range c.fields {
		if f := &c.fields[fi]; f.required && !seen.has(fi) && v.Field(f.index).IsZero() {
			d.push(pathPart{key: f.key})
			d.errorf(n, "required field is missing")
			d.pop()
		}
	}
	if start >= 0 {
		*v.Field(c.keysIndex).Addr().Interface().(*Fields) = d.arena.fields(d.file, d.keys[start:])
		d.keys = d.keys[:start]
	}
}

// firstKey is the first key of mapping n written like its i-th (a
// duplicate's first definition).
func firstKey(n *yaml.Node, i int) *yaml.Node {
	k := n.Content[i]
	for j := 0; j < i; j += 2 {
		if p := n.Content[j]; p.Kind == yaml.ScalarNode && p.Value == k.Value && (p.Value != "<<" || p.Tag != "!!merge") {
			return p
		}
	}
	return k
}

// decodeMerge applies the value of a merge key (<<) to v: a mapping, or a
// list of mappings of which the earlier ones win (YAML's merge key type, as
// yaml.v3 implements it). A merged mapping's own merge keys apply first, so
// its explicit keys override them. Every merge counts against the alias
// budget: lists of aliased lists would otherwise double at every level.
func (d *decoder) decodeMerge(n *yaml.Node, v reflect.Value, c *codec, start int) {
	if !d.visit(n) {
		return
	}
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Value == "<<" && k.Tag == "!!merge" {
				d.decodeMerge(n.Content[i+1], v, c, start)
			}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if fi, ok := c.byKey[k.Value]; ok {
				f := &c.fields[fi]
				if start >= 0 {
					d.keys = setKey(d.keys, start, &f.key, n.Content[i+1].Line, n.Content[i+1].Column)
				}
				d.push(pathPart{key: k.Value})
				d.decode(n.Content[i+1], v.Field(f.index), f.codec)
				d.pop()
			} else if k.Value != "<<" || k.Tag != "!!merge" {
				d.errorf(k, "unknown field %q (merged from line %d)", k.Value, n.Line)
			}
		}
	case yaml.SequenceNode:
		for i := len(n.Content) - 1; i >= 0; i-- {
			e := n.Content[i]
			for e.Kind == yaml.AliasNode && e.Alias != nil {
				e = e.Alias
			}
			if e.Kind != yaml.MappingNode {
				d.errorf(e, "merge key << wants a mapping or a list of mappings")
				continue
			}
			d.decodeMerge(e, v, c, start)
		}
	default:
		d.errorf(n, "merge key << wants a mapping or a list of mappings")
	}
}

func (d *decoder) checkRange(n *yaml.Node, fv reflect.Value, f *fieldInfo) {
	check := func(x int64, at *yaml.Node) {
		if x < f.lo || x > f.hi {
			d.errorf(at, "%d is out of range %d-%d", x, f.lo, f.hi)
		}
	}
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch {
	case fv.Kind() == reflect.Pointer && !fv.IsNil() && fv.Elem().Kind() == reflect.Int:
		check(fv.Elem().Int(), n)
	case fv.Kind() == reflect.Int:
		check(fv.Int(), n)
	case fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.Int && n.Kind == yaml.SequenceNode:
		for i := 0; i < fv.Len() && i < len(n.Content); i++ {
			check(fv.Index(i).Int(), n.Content[i])
		}
	}
}

// suggest returns ` (did you mean "x"?)` for a near-miss key, or the list of
// valid keys when the mapping is small.
func suggest(key string, fields []fieldInfo) string {
	best, bestD := "", 3
	keys := make([]string, 0, len(fields))
	for _, f := range fields {
		keys = append(keys, f.key)
		if dd := editDistance(strings.ToLower(key), strings.ToLower(f.key)); dd < bestD {
			best, bestD = f.key, dd
		}
	}
	if best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	sort.Strings(keys)
	return " (valid: " + strings.Join(keys, ", ") + ")"
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and swaps of two adjacent letters (the commonest
// typo: "dorp" for "drop") cost one each.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 99
	}
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// elemName names a list element in paths by its name (or interface) key, so
// errors read policy.classes[roce] rather than policy.classes[1].
func elemName(n *yaml.Node, i int) string {
	if n.Kind == yaml.MappingNode {
		for j := 0; j+1 < len(n.Content); j += 2 {
			k, v := n.Content[j], n.Content[j+1]
			if (k.Value == "name" || k.Value == "interface") && v.Kind == yaml.ScalarNode && v.Value != "" && len(v.Value) < 80 {
				return v.Value
			}
		}
	}
	return strconv.Itoa(i)
}

// countNodes counts the nodes of a tree without following aliases.
func countNodes(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	c := 1
	for _, k := range n.Content {
		c += countNodes(k)
	}
	return c
}
