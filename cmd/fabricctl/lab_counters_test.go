package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fabricctl/fabricctl/switchdrv/transport"
	"github.com/fabricctl/fabricctl/validate"
)

// TestLabCountersAtZeroFromStart: a started lab's twins report every
// port's queue counters for every class priority (and, on platforms with
// a PFC model, its pause counters) at zero before any traffic, as a switch
// reports them from boot, read with validate's own switch counter reader
// (the one watch uses too). Issue 28 found watch and validate showing no
// switch counters at all on a lab, "not even zeros".
func TestLabCountersAtZeroFromStart(t *testing.T) {
	reg, err := newRegistry()
	if err != nil {
		t.Fatal(err)
	}
	l, err := startLabWith(t.TempDir(), reg, labProfiles{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	f := l.fabric
	ctx := context.Background()
	for i := range f.Switches {
		sw := f.Switches[i]
		c, err := transport.Dial(ctx, sw, transport.Options{Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		var ports []string
		for _, p := range sw.Ports {
			ports = append(ports, p.Name)
		}
		s, err := (&validate.SwitchCounters{Switch: sw.Name, Platform: sw.Platform, Ports: ports, Sub: c}).Read(ctx)
		c.Close()
		if err != nil {
			t.Fatalf("switch %s: %v", sw.Name, err)
		}
		for _, p := range ports {
			m := s[sw.Name+"/"+p]
			for _, cl := range f.Policy.Classes {
				want := []string{fmt.Sprintf("q%d.tx_packets", cl.Priority), fmt.Sprintf("q%d.drops", cl.Priority)}
				if sw.Platform != "eos" && sw.Platform != "openconfig" {
					want = append(want, fmt.Sprintf("p%d.pfc_tx", cl.Priority), fmt.Sprintf("p%d.pfc_rx", cl.Priority))
				}
				for _, k := range want {
					if v, ok := m[k]; !ok || v != 0 {
						t.Errorf("switch %s (%s) port %s: %s = %d (present %v), want 0 from the start", sw.Name, sw.Platform, p, k, v, ok)
					}
				}
			}
		}
	}
}
