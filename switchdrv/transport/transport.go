package transport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/openconfig/ygot/ygot"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/experimental"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/fabricctl/fabricctl/intent"
)

// Defaults of Options.
const (
	DefaultTimeout  = 10 * time.Second
	DefaultAttempts = 3
	DefaultBackoff  = 100 * time.Millisecond
)

// ErrOutcomeUnknown marks a Set that failed in a way that leaves its effect
// on the target unknown (connection lost, deadline, cancellation): the caller
// must read the target back before deciding what happened.
var ErrOutcomeUnknown = errors.New("outcome unknown: read the target back")

// Options tune a Client. The zero value is usable.
type Options struct {
	// Timeout bounds each RPC attempt (DefaultTimeout when 0).
	Timeout time.Duration
	// SetTimeout bounds a Set, the deadline it carries to the target
	// (Timeout when 0 or shorter): some targets take minutes to apply one
	// (SONiC's config updater) and do not stop when the deadline passes.
	SetTimeout time.Duration
	// Attempts is how often a read RPC (Capabilities, Get, Subscribe) is tried
	// when the target is transiently unavailable (DefaultAttempts when 0).
	// Set is never retried.
	Attempts int
	// Backoff is the first wait between attempts; it doubles each time
	// (DefaultBackoff when 0).
	Backoff time.Duration
	// Insecure forces plaintext gRPC for every switch (the --insecure flag),
	// as if each had tls.insecure set in the intent.
	Insecure bool
	// PlaintextCredentials lets a username and password go over plaintext
	// gRPC (the --plaintext-credentials flag); without it Dial refuses to.
	PlaintextCredentials bool
	// Log receives debug records of each RPC; nil discards them. Credentials
	// are never logged.
	Log *slog.Logger
	// Getenv and ReadFile read credentials; nil means os.Getenv / os.ReadFile.
	Getenv   func(string) string
	ReadFile func(string) ([]byte, error)
	// DialOptions are appended to the gRPC dial options (tests, bufconn).
	DialOptions []grpc.DialOption
}

