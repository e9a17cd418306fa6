//go:build !linux

package netnstest

import (
	"os/exec"
	"testing"
)

// NS is a named network namespace (Linux only).
type NS struct{ Name string }

// New skips the test: network namespaces exist only on Linux.
func New(t testing.TB) *NS {
	t.Helper()
	t.Skip("netnstest: network namespaces need Linux")
	return nil
}

// Veth is unreachable off Linux (New skips).
func (ns *NS) Veth(t testing.TB, a, b string) { t.Helper() }

// Do is unreachable off Linux (New skips).
func (ns *NS) Do(f func() error) error { return nil }

// Command is unreachable off Linux (New skips).
func (ns *NS) Command(argv ...string) *exec.Cmd { return exec.Command(argv[0], argv[1:]...) }
