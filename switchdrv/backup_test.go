package switchdrv_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv"
)

// recordDirSyncs replaces the backup directory sync for the test: a sync
// of dir records which backup files were in it at that moment (what the
// sync made durable) and calls also; nothing is synced for real.
func recordDirSyncs(t *testing.T, dir string, also func()) *[][]string {
	t.Helper()
	var mu sync.Mutex
	var syncs [][]string
	restore := switchdrv.SetSyncDir(func(d string) error {
		if d == dir {
			names, _ := filepath.Glob(filepath.Join(dir, "*.json"))
			mu.Lock()
			syncs = append(syncs, names)
			mu.Unlock()
			if also != nil {
				also()
			}
		}
		return nil
	})
	t.Cleanup(restore)
	return &syncs
}

// TestWriteBackupSyncsDirectory: after the rename, the backup directory is
// fsynced, so the backup's name survives a power loss (Linux fsync(2),
// NOTES: the file's fsync does not make its directory entry durable).
// Before the fix no directory was synced and this failed.
func TestWriteBackupSyncsDirectory(t *testing.T) {
	dir := t.TempDir()
	syncs := recordDirSyncs(t, dir, nil)
	snap := &switchdrv.Snapshot{Version: switchdrv.SnapshotVersion, Switch: "leaf1", Taken: time.Now(), Basis: "b",
		Entries: []switchdrv.Entry{{Path: "/qos", Exists: true, JSON: json.RawMessage(`{"srl_nokia-qos:a": 1}`)}}}
	path, err := switchdrv.WriteBackup(dir, snap)
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{path}}; !cmp.Equal(want, *syncs) {
		t.Errorf("directory syncs (the backups present at each): got %v, want %v (one, after the rename)", *syncs, want)
	}
}

// TestApplySyncsBackupDirectoryBeforeWriting: apply syncs the backup
// directory once, with every switch's backup in it, before the first Set.
// Before the fix no directory was synced and this failed.
func TestApplySyncsBackupDirectoryBeforeWriting(t *testing.T) {
	l := newLab(t, 3, 0)
	var mu sync.Mutex
	var steps []string
	step := func(s string) {
		mu.Lock()
		steps = append(steps, s)
		mu.Unlock()
	}
	syncs := recordDirSyncs(t, l.eng.BackupDir, func() { step("sync-dir") })
	l.eng.Progress = func(ev switchdrv.Event) {
		if ev.Step == "set" || ev.Step == "backup" {
			step(ev.Step)
		}
	}
	res, err := l.eng.Apply(t.Context(), l.f, l.plan(t))
	if err != nil {
		t.Fatal(err)
	}
	var backups []string
	for _, tr := range res.Targets {
		backups = append(backups, tr.Backup)
	}
	slices.Sort(backups)
	if want := [][]string{backups}; !cmp.Equal(want, *syncs) {
		t.Errorf("directory syncs (the backups present at each): got %v, want %v", *syncs, want)
	}
	want := "backup backup backup sync-dir set set set"
	if got := strings.Join(steps, " "); got != want {
		t.Errorf("order of the steps: got %q, want %q", got, want)
	}
}

