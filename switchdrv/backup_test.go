package switchdrv_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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
	path, err := switchdrv.WriteBackup(dir, "pod1", snap)
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{path}}; !cmp.Equal(want, *syncs) {
		t.Errorf("directory syncs (the backups present at each): got %v, want %v (one, after the rename)", *syncs, want)
	}
}

// TestApplyWritesOneBackupFilePerRun: apply of three switches writes ONE
// backup file, <fabric>-<UTC time>.json, mode 0600, holding the three
// snapshots as JSON Lines in switch order; that file is synced once, then
// the directory once, with that file in it, and only then is any switch
// written; every switch's result names that file. Before the change apply
// wrote (and synced) one file per switch and this failed.
func TestApplyWritesOneBackupFilePerRun(t *testing.T) {
	l := newLab(t, 3, 0)
	var mu sync.Mutex
	var steps, fileSyncs []string
	step := func(s string) {
		mu.Lock()
		steps = append(steps, s)
		mu.Unlock()
	}
	syncs := recordDirSyncs(t, l.eng.BackupDir, func() { step("sync-dir") })
	t.Cleanup(switchdrv.SetSyncFile(func(f *os.File) error {
		mu.Lock()
		fileSyncs = append(fileSyncs, f.Name())
		mu.Unlock()
		step("sync-file")
		return f.Sync()
	}))
	l.eng.Progress = func(ev switchdrv.Event) {
		if ev.Step == "set" || ev.Step == "backup" {
			step(ev.Step)
		}
	}
	res, err := l.eng.Apply(t.Context(), l.f, l.plan(t))
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(l.eng.BackupDir, "*"))
	if len(files) != 1 {
		t.Fatalf("backup directory holds %v, want one file", files)
	}
	run := files[0]
	if !regexp.MustCompile(`^pod1-\d{8}T\d{6}\.\d{9}Z\.json$`).MatchString(filepath.Base(run)) {
		t.Errorf("backup file %s: want pod1-<UTC time>.json", filepath.Base(run))
	}
	if st, err := os.Stat(run); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("backup file mode: %v %v, want 0600", st.Mode(), err)
	}
	for _, tr := range res.Targets {
		if tr.Backup != run {
			t.Errorf("%s: backup %q, want the run's file %q", tr.Name, tr.Backup, run)
		}
	}
	if len(fileSyncs) != 1 || filepath.Dir(fileSyncs[0]) != l.eng.BackupDir {
		t.Errorf("file syncs: %v, want one, of a file in %s", fileSyncs, l.eng.BackupDir)
	}
	if want := [][]string{{run}}; !cmp.Equal(want, *syncs) {
		t.Errorf("directory syncs (the backups present at each): got %v, want %v", *syncs, want)
	}
	want := "sync-file sync-dir backup backup backup set set set"
	if got := strings.Join(steps, " "); got != want {
		t.Errorf("order of the steps: got %q, want %q", got, want)
	}
	b, err := os.ReadFile(run)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("backup file has %d lines, want 3 (one snapshot each):\n%s", len(lines), b)
	}
	snaps, err := switchdrv.ReadBackup(run)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i, s := range snaps {
		names = append(names, s.Switch)
		if want, _ := json.Marshal(s); lines[i] != string(want) {
			t.Errorf("line %d is not the compact snapshot of %s:\n%s", i+1, s.Switch, lines[i])
		}
	}
	if diff := cmp.Diff([]string{"leaf1", "leaf2", "leaf3"}, names); diff != "" {
		t.Errorf("switches in the backup file (-want +got):\n%s", diff)
	}
}

// TestApplyStopsWhenBackupFileDoesNotSync: the run's backup file not on
// disk: apply writes no switch, leaves no backup file (nor a temporary
// one), and every switch's result says the backup was not written.
func TestApplyStopsWhenBackupFileDoesNotSync(t *testing.T) {
	l := newLab(t, 2, 0)
	before := []string{state(t, l.twins[0]), state(t, l.twins[1])}
	t.Cleanup(switchdrv.SetSyncFile(func(*os.File) error { return errors.New("input/output error") }))
	res, err := l.eng.Apply(t.Context(), l.f, l.plan(t))
	if err == nil || !strings.Contains(err.Error(), "nothing was changed") || !strings.Contains(err.Error(), "input/output error") {
		t.Fatalf("Apply: got %v, want nothing changed, with the sync's error", err)
	}
	for i, tr := range res.Targets {
		if tr.Status != switchdrv.StatusFailed || tr.Error != "backup not written" || tr.Backup != "" {
			t.Errorf("%s: status %s, error %q, backup %q; want %s, backup not written, no backup", tr.Name, tr.Status, tr.Error, tr.Backup, switchdrv.StatusFailed)
		}
		if got := state(t, l.twins[i]); got != before[i] {
			t.Errorf("%s was written although its backup was not durable", tr.Name)
		}
	}
	if left, _ := os.ReadDir(l.eng.BackupDir); len(left) != 0 {
		t.Errorf("backup directory after a failed backup: %v, want empty", left)
	}
}

