package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fabricctl/fabricctl/switchdrv"
)

// Signals (Ctrl-C, SIGTERM) cancel the command's context. Commands that talk
// to switches end promptly on their own (every RPC takes the context; apply
// rolls back what it changed). Others may be blocked where a context does
// not reach: opening a FIFO nobody writes, reading a stdin that never
// closes, parsing a large file. main gives every command signalGrace to end
// after the signal and then exits itself, unless the command is inside a
// write (apply, restore): those are waited for, since exiting would leave
// a switch half-written with nobody to roll it back.
const signalGrace = 300 * time.Millisecond

// guard tells main whether the command is writing switches, which switch
// writes are under way, and whether its result stands even though a signal
// came.
type guard struct {
	mu      sync.Mutex
	writing int
	// settled: the command's outcome is final and true to the switches
	// (apply finished, rolled back or not): a signal that came after it
	// does not change the exit code.
	settled bool
	// inflight: the switch writes sent and not yet read back, by switch
	// (from the engine's progress events: track).
	inflight map[string]inflightWrite
}

// inflightWrite is a switch write under way: what (set, rollback,
// restore), since when, and until when it lasts at the latest.
type inflightWrite struct {
	what         string
	since, until time.Time
}

// track follows the engine's events: a write starts with set, settle (the
// wait for a Set whose outcome is unknown), rollback or restore, and ends
// with the switch's outcome.
func (g *guard) track(ev switchdrv.Event) {
	if g == nil || ev.Switch == "" {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch ev.Step {
	case "set", "settle", "rollback", "restore":
		if g.inflight == nil {
			g.inflight = map[string]inflightWrite{}
		}
		g.inflight[ev.Switch] = inflightWrite{what: ev.Step, since: time.Now(), until: ev.Until}
	case "applied", "failed", "rolled-back", "rollback-failed", "skipped", switchdrv.StatusChangedByOther, "restored", "restore-failed":
		delete(g.inflight, ev.Switch)
	}
}

// inflightWrites describes the writes under way, one per switch in name
// order: "leaf1 (restore, sent 1.2s ago, over by 14:03:05 at the latest)".
func (g *guard) inflightWrites() []string {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	names := make([]string, 0, len(g.inflight))
	for n := range g.inflight {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]string, len(names))
	for i, n := range names {
		w := g.inflight[n]
		s := fmt.Sprintf("%s (%s, sent %s ago", n, w.what, time.Since(w.since).Round(100*time.Millisecond))
		if !w.until.IsZero() {
			s += fmt.Sprintf(", over in %s at the latest", time.Until(w.until).Round(time.Second))
		}
		out[i] = s + ")"
	}
	return out
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
// switches, fabricctl gives up on it and exits 1. A write is waited for
// (it ends on its own, bounded by the transport's timeouts), and the wait
// says which switch writes it waits for; a second signal (again) abandons
// them: fabricctl exits 1 naming each switch whose outcome is then unknown.
func runUntilSignal(ctx context.Context, g *guard, stderr io.Writer, again <-chan os.Signal, cmd func() int) int {
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
	case <-again:
		if g.isWriting() {
			return abandon(g, stderr)
		}
	}
	if !g.isWriting() {
		fmt.Fprintf(stderr, "fabricctl: %v\n", errInterrupted)
		return ExitError
	}
	what := "the switch writes in progress (rolling back what this run changed)"
	if w := g.inflightWrites(); len(w) > 0 {
		what = "the switch writes already sent to finish and be read back: " + strings.Join(w, ", ")
	}
	fmt.Fprintf(stderr, "fabricctl: interrupted: waiting for %s; Ctrl-C again abandons them (their outcome then unknown); SIGKILL would leave them unverified\n", what)
	select {
	case code := <-done:
		return code
	case <-again:
		return abandon(g, stderr)
	}
}

// abandon is fabricctl giving up on the writes under way at a second
// signal: each switch written is named with its outcome unknown.
func abandon(g *guard, stderr io.Writer) int {
	w := g.inflightWrites()
	if len(w) == 0 {
		fmt.Fprintln(stderr, "fabricctl: abandoned at a second signal while writing: the switches' outcome is unknown; run fabricctl diff")
		return ExitError
	}
	for _, s := range w {
		fmt.Fprintf(stderr, "fabricctl: abandoned at a second signal: switch %s: outcome unknown (sent, not read back); run fabricctl diff\n", s)
	}
	return ExitError
}
