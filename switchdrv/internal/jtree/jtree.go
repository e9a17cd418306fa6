package jtree

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
)

// Decode parses JSON with numbers kept as json.Number and module prefixes
// removed from member names (a later member wins when two names collide
// after removal).
func Decode(b []byte) (any, error) {
	return parse(b, true)
}

// Name strips a YANG module prefix ("srl_nokia-qos:qos" -> "qos").
func Name(s string) string {
	if i := strings.IndexByte(s, ':'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// member finds the member of m named name, with or without a module prefix
// (trees keep the names a device sent, RFC 7951 qualifiers included, while
// paths and keys name members without them). It returns the member's key in
// m ("" when absent).
func member(m map[string]any, name string) (string, any, bool) {
	if v, ok := m[name]; ok {
		return name, v, true
	}
	for k, v := range m {
		if i := strings.IndexByte(k, ':'); i >= 0 && k[i+1:] == name {
			return k, v, true
		}
	}
	return "", nil, false
}

// memberKey is the key under which name is (or is to be) stored in m.
func memberKey(m map[string]any, name string) string {
	if k, _, ok := member(m, name); ok {
		return k
	}
	return name
}

// StripPrefixes removes module prefixes from every member name, in place
// where it can, and returns the result.
func StripPrefixes(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, c := range t {
			// Maps and lists are stripped in place: a member is written
			// only when its name or (scalar) value changes.
			sc := StripPrefixes(c)
			if n := Name(k); n != k {
				delete(t, k)
				t[n] = sc
			}
		}
		return t
	case []any:
		for i := range t {
			t[i] = StripPrefixes(t[i])
		}
		return t
	}
	return v
}

// Clone deep-copies a tree.
func Clone(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, c := range t {
			m[k] = Clone(c)
		}
		return m
	case []any:
		s := make([]any, len(t))
		for i := range t {
			s[i] = Clone(t[i])
		}
		return s
	}
	return v
}

// keySets are the list keys ListKey tries, in order: the first set whose
// members are all scalars of an entry is its key. They cover the YANG lists
// of srl_nokia-qos, openconfig-qos and arista-qos-augments that fabricctl
// writes (wred-slope is keyed by traffic-type and drop-probability).
var keySets = [][]string{
	{"traffic-type", "drop-probability"},
	{"name"}, {"interface-id"}, {"id"}, {"sequence"}, {"slot"}, {"value"},
	{"queue-name"}, {"pfc-queue-name"}, {"index"}, {"priority"},
}

// ListKey returns the key member names of a list entry, nil when none of the
// known keys is present (the entry is then keyed by position).
func ListKey(entry map[string]any) []string {
	if i := keySetOf(entry); i >= 0 {
		return keySets[i]
	}
	return nil
}

// keySetOf is the index in keySets of entry's key, -1 when none is present.
func keySetOf(entry map[string]any) int {
	for i, ks := range keySets {
		ok := true
		for _, k := range ks {
			if !isScalar(entry[k]) {
				ok = false
				break
			}
		}
		if ok {
			return i
		}
	}
	return -1
}

func isScalar(v any) bool {
	switch v.(type) {
	case string, json.Number, bool, float64, int, int64, uint64:
		return true
	}
	return false
}

// Canon is the canonical text of a scalar: numbers (also numbers sent as
// strings, as JSON_IETF does for 64-bit integers and decimals) in shortest
// form, identityref module prefixes removed, booleans as true/false.
func Canon(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(t)
	case json.Number:
		return canonNumber(string(t))
	case float64:
		return canonNumber(strconv.FormatFloat(t, 'g', -1, 64))
	case int:
		return strconv.Itoa(t)
	case int64:
		return strconv.FormatInt(t, 10)
	case uint64:
		return strconv.FormatUint(t, 10)
	case string:
		return canonString(t)
	case []any:
		parts := make([]string, len(t))
		for i, e := range t {
			parts[i] = Canon(e)
		}
		sort.Strings(parts)
		return "[" + strings.Join(parts, ",") + "]"
	case map[string]any:
		keys := slices.Sorted(maps.Keys(t))
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + Canon(t[k])
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	return fmt.Sprint(v)
}

