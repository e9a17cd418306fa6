package switchdrv

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// WriteBackup saves snap as <dir>/<switch>-<UTC time>.json (mode 0600, the
// directory 0700), synced to disk before it returns, and returns the path.
func WriteBackup(dir string, snap *Snapshot) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(snap, "", "  ")
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

// ReadBackup reads a file written by WriteBackup.
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
