package switchdrv

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv/internal/jtree"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
)

// Owned names a keyed list in which fabricctl creates entries under names
// that start with Prefix (e.g. SR Linux
// /qos/buffer-management/buffer-allocation-profile, key "name", prefix
// "FABRICCTL_"). An entry of such a list that the intent no longer
// produces is stale: plan deletes it in the same Set once nothing left on
// the switch references it, and names those it keeps (issue 10 item 17).
// Platforms whose payload depends on the switch's state in other ways do
// this in their Refiner (SONiC).
type Owned struct {
	// List is the list's path, its last element without keys.
	List *gnmipb.Path
	// Key is the list's key leaf.
	Key string
	// Prefix starts the names fabricctl gives its entries.
	Prefix string
	// Scope is the subtree where references to the entries live (read at
	// plan time with the list); nil = the list's parent.
	Scope *gnmipb.Path
	// By, for a list whose entries fabricctl names without Prefix
	// (OpenConfig's queues and forwarding groups, named after the
	// intent's classes), are fabricctl's own FABRICCTL-named objects
	// (within Scope) that name the entries fabricctl made: an entry one of
	// them names on the switch before the Set is fabricctl's, since those
	// objects are fabricctl's and it only ever points them at entries it
	// wrote. An entry nothing of fabricctl's names is never touched.
	By []*gnmipb.Path
}

// ownedEntry says whether the entry n of o's list on the switch is one
// fabricctl made: its name starts with o.Prefix, or (o.By) one of
// fabricctl's own objects names it in roots, the switch before the Set.
func ownedEntry(o Owned, n string, roots map[string]map[string]any) bool {
	if o.Prefix != "" && strings.HasPrefix(n, o.Prefix) {
		return true
	}
	for _, b := range o.By {
		v, ok := jtree.Get(roots[b.GetOrigin()], b.GetElem())
		if ok && len(references(v, n, "")) > 0 {
			return true
		}
	}
	return false
}

func (o Owned) scope() *gnmipb.Path {
	if o.Scope != nil {
		return o.Scope
	}
	el := o.List.GetElem()
	return &gnmipb.Path{Origin: o.List.GetOrigin(), Elem: el[:max(len(el)-1, 0)]}
}

// staleOwned reads d.Owned's lists and scopes and adds to d.Deletes the
// stale entries nothing references once the Set is applied; the others are
// named in d.Notes.
func staleOwned(ctx context.Context, c *transport.Client, sw *intent.Switch, d *Desired) error {
	if len(d.Owned) == 0 {
		return nil
	}
	paths, _ := ownedReads(d)
	found, err := observe(ctx, c, sw, paths)
	if err != nil {
		return err
	}
	return staleFrom(sw, d, paths, found.Entries)
}

// ownedReads are the paths staleFrom needs read (d.Owned's lists and
// scopes) and their keys.
func ownedReads(d *Desired) ([]*gnmipb.Path, []string) {
	var paths []*gnmipb.Path
	var keys []string
	seen := map[string]bool{}
	for _, o := range d.Owned {
		for _, p := range []*gnmipb.Path{o.List, o.scope()} {
			if k := jtree.PathKey(p); !seen[k] {
				seen[k] = true
				paths = append(paths, p)
				keys = append(keys, k)
			}
		}
	}
	return paths, keys
}

// ownedLists are d.Owned's lists alone and their keys: what apply's one Get
// reads so that mayBeStale can tell whether the rule needs its scopes.
func ownedLists(d *Desired) ([]*gnmipb.Path, []string) {
	var paths []*gnmipb.Path
	var keys []string
	for _, o := range d.Owned {
		if k := jtree.PathKey(o.List); !slices.Contains(keys, k) {
			paths = append(paths, o.List)
			keys = append(keys, k)
		}
	}
	return paths, keys
}

// mayBeStale says whether the switch's entries of ownedLists' paths hold
// one the Set does not write that may be fabricctl's: one with an Owned's
// Prefix, or any entry of a list owned By reference (which the scopes
// tell). Only then does the rule read the scopes (staleOwned).
func mayBeStale(d *Desired, paths []*gnmipb.Path, entries []Entry) bool {
	for i, e := range entries {
		v, err := e.value()
		if err != nil || !e.Exists {
			continue
		}
		k := jtree.PathKey(paths[i])
		for _, o := range d.Owned {
			if jtree.PathKey(o.List) != k {
				continue
			}
			written := writtenNames(d, o)
			for _, n := range entryNames(v, o.Key) {
				if !written[n] && (len(o.By) > 0 || o.Prefix != "" && strings.HasPrefix(n, o.Prefix)) {
					return true
				}
			}
		}
	}
	return false
}

// apart says whether no key of a is in b.
func apart(a, b []string) bool {
	for _, k := range a {
		if slices.Contains(b, k) {
			return false
		}
	}
	return true
}

