package switchdrv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/switchdrv/internal/jtree"
)

// Compare lists, leaf by leaf, the changes that take the observed state in
// snap to the desired state d. Replaces own their subtree (leaves only on
// the switch are deleted); Updates merge (only the leaves they name count).
// Values compare in canonical form (JSON_IETF module prefixes, 64-bit numbers
// sent as strings and member order do not matter) and thresholds within one
// buffer cell (q.BufferCellBytes) of each other are equal, because hardware
// rounds them. The changes are sorted by path.
//
// With q.SchemaDefaults the YANG defaults of the platform's models are
// filled in first (q.Defaults, yangcheck.Schema.FillDefaults): into both sides of a
// replaced subtree (a replace resets what it does not name to the default)
// and into the observed side of a merged one, so that a target that reports
// the defaults it populated and one that omits leaves equal to their default
// both compare equal to the intent. Plan, diff and apply's verify all
// compare through here.
func Compare(d *Desired, snap *Snapshot, q Quirks) ([]plan.Change, error) {
	return compare(d, snap, q, nil)
}

// compare is Compare with a cache of d's decoded values (nil = none).
func compare(d *Desired, snap *Snapshot, q Quirks, cache *decoded) ([]plan.Change, error) {
	var out []plan.Change
	td := &treeDiff{cell: q.BufferCellBytes}
	var text []byte // sameText's buffer
	var schema DefaultsFiller
	if q.SchemaDefaults {
		schema = q.Defaults
	}
	ops := []struct {
		updates []*gnmipb.Update
		replace bool
	}{{d.Replaces, true}, {d.Updates, false}}
	hint := 0 // where the next entry likely is (entryIndexAt)
	i := -1   // the update's index in compare's order (decoded.get)
	for _, op := range ops {
		for _, u := range op.updates {
			i++
			dv, err := cache.get(i, u)
			if err != nil {
				return nil, fmt.Errorf("switch %s: desired %s: %w", d.Switch, jtree.PathKey(u.GetPath()), err)
			}
			key := dv.key
			ei := snap.entryIndexAt(key, hint)
			var e Entry
			if ei >= 0 {
				e, hint = snap.Entries[ei], ei+1
			}
			if dv.ascii {
				var got string
				if e.ASCII != nil {
					got = *e.ASCII
				}
				out = append(out, compareCLI(key, cliLines(dv.v.(string)), cliLines(got), op.replace)...)
				continue
			}
			o := u.GetPath().GetOrigin()
			fill := schema != nil && (o == "" || o == "openconfig")
			if !e.Exists {
				if after, ok := dv.rawText(&text); ok {
					// What the walk gives for a value missing on the
					// switch, without decoding it.
					if out == nil {
						// The first change: room for one per update
						// (a missing switch has as many), not a doubling
						// slice.
						out = make([]plan.Change, 0, len(d.Replaces)+len(d.Updates))
					}
					out = append(out, plan.Change{Action: plan.Create, Path: walkPath(key), After: string(after), Reason: reasonMissing})
					continue
				}
			} else if e.ASCII == nil && (op.replace || !fill || bytes.IndexByte(e.JSON, '[') < 0) && dv.sameText(e.JSON, &text) {
				// Nothing differs (see sameText); a path the schema
				// does not know is still the error filling would give.
				if fill && !dv.known {
					if err := schema.FillDefaults(u.GetPath(), nil); err != nil {
						return nil, fmt.Errorf("switch %s: %w", d.Switch, err)
					}
					dv.known = true // verify compares the same path again
				}
				continue
			}
			want, err := dv.tree()
			if err != nil {
				return nil, fmt.Errorf("switch %s: desired %s: %w", d.Switch, key, err)
			}
			got, err := e.value()
			if err != nil {
				return nil, fmt.Errorf("switch %s: observed %s: %w", d.Switch, key, err)
			}
			if !e.Exists {
				got = absent{}
			} else if fill {
				// got is filled in place when it is the entry's own
				// decoding of its JSON, which the entry then forgets (a
				// later use decodes the JSON again); a tree shared with
				// other entries is filled in a copy.
				switch {
				case e.tree == nil: // decoded from JSON just now
				case e.own:
					snap.Entries[ei].tree = nil
				default:
					got = jtree.Clone(got)
				}
				if err := schema.FillDefaults(u.GetPath(), got); err != nil {
					return nil, fmt.Errorf("switch %s: %w", d.Switch, err)
				}
				// want is filled once (filling is idempotent): the
				// cache keeps it filled for apply's verify.
				if op.replace && !dv.filled {
					if err := schema.FillDefaults(u.GetPath(), want); err != nil {
						return nil, fmt.Errorf("switch %s: %w", d.Switch, err)
					}
					dv.filled = true
				}
			}
			out = td.walk(out, key, dv.lastKeys(), want, got, op.replace)
		}
	}
	for _, p := range d.Deletes {
		key := jtree.PathKey(p)
		if e, _ := snap.entry(key); e.Exists {
			before := string(e.JSON)
			if e.ASCII != nil {
				before = *e.ASCII
			}
			out = append(out, plan.Change{Action: plan.Delete, Path: key, Before: before, Reason: ReasonAbsent})
		}
	}
	sortByPath(out)
	return out, nil
}

