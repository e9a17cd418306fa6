package hostdrv

import (
	"runtime"

	"github.com/vishvananda/netns"
)

// inNetns runs f on a locked thread inside ns.
func inNetns(ns netns.NsHandle, f func() error) error {
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer orig.Close()
	if err := netns.Set(ns); err != nil {
		runtime.UnlockOSThread()
		return err
	}
	ferr := f()
	if err := netns.Set(orig); err != nil {
		return err // thread stays locked and is discarded with the goroutine
	}
	runtime.UnlockOSThread()
	return ferr
}
