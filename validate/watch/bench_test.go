package watch

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/protobuf/proto"

	"github.com/fabricctl/fabricctl/intent"
)

// The scale target of issue 15: 2,000 switches x 64 ports x the priorities
// in use (roce-lossless: 0, 3, 6), every switch streaming every 10 s.
const (
	benchSwitches = 2000
	benchPorts    = 64
	benchInterval = 10 * time.Second
)

func benchFabric(b testing.TB, n int, plat intent.Platform) *intent.Fabric {
	b.Helper()
	f, err := intent.Parse("bench.yaml", []byte("apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\nmetadata: {name: bench}\npolicy: {preset: roce-lossless}\n"))
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		sw := intent.Switch{Name: fmt.Sprintf("leaf%04d", i), Platform: plat, Address: "127.0.0.1:1"}
		for p := range benchPorts {
			sw.Ports = append(sw.Ports, intent.Port{Name: portName(plat, p), Speed: 400e9})
		}
		f.Switches = append(f.Switches, sw)
	}
	return f
}

func portName(plat intent.Platform, p int) string {
	if plat == intent.PlatformSONiC {
		return fmt.Sprintf("Ethernet%d", 8*p)
	}
	return fmt.Sprintf("ethernet-1/%d", p+1)
}

// srlSample is one SAMPLE of a port as SR Linux streams the paths validate
// reads, leaf by leaf: 8 unicast queues x 4 statistics and 8 PFC priorities
// x 3 (56 updates; the priorities not in use are sent too and ignored).
func srlSample(port string, round uint64) [][]byte {
	elem := func(name string, kv ...string) *gnmipb.PathElem {
		e := &gnmipb.PathElem{Name: name}
		if len(kv) == 2 {
			e.Key = map[string]string{kv[0]: kv[1]}
		}
		return e
	}
	val := func(n uint64) *gnmipb.TypedValue {
		return &gnmipb.TypedValue{Value: &gnmipb.TypedValue_UintVal{UintVal: n}}
	}
	var queues, pfc gnmipb.Notification
	queues.Timestamp, pfc.Timestamp = time.Now().UnixNano(), time.Now().UnixNano()
	for q := range 8 {
		for i, leaf := range []string{"transmitted-packets", "transmitted-octets", "dropped-packets", "ecn-marked-packets"} {
			queues.Update = append(queues.Update, &gnmipb.Update{Path: &gnmipb.Path{Elem: []*gnmipb.PathElem{
				elem("qos"), elem("interfaces"), elem("interface", "interface-id", port), elem("output"), elem("queues"),
				elem("queue", "queue-name", fmt.Sprintf("unicast-%d", q)), elem("queue-statistics"), elem("aggregate-statistics"), elem(leaf)}},
				Val: val(round*1000 + uint64(q*10+i))})
		}
		for i, leaf := range []string{"pfc-pause-frames-generated", "pfc-pause-frames-received", "deadlock-recovery-occurrences"} {
			pfc.Update = append(pfc.Update, &gnmipb.Update{Path: &gnmipb.Path{Elem: []*gnmipb.PathElem{
				elem("qos"), elem("interfaces"), elem("interface", "interface-id", port), elem("pfc"), elem("statistics"),
				elem("pfc-priority", "index", fmt.Sprint(q)), elem(leaf)}},
				Val: val(round*100 + uint64(q*10+i))})
		}
	}
	return marshalAll(&queues, &pfc)
}

