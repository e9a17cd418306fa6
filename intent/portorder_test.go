package intent

import (
	"slices"
	"strings"
	"testing"
)

// TestPortsInNaturalOrder: a switch's ports are in natural order whatever
// the order of its entries, also when a second switch repeats the entries
// (their expansion is then shared, with its order worked out once) and when
// a name repeats (dropped as listed twice).
func TestPortsInNaturalOrder(t *testing.T) {
	f := mustParse(t, header+`policy: {preset: roce-lossless}
inventory:
  switches:
    - name: leaf{1..2}
      platform: sonic
      address: "10.0.0.{1..2}:8080"
      portDefaults: {speed: 100G}
      ports:
        - name: Ethernet{8..12..4}
        - name: Ethernet{0..4..4}
        - name: Ethernet100
    - name: leaf3
      platform: sonic
      address: "10.0.0.3:8080"
      portDefaults: {speed: 100G}
      ports:
        - name: Ethernet{8..12..4}
        - name: Ethernet{0..4..4}
        - name: Ethernet100
    - name: leaf4
      platform: sonic
      address: "10.0.0.4:8080"
      portDefaults: {speed: 100G}
      ports:
        - name: Ethernet{0..4..4}
        - name: Ethernet{8..12..4}
        - name: Ethernet100
`)
	want := []string{"Ethernet0", "Ethernet4", "Ethernet8", "Ethernet12", "Ethernet100"}
	for _, sw := range f.Switches {
		var got []string
		for _, p := range sw.Ports {
			got = append(got, p.Name)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: ports %v, want %v", sw.Name, got, want)
		}
	}
}

// TestSwitchesAndHostsInNaturalOrder: switches and hosts are in natural
// order whether the inventory lists them in order (left as they are) or
// not (sorted).
func TestSwitchesAndHostsInNaturalOrder(t *testing.T) {
	for _, tc := range []struct{ switches, hosts string }{
		{"[leaf2, leaf10, leaf1]", "[gpu10, gpu2, gpu1]"},
		{"[leaf1, leaf2, leaf10]", "[gpu1, gpu2, gpu10]"},
	} {
		f := mustParse(t, header+`policy: {preset: roce-lossless}
inventory:
  switches:
    - {name: `+firstOf(tc.switches, 0)+`, platform: sonic, address: "10.0.0.1:8080", ports: [{name: e1, speed: 100G}]}
    - {name: `+firstOf(tc.switches, 1)+`, platform: sonic, address: "10.0.0.2:8080", ports: [{name: e1, speed: 100G}]}
    - {name: `+firstOf(tc.switches, 2)+`, platform: sonic, address: "10.0.0.3:8080", ports: [{name: e1, speed: 100G}]}
  hosts:
    - {name: `+firstOf(tc.hosts, 0)+`, address: 10.0.1.1, nics: [{interface: eth0}]}
    - {name: `+firstOf(tc.hosts, 1)+`, address: 10.0.1.2, nics: [{interface: eth0}]}
    - {name: `+firstOf(tc.hosts, 2)+`, address: 10.0.1.3, nics: [{interface: eth0}]}
`)
		var sw, h []string
		for _, s := range f.Switches {
			sw = append(sw, s.Name)
		}
		for _, x := range f.Hosts {
			h = append(h, x.Name)
		}
		if !slices.Equal(sw, []string{"leaf1", "leaf2", "leaf10"}) || !slices.Equal(h, []string{"gpu1", "gpu2", "gpu10"}) {
			t.Errorf("listed %s and %s: switches %v, hosts %v", tc.switches, tc.hosts, sw, h)
		}
	}
}

// firstOf is the i-th name of a list written [a, b, c].
func firstOf(list string, i int) string {
	return strings.Split(strings.Trim(list, "[]"), ", ")[i]
}
