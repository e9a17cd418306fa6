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
func Compare(d *Desired, snap *Snapshot, q Quirks) ([]plan.Change, error) {
	var out []plan.Change
	ops := []struct {
		updates []*gnmipb.Update
		replace bool
	}{{d.Replaces, true}, {d.Updates, false}}
	for _, op := range ops {
		for _, u := range op.updates {
			key := pathKey(u.GetPath())
			want, isASCII, err := jtree.Typed(u.GetVal())
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
			out = append(out, compareTree(key, lastKeys(u.GetPath()), want, got, op.replace, q.BufferCellBytes)...)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

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

func compareTree(base string, skipKeys []string, want, got any, replace bool, cell int64) []plan.Change {
	w, g := map[string]jtree.Leaf{}, map[string]jtree.Leaf{}
	flatBase := base
	if flatBase == "/" {
		flatBase = ""
	} else if strings.HasSuffix(flatBase, ":/") {
		flatBase = strings.TrimSuffix(flatBase, "/")
	}
	if want != nil {
		jtree.Flatten(want, flatBase, w)
	}
	if got != nil {
		jtree.Flatten(got, flatBase, g)
	}
	for _, k := range skipKeys {
		delete(w, flatBase+"/"+k)
		delete(g, flatBase+"/"+k)
	}
	paths := make([]string, 0, len(w)+len(g))
	for p := range w {
		paths = append(paths, p)
	}
	for p := range g {
		if _, ok := w[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	var out []plan.Change
	for _, p := range paths {
		wl, inW := w[p]
		gl, inG := g[p]
		switch {
		case inW && !inG:
			out = append(out, plan.Change{Action: plan.Create, Path: p, After: jtree.Text(wl.Value), Reason: "missing on the switch"})
		case inW && inG:
			if wl.Canon == gl.Canon || withinCell(p, wl, gl, cell) {
				continue
			}
			out = append(out, plan.Change{Action: plan.Update, Path: p, Before: jtree.Text(gl.Value), After: jtree.Text(wl.Value), Reason: "differs from the intent"})
		case replace:
			out = append(out, plan.Change{Action: plan.Delete, Path: p, Before: jtree.Text(gl.Value),
				Reason: "not in the intent; fabricctl owns " + base + " and replaces it"})
		}
	}
	return out
}

// withinCell: buffer thresholds read back rounded up to the cell size.
func withinCell(path string, a, b jtree.Leaf, cell int64) bool {
	if cell <= 0 {
		return false
	}
	name := path[strings.LastIndexByte(path, '/')+1:]
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i]
	}
	if !strings.Contains(name, "threshold") {
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
		if !slices.Contains(got, l) {
			out = append(out, plan.Change{Action: plan.Create, Path: path, After: l, Reason: "CLI line missing on the switch"})
		}
	}
	if replace {
		for _, l := range got {
			if !slices.Contains(want, l) {
				out = append(out, plan.Change{Action: plan.Delete, Path: path, Before: l, Reason: "not in the intent; fabricctl replaces " + path})
			}
		}
	}
	return out
}