// sonicSample is one SAMPLE of a port as sonic-gnmi streams COUNTERS_DB:
// the port hash (the PFC counters among ~100 SAI_PORT_STAT fields of a
// Broadcom port), the Queues table (8 unicast queues x 6 stats) and Pfcwd.
func sonicSample(port string, round uint64) [][]byte {
	portStats := map[string]string{}
	for i := range 84 {
		portStats[fmt.Sprintf("SAI_PORT_STAT_IF_FIELD_%d", i)] = fmt.Sprint(round*7 + uint64(i))
	}
	for p := range 8 {
		portStats[fmt.Sprintf("SAI_PORT_STAT_PFC_%d_TX_PKTS", p)] = fmt.Sprint(round + uint64(p))
		portStats[fmt.Sprintf("SAI_PORT_STAT_PFC_%d_RX_PKTS", p)] = fmt.Sprint(round + uint64(p))
	}
	queues := map[string]any{}
	wd := map[string]any{}
	for q := range 8 {
		queues[fmt.Sprintf("%s:%d", port, q)] = map[string]string{
			"SAI_QUEUE_STAT_PACKETS": fmt.Sprint(round * 1000), "SAI_QUEUE_STAT_BYTES": fmt.Sprint(round * 9000),
			"SAI_QUEUE_STAT_DROPPED_PACKETS": fmt.Sprint(round), "SAI_QUEUE_STAT_DROPPED_BYTES": fmt.Sprint(round * 9),
			"SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS": fmt.Sprint(round * 3), "SAI_QUEUE_STAT_CURR_OCCUPANCY_BYTES": "0"}
		if q == 3 || q == 4 {
			wd[fmt.Sprintf("%s:%d", port, q)] = map[string]string{"PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED": "0", "PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED": "0",
				"PFC_WD_STATUS": "operational", "PFC_WD_QUEUE_STATS_TX_DROPPED_PACKETS": "0", "PFC_WD_QUEUE_STATS_RX_DROPPED_PACKETS": "0"}
		}
	}
	note := func(v any, elems ...string) *gnmipb.Notification {
		b, _ := json.Marshal(v)
		p := &gnmipb.Path{}
		for _, e := range elems {
			p.Elem = append(p.Elem, &gnmipb.PathElem{Name: e})
		}
		return &gnmipb.Notification{Timestamp: time.Now().UnixNano(), Prefix: &gnmipb.Path{Target: "COUNTERS_DB"},
			Update: []*gnmipb.Update{{Path: p, Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: b}}}}}
	}
	return marshalAll(note(portStats, "COUNTERS", port), note(queues, "COUNTERS", port, "Queues"), note(wd, "COUNTERS", port, "Pfcwd"))
}

func marshalAll(ns ...*gnmipb.Notification) [][]byte {
	var out [][]byte
	for _, n := range ns {
		b, err := proto.Marshal(&gnmipb.SubscribeResponse{Response: &gnmipb.SubscribeResponse_Update{Update: n}})
		if err != nil {
			panic(err)
		}
		out = append(out, b)
	}
	return out
}

