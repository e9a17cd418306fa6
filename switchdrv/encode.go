package switchdrv

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/fabricctl/fabricctl/switchdrv/internal/jtree"
)

// treeOf returns the tree jtree.Typed decodes b into (member names
// without module prefixes, numbers as json.Number), built from v, the
// value JSONUpdate encoded into b (appendSorted), without parsing b:
// compare decodes a desired value this way when it needs its tree. It
// walks the shapes the compilers build (structs of strings, integers,
// bools, pointers and slices, with json tags), writing the JSON again into
// buf (returned for reuse), and answers only when that gives b exactly: a
// value changed since it was encoded, one of another shape or with a
// string json.Marshal escapes has no tree (!ok), and b is decoded as
// before.
func treeOf(v any, b, buf []byte) (tree any, _ []byte, ok bool) {
	e := encoder{b: buf[:0], tree: true}
	tree, ok = e.top(v)
	return tree, e.b, ok && bytes.Equal(e.b, b)
}

// appendSorted appends to b the JSON of v with the members of every object
// in name order, the order json.Marshal writes a map's members in, for the
// shapes treeOf knows; ok is false for others (nothing of the result is to
// be used then). It is json.Marshal's text otherwise: the same values, the
// same number and string forms. Sorted members are what ygot writes
// (v0.36.0: EmitJSON in struct_validation_map.go and Marshal7951 in
// render.go build a map and marshal it with encoding/json), so clients
// built on ygot send them and targets that answer through it (and our
// twins) read back the very text fabricctl wrote: verify then compares it
// as text (desiredValue.sameText).
//
// exact reports that the text is also what jtree.ExactText writes of its
// decoding (no null, no member name with a module prefix): compare then
// takes the text as it is (jtree.DropMembers) instead of sorting it again.
func appendSorted(b []byte, v any) (_ []byte, exact, ok bool) {
	e := encoder{b: b}
	_, ok = e.top(v)
	return e.b, ok && !e.inexact, ok
}

// encoder writes JSON with sorted members; with tree it builds the
// decoded tree of what it writes too.
type encoder struct {
	b    []byte
	tree bool
	// inexact: it wrote a null or a member name with a module prefix,
	// which jtree.ExactText would not write back as they are.
	inexact bool
}

// top appends the JSON of v (of any type) and returns its tree (with
// e.tree; else nil); !ok: a value it does not know (e.b is then garbage).
func (e *encoder) top(v any) (any, bool) {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return nil, false // nil
	}
	return e.value(rv, infoOf(rv.Type()))
}

// value appends v's JSON and returns its tree (with e.tree; else nil);
// info is v's type's (infoOf). !ok: a value it does not know (e.b is then
// garbage).
func (e *encoder) value(v reflect.Value, info *typeInfo) (any, bool) {
	if info.marshals {
		return nil, false // a named type with its own encoding
	}
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		var plain bool
		if e.b, plain = jtree.AppendPlainString(e.b, s); !plain {
			return nil, false
		}
		if !e.tree {
			return nil, true
		}
		return s, true
	case reflect.Bool:
		b := v.Bool()
		e.b = strconv.AppendBool(e.b, b)
		if !e.tree {
			return nil, true
		}
		return b, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n := len(e.b)
		e.b = strconv.AppendInt(e.b, v.Int(), 10)
		return e.number(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n := len(e.b)
		e.b = strconv.AppendUint(e.b, v.Uint(), 10)
		return e.number(n)
	case reflect.Pointer:
		if v.IsNil() {
			e.b = append(e.b, "null"...)
			e.inexact = true
			return nil, true
		}
		return e.value(v.Elem(), info.elem)
	case reflect.Slice:
		if info.bytes {
			return nil, false // []byte: base64
		}
		if v.IsNil() {
			e.b = append(e.b, "null"...)
			e.inexact = true
			return nil, true
		}
		n := v.Len()
		var list []any
		if e.tree {
			list = make([]any, n)
		}
		e.b = append(e.b, '[')
		for i := range n {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			el, ok := e.value(v.Index(i), info.elem)
			if !ok {
				return nil, false
			}
			if e.tree {
				list[i] = el
			}
		}
		e.b = append(e.b, ']')
		return list, true
	case reflect.Struct:
		fs := info.fields
		if fs == nil {
			return nil, false
		}
		var m map[string]any
		if e.tree {
			m = make(map[string]any, len(fs))
		}
		e.b = append(e.b, '{')
		first := true
		for i := range fs {
			f := &fs[i]
			fv := v.Field(f.index)
			if f.omitEmpty && empty(fv) {
				continue
			}
			if !first {
				e.b = append(e.b, ',')
			}
			first = false
			e.b = append(e.b, f.member...)
			e.inexact = e.inexact || f.key != f.name
			mv, ok := e.value(fv, f.info)
			if !ok {
				return nil, false
			}
			if e.tree {
				m[f.key] = mv
			}
		}
		e.b = append(e.b, '}')
		if !e.tree {
			return nil, true
		}
		return m, true
	}
	return nil, false
}

