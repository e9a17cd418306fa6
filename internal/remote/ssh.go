package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/fabricctl/fabricctl/intent"
)

// SSHOptions tunes NewSSH. The zero value is ready to use.
type SSHOptions struct {
	// DialTimeout bounds the TCP connect plus the SSH handshake (default 15s);
	// a deadline on the ctx given to Run or Start applies too.
	DialTimeout time.Duration
	// StopTimeout bounds each step of stopping a remote command: learning its
	// pid, the remote kill, and the session ending (default 10s).
	StopTimeout time.Duration
	// AgentSocket is the ssh-agent socket ("" = $SSH_AUTH_SOCK at NewSSH).
	AgentSocket string
	// HomeDir expands "~/" in key and known_hosts paths and locates the
	// default known_hosts ("" = the current user's home).
	HomeDir string
	// MaxSessions is how many commands share one connection before another
	// connection is opened (default 8: OpenSSH's sshd allows 10 sessions per
	// connection, MaxSessions in sshd_config, and Stop needs a spare one).
	MaxSessions int
	// KeepAlive is the interval of keepalive requests on idle and busy
	// connections (default 15s; negative: none), and KeepAliveMax how many
	// may go unanswered before the connection is declared dead (default 3).
	KeepAlive    time.Duration
	KeepAliveMax int
	// Logger gets debug logs (connects, kills); nil discards them.
	Logger *slog.Logger
}

// SSH runs commands on one host over SSH (golang.org/x/crypto/ssh). It keeps
// its connections open between commands and opens one session per command;
// Close closes them. Host keys are checked against known_hosts unless the
// intent sets insecureIgnoreHostKey.
//
// The remote side must have a POSIX login shell (sh, bash, dash, zsh, ksh):
// a command is sent as `echo <marker><pid>; exec <argv quoted>` so that Stop
// can kill the process group sshd created for the session (OpenSSH makes every
// session a new session with setsid) with `kill -s KILL -- -<pid>`.
type SSH struct {
	name         string
	addr         string // host:port as dialled and as known_hosts names it
	user         string
	keyFile      string // expanded; "" = none
	knownHosts   string // expanded; "" when insecure
	insecure     bool
	agentSock    string
	dialTO       time.Duration
	stopTO       time.Duration
	maxSess      int
	keepAlive    time.Duration
	keepAliveMax int
	log          *slog.Logger

	mu      sync.Mutex
	conns   []*sshConn
	closed  bool
	running map[*proc]struct{} // started and not yet finished; Close stops them
}

var _ Runner = (*SSH)(nil)

// sshConn is one connection and the number of sessions running on it.
type sshConn struct {
	client   *ssh.Client
	closed   chan struct{} // closed when the connection is gone
	sessions int
	limit    int // sessions the server allows on it, once it refused one (0 = unknown)
	dead     bool
}

// ForHost returns the Runner for an inventory host: Local for "local" (or an
// empty address), SSH otherwise. Callers should Close it (io.Closer) when done.
func ForHost(h intent.Host, opts SSHOptions) (Runner, error) {
	if h.IsLocal() {
		return Local{Name: h.Name}, nil
	}
	return NewSSH(h, opts)
}