// Error is a failed RPC on one switch. It never contains credentials.
type Error struct {
	Switch string
	Op     string // capabilities, get, set, subscribe, dial
	Path   string // the path(s) involved, "" when none
	Err    error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("switch ")
	b.WriteString(e.Switch)
	b.WriteString(": ")
	b.WriteString(e.Op)
	if e.Path != "" {
		b.WriteString(" ")
		b.WriteString(e.Path)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Code returns the gRPC status code of err (codes.Unknown for non-status
// errors, codes.OK for nil), looking through wrapping.
func Code(err error) codes.Code {
	if err == nil {
		return codes.OK
	}
	var se interface{ GRPCStatus() *status.Status }
	if errors.As(err, &se) {
		return se.GRPCStatus().Code()
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return codes.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		return codes.Canceled
	}
	return codes.Unknown
}

// ErrPlaintextCredentials is returned by Dial when a switch reached without
// TLS has credentials and Options.PlaintextCredentials is not set.
var ErrPlaintextCredentials = errors.New("refusing to send the username and password over plaintext gRPC (tls.insecure or --insecure): use TLS, or pass --plaintext-credentials for a lab")

// Client is a gNMI connection to one switch. It is safe for concurrent use.
type Client struct {
	name string
	addr string
	conn *grpc.ClientConn
	gnmi gnmipb.GNMIClient
	opts Options
	log  *slog.Logger

	mu  sync.Mutex
	enc gnmipb.Encoding
}

// secret is a credential value that refuses to be printed.
type secret string

func (secret) String() string                 { return "[redacted]" }
func (secret) GoString() string               { return "[redacted]" }
func (secret) LogValue() slog.Value           { return slog.StringValue("[redacted]") }
func (s secret) MarshalText() ([]byte, error) { return []byte("[redacted]"), nil }

// perRPC sends username and password as gRPC metadata, the way gNMI targets
// (SR Linux, SONiC, EOS, gnmic) expect them.
type perRPC struct {
	user, pass secret
	secure     bool
}

func (p perRPC) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"username": string(p.user), "password": string(p.pass)}, nil
}

func (p perRPC) RequireTransportSecurity() bool { return p.secure }

// Dial prepares a connection to sw. It does not wait for the connection: the
// first RPC connects (and reports TLS or reachability errors).
func Dial(ctx context.Context, sw intent.Switch, opts Options) (*Client, error) {
	if err := ctx.Err(); err != nil {
		return nil, &Error{Switch: sw.Name, Op: "dial", Err: err}
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Attempts <= 0 {
		opts.Attempts = DefaultAttempts
	}
	if opts.Backoff <= 0 {
		opts.Backoff = DefaultBackoff
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.ReadFile == nil {
		opts.ReadFile = os.ReadFile
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("target", sw.Name)
	if sw.Address == "" {
		return nil, &Error{Switch: sw.Name, Op: "dial", Err: errors.New("no gNMI address")}
	}
	plaintext := sw.TLS.Insecure || opts.Insecure
	var tc credentials.TransportCredentials
	if plaintext {
		tc = insecure.NewCredentials()
	} else {
		cfg, err := tlsConfig(sw, opts.ReadFile)
		if err != nil {
			return nil, &Error{Switch: sw.Name, Op: "dial", Err: err}
		}
		tc = credentials.NewTLS(cfg)
		if len(cfg.Certificates) == 0 {
			tc = clientCertHint{tc}
		}
	}
	// A running configuration read over origin cli can exceed gRPC's default
	// 4 MiB receive limit; 64 MiB matches the SubscribeOnce bound.
	dopts := []grpc.DialOption{grpc.WithTransportCredentials(tc),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxReply), grpc.ForceCodecV2(messageCodec{pool: messageBuffers})),
		experimental.WithBufferPool(messageBuffers)}
	user, pass, err := readCredentials(sw.Credentials, opts.Getenv, opts.ReadFile)
	if err != nil {
		return nil, &Error{Switch: sw.Name, Op: "dial", Err: err}
	}
	if user != "" || pass != "" {
		if plaintext && !opts.PlaintextCredentials {
			return nil, &Error{Switch: sw.Name, Op: "dial", Err: ErrPlaintextCredentials}
		}
		if plaintext {
			log.Warn("sending credentials over plaintext gRPC (--plaintext-credentials)", "address", sw.Address)
		}
		dopts = append(dopts, grpc.WithPerRPCCredentials(perRPC{user: user, pass: pass, secure: !plaintext}))
	}
	// No proxy unless the intent names one: gRPC would otherwise follow
	// HTTPS_PROXY and the like, and send the gNMI session (credentials,
	// configuration) through whatever proxy the environment names.
	dopts = append(dopts, grpc.WithNoProxy())
	target := sw.Address
	if sw.Proxy != "" {
		// The proxy resolves the switch's name (passthrough: not this
		// machine's resolver, which may not know the management names).
		dopts = append(dopts, grpc.WithContextDialer(connectDialer(sw.Proxy)))
		target = "passthrough:///" + sw.Address
	}
	dopts = append(dopts, opts.DialOptions...)
	conn, err := grpc.NewClient(target, dopts...)
	if err != nil {
		return nil, &Error{Switch: sw.Name, Op: "dial", Err: err}
	}
	log.Debug("gnmi client ready", "address", sw.Address, "tls", !plaintext)
	return &Client{
		name: sw.Name, addr: sw.Address, conn: conn, gnmi: gnmipb.NewGNMIClient(conn),
		opts: opts, log: log, enc: gnmipb.Encoding_JSON_IETF,
	}, nil
}

// clientCertHint wraps the TLS credentials of a switch dialled without a
// client certificate. A server that requires one (mTLS) turns the
// connection down in a way that names nothing useful: in TLS 1.3 the
// client's handshake succeeds and the refusal arrives as an alert at the
// first read ("tls: certificate required"), or as a broken pipe or reset
// on the first write when the server has already closed. Until the server
// has sent anything, such errors say what to set.
type clientCertHint struct {
	credentials.TransportCredentials
}

func (h clientCertHint) ClientHandshake(ctx context.Context, authority string, raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info, err := h.TransportCredentials.ClientHandshake(ctx, authority, raw)
	if err != nil {
		return nil, nil, explainClientCert(err)
	}
	return &clientCertConn{Conn: conn}, info, nil
}

func (h clientCertHint) Clone() credentials.TransportCredentials {
	return clientCertHint{h.TransportCredentials.Clone()}
}

type clientCertConn struct {
	net.Conn
	heard atomic.Bool // the server has sent data: it accepted us
}

func (c *clientCertConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.heard.Store(true)
	}
	if err != nil && !c.heard.Load() {
		err = explainClientCert(err)
	}
	return n, err
}

func (c *clientCertConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if err != nil && !c.heard.Load() {
		err = explainClientCert(err)
	}
	return n, err
}

// ErrClientCertRequired marks a connection the server refused for want of
// a client certificate.
var ErrClientCertRequired = errors.New("the server requires a client certificate (set tls.cert and tls.key)")

func explainClientCert(err error) error {
	s := err.Error()
	if strings.Contains(s, "certificate required") || strings.Contains(s, "bad certificate") ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) {
		return fmt.Errorf("%w: %w", ErrClientCertRequired, err)
	}
	// TLS 1.2 servers (Go's among them) answer a missing certificate with
	// the generic handshake_failure alert, which a cipher mismatch also
	// raises: say it as the likely cause, not as a fact.
	if strings.Contains(s, "remote error: tls: handshake failure") {
		return fmt.Errorf("the server refused the TLS handshake; if it requires a client certificate (mTLS), set tls.cert and tls.key: %w", err)
	}
	return err
}

