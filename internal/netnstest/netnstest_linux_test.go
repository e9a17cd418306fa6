package netnstest

import (
	"testing"

	"github.com/vishvananda/netlink"
)

func TestNewIsolated(t *testing.T) {
	ns := New(t)
	ns.Veth(t, "ntA", "ntB")
	if _, err := ns.Netlink.LinkByName("ntA"); err != nil {
		t.Fatalf("LinkByName(ntA) in %s: %v", ns.Name, err)
	}
	// The veth must not be visible in the test's own namespace.
	if _, err := netlink.LinkByName("ntA"); err == nil {
		t.Errorf("LinkByName(ntA) in the original namespace succeeded; want the link only inside %s", ns.Name)
	}
	out, err := ns.Command("ip", "-o", "link", "show", "ntB").CombinedOutput()
	if err != nil {
		t.Fatalf("ip netns exec %s ip link show ntB: %v: %s", ns.Name, err, out)
	}
	var inside bool
	if err := ns.Do(func() error {
		_, err := netlink.LinkByName("ntB")
		inside = err == nil
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !inside {
		t.Errorf("Do: LinkByName(ntB) failed inside %s", ns.Name)
	}
}
