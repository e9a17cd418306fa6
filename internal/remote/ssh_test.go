package remote

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/remote/sshtest"
)

// sshFixture is a test double of sshd (sshtest.Server) with one authorized
// key file and a known_hosts file that holds its host key.
type sshFixture struct {
	srv        *sshtest.Server
	keyFile    string
	knownHosts string
}

func newSSHFixture(t *testing.T, opts sshtest.Options) sshFixture {
	t.Helper()
	t.Setenv("SSH_AUTH_SOCK", "")
	signer, keyFile := sshtest.NewKeyFile(t)
	opts.AuthorizedKeys = append(opts.AuthorizedKeys, signer.PublicKey())
	srv := sshtest.Start(t, opts)
	kh := sshtest.WriteKnownHosts(t, "# fabricctl test", srv.KnownHostsLine())
	return sshFixture{srv: srv, keyFile: keyFile, knownHosts: kh}
}

func (f sshFixture) host() intent.Host {
	return intent.Host{
		Name:    "gpu1",
		Address: f.srv.Addr,
		SSH:     intent.SSH{User: "root", KeyFile: f.keyFile, KnownHosts: f.knownHosts},
	}
}

func newTestSSH(t testing.TB, h intent.Host, opts SSHOptions) *SSH {
	t.Helper()
	if opts.StopTimeout == 0 {
		opts.StopTimeout = 3 * time.Second
	}
	s, err := NewSSH(h, opts)
	if err != nil {
		t.Fatalf("NewSSH(%+v) error = %v", h, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestSSHRun(t *testing.T) {
	f := newSSHFixture(t, sshtest.Options{})
	s := newTestSSH(t, f.host(), SSHOptions{})
	tests := []struct {
		name     string
		argv     []string
		stdin    string
		want     Result
		wantExit *ExitError
	}{
		{
			name: "stdout and stderr",
			argv: []string{"sh", "-c", "echo out; echo err >&2"},
			want: Result{Stdout: []byte("out\n"), Stderr: []byte("err\n")},
		},
		{
			name:  "stdin",
			argv:  []string{"cat"},
			stdin: "line 1\nline 2\n",
			want:  Result{Stdout: []byte("line 1\nline 2\n")},
		},
		{
			name: "no stdin is an empty stdin",
			argv: []string{"wc", "-c"},
			want: Result{Stdout: []byte("0\n")},
		},
		{
			name:     "exit code",
			argv:     []string{"sh", "-c", "echo no >&2; exit 3"},
			want:     Result{Stderr: []byte("no\n"), ExitCode: 3},
			wantExit: &ExitError{Host: "gpu1", Argv: []string{"sh", "-c", "echo no >&2; exit 3"}, ExitCode: 3, Stderr: "no\n"},
		},
		{
			name:     "killed by a signal",
			argv:     []string{"sh", "-c", "kill -TERM $$"},
			want:     Result{ExitCode: -1},
			wantExit: &ExitError{Host: "gpu1", Argv: []string{"sh", "-c", "kill -TERM $$"}, ExitCode: -1, Signal: "TERM"},
		},
		{
			name:     "command not found",
			argv:     []string{"/nonexistent/fabricctl-no-such-command"},
			want:     Result{ExitCode: 127},
			wantExit: &ExitError{Host: "gpu1", Argv: []string{"/nonexistent/fabricctl-no-such-command"}, ExitCode: 127},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdin io.Reader // nil: no stdin
			if tt.stdin != "" {
				stdin = strings.NewReader(tt.stdin)
			}
			got, err := s.Run(t.Context(), tt.argv, stdin)
			ignoreStderr := tt.want.ExitCode == 127 // the shell's wording varies
			if ignoreStderr {
				got.Stderr = nil
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(bytesEqual)); diff != "" {
				t.Errorf("Run(%q) result mismatch (-want +got):\n%s", tt.argv, diff)
			}
			if tt.wantExit == nil {
				if err != nil {
					t.Fatalf("Run(%q) error = %v, want nil", tt.argv, err)
				}
				return
			}
			var ee *ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("Run(%q) error = %v, want *ExitError", tt.argv, err)
			}
			if ignoreStderr {
				ee.Stderr = ""
			}
			if diff := cmp.Diff(tt.wantExit, ee); diff != "" {
				t.Errorf("Run(%q) ExitError mismatch (-want +got):\n%s", tt.argv, diff)
			}
		})
	}
	if got := f.srv.Connections(); got != 1 {
		t.Errorf("server saw %d connections for %d commands, want 1 (reused)", got, len(tests))
	}
}

// Arguments reach the remote command exactly, whatever they contain.
func TestSSHRunQuoting(t *testing.T) {
	f := newSSHFixture(t, sshtest.Options{})
	s := newTestSSH(t, f.host(), SSHOptions{})
	argv := append([]string{"printf", `%s\0`}, nastyArgs...)
	res, err := s.Run(t.Context(), argv, nil)
	if err != nil {
		t.Fatalf("Run(printf nasty...) error = %v", err)
	}
	if diff := cmp.Diff(nastyArgs, splitNUL(res.Stdout)); diff != "" {
		t.Errorf("remote command got different arguments (-want +got):\n%s", diff)
	}
}

func TestSSHStartStop(t *testing.T) {
	f := newSSHFixture(t, sshtest.Options{})
	s := newTestSSH(t, f.host(), SSHOptions{})
	p, err := s.Start(t.Context(), []string{"sh", "-c", "sleep 30 & echo child $!; echo self $$; echo ready; wait"})
	if err != nil {
		t.Fatalf("Start() error = %v", err)
	}
	out := waitOutput(t, p, "ready")
	if strings.Contains(out, pidMarker) {
		t.Errorf("Output() = %q, want the pid marker line removed", out)
	}
	pids := pidsIn(t, out, "child", "self")
	for _, pid := range pids {
		if !alive(pid) {
			t.Fatalf("pid %d not running before Stop", pid)
		}
	}
	res, err := p.Stop()
	if err != nil {
		t.Errorf("Stop() error = %v, want nil (killed as asked)", err)
	}
	if res.ExitCode != -1 {
		t.Errorf("Stop() exit code = %d, want -1 (killed)", res.ExitCode)
	}
	// The double does not kill on channel close or on "signal" beyond the
	// session leader, so this proves the process-group kill.
	waitGone(t, pids...)
	res2, err2 := p.Stop()
	if diff := cmp.Diff(res, res2); diff != "" || err2 != nil {
		t.Errorf("second Stop() = %v, %v; mismatch (-want +got):\n%s", res2, err2, diff)
	}
}

func TestSSHStartContextKills(t *testing.T) {
	f := newSSHFixture(t, sshtest.Options{})
	s := newTestSSH(t, f.host(), SSHOptions{})
	ctx, cancel := context.WithCancel(t.Context())
	p, err := s.Start(ctx, []string{"sh", "-c", "sleep 30 & echo child $!; echo self $$; wait"})
	if err != nil {
		t.Fatalf("Start() error = %v", err)
	}
	out := waitOutput(t, p, "self")
	cancel()
	if _, err := p.Wait(); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait() error = %v, want context.Canceled", err)
	}
	waitGone(t, pidsIn(t, out, "child", "self")...)
}

