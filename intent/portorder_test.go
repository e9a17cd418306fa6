package intent

import (
	"slices"
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
