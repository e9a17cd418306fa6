package yangcheck

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/openconfig/goyang/pkg/yang"

	"github.com/fabricctl/fabricctl/intent"
)

// The referee: libyang's yanglint (Debian libyang2-tools, installed by
// scripts/install-deps.sh) validates the same datastores as
// ValidateDatastore. Without it the tests skip on a workstation and FAIL in
// CI (CI=true).
func yanglint(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("yanglint")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("yanglint (Debian libyang2-tools) is not installed: scripts/install-deps.sh installs it; CI needs it to referee the YANG validation")
		}
		t.Skip("yanglint (Debian libyang2-tools) is not installed: run scripts/install-deps.sh")
	}
	return p
}

// refereeVerdict is what yanglint said about one datastore.
type refereeVerdict struct {
	ok       bool
	location string // data (or schema) location of the first error
	schema   bool   // location is a schema path (no list keys)
	msg      string
}

var (
	reLocation = regexp.MustCompile(`\((?:Data|Schema) location "([^"]*)"`)
	reErrLine  = regexp.MustCompile(`(?m)^libyang err : (.*)$`)
)

// runYanglint validates data (RFC 7951 JSON of a whole config datastore)
// with every module of platform p implemented and the feature set feats
// (nil = all but the unreleased ones), as ValidateDatastore does.
func runYanglint(t testing.TB, s *Schema, p intent.Platform, data []byte, feats map[string]bool) refereeVerdict {
	t.Helper()
	dirs, err := PlatformDirs(p)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, d := range dirs {
		fs, _ := filepath.Glob(filepath.Join("models", d, "*.yang"))
		for _, f := range fs {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			files[d+"/"+filepath.Base(f)] = string(b)
		}
	}
	return runYanglintFiles(t, s, files, dirs, data, feats)
}

