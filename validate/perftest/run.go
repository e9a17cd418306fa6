package perftest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/fabricctl/fabricctl/internal/remote"
)

// Side is one end of a perftest pair: where it runs and which device it uses.
type Side struct {
	Runner remote.Runner
	End    End
	// Addr is the address the client connects to (the server's RoCE IPv4
	// address); unused on the client side.
	Addr string
}

// Engine runs perftest pairs. The zero value uses the defaults below.
type Engine struct {
	// ToolDir is where the perftest binaries are on the hosts ("" = $PATH).
	ToolDir string
	// ReadyTimeout bounds the wait for the server to listen (default 10s).
	ReadyTimeout time.Duration
	// Slack is added to the test's own duration to bound the client (default
	// 30s; iteration-mode tests get Slack alone).
	Slack time.Duration
	// Poll is the ready-check interval (default 100ms).
	Poll time.Duration
	// Log receives debug events; nil = discard.
	Log *slog.Logger
}

// ErrNotReady is wrapped when a server does not start listening in time.
var ErrNotReady = errors.New("perftest server did not become ready")

// PairResult is a finished pair.
type PairResult struct {
	Report       *Report
	ClientArgv   []string
	ServerArgv   []string
	ClientOutput []byte
	ServerOutput []byte
	Elapsed      time.Duration
}

