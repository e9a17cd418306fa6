package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
)

// scaleFabric is an intent of n switches, a third each on SR Linux, SONiC
// and EOS (four ports each), as `lab -f` would read it.
func scaleFabric(tb testing.TB, n int) *intent.Fabric {
	tb.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\nmetadata: {name: scale}\npolicy: {preset: roce-lossless}\ninventory:\n  switches:\n")
	for i := range n {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, "    - {name: srl%d, platform: srlinux, address: \"192.0.2.1:%d\", portDefaults: {speed: 400G, cable: 3m}, ports: [{name: \"ethernet-1/{1..4}\"}]}\n", i, 10000+i)
		case 1:
			fmt.Fprintf(&b, "    - {name: sonic%d, platform: sonic, address: \"192.0.2.1:%d\", portDefaults: {speed: 100G, cable: 3m}, ports: [{name: \"Ethernet{0..12..4}\"}]}\n", i, 10000+i)
		default:
			fmt.Fprintf(&b, "    - {name: eos%d, platform: eos, address: \"192.0.2.1:%d\", portDefaults: {speed: 400G, cable: 3m, mtu: 9214}, ports: [{name: \"Ethernet{1..4}/1\"}]}\n", i, 10000+i)
		}
	}
	f, err := intent.Parse("scale.yaml", []byte(b.String()))
	if err != nil {
		tb.Fatal(err)
	}
	return f
}

// startScaleLab starts profiled twins for every switch of an n-switch
// fabric, as `lab -f` does, and checks each serves.
func startScaleLab(tb testing.TB, n int) *labTwins {
	tb.Helper()
	reg, err := newRegistry()
	if err != nil {
		tb.Fatal(err)
	}
	l, err := startLabFor(tb.TempDir(), reg, scaleFabric(tb, n), labProfiles{})
	if err != nil {
		tb.Fatal(err)
	}
	if len(l.twins) != n {
		l.close()
		tb.Fatalf("%d twins for %d switches", len(l.twins), n)
	}
	return l
}

// BenchmarkLabStart64 starts a 64-switch lab (profiled twins: factory
// datastore, base configuration, schema, TLS listener) and stops it. Goal
// (issue 28): under 5 s on 2 cores.
func BenchmarkLabStart64(b *testing.B) {
	for b.Loop() {
		startScaleLab(b, 64).close()
	}
}

// TestLab512Switches: a 512-switch lab starts, every twin listens on its
// own loopback port with its profile, the intent points at them, and plan
// reads every 16th of them over gNMI (TLS, the lab's credentials; all 512
// take some 20 s of CPU, too much for a shared CI machine).
func TestLab512Switches(t *testing.T) {
	l := startScaleLab(t, 512)
	defer l.close()
	reg, err := newRegistry()
	if err != nil {
		t.Fatal(err)
	}
	eng := &switchdrv.Engine{Registry: reg, Parallel: 16, Defaults: yangDefaults,
		Transport: transport.Options{Timeout: time.Minute}}
	defer eng.Close()
	var sample []string
	for i, sw := range l.fabric.Switches {
		if i%16 == 0 {
			sample = append(sample, sw.Name)
		}
	}
	p, err := eng.Plan(t.Context(), l.fabric, sample)
	if err != nil {
		t.Fatal(err)
	}
	if err := switchdrv.Errors(p); err != nil {
		t.Fatal(err)
	}
	if len(p.Targets) != len(sample) {
		t.Fatalf("plan covers %d targets, want %d", len(p.Targets), len(sample))
	}
	seen := map[string]bool{}
	for i, sw := range l.fabric.Switches {
		tw := l.twins[i]
		if sw.Address != tw.Addr() || seen[sw.Address] {
			t.Fatalf("switch %s at %s, twin at %s (or address used twice)", sw.Name, sw.Address, tw.Addr())
		}
		seen[sw.Address] = true
		if tw.Profile() == nil || sw.Profile != tw.Profile().Name {
			t.Fatalf("switch %s: profile %q, twin %v", sw.Name, sw.Profile, tw.Profile())
		}
	}
}