// runYanglintFiles is runYanglint with the module texts given (folder/file;
// the first folder's modules implemented, every folder searched): a
// release's (Tree.ReleaseFiles) or its own modules from disk.
func runYanglintFiles(t testing.TB, s *Schema, files map[string]string, dirs []string, data []byte, feats map[string]bool) refereeVerdict {
	t.Helper()
	bin := yanglint(t)
	tmp := t.TempDir()
	f := filepath.Join(tmp, "datastore.json")
	if err := os.WriteFile(f, data, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-t", "config"}
	for _, fa := range yanglintFeatures(s, feats) {
		args = append(args, "-F", fa)
	}
	seen := map[string]bool{}
	mdir := refereeModels(t, s, files, feats, tmp)
	for _, d := range dirs {
		args = append(args, "-p", filepath.Join(mdir, d))
	}
	for _, d := range dirs {
		fs, _ := filepath.Glob(filepath.Join(mdir, d, "*.yang"))
		for _, m := range fs {
			if b, _ := os.ReadFile(m); regexp.MustCompile(`(?m)^submodule `).Match(b) {
				continue // yanglint loads it through its module
			}
			if !seen[filepath.Base(m)] {
				seen[filepath.Base(m)] = true
				args = append(args, m)
			}
		}
	}
	args = append(args, f)
	out, err := exec.Command(bin, args...).CombinedOutput()
	v := refereeVerdict{ok: err == nil}
	if m := reErrLine.FindStringSubmatch(string(out)); m != nil {
		v.msg = m[1]
		if l := reLocation.FindStringSubmatch(m[1]); l != nil {
			v.location = l[1]
			v.schema = strings.Contains(m[1], "(Schema location")
		}
	}
	if !v.ok && v.msg == "" {
		v.msg = strings.TrimSpace(string(out))
	}
	return v
}

// refereeModels writes the modules yanglint reads (files: folder/file ->
// text): with the vendor idioms libyang reads differently from the device
// made explicit (see srlIdioms and (*dsValidator).mustOn): SR Linux's
// boolean comparisons and "leaf != 'literal'" tests rewritten, and the
// musts its srl_nokia-ext:if-feature extension turns off under feats
// removed.
func refereeModels(t testing.TB, s *Schema, files map[string]string, feats map[string]bool, tmp string) string {
	t.Helper()
	out := filepath.Join(tmp, "models")
	v := &dsValidator{s: s, opts: DatastoreOptions{Features: feats}}
	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, f := range names {
		d := filepath.Dir(f)
		if err := os.MkdirAll(filepath.Join(out, d), 0o755); err != nil {
			t.Fatal(err)
		}
		text := files[f]
		if strings.HasPrefix(d, "srlinux") {
			text = srlIdioms(text)
		}
		if m := reModName.FindStringSubmatch(text); m != nil && s.ms.Modules[m[1]] != nil {
			text = dropGatedMusts(text, v, s.ms.Modules[m[1]])
		}
		if err := os.WriteFile(filepath.Join(out, d, filepath.Base(f)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

var (
	reMustStart = regexp.MustCompile(`\bmust\s`)
	reExtIfFeat = regexp.MustCompile(`srl_nokia-ext:if-feature\s+"([^"]*)"`)
)

// dropGatedMusts removes the must statements of a module text whose
// srl_nokia-ext:if-feature is false.
func dropGatedMusts(text string, v *dsValidator, mod *yang.Module) string {
	var b strings.Builder
	i := 0
	for {
		loc := reMustStart.FindStringIndex(text[i:])
		if loc == nil {
			b.WriteString(text[i:])
			return b.String()
		}
		start := i + loc[0]
		end := blockEnd(text, start)
		block := text[start:end]
		b.WriteString(text[i:start])
		if m := reExtIfFeat.FindStringSubmatch(block); m != nil && end > start && !v.featureOn(m[1], mod) {
			b.WriteString("/* dropped by the referee: srl_nokia-ext:if-feature false */")
		} else {
			b.WriteString(block)
		}
		if end <= start {
			end = start + len("must")
			b.WriteString(text[start+len(block) : end])
		}
		i = end
	}
}

// blockEnd returns the index after the statement starting at start: after
// its ";" or its matching "}" (quoted strings skipped).
func blockEnd(s string, start int) int {
	depth := 0
	for i := start; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\'':
			j := i + 1
			for j < len(s) && s[j] != c {
				if c == '"' && s[j] == '\\' {
					j++
				}
				j++
			}
			i = j
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		case ';':
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(s)
}

// yanglintFeatures renders a feature set as yanglint -F arguments, one per
// module that defines features.
func yanglintFeatures(s *Schema, feats map[string]bool) []string {
	var out []string
	for _, name := range s.Modules() {
		m := s.ms.Modules[name]
		if m == nil || len(m.Feature) == 0 {
			continue
		}
		var on []string
		v := &dsValidator{s: s, opts: DatastoreOptions{Features: feats}}
		for _, f := range m.Feature {
			if v.featureEnabled(name, f.Name) {
				on = append(on, f.Name)
			}
		}
		sort.Strings(on)
		out = append(out, name+":"+strings.Join(on, ","))
	}
	return out
}

// datastoreJSON renders a datastore as the RFC 7951 JSON of the sonic-yang /
// vendor modules that yanglint reads: the data tree ValidateDatastore
// builds, without the defaults it adds, members qualified where their
// module changes, CONFIG_DB strings typed as their leaves' JSON encoding.
func datastoreJSON(t testing.TB, s *Schema, origin string, tree map[string]any) []byte {
	t.Helper()
	root, _, _ := s.build(origin, tree, DatastoreOptions{})
	b, err := json.MarshalIndent(s.rfc7951(root, ""), "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (s *Schema) rfc7951(d *dnode, parentMod string) map[string]any {
	out := map[string]any{}
	for _, k := range d.kids {
		if k.dflt {
			continue
		}
		mod := s.module(k.e)
		name := k.name
		if mod != parentMod {
			name = mod + ":" + k.name
		}
		switch {
		case k.e.IsLeaf():
			out[name] = s.jsonValue(k.e, k.e.Type, k.raw)
		case k.e.IsLeafList():
			arr, _ := out[name].([]any)
			out[name] = append(arr, s.jsonValue(k.e, k.e.Type, k.raw))
		case k.e.IsList():
			arr, _ := out[name].([]any)
			out[name] = append(arr, s.rfc7951(k, mod))
		default:
			out[name] = s.rfc7951(k, mod)
		}
	}
	return out
}

// jsonValue is v (a CONFIG_DB string or a JSON_IETF value) in the RFC 7951
// encoding of type t.
func (s *Schema) jsonValue(e *yang.Entry, t *yang.YangType, v any) any {
	str, isStr := v.(string)
	if !isStr || t == nil {
		return v
	}
	switch t.Kind {
	case yang.Yint8, yang.Yint16, yang.Yint32, yang.Yuint8, yang.Yuint16, yang.Yuint32:
		if _, err := strconv.ParseInt(str, 10, 64); err == nil {
			return json.Number(str)
		}
	case yang.Ybool:
		if str == "true" || str == "false" {
			return str == "true"
		}
	case yang.Yempty:
		return []any{nil}
	case yang.Yleafref:
		if target := s.leafref(e, t); target != nil {
			return s.jsonValue(target, target.Type, v)
		}
	case yang.Yunion:
		for _, m := range t.Type {
			if (&checker{s: s, strs: true}).value(e, m, str, true) == "" {
				return s.jsonValue(e, m, v)
			}
		}
	}
	return v
}

// applyUpdate merges one gNMI update (JSON_IETF) into a datastore tree kept
// the way a twin keeps it: member names without module qualifiers, lists as
// arrays; SONiC CONFIG_DB as TABLE -> KEY -> hash (an update of a key
// replaces its hash, of a field sets the field).
func applyUpdate(t testing.TB, s *Schema, tree map[string]any, u *gnmipb.Update) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(u.GetVal().GetJsonIetfVal()))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", PathString(u.GetPath()), err)
	}
	v = strip(v)
	elems := u.GetPath().GetElem()
	if u.GetPath().GetOrigin() == OriginSONiCDB {
		cur := tree
		for i, e := range elems {
			if i == len(elems)-1 {
				if obj, ok := v.(map[string]any); ok && i < 3 {
					mergeMaps(child(cur, e.GetName()), obj)
				} else {
					cur[e.GetName()] = v
				}
				return
			}
			cur = child(cur, e.GetName())
		}
		return
	}
	cur := tree
	var ent *yang.Entry
	for i, pe := range elems {
		_, local := splitQName(pe.GetName())
		if ent == nil {
			ent = s.topEntry(local)
		} else {
			ent, _ = (&checker{s: s}).child(ent, local)
		}
		if ent == nil {
			t.Fatalf("%s: not in the schema", PathString(u.GetPath()))
		}
		last := i == len(elems)-1
		if len(pe.GetKey()) > 0 {
			arr, _ := cur[local].([]any)
			var entry map[string]any
			for _, it := range arr {
				m := it.(map[string]any)
				match := true
				for k, kv := range pe.GetKey() {
					if scalarString(m[k]) != kv {
						match = false
					}
				}
				if match {
					entry = m
				}
			}
			if entry == nil {
				entry = map[string]any{}
				for k, kv := range pe.GetKey() {
					entry[k] = kv
					if ke := ent.Dir[k]; ke != nil && ke.Type != nil && isNumeric(ke.Type.Kind) {
						entry[k] = json.Number(kv)
					}
				}
				cur[local] = append(arr, entry)
			}
			cur = entry
			if last {
				mergeEntry(s, ent, cur, v.(map[string]any))
			}
			continue
		}
		if last {
			if obj, ok := v.(map[string]any); ok && !ent.IsLeaf() && !ent.IsLeafList() {
				mergeEntry(s, ent, child(cur, local), obj)
			} else {
				cur[local] = v
			}
			return
		}
		cur = child(cur, local)
	}
}

func isNumeric(k yang.TypeKind) bool {
	switch k {
	case yang.Yint8, yang.Yint16, yang.Yint32, yang.Yuint8, yang.Yuint16, yang.Yuint32:
		return true
	}
	return false
}

func (s *Schema) topEntry(local string) *yang.Entry {
	var pick *yang.Entry
	for _, c := range s.top[local] {
		if pick == nil || strings.HasPrefix(s.module(c), "openconfig-") {
			pick = c
		}
	}
	return pick
}

func child(m map[string]any, k string) map[string]any {
	c, ok := m[k].(map[string]any)
	if !ok {
		c = map[string]any{}
		m[k] = c
	}
	return c
}

func mergeMaps(dst, src map[string]any) {
	for k, v := range src {
		dst[k] = v
	}
}

// mergeEntry merges src into dst (both the value of schema node e), list
// entries matched by their keys.
func mergeEntry(s *Schema, e *yang.Entry, dst, src map[string]any) {
	for k, v := range src {
		ch, _ := (&checker{s: s}).child(e, k)
		switch {
		case ch != nil && ch.IsList():
			arr, _ := dst[k].([]any)
			for _, it := range v.([]any) {
				m := it.(map[string]any)
				var found map[string]any
				for _, old := range arr {
					om := old.(map[string]any)
					same := true
					for _, key := range strings.Fields(ch.Key) {
						if scalarString(om[key]) != scalarString(m[key]) {
							same = false
						}
					}
					if same {
						found = om
					}
				}
				if found == nil {
					arr = append(arr, m)
				} else {
					mergeEntry(s, ch, found, m)
				}
			}
			dst[k] = arr
		case ch != nil && ch.IsContainer():
			if obj, ok := v.(map[string]any); ok {
				mergeEntry(s, ch, child(dst, k), obj)
			}
		default:
			dst[k] = v
		}
	}
}

// strip removes module qualifiers from member names, as a twin stores them.
func strip(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, c := range x {
			_, local := splitQName(k)
			out[local] = strip(c)
		}
		return out
	case []any:
		for i := range x {
			x[i] = strip(x[i])
		}
	}
	return v
}

var reQuoted = regexp.MustCompile(`'([^']*)'|"([^"]*)"`)

// comparablePath reduces a violation path (ours) or a libyang data location
// to local names and bare key values; SONiC paths of either form become
// TABLE/KEY[/field].
func comparablePath(p string) string {
	p = strings.TrimPrefix(p, OriginSONiCDB+":")
	if strings.HasPrefix(p, "/CONFIG_DB/") {
		parts := strings.SplitN(p, "/", 4)
		if len(parts) == 4 {
			return parts[3]
		}
		return ""
	}
	p = reQuoted.ReplaceAllString(p, "$1$2")
	var steps []string
	for _, st := range splitSteps(p) {
		name, pred, _ := strings.Cut(st, "[")
		_, local := splitQName(name)
		if pred != "" {
			pred = "[" + pred
		}
		steps = append(steps, local+pred)
	}
	// sonic-yang: /sonic-x/TABLE/TABLE_LIST[k=v][k2=v2]/field -> TABLE/v|v2/field
	if len(steps) >= 3 && strings.HasPrefix(steps[0], "sonic-") {
		table := steps[1]
		out := table
		if len(steps) > 2 {
			var vals []string
			for _, m := range regexp.MustCompile(`\[[^=\]]+=([^\]]*)\]`).FindAllStringSubmatch(steps[2], -1) {
				vals = append(vals, m[1])
			}
			if len(vals) > 0 {
				out += "/" + strings.Join(vals, "|")
			} else {
				out += "/" + strings.SplitN(steps[2], "[", 2)[0]
			}
		}
		for _, st := range steps[3:] {
			out += "/" + st
		}
		return out
	}
	return "/" + strings.Join(steps, "/")
}

// splitSteps splits a data path on the slashes outside predicates.
func splitSteps(p string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '[':
			depth++
		case ']':
			depth--
		case '/':
			if depth == 0 {
				if i > start {
					out = append(out, p[start:i])
				}
				start = i + 1
			}
		}
	}
	if start < len(p) {
		out = append(out, p[start:])
	}
	return out
}

