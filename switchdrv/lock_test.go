//go:build unix

package switchdrv_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/ownfs"
	"github.com/fabricctl/fabricctl/switchdrv"
)

// nobody is the uid the other-owner cases chown to (the conventional
// "nobody"; any uid other than root's and ours would do).
const nobody = 65534

func sw(name, addr string) *intent.Switch { return &intent.Switch{Name: name, Address: addr} }

// TestLockKeyedBySwitchAddress: two runs with different fabric names that
// share one switch (by its address, whatever its name in either intent)
// exclude each other; runs on disjoint switches do not. The refusal names
// the switch and the holder; the first run's locks are all released when a
// later one fails (it took leaf1's before finding leaf2's held).
func TestLockKeyedBySwitchAddress(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "locks")
	a, err := switchdrv.LockSwitches(dir, "pod1", []*intent.Switch{sw("leaf1", "10.0.0.1:57400"), sw("leaf2", "10.0.0.2:57400")})
	if err != nil {
		t.Fatal(err)
	}
	// Another intent calls leaf2 "edge-b" and writes the address in
	// capitals: the same switch.
	_, err = switchdrv.LockSwitches(dir, "pod1-copy", []*intent.Switch{sw("edge-b", "10.0.0.2:57400"), sw("edge-c", "10.0.0.3:57400")})
	if !errors.Is(err, switchdrv.ErrLocked) {
		t.Fatalf("second run on a common switch: %v, want ErrLocked", err)
	}
	for _, want := range []string{"switch edge-b (10.0.0.2:57400)", "fabricctl pid", "fabric pod1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}
	c, err := switchdrv.LockSwitches(dir, "pod2", []*intent.Switch{sw("leaf3", "10.0.0.3:57400")})
	if err != nil {
		t.Fatalf("a run on a switch nobody holds: %v (the refused run kept its lock?)", err)
	}
	c.Unlock()
	a.Unlock()
	b, err := switchdrv.LockSwitches(dir, "pod1-copy", []*intent.Switch{sw("edge-b", "10.0.0.2:57400")})
	if err != nil {
		t.Fatalf("after the first run unlocked: %v", err)
	}
	b.Unlock()
}

// TestLockRefusesSymlink (issue 34): a symlink planted where a lock file
// goes is refused, and the file it points to is neither truncated nor
// written. Before, apply followed it and emptied the victim.
func TestLockRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := sw("leaf1", "10.0.0.1:57400")
	if err := os.Symlink(victim, switchdrv.LockPath(dir, s.Address)); err != nil {
		t.Fatal(err)
	}
	l, err := switchdrv.LockSwitches(dir, "lab", []*intent.Switch{s})
	if err == nil {
		l.Unlock()
		t.Fatal("a symlinked lock file was used")
	}
	if !errors.Is(err, ownfs.ErrUnsafe) || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("error %v does not say the lock file is a symlink", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Errorf("the symlink's target was changed: %q", b)
	}
}