// byPath orders changes by path.
func byPath(a, b plan.Change) int { return strings.Compare(a.Path, b.Path) }

// sortByPath sorts changes by path, keeping the order of changes of one
// path (as slices.SortStableFunc with byPath does). It sorts their
// indices and then moves each change once: a stable sort of the changes
// themselves moved every 72-byte change many times, a quarter of
// compare's time on a fresh switch.
func sortByPath(cs []plan.Change) {
	if slices.IsSortedFunc(cs, byPath) {
		return
	}
	idx := make([]int32, len(cs))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int {
		if c := strings.Compare(cs[a].Path, cs[b].Path); c != 0 {
			return c
		}
		return int(a - b) // the earlier change first: stable
	})
	// Put cs[idx[j]] at j, one cycle of the permutation at a time; a
	// placed position is marked by idx[k] = k.
	for j := range idx {
		if idx[j] == int32(j) {
			continue
		}
		held := cs[j]
		k := j
		for {
			src := int(idx[k])
			idx[k] = int32(k)
			if src == j {
				cs[k] = held
				break
			}
			cs[k] = cs[src]
			k = src
		}
	}
}

// desiredValue is one decoded value of a Desired, with what compare
// derives from its path.
type desiredValue struct {
	// v is the value, decoded from raw at the first need (tree) when
	// raw is set: a value compared as text (sameText, rawText) is never
	// decoded.
	v   any
	raw []byte
	// src is the value compile encoded into raw (JSONUpdate), which
	// tree builds the tree from (treeOf) instead of parsing raw.
	src any
	// exact: raw is what jtree.ExactText writes of it (appendSorted's
	// exact), so its text is raw itself, less the skipped members
	// (jtree.DropMembers), with no sorting.
	exact   bool
	decoded bool
	ascii   bool
	key     string // jtree.PathKey of the path
	// last is the path's last element, whose key names (lastKeys) a
	// value compared as a tree or a text other than the switch's leaves
	// out: worked out only then, not for every value of a plan in sync.
	last   *gnmipb.PathElem
	filled bool // v has the YANG defaults filled in
	ready  bool // set from its update (decoded.get)
	known  bool // the schema knows the path (FillDefaults said so)
}

// sameText reports whether js, the JSON text of the observed value, is
// exactly want's text (jtree.ExactText, written into *buf, which is reused),
// with or without the key members the path names already. Then the
// observed value decodes to want itself (less those members, which the walk
// skips), and comparing finds no change: for a replace also with the YANG
// defaults, which fill both sides alike. A merge with defaults fills only
// the observed side: without any list or leaf-list (no '[' in the text)
// that only adds members the merge ignores, but filled entries of a list
// can change keys and a leaf-list of objects compared whole can differ, so
// compare asks sameText for a merge with defaults only when the text has
// no '['. The switch
// answering with the text fabricctl would write itself (sorted members, as
// the twins and encoding/json do) is the usual case right after a Set; any
// other text is decoded and compared as usual. FuzzCompare holds the two
// ways equal.
func (dv *desiredValue) sameText(js []byte, buf *[]byte) bool {
	if len(js) == 0 || dv.ascii {
		return false
	}
	if bytes.Equal(js, dv.raw) {
		// The very text fabricctl wrote (a target that answers with
		// members sorted, as JSONUpdate writes them).
		return true
	}
	keys := dv.lastKeys()
	if !dv.isObject() || len(keys) == 0 {
		return dv.textIs(js, buf, nil)
	}
	// First the variant js likely is: with the key members when it names
	// the first of them.
	first, second := keys, []string(nil)
	if namesMember(js, keys[0]) {
		first, second = nil, keys
	}
	return dv.textIs(js, buf, first) || dv.textIs(js, buf, second)
}

