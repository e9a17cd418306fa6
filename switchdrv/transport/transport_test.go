package transport_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

func startTwin(t *testing.T, o twin.Options) *twin.Twin {
	t.Helper()
	if o.Name == "" {
		o.Name = "leaf1"
	}
	if o.Platform == "" {
		o.Platform = intent.PlatformSRLinux
	}
	tw, err := twin.Start(o)
	if err != nil {
		t.Fatalf("twin.Start: %v", err)
	}
	t.Cleanup(tw.Close)
	return tw
}

func mustPath(t *testing.T, s string) *gnmipb.Path {
	t.Helper()
	p, err := transport.ParsePath(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTLS dials twins that serve TLS with a CA made in the test: the right CA
// works, a wrong CA, plaintext against TLS and a missing client certificate
// under mTLS all fail closed (no Set reaches the twin).
func TestTLS(t *testing.T) {
	pki, err := twin.NewPKI("test")
	if err != nil {
		t.Fatal(err)
	}
	other, err := twin.NewPKI("other")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ca := writeFile(t, dir, "ca.pem", pki.CAPEM)
	wrongCA := writeFile(t, dir, "wrong-ca.pem", other.CAPEM)
	cert := writeFile(t, dir, "client.pem", pki.ClientCertPEM)
	key := writeFile(t, dir, "client.key", pki.ClientKeyPEM)
	tests := []struct {
		name   string
		mtls   bool
		tls12  bool // the twin speaks TLS 1.2 at most
		tls    intent.TLS
		opts   transport.Options
		wantOK bool
		// wantErr is in the error when set.
		wantErr string
	}{
		{name: "right CA", tls: intent.TLS{CA: ca}, wantOK: true},
		{name: "wrong CA", tls: intent.TLS{CA: wrongCA}},
		{name: "system roots", tls: intent.TLS{}},
		{name: "plaintext against TLS", tls: intent.TLS{Insecure: true}},
		{name: "--insecure flag against TLS", tls: intent.TLS{CA: ca}, opts: transport.Options{Insecure: true}},
		{name: "skip verify", tls: intent.TLS{SkipVerify: true}, wantOK: true},
		{name: "wrong server name", tls: intent.TLS{CA: ca, ServerName: "leaf9.example"}},
		{name: "mTLS with client cert", mtls: true, tls: intent.TLS{CA: ca, Cert: cert, Key: key}, wantOK: true},
		{name: "mTLS without client cert", mtls: true, tls: intent.TLS{CA: ca},
			wantErr: "the server requires a client certificate (set tls.cert and tls.key)"},
		{name: "mTLS without client cert, TLS 1.2", mtls: true, tls: intent.TLS{CA: ca}, tls12: true,
			wantErr: "if it requires a client certificate (mTLS), set tls.cert and tls.key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := pki.ServerTLS(tc.mtls)
			if err != nil {
				t.Fatal(err)
			}
			if tc.tls12 {
				cfg.MaxVersion = tls.VersionTLS12
			}
			tw := startTwin(t, twin.Options{TLS: cfg})
			sw := intent.Switch{Name: "leaf1", Platform: intent.PlatformSRLinux, Address: tw.Addr(), TLS: tc.tls}
			tc.opts.Timeout = 2 * time.Second
			tc.opts.Attempts = 1
			c, err := transport.Dial(t.Context(), sw, tc.opts)
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			defer c.Close()
			_, err = c.Set(t.Context(), &gnmipb.SetRequest{Update: []*gnmipb.Update{{
				Path: mustPath(t, "/system/name"),
				Val:  &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(`{"host-name":"x"}`)}},
			}}})
			if got := err == nil; got != tc.wantOK {
				t.Fatalf("Set error = %v, want ok=%v", err, tc.wantOK)
			}
			if tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Set error = %v, want it to say %q", err, tc.wantErr)
			}
			wantSets := 0
			if tc.wantOK {
				wantSets = 1
			}
			if got := tw.Sets(); got != wantSets {
				t.Errorf("twin committed %d Sets, want %d", got, wantSets)
			}
		})
	}
}