func TestSSHRunTimeoutKills(t *testing.T) {
	f := newSSHFixture(t, sshtest.Options{})
	s := newTestSSH(t, f.host(), SSHOptions{})
	if _, err := s.Run(t.Context(), []string{"true"}, nil); err != nil {
		t.Fatalf("Run(true) error = %v", err) // connect outside the timeout
	}
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := s.Run(ctx, []string{"sh", "-c", "sleep 30 & echo child $!; echo self $$; wait"}, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run() error = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Run() took %v after its context ended", d)
	}
	waitGone(t, pidsIn(t, string(res.Stdout), "child", "self")...)
}

// More concurrent commands than fit on one connection open more
// connections: at our own MaxSessions, and when sshd's MaxSessions is lower
// and it refuses a session ("administratively prohibited").
func TestSSHMaxSessions(t *testing.T) {
	tests := []struct {
		name            string
		serverMax, ours int
		wantConns       int
	}{
		{"our limit", 3, 2, 3},
		// Stop's kill needs a session too: it gets one on another connection.
		{"server limit", 2, 8, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newSSHFixture(t, sshtest.Options{MaxSessions: tt.serverMax, RefuseSignals: true})
			s := newTestSSH(t, f.host(), SSHOptions{MaxSessions: tt.ours})
			const n = 5
			procs := make([]Process, n)
			for i := range procs {
				var err error
				if procs[i], err = s.Start(t.Context(), []string{"sh", "-c", "echo ready; exec sleep 30"}); err != nil {
					t.Fatalf("Start() #%d error = %v", i, err)
				}
				waitOutput(t, procs[i], "ready")
			}
			if got := f.srv.Connections(); got != tt.wantConns {
				t.Errorf("server saw %d connections for %d commands, want %d", got, n, tt.wantConns)
			}
			for i, p := range procs {
				if res, err := p.Stop(); err != nil || res.ExitCode != -1 {
					t.Errorf("Stop() of command %d = exit %d, %v; want killed, nil", i, res.ExitCode, err)
				}
			}
		})
	}
}

