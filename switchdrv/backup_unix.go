//go:build unix

package switchdrv

import (
	"errors"
	"io"
	"os"
	"slices"

	"golang.org/x/sys/unix"
)

// writeLines writes lines to f, in order, with writev(2): one system call
// for a run's backup (IOV_MAX, 1024 on Linux, pieces at a time; a short
// write goes on where it stopped).
func writeLines(f *os.File, lines [][]byte) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	const iovMax = 1024
	rest := slices.Clone(lines) // the first piece is cut on a short write
	var werr error
	err = rc.Write(func(fd uintptr) bool {
		for {
			for len(rest) > 0 && len(rest[0]) == 0 {
				rest = rest[1:]
			}
			if len(rest) == 0 {
				return true
			}
			n, err := unix.Writev(int(fd), rest[:min(len(rest), iovMax)])
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil {
				werr = err
				return true
			}
			if n == 0 {
				werr = io.ErrShortWrite
				return true
			}
			for n > 0 {
				if n < len(rest[0]) {
					rest[0] = rest[0][n:]
					break
				}
				n -= len(rest[0])
				rest = rest[1:]
			}
		}
	})
	if err != nil {
		return err
	}
	if werr != nil {
		return &os.PathError{Op: "writev", Path: f.Name(), Err: werr}
	}
	return nil
}
