package watch

import (
	"bufio"
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

// The end-to-end benchmark runs watch (the collector) in the benchmark's
// process and the traffic in another: a replay sender, this test binary
// started again with senderEnv set, that serves gNMI Subscribe and sends
// every stream the SR Linux sample bytes encoded once beforehand. The
// collector's CPU is then the process's own (getrusage RUSAGE_SELF): gRPC,
// HTTP/2, decoding, ingest and GC, and none of the sender's.
const senderEnv = "FABRICCTL_WATCH_REPLAY_SENDER"

func TestMain(m *testing.M) {
	if os.Getenv(senderEnv) != "" {
		os.Exit(replaySender())
	}
	os.Exit(m.Run())
}

// replayCodec sends a *transport.RawMessage as it is (bytes encoded
// beforehand) and decodes the client's requests with protobuf.
type replayCodec struct{}

func (replayCodec) Name() string { return "proto" }
func (replayCodec) Marshal(v any) (mem.BufferSlice, error) {
	if m, ok := v.(*transport.RawMessage); ok {
		return mem.BufferSlice{mem.SliceBuffer(m.B)}, nil
	}
	b, err := proto.Marshal(v.(proto.Message))
	return mem.BufferSlice{mem.SliceBuffer(b)}, err
}
func (replayCodec) Unmarshal(data mem.BufferSlice, v any) error {
	return proto.Unmarshal(data.Materialize(), v.(proto.Message))
}

// replaySender serves until its standard input closes (the benchmark
// ended or died). Each Subscribe gets a round of the 64 ports' samples at
// once (the initial sync), then one every sample interval, starting at a
// random phase as independent switches would.
func replaySender() int {
	var rounds [2][]*transport.RawMessage
	for r := range 2 {
		for p := range benchPorts {
			for _, b := range srlSample(portName(intent.PlatformSRLinux, p), uint64(r+1)) {
				rounds[r] = append(rounds[r], &transport.RawMessage{B: b})
			}
		}
	}
	sync := &transport.RawMessage{B: mustSync()}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	sopts := []grpc.ServerOption{grpc.ForceServerCodecV2(replayCodec{})}
	if dir := os.Getenv(senderEnv + "_TLS"); dir != "" {
		cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		sopts = append(sopts, grpc.Creds(credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}})))
	}
	srv := grpc.NewServer(append(sopts, grpc.UnknownServiceHandler(func(_ any, st grpc.ServerStream) error {
		var req gnmipb.SubscribeRequest
		if err := st.RecvMsg(&req); err != nil {
			return err
		}
		interval := time.Duration(req.GetSubscribe().GetSubscription()[0].GetSampleInterval())
		send := func(r int) error {
			for _, m := range rounds[r%2] {
				if err := st.SendMsg(m); err != nil {
					return err
				}
			}
			return nil
		}
		if err := send(0); err != nil {
			return err
		}
		if err := st.SendMsg(sync); err != nil {
			return err
		}
		select {
		case <-st.Context().Done():
			return nil
		case <-time.After(rand.N(interval)):
		}
		tk := time.NewTicker(interval)
		defer tk.Stop()
		for r := 1; ; r++ {
			if err := send(r); err != nil {
				return err
			}
			select {
			case <-st.Context().Done():
				return nil
			case <-tk.C:
			}
		}
	}))...)
	go func() { _ = srv.Serve(l) }()
	fmt.Printf("ADDR %s\n", l.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
	srv.Stop()
	return 0
}

func mustSync() []byte {
	b, err := proto.Marshal(&gnmipb.SubscribeResponse{Response: &gnmipb.SubscribeResponse_SyncResponse{SyncResponse: true}})
	if err != nil {
		panic(err)
	}
	return b
}

