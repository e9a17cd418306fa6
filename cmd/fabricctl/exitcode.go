package main

import (
	"errors"
	"fmt"
	"io"
)

// Exit codes, the same for every command (documented in the README).
const (
	ExitOK = 0 // success; in sync; no changes
	// ExitError: the command could not do its job (bad flags, unreadable input,
	// unreachable device, failed apply).
	ExitError = 1
	// ExitChanges: diff found drift; plan --detailed-exitcode found changes.
	ExitChanges = 2
	// ExitCheckFailed: check found errors (or warnings with --strict);
	// validate ran and a check failed.
	ExitCheckFailed = 3
	// ExitRolledBack: apply failed on a switch and the switches changed in this
	// run were rolled back (and the rollback verified); host apply: a step
	// failed and the host was put back to its backup (read back).
	ExitRolledBack = 4
	// ExitPartial: host apply / restore wrote some steps and not others, and
	// the host was not put back (--partial, --no-rollback, or a rollback that
	// did not complete): the output lists every step's outcome.
	ExitPartial = 5
	// ExitChangedByOther: apply found a switch holding values it did not
	// write (another writer changed it after this run's Set) and left it
	// as is, rolling back nothing that could be the other writer's.
	ExitChangedByOther = 6
	// ExitUsage: the command line itself is wrong.
	ExitUsage = 64
)

// exitError carries a specific exit code through cobra's RunE.
type exitError struct {
	code int
	err  error // nil = nothing more to print (the command already reported)
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// withCode returns an error that makes fabricctl exit with code. err may be
// nil when the command has already printed its result.
func withCode(code int, err error) error { return &exitError{code: code, err: err} }

// usageError marks a command-line mistake.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return &usageError{fmt.Errorf(format, a...)} }

// exitCode prints err once (if it has text) and maps it to an exit code.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(stderr, "fabricctl: %v\n", ee.err)
		}
		return ee.code
	}
	fmt.Fprintf(stderr, "fabricctl: %v\n", err)
	var ue *usageError
	if errors.As(err, &ue) {
		return ExitUsage
	}
	return ExitError
}