// NewSSH returns an SSH runner for h. It checks the settings and reads
// nothing from the network; the first Run or Start connects.
func NewSSH(h intent.Host, opts SSHOptions) (*SSH, error) {
	name := h.Name
	if name == "" {
		name = h.Address
	}
	if h.IsLocal() {
		return nil, fmt.Errorf("host %s: address %q is this machine; use remote.Local", name, h.Address)
	}
	port := h.SSH.Port
	if port == 0 {
		port = 22
	}
	addr, err := sshAddr(h.Address, port)
	if err != nil {
		return nil, fmt.Errorf("host %s: %w", name, err)
	}
	home := opts.HomeDir
	if home == "" {
		// Only needed for "~" and the default known_hosts; report it then.
		home, _ = os.UserHomeDir()
	}
	s := &SSH{
		name:         name,
		addr:         addr,
		user:         h.SSH.User,
		insecure:     h.SSH.InsecureIgnoreHostKey,
		agentSock:    opts.AgentSocket,
		dialTO:       opts.DialTimeout,
		stopTO:       opts.StopTimeout,
		maxSess:      opts.MaxSessions,
		keepAlive:    opts.KeepAlive,
		keepAliveMax: opts.KeepAliveMax,
		log:          opts.Logger,
	}
	if s.user == "" {
		u, err := user.Current()
		if err != nil {
			return nil, fmt.Errorf("host %s: no ssh user in the intent and the current user is unknown: %w", name, err)
		}
		s.user = u.Username
	}
	if s.agentSock == "" {
		s.agentSock = os.Getenv("SSH_AUTH_SOCK")
	}
	if s.dialTO <= 0 {
		s.dialTO = 15 * time.Second
	}
	if s.stopTO <= 0 {
		s.stopTO = 10 * time.Second
	}
	if s.maxSess <= 0 {
		s.maxSess = 8
	}
	if s.keepAlive == 0 {
		s.keepAlive = 15 * time.Second
	}
	if s.keepAliveMax <= 0 {
		s.keepAliveMax = 3
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if h.SSH.KeyFile != "" {
		if s.keyFile, err = expandHome(h.SSH.KeyFile, home); err != nil {
			return nil, fmt.Errorf("host %s: ssh key file: %w", name, err)
		}
	}
	if !s.insecure {
		kh := h.SSH.KnownHosts
		if kh == "" {
			kh = "~/.ssh/known_hosts"
		}
		if s.knownHosts, err = expandHome(kh, home); err != nil {
			return nil, fmt.Errorf("host %s: known_hosts: %w", name, err)
		}
	}
	if s.keyFile == "" && s.agentSock == "" {
		return nil, fmt.Errorf("host %s: no ssh credentials: set ssh.keyFile in the intent or run ssh-agent (SSH_AUTH_SOCK is not set)", name)
	}
	return s, nil
}

// sshAddr turns "host", "host:port", "[v6]:port" or a bare IPv6 address into
// host:port, with port as the default.
func sshAddr(address string, port int) (string, error) {
	if h, p, err := net.SplitHostPort(address); err == nil {
		if h == "" {
			return "", fmt.Errorf("address %q has no host", address)
		}
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("address %q: bad port %q", address, p)
		}
		return net.JoinHostPort(h, p), nil
	}
	h := strings.TrimSuffix(strings.TrimPrefix(address, "["), "]")
	if h == "" || strings.ContainsAny(h, " /@") {
		return "", fmt.Errorf("bad ssh address %q: want host, host:port or [ipv6]:port", address)
	}
	return net.JoinHostPort(h, strconv.Itoa(port)), nil
}

func expandHome(p, home string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p, nil
	}
	if home == "" {
		return "", fmt.Errorf("%s: home directory unknown", p)
	}
	return filepath.Join(home, strings.TrimPrefix(p, "~")), nil
}

// Host implements Runner.
func (s *SSH) Host() string { return s.name }

// Close stops the commands still running (as Stop does: sshd would not kill
// them when the connection goes), then closes the connections.
func (s *SSH) Close() error {
	s.mu.Lock()
	procs := make([]*proc, 0, len(s.running))
	for p := range s.running {
		procs = append(procs, p)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = p.Stop()
		}()
	}
	wg.Wait()

	s.mu.Lock()
	conns := s.conns
	s.conns, s.closed = nil, true
	s.mu.Unlock()
	var errs []error
	for _, c := range conns {
		if err := c.client.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("host %s: close ssh: %w", s.name, err)
	}
	return nil
}

// Run implements Runner. stdin (nil = empty) is copied to the command, then
// closed; Run also waits for that copy, so stdin must reach EOF (a file or
// buffer, not a terminal). Cancelling ctx kills the remote command's process
// group.
func (s *SSH) Run(ctx context.Context, argv []string, stdin io.Reader) (Result, error) {
	p, err := s.start(ctx, argv, stdin)
	if err != nil {
		return Result{}, err
	}
	return p.Wait()
}

