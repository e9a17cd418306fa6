package watch

import (
	"bufio"
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

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