func TestDialErrors(t *testing.T) {
	dir := t.TempDir()
	notPEM := writeFile(t, dir, "ca.pem", []byte("not a certificate"))
	tests := []struct {
		name string
		sw   intent.Switch
	}{
		{"no address", intent.Switch{Name: "leaf1"}},
		{"CA without certificates", intent.Switch{Name: "leaf1", Address: "127.0.0.1:1", TLS: intent.TLS{CA: notPEM}}},
		{"missing CA file", intent.Switch{Name: "leaf1", Address: "127.0.0.1:1", TLS: intent.TLS{CA: filepath.Join(dir, "nope.pem")}}},
		{"cert without key", intent.Switch{Name: "leaf1", Address: "127.0.0.1:1", TLS: intent.TLS{Cert: notPEM}}},
		{"unset password env", intent.Switch{Name: "leaf1", Address: "127.0.0.1:1", TLS: intent.TLS{Insecure: true},
			Credentials: intent.Credentials{UsernameEnv: "FABRICCTL_TEST_NO_SUCH_USER", PasswordEnv: "FABRICCTL_TEST_NO_SUCH_PASS"}}},
		{"missing password file", intent.Switch{Name: "leaf1", Address: "127.0.0.1:1", TLS: intent.TLS{Insecure: true},
			Credentials: intent.Credentials{UsernameFile: notPEM, PasswordFile: filepath.Join(dir, "nope")}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := transport.Dial(t.Context(), tc.sw, transport.Options{Getenv: func(string) string { return "" }})
			var te *transport.Error
			if !errors.As(err, &te) {
				t.Fatalf("Dial error = %v, want a *transport.Error", err)
			}
			if te.Switch != "leaf1" || te.Op != "dial" {
				t.Errorf("error names switch %q op %q, want leaf1 dial", te.Switch, te.Op)
			}
		})
	}
}

// TestCredentials checks username/password metadata against a twin that
// demands them, and that the password never shows up in errors or in logs at
// debug level.
func TestCredentials(t *testing.T) {
	const user, pass = "admin", "s3cr3t-Pa55word"
	tw := startTwin(t, twin.Options{Username: user, Password: pass})
	dir := t.TempDir()
	passFile := writeFile(t, dir, "pass", []byte(pass+"\n"))
	userFile := writeFile(t, dir, "user", []byte(user+"\n"))
	env := map[string]string{"GNMI_USER": user, "GNMI_PASS": pass, "BAD_PASS": pass + "-wrong"}
	tests := []struct {
		name   string
		creds  intent.Credentials
		wantOK bool
	}{
		{"env", intent.Credentials{UsernameEnv: "GNMI_USER", PasswordEnv: "GNMI_PASS"}, true},
		{"files", intent.Credentials{UsernameFile: userFile, PasswordFile: passFile}, true},
		{"wrong password", intent.Credentials{UsernameEnv: "GNMI_USER", PasswordEnv: "BAD_PASS"}, false},
		{"none", intent.Credentials{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			sw := intent.Switch{Name: "leaf1", Address: tw.Addr(), TLS: intent.TLS{Insecure: true}, Credentials: tc.creds}
			c, err := transport.Dial(t.Context(), sw, transport.Options{Log: log, Attempts: 1, PlaintextCredentials: true, Getenv: func(k string) string { return env[k] }})
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			defer c.Close()
			log.Debug("client", "client", c, "struct", fmt.Sprintf("%+v %#v", c, c))
			_, err = c.Capabilities(t.Context())
			if got := err == nil; got != tc.wantOK {
				t.Fatalf("Capabilities error = %v, want ok=%v", err, tc.wantOK)
			}
			if !tc.wantOK && transport.Code(err) != codes.Unauthenticated {
				t.Errorf("code = %v, want Unauthenticated", transport.Code(err))
			}
			out := logs.String()
			if err != nil {
				out += err.Error()
			}
			if strings.Contains(out, pass) {
				t.Errorf("password leaked into output:\n%s", out)
			}
		})
	}
}