// TestReadBackupReadsIndented: backups are now written as compact JSON,
// one line per switch; those written before, one switch per file and
// indented, still read, to the same snapshot.
func TestReadBackupReadsIndented(t *testing.T) {
	dir := t.TempDir()
	snap := &switchdrv.Snapshot{Version: switchdrv.SnapshotVersion, Switch: "leaf1", Platform: intent.PlatformSRLinux,
		Address: "10.0.0.1:57400", Taken: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), Basis: "sha256:x",
		Entries: []switchdrv.Entry{
			{Path: "/qos/classifiers/dscp-policy[name=D]", Exists: true, JSON: json.RawMessage(`{"srl_nokia-qos:name":"D","dscp":[{"value":1}]}`)},
			{Path: "/qos/interfaces/interface[interface-id=ethernet-1/1]"},
			{Path: "cli:/", Exists: true, ASCII: ptr("qos map dscp 26 to traffic-class 3\n")},
		}}
	path, err := switchdrv.WriteBackup(dir, "pod1", snap)
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
	// As apply wrote a switch's backup before (json.MarshalIndent, two
	// spaces).
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
	if len(a) != 1 || len(b) != 1 {
		t.Fatalf("read %d and %d snapshots, want 1 each", len(a), len(b))
	}
	// The raw values compare as JSON (indenting re-spaces them).
	opt := cmp.Comparer(func(x, y json.RawMessage) bool {
		if len(x) == 0 || len(y) == 0 {
			return len(x) == len(y)
		}
		var vx, vy any
		return json.Unmarshal(x, &vx) == nil && json.Unmarshal(y, &vy) == nil && cmp.Equal(vx, vy)
	})
	if diff := cmp.Diff(a[0], b[0], opt, cmp.AllowUnexported(switchdrv.Snapshot{}, switchdrv.Entry{})); diff != "" {
		t.Errorf("compact and indented backups read differently (-compact +indented):\n%s", diff)
	}
	if diff := cmp.Diff(snap, a[0], opt, cmp.AllowUnexported(switchdrv.Snapshot{}, switchdrv.Entry{})); diff != "" {
		t.Errorf("backup read back differs (-written +read):\n%s", diff)
	}
}

// TestReadBackupNamesTheBadLine: a backup file with a line that is not a
// snapshot is refused with the file and that line's number. Before the
// change a backup held one snapshot and the error named no line.
func TestReadBackupNamesTheBadLine(t *testing.T) {
	good := func(name string) string {
		b, err := json.Marshal(&switchdrv.Snapshot{Version: switchdrv.SnapshotVersion, Switch: name, Basis: "b", Taken: time.Unix(1, 0).UTC()})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for name, tc := range map[string]struct{ text, want string }{
		"truncated line": {good("leaf1") + "\n" + good("leaf2")[:20] + "\n" + good("leaf3") + "\n", ":2: "},
		"garbage line":   {good("leaf1") + "\n" + good("leaf2") + "\nnot json\n", ":3: "},
		"truncated end":  {good("leaf1") + "\n" + good("leaf2")[:30], ":2: truncated"},
		"not an object":  {good("leaf1") + "\n[1]\n", ":2: "},
		"no switch":      {good("leaf1") + "\n" + strings.Replace(good("leaf2"), `"leaf2"`, `""`, 1) + "\n", ":2: names no switch"},
		"version 2":      {good("leaf1") + "\n\n" + strings.Replace(good("leaf2"), `"version":1`, `"version":2`, 1) + "\n", ":3: format version 2"},
		"empty":          {"\n", ": holds no snapshot"},
	} {
		path := filepath.Join(t.TempDir(), "pod1-20260101T000000.000000000Z.json")
		if err := os.WriteFile(path, []byte(tc.text), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := switchdrv.ReadBackup(path)
		if err == nil || !strings.Contains(err.Error(), "backup "+path+tc.want) {
			t.Errorf("%s: got %v, want an error with %q", name, err, path+tc.want)
		}
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
		path, err := switchdrv.WriteBackup(dir, "pod1", s)
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
	if _, err := switchdrv.WriteBackup(t.TempDir(), "pod1", s); err == nil {
		t.Error("a value that is not JSON: backup written, want an error")
	}
}

// TestWriteBackupManySwitches: a backup file of more switches than one
// writev(2) takes (IOV_MAX, 1024) holds each switch's json.Marshal on its
// own line, in order, and reads back the same switches.
func TestWriteBackupManySwitches(t *testing.T) {
	var snaps []*switchdrv.Snapshot
	var want strings.Builder
	for i := range 1500 {
		s := &switchdrv.Snapshot{Version: switchdrv.SnapshotVersion, Switch: fmt.Sprintf("leaf%d", i+1), Basis: "b",
			Taken:   time.Date(2026, 1, 2, 3, 4, 5, i, time.UTC),
			Entries: []switchdrv.Entry{{Path: "/qos", Exists: true, JSON: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}}}
		snaps = append(snaps, s)
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		want.Write(append(b, '\n'))
	}
	path, err := switchdrv.WriteBackup(t.TempDir(), "pod/1", snaps...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(path), "pod_1-") {
		t.Errorf("backup file %s: want the fabric's safe name first (pod_1-)", path)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want.String() {
		t.Errorf("backup file of %d switches is not their json.Marshal lines in order", len(snaps))
	}
	read, err := switchdrv.ReadBackup(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(read) != len(snaps) || read[1499].Switch != "leaf1500" || !read[1499].Taken.Equal(snaps[1499].Taken) {
		t.Errorf("read back %d snapshots, want %d in order", len(read), len(snaps))
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