// textIs reports whether js is want's exact text without the members in
// skip (written into *buf).
func (dv *desiredValue) textIs(js []byte, buf *[]byte, skip []string) bool {
	b, ok := dv.text(*buf, skip)
	*buf = b
	return ok && bytes.Equal(js, b)
}

// namesMember reports whether the JSON text js has "name": somewhere.
func namesMember(js []byte, name string) bool {
	if name == "" {
		return false
	}
	for i := 0; ; {
		j := bytes.Index(js[i:], []byte(name))
		if j < 0 {
			return false
		}
		j += i
		if e := j + len(name); j > 0 && js[j-1] == '"' && e+1 < len(js) && js[e] == '"' && js[e+1] == ':' {
			return true
		}
		i = j + 1
	}
}

// text is want's exact text (jtree.ExactText), written into buf[:0]: from
// the tree when it is decoded, else from the JSON text (jtree.SortedText
// gives the same). ok is false when there is none.
func (dv *desiredValue) text(buf []byte, skip []string) ([]byte, bool) {
	switch {
	case dv.decoded:
		return jtree.ExactText(buf[:0], dv.v, skip)
	case dv.exact:
		if b, ok := jtree.DropMembers(buf[:0], dv.raw, skip); ok {
			return b, true
		}
	}
	return jtree.SortedText(buf[:0], dv.raw, skip)
}