func TestGetSetSubscribe(t *testing.T) {
	tw := startTwin(t, twin.Options{Name: "leaf2", Platform: intent.PlatformSONiC})
	sw := intent.Switch{Name: "leaf2", Address: tw.Addr(), TLS: intent.TLS{Insecure: true}}
	c, err := transport.Dial(t.Context(), sw, transport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	caps, err := c.Capabilities(t.Context(), "sonic-db")
	if err != nil {
		t.Fatalf("Capabilities: %v", err)
	}
	if caps.Encoding != gnmipb.Encoding_JSON_IETF || c.Encoding() != gnmipb.Encoding_JSON_IETF {
		t.Errorf("encoding = %v, want JSON_IETF", caps.Encoding)
	}
	if _, err := c.Capabilities(t.Context(), "srl_nokia-qos"); err == nil {
		t.Errorf("Capabilities with a model the twin lacks: got no error")
	}
	pqm := mustPath(t, "sonic-db:/CONFIG_DB/localhost/PORT_QOS_MAP/Ethernet0")
	_, err = c.Set(t.Context(), &gnmipb.SetRequest{Replace: []*gnmipb.Update{{Path: pqm,
		Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(`{"pfc_enable":"3","pfcwd_sw_enable":"3"}`)}}}}})
	if err != nil {
		t.Fatalf("Set: %v", err)
	}
	notes, err := c.Get(t.Context(), []*gnmipb.Path{pqm})
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if len(notes) != 1 || len(notes[0].GetUpdate()) != 1 {
		t.Fatalf("Get returned %v, want one update", notes)
	}
	got := string(notes[0].GetUpdate()[0].GetVal().GetJsonIetfVal())
	if want := `{"pfc_enable":"3","pfcwd_sw_enable":"3"}`; got != want {
		t.Errorf("Get value = %s, want %s", got, want)
	}

	// A Set that is partly wrong changes nothing (atomic).
	_, err = c.Set(t.Context(), &gnmipb.SetRequest{
		Delete: []*gnmipb.Path{pqm},
		Update: []*gnmipb.Update{{Path: mustPath(t, "sonic-db:/COUNTERS_DB/COUNTERS/Ethernet0"),
			Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(`{}`)}}}},
	})
	if err == nil {
		t.Fatal("Set to a read-only table: got no error")
	}
	var te *transport.Error
	if !errors.As(err, &te) || te.Switch != "leaf2" || !strings.Contains(te.Path, "COUNTERS_DB") {
		t.Errorf("error %v does not name switch leaf2 and the path", err)
	}
	if v, ok := tw.Value(pqm); !ok || v == nil {
		t.Errorf("failed Set deleted %s", transport.PathString(pqm))
	}

	// Counters through Subscribe ONCE, sonic-gnmi style (target COUNTERS_DB).
	if err := tw.Put(&gnmipb.Path{Target: "COUNTERS_DB", Elem: mustPath(t, "/COUNTERS/Ethernet0").Elem},
		map[string]any{"SAI_PORT_STAT_PFC_3_RX_PKTS": "42", "SAI_PORT_STAT_PFC_3_TX_PKTS": "7"}); err != nil {
		t.Fatal(err)
	}
	notes, err = c.SubscribeOnce(t.Context(), &gnmipb.Path{Target: "COUNTERS_DB"},
		[]*gnmipb.Path{mustPath(t, "/COUNTERS/Ethernet0/SAI_PORT_STAT_PFC_3_RX_PKTS"), mustPath(t, "/COUNTERS/Ethernet0")})
	if err != nil {
		t.Fatalf("SubscribeOnce: %v", err)
	}
	var vals []string
	for _, n := range notes {
		for _, u := range n.GetUpdate() {
			if s := u.GetVal().GetStringVal(); s != "" {
				vals = append(vals, transport.PathString(u.GetPath())+"="+s)
			} else {
				vals = append(vals, transport.PathString(u.GetPath())+"="+string(u.GetVal().GetJsonIetfVal()))
			}
		}
	}
	want := []string{
		"/COUNTERS/Ethernet0/SAI_PORT_STAT_PFC_3_RX_PKTS=42",
		`/COUNTERS/Ethernet0={"SAI_PORT_STAT_PFC_3_RX_PKTS":"42","SAI_PORT_STAT_PFC_3_TX_PKTS":"7"}`,
	}
	if diff := cmp.Diff(want, vals); diff != "" {
		t.Errorf("SubscribeOnce mismatch (-want +got):\n%s", diff)
	}
}