// A dropped connection fails the command running on it with an error naming
// the host; the runner reconnects, kills the command sshd left running, and
// the next command works.
func TestSSHReconnect(t *testing.T) {
	f := newSSHFixture(t, sshtest.Options{})
	s := newTestSSH(t, f.host(), SSHOptions{})
	p, err := s.Start(t.Context(), []string{"sh", "-c", "sleep 30 & echo child $!; echo self $$; echo ready; wait"})
	if err != nil {
		t.Fatalf("Start() error = %v", err)
	}
	pids := pidsIn(t, waitOutput(t, p, "ready"), "child", "self")
	f.srv.DropConnections()
	_, err = p.Wait()
	if !errors.Is(err, ErrConnectionLost) || !strings.Contains(err.Error(), "host gpu1") {
		t.Errorf("Wait() after the connection dropped error = %v, want a lost connection naming host gpu1", err)
	}
	waitGone(t, pids...)
	res, err := s.Run(t.Context(), []string{"echo", "again"}, nil)
	if err != nil || string(res.Stdout) != "again\n" {
		t.Errorf("Run() after reconnect = %q, %v; want \"again\\n\", nil", res.Stdout, err)
	}
	if got := f.srv.Connections(); got != 2 {
		t.Errorf("server saw %d connections, want 2", got)
	}
}

// freezer is a TCP proxy in front of addr that can stop forwarding, the way a
// host that hangs or a cut link looks to the client.
type freezer struct {
	addr   string
	frozen chan struct{}
	once   sync.Once
}

func newFreezer(t *testing.T, target string) *freezer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fz := &freezer{addr: ln.Addr().String(), frozen: make(chan struct{})}
	var conns []net.Conn
	var mu sync.Mutex
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			a, err := ln.Accept()
			if err != nil {
				return
			}
			b, err := net.Dial("tcp", target)
			if err != nil {
				a.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, a, b)
			mu.Unlock()
			go fz.pipe(a, b)
			go fz.pipe(b, a)
		}
	}()
	return fz
}

func (fz *freezer) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		select {
		case <-fz.frozen:
			return // swallow everything from now on, close nothing
		default:
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			dst.Close()
			return
		}
	}
}

func (fz *freezer) freeze() { fz.once.Do(func() { close(fz.frozen) }) }

