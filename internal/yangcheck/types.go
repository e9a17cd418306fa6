package yangcheck

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/openconfig/goyang/pkg/yang"
	"github.com/openconfig/ygot/util"
)

type pattern struct {
	re  *regexp.Regexp
	src string
}

// value checks v against type t of leaf e and returns "" or what is wrong.
// strs: the value comes from a string encoding (CONFIG_DB hashes, path
// keys), so every type is accepted in its canonical string form.
func (c *checker) value(e *yang.Entry, t *yang.YangType, v any, strs bool) string {
	if t == nil {
		return ""
	}
	switch t.Kind {
	case yang.Yint8, yang.Yint16, yang.Yint32, yang.Yuint8, yang.Yuint16, yang.Yuint32:
		var s string
		switch x := v.(type) {
		case json.Number:
			s = x.String()
		case string:
			if !strs {
				return fmt.Sprintf("%s must be a JSON number, got the string %q", t.Kind, x)
			}
			s = x
		default:
			return fmt.Sprintf("%s must be a JSON number, got %s", t.Kind, jsonKind(v))
		}
		return checkInt(t, s)
	case yang.Yint64, yang.Yuint64:
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case json.Number:
			if !strs {
				return fmt.Sprintf("%s must be a JSON string (RFC 7951 section 6.1), got the number %s", t.Kind, x)
			}
			s = x.String()
		default:
			return fmt.Sprintf("%s must be a JSON string, got %s", t.Kind, jsonKind(v))
		}
		return checkInt(t, s)
	case yang.Ydecimal64:
		s, ok := v.(string)
		if !ok {
			if n, isNum := v.(json.Number); isNum && strs {
				s = n.String()
			} else {
				return fmt.Sprintf("decimal64 must be a JSON string, got %s", jsonKind(v))
			}
		}
		return checkDecimal(t, s)
	case yang.Ystring:
		s, ok := v.(string)
		if !ok {
			return fmt.Sprintf("string expected, got %s", jsonKind(v))
		}
		return c.checkString(t, s)
	case yang.Ybool:
		switch x := v.(type) {
		case bool:
			return ""
		case string:
			if strs && (x == "true" || x == "false") {
				return ""
			}
		}
		return fmt.Sprintf("boolean must be true or false, got %s", jsonString(v))
	case yang.Yenum:
		s, ok := v.(string)
		if !ok {
			return fmt.Sprintf("enumeration must be a JSON string, got %s", jsonKind(v))
		}
		if t.Enum == nil || !t.Enum.IsDefined(s) {
			return fmt.Sprintf("%q is not one of the enumeration values %s", s, quoteList(enumNames(t)))
		}
		return ""
	case yang.Ybits:
		s, ok := v.(string)
		if !ok {
			return fmt.Sprintf("bits must be a JSON string, got %s", jsonKind(v))
		}
		for _, b := range strings.Fields(s) {
			if t.Bit == nil || !t.Bit.IsDefined(b) {
				return fmt.Sprintf("%q is not a bit of this type", b)
			}
		}
		return ""
	case yang.Ybinary:
		s, ok := v.(string)
		if !ok {
			return fmt.Sprintf("binary must be a base64 JSON string, got %s", jsonKind(v))
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return fmt.Sprintf("binary is not base64: %v", err)
		}
		return checkLength(t, len(b))
	case yang.Yempty:
		if arr, ok := v.([]any); ok && len(arr) == 1 && arr[0] == nil {
			return ""
		}
		if strs {
			if s, ok := v.(string); ok && s == "" {
				return ""
			}
		}
		return fmt.Sprintf("empty must be [null], got %s", jsonString(v))
	case yang.Yidentityref:
		s, ok := v.(string)
		if !ok {
			return fmt.Sprintf("identityref must be a JSON string, got %s", jsonKind(v))
		}
		return c.checkIdentity(e, t, s)
	case yang.Yleafref:
		target := c.s.leafref(e, t)
		if target == nil {
			// Unresolvable in this schema (e.g. the target module is not
			// loaded): accept any scalar.
			if _, ok := v.(map[string]any); ok {
				return fmt.Sprintf("leafref value must be a scalar, got %s", jsonKind(v))
			}
			return ""
		}
		if msg := c.value(target, target.Type, v, strs); msg != "" {
			return fmt.Sprintf("leafref to %s: %s", target.Path(), msg)
		}
		return ""
	case yang.Yunion:
		var msgs []string
		for _, m := range t.Type {
			msg := c.value(e, m, v, strs)
			if msg == "" {
				return ""
			}
			msgs = append(msgs, msg)
		}
		return fmt.Sprintf("matches no member of the union (%s)", strings.Join(msgs, "; "))
	case yang.YinstanceIdentifier:
		if _, ok := v.(string); !ok {
			return fmt.Sprintf("instance-identifier must be a JSON string, got %s", jsonKind(v))
		}
		return ""
	}
	return ""
}

