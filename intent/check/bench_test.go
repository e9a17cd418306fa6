package check

import (
	"fmt"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
)

// bigFabric generates a two-tier Clos of `groups` pods of 64 leaves and 16
// spines, every switch 64 x 400G ports: each leaf has 40 host-facing ports
// and 16 uplinks (one to each spine of its pod), each spine 64 leaf-facing
// ports; hosts have 4 NICs. groups=25 gives the size: 2,000
// switches x 64 ports, 16,000 hosts, 64,000 host links and 25,600
// leaf-spine links.
func bigFabric(groups int) *intent.Fabric {
	const (
		portsPerSwitch = 64
		hostPorts      = 40
		uplinks        = 16
		nicsPerHost    = 4
	)
	leaves, spines := groups*portsPerSwitch, groups*uplinks // leaves of group g use spines g*16 .. g*16+15
	f := goodFabric()
	f.Switches, f.Hosts, f.Links = nil, nil, nil
	ports := func(line int) []intent.Port {
		ps := make([]intent.Port, portsPerSwitch)
		for i := range ps {
			ps[i] = intent.Port{Name: fmt.Sprintf("ethernet-1/%d", i+1), Speed: 400e9, CableMeters: 3, Pos: at(line)}
		}
		return ps
	}
	line := 100
	for i := range leaves {
		name := fmt.Sprintf("leaf%d", i+1)
		f.Switches = append(f.Switches, intent.Switch{Name: name, Platform: intent.PlatformSONiC, ASIC: "spectrum3", BufferBytes: 2_000_000, Ports: ports(line + 1), Pos: at(line)})
		line += 3
	}
	for i := range spines {
		name := fmt.Sprintf("spine%d", i+1)
		f.Switches = append(f.Switches, intent.Switch{Name: name, Platform: intent.PlatformSRLinux, BufferBytes: 2_000_000, Ports: ports(line + 1), Pos: at(line)})
		line += 3
	}
	hosts := leaves * hostPorts / nicsPerHost
	for h := range hosts {
		host := intent.Host{Name: fmt.Sprintf("gpu%d", h+1), Address: "10.0.0.1", Pos: at(line)}
		for k := range nicsPerHost {
			host.NICs = append(host.NICs, intent.NIC{Interface: fmt.Sprintf("ens%dnp0", k), RDMADevice: fmt.Sprintf("mlx5_%d", k), Speed: 400e9, Pos: at(line + 1 + k)})
		}
		f.Hosts = append(f.Hosts, host)
		line += 1 + nicsPerHost
	}
	ep := func(node string, port string) intent.Endpoint { return intent.Endpoint{Node: node, Port: port} }
	for h := range hosts {
		for k := range nicsPerHost {
			n := h*nicsPerHost + k
			f.Links = append(f.Links, intent.Link{
				A:   ep(fmt.Sprintf("gpu%d", h+1), fmt.Sprintf("ens%dnp0", k)),
				B:   ep(fmt.Sprintf("leaf%d", n/hostPorts+1), fmt.Sprintf("ethernet-1/%d", n%hostPorts+1)),
				Pos: at(line)})
			line++
		}
	}
	for i := range leaves {
		g := i % groups
		for u := range uplinks {
			f.Links = append(f.Links, intent.Link{
				A:   ep(fmt.Sprintf("leaf%d", i+1), fmt.Sprintf("ethernet-1/%d", hostPorts+u+1)),
				B:   ep(fmt.Sprintf("spine%d", g*uplinks+u+1), fmt.Sprintf("ethernet-1/%d", i/groups+1)),
				Pos: at(line)})
			line++
		}
	}
	return f
}

func TestBigFabricIsClean(t *testing.T) {
	f := bigFabric(1) // 64 leaves, 16 spines
	if got, want := len(f.Links), 64*40+64*16; got != want {
		t.Fatalf("generated %d links, want %d", got, want)
	}
	if fs := Run(f, Options{}); len(fs) != 0 {
		t.Fatalf("Run(bigFabric) = %d findings, want none:\n%s", len(fs), dump(fs[:min(len(fs), 10)]))
	}
	// One leaf-leaf link in the generated Clos must be found.
	f.Switches[0].Ports = append(f.Switches[0].Ports, intent.Port{Name: "ethernet-1/65", Speed: 400e9, CableMeters: 3})
	f.Switches[1].Ports = append(f.Switches[1].Ports, intent.Port{Name: "ethernet-1/65", Speed: 400e9, CableMeters: 3})
	f.Links = append(f.Links, intent.Link{A: intent.Endpoint{Node: "leaf1", Port: "ethernet-1/65"}, B: intent.Endpoint{Node: "leaf2", Port: "ethernet-1/65"}})
	var ids []string
	for _, x := range Run(f, Options{}) {
		ids = append(ids, x.ID)
	}
	if len(ids) != 1 || ids[0] != "FC123" {
		t.Errorf("with a leaf-leaf link: findings %v, want [FC123]", ids)
	}
}

// BenchmarkRun checks the fabric (25 pods: 2,000 switches x 64
// ports, 16,000 hosts, 89,600 links) and about a quarter of it (6 pods), to
// show the cost grows linearly. Run with:
//
//	go test -run '^$' -bench BenchmarkRun -benchmem ./intent/check
func BenchmarkRun(b *testing.B) {
	for _, pods := range []int{6, 25} {
		f := bigFabric(pods)
		b.Run(fmt.Sprintf("switches=%d/hosts=%d/links=%d", len(f.Switches), len(f.Hosts), len(f.Links)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if fs := Run(f, Options{}); len(fs) != 0 {
					b.Fatalf("%d findings, first %s", len(fs), fs[0])
				}
			}
		})
	}
}
