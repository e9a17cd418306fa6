//go:build unix

package hostdrv

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/internal/ownfs"
)

// TestHostBackupRefusesOthersDirectory (issue 34): host apply refuses to
// write its backup into a directory another user owns (chown to nobody, a
// real filesystem) or others may write, and host restore refuses a backup
// file another user owns or others may write: either could be swapped and
// then written to the NIC.
func TestHostBackupRefusesOthersDirectory(t *testing.T) {
	b := &Backup{Version: BackupVersion, Host: "h1"}
	open := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := WriteBackup(filepath.Join(open, "h1.json"), b); !errors.Is(err, ownfs.ErrUnsafe) {
		t.Errorf("backup into a world-writable directory: %v", err)
	}
	file := filepath.Join(t.TempDir(), "h1.json")
	if err := os.WriteFile(file, []byte(`{"version": 1}`), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(file, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadBackup(file); !errors.Is(err, ownfs.ErrUnsafe) {
		t.Errorf("ReadBackup of a world-writable file: %v", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("the other-owner cases chown, which needs root")
	}
	theirs := filepath.Join(t.TempDir(), "theirs")
	if err := os.Mkdir(theirs, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(theirs, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	err := WriteBackup(filepath.Join(theirs, "h1.json"), b)
	if !errors.Is(err, ownfs.ErrUnsafe) || !strings.Contains(err.Error(), "owned by uid 65534") {
		t.Errorf("backup into a directory of uid 65534: %v", err)
	}
	if err := os.Chmod(file, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(file, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadBackup(file); !errors.Is(err, ownfs.ErrUnsafe) {
		t.Errorf("ReadBackup of a file of uid 65534: %v", err)
	}
}