func tlsConfig(sw intent.Switch, readFile func(string) ([]byte, error)) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: sw.TLS.SkipVerify}
	cfg.ServerName = sw.TLS.ServerName
	if cfg.ServerName == "" {
		if host, _, err := net.SplitHostPort(sw.Address); err == nil {
			cfg.ServerName = host
		}
	}
	if sw.TLS.CA != "" {
		pem, err := readFile(sw.TLS.CA)
		if err != nil {
			return nil, fmt.Errorf("read CA bundle: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA bundle %s: no PEM certificates found", sw.TLS.CA)
		}
		cfg.RootCAs = pool
	}
	switch {
	case sw.TLS.Cert != "" && sw.TLS.Key != "":
		certPEM, err := readFile(sw.TLS.Cert)
		if err != nil {
			return nil, fmt.Errorf("read client certificate: %w", err)
		}
		keyPEM, err := readFile(sw.TLS.Key)
		if err != nil {
			return nil, fmt.Errorf("read client key: %w", err)
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			// The key's content is not part of this error (crypto/tls never
			// quotes it), only the file names.
			return nil, fmt.Errorf("client certificate %s / key %s: %w", sw.TLS.Cert, sw.TLS.Key, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	case sw.TLS.Cert != "" || sw.TLS.Key != "":
		return nil, errors.New("tls: cert and key must be given together for mTLS")
	}
	return cfg, nil
}

// readCredentials resolves the username and password the intent points at.
// Errors name the variable or file, never the value.
func readCredentials(c intent.Credentials, getenv func(string) string, readFile func(string) ([]byte, error)) (secret, secret, error) {
	read := func(what, env, file string) (secret, error) {
		switch {
		case env != "" && file != "":
			return "", fmt.Errorf("credentials: %s from both environment variable %s and file %s", what, env, file)
		case env != "":
			v := getenv(env)
			if v == "" {
				return "", fmt.Errorf("credentials: environment variable %s (%s) is empty or unset", env, what)
			}
			return secret(v), nil
		case file != "":
			b, err := readFile(file)
			if err != nil {
				var pe *os.PathError
				if errors.As(err, &pe) {
					err = pe.Err
				}
				return "", fmt.Errorf("credentials: read %s file %s: %w", what, file, err)
			}
			v := strings.TrimRight(string(b), "\r\n")
			if v == "" {
				return "", fmt.Errorf("credentials: %s file %s is empty", what, file)
			}
			return secret(v), nil
		}
		return "", nil
	}
	u, err := read("username", c.UsernameEnv, c.UsernameFile)
	if err != nil {
		return "", "", err
	}
	p, err := read("password", c.PasswordEnv, c.PasswordFile)
	if err != nil {
		return "", "", err
	}
	if (u == "") != (p == "") {
		return "", "", errors.New("credentials: username and password must be given together")
	}
	return u, p, nil
}

// Name is the switch name.
func (c *Client) Name() string { return c.name }

// Timeout is the bound on each RPC attempt (Options.Timeout, or
// DefaultTimeout).
func (c *Client) Timeout() time.Duration { return c.opts.Timeout }

// SetTimeout is the bound on a Set and the deadline it carries to the
// target (gRPC sends it as grpc-timeout): Options.SetTimeout, at least
// Timeout.
func (c *Client) SetTimeout() time.Duration { return max(c.opts.SetTimeout, c.opts.Timeout) }

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// messageBuffers is the pool the connections take their message buffers
// from: gRPC's default pool, with a tier at every power of two between 32
// KiB and 1 MiB. The default jumps from 32 KiB to 1 MiB, so each
// SetRequest and Get reply of a switch (40-200 KiB of JSON) took, and
// cleared, a 1 MiB buffer on every call.
var messageBuffers = func() mem.BufferPool {
	p, err := mem.NewBinaryTieredBufferPool(8, 12, 14, 15, 16, 17, 18, 19, 20)
	if err != nil {
		panic(err) // the exponents are constants
	}
	return p
}()

// Encoding is the encoding Get and Subscribe ask for: JSON_IETF unless
// Capabilities found that the target only speaks JSON.
func (c *Client) Encoding() gnmipb.Encoding {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.enc
}

// Capabilities is what a target announced.
type Capabilities struct {
	Version   string
	Encodings []gnmipb.Encoding
	Models    []*gnmipb.ModelData
	// Encoding is the one fabricctl will use: JSON_IETF, else JSON.
	Encoding gnmipb.Encoding
}

// HasModel reports whether the target announced the named YANG module.
func (c *Capabilities) HasModel(name string) bool {
	for _, m := range c.Models {
		if m.GetName() == name {
			return true
		}
	}
	return false
}

// Capabilities asks the target what it supports, picks JSON_IETF over JSON
// and fails when a required model is not announced.
func (c *Client) Capabilities(ctx context.Context, required ...string) (*Capabilities, error) {
	var resp *gnmipb.CapabilityResponse
	err := c.retry(ctx, "capabilities", func(ctx context.Context) error {
		var err error
		resp, err = c.gnmi.Capabilities(ctx, &gnmipb.CapabilityRequest{})
		return err
	})
	if err != nil {
		return nil, &Error{Switch: c.name, Op: "capabilities", Err: err}
	}
	caps := &Capabilities{Version: resp.GetGNMIVersion(), Encodings: resp.GetSupportedEncodings(), Models: resp.GetSupportedModels()}
	switch {
	case slices.Contains(caps.Encodings, gnmipb.Encoding_JSON_IETF):
		caps.Encoding = gnmipb.Encoding_JSON_IETF
	case slices.Contains(caps.Encodings, gnmipb.Encoding_JSON):
		caps.Encoding = gnmipb.Encoding_JSON
	default:
		return nil, &Error{Switch: c.name, Op: "capabilities", Err: fmt.Errorf("target supports neither JSON_IETF nor JSON (announces %v)", caps.Encodings)}
	}
	var missing []string
	for _, m := range required {
		if !caps.HasModel(m) {
			missing = append(missing, m)
		}
	}
	if len(missing) > 0 {
		return nil, &Error{Switch: c.name, Op: "capabilities", Err: fmt.Errorf("target does not announce required models %s", strings.Join(missing, ", "))}
	}
	c.mu.Lock()
	c.enc = caps.Encoding
	c.mu.Unlock()
	c.log.Debug("capabilities", "encoding", caps.Encoding.String(), "models", len(caps.Models))
	return caps, nil
}

// Get reads paths (CONFIG and STATE) in one GetRequest.
func (c *Client) Get(ctx context.Context, paths []*gnmipb.Path) ([]*gnmipb.Notification, error) {
	return c.get(ctx, paths, gnmipb.GetRequest_ALL)
}

// GetConfig reads only the configuration at paths (GetRequest type CONFIG),
// which is what plan compares and backups save.
func (c *Client) GetConfig(ctx context.Context, paths []*gnmipb.Path) ([]*gnmipb.Notification, error) {
	return c.get(ctx, paths, gnmipb.GetRequest_CONFIG)
}

// GetTarget reads paths of another target of the switch's gNMI server
// (the GetRequest's prefix names it, type ALL), e.g. sonic-gnmi's non-DB
// data at target OTHERS.
func (c *Client) GetTarget(ctx context.Context, target string, paths []*gnmipb.Path) ([]*gnmipb.Notification, error) {
	return c.getRequest(ctx, &gnmipb.GetRequest{Prefix: &gnmipb.Path{Target: target}, Path: paths, Encoding: c.Encoding(), Type: gnmipb.GetRequest_ALL})
}

func (c *Client) get(ctx context.Context, paths []*gnmipb.Path, typ gnmipb.GetRequest_DataType) ([]*gnmipb.Notification, error) {
	return c.getRequest(ctx, &gnmipb.GetRequest{Path: paths, Encoding: c.Encoding(), Type: typ})
}

// getRequest sends one GetRequest with read retries; errors name the paths.
func (c *Client) getRequest(ctx context.Context, req *gnmipb.GetRequest) ([]*gnmipb.Notification, error) {
	paths := req.GetPath()
	var resp *gnmipb.GetResponse
	err := c.retry(ctx, "get", func(ctx context.Context) error {
		var err error
		resp, err = c.gnmi.Get(ctx, req)
		return err
	})
	if err != nil {
		return nil, &Error{Switch: c.name, Op: "get", Path: PathsString(paths), Err: err}
	}
	c.log.Debug("get", "paths", len(paths), "notifications", len(resp.GetNotification()))
	return resp.GetNotification(), nil
}

// maxReply bounds one gNMI reply the client accepts.
const maxReply = 64 << 20

// GetCLI runs a show command over gNMI the way Arista EOS serves it: origin
// "cli", the command as the only path element, ASCII encoding
// (`gnmic get --path "cli:/show running-config all" --encoding ascii`). It
// returns the command's text output.
func (c *Client) GetCLI(ctx context.Context, command string) (string, error) {
	p := &gnmipb.Path{Origin: "cli", Elem: []*gnmipb.PathElem{{Name: command}}}
	notes, err := c.getRequest(ctx, &gnmipb.GetRequest{Path: []*gnmipb.Path{p}, Encoding: gnmipb.Encoding_ASCII})
	if err != nil {
		return "", err
	}
	for _, n := range notes {
		for _, u := range n.GetUpdate() {
			if a, ok := u.GetVal().GetValue().(*gnmipb.TypedValue_AsciiVal); ok {
				return a.AsciiVal, nil
			}
		}
	}
	return "", &Error{Switch: c.name, Op: "get", Path: "cli:/" + command, Err: errors.New("the reply has no ascii_val")}
}

// Set sends one SetRequest, exactly once. A failure whose effect is unknown
// (transport lost, deadline, cancellation) wraps ErrOutcomeUnknown.
func (c *Client) Set(ctx context.Context, req *gnmipb.SetRequest) (*gnmipb.SetResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, c.SetTimeout())
	defer cancel()
	start := time.Now()
	resp, err := c.gnmi.Set(ctx, req)
	if err != nil {
		return nil, c.setError(req, err)
	}
	c.log.Debug("set", "replace", len(req.GetReplace()), "update", len(req.GetUpdate()),
		"delete", len(req.GetDelete()), "took", time.Since(start))
	return resp, nil
}