// plainInt reports whether s is already a canonical integer ("0", "-12",
// "150000"): the common case, answered without big.Rat.
func plainInt(s string) bool {
	d := s
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if d == "" || (d[0] == '0' && len(d) > 1) || d == "0" && s != d {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	return true
}

func canonString(s string) string {
	if plainInt(s) {
		return s
	}
	if isNumber(s) {
		return canonNumber(s)
	}
	return stripIdentityPrefix(s)
}

// Bounds of the numbers canonNumber normalises. No YANG numeric type needs
// more (uint64 has 20 digits, decimal64 19 with its point; a float64 is at
// most 24 characters in shortest form), and past them big.Rat's work and
// output grow with the exponent: "1.5e999999" (10 bytes) expands to a
// million digits. Longer numbers, or ones with a larger exponent, keep their
// literal text.
const (
	maxNumberLen = 64
	maxExponent  = 40
)

func isNumber(s string) bool {
	if s == "" || len(s) > maxNumberLen {
		return false
	}
	// The first byte rules out almost every string leaf (names, enums)
	// before anything that allocates.
	if c := s[0]; c != '-' && c != '.' && (c < '0' || c > '9') {
		return false
	}
	if bigExponent(s) {
		return false
	}
	_, ok := new(big.Rat).SetString(s)
	return ok && !strings.ContainsAny(s, "/xXpP_") && s != "." && !strings.HasPrefix(s, "+")
}

// bigExponent reports whether s has an exponent beyond ±maxExponent.
func bigExponent(s string) bool {
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return false
	}
	e, err := strconv.Atoi(s[i+1:])
	return err != nil || e > maxExponent || e < -maxExponent
}

func canonNumber(s string) string {
	if plainInt(s) {
		return s
	}
	if !isNumber(s) {
		return s
	}
	r, _ := new(big.Rat).SetString(s)
	if r.IsInt() {
		return r.Num().String()
	}
	return r.FloatString(9)
}

// stripIdentityPrefix removes "module-name:" from identityref values. Only a
// prefix containing '-' counts, so IPv6 addresses and times are left alone.
func stripIdentityPrefix(s string) string {
	i := strings.IndexByte(s, ':')
	if i <= 0 || i == len(s)-1 || !strings.Contains(s[:i], "-") || strings.ContainsAny(s[:i], " /") {
		return s
	}
	return s[i+1:]
}

