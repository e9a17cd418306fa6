// Command fabricctl makes RDMA fabrics lossless and proves it.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	g := &guard{}
	code := runUntilSignal(ctx, g, os.Stderr, func() int {
		return runGuarded(ctx, g, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	})
	stop()
	os.Exit(code)
}
