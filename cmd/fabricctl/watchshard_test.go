package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
	"github.com/fabricctl/fabricctl/validate/watch"
)

// TestWatchShardsBehindPrometheus (issue 30, done means): three `fabricctl
// watch --shard i/3` processes split six SR Linux twins between them, a
// real Prometheus scrapes all three as one job (job="fabricctl-watch", as
// examples/k8s's StatefulSet is scraped) with the example rules loaded
// unchanged, every switch is up exactly once across the shards, and a PFC
// watchdog detection on a switch of shard 2 fires
// FabricctlPFCWatchdogTriggered for that switch, from shard 2's target.
func TestWatchShardsBehindPrometheus(t *testing.T) {
	tool(t, "prometheus")
	const n, shards = 6, 3
	twins := map[string]*twin.Twin{}
	var sb strings.Builder
	sb.WriteString("apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\nmetadata: {name: shards}\npolicy: {preset: roce-lossless}\ninventory:\n  switches:\n")
	onShard := map[int][]string{}
	for i := range n {
		name := fmt.Sprintf("leaf%d", i+1)
		tw, err := twin.Start(twin.Options{Name: name, Platform: intent.PlatformSRLinux})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(tw.Close)
		if err := tw.Play("ethernet-1/1", 3, twin.Traffic{}); err != nil {
			t.Fatal(err)
		}
		twins[name] = tw
		onShard[watch.Of(name, shards)] = append(onShard[watch.Of(name, shards)], name)
		fmt.Fprintf(&sb, "    - name: %s\n      platform: srlinux\n      address: %q\n      tls: {insecure: true}\n      portDefaults: {speed: 100G, cable: 3m}\n      ports:\n        - name: ethernet-1/1\n", name, tw.Addr())
	}
	if len(onShard[2]) == 0 {
		t.Fatalf("no switch of %d hashes to shard 2: %v", n, onShard)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "fabric.yaml")
	if err := os.WriteFile(file, []byte(sb.String()), 0o600); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	addrs := make([]string, shards)
	done := make(chan int, shards)
	for i := range shards {
		addrs[i] = freeAddr(t)
		go func() {
			var out, errOut strings.Builder
			done <- run(ctx, []string{"watch", "-f", file, "--listen", addrs[i], "--shard", fmt.Sprintf("fabricctl-watch-%d/%d", i, shards),
				"--interval", "200ms", "--no-drift"}, strings.NewReader(""), &out, &errOut)
		}()
	}
	t.Cleanup(func() {
		cancel()
		for range shards {
			if code := <-done; code != ExitOK {
				t.Errorf("a watch shard exited %d when stopped", code)
			}
		}
	})

	base := startPrometheus(t, "../../examples/prometheus/fabricctl-rules.yaml", addrs[0], addrs[1], addrs[2])

	// query returns the result of an instant query (vector samples' labels
	// and values).
	type sample struct {
		Metric map[string]string `json:"metric"`
		Value  [2]any            `json:"value"`
	}
	query := func(q string) []sample {
		body, err := httpGet(base + "/api/v1/query?query=" + url.QueryEscape(q))
		if err != nil {
			return nil
		}
		var r struct {
			Data struct {
				Result []sample `json:"result"`
			} `json:"data"`
		}
		if json.Unmarshal([]byte(body), &r) != nil {
			return nil
		}
		return r.Data.Result
	}
	// waitUntil polls (a busy machine: generous, but it returns at once
	// when the condition holds).
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(3 * time.Minute)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("waited 3 minutes for %s", what)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}

	// Every switch up, once, on the shard its name hashes to.
	waitUntil("every switch up on its shard", func() bool {
		up := query(`fabricctl_target_up{job="fabricctl-watch",kind="switch"} == 1`)
		if len(up) != n {
			return false
		}
		for _, s := range up {
			if s.Metric["instance"] != addrs[watch.Of(s.Metric["switch"], shards)] {
				t.Fatalf("%s is up on %s, want shard %d (%s)", s.Metric["switch"], s.Metric["instance"], watch.Of(s.Metric["switch"], shards), addrs[watch.Of(s.Metric["switch"], shards)])
			}
		}
		return true
	})
	if dup := query(`count by (switch) (fabricctl_switch_pfc_watchdog_storms_total) > 1`); len(dup) != 0 {
		t.Errorf("switches exported by more than one shard: %v", dup)
	}

	// A PFC watchdog detection on shard 2's switch: the unchanged alert
	// fires for it, from shard 2.
	sw := onShard[2][0]
	if err := twins[sw].Play("ethernet-1/1", 3, twin.Traffic{Storms: 1}); err != nil {
		t.Fatal(err)
	}
	var fired sample
	waitUntil("FabricctlPFCWatchdogTriggered firing", func() bool {
		for _, s := range query(`ALERTS{alertname="FabricctlPFCWatchdogTriggered",alertstate="firing"}`) {
			fired = s
			return true
		}
		return false
	})
	if fired.Metric["switch"] != sw || fired.Metric["instance"] != addrs[2] || fired.Metric["port"] != "ethernet-1/1" || fired.Metric["priority"] != "3" {
		t.Errorf("alert fired with %v; want switch %s port ethernet-1/1 priority 3 from shard 2 (%s)", fired.Metric, sw, addrs[2])
	}
	if all := query(`ALERTS{alertname="FabricctlPFCWatchdogTriggered"}`); len(all) != 1 {
		t.Errorf("FabricctlPFCWatchdogTriggered: %d alerts, want 1 (only %s): %v", len(all), sw, all)
	}
}