// Int returns the integer value of a scalar number (or number string).
func Int(v any) (int64, bool) {
	s := Canon(v)
	if !plainInt(s) { // not an integer: no need for ParseInt's error
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// Text is the JSON text of a value, for display.
func Text(v any) string { return TextWithout(v, nil) }

// TextWithout is Text of v without the members named in skip at its top
// level (v's list keys, which the path of the value names already).
func TextWithout(v any, skip []string) string {
	if s, ok := v.(string); ok {
		return s
	}
	// The tree types written directly (what encoding/json would write, a
	// test holds the two equal); anything else through encoding/json.
	var buf [512]byte
	if b, ok := appendJSON(buf[:0], v, skip); ok {
		return string(b)
	}
	if m, ok := v.(map[string]any); ok && len(skip) > 0 {
		v = without(m, skip)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func without(m map[string]any, skip []string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if !slices.Contains(skip, k) {
			out[k] = v
		}
	}
	return out
}

// appendJSON appends json.Marshal's text of v (members sorted, HTML
// characters escaped) for the values a decoded tree holds; false when v
// holds anything it does not write byte for byte as encoding/json does
// (then nothing of b is to be used).
func appendJSON(b []byte, v any, skip []string) ([]byte, bool) { return appendText(b, v, skip, false) }

// ExactText appends to b the JSON text of v without the members named in
// skip at its top level, members sorted (as json.Marshal writes it), but
// only when decoding that text (Decode) gives v back exactly, less the
// skipped members: v holds only the types Decode produces, no nil map or
// slice, no member name with a ':' (Decode would strip it) and no string
// that needs an escape. ok is false otherwise (then nothing of b is to be
// used).
func ExactText(b []byte, v any, skip []string) ([]byte, bool) { return appendText(b, v, skip, true) }

// appendText is appendJSON, or with exact ExactText: the same text, but a
// nil map or slice (json.Marshal's null, which decodes to nil, not to an
// empty one) and a member name with a ':' refuse.
func appendText(b []byte, v any, skip []string, exact bool) ([]byte, bool) {
	switch t := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		return strconv.AppendBool(b, t), true
	case string:
		return AppendPlainString(b, t)
	case json.Number:
		if !validNumber(string(t)) {
			return b, false // "" (written as 0) or invalid (an error)
		}
		return append(b, t...), true
	case map[string]any:
		if t == nil {
			if exact {
				return b, false
			}
			return append(b, "null"...), true
		}
		var kbuf [16]string
		keys := kbuf[:0]
		for k := range t {
			if exact && strings.IndexByte(k, ':') >= 0 {
				return b, false
			}
			if !slices.Contains(skip, k) {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = AppendPlainString(b, k); !ok {
				return b, false
			}
			b = append(b, ':')
			if b, ok = appendText(b, t[k], nil, exact); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	case []any:
		if t == nil {
			if exact {
				return b, false
			}
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i, e := range t {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendText(b, e, nil, exact); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	}
	return b, false
}

// PlainString reports whether json.Marshal writes s between quotes as it
// is: printable ASCII other than '"', '\\' and the '<', '>', '&' that
// encoding/json escapes for HTML.
func PlainString(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// AppendPlainString appends s quoted when it needs no escaping at all
// (PlainString); otherwise it appends nothing and reports false.
func AppendPlainString(b []byte, s string) ([]byte, bool) {
	if !PlainString(s) {
		return b, false
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), true
}

// validNumber reports whether s is a JSON number (RFC 8259 grammar), as
// encoding/json requires of a json.Number it writes.
func validNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// Leaf is one flattened leaf.
type Leaf struct {
	Value any    // the value as observed (for display)
	Canon string // canonical text (for comparison)
}

// PathKey renders a path as plans, snapshots and the twin name it:
// "origin:/a/b[k=v]" with module prefixes removed ("/" for the root).
func PathKey(p *gnmipb.Path) string {
	s := ElemString(p.GetElem())
	if s == "" {
		s = "/"
	}
	if p.GetOrigin() != "" {
		s = p.GetOrigin() + ":" + s
	}
	return s
}

// ElemString renders path elems as /a/b[k=v] with prefixes removed and keys
// sorted by name.
func ElemString(elems []*gnmipb.PathElem) string {
	n := 0
	for _, e := range elems {
		n += 1 + len(e.GetName()) + 32*len(e.GetKey()) // a guess for the keys
	}
	var b strings.Builder
	b.Grow(n)
	for _, e := range elems {
		b.WriteByte('/')
		b.WriteString(Name(e.GetName()))
		keys := e.GetKey()
		switch len(keys) {
		case 0:
		case 1:
			for k, v := range keys {
				writeKey(&b, k, v)
			}
		default:
			for _, k := range slices.Sorted(maps.Keys(keys)) {
				writeKey(&b, k, keys[k])
			}
		}
	}
	return b.String()
}

func writeKey(b *strings.Builder, k, v string) {
	b.WriteByte('[')
	b.WriteString(k)
	b.WriteByte('=')
	b.WriteString(v)
	b.WriteByte(']')
}

// Flatten adds the leaves of v to out, named base + "/member[key=value]/...".
// An empty container counts as a leaf "{}" (YANG presence containers); empty
// lists are absent; leaf-lists are one leaf compared as a set.
func Flatten(v any, base string, out map[string]Leaf) {
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 {
			out[base] = Leaf{Value: map[string]any{}, Canon: "{}"}
			return
		}
		for k, c := range t {
			Flatten(c, base+"/"+Name(k), out)
		}
	case []any:
		if len(t) == 0 {
			return
		}
		if _, ok := t[0].(map[string]any); !ok {
			out[base] = Leaf{Value: t, Canon: Canon(t)}
			return
		}
		for i, e := range t {
			m, ok := e.(map[string]any)
			if !ok {
				out[fmt.Sprintf("%s[#%d]", base, i)] = Leaf{Value: e, Canon: Canon(e)}
				continue
			}
			Flatten(m, base+entryKey(m, i), out)
		}
	default:
		out[base] = Leaf{Value: v, Canon: Canon(v)}
	}
}

// EntryKey is the "[k=v]..." suffix Flatten gives a list entry (position
// "[#i]" when it has none of the known keys).
func EntryKey(m map[string]any, i int) string { return entryKey(m, i) }

func entryKey(m map[string]any, i int) string {
	ks := sortedListKey(m)
	if ks == nil {
		return "[#" + strconv.Itoa(i) + "]"
	}
	if len(ks) == 1 {
		return "[" + ks[0] + "=" + Canon(m[ks[0]]) + "]"
	}
	var b strings.Builder
	for _, k := range ks {
		writeKey(&b, k, Canon(m[k]))
	}
	return b.String()
}

// sortedKeySets are keySets, each sorted by name (the order entryKey
// writes them in).
var sortedKeySets = func() [][]string {
	out := make([][]string, len(keySets))
	for i, ks := range keySets {
		out[i] = slices.Sorted(slices.Values(ks))
	}
	return out
}()

// sortedListKey is ListKey with the names sorted.
func sortedListKey(entry map[string]any) []string {
	if i := keySetOf(entry); i >= 0 {
		return sortedKeySets[i]
	}
	return nil
}

// Get returns the node at elems below root.
func Get(root any, elems []*gnmipb.PathElem) (any, bool) {
	return (*Finder)(nil).Get(root, elems)
}

// Finder looks up many paths in trees that do not change while it is used
// (a Get of many paths): it finds list entries through an index built once
// per list and set of key names, a map from the entries' canonical keys,
// instead of scanning the list for each path. Lists are told apart by the
// address of their first element and their length; the Finder keeps them
// alive, so neither is reused while it is. The zero Finder is ready; a nil
// *Finder scans.
type Finder struct {
	lists map[listID]map[string]map[string]int // list -> key names -> key -> index
}

type listID struct {
	first *any
	n     int
}

// indexMin is the list length from which a Finder indexes a list: below
// it a scan is as quick.
const indexMin = 8

// Get returns the node at elems below root.
func (f *Finder) Get(root any, elems []*gnmipb.PathElem) (any, bool) {
	cur := root
	for _, e := range elems {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		_, child, ok := member(m, Name(e.GetName()))
		if !ok {
			return nil, false
		}
		if len(e.GetKey()) > 0 {
			list, ok := child.([]any)
			if !ok {
				return nil, false
			}
			idx := f.find(list, e.GetKey())
			if idx < 0 {
				return nil, false
			}
			child = list[idx]
		}
		cur = child
	}
	return cur, true
}

// find is findEntry through the index of list.
func (f *Finder) find(list []any, keys map[string]string) int {
	if f == nil || len(list) < indexMin || len(keys) == 0 {
		return findEntry(list, keys)
	}
	var nbuf [4]string
	names := nbuf[:0]
	for k := range keys {
		names = append(names, k)
	}
	slices.Sort(names)
	sig := names[0]
	if len(names) > 1 {
		sig = strings.Join(names, "\x00")
	}
	id := listID{&list[0], len(list)}
	if f.lists == nil {
		f.lists = map[listID]map[string]map[string]int{}
	}
	bySig := f.lists[id]
	if bySig == nil {
		bySig = map[string]map[string]int{}
		f.lists[id] = bySig
	}
	idx, ok := bySig[sig]
	if !ok {
		// A list looked up once is scanned; the index pays from the
		// second lookup on.
		bySig[sig] = nil
		return findEntry(list, keys)
	}
	if idx == nil {
		idx = make(map[string]int, len(list))
		for i, e := range list {
			m, ok := e.(map[string]any)
			if !ok {
				continue
			}
			k := compositeKey(names, func(name string) string {
				_, got, _ := member(m, name)
				return Canon(got)
			})
			if _, dup := idx[k]; !dup {
				idx[k] = i // the first match, as a scan finds
			}
		}
		bySig[sig] = idx
	}
	i, ok := idx[compositeKey(names, func(name string) string { return canonString(keys[name]) })]
	if !ok {
		return -1
	}
	return i
}

// compositeKey joins the canonical values of the key names, each preceded
// by its length, so that no two different value lists join the same.
func compositeKey(names []string, canon func(string) string) string {
	if len(names) == 1 {
		return canon(names[0])
	}
	var b strings.Builder
	for _, n := range names {
		v := canon(n)
		b.WriteString(strconv.Itoa(len(v)))
		b.WriteByte(':')
		b.WriteString(v)
	}
	return b.String()
}

func findEntry(list []any, keys map[string]string) int {
	if len(list) == 0 {
		return -1
	}
	// The wanted keys are put in canonical form once, not per candidate;
	// a candidate whose key is the same string matches without Canon (the
	// common case: a device sends names as they were written).
	type key struct{ name, raw, canon string }
	var buf [4]key
	ks := buf[:0]
	for k, want := range keys {
		ks = append(ks, key{k, want, canonString(want)})
	}
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		match := true
		for _, k := range ks {
			_, got, _ := member(m, k.name)
			if s, ok := got.(string); ok && s == k.raw {
				continue
			}
			if Canon(got) != k.canon {
				match = false
				break
			}
		}
		if match {
			return i
		}
	}
	return -1
}

// parentFor walks to the container that holds the last elem, creating
// containers and list entries on the way.
func parentFor(root map[string]any, elems []*gnmipb.PathElem) (map[string]any, error) {
	cur := root
	for _, e := range elems[:len(elems)-1] {
		next, err := child(cur, e, true)
		if err != nil {
			return nil, err
		}
		cur = next
	}
	return cur, nil
}

// child returns the container (or list entry) e names inside m.
func child(m map[string]any, e *gnmipb.PathElem, create bool) (map[string]any, error) {
	name, c, ok := member(m, Name(e.GetName()))
	if !ok {
		name = Name(e.GetName())
	}
	if len(e.GetKey()) == 0 {
		if !ok {
			if !create {
				return nil, nil
			}
			n := map[string]any{}
			m[name] = n
			return n, nil
		}
		cm, ok := c.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s is not a container", name)
		}
		return cm, nil
	}
	var list []any
	if ok {
		if list, ok = c.([]any); !ok {
			return nil, fmt.Errorf("%s is not a list", name)
		}
	}
	if i := findEntry(list, e.GetKey()); i >= 0 {
		em, ok := list[i].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s entry is not an object", name)
		}
		return em, nil
	}
	if !create {
		return nil, nil
	}
	entry := map[string]any{}
	for k, v := range e.GetKey() {
		entry[k] = v
	}
	m[name] = append(list, entry)
	return entry, nil
}

// Replace puts v at elems (below root, which must be non-empty elems),
// replacing whatever was there.
func Replace(root map[string]any, elems []*gnmipb.PathElem, v any) error {
	if len(elems) == 0 {
		return fmt.Errorf("replace at the root needs the caller")
	}
	parent, err := parentFor(root, elems)
	if err != nil {
		return err
	}
	last := elems[len(elems)-1]
	if len(last.GetKey()) == 0 {
		parent[memberKey(parent, Name(last.GetName()))] = v
		return nil
	}
	entry, err := child(parent, last, true)
	if err != nil {
		return err
	}
	vm, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("value for list entry %s is not an object", Name(last.GetName()))
	}
	clear(entry)
	maps.Copy(entry, vm)
	for k, kv := range last.GetKey() {
		if _, ev, ok := member(entry, k); !ok {
			entry[k] = kv
		} else if Canon(ev) != Canon(kv) {
			return fmt.Errorf("list entry %s: key %s is %v in the value but %s in the path", Name(last.GetName()), k, ev, kv)
		}
	}
	return nil
}

// Update merges v into the node at elems (gNMI update semantics: containers
// and lists merge, leaves and leaf-lists are replaced).
func Update(root map[string]any, elems []*gnmipb.PathElem, v any) error {
	if len(elems) == 0 {
		vm, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("value at the root is not an object")
		}
		mergeMap(root, vm)
		return nil
	}
	parent, err := parentFor(root, elems)
	if err != nil {
		return err
	}
	last := elems[len(elems)-1]
	if len(last.GetKey()) == 0 {
		name := memberKey(parent, Name(last.GetName()))
		parent[name] = Merge(parent[name], v)
		return nil
	}
	entry, err := child(parent, last, true)
	if err != nil {
		return err
	}
	vm, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("value for list entry %s is not an object", Name(last.GetName()))
	}
	mergeMap(entry, vm)
	return nil
}

