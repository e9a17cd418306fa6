package switchdrv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fabricctl/fabricctl/internal/durable"
	"github.com/fabricctl/fabricctl/internal/ownfs"
	"github.com/fabricctl/fabricctl/switchdrv/internal/jtree"
)

// WriteBackup saves snaps as one backup file of the fabric (what Apply
// writes for a run: see writeRun), synced to disk with its name in the
// directory before it returns, and returns the path.
func WriteBackup(dir, fabric string, snaps ...*Snapshot) (string, error) {
	lines := make([][]byte, len(snaps))
	for i, s := range snaps {
		var err error
		if lines[i], err = backupLine(s); err != nil {
			return "", fmt.Errorf("backup of switch %s: %w", s.Switch, err)
		}
	}
	path, err := writeRun(dir, fabric, time.Now(), lines)
	if err != nil {
		return "", err
	}
	if err := syncDir(dir); err != nil {
		return "", fmt.Errorf("backup %s: sync directory: %w", path, err)
	}
	return path, nil
}

// writeRun writes the backup file of one apply run,
// <dir>/<fabric>-<UTC time>.json (mode 0600, the directory 0700): lines
// (each one compact snapshot and its newline, JSON Lines) in that order,
// in one writev. It writes a temporary file, syncs it and renames it, so
// the file is complete or absent; its name is durable only once dir is
// synced (the caller's syncDir: Apply syncs it before any write to a
// switch).
func writeRun(dir, fabric string, at time.Time, lines [][]byte) (string, error) {
	// A directory another user owns or may write is refused: they could
	// swap a backup that restore then pushes to the switch.
	if err := ownfs.MkdirPrivate(dir); err != nil {
		return "", err
	}
	if fabric == "" {
		fabric = "fabric"
	}
	name := fmt.Sprintf("%s-%s.json", safeName(fabric), at.UTC().Format("20060102T150405.000000000Z"))
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
	if err := writeLines(tmp, lines); err != nil {
		tmp.Close()
		return "", err
	}
	if err := syncFile(tmp); err != nil {
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

// syncFile is (*os.File).Sync, a variable so that tests see it called.
var syncFile = (*os.File).Sync

// ReadBackup reads a backup file: the snapshots of an apply run, one JSON
// value after another (JSON Lines, as WriteBackup writes them), or a file
// of one switch as apply wrote them before (one snapshot, compact or
// indented). A value that is not a snapshot is an error naming the file and
// the line where the value starts. A file another user owns, or that
// others may write, is refused (ownfs.ReadTrusted): restore would push what
// they put in it to the switch.
func ReadBackup(path string) ([]*Snapshot, error) {
	b, err := ownfs.ReadTrusted(path)
	if err != nil {
		return nil, err
	}
	var out []*Snapshot
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		start := skipSpace(b, int(dec.InputOffset()))
		if start == len(b) {
			break
		}
		line := 1 + bytes.Count(b[:start], []byte{'\n'})
		var s Snapshot
		if err := dec.Decode(&s); err != nil {
			var se *json.SyntaxError
			if errors.As(err, &se) {
				if at := 1 + bytes.Count(b[:min(int(se.Offset), len(b))], []byte{'\n'}); at != line {
					return nil, fmt.Errorf("backup %s:%d: %w (seen at line %d)", path, line, err, at)
				}
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, fmt.Errorf("backup %s:%d: truncated: %w", path, line, err)
			}
			return nil, fmt.Errorf("backup %s:%d: %w", path, line, err)
		}
		if s.Version != SnapshotVersion {
			return nil, fmt.Errorf("backup %s:%d: format version %d is not supported (want %d)", path, line, s.Version, SnapshotVersion)
		}
		if s.Switch == "" {
			return nil, fmt.Errorf("backup %s:%d: names no switch", path, line)
		}
		out = append(out, &s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("backup %s: holds no snapshot", path)
	}
	return out, nil
}

// backupLine is snap's line of a run's backup file: its compact JSON and
// a newline.
func backupLine(snap *Snapshot) ([]byte, error) {
	b, err := encodeSnapshot(snap)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// skipSpace returns the offset of the first byte of b at or after i that
// is not JSON white space (len(b) when there is none).
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
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
