package labctl

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/sim"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

func sonicCounter(t *testing.T, tw *twin.Twin, port, name string) string {
	t.Helper()
	p := &gnmipb.Path{Target: "COUNTERS_DB", Elem: []*gnmipb.PathElem{{Name: "COUNTERS"}, {Name: port}, {Name: name}}}
	v, ok := tw.Value(p)
	if !ok {
		return ""
	}
	s, _ := v.(string)
	return s
}

// TestControlSocketPlays: a lab serving its twins on control.sock (mode
// 0600) takes plays from a client in the platform's own counters, all or
// none: a play naming a switch the lab does not have changes nothing.
func TestControlSocketPlays(t *testing.T) {
	tw, err := twin.Start(twin.Options{Name: "leaf1", Platform: intent.PlatformSONiC})
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	dir := t.TempDir()
	srv, err := Serve(dir, NewLab([]*twin.Twin{tw}))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	st, err := os.Stat(filepath.Join(dir, SocketName))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 || st.Mode().Type() != os.ModeSocket {
		t.Errorf("control.sock mode %v, want a socket with 0600", st.Mode())
	}
	if _, err := Serve(dir, NewLab(nil)); err == nil || !strings.Contains(err.Error(), "another lab") {
		t.Errorf("a second lab on the same socket: %v", err)
	}
	c, err := Dial(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := c.Play(ctx, []Play{{Switch: "leaf1", Port: "Ethernet0", Priority: 3, Traffic: twin.Traffic{PauseTx: 7, Drops: 2}}}); err != nil {
		t.Fatal(err)
	}
	if got := sonicCounter(t, tw, "Ethernet0", "SAI_PORT_STAT_PFC_3_TX_PKTS"); got != "7" {
		t.Errorf("PFC 3 tx after play: %q, want 7", got)
	}
	err = c.Play(ctx, []Play{{Switch: "leaf1", Port: "Ethernet0", Priority: 3, Traffic: twin.Traffic{PauseTx: 1}}, {Switch: "nope", Port: "x"}})
	if err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("play naming an unknown switch: %v", err)
	}
	if got := sonicCounter(t, tw, "Ethernet0", "SAI_PORT_STAT_PFC_3_TX_PKTS"); got != "7" {
		t.Errorf("PFC 3 tx after a refused play: %q, want 7 (all or none)", got)
	}
	// A rate moves the counter until stopped.
	if err := c.Rate(ctx, []Play{{Switch: "leaf1", Port: "Ethernet4", Priority: 3, Traffic: twin.Traffic{PauseRx: 1000}}}, 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for sonicCounter(t, tw, "Ethernet4", "SAI_PORT_STAT_PFC_3_RX_PKTS") == "0" || sonicCounter(t, tw, "Ethernet4", "SAI_PORT_STAT_PFC_3_RX_PKTS") == "" {
		if time.Now().After(deadline) {
			t.Fatal("the rate never moved the counter")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := Dial(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no running lab") {
		t.Errorf("Dial of a directory without a lab: %v", err)
	}
	srv.Close()
	if _, err := os.Stat(filepath.Join(dir, SocketName)); !os.IsNotExist(err) {
		t.Errorf("control.sock after Close: %v", err)
	}
}

// TestFromResult: a simulated incast maps onto the switch's ports only,
// each counter from its simulator field.
func TestFromResult(t *testing.T) {
	f, err := intent.Parse("t.yaml", []byte("apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\nmetadata: {name: t}\npolicy: {preset: roce-lossless}\n"))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := sim.ParseSpec("incast:4:1")
	if err != nil {
		t.Fatal(err)
	}
	n, err := sim.Build(f, sc, sim.StarOptions{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	res := sim.New(n, sim.Options{Duration: 200 * time.Microsecond}).Run()
	plays := FromResult(res)
	if len(plays) == 0 {
		t.Fatal("no plays")
	}
	var pauses, marks uint64
	for _, p := range plays {
		if p.Switch != "sim-leaf" {
			t.Errorf("play on %s: hosts are not switches", p.Switch)
		}
		r := res.Port(p.Switch+":"+p.Port, p.Priority)
		if r == nil {
			t.Fatalf("play %+v has no result row", p)
		}
		if p.Traffic.Packets != uint64(r.TxFrames) || p.Traffic.PauseTx != uint64(r.PauseSent) || p.Traffic.ECNMarked != uint64(r.ECNMarks) ||
			p.Traffic.Drops != uint64(r.Drops) || p.Traffic.PauseRx != uint64(r.PauseRecv) || p.Traffic.Storms != uint64(r.WatchdogTriggers) {
			t.Errorf("play %+v from row %+v", p.Traffic, r.PrioStats)
		}
		pauses += p.Traffic.PauseTx
		marks += p.Traffic.ECNMarked
	}
	if pauses == 0 || marks == 0 {
		t.Errorf("an incast without pause (%d) or marks (%d) on the switch", pauses, marks)
	}
	ps := PerSecond(plays, 200*time.Microsecond)
	if ps[0].Traffic.Packets != plays[0].Traffic.Packets*5000 {
		t.Errorf("per second: %d packets from %d in 200us", ps[0].Traffic.Packets, plays[0].Traffic.Packets)
	}
}

// TestServeLongPath: a lab directory whose socket path no Unix socket
// address holds is refused with what to do, not bind's EINVAL.
func TestServeLongPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 120))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := Serve(dir, NewLab(nil))
	if err == nil || !strings.Contains(err.Error(), "shorter lab directory") {
		t.Errorf("Serve in a %d-byte directory: %v", len(dir), err)
	}
}