// Start implements Runner. Stop, and the end of ctx, SIGKILL the remote
// process group (the command and everything it started).
func (s *SSH) Start(ctx context.Context, argv []string) (Process, error) {
	return s.start(ctx, argv, nil)
}

// pidMarker starts the first line every command prints: its pid, which is
// also its process group id.
const pidMarker = "fabricctl-remote-pid="

func (s *SSH) start(ctx context.Context, argv []string, stdin io.Reader) (*proc, error) {
	if err := checkArgv(argv); err != nil {
		return nil, fmt.Errorf("host %s: %w", s.name, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("host %s: %s: %w", s.name, argv[0], err)
	}
	c, sess, err := s.session(ctx)
	if err != nil {
		return nil, err
	}
	p := newProc(s.name, argv)
	pf := &pidFilter{dst: &p.stdout, ready: make(chan struct{})}
	sess.Stdout, sess.Stderr, sess.Stdin = pf, &p.stderr, stdin
	if err := sess.Start("echo " + pidMarker + "$$; exec " + Quote(argv)); err != nil {
		sess.Close()
		s.release(c)
		return nil, fmt.Errorf("host %s: ssh: start %s: %w", s.name, argv[0], err)
	}
	s.log.Debug("ssh command started", "target", s.name, "argv", argv[0])
	p.kill = func() { s.kill(ctx, c, sess, pf, p) }
	s.track(p, true)
	stopWatch := context.AfterFunc(ctx, p.killNow)
	go func() {
		defer s.track(p, false)
		werr := sess.Wait()
		stopWatch()
		pf.flush()
		sess.Close()
		s.release(c)
		code, signal := 0, ""
		var ee *ssh.ExitError
		var missing *ssh.ExitMissingError
		switch {
		case werr == nil:
		case errors.As(werr, &ee):
			code, signal = ee.ExitStatus(), ee.Signal()
			werr = nil
		case errors.As(werr, &missing) && !p.stopping.Load() && pf.pid > 0 && s.connDead(c):
			// The connection was lost while the command ran: sshd does not
			// kill it, so reconnect and do (no orphan perftest servers).
			werr = fmt.Errorf("ssh connection lost while it ran (pid %d): %w", pf.pid, ErrConnectionLost)
			if kerr := s.runOn(nil, killCmd(pf.pid)); kerr != nil {
				werr = fmt.Errorf("%w; killing it after reconnecting failed too: %v", werr, kerr)
			}
		case errors.As(werr, &missing):
			werr = errors.New("ssh session ended without an exit status (connection lost or sshd killed the command)")
		}
		p.finish(ctx, code, signal, werr)
	}()
	return p, nil
}

// track adds p to (or removes it from) the commands Close must stop.
func (s *SSH) track(p *proc, running bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !running {
		delete(s.running, p)
		return
	}
	if s.running == nil {
		s.running = map[*proc]struct{}{}
	}
	s.running[p] = struct{}{}
}

// kill stops a remote command: a "signal" request to the session (OpenSSH
// >= 7.9 delivers it to the session leader only), then `kill -s KILL --
// -<pid>` over a second session for the whole process group (falling back to
// the pid alone when it is not a group leader). If the command still has not
// ended after StopTimeout, the session is closed; if even that does not end
// it (sshd keeps a channel open while anything holds the command's output),
// the result is published as an error after another StopTimeout.
func (s *SSH) kill(ctx context.Context, c *sshConn, sess *ssh.Session, pf *pidFilter, p *proc) {
	_ = sess.Signal(ssh.SIGKILL)
	select {
	case <-pf.ready:
	case <-p.done:
		return
	case <-time.After(s.stopTO):
	}
	pid := 0
	select {
	case <-pf.ready:
		pid = pf.pid
	default: // no marker yet: the signal request and closing are all we have
	}
	if pid > 0 {
		if err := s.runOn(c, killCmd(pid)); err != nil {
			s.log.Debug("ssh remote kill failed", "target", s.name, "pid", pid, "err", err)
		}
	}
	select {
	case <-p.done:
		return
	case <-time.After(s.stopTO):
	}
	sess.Close()
	select {
	case <-p.done:
	case <-time.After(s.stopTO):
		p.finish(ctx, -1, "", fmt.Errorf("still running %v after it was killed (pid %d); something outside its process group holds its output", 2*s.stopTO, pid))
	}
}

// killCmd kills the process group of pid, or pid alone when it leads none.
func killCmd(pid int) string {
	return fmt.Sprintf("kill -s KILL -- -%d 2>/dev/null || kill -s KILL %d", pid, pid)
}

// ErrConnectionLost is wrapped by the error of a command whose SSH
// connection died while it ran (keepalives unanswered, peer reset). The
// runner has then tried to kill it over a new connection; the error says
// whether that worked.
var ErrConnectionLost = errors.New("connection lost")

// runOn runs a short control command, bounded by StopTimeout, on connection
// c, which normally has the spare session kept for it; when c is nil, dead,
// or sshd refuses it a session (its MaxSessions is lower than ours), on
// another connection, dialling one if needed.
func (s *SSH) runOn(c *sshConn, cmd string) error {
	ctx, cancel := context.WithTimeout(context.Background(), s.stopTO)
	defer cancel()
	release := func() {}
	var sess *ssh.Session
	err := ErrConnectionLost
	if c != nil {
		sess, err = c.client.NewSession()
	}
	if err != nil {
		var c2 *sshConn
		if c2, sess, err = s.session(ctx); err != nil {
			return err
		}
		release = func() { s.release(c2) }
	}
	defer release()
	defer sess.Close()
	errc := make(chan error, 1)
	go func() { errc <- sess.Run(cmd) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		return fmt.Errorf("%q did not finish in %v", cmd, s.stopTO)
	}
}

// connDead reports whether c was found dead (its client.Wait returned).
func (s *SSH) connDead(c *sshConn) bool {
	select {
	case <-c.closed:
		return true
	case <-time.After(time.Second):
		// The session can end a moment before the client notices.
		return false
	}
}

// session opens a session on a connection with a free slot, connecting when
// there is none. A connection that turns out dead is dropped and another
// tried once.
func (s *SSH) session(ctx context.Context) (*sshConn, *ssh.Session, error) {
	redials := 0
	for {
		c, err := s.acquire(ctx)
		if err != nil {
			return nil, nil, err
		}
		sess, err := c.client.NewSession()
		if err == nil {
			return c, sess, nil
		}
		var oc *ssh.OpenChannelError
		if errors.As(err, &oc) && oc.Reason == ssh.Prohibited && s.capSessions(c) {
			// sshd's MaxSessions is below ours: this connection is full at
			// the sessions it has, use (or open) another one.
			s.log.Debug("ssh session refused, connection capped", "target", s.name)
			continue
		}
		s.release(c)
		if errors.As(err, &oc) || redials > 0 {
			return nil, nil, fmt.Errorf("host %s: ssh: open session: %w", s.name, err)
		}
		// The connection died since it was last used: forget it, dial again.
		redials++
		s.drop(c)
	}
}

// capSessions releases the session slot that c refused and caps c at the
// sessions it still has. It reports false when c has no other session (the
// server refuses sessions outright).
func (s *SSH) capSessions(c *sshConn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.sessions <= 1 { // only the refused one
		return false
	}
	c.sessions--
	c.limit = c.sessions
	return true
}

// acquire returns a live connection with a free session slot, counting the
// session on it.
func (s *SSH) acquire(ctx context.Context) (*sshConn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("host %s: ssh runner is closed", s.name)
	}
	for _, c := range s.conns {
		limit := s.maxSess
		if c.limit > 0 && c.limit < limit {
			limit = c.limit
		}
		if !c.dead && c.sessions < limit {
			c.sessions++
			return c, nil
		}
	}
	// Dialling under the lock: concurrent first commands to one host wait for
	// one connection instead of opening one each.
	client, err := s.dial(ctx)
	if err != nil {
		return nil, err
	}
	c := &sshConn{client: client, sessions: 1, closed: make(chan struct{})}
	s.conns = append(s.conns, c)
	go func() {
		_ = client.Wait()
		close(c.closed)
		s.drop(c)
	}()
	if s.keepAlive > 0 {
		go s.keepAliveLoop(c)
	}
	return c, nil
}