// TestReadBackupReadsIndented: backups are now written as compact JSON;
// those written before, indented, still read, to the same snapshot.
func TestReadBackupReadsIndented(t *testing.T) {
	dir := t.TempDir()
	snap := &switchdrv.Snapshot{Version: switchdrv.SnapshotVersion, Switch: "leaf1", Platform: intent.PlatformSRLinux,
		Address: "10.0.0.1:57400", Taken: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), Basis: "sha256:x",
		Entries: []switchdrv.Entry{
			{Path: "/qos/classifiers/dscp-policy[name=D]", Exists: true, JSON: json.RawMessage(`{"srl_nokia-qos:name":"D","dscp":[{"value":1}]}`)},
			{Path: "/qos/interfaces/interface[interface-id=ethernet-1/1]"},
			{Path: "cli:/", Exists: true, ASCII: ptr("qos map dscp 26 to traffic-class 3\n")},
		}}
	path, err := switchdrv.WriteBackup(dir, snap)
	if err != nil {
		t.Fatal(err)
	}
	compact, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(compact), "\n") != 1 {
		t.Errorf("backup is not compact JSON:\n%s", compact)
	}
	// As WriteBackup wrote it before (json.MarshalIndent, two spaces).
	indented, err := json.MarshalIndent(snap, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(dir, "leaf1-20250101T000000.000000000Z.json")
	if err := os.WriteFile(old, append(indented, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := switchdrv.ReadBackup(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := switchdrv.ReadBackup(old)
	if err != nil {
		t.Fatalf("indented backup: %v", err)
	}
	// The raw values compare as JSON (indenting re-spaces them).
	opt := cmp.Comparer(func(x, y json.RawMessage) bool {
		if len(x) == 0 || len(y) == 0 {
			return len(x) == len(y)
		}
		var vx, vy any
		return json.Unmarshal(x, &vx) == nil && json.Unmarshal(y, &vy) == nil && cmp.Equal(vx, vy)
	})
	if diff := cmp.Diff(a, b, opt, cmp.AllowUnexported(switchdrv.Snapshot{}, switchdrv.Entry{})); diff != "" {
		t.Errorf("compact and indented backups read differently (-compact +indented):\n%s", diff)
	}
	if diff := cmp.Diff(snap, a, opt, cmp.AllowUnexported(switchdrv.Snapshot{}, switchdrv.Entry{})); diff != "" {
		t.Errorf("backup read back differs (-written +read):\n%s", diff)
	}
}

func ptr[T any](v T) *T { return &v }

// TestBackupEncodingIsJSONMarshal: the backup encoder writes what
// json.Marshal writes, byte for byte, for plain snapshots and for values
// and strings it must escape or compact (which it leaves to json.Marshal).
func TestBackupEncodingIsJSONMarshal(t *testing.T) {
	taken := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	base := func() *switchdrv.Snapshot {
		return &switchdrv.Snapshot{Version: switchdrv.SnapshotVersion, Switch: "leaf1", Platform: intent.PlatformSRLinux,
			Address: "10.0.0.1:57400", Taken: taken, Basis: "sha256:x",
			Entries: []switchdrv.Entry{
				{Path: "/qos/classifiers/dscp-policy[name=D]", Exists: true, JSON: json.RawMessage(`{"srl_nokia-qos:name":"D","dscp":[{"value":1}]}`)},
				{Path: "/qos/interfaces/interface[interface-id=ethernet-1/1]"},
				{Path: "cli:/", Exists: true, ASCII: ptr("qos map dscp 26 to traffic-class 3")},
			}}
	}
	cases := map[string]func(s *switchdrv.Snapshot){
		"plain":             func(s *switchdrv.Snapshot) {},
		"no platform":       func(s *switchdrv.Snapshot) { s.Platform, s.Address = "", "" },
		"no entries":        func(s *switchdrv.Snapshot) { s.Entries = nil },
		"empty entries":     func(s *switchdrv.Snapshot) { s.Entries = []switchdrv.Entry{} },
		"spaced value":      func(s *switchdrv.Snapshot) { s.Entries[0].JSON = json.RawMessage("{ \"a\" :\n [1, 2] }") },
		"html in value":     func(s *switchdrv.Snapshot) { s.Entries[0].JSON = json.RawMessage(`{"d":"a<b>&c"}`) },
		"U+2028 in value":   func(s *switchdrv.Snapshot) { s.Entries[0].JSON = json.RawMessage("{\"d\":\"a\u2028b\"}") },
		"utf-8 in value":    func(s *switchdrv.Snapshot) { s.Entries[0].JSON = json.RawMessage(`{"d":"é"}`) },
		"newline in ascii":  func(s *switchdrv.Snapshot) { s.Entries[2].ASCII = ptr("a\nb\n") },
		"quote in path":     func(s *switchdrv.Snapshot) { s.Entries[1].Path = `/a[k="x\y"]` },
		"html in name":      func(s *switchdrv.Snapshot) { s.Switch = "a&b<c>" },
		"non-ascii address": func(s *switchdrv.Snapshot) { s.Address = "spine-ü:1" },
		"zero time":         func(s *switchdrv.Snapshot) { s.Taken = time.Time{} },
		"local time":        func(s *switchdrv.Snapshot) { s.Taken = taken.In(time.FixedZone("X", 3600)) },
		"scalar value":      func(s *switchdrv.Snapshot) { s.Entries[0].JSON = json.RawMessage(`"9216"`) },
	}
	for name, edit := range cases {
		s := base()
		edit(s)
		dir := t.TempDir()
		path, err := switchdrv.WriteBackup(dir, s)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want)+"\n" {
			t.Errorf("%s: backup\n%s\nwant (json.Marshal)\n%s", name, got, want)
		}
	}
	// Invalid JSON in a value is refused, as json.Marshal refuses it.
	s := base()
	s.Entries[0].JSON = json.RawMessage(`{"a":}`)
	if _, err := switchdrv.WriteBackup(t.TempDir(), s); err == nil {
		t.Error("a value that is not JSON: backup written, want an error")
	}
}

// TestApplyStopsWhenBackupDirectoryDoesNotSync: a backup whose name may
// not survive a power loss is no backup: apply writes nothing.
func TestApplyStopsWhenBackupDirectoryDoesNotSync(t *testing.T) {
	l := newLab(t, 2, 0)
	before := []string{state(t, l.twins[0]), state(t, l.twins[1])}
	restore := switchdrv.SetSyncDir(func(d string) error {
		if d == l.eng.BackupDir {
			return errors.New("input/output error")
		}
		return nil
	})
	t.Cleanup(restore)
	res, err := l.eng.Apply(t.Context(), l.f, l.plan(t))
	if err == nil || !strings.Contains(err.Error(), "nothing was changed") || !strings.Contains(err.Error(), "input/output error") {
		t.Fatalf("Apply: got %v, want nothing changed, with the sync's error", err)
	}
	for i, tr := range res.Targets {
		if tr.Status != switchdrv.StatusFailed {
			t.Errorf("%s: status %s, want %s", tr.Name, tr.Status, switchdrv.StatusFailed)
		}
		if got := state(t, l.twins[i]); got != before[i] {
			t.Errorf("%s was written although its backup was not durable", tr.Name)
		}
	}
}