// Merge returns src merged into dst.
func Merge(dst, src any) any {
	switch s := src.(type) {
	case map[string]any:
		d, ok := dst.(map[string]any)
		if !ok {
			return s
		}
		mergeMap(d, s)
		return d
	case []any:
		d, ok := dst.([]any)
		if !ok || len(s) == 0 {
			return s
		}
		if _, isObj := s[0].(map[string]any); !isObj {
			return s // leaf-list: replaced
		}
		for _, e := range s {
			em, ok := e.(map[string]any)
			ks := ListKey(em)
			if !ok || ks == nil {
				d = append(d, e)
				continue
			}
			keys := map[string]string{}
			for _, k := range ks {
				keys[k] = Canon(em[k])
			}
			if i := findEntry(d, keys); i >= 0 {
				d[i] = Merge(d[i], em)
			} else {
				d = append(d, em)
			}
		}
		return d
	}
	return src
}

func mergeMap(d, s map[string]any) {
	for k, v := range s {
		if _, ok := d[k]; !ok {
			// The same member under the other name form merges into it.
			if ek, _, ok := member(d, Name(k)); ok {
				k = ek
			}
		}
		d[k] = Merge(d[k], v)
	}
}

// Delete removes the node at elems; a missing node is not an error (gNMI).
// Containers and lists left empty on the way are removed too, as a device
// does with non-presence containers.
func Delete(root map[string]any, elems []*gnmipb.PathElem) error {
	if len(elems) == 0 {
		clear(root)
		return nil
	}
	_, err := deleteIn(root, elems)
	return err
}

