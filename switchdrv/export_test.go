package switchdrv

import (
	"fmt"
	"os"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/switchdrv/internal/jtree"
)

// SetSyncDir replaces the directory sync of the backups for a test and
// returns the function that puts the real one back.
func SetSyncDir(f func(dir string) error) (restore func()) {
	old := syncDir
	syncDir = f
	return func() { syncDir = old }
}

// SetSyncFile replaces the sync of a backup file (before its rename) for a
// test and returns the function that puts the real one back.
func SetSyncFile(f func(*os.File) error) (restore func()) {
	old := syncFile
	syncFile = f
	return func() { syncFile = old }
}

// TreeOf is treeOf without a buffer.
func TreeOf(v any, b []byte) (any, bool) {
	t, _, ok := treeOf(v, b, nil)
	return t, ok
}

// DesiredTrees returns the trees plan gets for d's updates (without those
// it decodes); d forgets its values, as in plan.
func DesiredTrees(d *Desired) map[*gnmipb.Update]any {
	out := map[*gnmipb.Update]any{}
	c := d.decodedValues()
	for i, u := range c.ups {
		dv := &c.vals[i]
		if dv.src == nil {
			continue
		}
		if tree, _, ok := treeOf(dv.src, dv.raw, nil); ok {
			out[u] = tree
		}
	}
	return out
}

// CheckExactTexts holds, for every value of d whose compiled text is
// marked exact, the text compare takes from it (DropMembers) equal to
// what sorting it gives (jtree.SortedText), with and without the path's
// key members; it returns how many it checked. d forgets its values.
func CheckExactTexts(d *Desired) (int, error) {
	n := 0
	c := d.decodedValues()
	for i, u := range c.ups {
		dv := &c.vals[i]
		if !dv.exact {
			continue
		}
		n++
		for _, skip := range [][]string{nil, dv.lastKeys()} {
			got, ok1 := dv.text(nil, skip)
			want, ok2 := jtree.SortedText(nil, dv.raw, skip)
			if !ok1 || !ok2 || string(got) != string(want) {
				return n, fmt.Errorf("%s without %v: text %s (%v), sorted %s (%v)", jtree.PathKey(u.GetPath()), skip, got, ok1, want, ok2)
			}
		}
	}
	return n, nil
}

// OwnedLists is how many lists the stale-object rule reads for d in the
// plan's Get (ownedLists), which they lead.
func OwnedLists(d *Desired) int {
	p, _ := ownedLists(d)
	return len(p)
}