// isObject reports whether the value is a JSON object.
func (dv *desiredValue) isObject() bool {
	if dv.decoded {
		_, ok := dv.v.(map[string]any)
		return ok
	}
	t := bytes.TrimLeft(dv.raw, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

// rawText is, for a value not decoded yet, the After text of the Create the
// walk gives when the value is missing on the switch (treeDiff.text: the
// JSON text, the path's key members left out of an object), without
// decoding it: for an object or an array whose exact text SortedText gives,
// which is the text treeDiff.text writes then. ok is false otherwise.
func (dv *desiredValue) rawText(buf *[]byte) ([]byte, bool) {
	if dv.decoded || dv.ascii {
		return nil, false
	}
	t := bytes.TrimLeft(dv.raw, " \t\r\n")
	if len(t) == 0 || (t[0] != '{' && t[0] != '[') {
		return nil, false
	}
	var skip []string
	if t[0] == '{' {
		skip = dv.lastKeys()
	}
	b, ok := dv.text(*buf, skip)
	*buf = b
	return b, ok
}

// tree is the decoded value.
func (dv *desiredValue) tree() (any, error) {
	if !dv.decoded {
		v, _, ok := treeOf(dv.src, dv.raw, nil)
		if dv.src == nil || !ok {
			var err error
			if v, err = jtree.Decode(dv.raw); err != nil {
				return nil, err
			}
		}
		dv.v, dv.decoded, dv.src = v, true, nil
	}
	return dv.v, nil
}

// walkPath is the path treeDiff.walk gives the top of the value at base.
func walkPath(base string) string {
	switch {
	case base == "" || base == "/":
		return "/"
	case strings.HasSuffix(base, ":/"):
		return strings.TrimSuffix(base, "/")
	}
	return base
}

// decoded caches the decoded values of a Desired's updates: plan compares
// against them and apply's verify again, in the same process. The values
// are kept by position, in compare's order (the replaces, then the
// updates), in one slice: a value is looked up by its index and found when
// the update at that index is still the same one. Used by one goroutine at
// a time.
type decoded struct {
	ups  []*gnmipb.Update
	vals []desiredValue // vals[i] is ups[i]'s, once vals[i].ready
}

// newDecoded is an empty cache of d's values, each decoded at its first
// use.
func newDecoded(d *Desired) *decoded {
	c := &decoded{ups: make([]*gnmipb.Update, 0, len(d.Replaces)+len(d.Updates))}
	c.ups = append(append(c.ups, d.Replaces...), d.Updates...)
	c.vals = make([]desiredValue, len(c.ups))
	return c
}

// dropSources lets go of the compiled Go values the trees not built yet
// would come from: apply keeps the plan's values until each switch is
// verified, and those values (many small structs and slices a switch)
// were the largest part of what the garbage collector marked on every
// cycle during an apply. A tree wanted later (verify of a read-back
// whose text is not the one written) decodes the JSON instead.
func (c *decoded) dropSources() {
	for i := range c.vals {
		c.vals[i].src = nil
	}
}

// held is c's place for the value of u, the update at index i in
// compare's order; nil when c does not hold that update there.
func (c *decoded) held(i int, u *gnmipb.Update) *desiredValue {
	if c == nil || i >= len(c.ups) || c.ups[i] != u {
		return nil
	}
	return &c.vals[i]
}

// get is the value of u, the update at index i in compare's order:
// decoded once when c holds that update there, else each time.
func (c *decoded) get(i int, u *gnmipb.Update) (*desiredValue, error) {
	dv := c.held(i, u)
	switch {
	case dv == nil:
		dv = &desiredValue{}
	case dv.ready:
		return dv, nil
	}
	if err := dv.init(u); err != nil {
		return nil, err
	}
	return dv, nil
}

// init sets dv from u: its key, and its JSON text (decoded when needed,
// tree) or, for any other encoding, its decoded value.
func (dv *desiredValue) init(u *gnmipb.Update) error {
	*dv = desiredValue{key: jtree.PathKey(u.GetPath()), last: lastElem(u.GetPath())}
	if js := jsonText(u.GetVal()); js != nil && json.Valid(js) {
		dv.raw = js // decoded when needed (tree)
	} else {
		v, ascii, err := jtree.Typed(u.GetVal())
		if err != nil {
			return err
		}
		dv.v, dv.ascii, dv.decoded = v, ascii, true
	}
	dv.ready = true
	return nil
}

// ReasonAbsent is the reason of a change that deletes a subtree the intent
// wants absent (Desired.Deletes).
const ReasonAbsent = "the intent wants it absent"

// Drift compares two snapshots of the same paths (a backup and a read-back)
// and lists what differs, as the changes that would take got back to want.
func Drift(want, got *Snapshot, cellBytes int64) []plan.Change {
	var out []plan.Change
	td := &treeDiff{cell: cellBytes}
	for _, w := range want.Entries {
		g, _ := got.entry(w.Path)
		switch {
		case w.ASCII != nil || g.ASCII != nil:
			var ws, gs string
			if w.ASCII != nil {
				ws = *w.ASCII
			}
			if g.ASCII != nil {
				gs = *g.ASCII
			}
			out = append(out, compareCLI(w.Path, cliLines(ws), cliLines(gs), true)...)
		default:
			wv, err1 := w.value()
			gv, err2 := g.value()
			if !w.Exists {
				wv = absent{}
			}
			if !g.Exists {
				gv = absent{}
			}
			if err1 != nil || err2 != nil {
				out = append(out, plan.Change{Action: plan.Update, Path: w.Path, Before: string(g.JSON), After: string(w.JSON), Reason: "unreadable value"})
				continue
			}
			out = td.walk(out, w.Path, nil, wv, gv, true)
		}
	}
	slices.SortStableFunc(out, byPath)
	return out
}

// lastElem is p's last element, nil when it has none.
func lastElem(p *gnmipb.Path) *gnmipb.PathElem {
	if el := p.GetElem(); len(el) > 0 {
		return el[len(el)-1]
	}
	return nil
}

// lastKeys are the key names of the value's path's last element.
func (dv *desiredValue) lastKeys() []string {
	var ks []string
	for k := range dv.last.GetKey() {
		ks = append(ks, k)
	}
	return ks
}

// walk walks want and got together and appends the changes to out. A
// subtree missing on the switch is one Create (and one Delete for a subtree
// only on the switch, under replace); leaves that differ are one Update
// each, so drift names the exact leaf. skipKeys are members of the
// top-level objects left out (the list keys the path names already). c,
// with its path buffer, is reused for all the values of one comparison.
func (c *treeDiff) walk(out []plan.Change, base string, skipKeys []string, want, got any, replace bool) []plan.Change {
	c.replace, c.out, c.skip = replace, out, nil
	if _, ok := want.(map[string]any); ok && len(skipKeys) > 0 {
		c.skip = skipKeys
	}
	if base == "/" {
		base = ""
	} else if strings.HasSuffix(base, ":/") {
		base = strings.TrimSuffix(base, "/")
	}
	c.path = append(c.path[:0], base...)
	switch {
	case want == absent{} && got != absent{} && replace:
		c.remove(got)
	case want != absent{}:
		c.node(want, got)
	}
	out, c.out = c.out, nil
	return out
}

// treeDiff is a walk of want and got. path is the path of the node being
// compared, built in place as the walk goes down: a string is made of it
// only for a change. The changes come in no particular order (walk's callers
// sort them by path).
type treeDiff struct {
	replace bool
	cell    int64
	out     []plan.Change
	// skip are the top-level members left out (until the walk leaves the
	// top).
	skip []string
	path []byte
}

// text is the display text of v, without the skipped members at the top.
func (c *treeDiff) text(v any) string {
	return jtree.TextWithout(v, c.skip)
}

func (c *treeDiff) at() string {
	if len(c.path) == 0 {
		return "/"
	}
	return string(c.path)
}

func (c *treeDiff) create(v any) {
	c.out = append(c.out, plan.Change{Action: plan.Create, Path: c.at(), After: c.text(v), Reason: reasonMissing})
}

const reasonMissing = "missing on the switch"

func (c *treeDiff) remove(v any) {
	c.out = append(c.out, plan.Change{Action: plan.Delete, Path: c.at(), Before: c.text(v),
		Reason: "not in the intent, in a subtree fabricctl owns and replaces"})
}

func (c *treeDiff) update(before, after any) {
	c.out = append(c.out, plan.Change{Action: plan.Update, Path: c.at(), Before: c.text(before), After: c.text(after), Reason: "differs from the intent"})
}

// down extends the path by sep and name (and drops the top-level skip
// list: it is for the top only); up(mark) goes back.
func (c *treeDiff) down(sep, name string) (mark int, skip []string) {
	mark, skip = len(c.path), c.skip
	c.path = append(append(c.path, sep...), name...)
	c.skip = nil
	return mark, skip
}

func (c *treeDiff) up(mark int, skip []string) {
	c.path, c.skip = c.path[:mark], skip
}

// absent marks a node that does not exist (JSON null is a value: YANG
// "empty" leaves are [null] in JSON_IETF).
type absent struct{}

func (c *treeDiff) node(want, got any) {
	if got == (absent{}) {
		c.create(want)
		return
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			c.update(got, want)
			return
		}
		for k, wv := range w {
			if slices.Contains(c.skip, k) {
				continue
			}
			mark, skip := c.down("/", k)
			if gv, ok := g[k]; ok {
				c.node(wv, gv)
			} else {
				c.create(wv)
			}
			c.up(mark, skip)
		}
		if !c.replace {
			return
		}
		for k, gv := range g {
			if _, ok := w[k]; ok || slices.Contains(c.skip, k) {
				continue
			}
			mark, skip := c.down("/", k)
			c.remove(gv)
			c.up(mark, skip)
		}
	case []any:
		if len(w) == 0 || !isObject(w[0]) {
			if jtree.Canon(w) != jtree.Canon(got) {
				c.update(got, want)
			}
			return
		}
		g, ok := got.([]any)
		if !ok {
			c.update(got, want)
			return
		}
		wantKeys, wdup := entryKeys(w)
		gotKeys, gdup := entryKeys(g)
		if wdup || gdup {
			// Not valid YANG data; compare by position rather than guess.
			wantKeys, gotKeys = positions(len(w)), positions(len(g))
		}
		gotIdx := newKeyIndex(gotKeys)
		for i, e := range w {
			k := wantKeys[i]
			mark, skip := c.down("", k)
			if gi := gotIdx.find(k); gi >= 0 {
				c.node(e, g[gi])
			} else {
				c.create(e)
			}
			c.up(mark, skip)
		}
		if c.replace {
			wantIdx := newKeyIndex(wantKeys)
			for i, k := range gotKeys {
				if wantIdx.find(k) < 0 {
					mark, skip := c.down("", k)
					c.remove(g[i])
					c.up(mark, skip)
				}
			}
		}
	default:
		if _, isMap := got.(map[string]any); isMap {
			c.update(got, want)
			return
		}
		if sameScalar(want, got) {
			return
		}
		wl := jtree.Leaf{Value: want, Canon: jtree.Canon(want)}
		gl := jtree.Leaf{Value: got, Canon: jtree.Canon(got)}
		if wl.Canon != gl.Canon && !withinCell(string(c.path), wl, gl, c.cell) {
			c.update(got, want)
		}
	}
}

// sameScalar reports whether a and b are the same string or the same
// number text (equal in canonical form without computing it).
func sameScalar(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case json.Number:
		y, ok := b.(json.Number)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	}
	return false
}

