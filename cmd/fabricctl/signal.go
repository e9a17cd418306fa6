package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// Signals (Ctrl-C, SIGTERM) cancel the command's context. Commands that talk
// to switches end promptly on their own (every RPC takes the context; apply
// rolls back what it changed). Others may be blocked where a context does
// not reach: opening a FIFO nobody writes, reading a stdin that never
// closes, parsing a large file. main gives every command signalGrace to end
// after the signal and then exits itself, unless the command is inside a
// write (apply, restore): those are waited for, since exiting would leave
// a switch half-written with nobody to roll it back.
const signalGrace = 500 * time.Millisecond

// guard tells main whether the command is writing switches, and whether its
// result stands even though a signal came.
type guard struct {
	mu      sync.Mutex
	writing int
	// settled: the command's outcome is final and true to the switches
	// (apply finished, rolled back or not): a signal that came after it
	// does not change the exit code.
	settled bool
}

// write marks the start of a write that must not be cut short; the
// function it returns marks its end.
func (g *guard) write() func() {
	if g == nil {
		return func() {}
	}
	g.mu.Lock()
	g.writing++
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		g.writing--
		g.mu.Unlock()
	}
}

func (g *guard) isWriting() bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.writing > 0
}

func (g *guard) settle() {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.settled = true
	g.mu.Unlock()
}

func (g *guard) isSettled() bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.settled
}

// errInterrupted is the outcome of a command a signal stopped.
var errInterrupted = errors.New("interrupted by a signal before the command finished")

// interrupted turns a command's success into a failure when a signal came
// while it ran and its result is not known to be final: `check` stopped
// half-way must not exit 0 as if the intent were fine.
func interrupted(ctx context.Context, g *guard, err error) error {
	if err == nil && ctx.Err() != nil && !g.isSettled() {
		return withCode(ExitError, errInterrupted)
	}
	return err
}

// runUntilSignal runs cmd and returns its exit code. After ctx ends (a
// signal), cmd has signalGrace to return; then, unless it is writing
// switches, fabricctl gives up on it and exits 1.
func runUntilSignal(ctx context.Context, g *guard, stderr io.Writer, cmd func() int) int {
	done := make(chan int, 1)
	go func() { done <- cmd() }()
	select {
	case code := <-done:
		return code
	case <-ctx.Done():
	}
	t := time.NewTimer(signalGrace)
	defer t.Stop()
	select {
	case code := <-done:
		return code
	case <-t.C:
	}
	if g.isWriting() {
		fmt.Fprintln(stderr, "fabricctl: interrupted: finishing the switch writes in progress (rolling back what this run changed); SIGKILL would leave them unverified")
		return <-done
	}
	fmt.Fprintf(stderr, "fabricctl: %v\n", errInterrupted)
	return ExitError
}
