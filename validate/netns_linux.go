package validate

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/vishvananda/netns"
)

// NetnsExec returns an Exec function for UDPEngine that runs f inside the
// named network namespace (/run/netns/<name>, as `ip netns add` creates)
// of each host in hosts (host name -> namespace name). Hosts not in the map
// run in this process's namespace. Sockets f opens stay in the namespace.
func NetnsExec(hosts map[string]string) (func(host string, f func() error) error, error) {
	handles := map[string]netns.NsHandle{}
	for h, name := range hosts {
		if name == "" || strings.ContainsAny(name, "/\x00") {
			return nil, fmt.Errorf("host %s: network namespace %q is not a namespace name", h, name)
		}
		ns, err := netns.GetFromName(name)
		if err != nil {
			return nil, fmt.Errorf("host %s: network namespace %s: %w", h, name, err)
		}
		handles[h] = ns
	}
	return func(host string, f func() error) error {
		ns, ok := handles[host]
		if !ok {
			return f()
		}
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			return fmt.Errorf("host %s: current network namespace: %w", host, err)
		}
		defer orig.Close()
		if err := netns.Set(ns); err != nil {
			runtime.UnlockOSThread()
			return fmt.Errorf("host %s: enter network namespace %s: %w", host, hosts[host], err)
		}
		ferr := f()
		if err := netns.Set(orig); err != nil {
			// The thread is stuck in the wrong namespace: keep it locked so
			// the runtime discards it when the goroutine exits.
			return fmt.Errorf("host %s: leave network namespace: %w", host, err)
		}
		runtime.UnlockOSThread()
		return ferr
	}, nil
}