// MaxOnceBytes bounds what one SubscribeOnce keeps (the wire size of the
// updates): a target that streams without ever sending the sync response
// would otherwise be buffered until the timeout, gigabytes on a fast link.
// A whole switch's counters are a few MiB.
const MaxOnceBytes = 64 << 20

// SubscribeOnce sends a ONCE subscription for paths under prefix and returns
// every notification received before the sync response (at most
// MaxOnceBytes of them).
func (c *Client) SubscribeOnce(ctx context.Context, prefix *gnmipb.Path, paths []*gnmipb.Path) ([]*gnmipb.Notification, error) {
	subs := make([]*gnmipb.Subscription, len(paths))
	for i, p := range paths {
		subs[i] = &gnmipb.Subscription{Path: p}
	}
	req := &gnmipb.SubscribeRequest{Request: &gnmipb.SubscribeRequest_Subscribe{Subscribe: &gnmipb.SubscriptionList{
		Prefix: prefix, Subscription: subs, Mode: gnmipb.SubscriptionList_ONCE, Encoding: c.Encoding(),
	}}}
	var out []*gnmipb.Notification
	err := c.retry(ctx, "subscribe", func(ctx context.Context) error {
		out = out[:0]
		stream, err := c.gnmi.Subscribe(ctx)
		if err != nil {
			return err
		}
		if err := stream.Send(req); err != nil {
			if err == io.EOF {
				_, err = stream.Recv() // the real error
			}
			return err
		}
		size := 0
		for {
			resp, err := stream.Recv()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			switch r := resp.GetResponse().(type) {
			case *gnmipb.SubscribeResponse_Update:
				if size += proto.Size(r.Update); size > MaxOnceBytes {
					return fmt.Errorf("target sent more than %d MiB of updates without the sync response that ends a ONCE subscription", MaxOnceBytes>>20)
				}
				out = append(out, r.Update)
			case *gnmipb.SubscribeResponse_SyncResponse:
				return stream.CloseSend()
			}
		}
	})
	if err != nil {
		return nil, &Error{Switch: c.name, Op: "subscribe", Path: PathsString(withPrefix(prefix, paths)), Err: err}
	}
	return out, nil
}

