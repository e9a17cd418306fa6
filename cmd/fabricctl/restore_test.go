package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
)

// TestRestoreHonoursSwitchAndLock: restore --switch leaf2 with a backup
// directory restores leaf2 only (it restored leaf1 before); a --switch
// without a backup among those given is refused; apply and restore refuse
// to start while another run holds a switch's lock (under another fabric
// name), naming the holder.
func TestRestoreHonoursSwitchAndLock(t *testing.T) {
	l, dir := testLab(t)
	f, backups := l.file, filepath.Join(dir, "b")
	if code, out, errOut := runCLI(t, t.Context(), "apply", "-f", f, "--backup-dir", backups); code != ExitOK {
		t.Fatalf("apply exited %d:\n%s%s", code, out, errOut)
	}
	sets := map[string]int{}
	for _, tw := range l.twins {
		sets[tw.Name()] = tw.Sets()
	}
	code, out, errOut := runCLI(t, t.Context(), "restore", "-f", f, "--backup", backups, "--switch", "leaf2", "--parallel", "2")
	if code != ExitOK {
		t.Fatalf("restore --switch leaf2 exited %d:\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "switch leaf2: restored") || strings.Contains(out, "leaf1") || strings.Contains(out, "leaf3") {
		t.Errorf("restore --switch leaf2 output:\n%s", out)
	}
	for _, tw := range l.twins {
		want := sets[tw.Name()]
		if tw.Name() == "leaf2" {
			want++
		}
		if tw.Sets() != want {
			t.Errorf("%s: %d Sets after restore --switch leaf2, want %d", tw.Name(), tw.Sets(), want)
		}
	}
	if code, _, _ := runCLI(t, t.Context(), "diff", "-f", f, "--switch", "leaf2"); code != ExitChanges {
		t.Errorf("leaf2 after restore: diff exit %d, want 2 (back to before apply)", code)
	}
	if code, _, _ := runCLI(t, t.Context(), "diff", "-f", f, "--switch", "leaf1"); code != ExitOK {
		t.Errorf("leaf1 was touched by restore --switch leaf2 (diff exit %d)", code)
	}
	// A file of leaf1 only (as apply wrote one per switch before): no
	// backup of leaf2 in it.
	run := runFile(t, backups, l.fabric.Name)
	one := filepath.Join(dir, "leaf1-20260101T000000.000000000Z.json")
	if err := os.WriteFile(one, []byte(lineOf(t, run, "leaf1")), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runCLI(t, t.Context(), "restore", "-f", f, "--backup", one, "--switch", "leaf2")
	if code != ExitError || !strings.Contains(errOut, "--switch leaf2: no backup of it") {
		t.Errorf("restore of leaf2 from leaf1's backup: exit %d, %s", code, errOut)
	}

	// Another run with another fabric name holding one of the switches
	// (leaf2, by its address) is enough to refuse both.
	lock, err := switchdrv.LockSwitches(switchdrv.DefaultLockDir(), "another-name", []*intent.Switch{l.fabric.Switch("leaf2")})
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	for _, args := range [][]string{
		{"apply", "-f", f, "--backup-dir", backups},
		{"restore", "-f", f, "--backup", backups},
	} {
		code, _, errOut := runCLI(t, t.Context(), args...)
		if code != ExitError || !strings.Contains(errOut, "is being written by fabricctl pid") {
			t.Errorf("%s while locked: exit %d, stderr %s", args[0], code, errOut)
		}
	}
	lock.Unlock()
	if code, out, errOut := runCLI(t, t.Context(), "apply", "-f", f, "--backup-dir", backups); code != ExitOK {
		t.Errorf("apply after the lock was released exited %d:\n%s%s", code, out, errOut)
	}
}

// runFile is the one backup file apply wrote in dir, <fabric>-<UTC
// time>.json.
func runFile(t *testing.T, dir, fabric string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 || !regexp.MustCompile(`^`+regexp.QuoteMeta(fabric)+`-\d{8}T\d{6}\.\d{9}Z\.json$`).MatchString(filepath.Base(files[0])) {
		t.Fatalf("backups in %s: %v, want one file, %s-<UTC time>.json", dir, files, fabric)
	}
	return files[0]
}

// lineOf is the line of the backup file path that holds the snapshot of
// switch sw, with its newline.
func lineOf(t *testing.T, path, sw string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.SplitAfter(string(b), "\n") {
		var s struct{ Switch string }
		if json.Unmarshal([]byte(l), &s) == nil && s.Switch == sw {
			return l
		}
	}
	t.Fatalf("backup %s has no line of switch %s:\n%s", path, sw, b)
	return ""
}

// TestRestoreReadsRunFiles: apply writes one backup file per run; restore
// takes one switch (--switch) or every switch from it; from a directory
// holding files of one switch as apply wrote them before and a newer run's
// file, it restores each switch from its newest backup; a file with a
// corrupt line is refused, naming the file and the line, and nothing is
// sent. Before the change apply wrote one file per switch and this failed.
func TestRestoreReadsRunFiles(t *testing.T) {
	l, dir := testLab(t)
	f := l.file
	b1 := filepath.Join(dir, "b1")
	runCLIWant(t, ExitOK, "apply", "-f", f, "--backup-dir", b1)
	run1 := runFile(t, b1, l.fabric.Name)
	for _, sw := range []string{"leaf1", "leaf2", "leaf3"} {
		lineOf(t, run1, sw)
	}

	// One switch of the run's file.
	out := runCLIWant(t, ExitOK, "restore", "-f", f, "--backup", run1, "--switch", "leaf1")
	if !strings.Contains(out, "switch leaf1: restored from "+run1) || strings.Contains(out, "leaf2") || strings.Contains(out, "leaf3") {
		t.Errorf("restore --switch leaf1 from the run's file:\n%s", out)
	}
	runCLIWant(t, ExitChanges, "diff", "-f", f, "--switch", "leaf1")
	runCLIWant(t, ExitOK, "diff", "-f", f, "--switch", "leaf2")
	// Every switch of it.
	out = runCLIWant(t, ExitOK, "restore", "-f", f, "--backup", run1)
	for _, sw := range []string{"leaf1", "leaf2", "leaf3"} {
		if !strings.Contains(out, "switch "+sw+": restored from "+run1) {
			t.Errorf("restore from the run's file does not restore %s:\n%s", sw, out)
		}
		runCLIWant(t, ExitChanges, "diff", "-f", f, "--switch", sw)
	}

	// A newer run of leaf2 only, drifted first (the drift is in its
	// backup), beside files of leaf1 and leaf2 of the first run written as
	// apply wrote them before: one indented snapshot each.
	runCLIWant(t, ExitOK, "apply", "-f", f, "--backup-dir", b1)
	sonic := twinByName(t, l, "leaf2")
	const drift = "sonic-db:/CONFIG_DB/localhost/PORT_QOS_MAP/Ethernet4/pfc_enable"
	p, _ := transport.ParsePath(drift)
	if err := sonic.Put(p, "3,4"); err != nil {
		t.Fatal(err)
	}
	b2 := filepath.Join(dir, "b2")
	runCLIWant(t, ExitOK, "apply", "-f", f, "--backup-dir", b2)
	run2 := runFile(t, b2, l.fabric.Name)
	var olds []string
	for _, sw := range []string{"leaf1", "leaf2"} {
		var v any
		if err := json.Unmarshal([]byte(lineOf(t, run1, sw)), &v); err != nil {
			t.Fatal(err)
		}
		indented, _ := json.MarshalIndent(v, "", "  ")
		old := filepath.Join(b2, sw+"-20260101T000000.000000000Z.json")
		if err := os.WriteFile(old, append(indented, '\n'), 0o600); err != nil {
			t.Fatal(err)
		}
		olds = append(olds, old)
	}
	out = runCLIWant(t, ExitOK, "restore", "-f", f, "--backup", b2)
	for _, want := range []string{"switch leaf1: restored from " + olds[0], "switch leaf2: restored from " + run2} {
		if !strings.Contains(out, want) {
			t.Errorf("restore from a directory: want %q (the newest backup of the switch):\n%s", want, out)
		}
	}
	if strings.Contains(out, "leaf3") {
		t.Errorf("restore from a directory restored leaf3, which has no backup in it:\n%s", out)
	}
	runCLIWant(t, ExitChanges, "diff", "-f", f, "--switch", "leaf1")
	if out := runCLIWant(t, ExitChanges, "diff", "-f", f, "--switch", "leaf2"); !strings.Contains(out, "@@ "+drift+" @@") || strings.Count(out, "@@ ") != 1 {
		t.Errorf("leaf2 restored from the newer run's backup should differ from the intent only by the drift:\n%s", out)
	}

	// A corrupt line: the file and the line are named, nothing is sent.
	lines := strings.SplitAfter(string(readFile(t, run1)), "\n")
	lines[1] = lines[1][:len(lines[1])/2] + "\n"
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	sets := 0
	for _, tw := range l.twins {
		sets += tw.Sets()
	}
	if out := runCLIWant(t, ExitError, "restore", "-f", f, "--backup", bad); !strings.Contains(out, "backup "+bad+":2: ") {
		t.Errorf("restore from a file with a corrupt line 2: want it named (%s:2):\n%s", bad, out)
	}
	for _, tw := range l.twins {
		sets -= tw.Sets()
	}
	if sets != 0 {
		t.Errorf("restore from a corrupt backup sent %d Sets, want none", -sets)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
