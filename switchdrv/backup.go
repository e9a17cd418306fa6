package switchdrv

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fabricctl/fabricctl/internal/durable"
	"github.com/fabricctl/fabricctl/switchdrv/internal/jtree"
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
	// Compact: ReadBackup reads both forms (backups written before were
	// indented).
	b, err := encodeSnapshot(snap)
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

// syncDir is durable.SyncDir, a variable so that tests see it called.
var syncDir = durable.SyncDir

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

// encodeSnapshot is json.Marshal(s), byte for byte, without its
// reflection and without compacting each value again: a value the switch
// sent that is compact already, and holds nothing json.Marshal would
// escape, is only validated and copied (an SR Linux switch of 32 ports:
// 40 KB of values). Anything else is left to json.Marshal.
func encodeSnapshot(s *Snapshot) ([]byte, error) {
	taken, err := s.Taken.MarshalJSON()
	if err != nil || s.Entries == nil {
		return json.Marshal(s)
	}
	n := 256
	for _, e := range s.Entries {
		n += len(e.Path) + len(e.JSON) + 40
		if e.ASCII != nil {
			n += len(*e.ASCII) + 10
		}
	}
	b := make([]byte, 0, n)
	ok := true
	b = append(b, `{"version":`...)
	b = strconv.AppendInt(b, int64(s.Version), 10)
	b = append(b, `,"switch":`...)
	b, ok = appendPlainString(b, s.Switch, ok)
	if s.Platform != "" {
		b = append(b, `,"platform":`...)
		b, ok = appendPlainString(b, string(s.Platform), ok)
	}
	if s.Address != "" {
		b = append(b, `,"address":`...)
		b, ok = appendPlainString(b, s.Address, ok)
	}
	b = append(b, `,"taken":`...)
	b = append(b, taken...)
	b = append(b, `,"basis":`...)
	b, ok = appendPlainString(b, s.Basis, ok)
	b = append(b, `,"entries":[`...)
	for i, e := range s.Entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"path":`...)
		b, ok = appendPlainString(b, e.Path, ok)
		b = append(b, `,"exists":`...)
		b = strconv.AppendBool(b, e.Exists)
		if len(e.JSON) > 0 {
			if !plainRaw(e.JSON) {
				return json.Marshal(s)
			}
			b = append(b, `,"json":`...)
			b = append(b, e.JSON...)
		}
		if e.ASCII != nil {
			b = append(b, `,"ascii":`...)
			b, ok = appendPlainString(b, *e.ASCII, ok)
		}
		b = append(b, '}')
		if !ok {
			return json.Marshal(s)
		}
	}
	b = append(b, "]}"...)
	return b, nil
}

// appendPlainString appends s quoted when json.Marshal would write it as
// is (jtree.PlainString); otherwise it reports !ok (and the caller asks
// json.Marshal). ok carries the earlier appends' verdict.
func appendPlainString(b []byte, s string, ok bool) ([]byte, bool) {
	b, plain := jtree.AppendPlainString(b, s)
	return b, ok && plain
}

// plainRaw reports whether json.Marshal would copy the raw value v as it
// is: valid JSON, no white space to compact, no byte it escapes ('<', '>',
// '&', and U+2028/U+2029, which start with 0xE2).
func plainRaw(v []byte) bool {
	for _, c := range v {
		if notRaw[c] {
			return false
		}
	}
	return json.Valid(v)
}

// notRaw marks the bytes plainRaw refuses.
var notRaw = [256]bool{' ': true, '\t': true, '\n': true, '\r': true, '<': true, '>': true, '&': true, 0xE2: true}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}
