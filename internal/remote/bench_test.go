package remote

import (
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/remote/sshtest"
)

// BenchmarkLocalRun measures one short command run locally.
func BenchmarkLocalRun(b *testing.B) {
	l := Local{}
	for b.Loop() {
		if _, err := l.Run(b.Context(), []string{"true"}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSSHRun measures one short command over an open connection to the
// sshd test double (session setup, exec, exit status).
func BenchmarkSSHRun(b *testing.B) {
	b.Setenv("SSH_AUTH_SOCK", "")
	signer, keyFile := sshtest.NewKeyFile(b)
	srv := sshtest.Start(b, sshtest.Options{AuthorizedKeys: []ssh.PublicKey{signer.PublicKey()}})
	h := intent.Host{Name: "bench", Address: srv.Addr, SSH: intent.SSH{User: "root", KeyFile: keyFile, KnownHosts: sshtest.WriteKnownHosts(b, srv.KnownHostsLine())}}
	s, err := NewSSH(h, SSHOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for b.Loop() {
		if _, err := s.Run(b.Context(), []string{"true"}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRealSSHDRun measures one short command over an open connection to
// OpenSSH's sshd on loopback.
func BenchmarkRealSSHDRun(b *testing.B) {
	d := startSSHD(b)
	s := newTestSSH(b, d.host(b), SSHOptions{})
	for b.Loop() {
		if _, err := s.Run(b.Context(), []string{"true"}, nil); err != nil {
			b.Fatal(err)
		}
	}
}
