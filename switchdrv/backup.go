package switchdrv

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// WriteBackup saves snap as <dir>/<switch>-<UTC time>.json (mode 0600, the
// directory 0700), the file and its name in the directory synced to disk
// before it returns, and returns the path.
func WriteBackup(dir string, snap *Snapshot) (string, error) {
	path, err := writeBackup(dir, snap)
	if err != nil {
		return "", err
	}
	if err := syncDir(dir); err != nil {
		return "", fmt.Errorf("backup %s: sync directory: %w", path, err)
	}
	return path, nil
}

// writeBackup is WriteBackup without the directory sync: the file's data
// is on disk, its name (the rename) only once dir is synced. Apply writes
// every switch's backup this way, then syncs the directory once, before
// any write to a switch.
func writeBackup(dir string, snap *Snapshot) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	// Compact: the switches' values go in as they came (json.RawMessage
	// is only validated and compacted), where indenting rewrote them all.
	// ReadBackup reads both forms (backups written before were indented).
	b, err := json.Marshal(snap)
	if err != nil {
		return "", err
	}
	b = append(b, '\n')
	name := fmt.Sprintf("%s-%s.json", safeName(snap.Switch), snap.Taken.UTC().Format("20060102T150405.000000000Z"))
	path := filepath.Join(dir, name)
	tmp, err := os.CreateTemp(dir, ".backup-*")
	if err != nil {
		return "", err
	}
	renamed := false
	defer func() {
		if !renamed {
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return "", err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", err
	}
	renamed = true
	return path, nil
}

// syncDir makes the entries of dir (a file renamed into it) durable:
// fsync(2) of a file "does not necessarily ensure that the entry in the
// directory containing the file has also reached disk. For that an
// explicit fsync() on a file descriptor for the directory is also needed"
// (Linux fsync(2), NOTES; POSIX leaves it to the implementation). Without
// it a power loss right after apply can leave the backup's data on disk
// under no name. A variable so that tests can see when it is called.
var syncDir = func(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return err
	}
	return d.Close()
}

// ReadBackup reads a file written by WriteBackup (compact or, as written
// before, indented JSON).
func ReadBackup(path string) (*Snapshot, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("backup %s: %w", path, err)
	}
	if s.Version != SnapshotVersion {
		return nil, fmt.Errorf("backup %s: format version %d is not supported (want %d)", path, s.Version, SnapshotVersion)
	}
	if s.Switch == "" {
		return nil, fmt.Errorf("backup %s: names no switch", path)
	}
	return &s, nil
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}