// deleteIn deletes elems below m and reports whether it removed something.
func deleteIn(m map[string]any, elems []*gnmipb.PathElem) (bool, error) {
	e := elems[0]
	name := memberKey(m, Name(e.GetName()))
	if len(elems) == 1 {
		if len(e.GetKey()) == 0 {
			_, ok := m[name]
			delete(m, name)
			return ok, nil
		}
		list, ok := m[name].([]any)
		if !ok {
			return false, nil
		}
		i := findEntry(list, e.GetKey())
		if i < 0 {
			return false, nil
		}
		list = slices.Delete(list, i, i+1)
		if len(list) == 0 {
			delete(m, name)
		} else {
			m[name] = list
		}
		return true, nil
	}
	next, err := child(m, e, false)
	if err != nil || next == nil {
		return false, err
	}
	removed, err := deleteIn(next, elems[1:])
	if err != nil || !removed || len(next) > 0 {
		return removed, err
	}
	// next became empty because of this delete: drop it from its parent.
	if len(e.GetKey()) == 0 {
		delete(m, name)
		return true, nil
	}
	list, _ := m[name].([]any)
	if i := findEntry(list, e.GetKey()); i >= 0 {
		list = slices.Delete(list, i, i+1)
		if len(list) == 0 {
			delete(m, name)
		} else {
			m[name] = list
		}
	}
	return true, nil
}

