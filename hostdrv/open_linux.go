package hostdrv

import (
	"fmt"
	"log/slog"

	"github.com/vishvananda/netns"
)

// Open returns a Driver for this machine: rtnetlink in the named network
// namespace (netnsName "" = the current one) and control files under root
// ("/" on a host). Call the returned close function when done.
func Open(root, netnsName string, log *slog.Logger) (*Driver, func(), error) {
	ns := netns.None()
	if netnsName != "" {
		h, err := netns.GetFromName(netnsName)
		if err != nil {
			return nil, nil, fmt.Errorf("network namespace %q: %w", netnsName, err)
		}
		ns = h
	}
	k, err := NewLinuxKernel(ns)
	if err != nil {
		if ns.IsOpen() {
			ns.Close()
		}
		return nil, nil, err
	}
	closeFn := func() {
		k.Close()
		if ns.IsOpen() {
			ns.Close()
		}
	}
	return &Driver{Kernel: k, Files: NewDirFiles(root), Backends: NewBackends(), Log: log}, closeFn, nil
}
