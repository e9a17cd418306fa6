package watch_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/eos"
	"github.com/fabricctl/fabricctl/switchdrv/oc"
	"github.com/fabricctl/fabricctl/switchdrv/sonic"
	"github.com/fabricctl/fabricctl/switchdrv/srl"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
	"github.com/fabricctl/fabricctl/validate/watch"
)

// testIntent has one switch per platform; the roce-lossless preset uses
// priorities 0 (default), 3 (roce, lossless, ECN) and 6 (cnp).
const testIntent = `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: watch}
policy: {preset: roce-lossless}
inventory:
  switches:
    - name: leaf1
      platform: srlinux
      address: 127.0.0.1:1
      tls: {insecure: true}
      portDefaults: {speed: 100G, cable: 3m}
      ports:
        - name: ethernet-1/{1..2}
    - name: leaf2
      platform: sonic
      address: 127.0.0.1:1
      tls: {insecure: true}
      portDefaults: {speed: 100G, cable: 3m}
      ports:
        - name: Ethernet0
        - name: Ethernet4
    - name: leaf3
      platform: eos
      address: 127.0.0.1:1
      tls: {insecure: true}
      portDefaults: {speed: 100G, cable: 3m}
      ports:
        - name: Ethernet1/1
`

type lab struct {
	f     *intent.Fabric
	twins map[string]*twin.Twin
}

func newLab(t *testing.T) *lab {
	t.Helper()
	f, err := intent.Parse("watch.yaml", []byte(testIntent))
	if err != nil {
		t.Fatal(err)
	}
	l := &lab{f: f, twins: map[string]*twin.Twin{}}
	for i := range f.Switches {
		sw := &f.Switches[i]
		tw, err := twin.Start(twin.Options{Name: sw.Name, Platform: sw.Platform})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.twins[sw.Name].Close() })
		l.twins[sw.Name] = tw
		sw.Address = tw.Addr()
		switch sw.Platform {
		case intent.PlatformSRLinux:
			// The operator's interfaces, which the SR Linux plan checks.
			for _, p := range sw.Ports {
				path := &gnmipb.Path{Elem: []*gnmipb.PathElem{{Name: "srl_nokia-interfaces:interface", Key: map[string]string{"name": p.Name}}}}
				if err := tw.Put(path, srl.OperatorInterface(f, p)); err != nil {
					t.Fatal(err)
				}
			}
		case intent.PlatformSONiC:
			// The PFC watchdog started at boot: without PFC_WD the SONiC
			// plan reports the watchdog as lacking, which drift counts.
			tab := map[string]any{"GLOBAL": map[string]any{"POLL_INTERVAL": "200"}}
			for _, p := range sw.Ports {
				tab[p.Name] = map[string]any{"action": "drop", "detection_time": "200", "restoration_time": "200"}
			}
			if err := tw.Put(&gnmipb.Path{Origin: "sonic-db", Elem: []*gnmipb.PathElem{{Name: "CONFIG_DB"}, {Name: "localhost"}, {Name: "PFC_WD"}}}, tab); err != nil {
				t.Fatal(err)
			}
		}
	}
	return l
}

func registry(t testing.TB) *switchdrv.Registry {
	t.Helper()
	r := switchdrv.NewRegistry()
	for _, reg := range []func(*switchdrv.Registry) error{srl.Register, sonic.Register, eos.Register, oc.Register} {
		if err := reg(r); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func start(t *testing.T, o watch.Options) (*watch.Watcher, *prometheus.Registry) {
	t.Helper()
	if o.SampleInterval == 0 {
		o.SampleInterval = 50 * time.Millisecond
	}
	o.BackoffMin, o.BackoffMax = 20*time.Millisecond, 200*time.Millisecond
	o.Transport = transport.Options{Timeout: 5 * time.Second, Attempts: 1}
	if testing.Verbose() {
		o.Log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	w, err := watch.New(o)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(w); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = w.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return w, reg
}

// series returns "name{k=v,...}" -> value for every series gathered.
func series(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			out[seriesKey(mf.GetName(), m)] = value(m)
		}
	}
	return out
}

func seriesKey(name string, m *dto.Metric) string {
	var ls []string
	for _, lp := range m.GetLabel() { // sorted by name
		ls = append(ls, lp.GetName()+"="+lp.GetValue())
	}
	return name + "{" + strings.Join(ls, ",") + "}"
}

func value(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	}
	return 0
}