// Keepalives turn a silent peer into a failed command instead of a hang.
func TestSSHKeepAlive(t *testing.T) {
	f := newSSHFixture(t, sshtest.Options{})
	fz := newFreezer(t, f.srv.Addr)
	h := f.host()
	h.Address = fz.addr
	// known_hosts names the proxy's address.
	h.SSH.KnownHosts = sshtest.WriteKnownHosts(t, knownhosts.Line([]string{knownhosts.Normalize(fz.addr)}, f.srv.HostKey))
	s := newTestSSH(t, h, SSHOptions{KeepAlive: 50 * time.Millisecond, KeepAliveMax: 2, StopTimeout: 500 * time.Millisecond, DialTimeout: 500 * time.Millisecond})
	p, err := s.Start(t.Context(), []string{"sh", "-c", "echo ready; exec sleep 30"})
	if err != nil {
		t.Fatalf("Start() error = %v", err)
	}
	waitOutput(t, p, "ready")
	fz.freeze()
	done := make(chan error, 1)
	go func() { _, err := p.Wait(); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrConnectionLost) {
			t.Errorf("Wait() error = %v, want a lost connection", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Wait() still blocked 20s after the peer went silent: keepalive did not fire")
	}
}

func TestSSHHostKey(t *testing.T) {
	f := newSSHFixture(t, sshtest.Options{})
	other := sshtest.NewSigner(t)
	entry := knownhosts.Normalize(f.srv.Addr)
	otherLine := knownhosts.Line([]string{entry}, other.PublicKey())
	offered := ssh.FingerprintSHA256(f.srv.HostKey)
	tests := []struct {
		name        string
		knownHosts  []string // nil: no file
		insecure    bool
		wantErr     error // nil = connects
		wantKnown   []KnownKey
		wantOffered bool
	}{
		{name: "match", knownHosts: []string{"# comment", f.srv.KnownHostsLine()}},
		{name: "match among other hosts", knownHosts: []string{knownhosts.Line([]string{"10.9.9.9"}, other.PublicKey()), f.srv.KnownHostsLine()}},
		{
			name:       "mismatch",
			knownHosts: []string{"# comment", otherLine},
			wantErr:    ErrHostKeyMismatch,
			wantKnown: []KnownKey{{
				Line: 2, Type: "ssh-ed25519", Fingerprint: ssh.FingerprintSHA256(other.PublicKey()),
			}},
			wantOffered: true,
		},
		{
			name:        "unknown host",
			knownHosts:  []string{knownhosts.Line([]string{"10.9.9.9"}, f.srv.HostKey)},
			wantErr:     ErrHostKeyUnknown,
			wantOffered: true,
		},
		{name: "no known_hosts file", wantErr: ErrHostKeyUnknown},
		{
			name:        "revoked",
			knownHosts:  []string{"@revoked * " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(f.srv.HostKey))), f.srv.KnownHostsLine()},
			wantErr:     ErrHostKeyRevoked,
			wantKnown:   []KnownKey{{Line: 1, Type: "ssh-ed25519", Fingerprint: offered}},
			wantOffered: true,
		},
		{name: "mismatch ignored when the intent says so", knownHosts: []string{otherLine}, insecure: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(f.srv.Commands())
			h := f.host()
			h.SSH.KnownHosts = t.TempDir() + "/missing_known_hosts"
			if tt.knownHosts != nil {
				h.SSH.KnownHosts = sshtest.WriteKnownHosts(t, tt.knownHosts...)
			}
			h.SSH.InsecureIgnoreHostKey = tt.insecure
			s := newTestSSH(t, h, SSHOptions{})
			res, err := s.Run(t.Context(), []string{"echo", "connected"}, nil)
			if tt.wantErr == nil {
				if err != nil || string(res.Stdout) != "connected\n" {
					t.Fatalf("Run() = %q, %v; want \"connected\\n\", nil", res.Stdout, err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Run() error = %v, want errors.Is %v", err, tt.wantErr)
			}
			var hk *HostKeyError
			if !errors.As(err, &hk) {
				t.Fatalf("Run() error = %T, want *HostKeyError", err)
			}
			for i := range tt.wantKnown {
				tt.wantKnown[i].File = h.SSH.KnownHosts
			}
			if diff := cmp.Diff(tt.wantKnown, hk.Known); diff != "" {
				t.Errorf("HostKeyError.Known mismatch (-want +got):\n%s", diff)
			}
			if tt.wantOffered && (hk.OfferedFingerprint != offered || hk.OfferedType != "ssh-ed25519") {
				t.Errorf("HostKeyError offered %s %s, want ssh-ed25519 %s", hk.OfferedType, hk.OfferedFingerprint, offered)
			}
			if tt.knownHosts == nil && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Run() error = %v, want it to wrap fs.ErrNotExist", err)
			}
			msg := err.Error()
			for _, want := range []string{"host gpu1", entry} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not name %q", msg, want)
				}
			}
			if got := len(f.srv.Commands()); got != before {
				t.Errorf("server ran %d commands despite the host key failure", got-before)
			}
		})
	}
}