func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func quoteList(ss []string) string {
	const max = 12
	if len(ss) > max {
		return "[" + strings.Join(ss[:max], " ") + " ...]"
	}
	return "[" + strings.Join(ss, " ") + "]"
}

func enumNames(t *yang.YangType) []string {
	if t.Enum == nil {
		return nil
	}
	return t.Enum.Names()
}

var builtinRange = map[yang.TypeKind]yang.YangRange{
	yang.Yint8: yang.Int8Range, yang.Yint16: yang.Int16Range, yang.Yint32: yang.Int32Range, yang.Yint64: yang.Int64Range,
	yang.Yuint8: yang.Uint8Range, yang.Yuint16: yang.Uint16Range, yang.Yuint32: yang.Uint32Range, yang.Yuint64: yang.Uint64Range,
}

// parseInt parses a canonical base-10 integer (no 0x, no leading +).
func parseInt(s string) (yang.Number, bool) {
	var n yang.Number
	ds := s
	if strings.HasPrefix(s, "-") {
		n.Negative = true
		ds = s[1:]
	}
	if ds == "" || (len(ds) > 1 && ds[0] == '0') {
		return n, false
	}
	for _, r := range ds {
		if r < '0' || r > '9' {
			return n, false
		}
	}
	u, err := strconv.ParseUint(ds, 10, 64)
	if err != nil {
		return n, false
	}
	n.Value = u
	if u == 0 {
		n.Negative = false
	}
	return n, true
}

func inRange(r yang.YangRange, n yang.Number) bool {
	if len(r) == 0 {
		return true
	}
	for _, x := range r {
		if !n.Less(x.Min) && !x.Max.Less(n) {
			return true
		}
	}
	return false
}

func checkInt(t *yang.YangType, s string) string {
	n, ok := parseInt(s)
	if !ok {
		return fmt.Sprintf("%q is not a base-10 %s", s, t.Kind)
	}
	if !inRange(builtinRange[t.Kind], n) {
		return fmt.Sprintf("%s is out of the %s range %s", s, t.Kind, builtinRange[t.Kind])
	}
	if !inRange(t.Range, n) {
		return fmt.Sprintf("%s is out of range %s", s, t.Range)
	}
	return ""
}

var decimalRE = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

func checkDecimal(t *yang.YangType, s string) string {
	if !decimalRE.MatchString(s) {
		return fmt.Sprintf("%q is not a decimal64", s)
	}
	fd := t.FractionDigits
	if fd < 1 {
		fd = 1
	}
	if i := strings.IndexByte(s, '.'); i >= 0 && len(s)-i-1 > fd {
		return fmt.Sprintf("%q has more than %d fraction digits", s, fd)
	}
	n, err := yang.ParseDecimal(s, uint8(fd))
	if err != nil {
		return fmt.Sprintf("%q is not a decimal64 with %d fraction digits: %v", s, fd, err)
	}
	if !inRange(t.Range, n) {
		return fmt.Sprintf("%s is out of range %s", s, t.Range)
	}
	return ""
}