// entryKeys returns the key suffix of each entry of list and whether two
// are the same.
func entryKeys(list []any) ([]string, bool) {
	keys := make([]string, len(list))
	for i, e := range list {
		keys[i] = entryKey(e, i)
	}
	if len(keys) <= linearKeys {
		for i, k := range keys {
			if slices.Contains(keys[:i], k) {
				return keys, true
			}
		}
		return keys, false
	}
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		if seen[k] {
			return keys, true
		}
		seen[k] = true
	}
	return keys, false
}

// linearKeys is the list length up to which entries are found by their key
// with a scan (most lists: queues, profiles) rather than a map.
const linearKeys = 16

// keyIndex finds a list entry by its key suffix.
type keyIndex struct {
	keys []string
	at   map[string]int // for long lists: the index of each key
}

func newKeyIndex(keys []string) keyIndex {
	x := keyIndex{keys: keys}
	if len(keys) > linearKeys {
		x.at = make(map[string]int, len(keys))
		for i, k := range keys {
			x.at[k] = i
		}
	}
	return x
}

// find returns the index of the entry with key k, -1 when none.
func (x keyIndex) find(k string) int {
	if x.at == nil {
		return slices.Index(x.keys, k)
	}
	if i, ok := x.at[k]; ok {
		return i
	}
	return -1
}