// A server with an ed25519 and an ecdsa key, known only by its ecdsa key,
// is verified with the ecdsa key (the client asks for the algorithms that
// known_hosts has) instead of failing as a mismatch on the ed25519 key.
func TestSSHHostKeyAlgorithmFromKnownHosts(t *testing.T) {
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecSigner, err := ssh.NewSignerFromKey(ec)
	if err != nil {
		t.Fatal(err)
	}
	f := newSSHFixture(t, sshtest.Options{ExtraHostKeys: []ssh.Signer{ecSigner}})
	h := f.host()
	h.SSH.KnownHosts = sshtest.WriteKnownHosts(t, knownhosts.Line([]string{knownhosts.Normalize(f.srv.Addr)}, ecSigner.PublicKey()))
	s := newTestSSH(t, h, SSHOptions{})
	if _, err := s.Run(t.Context(), []string{"true"}, nil); err != nil {
		t.Errorf("Run() with the ecdsa key in known_hosts error = %v, want nil", err)
	}
}

func TestSSHAgentAuth(t *testing.T) {
	priv, pub := sshtest.NewAgentKey(t)
	f := newSSHFixture(t, sshtest.Options{AuthorizedKeys: []ssh.PublicKey{pub}})
	sock := sshtest.ServeAgent(t, priv)
	h := f.host()
	h.SSH.KeyFile = ""

	t.Run("SSH_AUTH_SOCK", func(t *testing.T) {
		t.Setenv("SSH_AUTH_SOCK", sock)
		s := newTestSSH(t, h, SSHOptions{})
		if res, err := s.Run(t.Context(), []string{"echo", "agent"}, nil); err != nil || string(res.Stdout) != "agent\n" {
			t.Errorf("Run() = %q, %v; want \"agent\\n\", nil", res.Stdout, err)
		}
	})
	t.Run("agent key not authorized", func(t *testing.T) {
		other, _ := sshtest.NewAgentKey(t)
		s := newTestSSH(t, h, SSHOptions{AgentSocket: sshtest.ServeAgent(t, other)})
		_, err := s.Run(t.Context(), []string{"true"}, nil)
		if err == nil || !strings.Contains(err.Error(), "authentication failed") || !strings.Contains(err.Error(), "host gpu1") {
			t.Errorf("Run() error = %v, want an authentication failure naming host gpu1", err)
		}
	})
	t.Run("key file tried before the agent", func(t *testing.T) {
		_, unauthorized := sshtest.NewKeyFile(t)
		h := h
		h.SSH.KeyFile = unauthorized
		s := newTestSSH(t, h, SSHOptions{AgentSocket: sock})
		if _, err := s.Run(t.Context(), []string{"true"}, nil); err != nil {
			t.Errorf("Run() with an unauthorized key file and an authorized agent key error = %v, want nil", err)
		}
	})
}

// Errors never carry key material: not the private key, not the public key
// blob, not a passphrase.
func TestSSHErrorsHaveNoSecrets(t *testing.T) {
	f := newSSHFixture(t, sshtest.Options{})
	_, unauthorized := sshtest.NewKeyFile(t)
	pemBytes, err := os.ReadFile(unauthorized)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(pemBytes)
	if err != nil {
		t.Fatal(err)
	}
	const passphrase = "hunter2-secret-passphrase"
	encrypted := encryptedKeyFile(t, passphrase)
	secrets := []string{
		passphrase,
		base64.StdEncoding.EncodeToString(signer.PublicKey().Marshal()),
		base64.StdEncoding.EncodeToString(f.srv.HostKey.Marshal()),
	}
	for _, line := range strings.Split(string(pemBytes), "\n") {
		if len(line) > 20 && !strings.HasPrefix(line, "-----") {
			secrets = append(secrets, line)
		}
	}
	for _, tc := range []struct{ name, keyFile, knownHosts string }{
		{"unauthorized key", unauthorized, f.knownHosts},
		{"passphrase-protected key", encrypted, f.knownHosts},
		{"host key mismatch", unauthorized, sshtest.WriteKnownHosts(t, knownhosts.Line([]string{knownhosts.Normalize(f.srv.Addr)}, signer.PublicKey()))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := f.host()
			h.SSH.KeyFile, h.SSH.KnownHosts = tc.keyFile, tc.knownHosts
			s := newTestSSH(t, h, SSHOptions{})
			_, err := s.Run(t.Context(), []string{"true"}, nil)
			if err == nil {
				t.Fatal("Run() error = nil, want an error")
			}
			for _, secret := range secrets {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q contains secret or key material %q", err, secret)
				}
			}
		})
	}
}

