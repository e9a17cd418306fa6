package sim

import (
	"strings"
	"testing"
)

// TestScenarioFromFlowsPinsRails: a validate flow between NIC k of two
// hosts with two rails crosses rail k's leaf only (the hosts' other NIC
// and leaf carry nothing), and single-NIC ends are routed by the
// simulator as simulate routes them.
func TestScenarioFromFlowsPinsRails(t *testing.T) {
	f := parse(t, minimalIntent+`inventory:
  switches:
    - {name: leaf1, platform: sonic, address: "192.0.2.1:8080", portDefaults: {speed: 100G, cable: 3m}, ports: [{name: "Ethernet{0..8..4}"}]}
    - {name: leaf2, platform: sonic, address: "192.0.2.2:8080", portDefaults: {speed: 100G, cable: 3m}, ports: [{name: "Ethernet{0..8..4}"}]}
  hosts:
    - {name: "h{1..2}", nics: [{interface: eth0, speed: 100G}, {interface: eth1, speed: 100G}]}
  links:
    - ["h{1..2}:eth0", "leaf1:Ethernet{0..4..4}"]
    - ["h{1..2}:eth1", "leaf2:Ethernet{0..4..4}"]
    - ["leaf1:Ethernet8", "leaf2:Ethernet8"]
`)
	sc, err := ScenarioFromFlows(f, "rails", []FlowEnds{{FromHost: "h1", FromNIC: "eth1", ToHost: "h2", ToNIC: "eth1"},
		{FromHost: "h2", FromNIC: "eth0", ToHost: "h1", ToNIC: "eth0"}})
	if err != nil {
		t.Fatal(err)
	}
	r := runSc(t, f, sc, StarOptions{}, Options{})
	if got := r.Flows[0].Path; got != "h1>leaf2>h2" {
		t.Errorf("rail 1 flow path %s, want h1>leaf2>h2", got)
	}
	if got := r.Flows[1].Path; got != "h2>leaf1>h1" {
		t.Errorf("rail 0 flow path %s, want h2>leaf1>h1", got)
	}
	if r.Synthetic {
		t.Error("a validate scenario ran on a synthetic star")
	}
	if _, err := ScenarioFromFlows(f, "x", []FlowEnds{{FromHost: "h1", FromNIC: "eth9", ToHost: "h2", ToNIC: "eth1"}}); err == nil || !strings.Contains(err.Error(), "h1:eth9") {
		t.Errorf("unlinked NIC: %v", err)
	}
}
