package remote

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/remote/sshtest"
)

const sshdPath = "/usr/sbin/sshd"

// realSSHD is an OpenSSH sshd started by the test on 127.0.0.1 with its own
// config, host keys and authorized_keys.
type realSSHD struct {
	addr       string
	ed25519    ssh.PublicKey
	ecdsa      ssh.PublicKey
	keyFile    string
	knownHosts string // holds the ed25519 host key
	log        *syncBuffer
}

// startSSHD starts /usr/sbin/sshd -D -e on a free loopback port, or skips.
func startSSHD(t testing.TB) *realSSHD {
	t.Helper()
	if _, err := os.Stat(sshdPath); err != nil {
		t.Skipf("real sshd test: %s not found (install openssh-server): %v", sshdPath, err)
	}
	if os.Geteuid() != 0 {
		t.Skip("real sshd test: needs root (sshd's privilege separation runs as root)")
	}
	// sshd refuses to start without its privilege separation directory,
	// which systemd normally creates (RuntimeDirectory=sshd).
	if _, err := os.Stat("/run/sshd"); errors.Is(err, os.ErrNotExist) {
		if err := os.Mkdir("/run/sshd", 0o755); err != nil {
			t.Skipf("real sshd test: cannot create /run/sshd: %v", err)
		}
		t.Cleanup(func() { os.Remove("/run/sshd") })
	}
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSH_AUTH_SOCK", "")
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	_, edPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecPriv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var hostKeyFiles []string
	var hostPubs []ssh.PublicKey
	for i, k := range []any{edPriv, ecPriv} {
		block, err := ssh.MarshalPrivateKey(k, "")
		if err != nil {
			t.Fatal(err)
		}
		hostKeyFiles = append(hostKeyFiles, write(fmt.Sprintf("host_key_%d", i), pem.EncodeToMemory(block)))
		signer, err := ssh.NewSignerFromKey(k)
		if err != nil {
			t.Fatal(err)
		}
		hostPubs = append(hostPubs, signer.PublicKey())
	}
	client, keyFile := sshtest.NewKeyFile(t)
	ak := write("authorized_keys", ssh.MarshalAuthorizedKey(client.PublicKey()))

	s := &realSSHD{ed25519: hostPubs[0], ecdsa: hostPubs[1], keyFile: keyFile, log: &syncBuffer{}}
	for attempt := 0; ; attempt++ {
		port := freePort(t)
		s.addr = net.JoinHostPort("127.0.0.1", fmt.Sprint(port))
		cfg := write("sshd_config", []byte(strings.Join([]string{
			"Port " + fmt.Sprint(port),
			"ListenAddress 127.0.0.1",
			"HostKey " + hostKeyFiles[0],
			"HostKey " + hostKeyFiles[1],
			"AuthorizedKeysFile " + ak,
			"PidFile none",
			"StrictModes no", // the temp dir is under world-writable /tmp
			"UsePAM no",
			"PasswordAuthentication no",
			"KbdInteractiveAuthentication no",
			"PermitRootLogin prohibit-password",
			"AllowUsers " + u.Username,
			"UseDNS no",
			"PrintMotd no",
			"LogLevel VERBOSE",
			"",
		}, "\n")))
		cmd := exec.Command(sshdPath, "-D", "-e", "-f", cfg)
		cmd.Stdout, cmd.Stderr = s.log, s.log
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatalf("start sshd: %v", err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		stop := func() {
			// sshd and its per-connection children share its process group.
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(5 * time.Second):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-exited
			}
		}
		if waitListening(s.addr, exited) {
			t.Cleanup(stop)
			break
		}
		stop()
		if attempt == 2 {
			t.Fatalf("sshd did not start listening on %s:\n%s", s.addr, s.log.Bytes())
		}
	}
	s.knownHosts = sshtest.WriteKnownHosts(t, knownhosts.Line([]string{knownhosts.Normalize(s.addr)}, s.ed25519))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("sshd log:\n%s", s.log.Bytes())
		}
	})
	return s
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// waitListening waits until addr accepts connections or the process exits.
func waitListening(addr string, exited <-chan struct{}) bool {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

func (s *realSSHD) host(t testing.TB) intent.Host {
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	return intent.Host{
		Name:    "real-sshd",
		Address: s.addr,
		SSH:     intent.SSH{User: u.Username, KeyFile: s.keyFile, KnownHosts: s.knownHosts},
	}
}

// TestRealSSHD proves the SSH runner against OpenSSH's sshd: run, exit codes,
// stdin, quoting through the login shell, Stop killing the process group, and
// host key verification.
func TestRealSSHD(t *testing.T) {
	d := startSSHD(t)
	s := newTestSSH(t, d.host(t), SSHOptions{})

	t.Run("run", func(t *testing.T) {
		res, err := s.Run(t.Context(), []string{"sh", "-c", "echo hello; echo warn >&2"}, nil)
		if err != nil {
			t.Fatalf("Run() error = %v", err)
		}
		want := Result{Stdout: []byte("hello\n"), Stderr: []byte("warn\n")}
		if diff := cmp.Diff(want, res, cmp.Comparer(bytesEqual)); diff != "" {
			t.Errorf("Run() mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("exit code", func(t *testing.T) {
		_, err := s.Run(t.Context(), []string{"sh", "-c", "exit 7"}, nil)
		var ee *ExitError
		if !errors.As(err, &ee) || ee.ExitCode != 7 || ee.Host != "real-sshd" {
			t.Errorf("Run(exit 7) error = %v, want *ExitError with exit code 7 for real-sshd", err)
		}
	})
	t.Run("stdin", func(t *testing.T) {
		res, err := s.Run(t.Context(), []string{"cat"}, strings.NewReader("piped\n"))
		if err != nil || string(res.Stdout) != "piped\n" {
			t.Errorf("Run(cat) = %q, %v; want \"piped\\n\", nil", res.Stdout, err)
		}
	})
	t.Run("quoting", func(t *testing.T) {
		res, err := s.Run(t.Context(), append([]string{"printf", `%s\0`}, nastyArgs...), nil)
		if err != nil {
			t.Fatalf("Run(printf) error = %v", err)
		}
		if diff := cmp.Diff(nastyArgs, splitNUL(res.Stdout)); diff != "" {
			t.Errorf("arguments through sshd and the login shell differ (-want +got):\n%s", diff)
		}
	})
	t.Run("stop kills the process group", func(t *testing.T) {
		p, err := s.Start(t.Context(), []string{"sh", "-c", "sleep 30 & echo child $!; echo self $$; echo ready; wait"})
		if err != nil {
			t.Fatalf("Start() error = %v", err)
		}
		out := waitOutput(t, p, "ready")
		pids := pidsIn(t, out, "child", "self")
		if _, err := p.Stop(); err != nil {
			t.Errorf("Stop() error = %v", err)
		}
		waitGone(t, pids...)
	})
	t.Run("ecdsa key in known_hosts", func(t *testing.T) {
		h := d.host(t)
		h.SSH.KnownHosts = sshtest.WriteKnownHosts(t, knownhosts.Line([]string{knownhosts.Normalize(d.addr)}, d.ecdsa))
		s := newTestSSH(t, h, SSHOptions{})
		if _, err := s.Run(t.Context(), []string{"true"}, nil); err != nil {
			t.Errorf("Run() error = %v, want nil (sshd also has this ecdsa key)", err)
		}
	})
	t.Run("host key mismatch", func(t *testing.T) {
		h := d.host(t)
		h.SSH.KnownHosts = sshtest.WriteKnownHosts(t, knownhosts.Line([]string{knownhosts.Normalize(d.addr)}, sshtest.NewSigner(t).PublicKey()))
		s := newTestSSH(t, h, SSHOptions{})
		_, err := s.Run(t.Context(), []string{"true"}, nil)
		if !errors.Is(err, ErrHostKeyMismatch) {
			t.Fatalf("Run() error = %v, want ErrHostKeyMismatch", err)
		}
		var hk *HostKeyError
		if errors.As(err, &hk) && hk.OfferedFingerprint != ssh.FingerprintSHA256(d.ed25519) {
			t.Errorf("HostKeyError offered %s, want sshd's ed25519 key %s", hk.OfferedFingerprint, ssh.FingerprintSHA256(d.ed25519))
		}
		t.Logf("error: %v", err)
	})
}
