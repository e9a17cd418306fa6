// Package sshtest is a test double of sshd for tests of SSH clients: an SSH
// server on 127.0.0.1 written with golang.org/x/crypto/ssh that accepts
// public-key authentication and runs "exec" requests on this machine with
// /bin/sh -c, like sshd does with the login shell. It mimics the parts of
// OpenSSH's sshd that remote execution depends on:
//
//   - each command runs as a new session (setsid), so its pid is its process
//     group id;
//   - stdin comes from the channel, stdout and stderr go back on it, and the
//     exit status is sent as "exit-status", or "exit-signal" when a signal
//     killed the command;
//   - a "signal" request is delivered to the command's pid only (not its
//     group), or refused with Options.RefuseSignals as sshd does for root;
//     closing the channel does NOT kill the command, as with sshd sessions
//     without a pty;
//   - at most MaxSessions sessions per connection (sshd_config MaxSessions,
//     10 by default), more are refused with "administratively prohibited".
//
// One difference remains: when the client closes a channel whose command is
// still running, x/crypto answers the close at once, while sshd keeps the
// channel until the command's output pipes reach EOF.
//
// Server.Close kills what is left so that tests leave no processes behind.
package sshtest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Options configures a Server.
type Options struct {
	// AuthorizedKeys may log in (any user name).
	AuthorizedKeys []ssh.PublicKey
	// HostKey is the server's key (nil = a new ed25519 key).
	HostKey ssh.Signer
	// ExtraHostKeys are more host keys of other types (a real sshd has
	// ed25519, ecdsa and rsa); the client picks one by its preference.
	ExtraHostKeys []ssh.Signer
	// MaxSessions per connection (0 = 10, OpenSSH's default).
	MaxSessions int
	// Shell runs the commands (default /bin/sh).
	Shell string
	// RefuseSignals refuses "signal" requests, as OpenSSH's sshd does for
	// sessions of root ("session signalling requires privilege separation").
	RefuseSignals bool
}

// Server is a running test double of sshd.
type Server struct {
	// Addr is 127.0.0.1:port.
	Addr string
	// HostKey is the public host key the server offers.
	HostKey ssh.PublicKey

	t      testing.TB
	cfg    *ssh.ServerConfig
	ln     net.Listener
	opts   Options
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[*ssh.ServerConn]bool
	pgids  map[int]bool
	cmds   []string
	nconns int
	closed bool
}

// Start starts a server on 127.0.0.1:0; t.Cleanup closes it.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.HostKey == nil {
		opts.HostKey = NewSigner(t)
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = 10
	}
	if opts.Shell == "" {
		opts.Shell = "/bin/sh"
	}
	s := &Server{
		HostKey: opts.HostKey.PublicKey(),
		t:       t,
		opts:    opts,
		conns:   map[*ssh.ServerConn]bool{},
		pgids:   map[int]bool{},
	}
	s.cfg = &ssh.ServerConfig{
		PublicKeyCallback: func(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			for _, k := range opts.AuthorizedKeys {
				if string(k.Marshal()) == string(key.Marshal()) {
					return &ssh.Permissions{}, nil
				}
			}
			return nil, errors.New("sshtest: key not authorized")
		},
	}
	s.cfg.AddHostKey(opts.HostKey)
	for _, k := range opts.ExtraHostKeys {
		s.cfg.AddHostKey(k)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("sshtest: listen: %v", err)
	}
	s.ln, s.Addr = ln, ln.Addr().String()
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.Close)
	return s
}

// Port returns the port the server listens on.
func (s *Server) Port() int {
	return s.ln.Addr().(*net.TCPAddr).Port
}

// KnownHostsLine is the known_hosts line for this server, as ssh-keyscan
// would write it ("[127.0.0.1]:port ssh-ed25519 AAAA...").
func (s *Server) KnownHostsLine() string {
	return knownhosts.Line([]string{knownhosts.Normalize(s.Addr)}, s.HostKey)
}

// Commands returns the command lines received in "exec" requests so far.
func (s *Server) Commands() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.cmds...)
}

// Connections returns how many connections have authenticated so far.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nconns
}