// BenchmarkWatchGRPC: watch itself (Watcher.Run, one gRPC connection per
// switch, plaintext or with WATCH_BENCH_TLS=1 TLS) ingesting N SR Linux
// switches x 64 ports every interval from the replay sender, measured over
// WATCH_BENCH_ROUNDS intervals after every switch synced. Defaults: the
// issue's 2,000 switches at 10 s.
//
//	go test ./validate/watch -run - -bench WatchGRPC -benchtime 1x
func BenchmarkWatchGRPC(b *testing.B) {
	switches, interval, rounds := benchSwitches, benchInterval, 3
	if v, err := strconv.Atoi(os.Getenv("WATCH_BENCH_SWITCHES")); err == nil {
		switches = v
	}
	if v, err := time.ParseDuration(os.Getenv("WATCH_BENCH_INTERVAL")); err == nil {
		interval = v
	}
	if v, err := strconv.Atoi(os.Getenv("WATCH_BENCH_ROUNDS")); err == nil {
		rounds = v
	}
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	sender := exec.Command(exe)
	sender.Env = append(os.Environ(), senderEnv+"=1")
	var ca string
	if os.Getenv("WATCH_BENCH_TLS") == "1" {
		pki, err := twin.NewPKI("bench")
		if err != nil {
			b.Fatal(err)
		}
		dir := b.TempDir()
		for name, data := range map[string][]byte{"ca.pem": pki.CAPEM, "cert.pem": pki.ServerCertPEM, "key.pem": pki.ServerKeyPEM} {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
				b.Fatal(err)
			}
		}
		ca = filepath.Join(dir, "ca.pem")
		sender.Env = append(sender.Env, senderEnv+"_TLS="+dir)
	}
	sender.Stderr = os.Stderr
	stdin, err := sender.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := sender.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := sender.Start(); err != nil {
		b.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "ADDR ")
	if err != nil || !ok {
		_ = stdin.Close()
		_ = sender.Wait()
		b.Fatalf("replay sender: %q, %v", line, err)
	}
	senderDone := false
	stopSender := func() *syscall.Rusage {
		if senderDone {
			return nil
		}
		senderDone = true
		_ = stdin.Close()
		_ = sender.Wait()
		ru, _ := sender.ProcessState.SysUsage().(*syscall.Rusage)
		return ru
	}
	defer stopSender()

	f := benchFabric(b, switches, intent.PlatformSRLinux)
	for i := range f.Switches {
		f.Switches[i].Address = addr
		f.Switches[i].TLS.Insecure = ca == ""
		f.Switches[i].TLS.CA = ca
	}
	detail, err := ParseDetail(os.Getenv("WATCH_BENCH_DETAIL"))
	if err != nil {
		b.Fatal(err)
	}
	w, err := New(Options{Fabric: f, SampleInterval: interval, Stale: 10 * interval, Detail: detail,
		Transport: transport.Options{Timeout: time.Minute, Attempts: 1}})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = w.Run(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()
	// Wait for every switch's initial sync.
	perRound := uint64(switches * benchPorts * 56)
	deadline := time.Now().Add(5*time.Minute + 2*interval)
	for w.Updates() < perRound || !allUp(w) {
		if time.Now().After(deadline) {
			b.Fatalf("after 5 minutes: %d updates, not every switch up", w.Updates())
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(interval) // the phases spread
	runtime.GC()
	b.ResetTimer()
	u0, cpu0, start := w.Updates(), cpuTime(), time.Now()
	time.Sleep(time.Duration(rounds) * interval)
	updates, cpu, el := w.Updates()-u0, cpuTime()-cpu0, time.Since(start)
	b.StopTimer()

	// One scrape while the streams go on.
	reg := prometheus.NewRegistry()
	reg.MustRegister(w.Health())
	rec := &countingWriter{header: http.Header{}}
	scrapeStart, scrapeCPU := time.Now(), cpuTime()
	w.Handler(reg).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	scrapeWall, scrapeCPUs := time.Since(scrapeStart), cpuTime()-scrapeCPU

	goroutines := runtime.NumGoroutine()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	heapInuse, sys, stacks := ms.HeapInuse, ms.Sys, ms.StackInuse
	runtime.GC() // what the streaming watch holds
	runtime.ReadMemStats(&ms)
	live := ms.HeapInuse
	if p := os.Getenv("WATCH_BENCH_HEAPPROFILE"); p != "" {
		// What the streaming watch holds (run with -test.memprofilerate=1
		// for every allocation).
		if f, err := os.Create(p); err == nil {
			_ = pprof.WriteHeapProfile(f)
			f.Close()
		}
	}
	cancel()
	<-done
	sru := stopSender()
	b.ReportMetric(float64(updates)/el.Seconds(), "updates/s")
	b.ReportMetric(float64(updates)/cpu.Seconds(), "updates/cpu-s")
	b.ReportMetric(cpu.Seconds()/el.Seconds(), "collector-cores")
	// What 1,000 switches need at the rate: 3,584 updates each
	// every 10 s, at the CPU cost per update measured here.
	need := float64(perRound/uint64(switches)) * 1000 / benchInterval.Seconds()
	b.ReportMetric(need/(float64(updates)/cpu.Seconds()), "cores/1000sw@10s")
	b.ReportMetric(float64(heapInuse)/(1<<20), "heap-MiB")
	b.ReportMetric(float64(sys)/(1<<20), "sys-MiB")
	b.ReportMetric(float64(stacks)/(1<<20), "stacks-MiB")
	b.ReportMetric(float64(goroutines)/float64(switches), "goroutines/switch")
	b.ReportMetric(float64(live)/(1<<20), "live-heap-MiB")
	b.ReportMetric(float64(maxRSS())/(1<<20), "peak-rss-MiB")
	b.ReportMetric(scrapeWall.Seconds(), "scrape-wall-s")
	b.ReportMetric(scrapeCPUs.Seconds(), "scrape-process-cpu-s") // ingest goes on meanwhile
	b.ReportMetric(float64(rec.lines), "lines")
	if sru != nil {
		b.ReportMetric(time.Duration(sru.Utime.Nano()+sru.Stime.Nano()).Seconds(), "sender-cpu-s(whole-run)")
	}
}

func allUp(w *Watcher) bool {
	for _, t := range w.targets {
		if !t.up.Load() {
			return false
		}
	}
	return true
}

// BenchmarkWatchScale measures issue 30's watch rows, each in a process of
// its own (BenchmarkWatchGRPC run again by this test binary, its sender in
// a third process), so that its peak RSS is the collector's alone, without
// a GOMEMLIMIT: one shard of 512 SR Linux switches x 64 ports at 10 s
// (goal 256 MiB), 2,000 switches (goal 1 GiB), and 2,000 over TLS (goal 1
// GiB). Each reports the collector's peak RSS and its ratio to the goal
// (x_goal_rss), one /metrics scrape's wall time during ingest and its
// ratio to the 1 s goal (x_goal_scrape), and the collector's cores.
// WATCH_BENCH_ROUNDS (default 2) and WATCH_BENCH_DETAIL pass through;
// WATCH_SCALE_CASES picks cases by name (comma-separated).
//
//	go test ./validate/watch -run - -bench WatchScale -benchtime 1x
func BenchmarkWatchScale(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	only := os.Getenv("WATCH_SCALE_CASES")
	for _, c := range []struct {
		name     string
		switches int
		tls      bool
		rssGoal  float64 // MiB
	}{
		{"shard512", 512, false, 256},
		{"fabric2000", 2000, false, 1024},
		{"fabric2000-tls", 2000, true, 1024},
	} {
		if only != "" && !slices.Contains(strings.Split(only, ","), c.name) {
			continue
		}
		b.Run(c.name, func(b *testing.B) {
			var m map[string]float64
			for b.Loop() {
				m = runCollector(b, exe, c.switches, c.tls)
			}
			rss := m["peak-rss-MiB"]
			b.ReportMetric(rss, "peak-rss-MiB")
			b.ReportMetric(rss/c.rssGoal, "x_goal_rss")
			b.ReportMetric(m["scrape-wall-s"], "scrape-wall-s")
			b.ReportMetric(m["scrape-wall-s"]/1, "x_goal_scrape")
			b.ReportMetric(m["lines"], "lines")
			b.ReportMetric(m["collector-cores"], "collector-cores")
			b.ReportMetric(m["cores/1000sw@10s"], "cores/1000sw@10s")
			b.ReportMetric(m["live-heap-MiB"], "live-heap-MiB")
		})
	}
}

// runCollector runs BenchmarkWatchGRPC in a new process and returns its
// metrics by unit.
func runCollector(b *testing.B, exe string, switches int, tls bool) map[string]float64 {
	cmd := exec.Command(exe, "-test.run=^$", "-test.bench=^BenchmarkWatchGRPC$", "-test.benchtime=1x")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOMEMLIMIT=") && !strings.HasPrefix(kv, "WATCH_BENCH_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	rounds := cmp.Or(os.Getenv("WATCH_BENCH_ROUNDS"), "2")
	cmd.Env = append(cmd.Env, "WATCH_BENCH_SWITCHES="+strconv.Itoa(switches), "WATCH_BENCH_ROUNDS="+rounds,
		"WATCH_BENCH_DETAIL="+os.Getenv("WATCH_BENCH_DETAIL"))
	if tls {
		cmd.Env = append(cmd.Env, "WATCH_BENCH_TLS=1")
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("collector process: %v\n%s", err, out)
	}
	for line := range strings.Lines(string(out)) {
		if !strings.HasPrefix(line, "BenchmarkWatchGRPC") {
			continue
		}
		// name, iterations, then value unit pairs.
		f := strings.Fields(line)
		m := map[string]float64{}
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				m[f[i+1]] = v
			}
		}
		return m
	}
	b.Fatalf("collector process printed no result:\n%s", out)
	return nil
}
