package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

// syncBuffer is a strings.Builder safe to read while watch writes its log.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// sessionCounter forwards TCP connections to a twin and counts them: each
// watch session with a switch is one connection.
func sessionCounter(t *testing.T, to string) (string, *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var n atomic.Int64
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			go func() {
				defer in.Close()
				out, err := net.Dial("tcp", to)
				if err != nil {
					return
				}
				defer out.Close()
				go func() { _, _ = io.Copy(out, in); out.Close() }()
				_, _ = io.Copy(in, out)
			}()
		}
	}()
	return l.Addr().String(), &n
}

// configMapDir lays out a directory as the kubelet mounts a ConfigMap:
// fabric.yaml -> ..data/fabric.yaml, ..data -> ..<version>; update swaps
// ..data to a new version with one rename, as the kubelet's atomic writer
// does.
type configMapDir struct {
	dir string
	n   int
}

func (c *configMapDir) update(t *testing.T, text string) {
	t.Helper()
	c.n++
	v := fmt.Sprintf("..2026_12_03_10_00_%02d.%d", c.n, c.n)
	if err := os.Mkdir(filepath.Join(c.dir, v), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.dir, v, "fabric.yaml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(v, filepath.Join(c.dir, "..data_tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(c.dir, "..data_tmp"), filepath.Join(c.dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if c.n == 1 {
		if err := os.Symlink(filepath.Join("..data", "fabric.yaml"), filepath.Join(c.dir, "fabric.yaml")); err != nil {
			t.Fatal(err)
		}
	}
}

func reloadLab(t *testing.T) (addrs map[string]string, sessions map[string]*atomic.Int64) {
	t.Helper()
	addrs, sessions = map[string]string{}, map[string]*atomic.Int64{}
	for name, plat := range map[string]intent.Platform{"leaf1": intent.PlatformSRLinux, "leaf2": intent.PlatformSONiC} {
		tw, err := twin.Start(twin.Options{Name: name, Platform: plat})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(tw.Close)
		port := map[string]string{"leaf1": "ethernet-1/1", "leaf2": "Ethernet0"}[name]
		if err := tw.Play(port, 3, twin.Traffic{Drops: 2}); err != nil {
			t.Fatal(err)
		}
		addrs[name], sessions[name] = sessionCounter(t, tw.Addr())
	}
	return addrs, sessions
}

func reloadText(addrs map[string]string, sws ...string) string {
	text := "apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\nmetadata: {name: watch}\npolicy: {preset: roce-lossless}\ninventory:\n  switches:\n"
	for _, sw := range sws {
		plat, port := "srlinux", "ethernet-1/1"
		if sw == "leaf2" {
			plat, port = "sonic", "Ethernet0"
		}
		text += fmt.Sprintf("    - name: %s\n      platform: %s\n      address: %q\n      tls: {insecure: true}\n      portDefaults: {speed: 100G, cable: 3m}\n      ports:\n        - name: %s\n",
			sw, plat, addrs[sw], port)
	}
	return text
}

// runWatch runs fabricctl watch until the test ends; it returns the
// metrics address and its log.
func runWatch(t *testing.T, args ...string) (string, *syncBuffer) {
	t.Helper()
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	errOut := &syncBuffer{}
	go func() {
		var out strings.Builder
		done <- run(ctx, append([]string{"watch", "--listen", addr, "--interval", "100ms", "--no-drift", "--log-level", "info"}, args...),
			strings.NewReader(""), &out, errOut)
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != ExitOK {
			t.Errorf("watch exited %d when stopped: %s", code, errOut)
		}
	})
	return addr, errOut
}

// waitMetrics polls /metrics until every want line is there and no
// unwanted one is.
func waitMetrics(t *testing.T, addr, what string, want, unwanted []string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var body string
	for time.Now().Before(deadline) {
		body, _ = httpGet("http://" + addr + "/metrics")
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(body, w)
		}
		for _, u := range unwanted {
			ok = ok && !strings.Contains(body, u)
		}
		if ok {
			return body
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s; /metrics:\n%s", what, body)
	return ""
}

func upLine(sw string) string { return `fabricctl_target_up{kind="switch",switch="` + sw + `"} 1` }

// TestWatchReloadsChangedIntent: the intent file is a ConfigMap mount; each
// update (a symlink swap) is reloaded without a restart: a switch added
// gets a session, one removed is dropped, the one in both keeps its single
// connection; a broken intent is refused with file:line in the log and the
// previous one keeps running.
func TestWatchReloadsChangedIntent(t *testing.T) {
	addrs, sessions := reloadLab(t)
	cm := &configMapDir{dir: t.TempDir()}
	cm.update(t, reloadText(addrs, "leaf1"))
	addr, log := runWatch(t, "-f", filepath.Join(cm.dir, "fabric.yaml"), "--reload-interval", "100ms")
	waitMetrics(t, addr, "leaf1 up", []string{upLine("leaf1")}, nil)

	cm.update(t, reloadText(addrs, "leaf1", "leaf2"))
	waitMetrics(t, addr, "leaf2 added", []string{upLine("leaf1"), upLine("leaf2"),
		`fabricctl_switch_queue_drops_total{switch="leaf2",port="Ethernet0",priority="3"} 2`,
		`fabricctl_watch_intent_reloads_total{result="ok"} 1`}, nil)

	cm.update(t, reloadText(addrs, "leaf2"))
	waitMetrics(t, addr, "leaf1 removed", []string{upLine("leaf2"), `fabricctl_watch_intent_reloads_total{result="ok"} 2`},
		[]string{`switch="leaf1"`})

	// A typo: refused, named by file and line; leaf2 streams on.
	broken := strings.Replace(reloadText(addrs, "leaf2"), "    - name: leaf2\n      platform: sonic\n      address:", "    - name: leaf2\n      platform: sonic\n      adress:", 1)
	cm.update(t, broken)
	waitMetrics(t, addr, "the broken intent refused", []string{upLine("leaf2"), `fabricctl_watch_intent_reloads_total{result="refused"} 1`}, nil)
	if !regexp.MustCompile(`reload refused.*fabric\.yaml:9:7: .*unknown field \\?"adress\\?"`).MatchString(log.String()) {
		t.Errorf("the log does not name the typo's file:line:\n%s", log)
	}
	if n := sessions["leaf2"].Load(); n != 1 {
		t.Errorf("leaf2 had %d sessions across three reloads, want 1", n)
	}
	if n := sessions["leaf1"].Load(); n != 1 {
		t.Errorf("leaf1 had %d sessions, want 1", n)
	}
}

// TestWatchReloadsOnSIGHUP: with polling off, a changed file is reloaded
// on SIGHUP (and SIGHUP does not end watch).
func TestWatchReloadsOnSIGHUP(t *testing.T) {
	addrs, sessions := reloadLab(t)
	file := filepath.Join(t.TempDir(), "fabric.yaml")
	if err := os.WriteFile(file, []byte(reloadText(addrs, "leaf1")), 0o644); err != nil {
		t.Fatal(err)
	}
	addr, log := runWatch(t, "-f", file, "--reload-interval", "0")
	waitMetrics(t, addr, "leaf1 up", []string{upLine("leaf1")}, nil)
	if err := os.WriteFile(file, []byte(reloadText(addrs, "leaf1", "leaf2")), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if body, _ := httpGet("http://" + addr + "/metrics"); strings.Contains(body, `switch="leaf2"`) {
		t.Fatalf("reloaded without SIGHUP although --reload-interval is 0")
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitMetrics(t, addr, "leaf2 after SIGHUP", []string{upLine("leaf1"), upLine("leaf2")}, nil)
	if !strings.Contains(log.String(), "intent reloaded") || !strings.Contains(log.String(), "SIGHUP") {
		t.Errorf("the log does not say SIGHUP reloaded the intent:\n%s", log)
	}
	if n := sessions["leaf1"].Load(); n != 1 {
		t.Errorf("leaf1 had %d sessions, want 1", n)
	}
}

// TestWatchRefusesIntentThatFailsCheck: an intent that parses but that
// fabricctl check finds an error in (ECN Kmin above Kmax) is refused on
// reload as a broken file is: counted, logged with its file:line, and the
// previous intent keeps running (the switch it would add gets no session).
func TestWatchRefusesIntentThatFailsCheck(t *testing.T) {
	addrs, sessions := reloadLab(t)
	file := filepath.Join(t.TempDir(), "fabric.yaml")
	if err := os.WriteFile(file, []byte(reloadText(addrs, "leaf1")), 0o644); err != nil {
		t.Fatal(err)
	}
	addr, log := runWatch(t, "-f", file, "--reload-interval", "100ms")
	waitMetrics(t, addr, "leaf1 up", []string{upLine("leaf1")}, nil)
	bad := strings.Replace(reloadText(addrs, "leaf1", "leaf2"), "policy: {preset: roce-lossless}\n",
		"policy:\n  preset: roce-lossless\n  classes:\n    - name: roce\n      ecn: {min: 2MB, max: 1MB}\n", 1)
	if err := os.WriteFile(file, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	waitMetrics(t, addr, "the intent that fails check refused",
		[]string{upLine("leaf1"), `fabricctl_watch_intent_reloads_total{result="refused"} 1`, `fabricctl_watch_intent_reloads_total{result="ok"} 0`},
		[]string{`switch="leaf2"`})
	if !regexp.MustCompile(`reload refused.*fabric\.yaml:\d+:\d+: error FC\d+`).MatchString(log.String()) {
		t.Errorf("the log does not name the check error's file:line:\n%s", log)
	}
	if n := sessions["leaf2"].Load(); n != 0 {
		t.Errorf("leaf2, only in the refused intent, had %d sessions", n)
	}
}

// TestWatchRefusesIntentThatFailsCheckAtStart: the same intent is refused
// when watch starts.
func TestWatchRefusesIntentThatFailsCheckAtStart(t *testing.T) {
	addrs, _ := reloadLab(t)
	file := filepath.Join(t.TempDir(), "fabric.yaml")
	bad := strings.Replace(reloadText(addrs, "leaf1"), "policy: {preset: roce-lossless}\n",
		"policy:\n  preset: roce-lossless\n  classes:\n    - name: roce\n      ecn: {min: 2MB, max: 1MB}\n", 1)
	if err := os.WriteFile(file, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCLI(t, t.Context(), "watch", "-f", file, "--listen", freeAddr(t))
	if code != ExitError || !regexp.MustCompile(`fabric\.yaml:\d+:\d+: error FC\d+`).MatchString(errOut) {
		t.Errorf("watch with an intent check refuses: exit %d, want %d naming file:line (%s)", code, ExitError, errOut)
	}
}
