package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Local runs commands on this machine.
type Local struct{ Name string }

var _ Runner = Local{}

// drainTimeout bounds how long a finished command's output pipes are read
// after its process group was killed (something that left the group with
// setsid may still hold them).
const drainTimeout = 2 * time.Second

// Host implements Runner.
func (l Local) Host() string {
	if l.Name == "" {
		return "local"
	}
	return l.Name
}

// Close implements io.Closer; a Local runner holds nothing.
func (l Local) Close() error { return nil }

// Run implements Runner. The command runs in its own process group; when it
// ends, or ctx ends, whatever is left of that group is killed.
func (l Local) Run(ctx context.Context, argv []string, stdin io.Reader) (Result, error) {
	p, err := l.start(ctx, argv, stdin)
	if err != nil {
		return Result{}, err
	}
	return p.Wait()
}

// Start implements Runner. The command runs in its own process group with
// stdin from /dev/null; Stop and the end of ctx SIGKILL the whole group.
func (l Local) Start(ctx context.Context, argv []string) (Process, error) {
	return l.start(ctx, argv, nil)
}

func (l Local) start(ctx context.Context, argv []string, stdin io.Reader) (*proc, error) {
	if err := checkArgv(argv); err != nil {
		return nil, fmt.Errorf("host %s: %w", l.Host(), err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("host %s: %s: %w", l.Host(), argv[0], err)
	}
	// Our own pipes instead of exec's copying goroutines: cmd.Wait then
	// returns as soon as the leader is reaped, the rest of the group can be
	// killed, and reading ends when the last holder of the pipes is gone.
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("host %s: %s: %w", l.Host(), argv[0], err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("host %s: %s: %w", l.Host(), argv[0], err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, outW, errW
	// Bounds the stdin copy when a straggler keeps the stdin pipe open.
	cmd.WaitDelay = drainTimeout
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return nil, fmt.Errorf("host %s: start %s: %w", l.Host(), argv[0], err)
	}

	p := newProc(l.Host(), argv)
	pgid := cmd.Process.Pid
	p.kill = func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) }
	var reads sync.WaitGroup
	reads.Add(2)
	go func() { defer reads.Done(); _, _ = io.Copy(&p.stdout, outR) }()
	go func() { defer reads.Done(); _, _ = io.Copy(&p.stderr, errR) }()
	stopWatch := context.AfterFunc(ctx, p.killNow)

	go func() {
		werr := cmd.Wait()
		stopWatch()
		// No orphans: the leader is gone, kill what it left in its group.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		drained := make(chan struct{})
		go func() { reads.Wait(); close(drained) }()
		select {
		case <-drained:
		case <-time.After(drainTimeout):
			outR.Close()
			errR.Close()
			<-drained
		}
		outR.Close()
		errR.Close()

		code, signal := 0, ""
		var ee *exec.ExitError
		if errors.As(werr, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				signal = signalName(ws.Signal())
			}
			code = ee.ExitCode()
			werr = nil
		} else if errors.Is(werr, exec.ErrWaitDelay) {
			werr = nil
		}
		p.finish(ctx, code, signal, werr)
	}()
	return p, nil
}

// signalName returns the SSH-style name of a signal ("KILL" for SIGKILL), the
// form ssh exit-signal messages use.
func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGKILL:
		return "KILL"
	case syscall.SIGTERM:
		return "TERM"
	case syscall.SIGINT:
		return "INT"
	case syscall.SIGHUP:
		return "HUP"
	case syscall.SIGPIPE:
		return "PIPE"
	case syscall.SIGQUIT:
		return "QUIT"
	case syscall.SIGABRT:
		return "ABRT"
	case syscall.SIGSEGV:
		return "SEGV"
	case syscall.SIGUSR1:
		return "USR1"
	case syscall.SIGUSR2:
		return "USR2"
	}
	return fmt.Sprintf("signal %d", int(s))
}

// checkArgv rejects commands that cannot be run faithfully.
func checkArgv(argv []string) error {
	if len(argv) == 0 || argv[0] == "" {
		return errors.New("empty command")
	}
	for i, a := range argv {
		if strings.IndexByte(a, 0) >= 0 {
			return fmt.Errorf("%s: argument %d contains a NUL byte", argv[0], i)
		}
	}
	return nil
}