// retry runs fn with a per-attempt timeout, again after a backoff while the
// target is Unavailable, at most opts.Attempts times.
func (c *Client) retry(ctx context.Context, op string, fn func(context.Context) error) error {
	wait := c.opts.Backoff
	var err error
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
		err = fn(actx)
		cancel()
		if err == nil || Code(err) != codes.Unavailable || attempt >= c.opts.Attempts || ctx.Err() != nil {
			break
		}
		c.log.Debug("retrying", "op", op, "attempt", attempt, "wait", wait, "code", codes.Unavailable.String())
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (after %d attempts, last: %w)", ctx.Err(), attempt, err)
		case <-t.C:
		}
		wait *= 2
	}
	if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		return fmt.Errorf("%w: %w", ctx.Err(), err)
	}
	return err
}

func setPaths(req *gnmipb.SetRequest) []*gnmipb.Path {
	var ps []*gnmipb.Path
	ps = append(ps, req.GetDelete()...)
	for _, u := range req.GetReplace() {
		ps = append(ps, u.GetPath())
	}
	for _, u := range req.GetUpdate() {
		ps = append(ps, u.GetPath())
	}
	return withPrefix(req.GetPrefix(), ps)
}

func withPrefix(prefix *gnmipb.Path, paths []*gnmipb.Path) []*gnmipb.Path {
	if prefix == nil || (len(prefix.GetElem()) == 0 && prefix.GetOrigin() == "" && prefix.GetTarget() == "") {
		return paths
	}
	out := make([]*gnmipb.Path, len(paths))
	for i, p := range paths {
		origin := p.GetOrigin()
		if origin == "" {
			origin = prefix.GetOrigin()
		}
		out[i] = &gnmipb.Path{Origin: origin, Target: prefix.GetTarget(), Elem: append(slices.Clone(prefix.GetElem()), p.GetElem()...)}
	}
	return out
}

