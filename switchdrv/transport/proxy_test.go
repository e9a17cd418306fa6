package transport_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

// connectProxy is an HTTP CONNECT proxy on loopback that records each
// CONNECT target and tunnels every one of them to to.
type connectProxy struct {
	l  net.Listener
	mu sync.Mutex
	// targets are the CONNECT request targets seen.
	targets []string
}

func startProxy(t *testing.T, to string) *connectProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &connectProxy{l: l}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				req, err := http.ReadRequest(br)
				if err != nil || req.Method != http.MethodConnect {
					return
				}
				p.mu.Lock()
				p.targets = append(p.targets, req.Host)
				p.mu.Unlock()
				up, err := net.Dial("tcp", to)
				if err != nil {
					_, _ = io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
					return
				}
				defer up.Close()
				_, _ = io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
				go func() { _, _ = io.Copy(up, br); up.Close() }()
				_, _ = io.Copy(c, up)
			}()
		}
	}()
	return p
}

func (p *connectProxy) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.targets...)
}

// TestProxyOnlyWhenTheIntentNamesOne: with HTTPS_PROXY, HTTP_PROXY and
// ALL_PROXY set to a proxy, a switch without proxy in the intent is dialled
// directly (gRPC follows those variables by default: the proxy saw
// "CONNECT leaf1...:57400"); a switch whose intent names the proxy goes
// through it and works. The environment part runs in a child process:
// net/http reads the proxy variables once per process.
func TestProxyOnlyWhenTheIntentNamesOne(t *testing.T) {
	tw := startTwin(t, twin.Options{Name: "leaf1"})
	proxy := startProxy(t, tw.Addr())
	_, port, _ := net.SplitHostPort(tw.Addr())
	// A name only the proxy resolves (to the twin): dialled directly it
	// fails, through the proxy it works.
	addr := "leaf1.fabricctl.invalid:" + port

	if os.Getenv("FABRICCTL_PROXY_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestProxyOnlyWhenTheIntentNamesOne$", "-test.v")
		cmd.Env = append(os.Environ(), "FABRICCTL_PROXY_CHILD=1", "HTTPS_PROXY=http://"+proxy.l.Addr().String(),
			"HTTP_PROXY=http://"+proxy.l.Addr().String(), "ALL_PROXY=http://"+proxy.l.Addr().String(), "NO_PROXY=", "no_proxy=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "--- PASS") {
			t.Fatalf("child did not pass:\n%s", out)
		}
		if got := proxy.seen(); len(got) != 0 {
			t.Errorf("the proxy of HTTPS_PROXY received %q: gRPC followed the environment", got)
		}
	} else {
		// In the child: the environment names the (parent's) proxy.
		sw := intent.Switch{Name: "leaf1", Address: addr, TLS: intent.TLS{Insecure: true}}
		c, err := transport.Dial(t.Context(), sw, transport.Options{Attempts: 1})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Capabilities(t.Context())
		c.Close()
		if err == nil {
			t.Errorf("%s was reached: through the environment's proxy?", addr)
		}
		return
	}

	sw := intent.Switch{Name: "leaf1", Address: addr, TLS: intent.TLS{Insecure: true}, Proxy: "http://" + proxy.l.Addr().String()}
	c, err := transport.Dial(t.Context(), sw, transport.Options{Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Capabilities(t.Context()); err != nil {
		t.Fatalf("through the intent's proxy: %v", err)
	}
	if got := proxy.seen(); len(got) == 0 || got[0] != addr {
		t.Errorf("the intent's proxy saw CONNECT %q, want %s", got, addr)
	}
}

// TestPlaintextCredentialsRefused: a username and password are not sent
// over plaintext gRPC unless asked for (--plaintext-credentials); without
// credentials plaintext works as before.
func TestPlaintextCredentialsRefused(t *testing.T) {
	tw := startTwin(t, twin.Options{Username: "admin", Password: "pw"})
	env := func(k string) string { return map[string]string{"U": "admin", "P": "pw"}[k] }
	sw := intent.Switch{Name: "leaf1", Address: tw.Addr(), TLS: intent.TLS{Insecure: true},
		Credentials: intent.Credentials{UsernameEnv: "U", PasswordEnv: "P"}}
	_, err := transport.Dial(t.Context(), sw, transport.Options{Getenv: env})
	if !errors.Is(err, transport.ErrPlaintextCredentials) {
		t.Fatalf("Dial with credentials over plaintext: %v, want ErrPlaintextCredentials", err)
	}
	_, err = transport.Dial(t.Context(), intent.Switch{Name: "leaf1", Address: tw.Addr(), Credentials: sw.Credentials},
		transport.Options{Getenv: env, Insecure: true})
	if !errors.Is(err, transport.ErrPlaintextCredentials) {
		t.Fatalf("Dial with credentials and Options.Insecure: %v, want ErrPlaintextCredentials", err)
	}
	c, err := transport.Dial(t.Context(), sw, transport.Options{Getenv: env, PlaintextCredentials: true, Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Capabilities(t.Context()); err != nil {
		t.Errorf("with PlaintextCredentials: %v", err)
	}
}