// agree reports whether our violations and yanglint's verdict agree: both
// accept, or both reject with yanglint's first error on (or above, or below)
// one of our paths.
func agree(ours Violations, ref refereeVerdict) (bool, string) {
	if len(ours) == 0 || ref.ok {
		if len(ours) == 0 && ref.ok {
			return true, ""
		}
		if ref.ok {
			return false, "yanglint accepts; we reject: " + ours.Error()
		}
		return false, "we accept; yanglint rejects: " + ref.msg
	}
	loc := comparablePath(ref.location)
	if ref.location == "" {
		return true, "both reject (yanglint names no data location: " + ref.msg + ")"
	}
	for _, v := range ours {
		p := comparablePath(v.Path)
		if ref.schema || !strings.Contains(ref.location, "[") {
			p = predicateRE.ReplaceAllString(p, "")
			if strings.HasPrefix(v.Path, OriginSONiCDB+":") {
				// A sonic-yang schema location reads TABLE/TABLE_LIST/
				// field where ours reads TABLE/KEY/field.
				lp, op := strings.Split(loc, "/"), strings.Split(p, "/")
				if len(lp) == len(op) && lp[0] == op[0] && lp[len(lp)-1] == op[len(op)-1] {
					return true, ""
				}
				// A map table's value (DSCP_TO_TC_MAP|AZURE 26: "3") is
				// TABLE/TABLE_LIST/TABLE/<value leaf> to libyang and
				// TABLE/KEY/<map key> to us.
				if len(lp) == 4 && len(op) == 3 && lp[0] == op[0] && lp[2] == lp[0] {
					return true, ""
				}
				continue
			}
		}
		if p == loc || strings.HasPrefix(p, loc+"/") || strings.HasPrefix(loc, p+"/") {
			return true, ""
		}
	}
	// libyang names a list entry it has not finished parsing without its
	// keys: compare without predicates.
	bare := predicateRE.ReplaceAllString(loc, "")
	for _, v := range ours {
		p := predicateRE.ReplaceAllString(comparablePath(v.Path), "")
		if p == bare || strings.HasPrefix(p, bare+"/") || strings.HasPrefix(bare, p+"/") {
			return true, ""
		}
	}
	return false, "both reject but yanglint's first error is at " + loc + " (" + ref.msg + "), which none of ours names: " + ours.Error()
}

func platformSchema(t testing.TB, p intent.Platform) *Schema {
	t.Helper()
	s, err := Platform(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
