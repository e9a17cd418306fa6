package exporter

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func hash(t *testing.T, secret string) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(secret), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return string(h)
}

// serve starts a Server on loopback with metrics as its /metrics handler.
func serve(t *testing.T, o Options) *Server {
	t.Helper()
	o.Addr = "127.0.0.1:0"
	if o.Metrics == nil {
		o.Metrics = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "up 1\n") })
	}
	s, err := Listen(o)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve() }()
	t.Cleanup(func() { _ = s.srv.Close() })
	return s
}

func get(t *testing.T, c *http.Client, url string, hdr map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestLoadConfigToolkitFormat: the exporter-toolkit's own keys load; what
// the toolkit would refuse (an unknown key) or fabricctl cannot honour
// (rate_limit, a header the toolkit does not allow, a hash that is not
// bcrypt) is refused with the file's name.
func TestLoadConfigToolkitFormat(t *testing.T) {
	h := hash(t, "pw")
	good := writeFile(t, "web.yml", `
http_server_config:
  http2: false
  headers:
    X-Content-Type-Options: nosniff
basic_auth_users:
  prometheus: `+h+`
`)
	c, err := LoadConfig(good)
	if err != nil {
		t.Fatal(err)
	}
	if !c.HasAuth() || c.HTTP.HTTP2 == nil || *c.HTTP.HTTP2 || c.HTTP.Headers["X-Content-Type-Options"] != "nosniff" {
		t.Errorf("loaded %+v", c)
	}
	if c, err := LoadConfig(writeFile(t, "empty.yml", "")); err != nil || c.HasAuth() || c.TLS != nil {
		t.Errorf("an empty web config: %+v, %v; want no TLS, no auth", c, err)
	}
	for name, body := range map[string]string{
		"unknown key":   "basic_auth_user:\n  a: " + h + "\n",
		"rate limit":    "rate_limit:\n  interval: 1s\n  burst: 1\n",
		"plain pass":    "basic_auth_users:\n  a: secret-password\n",
		"bad header":    "http_server_config:\n  headers:\n    Set-Cookie: x\n",
		"tls no key":    "tls_server_config:\n  cert_file: /nonexistent\n",
		"bad tls ver":   "tls_server_config:\n  cert: x\n  key: y\n  min_version: TLS9\n",
		"bearer plain":  "bearer_token_hashes: [token]\n",
		"sans no certs": "tls_server_config:\n  cert: x\n  key: y\n  client_allowed_sans: [a]\n",
	} {
		p := writeFile(t, "web.yml", body)
		_, err := LoadConfig(p)
		if err == nil {
			t.Errorf("%s: loaded, want an error", name)
			continue
		}
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %q does not name the file", name, err)
		}
		if strings.Contains(err.Error(), "secret-password") {
			t.Errorf("%s: error %q shows the secret", name, err)
		}
	}
}

// TestAuthOnRealListener: with basic_auth_users (and fabricctl's
// bearer_token_hashes), /metrics needs a listed credential; /healthz does
// not (kubelet probes carry none).
func TestAuthOnRealListener(t *testing.T) {
	web, err := LoadConfig(writeFile(t, "web.yml", "basic_auth_users:\n  prom: "+hash(t, "s3cret")+
		"\nbearer_token_hashes:\n  - "+hash(t, "tok-123")+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := serve(t, Options{Web: web})
	c := &http.Client{}
	url := s.URL()
	for _, tc := range []struct {
		name string
		hdr  map[string]string
		user []string
		want int
	}{
		{"none", nil, nil, http.StatusUnauthorized},
		{"wrong password", nil, []string{"prom", "nope"}, http.StatusUnauthorized},
		{"unknown user", nil, []string{"root", "s3cret"}, http.StatusUnauthorized},
		{"right", nil, []string{"prom", "s3cret"}, http.StatusOK},
		{"right again (cached)", nil, []string{"prom", "s3cret"}, http.StatusOK},
		{"bearer", map[string]string{"Authorization": "Bearer tok-123"}, nil, http.StatusOK},
		{"wrong bearer", map[string]string{"Authorization": "Bearer tok-124"}, nil, http.StatusUnauthorized},
	} {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		for k, v := range tc.hdr {
			req.Header.Set(k, v)
		}
		if tc.user != nil {
			req.SetBasicAuth(tc.user[0], tc.user[1])
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
		if tc.want == http.StatusUnauthorized && resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: 401 without WWW-Authenticate", tc.name)
		}
	}
	if code, _ := get(t, c, strings.TrimSuffix(url, "/metrics")+"/healthz", nil); code != http.StatusOK {
		t.Errorf("/healthz without credentials: %d, want 200", code)
	}
}

// certs makes a CA and a server and client certificate it signed.
func certs(t *testing.T) (caPEM, srvCert, srvKey, cliCert, cliKey string) {
	t.Helper()
	mk := func(tmpl *x509.Certificate, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey, string, string) {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		if parent == nil {
			parent, parentKey = tmpl, k
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &k.PublicKey, parentKey)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := x509.ParseCertificate(der)
		kb, _ := x509.MarshalECPrivateKey(k)
		return c, k, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
			string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}))
	}
	now := time.Now()
	ca, caKey, caPEM, _ := mk(&x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}, nil, nil)
	_, _, srvCert, srvKey = mk(&x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "metrics"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}, ca, caKey)
	_, _, cliCert, cliKey = mk(&x509.Certificate{SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: "prometheus"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), DNSNames: []string{"prometheus.monitoring"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}, ca, caKey)
	return
}

