package hostdrv

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A host backup's name must be on disk before the host is changed: after
// the rename WriteBackup syncs the backup's directory (Linux fsync(2),
// NOTES), and a failed sync is an error, not a backup that a power loss
// may leave nameless. Without the directory sync this test failed.
func TestWriteBackupSyncsDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "backups")
	file := filepath.Join(dir, "h1.json")
	var synced []string
	old := syncDir
	t.Cleanup(func() { syncDir = old })
	syncDir = func(d string) error {
		if _, err := os.Stat(file); err != nil {
			t.Errorf("directory synced before the backup was renamed into it: %v", err)
		}
		synced = append(synced, d)
		return old(d)
	}
	b := &Backup{Version: BackupVersion, Host: "h1"}
	if err := WriteBackup(file, b); err != nil {
		t.Fatal(err)
	}
	if len(synced) != 1 || synced[0] != dir {
		t.Errorf("directories synced %q, want [%s]", synced, dir)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup file: %v %v", fi, err)
	}
	syncDir = func(string) error { return errors.New("EIO") }
	if err := WriteBackup(file, b); err == nil {
		t.Error("WriteBackup succeeded though the directory did not sync")
	}
}