// keepAliveLoop sends keepalive@openssh.com requests every KeepAlive and
// closes the connection when KeepAliveMax in a row go unanswered, so that a
// host that died or a cut cable fails the commands instead of hanging them
// (OpenSSH's ServerAliveInterval / ServerAliveCountMax).
func (s *SSH) keepAliveLoop(c *sshConn) {
	t := time.NewTicker(s.keepAlive)
	defer t.Stop()
	replies := make(chan error, 1)
	pending, missed := false, 0
	for {
		select {
		case <-c.closed:
			return
		case err := <-replies:
			pending = false
			if err != nil {
				return
			}
			missed = 0
			continue
		case <-t.C:
		}
		if pending {
			missed++
			if missed >= s.keepAliveMax {
				s.log.Warn("ssh keepalive unanswered, closing connection", "target", s.name, "missed", missed)
				_ = c.client.Close()
				return
			}
			continue
		}
		pending = true
		go func() {
			_, _, err := c.client.SendRequest("keepalive@openssh.com", true, nil)
			replies <- err
		}()
	}
}

func (s *SSH) release(c *sshConn) {
	s.mu.Lock()
	c.sessions--
	s.mu.Unlock()
}

// drop forgets a dead connection.
func (s *SSH) drop(c *sshConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.dead = true
	for i, x := range s.conns {
		if x == c {
			s.conns = append(s.conns[:i], s.conns[i+1:]...)
			break
		}
	}
	_ = c.client.Close()
}

