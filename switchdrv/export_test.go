package switchdrv

import (
	"os"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
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
	for u, dv := range d.decodedValues() {
		if dv.src == nil {
			continue
		}
		if tree, _, ok := treeOf(dv.src, dv.raw, nil); ok {
			out[u] = tree
		}
	}
	return out
}
