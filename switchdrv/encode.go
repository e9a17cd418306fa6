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
	tree, ok = e.value(reflect.ValueOf(v))
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
	_, ok = e.value(reflect.ValueOf(v))
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

// value appends v's JSON and returns its tree (with e.tree; else nil);
// !ok: a value it does not know (e.b is then garbage).
func (e *encoder) value(v reflect.Value) (any, bool) {
	if !v.IsValid() {
		return nil, false // nil
	}
	t := v.Type()
	var info *typeInfo
	if t.PkgPath() != "" || v.Kind() == reflect.Struct {
		if info = infoOf(t); info.marshals {
			return nil, false // a named type with its own encoding
		}
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
		return e.value(v.Elem())
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
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
			el, ok := e.value(v.Index(i))
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
			mv, ok := e.value(fv)
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
}

// typeInfo is what value needs to know of a type, worked out once.
type typeInfo struct {
	marshals bool    // t or *t has its own JSON or text encoding
	fields   []field // a struct's fields (nil: not a struct value knows)
}

// typeCache holds infoOf's answers.
var typeCache sync.Map // reflect.Type -> *typeInfo

func infoOf(t reflect.Type) *typeInfo {
	if c, ok := typeCache.Load(t); ok {
		return c.(*typeInfo)
	}
	info := &typeInfo{marshals: marshals(t)}
	if t.Kind() == reflect.Struct {
		info.fields = buildFields(t)
	}
	typeCache.Store(t, info)
	return info
}

// buildFields lists the fields json.Marshal writes for struct type t,
// sorted by member name (appendSorted's order), or nil for a struct that needs json.Marshal's own rules
// (embedded fields, tag options other than omitempty, names it would
// quote or two fields of one name).
func buildFields(t reflect.Type) []field {
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
		fs = append(fs, field{index: i, name: name, member: `"` + name + `":`, key: jtree.Name(name), omitEmpty: opts == "omitempty"})
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