func TestNewSSH(t *testing.T) {
	t.Setenv("SSH_AUTH_SOCK", "")
	tests := []struct {
		name     string
		host     intent.Host
		opts     SSHOptions
		wantAddr string
		wantErr  bool
	}{
		{name: "host", host: intent.Host{Name: "a", Address: "10.0.1.1", SSH: intent.SSH{KeyFile: "/k"}}, wantAddr: "10.0.1.1:22"},
		{name: "host and port field", host: intent.Host{Name: "a", Address: "gpu1.lab", SSH: intent.SSH{Port: 2222, KeyFile: "/k"}}, wantAddr: "gpu1.lab:2222"},
		{name: "port in address wins", host: intent.Host{Name: "a", Address: "10.0.1.1:2200", SSH: intent.SSH{Port: 2222, KeyFile: "/k"}}, wantAddr: "10.0.1.1:2200"},
		{name: "bracketed ipv6", host: intent.Host{Name: "a", Address: "[fd00::1]:22", SSH: intent.SSH{KeyFile: "/k"}}, wantAddr: "[fd00::1]:22"},
		{name: "bare ipv6", host: intent.Host{Name: "a", Address: "fd00::1", SSH: intent.SSH{KeyFile: "/k"}}, wantAddr: "[fd00::1]:22"},
		{name: "agent only", host: intent.Host{Name: "a", Address: "h"}, opts: SSHOptions{AgentSocket: "/s"}, wantAddr: "h:22"},
		{name: "local", host: intent.Host{Name: "a", Address: "local", SSH: intent.SSH{KeyFile: "/k"}}, wantErr: true},
		{name: "bad port", host: intent.Host{Name: "a", Address: "h:99999", SSH: intent.SSH{KeyFile: "/k"}}, wantErr: true},
		{name: "no host", host: intent.Host{Name: "a", Address: ":22", SSH: intent.SSH{KeyFile: "/k"}}, wantErr: true},
		{name: "no credentials", host: intent.Host{Name: "a", Address: "h"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewSSH(tt.host, tt.opts)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("NewSSH(%+v) error = nil, want an error", tt.host)
				}
				if !strings.Contains(err.Error(), "host a") {
					t.Errorf("NewSSH() error = %q, want it to name host a", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewSSH(%+v) error = %v", tt.host, err)
			}
			if s.addr != tt.wantAddr {
				t.Errorf("NewSSH(%+v) addr = %q, want %q", tt.host, s.addr, tt.wantAddr)
			}
		})
	}
}

func TestForHost(t *testing.T) {
	r, err := ForHost(intent.Host{Name: "me", Address: "local"}, SSHOptions{})
	if err != nil {
		t.Fatalf("ForHost(local) error = %v", err)
	}
	if _, ok := r.(Local); !ok || r.Host() != "me" {
		t.Errorf("ForHost(local) = %#v, want Local{Name: \"me\"}", r)
	}
	r, err = ForHost(intent.Host{Name: "gpu1", Address: "10.0.1.1", SSH: intent.SSH{KeyFile: "/k"}}, SSHOptions{})
	if err != nil {
		t.Fatalf("ForHost(remote) error = %v", err)
	}
	if _, ok := r.(*SSH); !ok || r.Host() != "gpu1" {
		t.Errorf("ForHost(remote) = %#v, want *SSH for gpu1", r)
	}
}

