package switchdrv_test

import (
	"math"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv"
)

// TestPortHeadroomForRemembered: PortHeadroomFor remembers its answers by
// input; asked again (and for other switches and ports with the same
// input), it answers what the models say, rounded up to 1 KiB.
func TestPortHeadroomForRemembered(t *testing.T) {
	f := &intent.Fabric{Policy: intent.Policy{MTU: 9100}}
	sws := []*intent.Switch{nil, {Name: "a", Platform: intent.PlatformSONiC, ASIC: "spectrum2"},
		{Name: "b", Platform: intent.PlatformSRLinux}, {Name: "c", Platform: intent.PlatformEOS, ASIC: "tomahawk4"}}
	for range 2 {
		for _, sw := range sws {
			for _, speed := range []int64{25e9, 100e9, 400e9} {
				for _, cable := range []float64{1, 3, 100, 300} {
					for _, mtu := range []int{0, 1500} {
						port := intent.Port{Name: "p", Speed: speed, CableMeters: cable, MTU: mtu}
						_, req := intent.Headroom(f.HeadroomInputFor(sw, port))
						want := int64(math.Ceil(float64(req)/1024) * 1024)
						if got := switchdrv.PortHeadroomFor(f, sw, port); got != want {
							t.Errorf("PortHeadroomFor(%v, %+v) = %d, want %d", sw, port, got, want)
						}
					}
				}
			}
		}
	}
}

// TestPortHeadroomsFor: a switch's port headroom worked out at once (the
// switch's ASIC looked up once) is PortHeadroomFor port by port, and its
// inputs are HeadroomInputFor's.
func TestPortHeadroomsFor(t *testing.T) {
	f := &intent.Fabric{Policy: intent.Policy{MTU: 9100}}
	var ports []intent.Port
	for _, speed := range []int64{25e9, 100e9, 400e9} {
		for _, cable := range []float64{1, 3, 300} {
			for _, mtu := range []int{0, 1500} {
				ports = append(ports, intent.Port{Name: "p", Speed: speed, CableMeters: cable, MTU: mtu})
			}
		}
	}
	for _, sw := range []*intent.Switch{{Name: "a", Platform: intent.PlatformSONiC, ASIC: "spectrum2"},
		{Name: "b", Platform: intent.PlatformSRLinux}, {Name: "c", Platform: intent.PlatformEOS, ASIC: "Tomahawk4 "}} {
		sw.Ports = ports
		got, ins := switchdrv.PortHeadroomsFor(f, sw), f.HeadroomInputsFor(sw)
		if len(got) != len(ports) || len(ins) != len(ports) {
			t.Fatalf("%s: %d headrooms and %d inputs for %d ports", sw.Name, len(got), len(ins), len(ports))
		}
		for i, port := range ports {
			if want := f.HeadroomInputFor(sw, port); ins[i] != want {
				t.Errorf("%s port %d: input %+v, want %+v", sw.Name, i, ins[i], want)
			}
			if want := switchdrv.PortHeadroomFor(f, sw, port); got[i] != want {
				t.Errorf("%s port %d: headroom %d, want %d", sw.Name, i, got[i], want)
			}
		}
	}
}
