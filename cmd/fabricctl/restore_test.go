package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/switchdrv"
)

// TestRestoreHonoursSwitchAndLock: restore --switch leaf2 with a backup
// directory restores leaf2 only (it restored leaf1 before); a --switch
// without a backup among those given is refused; apply and restore refuse
// to start while another run holds the fabric's lock, naming the holder.
func TestRestoreHonoursSwitchAndLock(t *testing.T) {
	reg, err := newRegistry()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	l, err := startLab(dir, reg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
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
	one, _ := filepath.Glob(filepath.Join(backups, "leaf1-*.json"))
	code, _, errOut = runCLI(t, t.Context(), "restore", "-f", f, "--backup", one[0], "--switch", "leaf2")
	if code != ExitError || !strings.Contains(errOut, "--switch leaf2: no backup of it") {
		t.Errorf("restore of leaf2 from leaf1's backup: exit %d, %s", code, errOut)
	}

	lock, err := switchdrv.LockFabric(backups, l.fabric.Name)
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
