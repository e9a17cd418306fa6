// Command fabricctl makes RDMA fabrics lossless and proves it.
package main

import (
	"context"
	"os"

	// Catches SIGINT and SIGTERM from its init, before the other packages'
	// inits and main: a signal that early is kept, not the default action.
	"github.com/fabricctl/fabricctl/internal/earlysignal"
)

func main() {
	os.Exit(mainWith(nil))
}

// mainWith runs fabricctl on the process's arguments and standard streams;
// ready, when set, is called once Ctrl-C and SIGTERM are caught (tests
// wait for it before they send one). They are caught from earlysignal's
// init on: the first one (even one that came before main) cancels the
// command's context, a second one abandons writes still under way
// (runUntilSignal).
func mainWith(ready func()) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	again := make(chan os.Signal, 1)
	go func() {
		first := true
		for sig := range earlysignal.C {
			if first {
				first = false
				cancel()
				continue
			}
			select {
			case again <- sig:
			default:
			}
		}
	}()
	if ready != nil {
		ready()
	}
	g := &guard{}
	return runUntilSignal(ctx, g, os.Stderr, again, func() int {
		return runGuarded(ctx, g, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	})
}