// TestLockRefusesOtherFiles: a hard link, a FIFO, and a lock file of
// another user are refused; so are a lock directory another user owns and
// one others may write.
func TestLockRefusesOtherFiles(t *testing.T) {
	s := sw("leaf1", "10.0.0.1:57400")
	cases := []struct {
		name  string
		root  bool // needs chown
		setup func(t *testing.T, dir string) string
		want  string
	}{
		{"hard link", false, func(t *testing.T, dir string) string {
			other := filepath.Join(dir, "other")
			if err := os.WriteFile(other, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Link(other, switchdrv.LockPath(dir, s.Address)); err != nil {
				t.Fatal(err)
			}
			return dir
		}, "2 hard links"},
		{"FIFO", false, func(t *testing.T, dir string) string {
			if err := syscall.Mkfifo(switchdrv.LockPath(dir, s.Address), 0o600); err != nil {
				t.Fatal(err)
			}
			return dir
		}, "not a regular file"},
		{"file of another user", true, func(t *testing.T, dir string) string {
			p := switchdrv.LockPath(dir, s.Address)
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(p, nobody, nobody); err != nil {
				t.Fatal(err)
			}
			return dir
		}, "owned by uid 65534"},
		{"directory of another user", true, func(t *testing.T, dir string) string {
			d := filepath.Join(dir, "theirs")
			if err := os.Mkdir(d, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(d, nobody, nobody); err != nil {
				t.Fatal(err)
			}
			return d
		}, "owned by uid 65534"},
		{"world-writable directory", false, func(t *testing.T, dir string) string {
			d := filepath.Join(dir, "open")
			if err := os.Mkdir(d, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(d, 0o1777); err != nil {
				t.Fatal(err)
			}
			return d
		}, "lets other users write"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.root && os.Geteuid() != 0 {
				t.Skip("chown to another uid needs root")
			}
			dir := tc.setup(t, t.TempDir())
			l, err := switchdrv.LockSwitches(dir, "lab", []*intent.Switch{s})
			if err == nil {
				l.Unlock()
				t.Fatal("lock taken")
			}
			if !errors.Is(err, ownfs.ErrUnsafe) && tc.name != "FIFO" || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestUnlockLeavesTheFile: unlocking neither removes nor truncates the lock
// file (issue 34: it was truncated on unlock, through whatever it was).
func TestUnlockLeavesTheFile(t *testing.T) {
	dir := t.TempDir()
	s := sw("leaf1", "10.0.0.1:57400")
	l, err := switchdrv.LockSwitches(dir, "lab", []*intent.Switch{s})
	if err != nil {
		t.Fatal(err)
	}
	path := switchdrv.LockPath(dir, s.Address)
	held, _ := os.ReadFile(path)
	if !strings.Contains(string(held), "fabricctl pid") {
		t.Fatalf("lock file holds %q, want the holder's line", held)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	if after, err := os.ReadFile(path); err != nil || string(after) != string(held) {
		t.Errorf("after Unlock the lock file holds %q (%v), want it untouched: %q", after, err, held)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("lock file mode %v (%v), want 0600", st.Mode(), err)
	}
}

// TestDefaultLockDir: $XDG_RUNTIME_DIR/fabricctl when set, else
// /run/fabricctl for root; never beside the backups.
func TestDefaultLockDir(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/1000")
	if got := switchdrv.DefaultLockDir(); got != "/run/user/1000/fabricctl" {
		t.Errorf("with XDG_RUNTIME_DIR: %s", got)
	}
	t.Setenv("XDG_RUNTIME_DIR", "")
	if os.Geteuid() == 0 {
		if got := switchdrv.DefaultLockDir(); got != "/run/fabricctl" {
			t.Errorf("root without XDG_RUNTIME_DIR: %s", got)
		}
	}
}

// TestBackupDirectoryOfAnotherUser (issue 34): apply refuses to write its
// backups into a directory another user owns or others may write (they
// could swap a backup that restore then pushes), and ReadBackup refuses a
// file another user owns or others may write.
func TestBackupDirectoryOfAnotherUser(t *testing.T) {
	snap := &switchdrv.Snapshot{Version: switchdrv.SnapshotVersion, Switch: "leaf1"}
	open := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := switchdrv.WriteBackup(open, "lab", snap); !errors.Is(err, ownfs.ErrUnsafe) {
		t.Errorf("backup into a world-writable directory: %v", err)
	}
	mine := t.TempDir()
	path, err := switchdrv.WriteBackup(mine, "lab", snap)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := switchdrv.ReadBackup(path); err != nil {
		t.Fatalf("ReadBackup of our own backup: %v", err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := switchdrv.ReadBackup(path); !errors.Is(err, ownfs.ErrUnsafe) {
		t.Errorf("ReadBackup of a world-writable file: %v", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("the other-owner cases chown, which needs root")
	}
	theirs := filepath.Join(t.TempDir(), "theirs")
	if err := os.Mkdir(theirs, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(theirs, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if _, err := switchdrv.WriteBackup(theirs, "lab", snap); !errors.Is(err, ownfs.ErrUnsafe) || !strings.Contains(err.Error(), "owned by uid 65534") {
		t.Errorf("backup into a directory of uid %d: %v", nobody, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if _, err := switchdrv.ReadBackup(path); !errors.Is(err, ownfs.ErrUnsafe) {
		t.Errorf("ReadBackup of a file of uid %d: %v", nobody, err)
	}
}