// counter is a gRPC client interceptor counting RPC attempts per method.
type counter struct{ get, set atomic.Int32 }

func (c *counter) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, inv grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	switch {
	case strings.HasSuffix(method, "/Get"):
		c.get.Add(1)
	case strings.HasSuffix(method, "/Set"):
		c.set.Add(1)
	}
	return inv(ctx, method, req, reply, cc, opts...)
}

// TestRetryAndTimeout: reads are retried (bounded) while the target is
// unavailable, Set never is; a hanging target times out with a clean error
// and a Set against it reports an unknown outcome.
func TestRetryAndTimeout(t *testing.T) {
	tw := startTwin(t, twin.Options{})
	addr := tw.Addr()
	tw.Close() // nothing listens there any more: Unavailable
	var cnt counter
	sw := intent.Switch{Name: "leaf1", Address: addr, TLS: intent.TLS{Insecure: true}}
	opts := transport.Options{Attempts: 3, Backoff: time.Millisecond, Timeout: time.Second,
		DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(cnt.intercept)}}
	c, err := transport.Dial(t.Context(), sw, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Get(t.Context(), []*gnmipb.Path{mustPath(t, "/qos")}); transport.Code(err) != codes.Unavailable {
		t.Errorf("Get on a closed port: code %v (%v), want Unavailable", transport.Code(err), err)
	}
	if _, err := c.Set(t.Context(), &gnmipb.SetRequest{}); !errors.Is(err, transport.ErrOutcomeUnknown) {
		t.Errorf("Set on a closed port: %v, want ErrOutcomeUnknown", err)
	}
	// The prepared read and the Set that only reports its outcome behave
	// alike.
	g, err := c.PrepareGetConfig([]*gnmipb.Path{mustPath(t, "/qos")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetPrepared(t.Context(), g); transport.Code(err) != codes.Unavailable {
		t.Errorf("GetPrepared on a closed port: code %v (%v), want Unavailable", transport.Code(err), err)
	}
	if err := c.SetOutcome(t.Context(), &gnmipb.SetRequest{}); !errors.Is(err, transport.ErrOutcomeUnknown) {
		t.Errorf("SetOutcome on a closed port: %v, want ErrOutcomeUnknown", err)
	}
	if got, want := [2]int32{cnt.get.Load(), cnt.set.Load()}, [2]int32{6, 2}; got != want {
		t.Errorf("attempts (get, set) = %v, want %v", got, want)
	}

	hung := startTwin(t, twin.Options{})
	hung.Hang(true)
	sw.Address = hung.Addr()
	c2, err := transport.Dial(t.Context(), sw, transport.Options{Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	_, err = c2.Get(t.Context(), []*gnmipb.Path{mustPath(t, "/qos")})
	if transport.Code(err) != codes.DeadlineExceeded {
		t.Errorf("Get on a hanging twin: code %v (%v), want DeadlineExceeded", transport.Code(err), err)
	}
	_, err = c2.Set(t.Context(), &gnmipb.SetRequest{})
	if !errors.Is(err, transport.ErrOutcomeUnknown) {
		t.Errorf("Set on a hanging twin: %v, want ErrOutcomeUnknown", err)
	}
	if err := c2.SetOutcome(t.Context(), &gnmipb.SetRequest{}); !errors.Is(err, transport.ErrOutcomeUnknown) || transport.Code(err) != codes.DeadlineExceeded {
		t.Errorf("SetOutcome on a hanging twin: %v, want ErrOutcomeUnknown (DeadlineExceeded)", err)
	}
	hung.Hang(false)
	if hung.Sets() != 0 {
		t.Errorf("hanging twin committed %d Sets", hung.Sets())
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c2.Get(ctx, nil); transport.Code(err) != codes.Canceled {
		t.Errorf("Get with a cancelled context: code %v (%v), want Canceled", transport.Code(err), err)
	}
}

func TestParsePath(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"/qos/interfaces/interface[interface-id=ethernet-1/1]/pfc", "/qos/interfaces/interface[interface-id=ethernet-1/1]/pfc"},
		{"sonic-db:/CONFIG_DB/localhost/QUEUE/Ethernet0|3", "sonic-db:/CONFIG_DB/localhost/QUEUE/Ethernet0|3"},
		{"cli:/", "cli:/"},
	}
	for _, tc := range tests {
		p, err := transport.ParsePath(tc.in)
		if err != nil {
			t.Fatalf("ParsePath(%q): %v", tc.in, err)
		}
		if got := transport.PathString(p); got != tc.want {
			t.Errorf("PathString(ParsePath(%q)) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// endless is a misbehaving gNMI target: its Subscribe streams updates and
// never sends the sync response a ONCE subscription ends with.
type endless struct {
	gnmipb.UnimplementedGNMIServer
	sent atomic.Int64
}

func (e *endless) Subscribe(s gnmipb.GNMI_SubscribeServer) error {
	if _, err := s.Recv(); err != nil {
		return err
	}
	n := &gnmipb.Notification{Update: []*gnmipb.Update{{Path: &gnmipb.Path{Elem: []*gnmipb.PathElem{{Name: "x"}}},
		Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_StringVal{StringVal: strings.Repeat("v", 4096)}}}}}
	for {
		if err := s.Send(&gnmipb.SubscribeResponse{Response: &gnmipb.SubscribeResponse_Update{Update: n}}); err != nil {
			return err
		}
		e.sent.Add(1)
	}
}

// serveGNMI serves impl on a loopback port for the test and returns a
// client of switch leaf1 dialled to it (plaintext, one attempt per call).
func serveGNMI(t *testing.T, impl gnmipb.GNMIServer) *transport.Client {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	gnmipb.RegisterGNMIServer(srv, impl)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	sw := intent.Switch{Name: "leaf1", Address: lis.Addr().String(), TLS: intent.TLS{Insecure: true}}
	c, err := transport.Dial(t.Context(), sw, transport.Options{Timeout: 20 * time.Second, Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestSubscribeOnceBounded: a target that streams without ever sending the
// sync response must not make SubscribeOnce buffer everything it sends until
// the timeout (gigabytes on a fast link); it stops at a bound with an error
// naming the switch.
func TestSubscribeOnceBounded(t *testing.T) {
	e := &endless{}
	c := serveGNMI(t, e)
	start := time.Now()
	notes, err := c.SubscribeOnce(t.Context(), nil, []*gnmipb.Path{mustPath(t, "/x")})
	if err == nil {
		t.Fatalf("SubscribeOnce without a sync response = %d notifications, no error", len(notes))
	}
	if !strings.Contains(err.Error(), "leaf1") {
		t.Errorf("error %q does not name the switch", err)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("SubscribeOnce returned after %v (%d notifications sent): not bounded before the timeout", took, e.sent.Load())
	}
}