func positions(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("[#%d]", i)
	}
	return out
}

func isObject(v any) bool {
	_, ok := v.(map[string]any)
	return ok
}

func entryKey(e any, i int) string {
	m, ok := e.(map[string]any)
	if !ok {
		return fmt.Sprintf("[#%d]", i)
	}
	return jtree.EntryKey(m, i)
}

// withinCell: buffer sizes and thresholds read back rounded to the cell
// size; a difference of at most one cell is not drift.
func withinCell(path string, a, b jtree.Leaf, cell int64) bool {
	if cell <= 0 {
		return false
	}
	name := path[strings.LastIndexByte(path, '/')+1:]
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i]
	}
	if !jtree.IsBufferLeaf(name) {
		return false
	}
	x, ok1 := jtree.Int(a.Value)
	y, ok2 := jtree.Int(b.Value)
	if !ok1 || !ok2 {
		return false
	}
	d := x - y
	if d < 0 {
		d = -d
	}
	return d <= cell
}

// compareCLI compares configuration lines. A desired "no X" line wants X
// absent. With replace, lines only on the switch are deleted.
func compareCLI(path string, want, got []string, replace bool) []plan.Change {
	var out []plan.Change
	for _, l := range want {
		if rest, ok := jtree.CLINo(l); ok {
			// "no X" wants X absent, and with it any setting X names
			// without its value (jtree.ResetBy: "no priority-flow-control"
			// takes "priority-flow-control on" away).
			for _, g := range got {
				if g == rest || len(g) > len(rest) && g[len(rest)] == ' ' && strings.HasPrefix(g, rest) && jtree.ResetBy(g, rest, cliOpensSection(got, g)) {
					out = append(out, plan.Change{Action: plan.Delete, Path: path, Before: g, Reason: "intent says: " + l})
				}
			}
			continue
		}
		if slices.Contains(got, l) {
			continue
		}
		if key, ok := jtree.CLIKey(l); ok {
			if i := slices.IndexFunc(got, func(x string) bool { k, ok := jtree.CLIKey(x); return ok && k == key }); i >= 0 {
				out = append(out, plan.Change{Action: plan.Update, Path: path, Before: got[i], After: l, Reason: "CLI setting differs from the intent"})
				continue
			}
		}
		out = append(out, plan.Change{Action: plan.Create, Path: path, After: l, Reason: "CLI line missing on the switch"})
	}
	if replace {
		for _, l := range got {
			if !slices.Contains(want, l) && !updated(out, l) {
				out = append(out, plan.Change{Action: plan.Delete, Path: path, Before: l, Reason: "not in the intent; fabricctl replaces " + path})
			}
		}
	}
	return out
}

// cliOpensSection reports whether line l of lines opens a section (some
// line lies inside it).
func cliOpensSection(lines []string, l string) bool {
	return slices.ContainsFunc(lines, func(x string) bool { return strings.HasPrefix(x, l+jtree.CLISep) })
}

func updated(cs []plan.Change, before string) bool {
	for _, c := range cs {
		if c.Action == plan.Update && c.Before == before {
			return true
		}
	}
	return false
}