// number is the tree value of the number just written at e.b[n:].
func (e *encoder) number(n int) (any, bool) {
	if !e.tree {
		return nil, true
	}
	return json.Number(e.b[n:]), true
}

// field is how a struct field is encoded.
type field struct {
	index     int
	name      string // the member name
	member    string // `"name":`
	key       string // the name without module prefix: the tree's key
	omitEmpty bool
	info      *typeInfo // the field's type's
}

// typeInfo is what value needs to know of a type, worked out once, with
// the infos of the types inside it: value finds a nested value's in its
// parent's, and looks up only the type of the value it is given (top).
type typeInfo struct {
	marshals bool      // a named type or struct whose t or *t has its own JSON or text encoding
	fields   []field   // a struct's fields (nil: not a struct value knows)
	elem     *typeInfo // a pointer's or slice's element type's
	bytes    bool      // a slice of bytes (base64 in JSON, which value does not write)
}

// typeCache holds infoOf's answers.
var typeCache sync.Map // reflect.Type -> *typeInfo

// infoOf is t's info, with those of the types inside it.
func infoOf(t reflect.Type) *typeInfo {
	if c, ok := typeCache.Load(t); ok {
		return c.(*typeInfo)
	}
	built := map[reflect.Type]*typeInfo{}
	info := buildInfo(t, built)
	// Published only when complete (a type that refers to itself holds
	// its own info, made before its fields were).
	for bt, bi := range built {
		typeCache.LoadOrStore(bt, bi)
	}
	return info
}

// buildInfo works out t's info into built (the infos made so far in this
// build, by type), reusing published ones.
func buildInfo(t reflect.Type, built map[reflect.Type]*typeInfo) *typeInfo {
	if info, ok := built[t]; ok {
		return info
	}
	if c, ok := typeCache.Load(t); ok {
		return c.(*typeInfo)
	}
	info := &typeInfo{}
	built[t] = info
	// Only named types (and structs) can have methods of their own; an
	// unnamed pointer's element is checked as a type of its own.
	if t.PkgPath() != "" || t.Kind() == reflect.Struct {
		info.marshals = marshals(t)
	}
	switch t.Kind() {
	case reflect.Struct:
		info.fields = buildFields(t, built)
	case reflect.Slice:
		info.bytes = t.Elem().Kind() == reflect.Uint8
		info.elem = buildInfo(t.Elem(), built)
	case reflect.Pointer:
		info.elem = buildInfo(t.Elem(), built)
	}
	return info
}

// buildFields lists the fields json.Marshal writes for struct type t,
// sorted by member name (appendSorted's order), or nil for a struct that needs json.Marshal's own rules
// (embedded fields, tag options other than omitempty, names it would
// quote or two fields of one name).
func buildFields(t reflect.Type, built map[reflect.Type]*typeInfo) []field {
	fs := []field{}
	seen := map[string]bool{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			return nil
		}
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if opts != "" && opts != "omitempty" {
			return nil
		}
		if name == "" {
			name = sf.Name
		}
		if !plainName(name) || seen[name] {
			return nil
		}
		seen[name] = true
		fs = append(fs, field{index: i, name: name, member: `"` + name + `":`, key: jtree.Name(name), omitEmpty: opts == "omitempty",
			info: buildInfo(sf.Type, built)})
	}
	slices.SortFunc(fs, func(a, b field) int { return strings.Compare(a.name, b.name) })
	return fs
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// marshals reports whether t or *t has its own JSON or text encoding.
func marshals(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(marshalerType) || t.Implements(textMarshalerType) ||
		pt.Implements(marshalerType) || pt.Implements(textMarshalerType)
}

// empty is json's omitempty test for the kinds value encodes.
func empty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String, reflect.Slice, reflect.Map, reflect.Array:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return v.Uint() == 0
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	}
	return false
}

// plainName reports whether json.Marshal uses the tag name as is: letters,
// digits and the punctuation of YANG names (module prefix included).
func plainName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == ':' || c == '.') {
			return false
		}
	}
	return true
}
