package switchdrv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/ownfs"
)

// ErrLocked says another fabricctl on this machine is writing one of the
// switches (it holds that switch's lock file).
var ErrLocked = errors.New("another fabricctl run holds a switch's lock")

// Lock is a set of held per-switch locks; Unlock releases them.
type Lock struct {
	files []*os.File
}

// DefaultLockDir is where apply and restore keep their per-switch lock
// files unless told otherwise: $XDG_RUNTIME_DIR/fabricctl (the user's
// private runtime directory, cleared at logout or boot), else
// /run/fabricctl for root, else fabricctl-<uid> in the temporary directory.
// Each is created 0700 and refused when another user owns it or may write
// it (ownfs.CheckDir).
func DefaultLockDir() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "fabricctl")
	}
	if os.Geteuid() == 0 {
		return "/run/fabricctl"
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("fabricctl-%d", os.Geteuid()))
}

// LockKey is what a switch's lock is keyed by: its gNMI address, in lower
// case. Two intents that name one switch by the same address (whatever the
// fabric's or the switch's name) share its lock.
func LockKey(address string) string {
	return strings.ToLower(strings.TrimSpace(address))
}

// LockPath is the lock file of the switch at address in dir.
func LockPath(dir, address string) string {
	return filepath.Join(dir, "switch-"+safeName(LockKey(address))+".lock")
}

// LockSwitches takes the lock of every switch of sws on this machine: an
// exclusive flock(2) on LockPath(dir, address) of each, in the order of
// their keys (so two runs never hold parts of each other's sets while
// waiting; they do not wait anyway), so that two runs (two applies, or an
// apply and a restore) that touch a common switch never write at the same
// time, whatever their intents' fabric names. It does not wait: while
// another process holds one, it releases what it took and fails with
// ErrLocked, naming the switch and the holder's pid and start time as the
// holder wrote them into the file. The kernel drops a lock when its holder
// exits, even on SIGKILL, so a stale file never blocks anyone.
//
// The files are opened without following symlinks, checked to be regular
// files of this user with one link, in a directory of this user (or root)
// no one else may write (ownfs); anything else is refused. Runs on other
// machines are not covered (see the README on the CI concurrency group).
func LockSwitches(dir, fabric string, sws []*intent.Switch) (*Lock, error) {
	if err := ownfs.MkdirPrivate(dir); err != nil {
		return nil, fmt.Errorf("lock directory: %w", err)
	}
	byKey := map[string]*intent.Switch{}
	var keys []string
	for _, sw := range sws {
		k := LockKey(sw.Address)
		if _, ok := byKey[k]; ok {
			continue
		}
		byKey[k] = sw
		keys = append(keys, k)
	}
	slices.Sort(keys)
	l := &Lock{}
	host, _ := os.Hostname()
	info := fmt.Sprintf("fabricctl pid %d on %s, since %s, fabric %s", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339), intent.Echo(fabric))
	for _, k := range keys {
		sw := byKey[k]
		path := LockPath(dir, k)
		f, err := ownfs.OpenLock(path)
		if err != nil {
			l.Unlock()
			return nil, err
		}
		if err := flock(f); err != nil {
			holder := readHolder(f)
			f.Close()
			l.Unlock()
			if errors.Is(err, errWouldBlock) {
				return nil, fmt.Errorf("%w: switch %s (%s) is being written by %s (lock file %s); wait for it to finish", ErrLocked, intent.Echo(sw.Name), intent.Echo(sw.Address), holder, path)
			}
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		// Ours now (flock held, checked to be this user's own file): the
		// holder's line replaces the last holder's.
		if err := f.Truncate(0); err == nil {
			_, _ = f.WriteAt([]byte(info+"\n"), 0)
		}
		l.files = append(l.files, f)
	}
	return l, nil
}

// readHolder is the holder's line of a lock file, as read from the open
// file (never by its name again), at most 256 bytes and printable.
func readHolder(f *os.File) string {
	b := make([]byte, 256)
	n, _ := f.ReadAt(b, 0)
	holder := strings.TrimSpace(strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, string(b[:n])))
	if holder == "" {
		return "a process that has not written its pid yet"
	}
	return holder
}

// Unlock releases the locks. The files stay, as they are (removing or
// truncating one would race with a process that opened it and waits to
// lock it, and would write through a file the lock no longer guards).
func (l *Lock) Unlock() error {
	if l == nil {
		return nil
	}
	var errs []error
	for i := len(l.files) - 1; i >= 0; i-- {
		errs = append(errs, l.files[i].Close()) // closing the last descriptor releases the flock
	}
	l.files = nil
	return errors.Join(errs...)
}