func checkLength(t *yang.YangType, n int) string {
	if len(t.Length) == 0 {
		return ""
	}
	if !inRange(t.Length, yang.FromInt(int64(n))) {
		return fmt.Sprintf("length %d is out of %s", n, t.Length)
	}
	return ""
}

func (c *checker) checkString(t *yang.YangType, s string) string {
	if msg := checkLength(t, utf8.RuneCountInString(s)); msg != "" {
		return fmt.Sprintf("%q: %s", s, msg)
	}
	for _, p := range c.s.patternsOf(t) {
		if !p.re.MatchString(s) {
			return fmt.Sprintf("%q does not match pattern %q", s, p.src)
		}
	}
	return ""
}

// patternsOf compiles the patterns of t once. A pattern Go's regexp cannot
// compile (XSD-only constructs such as \i) is skipped.
func (s *Schema) patternsOf(t *yang.YangType) []pattern {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ps, ok := s.patterns[t]; ok {
		return ps
	}
	srcs, posix := util.SanitizedPattern(t)
	var ps []pattern
	for i, src := range srcs {
		re, err := regexp.Compile(src)
		if err != nil {
			continue
		}
		orig := src
		if !posix && i < len(t.Pattern) {
			orig = t.Pattern[i]
		}
		ps = append(ps, pattern{re: re, src: orig})
	}
	s.patterns[t] = ps
	return ps
}

// checkIdentity checks an identityref value: "module:identity", or
// "identity" when the identity is defined by the leaf's own module.
func (c *checker) checkIdentity(e *yang.Entry, t *yang.YangType, s string) string {
	mod, name := splitQName(s)
	if t.IdentityBase == nil {
		return ""
	}
	var found []*yang.Identity
	visited := map[*yang.Identity]bool{}
	var walk func(id *yang.Identity)
	walk = func(id *yang.Identity) {
		for _, v := range id.Values {
			if visited[v] {
				continue
			}
			visited[v] = true
			if v.Name == name {
				found = append(found, v)
			}
			walk(v)
		}
	}
	walk(t.IdentityBase)
	if len(found) == 0 {
		return fmt.Sprintf("%q is not an identity derived from %s", s, t.IdentityBase.Name)
	}
	leafMod := c.s.module(e)
	for _, id := range found {
		idMod := identityModule(id)
		if mod == idMod || (mod == "" && idMod == leafMod) {
			return ""
		}
	}
	idMod := identityModule(found[0])
	if mod == "" {
		return fmt.Sprintf("identity %q is defined in module %s and must be qualified as %s:%s", name, idMod, idMod, name)
	}
	return fmt.Sprintf("identity %q belongs to module %s, not %q", name, idMod, mod)
}

func identityModule(id *yang.Identity) string {
	m := yang.RootNode(id)
	if m == nil {
		return ""
	}
	if m.Kind() == "submodule" && m.BelongsTo != nil {
		return m.BelongsTo.Name
	}
	return m.Name
}

var predicateRE = regexp.MustCompile(`\[[^\]]*\]`)

type leafrefKey struct {
	e *yang.Entry
	t *yang.YangType
}

// leafref resolves the target leaf of a leafref type used by leaf e, or nil.
func (s *Schema) leafref(e *yang.Entry, t *yang.YangType) *yang.Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := leafrefKey{e, t}
	if target, ok := s.refs[k]; ok {
		return target
	}
	p := strings.TrimSpace(predicateRE.ReplaceAllString(t.Path, ""))
	var target *yang.Entry
	if p != "" {
		target = e.Find(p)
		if target != nil && !target.IsLeaf() && !target.IsLeafList() {
			target = nil
		}
		// A leafref to a leafref: follow once more (bounded).
		for i := 0; target != nil && target.Type != nil && target.Type.Kind == yang.Yleafref && i < 8; i++ {
			next := target.Find(strings.TrimSpace(predicateRE.ReplaceAllString(target.Type.Path, "")))
			if next == nil {
				break
			}
			target = next
		}
	}
	s.refs[k] = target
	return target
}
