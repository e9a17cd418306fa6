package watch

import (
	"bufio"
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"

	"github.com/fabricctl/fabricctl/intent"
)

// seriesPerSwitch ingests one sample round of n 64-port switches of plat
// (every counter the platform reports, sample) under detail and counts
// the series /metrics then serves: fabricctl_switch_* ones per switch,
// and the rest (health, priority info), which do not grow with switches.
func seriesPerSwitch(t *testing.T, plat intent.Platform, n int, sample func(string, uint64) [][]byte, detail Detail) (perSwitch, other int) {
	t.Helper()
	w, err := New(Options{Fabric: benchFabric(t, n, plat), Detail: detail})
	if err != nil {
		t.Fatal(err)
	}
	var sc rawScratch
	for _, tg := range w.targets {
		tg.up.Store(true) // as after its subscription's initial sync: a switch's counters are exported only while it streams
		for p := range benchPorts {
			for _, msg := range sample(portName(plat, p), 1) {
				if _, _, err := tg.ctr.ingestRaw(msg, &sc); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(w.Health())
	rec := httptest.NewRecorder()
	w.Handler(reg).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics: %d", rec.Code)
	}
	sw := 0
	s := bufio.NewScanner(bytes.NewReader(rec.Body.Bytes()))
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		switch line := s.Text(); {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "fabricctl_switch_"), strings.Contains(line, `kind="switch"`):
			sw++
		default:
			other++
		}
	}
	return sw / n, other
}

// TestSeriesPerSwitch (README "watch: series and shards"): the series a
// 64-port switch produces with the roce-lossless preset, by platform and
// --priorities; lossless leaves out the default class's priority, a third
// of the per-priority series.
func TestSeriesPerSwitch(t *testing.T) {
	for _, c := range []struct {
		plat   intent.Platform
		sample func(string, uint64) [][]byte
	}{{intent.PlatformSRLinux, srlSample}, {intent.PlatformSONiC, sonicSample}} {
		all, other := seriesPerSwitch(t, c.plat, 4, c.sample, DetailAll)
		lossless, _ := seriesPerSwitch(t, c.plat, 4, c.sample, DetailLossless)
		t.Logf("%s, 64 ports: %d series per switch (--priorities all), %d (lossless); %d not per switch", c.plat, all, lossless, other)
		if lossless >= all || lossless < all/2 {
			t.Errorf("%s: %d series per switch with lossless, %d with all: want about two thirds of the per-priority ones", c.plat, lossless, all)
		}
	}
}

// TestNonZeroSeries: with NonZero, a counter whose value is 0 has no
// series, in Handler's text and in Collect alike, and one that is not
// zero has; without it both are exported.
func TestNonZeroSeries(t *testing.T) {
	for _, nonzero := range []bool{false, true} {
		f := benchFabric(t, 1, intent.PlatformSRLinux)
		w, err := New(Options{Fabric: f, NonZero: nonzero})
		if err != nil {
			t.Fatal(err)
		}
		tg := w.targets[0]
		tg.up.Store(true)
		var sb strings.Builder
		for p := range benchPorts {
			for _, msg := range srlSample(portName(intent.PlatformSRLinux, p), 0) { // round 0: queue 0's first leaves are 0
				var resp gnmipb.SubscribeResponse
				if err := proto.Unmarshal(msg, &resp); err != nil {
					t.Fatal(err)
				}
				tg.ctr.ingest(resp.GetUpdate(), &sb)
			}
		}
		// Queue 0's dropped-packets is 0*1000 + 0*10 + 2 = 2; its PFC
		// pause frames generated, 0*100 + 0*10 + 0 = 0.
		zero := `fabricctl_switch_pfc_pause_frames_total{switch="leaf0000",port="ethernet-1/1",priority="0",direction="tx"} 0`
		some := `fabricctl_switch_queue_drops_total{switch="leaf0000",port="ethernet-1/1",priority="0"} 2`
		rec := httptest.NewRecorder()
		w.Handler(prometheus.NewRegistry()).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		text := rec.Body.String()
		if !strings.Contains(text, some+"\n") {
			t.Errorf("nonzero %v: /metrics lacks %s", nonzero, some)
		}
		if strings.Contains(text, zero+"\n") == nonzero {
			t.Errorf("nonzero %v: /metrics has %s: %v", nonzero, zero, !nonzero)
		}
		zeros := 0
		for line := range strings.Lines(text) {
			if strings.HasPrefix(line, "fabricctl_switch_") && strings.HasSuffix(line, " 0\n") {
				zeros++
			}
		}
		if (zeros > 0) == nonzero {
			t.Errorf("nonzero %v: %d series are 0", nonzero, zeros)
		}
		ch := make(chan prometheus.Metric, 1<<16)
		w.Collect(ch)
		close(ch)
		collected := 0
		for m := range ch {
			var d dto.Metric
			if err := m.Write(&d); err != nil {
				t.Fatal(err)
			}
			if d.GetCounter() != nil && strings.HasPrefix(m.Desc().String(), `Desc{fqName: "fabricctl_switch_`) {
				collected++
				if nonzero && d.GetCounter().GetValue() == 0 {
					t.Errorf("Collect exports a zero counter: %v", m.Desc())
				}
			}
		}
		lines := 0
		for line := range strings.Lines(text) {
			if strings.HasPrefix(line, "fabricctl_switch_") {
				lines++
			}
		}
		if collected != lines {
			t.Errorf("nonzero %v: Collect exports %d per-port series, Handler %d", nonzero, collected, lines)
		}
	}
}
