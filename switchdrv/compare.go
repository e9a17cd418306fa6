package switchdrv

import (
	"fmt"
	"slices"
	"sort"
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
func compare(d *Desired, snap *Snapshot, q Quirks, cache decoded) ([]plan.Change, error) {
	var out []plan.Change
	var schema DefaultsFiller
	if q.SchemaDefaults {
		schema = q.Defaults
	}
	ops := []struct {
		updates []*gnmipb.Update
		replace bool
	}{{d.Replaces, true}, {d.Updates, false}}
	for _, op := range ops {
		for _, u := range op.updates {
			key := jtree.PathKey(u.GetPath())
			want, isASCII, err := cache.value(u)
			if err != nil {
				return nil, fmt.Errorf("switch %s: desired %s: %w", d.Switch, key, err)
			}
			e, _ := snap.entry(key)
			if isASCII {
				var got string
				if e.ASCII != nil {
					got = *e.ASCII
				}
				out = append(out, compareCLI(key, cliLines(want.(string)), cliLines(got), op.replace)...)
				continue
			}
			got, err := e.value()
			if err != nil {
				return nil, fmt.Errorf("switch %s: observed %s: %w", d.Switch, key, err)
			}
			if !e.Exists {
				got = absent{}
			} else if o := u.GetPath().GetOrigin(); schema != nil && (o == "" || o == "openconfig") {
				// got may be the snapshot's own tree: fill a copy.
				got = jtree.Clone(got)
				if err := schema.FillDefaults(u.GetPath(), got); err != nil {
					return nil, fmt.Errorf("switch %s: %w", d.Switch, err)
				}
				if op.replace {
					if err := schema.FillDefaults(u.GetPath(), want); err != nil {
						return nil, fmt.Errorf("switch %s: %w", d.Switch, err)
					}
				}
			}
			out = append(out, compareTree(key, lastKeys(u.GetPath()), want, got, op.replace, q.BufferCellBytes)...)
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
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// desiredValue is one decoded value of a Desired.
type desiredValue struct {
	v     any
	ascii bool
}

// decoded caches the decoded values of a Desired's updates: plan compares
// against them and apply's verify again, in the same process. Used by one
// goroutine at a time.
type decoded map[*gnmipb.Update]desiredValue

// value decodes u's value, once when c is not nil.
func (c decoded) value(u *gnmipb.Update) (any, bool, error) {
	if dv, ok := c[u]; ok {
		return dv.v, dv.ascii, nil
	}
	v, ascii, err := jtree.Typed(u.GetVal())
	if err != nil {
		return nil, false, err
	}
	if c != nil {
		c[u] = desiredValue{v, ascii}
	}
	return v, ascii, nil
}

// ReasonAbsent is the reason of a change that deletes a subtree the intent
// wants absent (Desired.Deletes).
const ReasonAbsent = "the intent wants it absent"

// Drift compares two snapshots of the same paths (a backup and a read-back)
// and lists what differs, as the changes that would take got back to want.
func Drift(want, got *Snapshot, cellBytes int64) []plan.Change {
	var out []plan.Change
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
			out = append(out, compareTree(w.Path, nil, wv, gv, true, cellBytes)...)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func lastKeys(p *gnmipb.Path) []string {
	el := p.GetElem()
	if len(el) == 0 {
		return nil
	}
	var ks []string
	for k := range el[len(el)-1].GetKey() {
		ks = append(ks, k)
	}
	return ks
}

// compareTree walks want and got together. A subtree missing on the switch
// is one Create (and one Delete for a subtree only on the switch, under
// replace); leaves that differ are one Update each, so drift names the exact
// leaf.
func compareTree(base string, skipKeys []string, want, got any, replace bool, cell int64) []plan.Change {
	c := &treeDiff{replace: replace, cell: cell}
	wm, wok := want.(map[string]any)
	gm, gok := got.(map[string]any)
	if len(skipKeys) > 0 && wok {
		wm = withoutKeys(wm, skipKeys)
		want = wm
		if gok {
			got = withoutKeys(gm, skipKeys)
		}
	}
	if base == "/" {
		base = ""
	} else if strings.HasSuffix(base, ":/") {
		base = strings.TrimSuffix(base, "/")
	}
	switch {
	case want == absent{} && got != absent{} && replace:
		c.remove(base, got)
	case want != absent{}:
		c.node(base, want, got)
	}
	return c.out
}

func withoutKeys(m map[string]any, keys []string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if !slices.Contains(keys, k) {
			out[k] = v
		}
	}
	return out
}

type treeDiff struct {
	replace bool
	cell    int64
	out     []plan.Change
}

func (c *treeDiff) create(path string, v any) {
	c.out = append(c.out, plan.Change{Action: plan.Create, Path: pathOrRoot(path), After: jtree.Text(v), Reason: "missing on the switch"})
}

func (c *treeDiff) remove(path string, v any) {
	c.out = append(c.out, plan.Change{Action: plan.Delete, Path: pathOrRoot(path), Before: jtree.Text(v),
		Reason: "not in the intent, in a subtree fabricctl owns and replaces"})
}

func (c *treeDiff) update(path string, before, after any) {
	c.out = append(c.out, plan.Change{Action: plan.Update, Path: pathOrRoot(path), Before: jtree.Text(before), After: jtree.Text(after), Reason: "differs from the intent"})
}

func pathOrRoot(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

// absent marks a node that does not exist (JSON null is a value: YANG
// "empty" leaves are [null] in JSON_IETF).
type absent struct{}

func (c *treeDiff) node(path string, want, got any) {
	if got == (absent{}) {
		c.create(path, want)
		return
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			c.update(path, got, want)
			return
		}
		for _, k := range sortedKeys(w, g) {
			wv, inW := w[k]
			gv, inG := g[k]
			switch {
			case inW && inG:
				c.node(path+"/"+k, wv, gv)
			case inW:
				c.create(path+"/"+k, wv)
			case c.replace:
				c.remove(path+"/"+k, gv)
			}
		}
	case []any:
		if len(w) == 0 || !isObject(w[0]) {
			if jtree.Canon(w) != jtree.Canon(got) {
				c.update(path, got, want)
			}
			return
		}
		g, ok := got.([]any)
		if !ok {
			c.update(path, got, want)
			return
		}
		key := entryKey
		if duplicateKeys(w) || duplicateKeys(g) {
			// Not valid YANG data; compare by position rather than guess.
			key = func(_ any, i int) string { return fmt.Sprintf("[#%d]", i) }
		}
		gotByKey := map[string]any{}
		var gotKeys []string
		for i, e := range g {
			k := key(e, i)
			gotByKey[k] = e
			gotKeys = append(gotKeys, k)
		}
		wantKeys := map[string]bool{}
		for i, e := range w {
			k := key(e, i)
			wantKeys[k] = true
			if ge, ok := gotByKey[k]; ok {
				c.node(path+k, e, ge)
			} else {
				c.create(path+k, e)
			}
		}
		if c.replace {
			for _, k := range gotKeys {
				if !wantKeys[k] {
					c.remove(path+k, gotByKey[k])
				}
			}
		}
	default:
		if _, isMap := got.(map[string]any); isMap {
			c.update(path, got, want)
			return
		}
		wl := jtree.Leaf{Value: want, Canon: jtree.Canon(want)}
		gl := jtree.Leaf{Value: got, Canon: jtree.Canon(got)}
		if wl.Canon != gl.Canon && !withinCell(path, wl, gl, c.cell) {
			c.update(path, got, want)
		}
	}
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

func duplicateKeys(list []any) bool {
	seen := map[string]bool{}
	for i, e := range list {
		k := entryKey(e, i)
		if seen[k] {
			return true
		}
		seen[k] = true
	}
	return false
}

func sortedKeys(a, b map[string]any) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
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
			if slices.Contains(got, rest) {
				out = append(out, plan.Change{Action: plan.Delete, Path: path, Before: rest, Reason: "intent says: " + l})
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

func updated(cs []plan.Change, before string) bool {
	for _, c := range cs {
		if c.Action == plan.Update && c.Before == before {
			return true
		}
	}
	return false
}
