// Command fabricctl makes RDMA fabrics lossless and proves it.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(mainWith(nil))
}

// mainWith runs fabricctl on the process's arguments and standard streams;
// ready, when set, is called once Ctrl-C and SIGTERM are caught (tests
// wait for it before they send one).
func mainWith(ready func()) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if ready != nil {
		ready()
	}
	g := &guard{}
	return runUntilSignal(ctx, g, os.Stderr, func() int {
		return runGuarded(ctx, g, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	})
}
