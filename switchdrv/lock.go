package switchdrv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ErrLocked says another fabricctl on this machine is writing the same
// fabric (it holds the fabric's lock file).
var ErrLocked = errors.New("another fabricctl run holds the fabric's lock")

// Lock is a held per-fabric lock; Unlock releases it.
type Lock struct {
	f    *os.File
	path string
}

// LockPath is the lock file of fabric whose backups go to backupDir: beside
// that directory (".fabricctl/backups" -> ".fabricctl/fabricctl-<fabric>.lock"),
// so that taking it creates no backup directory, and every backup directory
// in one place shares one lock per fabric.
func LockPath(backupDir, fabric string) string {
	return filepath.Join(filepath.Dir(filepath.Clean(backupDir)), "fabricctl-"+safeName(fabric)+".lock")
}

// LockFabric takes the lock of fabric on this machine: an exclusive flock(2)
// on LockPath(backupDir, fabric), so that two applies (or an apply and a restore)
// of the same fabric never write its switches at the same time. It does not
// wait: while another process holds it, it fails with ErrLocked, naming the
// holder's pid and start time as the holder wrote them into the file. The
// kernel drops the lock when its holder exits, even on SIGKILL, so a stale
// file never blocks anyone. Runs on other machines are not covered (see the
// README on the CI concurrency group).
func LockFabric(backupDir, fabric string) (*Lock, error) {
	path := LockPath(backupDir, fabric)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := flock(f); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		holder := strings.TrimSpace(string(b))
		if holder == "" {
			holder = "a process that has not written its pid yet"
		}
		if errors.Is(err, errWouldBlock) {
			return nil, fmt.Errorf("%w: fabric %s is being written by %s (lock file %s); wait for it to finish", ErrLocked, fabric, holder, path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	host, _ := os.Hostname()
	info := fmt.Sprintf("fabricctl pid %d on %s, since %s", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(info+"\n"), 0)
	}
	return &Lock{f: f, path: path}, nil
}

// Unlock releases the lock. The file stays (removing it would race with a
// process that opened it and waits to lock it).
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = l.f.Truncate(0)
	err := l.f.Close() // closing the last descriptor releases the flock
	l.f = nil
	return err
}