// TestTLSOnRealListener: tls_server_config serves HTTPS with the named
// files; plain HTTP gets no metrics; with RequireAndVerifyClientCert and
// client_allowed_sans only a client certificate of the CA with a listed
// SAN is served.
func TestTLSOnRealListener(t *testing.T) {
	caPEM, srvCert, srvKey, cliCert, cliKey := certs(t)
	ca := writeFile(t, "ca.crt", caPEM)
	cf, kf := writeFile(t, "tls.crt", srvCert), writeFile(t, "tls.key", srvKey)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM([]byte(caPEM))
	client := func(certs ...tls.Certificate) *http.Client {
		return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: certs}}}
	}

	web, err := LoadConfig(writeFile(t, "web.yml", "tls_server_config:\n  cert_file: "+cf+"\n  key_file: "+kf+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := serve(t, Options{Web: web})
	if !strings.HasPrefix(s.URL(), "https://") {
		t.Fatalf("URL %s, want https", s.URL())
	}
	if code, body := get(t, client(), s.URL(), nil); code != http.StatusOK || body != "up 1\n" {
		t.Errorf("HTTPS scrape: %d %q", code, body)
	}
	resp, err := http.Get("http://" + s.Addr().String() + "/metrics")
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(b), "up 1") {
			t.Errorf("plain HTTP got the metrics from a TLS listener")
		}
	}

	mtls, err := LoadConfig(writeFile(t, "web.yml", "tls_server_config:\n  cert_file: "+cf+"\n  key_file: "+kf+
		"\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: "+ca+"\n  client_allowed_sans: [prometheus.monitoring]\n"))
	if err != nil {
		t.Fatal(err)
	}
	s = serve(t, Options{Web: mtls})
	if _, err := client().Get(s.URL()); err == nil {
		t.Errorf("mTLS: a client without a certificate was served")
	}
	pair, err := tls.X509KeyPair([]byte(cliCert), []byte(cliKey))
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := get(t, client(pair), s.URL(), nil); code != http.StatusOK {
		t.Errorf("mTLS with the client certificate: %d", code)
	}
	// A certificate of the CA whose SAN is not listed.
	other, err := LoadConfig(writeFile(t, "web.yml", "tls_server_config:\n  cert_file: "+cf+"\n  key_file: "+kf+
		"\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: "+ca+"\n  client_allowed_sans: [grafana]\n"))
	if err != nil {
		t.Fatal(err)
	}
	s = serve(t, Options{Web: other})
	if _, err := client(pair).Get(s.URL()); err == nil {
		t.Errorf("client_allowed_sans [grafana]: the prometheus.monitoring client was served")
	}
}

// TestScrapeCap: at most MaxScrapes /metrics requests run at once; one
// more is answered 503 at once, and /healthz still answers.
func TestScrapeCap(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		entered <- struct{}{}
		<-release
		_, _ = io.WriteString(w, "up 1\n")
	})
	s := serve(t, Options{Metrics: h, MaxScrapes: 2})
	done := make(chan int, 2)
	for range 2 {
		go func() {
			resp, err := http.Get(s.URL())
			if err != nil {
				done <- -1
				return
			}
			resp.Body.Close()
			done <- resp.StatusCode
		}()
		<-entered
	}
	if code, _ := get(t, http.DefaultClient, s.URL(), nil); code != http.StatusServiceUnavailable {
		t.Errorf("third scrape while two run: %d, want 503", code)
	}
	if code, _ := get(t, http.DefaultClient, strings.TrimSuffix(s.URL(), "/metrics")+"/healthz", nil); code != http.StatusOK {
		t.Errorf("/healthz while scrapes are capped: %d", code)
	}
	close(release)
	for range 2 {
		if c := <-done; c != http.StatusOK {
			t.Errorf("capped scrape ended %d", c)
		}
	}
	go func() { <-entered }()
	if code, _ := get(t, http.DefaultClient, s.URL(), nil); code != http.StatusOK {
		t.Errorf("scrape after the others ended: %d", code)
	}
}

// TestStalledClientIsCutOff: a client that asks for /metrics and stops
// reading holds its scrape slot only until WriteTimeout; then another
// scrape is served. (The one slot and a short WriteTimeout make the wait
// short; the test waits for the event, however long the machine takes.)
func TestStalledClientIsCutOff(t *testing.T) {
	big := strings.Repeat("fabricctl_x{a=\"b\"} 1\n", 1<<16) // 1.4 MB
	var n atomic.Int32
	stalled := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if n.Add(1) > 1 {
			_, _ = io.WriteString(w, "up 1\n")
			return
		}
		close(stalled)
		for {
			if _, err := io.WriteString(w, big); err != nil {
				return
			}
		}
	})
	s := serve(t, Options{Metrics: h, MaxScrapes: 1, WriteTimeout: 500 * time.Millisecond})
	conn, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.(*net.TCPConn).SetReadBuffer(4096)
	if _, err := io.WriteString(conn, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	<-stalled
	giveUp := time.Now().Add(2 * time.Minute)
	for {
		code, body := get(t, http.DefaultClient, s.URL(), nil)
		if code == http.StatusOK {
			if body != "up 1\n" {
				t.Errorf("second scrape: %q", body)
			}
			break
		}
		if code != http.StatusServiceUnavailable || time.Now().After(giveUp) {
			t.Fatalf("second scrape while a client stalls: %d (the stalled client was never cut off)", code)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
