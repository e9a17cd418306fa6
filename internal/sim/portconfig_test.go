package sim

import (
	"encoding/json"
	"testing"
	"time"
)

// configure gives every switch port of n its own PortConfig, edited by
// edit (nil: exactly the intent's).
func configureAll(t *testing.T, n *Network, edit func(node, port string, pc *PortConfig)) {
	t.Helper()
	for _, p := range n.ports {
		if p.n.host {
			continue
		}
		pc, ok := n.PortConfigOf(p.n.name, p.name)
		if !ok {
			t.Fatalf("no config for %s:%s", p.n.name, p.name)
		}
		if edit != nil {
			edit(p.n.name, p.name, &pc)
		}
		if err := n.SetPortConfig(p.n.name, p.name, pc); err != nil {
			t.Fatal(err)
		}
	}
}

func resultJSON(t *testing.T, r *Result) string {
	t.Helper()
	r.Wall, r.EventsPerSec = 0, 0
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPortConfigAsIntentIsIdentical: every switch port given the
// configuration the intent implies (PortConfigOf) runs byte for byte as
// the intent's network does (FromIntent unchanged), on scenarios that
// pause, mark, drop and trigger the watchdog.
func TestPortConfigAsIntentIsIdentical(t *testing.T) {
	f := parse(t, minimalIntent)
	for _, tc := range []struct {
		spec string
		opt  Options
	}{
		{"incast:8:1", Options{Duration: 200 * time.Microsecond}},
		{"incast:8:1", Options{Duration: 200 * time.Microsecond, Headroom: 2000, NoECN: true}},
		{"alltoall", Options{Duration: 100 * time.Microsecond}},
		{"slow-receiver:0", Options{Duration: 2 * time.Millisecond}},
	} {
		sc, err := ParseSpec(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		n1, err := Build(f, sc, StarOptions{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := resultJSON(t, New(n1, tc.opt).Run())
		sc, _ = ParseSpec(tc.spec)
		n2, err := Build(f, sc, StarOptions{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		configureAll(t, n2, nil)
		got := resultJSON(t, New(n2, tc.opt).Run())
		if got != want {
			t.Errorf("%s %+v: the intent's own config per port changes the result", tc.spec, tc.opt)
		}
	}
}

// TestPortConfigNoPFCDropsThere: in an 8:1 incast with PFC alone (no ECN)
// nothing drops; with PFC off for the lossless priority on the port of one
// sender, that port never pauses its sender, its priority group overflows
// and drops appear on that port and on no other port.
func TestPortConfigNoPFCDropsThere(t *testing.T) {
	f := parse(t, minimalIntent)
	opt := Options{Duration: 500 * time.Microsecond, NoECN: true}
	build := func() *Network {
		sc, err := ParseSpec("incast:8:1")
		if err != nil {
			t.Fatal(err)
		}
		n, err := Build(f, sc, StarOptions{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	prio := build().lossless()[0]
	base := New(build(), opt).Run()
	if tot := base.Totals(true); tot.Drops != 0 || tot.PauseSent == 0 {
		t.Fatalf("baseline: %d drops, %d pauses: want none and some", tot.Drops, tot.PauseSent)
	}
	n := build()
	configureAll(t, n, func(node, port string, pc *PortConfig) {
		if port == "p1" {
			pc.Prio[prio].PFC = false
		}
	})
	r := New(n, opt).Run()
	if !r.Conservation.Holds() {
		t.Fatalf("conservation: %+v", r.Conservation)
	}
	var at int64
	for _, p := range r.Ports {
		switch {
		case p.Node == "sim-leaf" && p.Port == "p1" && p.Priority == prio:
			at = p.Drops
			if p.PauseSent != 0 {
				t.Errorf("p1 without PFC sent %d pause frames", p.PauseSent)
			}
		case p.Drops != 0:
			t.Errorf("%s prio %d: %d drops, want drops only at sim-leaf:p1", p.Name(), p.Priority, p.Drops)
		}
	}
	if at == 0 {
		t.Errorf("sim-leaf:p1 without PFC: no drops")
	}
}

// TestPortConfigECNAndMTU: a queue whose config has no ECN never marks;
// a port MTU below the RoCE frames drops them at that egress.
func TestPortConfigECNAndMTU(t *testing.T) {
	f := parse(t, minimalIntent)
	sc, _ := ParseSpec("incast:4:1")
	n, err := Build(f, sc, StarOptions{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if m := New(n, Options{Duration: 200 * time.Microsecond}).Run().Totals(true).ECNMarks; m == 0 {
		t.Fatal("the intent's ECN marks nothing in this run: the test would prove nothing")
	}
	sc, _ = ParseSpec("incast:4:1")
	n, _ = Build(f, sc, StarOptions{}, 0)
	configureAll(t, n, func(node, port string, pc *PortConfig) {
		for i := range pc.Prio {
			pc.Prio[i].ECN = nil
		}
	})
	r := New(n, Options{Duration: 200 * time.Microsecond}).Run()
	var marks, frames int64
	for _, p := range r.Ports {
		marks += p.ECNMarks
		frames += p.TxFrames
	}
	if marks != 0 || frames == 0 {
		t.Errorf("ECN off everywhere: %d marks, %d frames", marks, frames)
	}
	sc, _ = ParseSpec("incast:4:1")
	n, _ = Build(f, sc, StarOptions{}, 0)
	hosts := n.hostNames()
	dst := hosts[len(hosts)-1]
	configureAll(t, n, func(node, port string, pc *PortConfig) {
		pc.MTU = 1500 // IP MTU below a 4096 B RoCE payload's packet
	})
	r = New(n, Options{Duration: 100 * time.Microsecond}).Run()
	var dropped int64
	for _, p := range r.Ports {
		if p.Node == "sim-leaf" && p.Peer == dst+":eth0" {
			dropped += p.Drops
		}
	}
	if dropped == 0 || r.Totals(true).Drops != dropped {
		t.Errorf("MTU 1500: %d drops at the egress to %s, %d in all", dropped, dst, r.Totals(true).Drops)
	}
	if err := n.SetPortConfig("h1", "eth0", PortConfig{}); err == nil {
		t.Error("SetPortConfig on a host: no error")
	}
	if err := n.SetPortConfig("sim-leaf", "nope", PortConfig{}); err == nil {
		t.Error("SetPortConfig on an unknown port: no error")
	}
}