// healthReg is a registry of w's health metrics, as watch serves them
// beside Handler's counters.
func healthReg(t *testing.T, w *watch.Watcher) *prometheus.Registry {
	t.Helper()
	r := prometheus.NewPedanticRegistry()
	if err := r.Register(w.Health()); err != nil {
		t.Fatal(err)
	}
	return r
}

// waitFor polls until cond holds on the gathered series.
func waitFor(t *testing.T, reg *prometheus.Registry, what string, cond func(map[string]float64) bool) map[string]float64 {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var s map[string]float64
	for time.Now().Before(deadline) {
		if s = series(t, reg); cond(s) {
			return s
		}
		time.Sleep(20 * time.Millisecond)
	}
	var keys []string
	for k, v := range s {
		keys = append(keys, fmt.Sprintf("%s %g", k, v))
	}
	t.Fatalf("timed out waiting for %s; series:\n%s", what, strings.Join(keys, "\n"))
	return nil
}

func drops(sw, port string, prio int) string {
	return fmt.Sprintf("fabricctl_switch_queue_drops_total{port=%s,priority=%d,switch=%s}", port, prio, sw)
}

func pause(sw, port string, prio int, dir string) string {
	return fmt.Sprintf("fabricctl_switch_pfc_pause_frames_total{direction=%s,port=%s,priority=%d,switch=%s}", dir, port, prio, sw)
}

