// Package remote runs commands on the hosts of the inventory: locally with
// os/exec, or over SSH. hostdrv (fleet apply) and validate (perftest) use it.
package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
)

// Result is the outcome of a finished command.
type Result struct {
	Stdout, Stderr []byte
	ExitCode       int
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

// ExitError is a command that ran and exited non-zero.
type ExitError struct {
	Host     string
	Argv     []string
	ExitCode int
	Stderr   string
}

func (e *ExitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if len(msg) > 400 {
		msg = msg[len(msg)-400:]
	}
	return fmt.Sprintf("host %s: %s exited %d: %s", e.Host, e.Argv[0], e.ExitCode, msg)
}

// Local runs commands on this machine.
type Local struct{ Name string }

// Host implements Runner.
func (l Local) Host() string {
	if l.Name == "" {
		return "local"
	}
	return l.Name
}

// Run implements Runner.
func (l Local) Run(ctx context.Context, argv []string, stdin io.Reader) (Result, error) {
	if len(argv) == 0 {
		return Result{}, errors.New("remote: empty command")
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &out, &errb
	err := cmd.Run()
	res := Result{Stdout: out.Bytes(), Stderr: errb.Bytes()}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return res, nil
	case ctx.Err() != nil:
		return res, fmt.Errorf("host %s: %s: %w", l.Host(), argv[0], ctx.Err())
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
		return res, &ExitError{Host: l.Host(), Argv: argv, ExitCode: res.ExitCode, Stderr: errb.String()}
	}
	return res, fmt.Errorf("host %s: %s: %w", l.Host(), argv[0], err)
}
