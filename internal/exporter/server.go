package exporter

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// DefaultListen is where watch serves /metrics unless told otherwise: the
// loopback address only. A pod, or a host that is scraped from elsewhere,
// names its own address (the Kubernetes examples pass the pod's IP).
const DefaultListen = "127.0.0.1:9464"

// The server's limits. WriteTimeout bounds how long one response may take
// to write (a client that stops reading is cut off then, and its scrape
// slot freed); 2,000 switches' ~190 MiB take under a second on loopback,
// and Prometheus gives up after its scrape_timeout (10 s by default).
const (
	ReadHeaderTimeout = 10 * time.Second
	ReadTimeout       = 30 * time.Second
	WriteTimeout      = 2 * time.Minute
	IdleTimeout       = 2 * time.Minute
	MaxHeaderBytes    = 16 << 10
	// MaxScrapes is how many /metrics requests are served at once; more
	// get 503 at once (as client_golang's promhttp MaxRequestsInFlight
	// does).
	MaxScrapes = 4
)

// Options configure a Server.
type Options struct {
	// Addr is the listen address (host:port).
	Addr string
	// Web is the web-config (nil: plain HTTP, no authentication).
	Web *Config
	// Metrics serves /metrics (capped at MaxScrapes at once, authenticated
	// when Web has users or tokens).
	Metrics http.Handler
	// MaxScrapes overrides MaxScrapes when > 0.
	MaxScrapes int
	// WriteTimeout overrides WriteTimeout when > 0 (tests).
	WriteTimeout time.Duration
}

// Server is a listening metrics server.
type Server struct {
	srv    *http.Server
	l      net.Listener
	scheme string
}

// Listen opens the listener and prepares the server; Serve serves it.
// /healthz answers 200 "ok" without authentication (kubelet probes carry
// no credentials; it says nothing but that the process runs); every other
// path needs the web-config's credentials when it names any.
func Listen(o Options) (*Server, error) {
	mux := http.NewServeMux()
	mux.Handle("/metrics", o.Web.authenticate(limit(o.Metrics, cmpOr(o.MaxScrapes, MaxScrapes))))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	var h http.Handler = mux
	if o.Web != nil && len(o.Web.HTTP.Headers) > 0 {
		h = withHeaders(mux, o.Web.HTTP.Headers)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      cmpOr(o.WriteTimeout, WriteTimeout),
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
	}
	scheme := "http"
	var tc *tls.Config
	if o.Web != nil && o.Web.TLS != nil {
		var err error
		if tc, err = o.Web.TLS.build(); err != nil {
			return nil, fmt.Errorf("web config %s: tls_server_config: %w", o.Web.file, err)
		}
		if h2 := o.Web.HTTP.HTTP2; h2 != nil && !*h2 {
			srv.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
		} else {
			tc.NextProtos = []string{"h2", "http/1.1"}
		}
		srv.TLSConfig = tc
		scheme = "https"
	}
	l, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, err
	}
	if tc != nil {
		l = tls.NewListener(l, tc)
	}
	return &Server{srv: srv, l: l, scheme: scheme}, nil
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// URL is the server's /metrics URL.
func (s *Server) URL() string { return s.scheme + "://" + s.l.Addr().String() + "/metrics" }

// Addr is the listener's address.
func (s *Server) Addr() net.Addr { return s.l.Addr() }

// Serve serves until Shutdown; it returns http.ErrServerClosed then.
func (s *Server) Serve() error { return s.srv.Serve(s.l) }

// Shutdown stops the server, waiting for requests in flight until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }

// limit serves at most n requests at once and answers 503 to the others:
// a scraper that stalls holds one slot (until WriteTimeout), never all
// monitoring.
func limit(h http.Handler, n int) http.Handler {
	slots := make(chan struct{}, n)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
			h.ServeHTTP(w, r)
		default:
			http.Error(w, fmt.Sprintf("%d scrapes are in flight already; try again", n), http.StatusServiceUnavailable)
		}
	})
}

func withHeaders(h http.Handler, hdr map[string]string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range hdr {
			if v != "" {
				w.Header().Set(k, v)
			}
		}
		h.ServeHTTP(w, r)
	})
}