// TestSeriesFollowTraffic: traffic played through each platform's twin
// shows up with the right names and labels, and the values grow with the
// traffic. Ports outside the inventory and priorities no class uses are
// not exported (bounded cardinality).
func TestSeriesFollowTraffic(t *testing.T) {
	l := newLab(t)
	play := func(sw, port string, prio int, tr twin.Traffic) {
		t.Helper()
		if err := l.twins[sw].Play(port, prio, tr); err != nil {
			t.Fatal(err)
		}
	}
	play("leaf1", "ethernet-1/1", 3, twin.Traffic{Drops: 2, ECNMarked: 30, PauseTx: 7, PauseRx: 1, Storms: 1})
	play("leaf2", "Ethernet0", 3, twin.Traffic{Drops: 4, ECNMarked: 50, PauseTx: 9, Storms: 2})
	play("leaf3", "Ethernet1/1", 3, twin.Traffic{Drops: 1, ECNMarked: 5})
	play("leaf1", "ethernet-1/9", 3, twin.Traffic{Drops: 100}) // not in the inventory
	play("leaf2", "Ethernet0", 5, twin.Traffic{Drops: 100})    // priority 5: no class
	_, reg := start(t, watch.Options{Fabric: l.f})
	want := map[string]float64{
		"fabricctl_target_up{kind=switch,switch=leaf1}":                                         1,
		"fabricctl_target_up{kind=switch,switch=leaf2}":                                         1,
		"fabricctl_target_up{kind=switch,switch=leaf3}":                                         1,
		drops("leaf1", "ethernet-1/1", 3):                                                       2,
		"fabricctl_switch_ecn_marked_packets_total{port=ethernet-1/1,priority=3,switch=leaf1}":  30,
		pause("leaf1", "ethernet-1/1", 3, "tx"):                                                 7,
		pause("leaf1", "ethernet-1/1", 3, "rx"):                                                 1,
		"fabricctl_switch_pfc_watchdog_storms_total{port=ethernet-1/1,priority=3,switch=leaf1}": 1,
		drops("leaf2", "Ethernet0", 3):                                                          4,
		"fabricctl_switch_ecn_marked_packets_total{port=Ethernet0,priority=3,switch=leaf2}":     50,
		pause("leaf2", "Ethernet0", 3, "tx"):                                                    9,
		"fabricctl_switch_pfc_watchdog_storms_total{port=Ethernet0,priority=3,switch=leaf2}":    2,
		drops("leaf3", "Ethernet1/1", 3):                                                        1,
		"fabricctl_switch_ecn_marked_packets_total{port=Ethernet1/1,priority=3,switch=leaf3}":   5,
		"fabricctl_priority_info{class=roce,cnp=false,ecn=true,lossless=true,priority=3}":       1,
	}
	s := waitFor(t, reg, "the played counters", func(s map[string]float64) bool {
		for k, v := range want {
			if s[k] != v {
				return false
			}
		}
		return true
	})
	for k := range s {
		if strings.Contains(k, "ethernet-1/9") || strings.Contains(k, "priority=5") {
			t.Errorf("series %s: a port outside the inventory or a priority no class uses", k)
		}
		// EOS (OpenConfig queues) has no PFC counters: no series, not a 0.
		if strings.Contains(k, "switch=leaf3") && strings.Contains(k, "pfc") {
			t.Errorf("series %s: EOS reports no PFC counters over OpenConfig", k)
		}
	}
	play("leaf1", "ethernet-1/1", 3, twin.Traffic{Drops: 3, PauseTx: 10})
	play("leaf2", "Ethernet0", 3, twin.Traffic{Drops: 1})
	waitFor(t, reg, "the counters to grow", func(s map[string]float64) bool {
		return s[drops("leaf1", "ethernet-1/1", 3)] == 5 && s[pause("leaf1", "ethernet-1/1", 3, "tx")] == 17 &&
			s[drops("leaf2", "Ethernet0", 3)] == 5
	})
}