// DropConnections closes every open connection (a network failure or an
// sshd restart, as the client sees it). Commands keep running.
func (s *Server) DropConnections() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.Close()
	}
}

// Close stops the server, drops the connections and kills every command that
// is still running.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	for pgid := range s.pgids {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	s.mu.Unlock()
	s.ln.Close()
	s.wg.Wait()
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveConn(nc)
		}()
	}
}

func (s *Server) serveConn(nc net.Conn) {
	conn, chans, reqs, err := ssh.NewServerConn(nc, s.cfg)
	if err != nil {
		nc.Close()
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		conn.Close()
		return
	}
	s.conns[conn] = true
	s.nconns++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, conn)
		s.mu.Unlock()
		conn.Close()
	}()
	go ssh.DiscardRequests(reqs)
	var sessions sync.WaitGroup
	var mu sync.Mutex
	open := 0
	for nch := range chans {
		if nch.ChannelType() != "session" {
			_ = nch.Reject(ssh.UnknownChannelType, "only session channels")
			continue
		}
		mu.Lock()
		if open >= s.opts.MaxSessions {
			mu.Unlock()
			_ = nch.Reject(ssh.Prohibited, "open failed")
			continue
		}
		open++
		mu.Unlock()
		ch, creqs, err := nch.Accept()
		if err != nil {
			mu.Lock()
			open--
			mu.Unlock()
			continue
		}
		sessions.Add(1)
		go func() {
			defer sessions.Done()
			s.serveSession(ch, creqs)
			mu.Lock()
			open--
			mu.Unlock()
		}()
	}
	sessions.Wait()
}

// session is one session channel and the command running on it.
type session struct {
	mu  sync.Mutex
	cmd *exec.Cmd
}

func (s *Server) serveSession(ch ssh.Channel, reqs <-chan *ssh.Request) {
	sess := &session{}
	done := make(chan struct{})
	started := false
	for req := range reqs {
		switch req.Type {
		case "exec":
			var msg struct{ Command string }
			if started || ssh.Unmarshal(req.Payload, &msg) != nil {
				_ = req.Reply(false, nil)
				continue
			}
			started = true
			replied := make(chan struct{})
			if err := s.exec(ch, sess, msg.Command, done, replied); err != nil {
				_ = req.Reply(false, nil)
				ch.Close()
				close(done)
				continue
			}
			// Like sshd, answer the request before the exit status and the
			// close can reach the client.
			_ = req.Reply(true, nil)
			close(replied)
		case "signal":
			var msg struct{ Signal string }
			sess.mu.Lock()
			cmd := sess.cmd
			sess.mu.Unlock()
			sig, ok := syscall.Signal(0), false
			if ssh.Unmarshal(req.Payload, &msg) == nil {
				sig, ok = signals[msg.Signal]
			}
			if !ok || cmd == nil || s.opts.RefuseSignals {
				_ = req.Reply(false, nil)
				continue
			}
			_ = cmd.Process.Signal(sig) // the pid only, as sshd does
			_ = req.Reply(true, nil)
		case "env":
			_ = req.Reply(true, nil)
		default: // pty-req, shell, subsystem, x11-req ...
			_ = req.Reply(false, nil)
		}
	}
	// The client closed the channel. Like sshd without a pty, the command is
	// not killed; wait for it so the session slot stays taken meanwhile.
	if started {
		<-done
	}
}

var signals = map[string]syscall.Signal{
	"ABRT": syscall.SIGABRT, "ALRM": syscall.SIGALRM, "FPE": syscall.SIGFPE, "HUP": syscall.SIGHUP,
	"ILL": syscall.SIGILL, "INT": syscall.SIGINT, "KILL": syscall.SIGKILL, "PIPE": syscall.SIGPIPE,
	"QUIT": syscall.SIGQUIT, "SEGV": syscall.SIGSEGV, "TERM": syscall.SIGTERM, "USR1": syscall.SIGUSR1,
	"USR2": syscall.SIGUSR2,
}

func signalName(sig syscall.Signal) string {
	for name, s := range signals {
		if s == sig {
			return name
		}
	}
	return "KILL"
}

