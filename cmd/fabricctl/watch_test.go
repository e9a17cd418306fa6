package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
	"gopkg.in/yaml.v3"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

// watchLab starts an SR Linux and a SONiC twin with counters and writes an
// intent naming them.
func watchLab(t *testing.T) (file string, twins map[string]*twin.Twin) {
	t.Helper()
	twins = map[string]*twin.Twin{}
	for name, plat := range map[string]intent.Platform{"leaf1": intent.PlatformSRLinux, "leaf2": intent.PlatformSONiC} {
		tw, err := twin.Start(twin.Options{Name: name, Platform: plat})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(tw.Close)
		twins[name] = tw
	}
	for _, pp := range []struct {
		sw, port string
		prio     int
	}{{"leaf1", "ethernet-1/1", 3}, {"leaf1", "ethernet-1/1", 0}, {"leaf1", "ethernet-1/2", 3}, {"leaf2", "Ethernet0", 3}} {
		if err := twins[pp.sw].Play(pp.port, pp.prio, twin.Traffic{}); err != nil {
			t.Fatal(err)
		}
	}
	file = filepath.Join(t.TempDir(), "fabric.yaml")
	text := `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: watch}
policy: {preset: roce-lossless}
inventory:
  switches:
    - name: leaf1
      platform: srlinux
      address: "` + twins["leaf1"].Addr() + `"
      tls: {insecure: true}
      portDefaults: {speed: 100G, cable: 3m}
      ports:
        - name: ethernet-1/{1..2}
    - name: leaf2
      platform: sonic
      address: "` + twins["leaf2"].Addr() + `"
      tls: {insecure: true}
      portDefaults: {speed: 100G, cable: 3m}
      ports:
        - name: Ethernet0
`
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return file, twins
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startWatch runs `fabricctl watch` until the test ends and waits for its
// /metrics to show every switch up.
func startWatch(t *testing.T, file string, args ...string) string {
	t.Helper()
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var errOut strings.Builder
	go func() {
		var out strings.Builder
		done <- run(ctx, append([]string{"watch", "-f", file, "--listen", addr}, args...), strings.NewReader(""), &out, &errOut)
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != ExitOK {
			t.Errorf("watch exited %d when stopped", code)
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		body, err := httpGet("http://" + addr + "/metrics")
		if err == nil && strings.Contains(body, `fabricctl_target_up{kind="switch",switch="leaf1"} 1`) &&
			strings.Contains(body, `fabricctl_target_up{kind="switch",switch="leaf2"} 1`) {
			return addr
		}
		select {
		case code := <-done:
			t.Fatalf("watch exited %d: %s", code, errOut.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("watch never showed both switches up")
	return ""
}

func httpGet(u string) (string, error) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return string(b), fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return string(b), err
}

func TestWatchCommandServesMetrics(t *testing.T) {
	file, twins := watchLab(t)
	if err := twins["leaf2"].Play("Ethernet0", 3, twin.Traffic{Drops: 3, PauseRx: 11}); err != nil {
		t.Fatal(err)
	}
	addr := startWatch(t, file, "--interval", "100ms", "--no-drift")
	deadline := time.Now().Add(10 * time.Second)
	var body string
	for time.Now().Before(deadline) {
		body, _ = httpGet("http://" + addr + "/metrics")
		if strings.Contains(body, `fabricctl_switch_queue_drops_total{switch="leaf2",port="Ethernet0",priority="3"} 3`) &&
			strings.Contains(body, `fabricctl_switch_pfc_pause_frames_total{switch="leaf2",port="Ethernet0",priority="3",direction="rx"} 11`) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, want := range []string{
		`# TYPE fabricctl_switch_queue_drops_total counter`,
		`fabricctl_switch_queue_drops_total{switch="leaf2",port="Ethernet0",priority="3"} 3`,
		`fabricctl_switch_pfc_pause_frames_total{switch="leaf2",port="Ethernet0",priority="3",direction="rx"} 11`,
		`fabricctl_priority_info{class="roce",cnp="false",ecn="true",lossless="true",priority="3"} 1`,
		`fabricctl_build_info{goversion="go`,
		`fabricctl_switch_last_sample_timestamp_seconds{switch="leaf2"} `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(body, "fabricctl_drift_paths") {
		t.Error("--no-drift exports fabricctl_drift_paths")
	}
	if code, _, errOut := runCLI(t, t.Context(), "watch", "-f", file, "--interval", "1ms"); code != ExitUsage {
		t.Errorf("--interval 1ms: exit %d, want %d (%s)", code, ExitUsage, errOut)
	}
	if code, _, errOut := runCLI(t, t.Context(), "watch", "-f", file, "--switch", "nope"); code != ExitError || !strings.Contains(errOut, "nope") {
		t.Errorf("--switch nope: exit %d, want %d naming the switch (%s)", code, ExitError, errOut)
	}
	if code, _, errOut := runCLI(t, t.Context(), "watch", "-f", "../../examples/minimal.yaml"); code != ExitError || !strings.Contains(errOut, "no switches") {
		t.Errorf("an intent without switches: exit %d, want %d and 'no switches' (%s)", code, ExitError, errOut)
	}
	if code, _, errOut := runCLI(t, t.Context(), "watch", "-f", file, "--listen", addr); code != ExitError || !strings.Contains(errOut, "--listen") {
		t.Errorf("--listen on a busy address: exit %d, want %d naming --listen (%s)", code, ExitError, errOut)
	}
}

// tool finds a binary the test needs; with CI=true a missing one fails
// the test (scripts/install-deps.sh installs it), elsewhere it skips.
func tool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed (scripts/install-deps.sh installs Debian's prometheus package); CI=true needs it", name)
		}
		t.Skipf("%s is not installed (Debian package prometheus; scripts/install-deps.sh)", name)
	}
	return p
}

// startPrometheus runs the real Prometheus with the rule file rules,
// scraping targets every second as one job, fabricctl-watch (as
// examples/prometheus and examples/k8s scrape watch), after promtool
// checked its configuration. It stops when the test ends, showing its log
// if the test failed. It returns its base URL.
func startPrometheus(t *testing.T, rules string, targets ...string) string {
	t.Helper()
	prom, promtool := tool(t, "prometheus"), tool(t, "promtool")
	rules, err := filepath.Abs(rules)
	if err != nil {
		t.Fatal(err)
	}
	quoted := make([]string, len(targets))
	for i, a := range targets {
		quoted[i] = strconv.Quote(a)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, `global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: fabricctl-watch
    static_configs:
      - targets: [%s]
`, rules, strings.Join(quoted, ", ")), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "config", cfg).CombinedOutput(); err != nil {
		t.Fatalf("promtool check config: %v\n%s", err, out)
	}
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, prom, "--config.file="+cfg,
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--storage.tsdb.retention.time=1h",
		"--web.listen-address="+addr, "--log.level=warn")
	var logs lockedBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("prometheus log:\n%s", logs.String())
		}
	})
	return "http://" + addr
}

