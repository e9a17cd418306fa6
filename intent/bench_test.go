package intent_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/check"
)

// largeFabric writes an intent with the given number of leaves (64 ports
// each: 56 to hosts, 8 uplinks), spines, and hosts with one NIC each, every
// host and uplink cabled. Ports use ranges, hosts and links are spelled out,
// as an inventory generator would write them.
func largeFabric(leaves, spines int) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\nmetadata: {name: large}\npolicy: {preset: roce-lossless}\ninventory:\n  switches:\n")
	for i := 1; i <= spines; i++ {
		fmt.Fprintf(&b, "    - {name: spine%d, platform: sonic, address: \"10.1.%d.%d:8080\", portDefaults: {speed: 400G, cable: 30m}, ports: [{name: \"Ethernet{0..252..4}\"}]}\n", i, i/256, i%256)
	}
	for i := 1; i <= leaves; i++ {
		fmt.Fprintf(&b, "    - {name: leaf%d, platform: sonic, address: \"10.2.%d.%d:8080\", portDefaults: {speed: 400G, cable: 3m}, ports: [{name: \"Ethernet{0..252..4}\"}]}\n", i, i/256, i%256)
	}
	hostsPerLeaf := 9
	b.WriteString("  hosts:\n")
	for l := 1; l <= leaves; l++ {
		for h := 0; h < hostsPerLeaf; h++ {
			fmt.Fprintf(&b, "    - {name: h%d-%d, address: \"10.3.%d.%d\", nics: [{interface: eth0, rdma: mlx5_0, speed: 400G}]}\n", l, h, l/256, h)
		}
	}
	b.WriteString("  links:\n")
	for l := 1; l <= leaves; l++ {
		for h := 0; h < hostsPerLeaf; h++ {
			fmt.Fprintf(&b, "    - [\"h%d-%d:eth0\", \"leaf%d:Ethernet%d\"]\n", l, h, l, h*4)
		}
		// 8 uplinks per leaf, spread round-robin over the spines' 64 ports:
		// needs 8 x leaves <= 64 x spines.
		for u := 0; u < 8 && spines > 0; u++ {
			g := (l-1)*8 + u
			fmt.Fprintf(&b, "    - [\"leaf%d:Ethernet%d\", \"spine%d:Ethernet%d\"]\n", l, 224+u*4, g%spines+1, (g/spines)*4)
		}
	}
	return []byte(b.String())
}

// BenchmarkParseAndCheckLarge: 2,000 switches x 64 ports (1,776 leaves with 8
// uplinks each + 224 spines), 15,984 hosts, every host and uplink cabled
// (30,192 links). Target: < 1 s, < 500 MB.
//
//	go test -run - -bench ParseAndCheckLarge -benchmem ./intent
func BenchmarkParseAndCheckLarge(b *testing.B) {
	data := largeFabric(1776, 224)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		f, err := intent.Parse("large.yaml", data)
		if err != nil {
			b.Fatal(err)
		}
		if len(f.Switches) != 2000 || len(f.Hosts) != 1776*9 {
			b.Fatalf("generated %d switches, %d hosts", len(f.Switches), len(f.Hosts))
		}
		for _, fd := range check.Run(f, check.Options{}) {
			if fd.Severity == check.Error {
				b.Fatalf("generated fabric fails check: %s", fd)
			}
		}
	}
}

// BenchmarkParseScaling parses fabrics of growing size; ns/op should grow
// linearly with the number of leaves.
func BenchmarkParseScaling(b *testing.B) {
	for _, leaves := range []int{125, 250, 500, 1000} {
		data := largeFabric(leaves, leaves/8)
		b.Run(fmt.Sprintf("leaves=%d", leaves), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := intent.Parse("large.yaml", data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestLargeFabricGeneratorChecksClean(t *testing.T) {
	f, err := intent.Parse("large.yaml", largeFabric(32, 4))
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range check.Run(f, check.Options{}) {
		if fd.Severity == check.Error {
			t.Errorf("generated fabric fails check: %s", fd)
		}
	}
}