func (s *Server) exec(ch ssh.Channel, sess *session, command string, done, replied chan struct{}) error {
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd := exec.Command(s.opts.Shell, "-c", command)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, ch, ch.Stderr()
	s.mu.Lock()
	s.cmds = append(s.cmds, command)
	closed := s.closed
	s.mu.Unlock()
	if closed {
		stdinR.Close()
		stdinW.Close()
		return errors.New("sshtest: closed")
	}
	if err := cmd.Start(); err != nil {
		stdinR.Close()
		stdinW.Close()
		return err
	}
	stdinR.Close()
	pid := cmd.Process.Pid
	s.mu.Lock()
	s.pgids[pid] = true
	s.mu.Unlock()
	sess.mu.Lock()
	sess.cmd = cmd
	sess.mu.Unlock()
	go func() {
		_, _ = io.Copy(stdinW, ch)
		stdinW.Close()
	}()
	go func() {
		defer close(done)
		err := cmd.Wait() // also waits for stdout/stderr to reach EOF, as sshd does
		<-replied
		s.mu.Lock()
		delete(s.pgids, pid)
		s.mu.Unlock()
		var ee *exec.ExitError
		switch {
		case err == nil:
			_, _ = ch.SendRequest("exit-status", false, exitStatus(0))
		case errors.As(err, &ee):
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				_, _ = ch.SendRequest("exit-signal", false, ssh.Marshal(struct {
					Signal     string
					CoreDumped bool
					Error      string
					Lang       string
				}{Signal: signalName(ws.Signal())}))
			} else {
				_, _ = ch.SendRequest("exit-status", false, exitStatus(ee.ExitCode()))
			}
		}
		_ = ch.CloseWrite()
		ch.Close()
	}()
	return nil
}

func exitStatus(code int) []byte {
	return binary.BigEndian.AppendUint32(nil, uint32(code))
}

// NewSigner returns a new ed25519 key.
func NewSigner(t testing.TB) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatalf("sshtest: generate key: %v", err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatalf("sshtest: signer: %v", err)
	}
	return signer
}

// NewKeyFile returns a new ed25519 key and the path of a file in
// t.TempDir() that holds it in OpenSSH format (mode 0600), as ssh-keygen
// writes it.
func NewKeyFile(t testing.TB) (ssh.Signer, string) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatalf("sshtest: generate key: %v", err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "sshtest")
	if err != nil {
		t.Fatalf("sshtest: marshal key: %v", err)
	}
	path := filepath.Join(t.TempDir(), "id_ed25519")
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatalf("sshtest: %v", err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatalf("sshtest: signer: %v", err)
	}
	return signer, path
}

// WriteKnownHosts writes lines to a known_hosts file in t.TempDir() and
// returns its path.
func WriteKnownHosts(t testing.TB, lines ...string) string {
	t.Helper()
	var b []byte
	for _, l := range lines {
		b = append(b, l+"\n"...)
	}
	path := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatalf("sshtest: %v", err)
	}
	return path
}

// ServeAgent runs an ssh-agent holding keys (x/crypto/ssh/agent keyring) on
// a unix socket in a temp dir and returns the socket path, for
// SSH_AUTH_SOCK. It stops at test cleanup.
func ServeAgent(t testing.TB, keys ...ed25519.PrivateKey) string {
	t.Helper()
	kr := agent.NewKeyring()
	for _, k := range keys {
		if err := kr.Add(agent.AddedKey{PrivateKey: k}); err != nil {
			t.Fatalf("sshtest: agent add: %v", err)
		}
	}
	dir, err := os.MkdirTemp("", "agent")
	if err != nil {
		t.Fatalf("sshtest: %v", err)
	}
	sock := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatalf("sshtest: agent listen: %v", err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = agent.ServeAgent(kr, c)
				c.Close()
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
		os.RemoveAll(dir)
	})
	return sock
}

// NewAgentKey returns a new ed25519 private key for ServeAgent and its
// public half for Options.AuthorizedKeys.
func NewAgentKey(t testing.TB) (ed25519.PrivateKey, ssh.PublicKey) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatalf("sshtest: generate key: %v", err)
	}
	pub, err := ssh.NewPublicKey(priv.Public())
	if err != nil {
		t.Fatalf("sshtest: %v", err)
	}
	return priv, pub
}
