// Package earlysignal catches Ctrl-C and SIGTERM from the earliest moment a
// Go program can: its init, which runs as soon as os/signal is initialized,
// before the packages of gRPC, protobuf, YANG and cobra (whose inits take
// most of the ~15 ms before main). Until a program calls signal.Notify the
// Go runtime applies the default action, and the process dies with 130 or
// 143 without a word; from here on a signal is kept in C until main reads
// it.
//
// The import path matters: among packages whose imports are initialized,
// Go initializes the one first in import-path order (the Go spec, "Package
// initialization", since Go 1.21), and this one needs only os, os/signal and
// syscall, so it runs right after os/signal.
package earlysignal

import (
	"os"
	"os/signal"
	"syscall"
)

// C receives SIGINT and SIGTERM from init on. Buffered: signals that come
// before anyone reads it are kept (a few; more of the same add nothing).
var C = make(chan os.Signal, 4)

func init() {
	signal.Notify(C, os.Interrupt, syscall.SIGTERM)
}
