package watch

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/proto"

	"github.com/fabricctl/fabricctl/intent"
)

// TestHandlerMatchesCollect: the text Handler writes parses, and carries
// exactly the series (names, labels, values, help, type) Collect produces.
func TestHandlerMatchesCollect(t *testing.T) {
	for _, tc := range []struct {
		plat   intent.Platform
		sample func(string, uint64) [][]byte
	}{{intent.PlatformSRLinux, srlSample}, {intent.PlatformSONiC, sonicSample}} {
		t.Run(string(tc.plat), func(t *testing.T) {
			f := benchFabric(t, 3, tc.plat)
			w, err := New(Options{Fabric: f})
			if err != nil {
				t.Fatal(err)
			}
			var sb strings.Builder
			for i, tg := range w.targets {
				tg.up.Store(true) // as a session's initial sync does
				for p := range benchPorts {
					for _, msg := range tc.sample(portName(tc.plat, p), uint64(i+p+1)) {
						var resp gnmipb.SubscribeResponse
						if err := proto.Unmarshal(msg, &resp); err != nil {
							t.Fatal(err)
						}
						tg.ctr.ingest(resp.GetUpdate(), &sb)
					}
				}
			}
			full := prometheus.NewPedanticRegistry()
			full.MustRegister(w)
			want, err := full.Gather()
			if err != nil {
				t.Fatal(err)
			}
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(w.Health())
			rec := httptest.NewRecorder()
			w.Handler(reg).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
			if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
				t.Errorf("Content-Type %q", ct)
			}
			p := expfmt.NewTextParser(model.UTF8Validation)
			got, err := p.TextToMetricFamilies(strings.NewReader(rec.Body.String()))
			if err != nil {
				t.Fatalf("Handler output does not parse: %v", err)
			}
			flat := func(mfs map[string]*dto.MetricFamily) map[string]string {
				out := map[string]string{}
				for _, mf := range mfs {
					for _, m := range mf.GetMetric() {
						var ls []string
						for _, l := range m.GetLabel() {
							ls = append(ls, l.GetName()+"="+l.GetValue())
						}
						slices.Sort(ls)
						v := m.GetCounter().GetValue() + m.GetGauge().GetValue()
						out[mf.GetName()+"{"+strings.Join(ls, ",")+"}"] = mf.GetType().String() + " " + mf.GetHelp() + " " + strconv.FormatFloat(v, 'g', -1, 64)
					}
				}
				return out
			}
			wantM := map[string]*dto.MetricFamily{}
			for _, mf := range want {
				wantM[mf.GetName()] = mf
			}
			a, b2 := flat(wantM), flat(got)
			if len(a) < 64*3 {
				t.Fatalf("only %d series collected", len(a))
			}
			for k, v := range a {
				if b2[k] != v {
					t.Errorf("%s: Collect %q, Handler %q", k, v, b2[k])
				}
			}
			for k := range b2 {
				if _, ok := a[k]; !ok {
					t.Errorf("%s: only in Handler's output", k)
				}
			}
		})
	}
}

// stallConn is a server connection whose kernel send buffer is small and
// that says when the server first writes to it (the response is under way).
type stallConn struct {
	net.Conn
	once    *sync.Once
	writing chan struct{}
}

func (c stallConn) Write(b []byte) (int, error) {
	c.once.Do(func() { close(c.writing) })
	return c.Conn.Write(b)
}

type stallListener struct {
	net.Listener
	first   sync.Once
	once    sync.Once
	writing chan struct{}
}

func (l *stallListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	stalled := false
	l.first.Do(func() { stalled = true })
	if !stalled {
		return c, nil
	}
	_ = c.(*net.TCPConn).SetWriteBuffer(4096)
	return stallConn{Conn: c, once: &l.once, writing: l.writing}, nil
}

// TestStalledScraperBlocksNoOtherScrape: over real HTTP, a client that asks
// for /metrics and then stops reading (its server-side write blocked on a
// full socket) does not hold up another scrape, which completes in full.
// (The server here has no WriteTimeout, so only Handler's own locking is
// tested: it used to write to the network holding the scrape lock.)
func TestStalledScraperBlocksNoOtherScrape(t *testing.T) {
	f := benchFabric(t, 60, intent.PlatformSRLinux)
	w, err := New(Options{Fabric: f})
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	for i, tg := range w.targets {
		tg.up.Store(true)
		for p := range benchPorts {
			for _, msg := range srlSample(portName(intent.PlatformSRLinux, p), uint64(i+p+1)) {
				var resp gnmipb.SubscribeResponse
				if err := proto.Unmarshal(msg, &resp); err != nil {
					t.Fatal(err)
				}
				tg.ctr.ingest(resp.GetUpdate(), &sb)
			}
		}
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(w.Health())
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &stallListener{Listener: inner, writing: make(chan struct{})}
	srv := &http.Server{Handler: w.Handler(reg), ReadHeaderTimeout: time.Minute}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })

	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	stalled, err := d.Dial("tcp", inner.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	if _, err := io.WriteString(stalled, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	<-l.writing // the stalled scrape is writing its counters

	done := make(chan error, 1)
	go func() {
		resp, err := http.Get("http://" + inner.Addr().String() + "/metrics")
		if err != nil {
			done <- err
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err == nil && !bytes.Contains(b, []byte(`switch="leaf0059"`)) {
			err = fmt.Errorf("scrape of %d bytes has not the last switch's counters", len(b))
		}
		done <- err
	}()
	// Generous: the scrape takes milliseconds; a scrape waiting on the
	// stalled one never ends.
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("a scrape did not complete in 2 minutes while another client stalled")
	}
}
