package hostdrv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricctl/fabricctl/intent"
)

func TestRoCEv2GIDs(t *testing.T) {
	tests := []struct {
		name      string
		mutate    func(root string) error
		want      []int
		wantNotes int
	}{
		{"v2 GIDs at 1 and 3", func(string) error { return nil }, []int{1, 3}, 0},
		// GID 3 unused (all zero): only the link-local RoCE v2 GID is left,
		// which routes nowhere in an L3 fabric, so the NIC gets a note.
		{"GID 3 unused (all zero)", func(root string) error {
			return os.WriteFile(filepath.Join(root, "sys/class/infiniband/mlx5_0/ports/1/gids/3"), []byte("0000:0000:0000:0000:0000:0000:0000:0000\n"), 0o644)
		}, []int{1}, 1},
		{"GIDs on another netdev", func(root string) error {
			for _, i := range []string{"1", "3"} {
				if err := os.WriteFile(filepath.Join(root, "sys/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs", i), []byte("bond0\n"), 0o644); err != nil {
					return err
				}
			}
			return nil
		}, nil, 1},
		{"global IPv6 address", func(root string) error {
			return os.WriteFile(filepath.Join(root, "sys/class/infiniband/mlx5_0/ports/1/gids/3"), []byte("fd00:0000:0000:0000:0000:0000:0000:0001\n"), 0o644)
		}, []int{1, 3}, 0},
		{"no RDMA device", func(root string) error {
			return os.Remove(filepath.Join(root, "sys/class/infiniband/mlx5_0"))
		}, nil, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := mlx5Tree(t, treeOpts{}, "ens1f0np0")
			if err := tc.mutate(root); err != nil {
				t.Fatal(err)
			}
			fsys := NewDirFiles(root)
			got := RoCEv2GIDs(fsys, "mlx5_0", 1, "ens1f0np0")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("RoCEv2GIDs mismatch (-want +got):\n%s", diff)
			}
			notes := gidNotes(fsys, intent.NIC{Interface: "ens1f0np0", RDMADevice: "mlx5_0"})
			if len(notes) != tc.wantNotes {
				t.Errorf("gidNotes = %q, want %d notes", notes, tc.wantNotes)
			}
		})
	}
}
