//go:build !unix

package ownfs

import (
	"errors"
	"os"
)

// ErrUnsafe marks a file or directory refused because someone other than
// this user could change it.
var ErrUnsafe = errors.New("refused: not private to this user")

// CheckDir: this system has no owners and modes to check.
func CheckDir(dir string) error {
	_, err := os.Stat(dir)
	return err
}

// MkdirPrivate creates dir with mode 0700 when missing.
func MkdirPrivate(dir string) error { return os.MkdirAll(dir, 0o700) }

// CheckFile: this system has no owners and modes to check.
func CheckFile(*os.File, string) error { return nil }

// CheckPath: this system has no owners and modes to check.
func CheckPath(path string) error {
	_, err := os.Lstat(path)
	return err
}

// OpenLock opens (creating it 0600) the lock file path.
func OpenLock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}

// ReadTrusted reads the file at path.
func ReadTrusted(path string) ([]byte, error) { return os.ReadFile(path) }