// dial connects and authenticates, bounded by ctx and DialTimeout.
func (s *SSH) dial(ctx context.Context) (*ssh.Client, error) {
	where := fmt.Sprintf("host %s: ssh %s@%s", s.name, s.user, s.addr)
	hostKey, algos, err := s.hostKeyCheck()
	if err != nil {
		return nil, err
	}
	auth, tried, closeAgent, err := s.auth()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	defer closeAgent()

	dctx, cancel := context.WithTimeout(ctx, s.dialTO)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(dctx, "tcp", s.addr)
	if err != nil {
		return nil, fmt.Errorf("%s: connect: %w", where, err)
	}
	if dl, ok := dctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	// Unblock the handshake when ctx ends.
	stop := context.AfterFunc(dctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	cfg := &ssh.ClientConfig{
		User:              s.user,
		Auth:              auth,
		HostKeyCallback:   hostKey,
		HostKeyAlgorithms: algos,
		Timeout:           s.dialTO,
	}
	cc, chans, reqs, err := ssh.NewClientConn(conn, s.addr, cfg)
	if !stop() && err == nil {
		cc.Close()
		err = context.Cause(dctx)
	}
	if err != nil {
		conn.Close()
		var hk *HostKeyError
		switch {
		case errors.As(err, &hk):
			return nil, hk
		case dctx.Err() != nil:
			return nil, fmt.Errorf("%s: handshake: %w", where, context.Cause(dctx))
		case strings.Contains(err.Error(), "unable to authenticate"):
			return nil, fmt.Errorf("%s: authentication failed (offered %s): %w", where, tried, err)
		}
		return nil, fmt.Errorf("%s: handshake: %w", where, err)
	}
	_ = conn.SetDeadline(time.Time{})
	s.log.Debug("ssh connected", "target", s.name, "addr", s.addr, "user", s.user)
	return ssh.NewClient(cc, chans, reqs), nil
}

// auth returns one publickey method offering the key file's key, then the
// agent's keys. (One method, because x/crypto/ssh tries each method name only
// once: a second publickey method would never be used.) tried describes what
// is offered, for errors; it never contains key material.
func (s *SSH) auth() (methods []ssh.AuthMethod, tried string, closeAgent func(), err error) {
	closeAgent = func() {}
	var signers []ssh.Signer
	var what []string
	if s.keyFile != "" {
		b, err := os.ReadFile(s.keyFile)
		if err != nil {
			return nil, "", closeAgent, fmt.Errorf("read key file: %w", err)
		}
		signer, err := ssh.ParsePrivateKey(b)
		clear(b)
		var pm *ssh.PassphraseMissingError
		switch {
		case errors.As(err, &pm):
			return nil, "", closeAgent, fmt.Errorf("key file %s is passphrase-protected: load it into ssh-agent and leave ssh.keyFile empty", s.keyFile)
		case err != nil:
			return nil, "", closeAgent, fmt.Errorf("key file %s: %w", s.keyFile, err)
		}
		signers = append(signers, signer)
		what = append(what, "key file "+s.keyFile)
	}
	var agentSigners func() ([]ssh.Signer, error)
	if s.agentSock != "" {
		conn, err := net.Dial("unix", s.agentSock)
		switch {
		case err != nil && len(signers) == 0:
			return nil, "", closeAgent, fmt.Errorf("ssh-agent at %s: %w", s.agentSock, err)
		case err != nil:
			s.log.Debug("ssh-agent unreachable, using the key file only", "target", s.name, "err", err)
		default:
			closeAgent = func() { conn.Close() }
			agentSigners = agent.NewClient(conn).Signers
			what = append(what, "ssh-agent keys")
		}
	}
	cb := func() ([]ssh.Signer, error) {
		out := signers
		if agentSigners != nil {
			as, err := agentSigners()
			if err != nil && len(out) == 0 {
				return nil, fmt.Errorf("ssh-agent: %w", err)
			}
			out = append(out[:len(out):len(out)], as...)
		}
		return out, nil
	}
	return []ssh.AuthMethod{ssh.PublicKeysCallback(cb)}, strings.Join(what, " and "), closeAgent, nil
}

// pidFilter passes a command's stdout through minus the pid marker line,
// whose pid it records. The marker is normally the first line; a login shell
// that prints something first (a chatty .bashrc) is tolerated for the first
// markerWindow bytes.
type pidFilter struct {
	dst    io.Writer
	buf    []byte // the current, incomplete line while looking
	passed int    // bytes passed through while looking
	done   bool
	pid    int // valid once ready is closed
	// ready closes when the marker was found or given up on (pid 0).
	ready chan struct{}
}

const markerWindow = 4096

func (f *pidFilter) Write(p []byte) (int, error) {
	if f.done {
		return f.dst.Write(p)
	}
	n := len(p)
	f.buf = append(f.buf, p...)
	for !f.done {
		i := bytes.IndexByte(f.buf, '\n')
		if i < 0 {
			if f.passed+len(f.buf) >= markerWindow {
				f.giveUp()
			}
			break
		}
		line := f.buf[:i+1]
		if bytes.HasPrefix(line, []byte(pidMarker)) {
			f.pid, _ = strconv.Atoi(string(bytes.TrimSpace(line[len(pidMarker):])))
			f.buf = f.buf[i+1:]
			f.done = true
			close(f.ready)
			break
		}
		if _, err := f.dst.Write(line); err != nil {
			return 0, err
		}
		f.passed += len(line)
		f.buf = f.buf[i+1:]
		if f.passed >= markerWindow {
			f.giveUp()
		}
	}
	if f.done && len(f.buf) > 0 {
		rest := f.buf
		f.buf = nil
		if _, err := f.dst.Write(rest); err != nil {
			return 0, err
		}
	}
	return n, nil
}

func (f *pidFilter) giveUp() {
	f.done = true
	close(f.ready)
}

// flush passes on what is left once the stream has ended.
func (f *pidFilter) flush() {
	if !f.done {
		f.giveUp()
		_, _ = f.dst.Write(f.buf)
		f.buf = nil
	}
}