// Typed decodes a gNMI TypedValue into a tree value, module prefixes
// removed from member names. ASCII values come back as a string with ascii
// set (CLI text, not JSON).
func Typed(tv *gnmipb.TypedValue) (v any, ascii bool, err error) {
	return typed(tv, true)
}

// TypedQualified is Typed keeping member names as sent: RFC 7951 module
// qualifiers stay, so the tree can be written back to a device (a backup
// restored) in a form it accepts. The tree functions of this package find
// members with or without their qualifier.
func TypedQualified(tv *gnmipb.TypedValue) (v any, ascii bool, err error) {
	return typed(tv, false)
}

func typed(tv *gnmipb.TypedValue, strip bool) (v any, ascii bool, err error) {
	switch x := tv.GetValue().(type) {
	case *gnmipb.TypedValue_JsonIetfVal:
		v, err = parse(x.JsonIetfVal, strip)
		return v, false, err
	case *gnmipb.TypedValue_JsonVal:
		v, err = parse(x.JsonVal, strip)
		return v, false, err
	case *gnmipb.TypedValue_StringVal:
		return x.StringVal, false, nil
	case *gnmipb.TypedValue_IntVal:
		return json.Number(strconv.FormatInt(x.IntVal, 10)), false, nil
	case *gnmipb.TypedValue_UintVal:
		return json.Number(strconv.FormatUint(x.UintVal, 10)), false, nil
	case *gnmipb.TypedValue_BoolVal:
		return x.BoolVal, false, nil
	case *gnmipb.TypedValue_DoubleVal:
		return json.Number(strconv.FormatFloat(x.DoubleVal, 'g', -1, 64)), false, nil
	case *gnmipb.TypedValue_AsciiVal:
		return x.AsciiVal, true, nil
	case *gnmipb.TypedValue_LeaflistVal:
		var out []any
		for _, e := range x.LeaflistVal.GetElement() {
			ev, _, err := typed(e, strip)
			if err != nil {
				return nil, false, err
			}
			out = append(out, ev)
		}
		return out, false, nil
	}
	return nil, false, fmt.Errorf("gNMI value type %T is not supported", tv.GetValue())
}

// IsBufferLeaf reports whether a leaf holds a buffer size or threshold in
// bytes that hardware rounds to its buffer cell: any "*threshold*" leaf (WRED
// and ECN), and SONiC BUFFER_PROFILE/BUFFER_POOL sizes (xoff, xon,
// xon_offset, size).
func IsBufferLeaf(name string) bool {
	switch name = Name(name); name {
	case "xoff", "xon", "xon_offset", "size":
		return true
	}
	return strings.Contains(name, "threshold")
}