// Concurrent commands on one runner share its connection safely.
func TestSSHConcurrent(t *testing.T) {
	f := newSSHFixture(t, sshtest.Options{})
	s := newTestSSH(t, f.host(), SSHOptions{})
	var mu sync.Mutex
	got := map[string]bool{}
	errs := ForEach(t.Context(), 6, 6, func(ctx context.Context, i int) error {
		res, err := s.Run(ctx, []string{"echo", strings.Repeat("x", i)}, nil)
		mu.Lock()
		got[string(res.Stdout)] = true
		mu.Unlock()
		return err
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent Run() error = %v", err)
	}
	if len(got) != 6 {
		t.Errorf("got %d distinct outputs, want 6: %v", len(got), got)
	}
	if n := f.srv.Connections(); n != 1 {
		t.Errorf("server saw %d connections, want 1", n)
	}
}

// encryptedKeyFile writes a passphrase-protected key. ssh-keygen -a 1 is much
// faster than x/crypto's fixed 16 bcrypt rounds under -race.
func encryptedKeyFile(t *testing.T, passphrase string) string {
	t.Helper()
	path := t.TempDir() + "/id_encrypted"
	if _, err := exec.LookPath("ssh-keygen"); err == nil {
		out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-a", "1", "-N", passphrase, "-C", "", "-f", path).CombinedOutput()
		if err != nil {
			t.Fatalf("ssh-keygen: %v: %s", err, out)
		}
		return path
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte(passphrase))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPIDFilter(t *testing.T) {
	tests := []struct {
		name    string
		writes  []string
		wantOut string
		wantPID int
	}{
		{"marker first", []string{pidMarker + "42\nready\n"}, "ready\n", 42},
		{"split writes", []string{"fabricctl-rem", "ote-pid=4", "3\nre", "ady\n"}, "ready\n", 43},
		{"login shell noise first", []string{"Welcome\n\n", pidMarker + "44\n", "ready\n"}, "Welcome\n\nready\n", 44},
		{"no marker, ends early", []string{"no newline"}, "no newline", 0},
		{"no marker in the window", []string{strings.Repeat("x\n", markerWindow), pidMarker + "45\n"}, strings.Repeat("x\n", markerWindow) + pidMarker + "45\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			f := &pidFilter{dst: &out, ready: make(chan struct{})}
			for _, w := range tt.writes {
				if n, err := f.Write([]byte(w)); err != nil || n != len(w) {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			f.flush()
			<-f.ready
			if got := out.String(); got != tt.wantOut {
				t.Errorf("output = %q, want %q", got, tt.wantOut)
			}
			if f.pid != tt.wantPID {
				t.Errorf("pid = %d, want %d", f.pid, tt.wantPID)
			}
		})
	}
}

// A login shell that prints before running the command (a chatty .bashrc)
// does not break Stop.
func TestSSHChattyLoginShell(t *testing.T) {
	shell := filepath.Join(t.TempDir(), "chatty-sh")
	if err := os.WriteFile(shell, []byte("#!/bin/sh\necho Welcome to gpu1\nexec /bin/sh \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := newSSHFixture(t, sshtest.Options{Shell: shell, RefuseSignals: true})
	s := newTestSSH(t, f.host(), SSHOptions{})
	p, err := s.Start(t.Context(), []string{"sh", "-c", "sleep 30 & echo child $!; echo self $$; echo ready; wait"})
	if err != nil {
		t.Fatalf("Start() error = %v", err)
	}
	out := waitOutput(t, p, "ready")
	if !strings.HasPrefix(out, "Welcome to gpu1\n") || strings.Contains(out, pidMarker) {
		t.Errorf("Output() = %q, want the shell's greeting and no pid marker", out)
	}
	pids := pidsIn(t, out, "child", "self")
	if _, err := p.Stop(); err != nil {
		t.Errorf("Stop() error = %v", err)
	}
	waitGone(t, pids...)
}

// TestSSHCloseStopsRunning: closing the runner while a started command still
// runs (a caller that forgot Stop, or an error path that closes early) must
// not leave the command and its children running on the host: sshd does not
// kill them when the connection goes.
func TestSSHCloseStopsRunning(t *testing.T) {
	f := newSSHFixture(t, sshtest.Options{})
	s := newTestSSH(t, f.host(), SSHOptions{})
	p, err := s.Start(t.Context(), []string{"sh", "-c", "sleep 30 & echo child $!; echo self $$; wait"})
	if err != nil {
		t.Fatalf("Start() error = %v", err)
	}
	out := waitOutput(t, p, "self")
	if err := s.Close(); err != nil {
		t.Errorf("Close() error = %v", err)
	}
	waitGone(t, pidsIn(t, out, "child", "self")...)
	if _, err := p.Wait(); err != nil {
		t.Errorf("Wait() after Close() = %v, want nil (stopped by Close, as by Stop)", err)
	}
}
