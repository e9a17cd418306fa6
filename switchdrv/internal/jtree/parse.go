package jtree

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// maxDepth is encoding/json's nesting limit, kept so both reject the same.
const maxDepth = 10000

// parse decodes one JSON value into the tree types encoding/json produces
// with UseNumber (map[string]any, []any, string, json.Number, bool, nil),
// without reflection. Strings with escapes or non-ASCII bytes are handed to
// encoding/json so the semantics (escapes, invalid UTF-8) are identical; a
// differential fuzz test holds the two equal. With strip, member names lose
// their module prefix as they are read.
//
// Read-backs repeat the same member names and values many times (32 ports,
// 8 queues each): the parser keeps one copy of each short string, boxed as
// the interface value the tree holds, and builds each object and array at its
// final size from a scratch stack, so a tree costs little more than its maps
// and slices.
func parse(b []byte, strip bool) (any, error) {
	p := parsers.Get().(*parser)
	p.b, p.i, p.strip = b, 0, strip
	p.ws()
	v, err := p.value(0)
	if err == nil {
		if p.ws(); p.i != len(p.b) {
			v, err = nil, errors.New("trailing data after JSON value")
		}
	}
	p.release(err != nil)
	return v, err
}

// parsers are reused with their scratch stacks and interned strings.
var parsers = sync.Pool{New: func() any { return &parser{} }}

// Interning limits: strings longer than maxIntern are not worth a table
// entry (descriptions, CLI text); past maxInterned entries the tables start
// over, so a device sending ever new values cannot grow them without bound.
const (
	maxIntern   = 64
	maxInterned = 4096
)

type parser struct {
	b     []byte
	i     int
	strip bool

	members []kv              // the members of the objects being read
	elems   []any             // the elements of the arrays being read
	keys    map[string]string // interned member names
	strs    map[string]any    // interned string values, boxed
	nums    map[string]any    // interned numbers, boxed json.Number
}

type kv struct {
	k string
	v any
}

// release returns p to the pool, keeping no tree alive through the
// stacks: objects and arrays clear their part as they complete, a failed
// parse leaves the rest.
func (p *parser) release(failed bool) {
	if failed {
		clear(p.members)
		clear(p.elems)
	}
	p.members, p.elems = p.members[:0], p.elems[:0]
	p.b = nil
	if len(p.keys)+len(p.strs)+len(p.nums) > maxInterned {
		clear(p.keys)
		clear(p.strs)
		clear(p.nums)
	}
	parsers.Put(p)
}

func (p *parser) errf(format string, a ...any) error {
	return fmt.Errorf("invalid JSON at offset %d: %s", p.i, fmt.Sprintf(format, a...))
}

func (p *parser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (any, error) {
	if p.i >= len(p.b) {
		return nil, p.errf("unexpected end")
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		return p.strValue()
	case c == 't':
		return true, p.lit("true")
	case c == 'f':
		return false, p.lit("false")
	case c == 'n':
		return nil, p.lit("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		return nil, p.errf("unexpected %q", c)
	}
}

func (p *parser) lit(s string) error {
	if len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		return p.errf("invalid literal")
	}
	p.i += len(s)
	return nil
}

func (p *parser) object(depth int) (any, error) {
	if depth > maxDepth {
		return nil, p.errf("exceeded max depth")
	}
	p.i++ // {
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return map[string]any{}, nil
	}
	base := len(p.members)
	for {
		p.ws()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return nil, p.errf("want a member name")
		}
		k, err := p.key()
		if err != nil {
			return nil, err
		}
		p.ws()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return nil, p.errf("want ':'")
		}
		p.i++
		p.ws()
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		if p.strip {
			k = Name(k)
		}
		p.members = append(p.members, kv{k, v})
		p.ws()
		if p.i >= len(p.b) {
			return nil, p.errf("unexpected end in object")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			ms := p.members[base:]
			m := make(map[string]any, len(ms))
			for _, e := range ms { // a later member wins, as in encoding/json
				m[e.k] = e.v
			}
			clear(ms)
			p.members = p.members[:base]
			return m, nil
		default:
			return nil, p.errf("want ',' or '}'")
		}
	}
}

func (p *parser) array(depth int) (any, error) {
	if depth > maxDepth {
		return nil, p.errf("exceeded max depth")
	}
	p.i++ // [
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return []any{}, nil
	}
	base := len(p.elems)
	for {
		p.ws()
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		p.elems = append(p.elems, v)
		p.ws()
		if p.i >= len(p.b) {
			return nil, p.errf("unexpected end in array")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			es := p.elems[base:]
			a := make([]any, len(es))
			copy(a, es)
			clear(es)
			p.elems = p.elems[:base]
			return a, nil
		default:
			return nil, p.errf("want ',' or ']'")
		}
	}
}

// key reads a member name, interned when short and plain.
func (p *parser) key() (string, error) {
	raw, plain, err := p.scan()
	if err != nil || !plain || len(raw) > maxIntern {
		return p.str(raw, plain, err)
	}
	if k, ok := p.keys[string(raw)]; ok {
		return k, nil
	}
	if p.keys == nil {
		p.keys = map[string]string{}
	}
	k := string(raw)
	p.keys[k] = k
	return k, nil
}

// strValue reads a string value, interned (boxed) when short and plain.
func (p *parser) strValue() (any, error) {
	raw, plain, err := p.scan()
	if err != nil || !plain || len(raw) > maxIntern {
		return p.str(raw, plain, err)
	}
	if v, ok := p.strs[string(raw)]; ok {
		return v, nil
	}
	if p.strs == nil {
		p.strs = map[string]any{}
	}
	s := string(raw)
	var v any = s
	p.strs[s] = v
	return v, nil
}

// str is the string scan found: plain ASCII without escapes is copied
// directly, the rest decoded by encoding/json.
func (p *parser) str(raw []byte, plain bool, err error) (string, error) {
	if err != nil {
		return "", err
	}
	if plain {
		return string(raw), nil
	}
	var s string
	if err := json.Unmarshal(p.b[p.i-len(raw)-2:p.i], &s); err != nil {
		return "", p.errf("bad string: %v", err)
	}
	return s, nil
}

// scan reads a string and returns its raw text between the quotes, and
// whether it is plain ASCII without escapes.
func (p *parser) scan() ([]byte, bool, error) {
	start := p.i
	p.i++ // "
	plain := true
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return p.b[start+1 : p.i-1], plain, nil
		case c == '\\':
			plain = false
			p.i += 2
		case c < 0x20:
			return nil, false, p.errf("control character in string")
		case c >= 0x80:
			plain = false
			p.i++
		default:
			p.i++
		}
	}
	return nil, false, p.errf("unterminated string")
}

func (p *parser) number() (any, error) {
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.b[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.b) && p.b[p.i] == '0':
		p.i++
	case digits() == 0:
		return nil, p.errf("bad number")
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return nil, p.errf("bad number")
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, p.errf("bad number")
		}
	}
	raw := p.b[start:p.i]
	if len(raw) > maxIntern {
		return json.Number(raw), nil
	}
	if v, ok := p.nums[string(raw)]; ok {
		return v, nil
	}
	if p.nums == nil {
		p.nums = map[string]any{}
	}
	n := json.Number(raw)
	var v any = n
	p.nums[string(n)] = v
	return v, nil
}