// benchIngest measures one full sample round of the fabric: every
// switch's responses decoded from the wire format (as gRPC hands them
// over) and ingested, on one goroutine (= one core). The wire bytes are
// encoded once beforehand and replayed, so no sender's CPU is counted.
// It reports updates ingested per second, the cores the fabric needs at
// the 10 s interval (per 1,000 switches), the heap after a round and the
// /metrics scrape. raw: decode as watch does (ingestRaw); else with
// proto.Unmarshal + ingest, the way watch decoded before (the ratio of
// the two, measured in the same run, is what the fast path buys).
func benchIngest(b *testing.B, plat intent.Platform, switches int, sample func(string, uint64) [][]byte, raw bool) {
	f := benchFabric(b, switches, plat)
	w, err := New(Options{Fabric: f})
	if err != nil {
		b.Fatal(err)
	}
	// The wire bytes of one round, for every port (the same for every
	// switch: a stream carries no switch name), in two value variants.
	var wire [2][][]byte
	for r := range 2 {
		for p := range benchPorts {
			wire[r] = append(wire[r], sample(portName(plat, p), uint64(r+1))...)
		}
	}
	round := func(r int) (updates int) {
		var sb strings.Builder
		var sc rawScratch
		for _, t := range w.targets {
			for _, msg := range wire[r%2] {
				if raw {
					_, n, err := t.ctr.ingestRaw(msg, &sc)
					if err != nil {
						b.Fatal(err)
					}
					updates += n
					continue
				}
				var resp gnmipb.SubscribeResponse
				if err := proto.Unmarshal(msg, &resp); err != nil {
					b.Fatal(err)
				}
				updates += t.ctr.ingest(resp.GetUpdate(), &sb)
			}
		}
		return updates
	}
	round(0) // warm: first sight of every leaf
	for _, t := range w.targets {
		t.up.Store(true) // as a session's initial sync does: its counters are exported
	}
	runtime.GC()
	b.ResetTimer()
	updates := 0
	start, cpu0 := time.Now(), cpuTime()
	for i := range b.N {
		updates += round(i + 1)
	}
	el, cpu := time.Since(start), cpuTime()-cpu0
	b.StopTimer()
	// CPU time, not wall time: on a shared machine the wall clock also
	// counts the time other processes had the core.
	perRound := cpu.Seconds() / float64(b.N)
	b.ReportMetric(float64(updates)/cpu.Seconds(), "updates/cpu-s")
	b.ReportMetric(float64(updates)/el.Seconds(), "updates/wall-s")
	b.ReportMetric(perRound/benchInterval.Seconds()*1000/float64(switches), "cores/1000sw@10s")
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
	b.ReportMetric(float64(updates)/float64(b.N)/float64(switches), "updates/switch/round")
	b.ReportMetric(float64(ms.NumGC), "gc-cycles")

	// One scrape of /metrics as fabricctl watch serves it (Handler).
	reg := prometheus.NewRegistry()
	reg.MustRegister(w.Health())
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	rec := &countingWriter{header: http.Header{}}
	start, cpu0 = time.Now(), cpuTime()
	w.Handler(reg).ServeHTTP(rec, req)
	b.ReportMetric(time.Since(start).Seconds(), "scrape-wall-s")
	b.ReportMetric((cpuTime() - cpu0).Seconds(), "scrape-cpu-s")
	b.ReportMetric(float64(rec.lines), "lines")
	b.ReportMetric(float64(rec.bytes)/(1<<20), "scrape-MiB")
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.Sys)/(1<<20), "sys-MiB")
	b.ReportMetric(float64(maxRSS())/(1<<20), "peak-rss-MiB")
	if *collectScrape {
		// The same through client_golang's registry (one metric object per series).
		full := prometheus.NewRegistry()
		full.MustRegister(w)
		start = time.Now()
		promhttp.HandlerFor(full, promhttp.HandlerOpts{}).ServeHTTP(&countingWriter{header: http.Header{}}, req)
		b.ReportMetric(time.Since(start).Seconds(), "collect-scrape-s")
	}
}

// cpuTime is the process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// maxRSS is the process's peak resident set (every benchmark of the run
// so far: run one alone for its own peak).
func maxRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Maxrss << 10 // KiB on Linux
}

var collectScrape = flag.Bool("collect-scrape", false, "also time a scrape through client_golang's registry")

type countingWriter struct {
	header http.Header
	lines  int
	bytes  int
}

func (c *countingWriter) Header() http.Header { return c.header }
func (c *countingWriter) WriteHeader(int)     {}
func (c *countingWriter) Write(p []byte) (int, error) {
	c.bytes += len(p)
	for _, b := range p {
		if b == '\n' {
			c.lines++
		}
	}
	return len(p), nil
}

var _ io.Writer = (*countingWriter)(nil)

// BenchmarkWatchSRLinux2000: the fabric, SR Linux-style leaf-by-leaf
// streams. Run: go test ./validate/watch -run - -bench 'WatchSRLinux2000/raw' -benchtime 3x
// (decode=proto: the former decoding, for the ratio).
func BenchmarkWatchSRLinux2000(b *testing.B) {
	benchModes(b, intent.PlatformSRLinux, benchSwitches, srlSample)
}

// BenchmarkWatchSONiC200: SONiC's JSON hashes cost a JSON decode each; 200
// switches (the per-1,000 figure scales linearly).
func BenchmarkWatchSONiC200(b *testing.B) {
	benchModes(b, intent.PlatformSONiC, 200, sonicSample)
}

// BenchmarkWatchSRLinux200: the same per switch, 200 switches (quick runs, profiles).
func BenchmarkWatchSRLinux200(b *testing.B) {
	benchModes(b, intent.PlatformSRLinux, 200, srlSample)
}

func benchModes(b *testing.B, plat intent.Platform, switches int, sample func(string, uint64) [][]byte) {
	b.Run("decode=raw", func(b *testing.B) { benchIngest(b, plat, switches, sample, true) })
	b.Run("decode=proto", func(b *testing.B) { benchIngest(b, plat, switches, sample, false) })
}
