package netnstest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// NS is a named network namespace that lives until the test ends.
type NS struct {
	// Name is the namespace name under /run/netns (usable with `ip netns exec`).
	Name string
	// Handle is an open handle to the namespace.
	Handle netns.NsHandle
	// Netlink is an rtnetlink handle whose sockets live in the namespace.
	Netlink *netlink.Handle
}

// New creates a fresh named network namespace and returns it. It skips the
// test unless the process runs as root, and removes the namespace when the
// test ends. The calling thread is locked only while the namespace is created
// and is back in its original namespace when New returns, so the namespace is
// reached only through ns.Netlink, ns.Do or ns.Command.
func New(t testing.TB) *NS {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("netnstest: needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN) to create a network namespace")
	}
	var rnd [4]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		t.Fatalf("netnstest: random name: %v", err)
	}
	name := "fctest-" + hex.EncodeToString(rnd[:])

	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatalf("netnstest: get current netns: %v", err)
	}
	h, err := netns.NewNamed(name) // switches this thread into the new netns
	if serr := netns.Set(orig); serr != nil {
		// The thread is stuck in the wrong namespace: never hand it back to the runtime.
		t.Fatalf("netnstest: return to original netns: %v", serr)
	}
	orig.Close()
	runtime.UnlockOSThread()
	if err != nil {
		t.Skipf("netnstest: cannot create network namespace %s: %v", name, err)
	}
	nh, err := netlink.NewHandleAt(h)
	if err != nil {
		h.Close()
		_ = netns.DeleteNamed(name)
		t.Fatalf("netnstest: netlink handle in %s: %v", name, err)
	}
	ns := &NS{Name: name, Handle: h, Netlink: nh}
	t.Cleanup(func() {
		nh.Close()
		h.Close()
		if err := netns.DeleteNamed(name); err != nil {
			t.Errorf("netnstest: delete netns %s: %v", name, err)
		}
	})
	// Loopback up, as a fresh namespace has it down.
	if lo, err := nh.LinkByName("lo"); err == nil {
		_ = nh.LinkSetUp(lo)
	}
	return ns
}

// Veth creates a veth pair a <-> b in the namespace, both up.
func (ns *NS) Veth(t testing.TB, a, b string) {
	t.Helper()
	la := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: a}, PeerName: b}
	if err := ns.Netlink.LinkAdd(la); err != nil {
		t.Fatalf("netnstest: add veth %s/%s in %s: %v", a, b, ns.Name, err)
	}
	for _, n := range []string{a, b} {
		l, err := ns.Netlink.LinkByName(n)
		if err != nil {
			t.Fatalf("netnstest: veth %s in %s: %v", n, ns.Name, err)
		}
		if err := ns.Netlink.LinkSetUp(l); err != nil {
			t.Fatalf("netnstest: set %s up in %s: %v", n, ns.Name, err)
		}
	}
}

// Do runs f on a locked OS thread that is inside the namespace, then moves
// the thread back. Sockets f opens stay in the namespace.
func (ns *NS) Do(f func() error) error {
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("netnstest: get current netns: %w", err)
	}
	defer orig.Close()
	if err := netns.Set(ns.Handle); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("netnstest: enter %s: %w", ns.Name, err)
	}
	ferr := f()
	if err := netns.Set(orig); err != nil {
		// Leave the thread locked: the runtime will discard it when the goroutine exits.
		return fmt.Errorf("netnstest: leave %s: %w", ns.Name, err)
	}
	runtime.UnlockOSThread()
	return ferr
}

// Command returns a command that runs argv inside the namespace
// (`ip netns exec NAME argv...`).
func (ns *NS) Command(argv ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", ns.Name}, argv...)...)
}
