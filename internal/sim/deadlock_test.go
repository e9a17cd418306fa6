package sim

import (
	"strings"
	"testing"
)

// ringIntent is three leaves in a ring (the topology FC123 warns about),
// two hosts on each.
const ringIntent = `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: ring}
policy:
  preset: roce-lossless
inventory:
  switches:
    - name: leaf{1..3}
      platform: sonic
      address: "192.0.2.{1..3}:8080"
      credentials: {usernameEnv: U, passwordEnv: P}
      tls: {insecure: true}
      portDefaults: {speed: 100G, cable: 3m}
      ports:
        - name: Ethernet{0..4..4}
        - name: Ethernet{120..124..4}
  hosts:
    - name: h{1..6}
      address: local
      nics:
        - {interface: eth0, speed: 100G}
  links:
    - ["h{1..2}:eth0", "leaf1:Ethernet{0..4..4}"]
    - ["h{3..4}:eth0", "leaf2:Ethernet{0..4..4}"]
    - ["h{5..6}:eth0", "leaf3:Ethernet{0..4..4}"]
    - [leaf1:Ethernet120, leaf2:Ethernet124]
    - [leaf2:Ethernet120, leaf3:Ethernet124]
    - [leaf3:Ethernet120, leaf1:Ethernet124]
`

// closIntent is the same hosts on a two-tier Clos (two spines).
const closIntent = `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: clos}
policy:
  preset: roce-lossless
inventory:
  switches:
    - name: leaf{1..3}
      platform: sonic
      address: "192.0.2.{1..3}:8080"
      credentials: {usernameEnv: U, passwordEnv: P}
      tls: {insecure: true}
      portDefaults: {speed: 100G, cable: 3m}
      ports:
        - name: Ethernet{0..4..4}
        - name: Ethernet{120..124..4}
    - name: spine{1..2}
      platform: sonic
      address: "192.0.2.{11..12}:8080"
      credentials: {usernameEnv: U, passwordEnv: P}
      tls: {insecure: true}
      portDefaults: {speed: 100G, cable: 10m}
      ports:
        - name: Ethernet{0..8..4}
  hosts:
    - name: h{1..6}
      address: local
      nics:
        - {interface: eth0, speed: 100G}
  links:
    - ["h{1..2}:eth0", "leaf1:Ethernet{0..4..4}"]
    - ["h{3..4}:eth0", "leaf2:Ethernet{0..4..4}"]
    - ["h{5..6}:eth0", "leaf3:Ethernet{0..4..4}"]
    - ["leaf{1..3}:Ethernet120", "spine1:Ethernet{0..8..4}"]
    - ["leaf{1..3}:Ethernet124", "spine2:Ethernet{0..8..4}"]
`

// ringFlows: each leaf sends two hops clockwise, a cyclic buffer
// dependency leaf1 -> leaf2 -> leaf3 -> leaf1 (every ring link carries two
// of the flows: 2:1), and a local host adds a second sender at every
// destination, so the Clos sees congestion and pause too.
func ringFlows(paths bool) string {
	p := func(s string) string {
		if !paths {
			return ""
		}
		return ", path: [" + s + "]"
	}
	return `duration: 300us
flows:
  - {from: h1, to: h5` + p("h1, leaf1, leaf2, leaf3, h5") + `}
  - {from: h3, to: h1` + p("h3, leaf2, leaf3, leaf1, h1") + `}
  - {from: h5, to: h3` + p("h5, leaf3, leaf1, leaf2, h3") + `}
  - {from: h6, to: h5}
  - {from: h2, to: h1}
  - {from: h4, to: h3}
`
}

func TestDeadlockRingNotClos(t *testing.T) {
	sc, err := ParseScenarioYAML("ring.yaml", []byte(ringFlows(true)))
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{Duration: sc.Duration, NoECN: true}
	r := runSc(t, parse(t, ringIntent), sc, StarOptions{}, opt)
	if r.Deadlock == nil || !r.Deadlock.AtEnd {
		t.Fatalf("ring: no deadlock reported (verdict %q)", r.Verdict())
	}
	t.Logf("ring: %s", r.Verdict())
	if len(r.Deadlock.Cycle) != 3 || !strings.Contains(r.Verdict(), "DEADLOCK") {
		t.Errorf("cycle %v: want the three ring ports", r.Deadlock.Cycle)
	}
	// the flows through the cycle deliver nothing at the end, and every
	// port of the cycle is paused
	last := len(r.Times) - 1
	for _, g := range r.Goodputs[:3] {
		if g.Values[last] != 0 {
			t.Errorf("flow %s still delivers %.0f bit/s after the deadlock", g.Name, g.Values[last])
		}
	}
	for _, c := range r.Deadlock.Cycle {
		if p := r.Port(c, 3); p == nil || p.PausedTime == 0 {
			t.Errorf("%s is on the cycle but was never paused", c)
		}
	}

	sc2, err := ParseScenarioYAML("clos.yaml", []byte(ringFlows(false)))
	if err != nil {
		t.Fatal(err)
	}
	r2 := runSc(t, parse(t, closIntent), sc2, StarOptions{}, opt)
	if r2.Deadlock != nil {
		t.Errorf("clos: deadlock reported: %+v", r2.Deadlock)
	}
	for _, f := range r2.Flows {
		if f.Goodput < 10e9 {
			t.Errorf("clos: flow %s gets %.1f Gb/s", f.Path, f.Goodput/1e9)
		}
	}
	t.Logf("clos: %s; pause frames %d", r2.Verdict(), r2.Totals(true).PauseSent)
	if r2.Totals(true).PauseSent == 0 {
		t.Error("clos: no pause at all: the comparison does not exercise PFC")
	}
}