func (e *Engine) defaults() (ready, slack, poll time.Duration, log *slog.Logger) {
	ready, slack, poll, log = e.ReadyTimeout, e.Slack, e.Poll, e.Log
	if ready <= 0 {
		ready = 10 * time.Second
	}
	if slack <= 0 {
		slack = 30 * time.Second
	}
	if poll <= 0 {
		poll = 100 * time.Millisecond
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return
}

// serverBanner is what a perftest server prints before it accepts the
// client's TCP connection ("* Waiting for client to connect... *").
var serverBanner = []byte("Waiting for client")

// RunPair runs spec between server and client: it starts the server, waits
// until it is ready (its TCP port listening per `ss -Hltn`; with rdma_cm or
// without ss, its banner or a grace period), runs the client (again, up to
// three times, when it could not connect), waits for the server to finish,
// and parses the client's report. Every process it started is killed when it returns,
// on success, failure or when ctx ends.
func (e *Engine) RunPair(ctx context.Context, spec Spec, server, client Side, tcpPort int) (*PairResult, error) {
	readyTimeout, slack, poll, log := e.defaults()
	sargv, err := spec.Argv(server.End, tcpPort, "")
	if err != nil {
		return nil, err
	}
	cargv, err := spec.Argv(client.End, tcpPort, server.Addr)
	if err != nil {
		return nil, err
	}
	if server.Addr == "" {
		return nil, fmt.Errorf("%s: server %s has no address to connect to", spec.Tool, server.Runner.Host())
	}
	if e.ToolDir != "" {
		sargv[0] = path.Join(e.ToolDir, sargv[0])
		cargv[0] = path.Join(e.ToolDir, cargv[0])
	}
	res := &PairResult{ServerArgv: sargv, ClientArgv: cargv}
	start := time.Now()

	sh, ch := server.Runner.Host(), client.Runner.Host()
	// Errors name both ends' hosts and RDMA devices: "gpu1/rxe0 -> gpu2/rxe0".
	pair := fmt.Sprintf("%s/%s -> %s/%s", ch, client.End.Device, sh, server.End.Device)
	var srv remote.Process
	var srvDone chan struct{}
	var srvRes remote.Result
	var srvErr error
	// startServer starts the server and waits until it is ready; a server
	// already running is stopped first.
	startServer := func() error {
		if srv != nil {
			_, _ = srv.Stop()
			<-srvDone
		}
		log.Debug("perftest server start", "target", sh, "argv", sargv)
		p, err := server.Runner.Start(ctx, sargv)
		if err != nil {
			srv = nil
			return fmt.Errorf("perftest %s server on %s/%s: %w", spec.Tool, sh, server.End.Device, err)
		}
		srv, srvDone = p, make(chan struct{})
		done := srvDone
		go func() {
			srvRes, srvErr = p.Wait()
			close(done)
		}()
		if err := e.waitReady(ctx, server.Runner, srv, srvDone, tcpPort, spec.RDMACM, readyTimeout, poll); err != nil {
			_, _ = srv.Stop()
			<-srvDone
			return fmt.Errorf("perftest %s server on %s/%s port %d: %w%s", spec.Tool, sh, server.End.Device, tcpPort, err, tail(srvRes.Stderr, srv.Output()))
		}
		return nil
	}
	defer func() {
		if srv != nil {
			_, _ = srv.Stop()
			<-srvDone
		}
	}()
	if err := startServer(); err != nil {
		return nil, err
	}

	limit := slack
	if spec.Duration > 0 {
		limit += spec.Duration
	}
	cctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	log.Debug("perftest client start", "target", ch, "argv", cargv)
	var cres remote.Result
	var cerr error
	for attempt := 1; ; attempt++ {
		cres, cerr = client.Runner.Run(cctx, cargv, nil)
		if cerr == nil || attempt == connectAttempts || !connectFailed(cres) || cctx.Err() != nil {
			break
		}
		// The server printed its banner but did not listen yet, or rdma_cm
		// was not ready: perftest gives up at once, so try again, against
		// a fresh server unless the same one can be trusted (keepServer).
		// On soft-RoCE under qemu a client was rejected now and then
		// (RDMA_CM_EVENT_REJECTED, then a crash in librdmacm) and a retry
		// against the same server waited until the time limit.
		select {
		case <-cctx.Done():
		case <-time.After(300 * time.Millisecond):
		}
		if cctx.Err() != nil {
			break
		}
		if !e.keepServer(cctx, server.Runner, srvDone, tcpPort, spec.RDMACM) {
			if err := startServer(); err != nil {
				return res, err
			}
		}
		log.Debug("perftest client retry", "target", ch, "attempt", attempt+1)
	}
	res.ClientOutput = cres.Stdout
	if cerr != nil {
		_, _ = srv.Stop()
		<-srvDone
		res.ServerOutput = srv.Output()
		switch {
		case ctx.Err() != nil:
			return res, fmt.Errorf("perftest %s %s: %w", spec.Tool, pair, ctx.Err())
		case cctx.Err() != nil:
			// What the client said before it was stopped (its stderr is
			// unbuffered) tells a stalled transfer from a stuck connect.
			return res, fmt.Errorf("perftest %s %s: client did not finish within %v: %w%s", spec.Tool, pair, limit, cctx.Err(), tail(cres.Stderr, cres.Stdout))
		}
		return res, fmt.Errorf("perftest %s %s: client: %w", spec.Tool, pair, cerr)
	}

	// The server ends on its own once the client is done.
	select {
	case <-srvDone:
	case <-time.After(readyTimeout):
		_, _ = srv.Stop()
		<-srvDone
	case <-ctx.Done():
		_, _ = srv.Stop()
		<-srvDone
	}
	res.ServerOutput = srvRes.Stdout
	if len(res.ServerOutput) == 0 {
		res.ServerOutput = srv.Output()
	}
	res.Elapsed = time.Since(start)
	if ctx.Err() != nil {
		return res, fmt.Errorf("perftest %s %s: %w", spec.Tool, pair, ctx.Err())
	}
	var ee *remote.ExitError
	if srvErr != nil && !(errors.As(srvErr, &ee) && ee.Signal != "") {
		log.Debug("perftest server exit", "target", sh, "err", srvErr)
	}
	rep, err := ParseBytes(ch+":"+spec.Tool, cres.Stdout)
	if err != nil {
		return res, fmt.Errorf("perftest %s %s: %w", spec.Tool, pair, err)
	}
	res.Report = rep
	return res, nil
}

// connectAttempts bounds client retries after a failed connection setup.
const connectAttempts = 3

// connectFailed reports whether a perftest client failed before any test ran
// because it could not reach the server.
func connectFailed(r remote.Result) bool {
	out := string(r.Stdout) + string(r.Stderr)
	for _, m := range []string{"Unable to init the socket connection", "Couldn't connect to", "Unable to perform rdma_client function", "Unable to Connect the HCA's through the link",
		// rdma_cm: no listener yet on the port (IB CM reject reason 8,
		// invalid service ID); perftest 4.5 may crash right after printing it.
		"RDMA_CM_EVENT_REJECTED"} {
		if strings.Contains(out, m) {
			return true
		}
	}
	return false
}

// keepServer reports whether a client that failed to connect should try
// the same server again: it is running and, over TCP, still listens (per
// ss). With rdma_cm, where the RDMA CM's view (rdma resource show cm_id) is
// available, a fresh server is started instead: perftest connects twice
// through the CM and serves one client, so a server whose client was
// rejected halfway can keep its listening cm_id and never answer again.
// Where nothing can be seen the running server is trusted.
func (e *Engine) keepServer(ctx context.Context, r remote.Runner, done <-chan struct{}, port int, rdmacm bool) bool {
	select {
	case <-done:
		return false
	default:
	}
	if rdmacm {
		out, err := r.Run(ctx, []string{"rdma", "-j", "resource", "show", "cm_id"}, nil)
		if err != nil {
			return true
		}
		_, err = CMListening(out.Stdout, port)
		return err != nil
	}
	out, err := r.Run(ctx, []string{"ss", "-Hltn", "sport = :" + strconv.Itoa(port)}, nil)
	return err != nil || len(bytes.TrimSpace(out.Stdout)) > 0
}

// readyGrace is how long a server that cannot be observed listening (rdma_cm,
// or no `ss` on the host) and printed no banner is given before the client
// starts anyway (the client retries a failed connection).
const readyGrace = time.Second

// waitReady polls until the server listens on its TCP port (`ss -Hltn`).
// With rdma_cm (-R) perftest listens through the RDMA CM instead: its
// listening cm_id is polled with `rdma -j resource show cm_id` (iproute2's
// RDMA netlink view, state LISTEN on src-addr *:port). Where neither can be
// seen (no ss, no rdma or a kernel without RDMA netlink) its banner, or
// readyGrace, is the signal. perftest prints the banner before it listens and
// its stdout is block-buffered on a pipe, so the banner alone is not trusted
// where the listener can be seen: on soft-RoCE under qemu (internal/rdmavm)
// a client started a grace second after the server was rejected
// (RDMA_CM_EVENT_REJECTED, no listener on the port) and perftest crashed.
func (e *Engine) waitReady(ctx context.Context, r remote.Runner, srv remote.Process, done <-chan struct{}, port int, rdmacm bool, timeout, poll time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	start := time.Now()
	filter := "sport = :" + strconv.Itoa(port)
	blind := false
	for {
		if !blind {
			pctx, cancel := context.WithTimeout(ctx, timeout)
			var listening bool
			var err error
			if rdmacm {
				var out remote.Result
				out, err = r.Run(pctx, []string{"rdma", "-j", "resource", "show", "cm_id"}, nil)
				if err == nil {
					listening, err = CMListening(out.Stdout, port)
				}
			} else {
				var out remote.Result
				out, err = r.Run(pctx, []string{"ss", "-Hltn", filter}, nil)
				listening = err == nil && len(bytes.TrimSpace(out.Stdout)) > 0
			}
			cancel()
			switch {
			case listening:
				return nil
			case err != nil && ctx.Err() == nil:
				blind = true // no ss / rdma on the host, or no RDMA netlink
			}
		}
		if blind && (bytes.Contains(srv.Output(), serverBanner) || time.Since(start) > readyGrace) {
			select {
			case <-done:
				return errors.New("exited before the client connected")
			default:
				return nil
			}
		}
		select {
		case <-done:
			return errors.New("exited before the client connected")
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("%w within %v", ErrNotReady, timeout)
		case <-tick.C:
		}
	}
}

// CMListening reports whether the JSON of `rdma -j resource show cm_id`
// lists a cm_id in state LISTEN on port (src-addr "0.0.0.0:18515",
// "[::]:18515" or a specific address), as perftest's rdma_cm server makes.
func CMListening(js []byte, port int) (bool, error) {
	if len(bytes.TrimSpace(js)) == 0 {
		return false, nil
	}
	var ids []struct {
		State   string `json:"state"`
		SrcAddr string `json:"src-addr"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(js), &ids); err != nil {
		return false, fmt.Errorf("rdma resource show cm_id: %w", err)
	}
	suffix := ":" + strconv.Itoa(port)
	for _, id := range ids {
		if id.State == "LISTEN" && strings.HasSuffix(id.SrcAddr, suffix) {
			return true, nil
		}
	}
	return false, nil
}

// tail formats the last output of a failed server for an error message.
func tail(stderr, stdout []byte) string {
	b := bytes.TrimSpace(stderr)
	if len(b) == 0 {
		b = bytes.TrimSpace(stdout)
	}
	if len(b) == 0 {
		return ""
	}
	if len(b) > 300 {
		b = b[len(b)-300:]
	}
	return ": " + string(b)
}