// PathString renders a path as origin:/a/b[k=v] (target as a leading "target@").
func PathString(p *gnmipb.Path) string {
	s, err := ygot.PathToString(&gnmipb.Path{Elem: p.GetElem()})
	if err != nil {
		s = fmt.Sprint(p.GetElem())
	}
	if p.GetOrigin() != "" {
		s = p.GetOrigin() + ":" + s
	}
	if p.GetTarget() != "" {
		s = p.GetTarget() + "@" + s
	}
	return s
}

// PathsString renders up to four paths, comma separated.
func PathsString(ps []*gnmipb.Path) string {
	var parts []string
	for i, p := range ps {
		if i == 4 {
			parts = append(parts, fmt.Sprintf("and %d more", len(ps)-4))
			break
		}
		parts = append(parts, PathString(p))
	}
	return strings.Join(parts, ", ")
}

// ParsePath parses "origin:/a/b[k=v]" (origin optional) into a gNMI path.
func ParsePath(s string) (*gnmipb.Path, error) {
	origin := ""
	if i := strings.Index(s, ":/"); i > 0 && !strings.ContainsAny(s[:i], "/[") {
		origin, s = s[:i], s[i+1:]
	}
	p, err := ygot.StringToStructuredPath(s)
	if err != nil {
		return nil, fmt.Errorf("parse gNMI path %q: %w", s, err)
	}
	p.Origin = origin
	return p, nil
}