// authenticate requires the web-config's basic-auth user or bearer token
// (when it names any). A verified credential is cached by its SHA-256 so
// that bcrypt runs once per credential, not per scrape (as the toolkit
// does); an unknown user costs a bcrypt comparison too, so that timing does
// not tell which users exist.
func (c *Config) authenticate(h http.Handler) http.Handler {
	if !c.HasAuth() {
		return h
	}
	a := &authCache{ok: map[[32]byte]bool{}}
	challenge := `Basic realm="fabricctl"`
	if len(c.BasicAuthUsers) == 0 {
		challenge = `Bearer realm="fabricctl"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c.authorized(r, a) {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", challenge)
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
	})
}

// A bcrypt hash of no password anyone sends (cost 10, as htpasswd -B), to
// compare an unknown user's password with; made on first use (it costs
// ~70 ms, which no command that serves no auth should pay).
var dummyHash = sync.OnceValue(func() []byte {
	h, err := bcrypt.GenerateFromPassword([]byte("fabricctl unknown user"), 10)
	if err != nil {
		panic(err)
	}
	return h
})

type authCache struct {
	mu sync.Mutex
	ok map[[32]byte]bool
}

const maxAuthCache = 1024

func (a *authCache) check(key [32]byte, verify func() bool) bool {
	a.mu.Lock()
	hit := a.ok[key]
	a.mu.Unlock()
	if hit {
		return true
	}
	if !verify() {
		return false
	}
	a.mu.Lock()
	if len(a.ok) >= maxAuthCache {
		clear(a.ok)
	}
	a.ok[key] = true
	a.mu.Unlock()
	return true
}

func (c *Config) authorized(r *http.Request, a *authCache) bool {
	if user, pass, ok := r.BasicAuth(); ok && len(c.BasicAuthUsers) > 0 {
		hash, known := c.BasicAuthUsers[user]
		key := sha256.Sum256([]byte("basic\x00" + user + "\x00" + pass + "\x00" + hash))
		return a.check(key, func() bool {
			if !known {
				_ = bcrypt.CompareHashAndPassword(dummyHash(), []byte(pass))
				return false
			}
			return bcrypt.CompareHashAndPassword([]byte(hash), []byte(pass)) == nil
		})
	}
	const bearer = "Bearer "
	if v := r.Header.Get("Authorization"); len(c.BearerTokenHashes) > 0 && len(v) > len(bearer) &&
		subtle.ConstantTimeCompare([]byte(v[:len(bearer)]), []byte(bearer)) == 1 {
		tok := v[len(bearer):]
		key := sha256.Sum256([]byte("bearer\x00" + tok))
		return a.check(key, func() bool {
			for _, h := range c.BearerTokenHashes {
				if bcrypt.CompareHashAndPassword([]byte(h), []byte(tok)) == nil {
					return true
				}
			}
			return false
		})
	}
	return false
}

// keyPair is the server certificate, read again from its files when they
// changed (a rotated Kubernetes Secret reaches the pod as new files).
type keyPair struct {
	certFile, keyFile string
	cert, key         []byte

	mu    sync.Mutex
	stamp string
	pair  *tls.Certificate
}

func (k *keyPair) get() (*tls.Certificate, error) {
	stamp := ""
	for _, f := range []string{k.certFile, k.keyFile} {
		if f == "" {
			continue
		}
		fi, err := os.Stat(f)
		if err != nil {
			return nil, err
		}
		stamp += fmt.Sprintf("%s|%d|%d;", f, fi.Size(), fi.ModTime().UnixNano())
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.pair != nil && stamp == k.stamp {
		return k.pair, nil
	}
	cert, key := k.cert, k.key
	var err error
	if k.certFile != "" {
		if cert, err = os.ReadFile(k.certFile); err != nil {
			return nil, err
		}
	}
	if k.keyFile != "" {
		if key, err = os.ReadFile(k.keyFile); err != nil {
			return nil, err
		}
	}
	pair, err := tls.X509KeyPair(cert, key)
	if err != nil {
		// X509KeyPair's errors describe the PEM blocks, not their bytes.
		return nil, errors.New("server certificate and key: " + err.Error())
	}
	k.pair, k.stamp = &pair, stamp
	return k.pair, nil
}