// staleFrom is staleOwned given the switch's entries of ownedReads' paths.
func staleFrom(sw *intent.Switch, d *Desired, paths []*gnmipb.Path, entries []Entry) error {
	// The switch's state of those subtrees per origin, then the Set applied
	// to it: references are what is left after the Set.
	roots := map[string]map[string]any{}
	root := func(origin string) map[string]any {
		if roots[origin] == nil {
			roots[origin] = map[string]any{}
		}
		return roots[origin]
	}
	for i, e := range entries {
		v, err := e.value()
		if err != nil || !e.Exists {
			continue
		}
		if err := jtree.Replace(root(paths[i].GetOrigin()), paths[i].GetElem(), jtree.Clone(v)); err != nil {
			return fmt.Errorf("switch %s: %s: %w", sw.Name, e.Path, err)
		}
	}
	after := map[string]map[string]any{}
	for o, r := range roots {
		after[o] = jtree.Clone(r).(map[string]any)
	}
	apply := func(us []*gnmipb.Update, replace bool) error {
		for _, u := range us {
			v, ascii, err := jtree.Typed(u.GetVal())
			if err != nil || ascii {
				continue
			}
			r := after[u.GetPath().GetOrigin()]
			if r == nil {
				continue
			}
			if replace {
				err = jtree.Replace(r, u.GetPath().GetElem(), v)
			} else {
				err = jtree.Update(r, u.GetPath().GetElem(), v)
			}
			if err != nil {
				return fmt.Errorf("switch %s: %s: %w", sw.Name, jtree.PathKey(u.GetPath()), err)
			}
		}
		return nil
	}
	for _, p := range d.Deletes {
		if r := after[p.GetOrigin()]; r != nil {
			_ = jtree.Delete(r, p.GetElem())
		}
	}
	if err := apply(d.Replaces, true); err != nil {
		return err
	}
	if err := apply(d.Updates, false); err != nil {
		return err
	}
	type cand struct {
		path *gnmipb.Path
		name string
	}
	var stale []cand
	for _, o := range d.Owned {
		want, _ := jtree.Get(after[o.List.GetOrigin()], o.List.GetElem())
		have, _ := jtree.Get(roots[o.List.GetOrigin()], o.List.GetElem())
		left := map[string]bool{} // still there once the Set is applied
		for _, n := range entryNames(want, o.Key) {
			left[n] = true
		}
		// An entry the Set writes is wanted; one only on the switch is
		// stale (after holds it still: the Set did not touch it).
		written := writtenNames(d, o)
		for _, n := range entryNames(have, o.Key) {
			if ownedEntry(o, n, roots) && left[n] && !written[n] {
				el := slices.Clone(o.List.GetElem())
				last := el[len(el)-1]
				el[len(el)-1] = &gnmipb.PathElem{Name: last.GetName(), Key: map[string]string{o.Key: n}}
				stale = append(stale, cand{&gnmipb.Path{Origin: o.List.GetOrigin(), Elem: el}, n})
			}
		}
	}
	for _, s := range stale {
		_ = jtree.Delete(after[s.path.GetOrigin()], s.path.GetElem())
	}
	for _, s := range stale {
		var by []string
		for o, r := range after {
			by = append(by, references(r, s.name, o)...)
		}
		if len(by) > 0 {
			sort.Strings(by)
			d.Notes = append(d.Notes, fmt.Sprintf("%s is no longer wanted but is kept: still used by %s", jtree.PathKey(s.path), strings.Join(by, ", ")))
			continue
		}
		d.Deletes = append(d.Deletes, s.path)
	}
	return nil
}

// writtenNames are the entries of o's list the Set replaces or updates.
func writtenNames(d *Desired, o Owned) map[string]bool {
	out := map[string]bool{}
	n := len(o.List.GetElem())
	for _, u := range slices.Concat(d.Replaces, d.Updates) {
		p := u.GetPath()
		if p.GetOrigin() != o.List.GetOrigin() || len(p.GetElem()) < n {
			continue
		}
		if !sameNames(p.GetElem()[:n], o.List.GetElem()) {
			continue
		}
		if k, ok := p.GetElem()[n-1].GetKey()[o.Key]; ok {
			out[k] = true
		}
	}
	return out
}

func sameNames(a, b []*gnmipb.PathElem) bool {
	for i := range a {
		if jtree.Name(a[i].GetName()) != jtree.Name(b[i].GetName()) {
			return false
		}
	}
	return true
}

// entryNames lists the key values of the entries of a JSON list.
func entryNames(list any, key string) []string {
	l, _ := list.([]any)
	var out []string
	for _, e := range l {
		m, _ := e.(map[string]any)
		for k, v := range m {
			if jtree.Name(k) == key {
				if s, ok := v.(string); ok {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// references lists where in tree a string leaf equals name.
func references(tree any, name, base string) []string {
	var out []string
	var walk func(v any, at string)
	walk = func(v any, at string) {
		switch t := v.(type) {
		case map[string]any:
			for k, c := range t {
				walk(c, at+"/"+jtree.Name(k))
			}
		case []any:
			for i, c := range t {
				walk(c, at+entryKey(c, i))
			}
		case string:
			if t == name || strings.HasSuffix(t, ":"+name) {
				out = append(out, at)
			}
		}
	}
	if base != "" {
		base += ":"
	}
	walk(tree, base)
	return out
}
