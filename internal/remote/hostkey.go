package remote

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"slices"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Host key verification failures. A *HostKeyError wraps exactly one of them;
// check with errors.Is.
var (
	// ErrHostKeyMismatch: known_hosts has keys for the host and the server
	// offered another one (reinstalled host, or a man in the middle).
	ErrHostKeyMismatch = errors.New("ssh host key mismatch")
	// ErrHostKeyUnknown: known_hosts (or the file itself) has no key for the host.
	ErrHostKeyUnknown = errors.New("ssh host key unknown")
	// ErrHostKeyRevoked: the offered key is marked @revoked in known_hosts.
	ErrHostKeyRevoked = errors.New("ssh host key revoked")
)

// KnownKey is a known_hosts line, described without key material.
type KnownKey struct {
	File        string
	Line        int
	Type        string // ssh-ed25519, ecdsa-sha2-nistp256, ssh-rsa ...
	Fingerprint string // SHA256:... as ssh-keygen -l prints it
}

func (k KnownKey) String() string {
	return fmt.Sprintf("%s:%d has %s %s", k.File, k.Line, k.Type, k.Fingerprint)
}

// HostKeyError is a failed host key check. It names the key the server
// offered and the known_hosts lines that were checked, by type and SHA256
// fingerprint only.
type HostKeyError struct {
	Host       string // inventory name
	Addr       string // as dialled, host:port
	KnownHosts string // the file checked
	// OfferedType and OfferedFingerprint describe the server's key ("" when
	// the check failed before the server offered one).
	OfferedType        string
	OfferedFingerprint string
	// Known are the lines for this host (mismatch) or the @revoked line.
	Known []KnownKey
	// Err is ErrHostKeyMismatch, ErrHostKeyUnknown or ErrHostKeyRevoked.
	Err error
	// Cause is the underlying error, if any (known_hosts unreadable).
	Cause error
}

func (e *HostKeyError) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Err, e.Cause}
	}
	return []error{e.Err}
}

func (e *HostKeyError) Error() string {
	entry := knownhosts.Normalize(e.Addr)
	offered := e.OfferedType + " " + e.OfferedFingerprint
	var b strings.Builder
	fmt.Fprintf(&b, "host %s: %v for %s: ", e.Host, e.Err, entry)
	switch {
	case errors.Is(e.Err, ErrHostKeyMismatch):
		var known []string
		for _, k := range e.Known {
			known = append(known, k.String())
		}
		fmt.Fprintf(&b, "the server offered %s but %s; refusing to connect. If the host was reinstalled, "+
			"check the new key out of band and remove the old one with: ssh-keygen -R '%s' -f %s",
			offered, strings.Join(known, ", "), entry, e.KnownHosts)
	case errors.Is(e.Err, ErrHostKeyRevoked):
		fmt.Fprintf(&b, "the server offered %s, which is marked @revoked (%s); refusing to connect", offered, e.Known[0])
	case e.Cause != nil:
		fmt.Fprintf(&b, "cannot read known_hosts: %v; add the host key (check its fingerprint out of band), "+
			"or set ssh.knownHosts in the intent", e.Cause)
	default:
		h, p, _ := net.SplitHostPort(e.Addr)
		fmt.Fprintf(&b, "not in %s (the server offered %s); check the fingerprint out of band and add it with: "+
			"ssh-keyscan -p %s %s >> %s", e.KnownHosts, offered, p, h, e.KnownHosts)
	}
	return b.String()
}

// hostKeyCheck returns the host key callback for s and the host key
// algorithms to ask for. Like OpenSSH, it asks first for the algorithms of the
// keys known_hosts holds for this host: otherwise a server with both an
// ed25519 and an ecdsa key, known by its ecdsa key, would offer ed25519 and
// fail as a mismatch.
func (s *SSH) hostKeyCheck() (ssh.HostKeyCallback, []string, error) {
	if s.insecure {
		s.log.Warn("ssh host key verification disabled by the intent", "target", s.name)
		return ssh.InsecureIgnoreHostKey(), nil, nil
	}
	cb, err := knownhosts.New(s.knownHosts)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, &HostKeyError{Host: s.name, Addr: s.addr, KnownHosts: s.knownHosts, Err: ErrHostKeyUnknown, Cause: err}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("host %s: read known_hosts %s: %w", s.name, s.knownHosts, err)
	}
	known := s.knownKeys(cb)
	var algos []string
	for _, k := range known {
		for _, a := range algorithmsFor(k.Type) {
			if !slices.Contains(algos, a) {
				algos = append(algos, a)
			}
		}
	}
	check := func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		err := cb(hostname, remote, key)
		if err == nil {
			return nil
		}
		e := &HostKeyError{
			Host: s.name, Addr: s.addr, KnownHosts: s.knownHosts,
			OfferedType: key.Type(), OfferedFingerprint: ssh.FingerprintSHA256(key),
		}
		var ke *knownhosts.KeyError
		var re *knownhosts.RevokedError
		switch {
		case errors.As(err, &re):
			e.Err, e.Known = ErrHostKeyRevoked, []KnownKey{knownKey(re.Revoked)}
		case errors.As(err, &ke) && len(ke.Want) > 0:
			e.Err = ErrHostKeyMismatch
			for _, w := range ke.Want {
				e.Known = append(e.Known, knownKey(w))
			}
		case errors.As(err, &ke):
			e.Err = ErrHostKeyUnknown
		default:
			return fmt.Errorf("host %s: check host key: %w", s.name, err)
		}
		return e
	}
	return check, algos, nil
}

// knownKeys lists the known_hosts keys for s.addr by checking a key no line
// can hold: the callback's KeyError then lists every key it has for the host.
func (s *SSH) knownKeys(cb ssh.HostKeyCallback) []KnownKey {
	probe, err := ssh.NewPublicKey(ed25519.PublicKey(make([]byte, ed25519.PublicKeySize)))
	if err != nil {
		return nil
	}
	var ke *knownhosts.KeyError
	if err := cb(s.addr, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, probe); !errors.As(err, &ke) {
		return nil
	}
	var out []KnownKey
	for _, w := range ke.Want {
		out = append(out, knownKey(w))
	}
	return out
}

func knownKey(k knownhosts.KnownKey) KnownKey {
	return KnownKey{File: k.Filename, Line: k.Line, Type: k.Key.Type(), Fingerprint: ssh.FingerprintSHA256(k.Key)}
}

// algorithmsFor maps a key type to the host key algorithms that verify it.
func algorithmsFor(keyType string) []string {
	if keyType == ssh.KeyAlgoRSA {
		return []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
	}
	return []string{keyType}
}
