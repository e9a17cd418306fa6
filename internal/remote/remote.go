// Package remote runs commands on the hosts of the inventory: locally with
// os/exec, or over SSH. hostdrv (fleet apply) and validate (perftest) use it.
//
// Both runners give the same guarantees: a command runs in its own process
// group (over SSH: the session sshd creates with setsid), a started command is
// killed together with everything it spawned when Stop is called or its
// context ends, and errors name the host. Nothing here logs or returns key
// material or passwords.
package remote

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// Result is the outcome of a finished command.
type Result struct {
	Stdout, Stderr []byte
	// ExitCode is the exit status; -1 when the command was killed by a signal
	// (Stop, context cancellation or someone else).
	ExitCode int
}

// Runner runs commands on one host.
type Runner interface {
	// Host names the host in errors and logs.
	Host() string
	// Run runs argv to completion. A non-zero exit is reported in Result and as
	// an *ExitError.
	Run(ctx context.Context, argv []string, stdin io.Reader) (Result, error)
	// Start runs argv in the background (a perftest server, say). Stop or ctx
	// cancellation kills it and everything it started.
	Start(ctx context.Context, argv []string) (Process, error)
}

// Process is a command started with Start.
type Process interface {
	// Wait waits for it to end on its own.
	Wait() (Result, error)
	// Stop kills it (process group) and waits; it is safe to call more than once.
	Stop() (Result, error)
	// Output returns what it has printed on stdout so far (for ready detection).
	Output() []byte
}

// ExitError is a command that ran and exited non-zero, or was killed by a
// signal it did not get from Stop.
type ExitError struct {
	Host     string
	Argv     []string
	ExitCode int
	// Signal is the signal that killed it ("KILL", "TERM"), "" if it exited.
	Signal string
	Stderr string
}

func (e *ExitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if len(msg) > 400 {
		msg = "..." + msg[len(msg)-400:]
	}
	name := "command"
	if len(e.Argv) > 0 {
		name = e.Argv[0]
	}
	how := fmt.Sprintf("exited %d", e.ExitCode)
	if e.Signal != "" {
		how = "killed by signal " + e.Signal
	}
	if msg == "" {
		return fmt.Sprintf("host %s: %s %s", e.Host, name, how)
	}
	return fmt.Sprintf("host %s: %s %s: %s", e.Host, name, how, msg)
}
