//go:build unix

// Package ownfs opens the files fabricctl trusts (its locks, its backups)
// only where nobody else can swap them: in a directory this user (or root)
// owns that no other user may write, and, for a lock file, a regular file of
// this user with one link, opened without following a symlink.
//
// fabricctl runs as root on GPU servers and against every switch: a lock file
// that follows a symlink is a way to truncate any file, and a backup
// directory another user owns is a way to make `restore` push their
// configuration to a switch.
package ownfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrUnsafe marks a file or directory refused because someone other than
// this user could change it.
var ErrUnsafe = errors.New("refused: not private to this user")

// trusted reports whether uid may own what this process trusts: itself, or
// root (a root-owned directory no other user may write can be changed only
// by root, who can do anything anyway).
func trusted(uid uint32) bool {
	return uid == uint32(os.Geteuid()) || uid == 0
}

// CheckDir refuses dir unless it is a directory owned by this user (or
// root) that neither its group nor others may write. A symlink to such a
// directory is accepted only when the link too belongs to this user or root.
func CheckDir(dir string) error {
	lst, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st := lst
	if lst.Mode()&fs.ModeSymlink != 0 {
		if uid, ok := owner(lst); !ok || !trusted(uid) {
			return fmt.Errorf("directory %s: %w: it is a symlink owned by uid %d", dir, ErrUnsafe, uid)
		}
		if st, err = os.Stat(dir); err != nil {
			return err
		}
	}
	if !st.IsDir() {
		return fmt.Errorf("%s: not a directory", dir)
	}
	uid, ok := owner(st)
	if !ok {
		return nil // no owners on this system
	}
	if !trusted(uid) {
		return fmt.Errorf("directory %s: %w: it is owned by uid %d, this process runs as uid %d", dir, ErrUnsafe, uid, os.Geteuid())
	}
	if m := st.Mode().Perm(); m&0o022 != 0 {
		return fmt.Errorf("directory %s: %w: mode %04o lets other users write in it (chmod go-w %s)", dir, ErrUnsafe, m, dir)
	}
	return nil
}

// MkdirPrivate creates dir (and its parents) with mode 0700 when missing,
// then CheckDir's it: an existing directory someone else owns or may write
// is refused, not used.
func MkdirPrivate(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return CheckDir(dir)
}

// CheckFile refuses the open file f (named path) unless it is a regular
// file owned by this user with exactly one link, that neither its group
// nor others may write.
func CheckFile(f *os.File, path string) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	return checkFileInfo(st, path)
}

// CheckPath is CheckFile for a file not opened yet (Lstat: a symlink is
// refused).
func CheckPath(path string) error {
	st, err := os.Lstat(path)
	if err != nil {
		return err
	}
	return checkFileInfo(st, path)
}

func checkFileInfo(st fs.FileInfo, path string) error {
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s: %w: not a regular file (%s)", path, ErrUnsafe, st.Mode().Type())
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if sys.Uid != uint32(os.Geteuid()) {
		return fmt.Errorf("%s: %w: owned by uid %d, this process runs as uid %d", path, ErrUnsafe, sys.Uid, os.Geteuid())
	}
	if sys.Nlink != 1 {
		return fmt.Errorf("%s: %w: it has %d hard links", path, ErrUnsafe, sys.Nlink)
	}
	if m := st.Mode().Perm(); m&0o022 != 0 {
		return fmt.Errorf("%s: %w: mode %04o lets other users write it", path, ErrUnsafe, m)
	}
	return nil
}

// OpenLock opens (creating it 0600) the lock file path for reading and
// writing, never following a symlink in its last element (O_NOFOLLOW),
// not inherited by child processes (O_CLOEXEC), and checks the file it
// got (CheckFile): a symlink, a FIFO, a file of another user or a hard
// link to one is refused before anything reads or writes it.
func OpenLock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("lock %s: %w: it is a symlink", path, ErrUnsafe)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := CheckFile(f, path); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %w", err)
	}
	return f, nil
}

// ReadTrusted reads the file at path (a backup that will be pushed to a
// switch or a host) after checking the file it opened: a regular file owned
// by this user or root that neither its group nor others may write. A
// symlink is followed (the file it names is what is checked).
func ReadTrusted(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w: not a regular file (%s)", path, ErrUnsafe, st.Mode().Type())
	}
	if uid, ok := owner(st); ok && !trusted(uid) {
		return nil, fmt.Errorf("%s: %w: owned by uid %d, this process runs as uid %d; copy it (cp) to make it yours if you trust it", path, ErrUnsafe, uid, os.Geteuid())
	}
	if m := st.Mode().Perm(); m&0o022 != 0 {
		return nil, fmt.Errorf("%s: %w: mode %04o lets other users write it (chmod go-w %s if you trust it)", path, ErrUnsafe, m, path)
	}
	return io.ReadAll(f)
}

func owner(st fs.FileInfo) (uint32, bool) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return sys.Uid, true
}