// TestDisconnectAndRecover: a switch that goes away shows target_up 0
// while the others keep streaming, and exports no counters while it is down
// (Prometheus marks them stale: rate() shows a gap, not a flat 0), through
// Collect and Handler alike; its last-sample time stays. When it is back,
// watch reconnects on its own.
func TestDisconnectAndRecover(t *testing.T) {
	l := newLab(t)
	if err := l.twins["leaf1"].Play("ethernet-1/1", 3, twin.Traffic{Drops: 1}); err != nil {
		t.Fatal(err)
	}
	w, reg := start(t, watch.Options{Fabric: l.f})
	up := func(sw string) string { return "fabricctl_target_up{kind=switch,switch=" + sw + "}" }
	lastSample := func(sw string) string { return "fabricctl_switch_last_sample_timestamp_seconds{switch=" + sw + "}" }
	s := waitFor(t, reg, "all up", func(s map[string]float64) bool {
		return s[up("leaf1")] == 1 && s[up("leaf2")] == 1 && s[up("leaf3")] == 1 && s[drops("leaf1", "ethernet-1/1", 3)] == 1 &&
			s[lastSample("leaf1")] > 0
	})
	if ts := s[lastSample("leaf1")]; ts < float64(time.Now().Add(-time.Hour).Unix()) || ts > float64(time.Now().Add(time.Minute).Unix()) {
		t.Errorf("leaf1's last sample at %g, not about now (%d)", ts, time.Now().Unix())
	}
	addr := l.twins["leaf1"].Addr()
	l.twins["leaf1"].Close()
	s = waitFor(t, reg, "leaf1 down, the others up", func(s map[string]float64) bool {
		return s[up("leaf1")] == 0 && s[up("leaf2")] == 1 && s[up("leaf3")] == 1
	})
	for k := range s {
		if strings.HasPrefix(k, "fabricctl_switch_") && strings.Contains(k, "switch=leaf1}") && !strings.HasPrefix(k, "fabricctl_switch_last_sample") {
			t.Errorf("leaf1 is down but exports %s", k)
		}
	}
	if s[lastSample("leaf1")] == 0 {
		t.Errorf("leaf1's last-sample time is gone while it is down")
	}
	h := healthReg(t, w)
	rec := httptest.NewRecorder()
	w.Handler(h).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if body := rec.Body.String(); strings.Contains(body, `fabricctl_switch_queue_drops_total{switch="leaf1"`) {
		t.Errorf("Handler: leaf1 is down but its counters are written")
	} else if !strings.Contains(body, `fabricctl_switch_last_sample_timestamp_seconds{switch="leaf1"}`) {
		t.Errorf("Handler: no last-sample time of leaf1:\n%s", body)
	}
	// The others still stream: leaf2's counter moves while leaf1 is down.
	if err := l.twins["leaf2"].Play("Ethernet4", 0, twin.Traffic{Drops: 6}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, reg, "leaf2 streaming while leaf1 is down", func(s map[string]float64) bool {
		return s[drops("leaf2", "Ethernet4", 0)] == 6
	})
	tw, err := twin.Start(twin.Options{Name: "leaf1", Platform: intent.PlatformSRLinux, Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	l.twins["leaf1"] = tw
	if err := tw.Play("ethernet-1/1", 3, twin.Traffic{Drops: 9}); err != nil {
		t.Fatal(err)
	}
	s = waitFor(t, reg, "leaf1 back", func(s map[string]float64) bool {
		return s[up("leaf1")] == 1 && s[drops("leaf1", "ethernet-1/1", 3)] == 9
	})
	if s["fabricctl_target_reconnects_total{kind=switch,switch=leaf1}"] < 1 {
		t.Errorf("reconnects of leaf1 = %g, want >= 1", s["fabricctl_target_reconnects_total{kind=switch,switch=leaf1}"])
	}
}

// TestHungSwitchLooksDown: a switch whose management plane hangs (no
// samples, connection open) is down after the stale time, not frozen at
// its last values.
func TestHungSwitchLooksDown(t *testing.T) {
	l := newLab(t)
	for sw, port := range map[string]string{"leaf1": "ethernet-1/1", "leaf2": "Ethernet0", "leaf3": "Ethernet1/1"} {
		if err := l.twins[sw].Play(port, 3, twin.Traffic{}); err != nil {
			t.Fatal(err)
		}
	}
	_, reg := start(t, watch.Options{Fabric: l.f, Stale: 300 * time.Millisecond})
	// Healthy switches stream on; only the hung one goes down.
	time.Sleep(600 * time.Millisecond)
	if s := series(t, reg); s["fabricctl_target_reconnects_total{kind=switch,switch=leaf1}"] != 0 {
		t.Fatalf("a healthy switch reconnected: %v", s)
	}
	up := "fabricctl_target_up{kind=switch,switch=leaf2}"
	waitFor(t, reg, "leaf2 up", func(s map[string]float64) bool { return s[up] == 1 })
	l.twins["leaf2"].Hang(true) // open streams go quiet, new RPCs hang
	waitFor(t, reg, "leaf2 down", func(s map[string]float64) bool { return s[up] == 0 })
	l.twins["leaf2"].Hang(false)
	waitFor(t, reg, "leaf2 up again", func(s map[string]float64) bool { return s[up] == 1 })
}

// TestDriftCountsLacks (issue 27 item 3): what a switch lacks that apply
// cannot write is drift for watch as for diff: a SONiC switch whose PFC
// watchdog was never started (no PFC_WD) keeps drift 1 after apply.
func TestDriftCountsLacks(t *testing.T) {
	l := newLab(t)
	if err := l.twins["leaf2"].Delete(&gnmipb.Path{Origin: "sonic-db", Elem: []*gnmipb.PathElem{{Name: "CONFIG_DB"}, {Name: "localhost"}, {Name: "PFC_WD"}}}); err != nil {
		t.Fatal(err)
	}
	eng := &switchdrv.Engine{Registry: registry(t), BackupDir: t.TempDir(), Parallel: 4,
		Transport: transport.Options{Timeout: 10 * time.Second, Attempts: 1}}
	_, reg := start(t, watch.Options{Fabric: l.f, Switches: []string{"leaf2"}, Engine: eng, DriftInterval: time.Hour,
		DriftDebounce: 50 * time.Millisecond})
	drift := "fabricctl_drift_paths{kind=switch,switch=leaf2}"
	waitFor(t, reg, "drift on the empty switch", func(s map[string]float64) bool { return s[drift] > 0 })
	ctx := context.Background()
	p, err := eng.Plan(ctx, l.f, []string{"leaf2"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Apply(ctx, l.f, p); err != nil {
		t.Fatal(err)
	}
	waitFor(t, reg, "drift 1 (the watchdog) after apply", func(s map[string]float64) bool { return s[drift] == 1 })
}

// TestDriftOnChange: drift is what fabricctl diff counts; after apply it
// is 0, and a change on the switch is noticed through ON_CHANGE (the
// periodic re-check is an hour away). SR Linux (OpenConfig-style paths) and
// SONiC (CONFIG_DB under origin sonic-db).
func TestDriftOnChange(t *testing.T) {
	for _, tc := range []struct{ sw, path string }{
		{"leaf1", "/qos/interfaces/interface[interface-id=ethernet-1/1]"},
		{"leaf2", "sonic-db:/CONFIG_DB/localhost/PORT_QOS_MAP/Ethernet0"},
	} {
		t.Run(tc.sw, func(t *testing.T) {
			l := newLab(t)
			eng := &switchdrv.Engine{Registry: registry(t), BackupDir: t.TempDir(), Parallel: 4,
				Transport: transport.Options{Timeout: 10 * time.Second, Attempts: 1}}
			_, reg := start(t, watch.Options{Fabric: l.f, Switches: []string{tc.sw}, Engine: eng, DriftInterval: time.Hour,
				DriftDebounce: 50 * time.Millisecond})
			drift := "fabricctl_drift_paths{kind=switch,switch=" + tc.sw + "}"
			s := waitFor(t, reg, "drift on the empty switch", func(s map[string]float64) bool { return s[drift] > 0 })
			before := s[drift]
			ctx := context.Background()
			p, err := eng.Plan(ctx, l.f, []string{tc.sw})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := eng.Apply(ctx, l.f, p); err != nil {
				t.Fatal(err)
			}
			waitFor(t, reg, fmt.Sprintf("drift 0 after apply (was %g)", before), func(s map[string]float64) bool { return s[drift] == 0 })
			// Someone changes a subtree fabricctl owns on the switch.
			path, err := transport.ParsePath(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.twins[tc.sw].Delete(path); err != nil {
				t.Fatal(err)
			}
			waitFor(t, reg, "drift after an out-of-band change", func(s map[string]float64) bool { return s[drift] > 0 })
		})
	}
}

// connCounter forwards TCP connections to a twin and counts them: each
// watch session dials its switch anew, so the count is the number of
// sessions the switch has had.
type connCounter struct {
	addr  string
	conns atomic.Int64
}

func countConns(t *testing.T, to string) *connCounter {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &connCounter{addr: l.Addr().String()}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			c.conns.Add(1)
			go func() {
				out, err := net.Dial("tcp", to)
				if err != nil {
					in.Close()
					return
				}
				go func() { _, _ = io.Copy(out, in); out.Close() }()
				_, _ = io.Copy(in, out)
				in.Close()
			}()
		}
	}()
	return c
}

// reloadIntent is testIntent's switches (those named), each reached
// through its connection counter, with extra text where asked.
func reloadIntent(t *testing.T, l *lab, proxies map[string]*connCounter, head string, sws ...string) *intent.Fabric {
	t.Helper()
	text := "apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\nmetadata: {name: watch}\npolicy: {preset: roce-lossless}\n" + head +
		"inventory:\n  switches:\n"
	for _, sw := range sws {
		name, extra, _ := strings.Cut(sw, "+")
		var plat intent.Platform
		var ports []string
		for _, s := range l.f.Switches {
			if s.Name == name {
				plat = s.Platform
				for _, p := range s.Ports {
					ports = append(ports, p.Name)
				}
			}
		}
		if extra != "" {
			ports = append(ports, extra)
		}
		text += fmt.Sprintf("    - name: %s\n      platform: %s\n      address: %q\n      tls: {insecure: true}\n      portDefaults: {speed: 100G, cable: 3m}\n      ports:\n",
			name, plat, proxies[name].addr)
		for _, p := range ports {
			text += "        - name: " + p + "\n"
		}
	}
	f, err := intent.Parse("watch.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestReload: a new intent adds and removes switches while the others keep
// their session (one connection each, counters still moving); an intent
// only moved around in the file restarts nothing; a switch whose ports
// changed is restarted; a bad intent changes nothing.
func TestReload(t *testing.T) {
	l := newLab(t)
	proxies := map[string]*connCounter{}
	for name, tw := range l.twins {
		proxies[name] = countConns(t, tw.Addr())
		if err := tw.Play(map[string]string{"leaf1": "ethernet-1/1", "leaf2": "Ethernet0", "leaf3": "Ethernet1/1"}[name], 3, twin.Traffic{Drops: 1}); err != nil {
			t.Fatal(err)
		}
	}
	w, reg := start(t, watch.Options{Fabric: reloadIntent(t, l, proxies, "", "leaf1", "leaf2")})
	up := func(sw string) string { return "fabricctl_target_up{kind=switch,switch=" + sw + "}" }
	waitFor(t, reg, "leaf1 and leaf2 up", func(s map[string]float64) bool {
		return s[up("leaf1")] == 1 && s[up("leaf2")] == 1 && s[drops("leaf1", "ethernet-1/1", 3)] == 1
	})

	r, err := w.Reload(reloadIntent(t, l, proxies, "", "leaf1", "leaf3"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (watch.Reloaded{Added: []string{"leaf3"}, Removed: []string{"leaf2"}, Kept: []string{"leaf1"}}); !reflect.DeepEqual(r, want) {
		t.Errorf("reload: %+v, want %+v", r, want)
	}
	if err := l.twins["leaf1"].Play("ethernet-1/1", 3, twin.Traffic{Drops: 4}); err != nil {
		t.Fatal(err)
	}
	s := waitFor(t, reg, "leaf3 up, leaf2 gone, leaf1 still counting", func(s map[string]float64) bool {
		_, leaf2 := s[up("leaf2")]
		return s[up("leaf3")] == 1 && !leaf2 && s[drops("leaf3", "Ethernet1/1", 3)] == 1 && s[drops("leaf1", "ethernet-1/1", 3)] == 5
	})
	for k := range s {
		if strings.Contains(k, "leaf2") {
			t.Errorf("series %s of a removed switch", k)
		}
	}
	if n := proxies["leaf1"].conns.Load(); n != 1 {
		t.Errorf("leaf1 had %d sessions; a reload that keeps it must not reconnect it", n)
	}

	// The same switches written elsewhere in the file: nothing restarts.
	r, err = w.Reload(reloadIntent(t, l, proxies, "# moved\n\n\n", "leaf3", "leaf1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Kept) != 2 || len(r.Added)+len(r.Removed)+len(r.Restarted) != 0 {
		t.Errorf("moving the switches in the file: %+v, want both kept", r)
	}

	// A port added to leaf1: its session restarts, leaf3's does not.
	r, err = w.Reload(reloadIntent(t, l, proxies, "", "leaf1+ethernet-1/3", "leaf3"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (watch.Reloaded{Restarted: []string{"leaf1"}, Kept: []string{"leaf3"}}); !reflect.DeepEqual(r, want) {
		t.Errorf("reload: %+v, want %+v", r, want)
	}
	if err := l.twins["leaf1"].Play("ethernet-1/3", 3, twin.Traffic{Drops: 2}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, reg, "the new port", func(s map[string]float64) bool {
		return s[up("leaf1")] == 1 && s[drops("leaf1", "ethernet-1/3", 3)] == 2
	})
	if n := proxies["leaf1"].conns.Load(); n != 2 {
		t.Errorf("leaf1 had %d sessions, want 2 (restarted once)", n)
	}
	if n := proxies["leaf3"].conns.Load(); n != 1 {
		t.Errorf("leaf3 had %d sessions, want 1", n)
	}

	// --switch names one that the new intent lacks: refused, nothing changes.
	bad, err := intent.Parse("watch.yaml", []byte("apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\nmetadata: {name: watch}\npolicy: {preset: roce-lossless}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Reload(bad); err == nil || !strings.Contains(err.Error(), "no switches") {
		t.Errorf("reload to an intent without switches: %v, want an error saying so", err)
	}
	time.Sleep(100 * time.Millisecond)
	if s := series(t, reg); s[up("leaf1")] != 1 || s[up("leaf3")] != 1 {
		t.Errorf("after a refused reload: leaf1 up %g, leaf3 up %g", s[up("leaf1")], s[up("leaf3")])
	}
}

// TestReloadDrift: a reload that changes only values (the switch MTU)
// keeps the switch's session, and drift compares the switch with the new
// intent at once (the periodic re-check is an hour away).
func TestReloadDrift(t *testing.T) {
	l := newLab(t)
	eng := &switchdrv.Engine{Registry: registry(t), BackupDir: t.TempDir(), Parallel: 4,
		Transport: transport.Options{Timeout: 10 * time.Second, Attempts: 1}}
	w, reg := start(t, watch.Options{Fabric: l.f, Switches: []string{"leaf1"}, Engine: eng, DriftInterval: time.Hour,
		DriftDebounce: 50 * time.Millisecond})
	drift := "fabricctl_drift_paths{kind=switch,switch=leaf1}"
	waitFor(t, reg, "a first drift check", func(s map[string]float64) bool { _, ok := s[drift]; return ok })
	ctx := context.Background()
	p, err := eng.Plan(ctx, l.f, []string{"leaf1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Apply(ctx, l.f, p); err != nil {
		t.Fatal(err)
	}
	waitFor(t, reg, "drift 0 after apply", func(s map[string]float64) bool { return s[drift] == 0 })

	f2, err := intent.Parse("watch.yaml", []byte(strings.Replace(testIntent, "policy: {preset: roce-lossless}", "policy: {preset: roce-lossless, mtu: 4200}", 1)))
	if err != nil {
		t.Fatal(err)
	}
	for i := range f2.Switches {
		f2.Switches[i].Address = l.twins[f2.Switches[i].Name].Addr()
	}
	r, err := w.Reload(f2)
	if err != nil {
		t.Fatal(err)
	}
	if want := (watch.Reloaded{Kept: []string{"leaf1"}}); !reflect.DeepEqual(r, want) {
		t.Errorf("reload: %+v, want %+v", r, want)
	}
	waitFor(t, reg, "drift against the new MTU", func(s map[string]float64) bool { return s[drift] > 0 })
	if s := series(t, reg); s["fabricctl_target_reconnects_total{kind=switch,switch=leaf1}"] != 0 {
		t.Errorf("leaf1 reconnected: %v", s["fabricctl_target_reconnects_total{kind=switch,switch=leaf1}"])
	}
}