// TestWatchPrioritiesLossless: --priorities lossless exports the per-port
// series of the lossless (3) and CNP (6) priorities and none of the
// default class's 0, which leaf1 reports as well; a bad value is a usage
// error.
func TestWatchPrioritiesLossless(t *testing.T) {
	file, twins := watchLab(t)
	if err := twins["leaf1"].Play("ethernet-1/1", 6, twin.Traffic{ECNMarked: 2}); err != nil {
		t.Fatal(err)
	}
	addr := startWatch(t, file, "--interval", "100ms", "--no-drift", "--priorities", "lossless")
	want := []string{`fabricctl_switch_queue_drops_total{switch="leaf1",port="ethernet-1/1",priority="3"}`,
		`fabricctl_switch_ecn_marked_packets_total{switch="leaf1",port="ethernet-1/1",priority="6"} 2`}
	var body string
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		body, _ = httpGet("http://" + addr + "/metrics")
		if strings.Contains(body, want[0]) && strings.Contains(body, want[1]) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("/metrics lacks %s", w)
		}
	}
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "fabricctl_switch_") && strings.Contains(line, `priority="0"`) {
			t.Errorf("--priorities lossless exports %s", line)
		}
	}
	if code, _, errOut := runCLI(t, t.Context(), "watch", "-f", file, "--priorities", "some"); code != ExitUsage {
		t.Errorf("--priorities some: exit %d, want %d (%s)", code, ExitUsage, errOut)
	}
	if code, _, errOut := runCLI(t, t.Context(), "watch", "-f", file, "--shard", "3/3"); code != ExitUsage || !strings.Contains(errOut, "--shard") {
		t.Errorf("--shard 3/3: exit %d, want %d naming --shard (%s)", code, ExitUsage, errOut)
	}
}

// TestWatchNonZero: --nonzero exports a per-port counter only once it is
// not zero: the twin's played ECN marks appear, and none of the counters
// the twins report as 0 (every other one).
func TestWatchNonZero(t *testing.T) {
	file, twins := watchLab(t)
	if err := twins["leaf1"].Play("ethernet-1/1", 6, twin.Traffic{ECNMarked: 2}); err != nil {
		t.Fatal(err)
	}
	addr := startWatch(t, file, "--interval", "100ms", "--no-drift", "--nonzero")
	want := `fabricctl_switch_ecn_marked_packets_total{switch="leaf1",port="ethernet-1/1",priority="6"} 2`
	var body string
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		body, _ = httpGet("http://" + addr + "/metrics")
		if strings.Contains(body, want) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(body, want) {
		t.Errorf("/metrics lacks %s", want)
	}
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "fabricctl_switch_") && strings.HasSuffix(line, " 0") {
			t.Errorf("--nonzero exports %s", line)
		}
	}
}
