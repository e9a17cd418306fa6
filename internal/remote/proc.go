package remote

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// maxOutput bounds what is kept of each output stream of a command (far
// above anything perftest or `fabricctl host` prints): a runaway command
// cannot make fabricctl hold all it writes. The head is kept, the rest is
// read and dropped, so the command is never blocked on a full pipe.
const maxOutput = 64 << 20

// truncNote ends a stream that went past maxOutput.
const truncNote = "\n[fabricctl: output truncated: %d more bytes dropped]\n"

// syncBuffer is a bytes.Buffer that one goroutine writes while others read,
// holding at most maxOutput bytes.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	dropped int64
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	room := max(maxOutput-s.b.Len(), 0)
	if len(p) > room {
		s.b.Write(p[:room])
		s.dropped += int64(len(p) - room)
		return len(p), nil
	}
	return s.b.Write(p)
}

// Bytes returns a copy of what was written so far (with a note at the end
// when some of it was dropped).
func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := bytes.Clone(s.b.Bytes())
	if s.dropped > 0 {
		out = fmt.Appendf(out, truncNote, s.dropped)
	}
	return out
}

// proc is what local and SSH processes share: the output buffers, the result
// (published once, when done closes) and an idempotent Stop.
type proc struct {
	host string
	argv []string

	stdout, stderr syncBuffer

	done chan struct{}
	res  Result
	err  error

	stopping   atomic.Bool // Stop was called
	finishOnce sync.Once
	killOnce   sync.Once
	kill       func() // kills the process group; called at most once
}

func newProc(host string, argv []string) *proc {
	return &proc{host: host, argv: argv, done: make(chan struct{})}
}

// Output implements Process.
func (p *proc) Output() []byte { return p.stdout.Bytes() }

// Wait implements Process.
func (p *proc) Wait() (Result, error) {
	<-p.done
	return p.res, p.err
}

// Stop implements Process.
func (p *proc) Stop() (Result, error) {
	select {
	case <-p.done:
		return p.res, p.err
	default:
	}
	p.stopping.Store(true)
	p.killNow()
	<-p.done
	return p.res, p.err
}

func (p *proc) killNow() { p.killOnce.Do(p.kill) }

// finish publishes the result; only its first call counts. code is the exit
// status (ignored when signal is set), signal the name of the signal that
// killed the command ("" if none), other an error that is neither (I/O, lost
// connection, a kill that did not take).
func (p *proc) finish(ctx context.Context, code int, signal string, other error) {
	p.finishOnce.Do(func() { p.publish(ctx, code, signal, other) })
}

func (p *proc) publish(ctx context.Context, code int, signal string, other error) {
	p.res = Result{Stdout: p.stdout.Bytes(), Stderr: p.stderr.Bytes(), ExitCode: code}
	if signal != "" {
		p.res.ExitCode = -1
	}
	switch {
	case signal != "" && p.stopping.Load():
		// Killed by Stop, as asked.
	case ctx.Err() != nil && (signal != "" || other != nil):
		p.err = fmt.Errorf("host %s: %s: %w", p.host, p.argv[0], context.Cause(ctx))
	case other != nil:
		p.err = fmt.Errorf("host %s: %s: %w", p.host, p.argv[0], other)
	case signal != "" || code != 0:
		p.err = &ExitError{Host: p.host, Argv: p.argv, ExitCode: p.res.ExitCode, Signal: signal, Stderr: string(p.res.Stderr)}
	}
	close(p.done)
}