// shortFor rewrites every alert's for: to d (the rules file's own
// durations are minutes long).
func shortFor(t *testing.T, src, dst string, d string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, g := range doc["groups"].([]any) {
		for _, r := range g.(map[string]any)["rules"].([]any) {
			r.(map[string]any)["for"] = d
		}
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, out, 0o600); err != nil {
		t.Fatal(err)
	}
}

type promResult struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

func promQuery(t *testing.T, base, q string) []promResult {
	t.Helper()
	body, err := httpGet(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Fatalf("query %s: %v: %s", q, err, body)
	}
	var r struct {
		Status string `json:"status"`
		Data   struct {
			Result []promResult `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil || r.Status != "success" {
		t.Fatalf("query %s: %v: %s", q, err, body)
	}
	return r.Data.Result
}

func (r promResult) float(t *testing.T) float64 {
	s, _ := r.Value[1].(string)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("value %v: %v", r.Value, err)
	}
	return f
}

// TestWatchWithPrometheus runs a real Prometheus (Debian's package) that
// scrapes fabricctl watch against twins, with the example alert rules
// (for: shortened to 2s, evaluation every second), and asks its HTTP API:
// the series exist with the right labels, a counter under traffic grows,
// and a drop injected on the lossless priority fires
// FabricctlLosslessQueueDrops, while a drop on a lossy priority does not.
func TestWatchWithPrometheus(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prometheus")
	}
	file, twins := watchLab(t)
	watchAddr := startWatch(t, file, "--interval", "200ms", "--no-drift")

	rules := filepath.Join(t.TempDir(), "rules.yaml")
	shortFor(t, "../../examples/prometheus/fabricctl-rules.yaml", rules, "2s")
	base := startPrometheus(t, rules, watchAddr)
	waitProm := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			if cond() {
				return
			}
			time.Sleep(250 * time.Millisecond)
		}
		t.Fatalf("Prometheus: timed out waiting for %s", what)
	}
	waitProm("ready", func() bool { _, err := httpGet(base + "/-/ready"); return err == nil })

	// The series exist, with the right labels.
	waitProm("both switches up", func() bool {
		return len(promQuery(t, base, `fabricctl_target_up{job="fabricctl-watch"} == 1`)) == 2
	})
	waitProm("the drop series", func() bool {
		return len(promQuery(t, base, `fabricctl_switch_queue_drops_total`)) == 4
	})
	for _, r := range promQuery(t, base, `fabricctl_switch_queue_drops_total`) {
		m := r.Metric
		if m["job"] != "fabricctl-watch" || m["instance"] != watchAddr || m["switch"] == "" || m["port"] == "" || m["priority"] == "" {
			t.Errorf("series labels %v: want job, instance, switch, port, priority", m)
		}
		if len(m) != 6 { // __name__ + the five
			t.Errorf("series labels %v: unexpected labels", m)
		}
	}
	// A counter under traffic grows.
	stop, err := twins["leaf1"].Rate("ethernet-1/1", 3, twin.Traffic{PauseTx: 500, ECNMarked: 1000}, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	pauseQ := `fabricctl_switch_pfc_pause_frames_total{switch="leaf1",port="ethernet-1/1",priority="3",direction="tx"}`
	var first float64
	waitProm("pause frames counted", func() bool {
		r := promQuery(t, base, pauseQ)
		if len(r) == 1 {
			first = r[0].float(t)
		}
		return first > 0
	})
	waitProm("pause frames growing", func() bool {
		r := promQuery(t, base, pauseQ)
		return len(r) == 1 && r[0].float(t) > first
	})
	if r := promQuery(t, base, `rate(`+pauseQ+`[5s])`); len(r) != 1 || r[0].float(t) < 100 || r[0].float(t) > 1000 {
		t.Errorf("pause rate at 500/s: %v", r)
	}

	// No alert before the fault.
	alerts := `ALERTS{alertname="FabricctlLosslessQueueDrops"}`
	if r := promQuery(t, base, alerts); len(r) != 0 {
		t.Fatalf("lossless drop alert before any drop: %v", r)
	}
	// A drop on the lossy priority 0 does not alert; one on lossless 3 does.
	if err := twins["leaf1"].Play("ethernet-1/1", 0, twin.Traffic{Drops: 50}); err != nil {
		t.Fatal(err)
	}
	if err := twins["leaf2"].Play("Ethernet0", 3, twin.Traffic{Drops: 5}); err != nil {
		t.Fatal(err)
	}
	waitProm("FabricctlLosslessQueueDrops firing", func() bool {
		return len(promQuery(t, base, `ALERTS{alertname="FabricctlLosslessQueueDrops",alertstate="firing"}`)) > 0
	})
	r := promQuery(t, base, alerts)
	if len(r) != 1 {
		t.Fatalf("alerts %v: want exactly the one on leaf2 Ethernet0 priority 3", r)
	}
	m := r[0].Metric
	if m["switch"] != "leaf2" || m["port"] != "Ethernet0" || m["priority"] != "3" || m["class"] != "roce" || m["severity"] != "critical" {
		t.Errorf("alert labels %v: want switch=leaf2 port=Ethernet0 priority=3 class=roce severity=critical", m)
	}
}

// TestWatchMetricsSecurity: /metrics listens on loopback unless told
// otherwise, and --web-config (exporter-toolkit format) puts basic auth in
// front of it while /healthz stays open for probes.
func TestWatchMetricsSecurity(t *testing.T) {
	if def := newWatchCmd(&deps{}).Flags().Lookup("listen").DefValue; def != "127.0.0.1:9464" {
		t.Errorf("watch --listen defaults to %q, want 127.0.0.1:9464 (loopback only)", def)
	}
	file, _ := watchLab(t)
	h, err := bcrypt.GenerateFromPassword([]byte("scrape-pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	web := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(web, []byte("basic_auth_users:\n  prometheus: "+string(h)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan int, 1)
	go func() {
		var out, errOut strings.Builder
		done <- run(ctx, []string{"watch", "-f", file, "--listen", addr, "--web-config", web, "--no-drift"}, strings.NewReader(""), &out, &errOut)
	}()
	defer func() { cancel(); <-done }()
	for {
		if _, err := httpGet("http://" + addr + "/healthz"); err == nil {
			break
		}
		select {
		case code := <-done:
			t.Fatalf("watch exited %d", code)
		case <-time.After(50 * time.Millisecond):
		}
	}
	if _, err := httpGet("http://" + addr + "/metrics"); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("/metrics without credentials: %v, want 401", err)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/metrics", nil)
	req.SetBasicAuth("prometheus", "scrape-pw")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/metrics with the web-config's user: %s", resp.Status)
	}
	bad := filepath.Join(t.TempDir(), "bad.yml")
	if err := os.WriteFile(bad, []byte("basic_auth_users:\n  prometheus: plaintext\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, t.Context(), "watch", "-f", file, "--listen", freeAddr(t), "--web-config", bad); code != ExitUsage ||
		!strings.Contains(errOut, "bad.yml") || strings.Contains(errOut, "plaintext") {
		t.Errorf("--web-config with a plain password: exit %d, want %d naming the file, not the secret (%s)", code, ExitUsage, errOut)
	}
}
