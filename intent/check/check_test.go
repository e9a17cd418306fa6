package check

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/portfacts"
)

// at returns a position on line n of fabric.yaml.
func at(n int) intent.Pos { return intent.Pos{File: "fabric.yaml", Line: n, Col: 3} }

// goodFabric is a clean 2-leaf, 2-spine pod with 4 hosts and the
// roce-lossless preset: Run must find nothing in it. Each test case mutates a
// fresh copy.
func goodFabric() *intent.Fabric {
	leafPorts := func(line int) []intent.Port {
		var ps []intent.Port
		for i := 1; i <= 6; i++ {
			ps = append(ps, intent.Port{Name: fmt.Sprintf("ethernet-1/%d", i), Speed: 400e9, CableMeters: 3, Pos: at(line)})
		}
		return ps
	}
	spinePorts := func(line int) []intent.Port {
		var ps []intent.Port
		for i := 0; i < 4; i++ {
			ps = append(ps, intent.Port{Name: fmt.Sprintf("Ethernet%d", i*4), Speed: 400e9, CableMeters: 3, Pos: at(line)})
		}
		return ps
	}
	f := &intent.Fabric{
		Name:  "pod1",
		Files: []string{"fabric.yaml"},
		Pos:   at(1),
		Policy: intent.Policy{
			Preset: "roce-lossless",
			Classes: []intent.Class{
				{Name: "default", Priority: 0, Weight: 50, Default: true, Pos: at(10)},
				{Name: "roce", DSCP: []int{26}, Priority: 3, Lossless: true, Weight: 50, Pos: at(12),
					ECN: &intent.ECN{MinBytes: 150_000, MaxBytes: 1_501_500, Probability: 100, Pos: at(14)}},
				{Name: "cnp", DSCP: []int{48}, Priority: 6, Strict: true, CNP: true, Pos: at(18)},
			},
			MTU:                   9216,
			HostMTU:               9000,
			RoCEPathMTU:           4096,
			DCBX:                  intent.DCBXHostStatic,
			Watchdog:              intent.Watchdog{Enabled: true, Detect: 200 * time.Millisecond, Restore: 400 * time.Millisecond, Poll: 100 * time.Millisecond, Action: intent.WatchdogDrop, Pos: at(22)},
			RoCE:                  intent.RoCEHost{ToS: 106, CNPDSCP: 48, CNPPriority: 6, Mode: "RoCE v2", Pos: at(27)},
			MaxLosslessPriorities: 2,
			Pos:                   at(5),
		},
		Switches: []intent.Switch{
			{Name: "leaf1", Platform: intent.PlatformSRLinux, BufferBytes: 3_000_000, Ports: leafPorts(42), Pos: at(40)},
			{Name: "leaf2", Platform: intent.PlatformSRLinux, BufferBytes: 3_000_000, Ports: leafPorts(47), Pos: at(45)},
			// 400G SONiC spines: Spectrum-3 (an SN4700), not the default
			// profile's 100G SN3800 (FC131, FC132).
			{Name: "spine1", Platform: intent.PlatformSONiC, ASIC: "spectrum3", BufferBytes: 3_000_000, Ports: spinePorts(52), Pos: at(50)},
			{Name: "spine2", Platform: intent.PlatformSONiC, ASIC: "spectrum3", BufferBytes: 3_000_000, Ports: spinePorts(57), Pos: at(55)},
		},
	}
	for i := 1; i <= 4; i++ {
		f.Hosts = append(f.Hosts, intent.Host{
			Name: fmt.Sprintf("gpu%d", i), Address: fmt.Sprintf("10.0.1.%d", i), Pos: at(60 + 5*i),
			NICs: []intent.NIC{{Interface: "ens1f0np0", RDMADevice: "mlx5_0", RDMAPort: 1, Speed: 400e9, Pos: at(62 + 5*i)}},
		})
	}
	link := func(a, b string) {
		an, ap, _ := strings.Cut(a, ":")
		bn, bp, _ := strings.Cut(b, ":")
		f.Links = append(f.Links, intent.Link{A: intent.Endpoint{Node: an, Port: ap}, B: intent.Endpoint{Node: bn, Port: bp}, Pos: at(100 + len(f.Links))})
	}
	link("gpu1:ens1f0np0", "leaf1:ethernet-1/1")
	link("gpu2:ens1f0np0", "leaf1:ethernet-1/2")
	link("gpu3:ens1f0np0", "leaf2:ethernet-1/1")
	link("gpu4:ens1f0np0", "leaf2:ethernet-1/2")
	link("leaf1:ethernet-1/3", "spine1:Ethernet0")
	link("leaf1:ethernet-1/4", "spine2:Ethernet0")
	link("leaf2:ethernet-1/3", "spine1:Ethernet4")
	link("leaf2:ethernet-1/4", "spine2:Ethernet4")
	return f
}

// got is the part of a finding the rule tests compare: rule, severity, path.
type got struct {
	ID       string
	Severity Severity
	Path     string
}

func summarize(fs []Finding) []got {
	out := make([]got, 0, len(fs))
	for _, f := range fs {
		out = append(out, got{f.ID, f.Severity, f.Path})
	}
	return out
}

func TestGoodFabricIsClean(t *testing.T) {
	if fs := Run(goodFabric(), Options{}); len(fs) != 0 {
		t.Fatalf("Run(goodFabric) = %d findings, want none:\n%s", len(fs), dump(fs))
	}
}

func dump(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "  %s\n    fix: %s\n", f, f.Fix)
	}
	return b.String()
}

func class(f *intent.Fabric, name string) *intent.Class { return f.Policy.ClassByName(name) }

// ruleCase is one fault of goodFabric and the findings it must raise.
type ruleCase struct {
	name   string
	mutate func(f *intent.Fabric)
	opts   Options
	want   []got
}

// ruleCases are TestRules' cases; the fix property test
// (TestFixesClearTheirFindings) applies every fix they raise.
func ruleCases() []ruleCase {
	// lossless adds a lossless class with the RoCE class's ECN setting (one
	// setting for every lossless class, as FC128 wants for SONiC).
	lossless := func(f *intent.Fabric, name string, prio, dscp int) {
		ecn := intent.ECN{MinBytes: 150_000, MaxBytes: 1_000_000, Probability: 100}
		if r := class(f, "roce"); r != nil && r.ECN != nil {
			ecn = *r.ECN
		}
		ecn.Pos = at(31)
		f.Policy.Classes = append(f.Policy.Classes, intent.Class{Name: name, DSCP: []int{dscp}, Priority: prio, Lossless: true, Strict: true,
			ECN: &ecn, Pos: at(30)})
	}
	return []ruleCase{
		// FC101
		{"dscp out of range", func(f *intent.Fabric) { class(f, "roce").DSCP = []int{26, 64} },
			Options{}, []got{{"FC101", Error, "policy.classes[roce].dscp"}}},
		{"host cnp dscp out of range", func(f *intent.Fabric) { f.Policy.RoCE.CNPDSCP = -1 },
			Options{}, []got{{"FC101", Error, "policy.roce.cnpDSCP"}}},
		// FC102
		{"dscp in two classes", func(f *intent.Fabric) { class(f, "default").DSCP = []int{0, 26} },
			Options{}, []got{{"FC102", Error, "policy.classes[roce].dscp"}}},
		// Each lossless class would be left unreached without DSCP 26
		// (FC126): which one it belongs to is a person's call (no edits).
		{"dscp the only one of two lossless classes", func(f *intent.Fabric) { lossless(f, "storage", 4, 26) },
			Options{}, []got{{"FC126", Error, "policy.classes[roce].dscp"}, {"FC102", Error, "policy.classes[storage].dscp"}}},
		// FC103
		{"class priority out of range", func(f *intent.Fabric) { class(f, "cnp").Priority = 8; f.Policy.RoCE.CNPPriority = 8 },
			Options{}, []got{{"FC103", Error, "policy.classes[cnp].priority"}, {"FC103", Error, "policy.roce.cnpPriority"}}},
		// FC104
		{"priority in two classes", func(f *intent.Fabric) {
			f.Policy.Classes = append(f.Policy.Classes, intent.Class{Name: "mgmt", DSCP: []int{10}, Priority: 0, Strict: true, Pos: at(30)})
		}, Options{}, []got{{"FC104", Error, "policy.classes[mgmt].priority"}}},
		{"cnp class on the lossless priority", func(f *intent.Fabric) {
			class(f, "cnp").Priority = 3
			f.Policy.RoCE.CNPPriority = 3
		}, Options{}, []got{{"FC104", Error, "policy.classes[cnp].priority"}}},
		// FC108 with the host CNPs on a PFC-enabled priority
		{"host cnp priority lossless", func(f *intent.Fabric) { f.Policy.RoCE.CNPPriority = 3 },
			Options{}, []got{{"FC108", Error, "policy.roce.cnpPriority"}}},
		// FC126
		{"lossless class without dscp", func(f *intent.Fabric) {
			class(f, "roce").DSCP = nil
			f.Policy.RoCE.ToS = 106 // lands in default now
		}, Options{}, []got{{"FC126", Error, "policy.classes[roce].dscp"}, {"FC119", Error, "policy.roce.tos"}}},
		{"lossless default class is reached", func(f *intent.Fabric) {
			class(f, "roce").Default, class(f, "default").Default = true, false
			class(f, "default").DSCP = []int{0}
		}, Options{}, nil},
		// FC127
		{"switch port speed 400M", func(f *intent.Fabric) {
			for j := range f.Switches[0].Ports {
				f.Switches[0].Ports[j].Speed = 400e6
			}
			f.Switches[0].Ports[0].Speed = 400e9
		}, Options{}, []got{{"FC127", Error, "inventory.switches[leaf1].ports[ethernet-1/2].speed"}, {"FC124", Warning, "inventory.links[1]"}, {"FC124", Warning, "inventory.links[4]"}, {"FC124", Warning, "inventory.links[5]"}}},
		{"nic speed 400M", func(f *intent.Fabric) { f.Hosts[1].NICs[0].Speed = 400e6 },
			Options{}, []got{{"FC127", Error, "inventory.hosts[gpu2].nics[ens1f0np0].speed"}, {"FC124", Warning, "inventory.links[1]"}}},
		// FC141: the NIC has no cable of its own (mlx5 keeps 7 m), its
		// link's switch port says 100 m.
		{"nic headroom for 7m on a 100m link", func(f *intent.Fabric) {
			f.Switch(f.Links[0].B.Node).Port(f.Links[0].B.Port).CableMeters = 100
		}, Options{}, []got{{"FC141", Warning, "inventory.hosts[gpu1].nics[ens1f0np0]"}}},
		{"nic given its 100m cable", func(f *intent.Fabric) {
			f.Switch(f.Links[0].B.Node).Port(f.Links[0].B.Port).CableMeters = 100
			f.Host(f.Links[0].A.Node).NICs[0].CableMeters = 100
		}, Options{}, nil},
		// FC128
		{"sonic: ecn classes with different settings", func(f *intent.Fabric) {
			lossless(f, "storage", 4, 24)
			class(f, "storage").ECN.MaxBytes = 1_000_000
		}, Options{}, []got{{"FC128", Warning, "policy.classes[storage].ecn"}}},
		{"sonic: ecn on a lossy class with the same setting", func(f *intent.Fabric) {
			e := *class(f, "roce").ECN
			class(f, "default").ECN = &e
		}, Options{}, nil},
		// FC105
		{"two lossless priorities are fine", func(f *intent.Fabric) { lossless(f, "storage", 4, 24) }, Options{}, nil},
		{"three lossless priorities", func(f *intent.Fabric) {
			lossless(f, "storage", 4, 24)
			lossless(f, "ml", 5, 34)
		}, Options{}, []got{{"FC105", Error, "policy.classes[ml].lossless"}}},
		{"three lossless allowed by switch override", func(f *intent.Fabric) {
			lossless(f, "storage", 4, 24)
			lossless(f, "ml", 5, 34)
			for i := range f.Switches {
				f.Switches[i].MaxLosslessPriorities = 3
			}
		}, Options{}, nil},
		{"three lossless, override on leaves only", func(f *intent.Fabric) {
			lossless(f, "storage", 4, 24)
			lossless(f, "ml", 5, 34)
			f.Policy.MaxLosslessPriorities = 4
			f.Switches[0].MaxLosslessPriorities = 3
			f.Switches[1].MaxLosslessPriorities = 3
		}, Options{}, []got{{"FC105", Error, "policy.classes[ml].lossless"}}}, // spines: sonic limit 2; the fix names the switches' override, not the policy cap
		{"two lossless, policy cap 1", func(f *intent.Fabric) {
			lossless(f, "storage", 4, 24)
			f.Policy.MaxLosslessPriorities = 1
		}, Options{}, []got{{"FC105", Error, "policy.classes[storage].lossless"}}}, // the fix names the policy cap
		// FC106
		{"openconfig switch with lossless class", func(f *intent.Fabric) { f.Switches[2].Platform = intent.PlatformOpenConfig },
			Options{}, []got{{"FC106", Error, "inventory.switches[spine1].platform"}}},
		{"unknown platform", func(f *intent.Fabric) { f.Switches[3].Platform = "junos" },
			Options{}, []got{{"FC106", Error, "inventory.switches[spine2].platform"}}},
		{"platform from options", func(f *intent.Fabric) { f.Switches[3].Platform = "junos" },
			Options{Platform: func(p intent.Platform) (PlatformInfo, bool) {
				if p == "junos" {
					return PlatformInfo{PFC: true, MaxLosslessPriorities: 2}, true
				}
				return DefaultPlatform(p)
			}}, nil},
		// FC107
		{"cnp class lossless", func(f *intent.Fabric) {
			c := class(f, "cnp")
			c.Lossless = true
			c.ECN = &intent.ECN{MinBytes: 150_000, MaxBytes: 1_000_000, Probability: 100}
		}, Options{}, []got{{"FC107", Error, "policy.classes[cnp].lossless"}, {"FC128", Warning, "policy.classes[cnp].ecn"}}},
		{"cnp class not strict", func(f *intent.Fabric) {
			class(f, "cnp").Strict = false
			class(f, "cnp").Weight = 20
			class(f, "default").Weight = 30
		}, Options{}, []got{{"FC107", Error, "policy.classes[cnp].strict"}}},
		{"no cnp class", func(f *intent.Fabric) {
			f.Policy.Classes = f.Policy.Classes[:2]
		}, Options{}, []got{{"FC107", Warning, "policy.classes"}}},
		// FC108
		{"host cnp dscp mismatch", func(f *intent.Fabric) { f.Policy.RoCE.CNPDSCP = 4 },
			Options{}, []got{{"FC108", Error, "policy.roce.cnpDSCP"}}},
		{"host cnp priority mismatch", func(f *intent.Fabric) { f.Policy.RoCE.CNPPriority = 5 },
			Options{}, []got{{"FC108", Error, "policy.roce.cnpPriority"}}},
		// FC109
		{"lossless without ecn", func(f *intent.Fabric) { class(f, "roce").ECN = nil },
			Options{}, []got{{"FC109", Error, "policy.classes[roce].ecn"}}},
		// FC110
		{"ecn min above max", func(f *intent.Fabric) { class(f, "roce").ECN.MinBytes = 2_000_000 },
			Options{}, []got{{"FC110", Error, "policy.classes[roce].ecn.min"}}},
		{"ecn min below one mtu", func(f *intent.Fabric) { class(f, "roce").ECN.MinBytes = 1000 },
			Options{}, []got{{"FC110", Error, "policy.classes[roce].ecn.min"}}},
		{"ecn probability zero", func(f *intent.Fabric) { class(f, "roce").ECN.Probability = 0 },
			Options{}, []got{{"FC110", Error, "policy.classes[roce].ecn.probability"}}},
		// FC111: 400G, 3 m, 9216 on leaf1 (SR Linux profile 7220 IXR-H4,
		// Tomahawk 4) needs 307,848 B (the vendor's pg_profile_lookup.ini
		// 400G/5m row, issue 10 item 15), which the compilers program
		// rounded up to 1 KiB: 308,224 B; 1.6 MB - that < 1.5 MB.
		{"ecn max above xoff depth", func(f *intent.Fabric) { f.Switches[0].BufferBytes = 1_600_000 },
			Options{}, []got{{"FC111", Error, "policy.classes[roce].ecn.max"}}},
		{"ecn max just below xoff depth", func(f *intent.Fabric) { f.Switches[0].BufferBytes = 1_501_500 + 308_224 },
			Options{}, nil},
		// FC111 with the platform's own XOFF point (issue 10 item 12): a
		// 7220 pfc-queue left at its default maximum-burst-size (51,200 B,
		// srl_nokia-qos) pauses long before Kmax 1.5 MB, buffer or not.
		{"ecn max above a static xoff point", func(f *intent.Fabric) {
			for i := range f.Switches {
				f.Switches[i].BufferBytes = 0
			}
		}, Options{Platform: func(p intent.Platform) (PlatformInfo, bool) {
			pi, ok := DefaultPlatform(p)
			if p == intent.PlatformSRLinux {
				pi.XOFF = func(*intent.Class, int) int64 { return portfacts.PFCQueueDefaultMBS }
			}
			return pi, ok
		}}, []got{{"FC111", Error, "policy.classes[roce].ecn.max"}, {"FC112", Info, "inventory.switches[leaf1].ports[ethernet-1/1]"}, {"FC112", Info, "inventory.switches[spine1].ports[Ethernet0]"}}},
		{"srl xoff point as programmed", func(f *intent.Fabric) {
			for i := range f.Switches {
				f.Switches[i].BufferBytes = 0
			}
		}, Options{}, []got{{"FC112", Info, "inventory.switches[leaf1].ports[ethernet-1/1]"}, {"FC112", Info, "inventory.switches[spine1].ports[Ethernet0]"}}},
		// FC112
		{"buffer too small for headroom", func(f *intent.Fabric) { f.Switches[0].BufferBytes = 100_000 },
			Options{}, []got{{"FC112", Error, "inventory.switches[leaf1].ports[ethernet-1/1]"}}},
		{"buffer exactly the headroom", func(f *intent.Fabric) {
			f.Switches[0].BufferBytes = 308_224
			class(f, "roce").ECN.MinBytes = 100_000
			class(f, "roce").ECN.MaxBytes = 308_224 // not checked: no room before XOFF
		}, Options{}, nil},
		{"buffer holds the exact model, not the 1 KiB-rounded headroom the switch gets", func(f *intent.Fabric) {
			f.Switches[0].BufferBytes = 307_848 // portfacts programs 308,224 B
		}, Options{}, []got{{"FC112", Error, "inventory.switches[leaf1].ports[ethernet-1/1]"}}},
		{"buffer one cell short", func(f *intent.Fabric) { f.Switches[0].BufferBytes = 308_224 },
			Options{Platform: func(p intent.Platform) (PlatformInfo, bool) {
				pi, ok := DefaultPlatform(p)
				pi.BufferCellBytes = 254 // 1,214 cells = 308,356 B
				return pi, ok
			}}, []got{{"FC112", Error, "inventory.switches[leaf1].ports[ethernet-1/1]"}}},
		{"no buffer given", func(f *intent.Fabric) {
			for i := range f.Switches {
				f.Switches[i].BufferBytes = 0
			}
		}, Options{}, []got{{"FC112", Info, "inventory.switches[leaf1].ports[ethernet-1/1]"}, {"FC112", Info, "inventory.switches[spine1].ports[Ethernet0]"}}},
		// FC133 (FC112 leaves a port without a speed to it)
		{"port without speed", func(f *intent.Fabric) { f.Switches[1].Ports[5].Speed = 0 },
			Options{}, []got{{"FC133", Error, "inventory.switches[leaf2].ports[ethernet-1/6].speed"}}},
		{"ports with a zero cable", func(f *intent.Fabric) {
			f.Switches[0].Ports[0].CableMeters = 0
			f.Switches[0].Ports[1].CableMeters = 0
		}, Options{}, []got{{"FC133", Error, "inventory.switches[leaf1].ports[ethernet-1/1].cable"}}},
		{"uplinks with a zero speed", func(f *intent.Fabric) {
			f.Switches[0].Ports[2].Speed = 0
			f.Switches[0].Ports[3].Speed = 0
		}, Options{}, []got{{"FC133", Error, "inventory.switches[leaf1].ports[ethernet-1/3].speed"}}},
		{"uplink with a zero cable", func(f *intent.Fabric) { f.Switches[1].Ports[2].CableMeters = 0 },
			Options{}, []got{{"FC133", Error, "inventory.switches[leaf2].ports[ethernet-1/3].cable"}}},
		// FC113
		{"ets weights not 100", func(f *intent.Fabric) { class(f, "roce").Weight = 40 },
			Options{}, []got{{"FC113", Error, "policy.classes[default].weight"}}},
		{"ets zero weight", func(f *intent.Fabric) {
			class(f, "roce").Weight = 100
			class(f, "default").Weight = 0
		}, Options{}, []got{{"FC113", Error, "policy.classes[default].weight"}}}, // SR Linux and SONiC refuse weight 0
		{"ets zero weight where the platforms take it", func(f *intent.Fabric) {
			for i := range f.Switches {
				f.Switches[i].Platform = intent.PlatformEOS
			}
			f.Policy.MTU = 9214 // EOS's port maximum (FC125)
			class(f, "roce").Weight = 100
			class(f, "default").Weight = 0
		}, Options{}, []got{{"FC113", Warning, "policy.classes[default].weight"}}},
		// FC114
		{"watchdog off", func(f *intent.Fabric) { f.Policy.Watchdog.Enabled = false },
			Options{}, []got{{"FC114", Warning, "policy.watchdog.enabled"}}},
		{"watchdog poll equal to detect", func(f *intent.Fabric) { f.Policy.Watchdog.Poll = 200 * time.Millisecond },
			Options{}, []got{{"FC114", Warning, "policy.watchdog.poll"}}},
		{"watchdog poll above detect", func(f *intent.Fabric) { f.Policy.Watchdog.Poll = 300 * time.Millisecond },
			Options{}, []got{{"FC114", Error, "policy.watchdog.poll"}}},
		{"watchdog poll above restore", func(f *intent.Fabric) {
			f.Policy.Watchdog.Detect = 500 * time.Millisecond
			f.Policy.Watchdog.Restore = 150 * time.Millisecond
			f.Policy.Watchdog.Poll = 200 * time.Millisecond
		}, Options{}, []got{{"FC114", Error, "policy.watchdog.poll"}, {"FC114", Warning, "policy.watchdog.restore"}}},
		{"watchdog restore below detect", func(f *intent.Fabric) { f.Policy.Watchdog.Restore = 150 * time.Millisecond },
			Options{}, []got{{"FC114", Warning, "policy.watchdog.restore"}}},
		{"watchdog SONiC defaults 200/200/200", func(f *intent.Fabric) {
			f.Policy.Watchdog.Restore = 200 * time.Millisecond
			f.Policy.Watchdog.Poll = 200 * time.Millisecond
		}, Options{}, []got{{"FC114", Warning, "policy.watchdog.poll"}}},
		{"watchdog off without lossless classes is fine", func(f *intent.Fabric) {
			f.Policy.Watchdog.Enabled = false
			class(f, "roce").Lossless = false
			f.Policy.RoCE.ToS = 26<<2 | 2 // derived from the RoCE (ECN) class, issue 10 item 19
			class(f, "roce").DSCP = []int{26}
			f.Policy.Classes[0].DSCP = nil
		}, Options{}, nil},
		// FC115
		{"watchdog detect above srlinux and sonic max", func(f *intent.Fabric) {
			f.Policy.Watchdog.Detect = 6 * time.Second
			f.Policy.Watchdog.Restore = 6 * time.Second
		}, Options{}, []got{
			{"FC115", Error, "policy.watchdog.detect"},  // sonic
			{"FC115", Error, "policy.watchdog.detect"},  // srlinux
			{"FC115", Error, "policy.watchdog.restore"}, // srlinux
		}},
		{"watchdog detect below sonic min only", func(f *intent.Fabric) {
			f.Policy.Watchdog.Detect = 50 * time.Millisecond
			f.Policy.Watchdog.Poll = 0
		}, Options{}, []got{
			{"FC115", Error, "policy.watchdog.detect"}, // sonic; srlinux takes 10-1500 ms
			{"FC115", Error, "policy.watchdog.poll"},   // sonic: 0 is not "unset", its compiler refuses it
		}},
		{"watchdog restore 0 outside srlinux and sonic ranges", func(f *intent.Fabric) {
			f.Policy.Watchdog.Restore = 0
		}, Options{}, []got{
			{"FC114", Warning, "policy.watchdog.restore"},
			{"FC115", Error, "policy.watchdog.restore"}, // sonic
			{"FC115", Error, "policy.watchdog.restore"}, // srlinux
		}},
		{"watchdog poll above half of detect on eos", func(f *intent.Fabric) {
			f.Switches[2].Platform, f.Switches[3].Platform = intent.PlatformEOS, intent.PlatformEOS
			f.Policy.MTU = 9214 // EOS's port maximum (FC125)
			f.Policy.Watchdog.Poll = 150 * time.Millisecond
		}, Options{}, []got{{"FC115", Error, "policy.watchdog.poll"}}},
		{"watchdog poll at half of detect on eos", func(f *intent.Fabric) {
			f.Switches[2].Platform, f.Switches[3].Platform = intent.PlatformEOS, intent.PlatformEOS
			f.Policy.MTU = 9214 // EOS's port maximum (FC125)
		}, Options{}, nil},
		{"watchdog detect off eos's 10ms step", func(f *intent.Fabric) {
			f.Switches[2].Platform, f.Switches[3].Platform = intent.PlatformEOS, intent.PlatformEOS
			f.Policy.MTU = 9214 // EOS's port maximum (FC125)
			f.Policy.Watchdog.Detect = 205 * time.Millisecond
		}, Options{}, []got{{"FC115", Error, "policy.watchdog.detect"}}},
		{"watchdog restore below a millisecond step", func(f *intent.Fabric) {
			f.Policy.Watchdog.Restore = 400*time.Millisecond + 500*time.Microsecond
		}, Options{}, []got{
			{"FC115", Error, "policy.watchdog.restore"}, // sonic
			{"FC115", Error, "policy.watchdog.restore"}, // srlinux
		}},
		{"watchdog poll below eos min", func(f *intent.Fabric) {
			f.Switches = f.Switches[2:]
			f.Switches[0].Platform, f.Switches[1].Platform = intent.PlatformEOS, intent.PlatformEOS
			f.Policy.MTU = 9214 // EOS's port maximum (FC125)
			f.Links = nil
			f.Policy.Watchdog.Poll = 2 * time.Millisecond
		}, Options{}, []got{{"FC115", Error, "policy.watchdog.poll"}}},
		// FC116
		{"global pause on", func(f *intent.Fabric) { f.Policy.GlobalPause = true },
			Options{}, []got{{"FC116", Error, "policy.globalPause"}}},
		// FC117
		{"host mtu above switch mtu", func(f *intent.Fabric) { f.Policy.HostMTU = 9300 },
			Options{}, []got{{"FC117", Error, "policy.hostMTU"}}},
		{"host-facing port mtu below host mtu", func(f *intent.Fabric) { f.Switches[0].Ports[0].MTU = 1500 },
			Options{}, []got{{"FC117", Error, "inventory.links[0]"}}},
		{"switch link mtu mismatch", func(f *intent.Fabric) { f.Switches[2].Ports[0].MTU = 9100 },
			Options{}, []got{{"FC117", Error, "inventory.links[4]"}}},
		// FC118
		{"roce path mtu not an IB mtu", func(f *intent.Fabric) { f.Policy.RoCEPathMTU = 3000 },
			Options{}, []got{{"FC118", Error, "policy.rocePathMTU"}}},
		{"roce path mtu above host mtu", func(f *intent.Fabric) { f.Policy.HostMTU = 4150 },
			Options{}, []got{{"FC118", Error, "policy.rocePathMTU"}}},
		{"roce path mtu exactly fits", func(f *intent.Fabric) { f.Policy.HostMTU = 4096 + 96 }, Options{}, nil},
		// FC119
		{"tos with CE", func(f *intent.Fabric) { f.Policy.RoCE.ToS = 107 },
			Options{}, []got{{"FC119", Error, "policy.roce.tos"}}},
		{"tos not-ECT", func(f *intent.Fabric) { f.Policy.RoCE.ToS = 104 },
			Options{}, []got{{"FC119", Error, "policy.roce.tos"}}},
		{"tos ECT(1)", func(f *intent.Fabric) { f.Policy.RoCE.ToS = 105 },
			Options{}, []got{{"FC119", Warning, "policy.roce.tos"}}},
		{"tos in the lossy class", func(f *intent.Fabric) { f.Policy.RoCE.ToS = 2 },
			Options{}, []got{{"FC119", Error, "policy.roce.tos"}}},
		{"tos 0: lossy and not-ECT", func(f *intent.Fabric) { f.Policy.RoCE.ToS = 0 },
			Options{}, []got{{"FC119", Error, "policy.roce.tos"}, {"FC119", Error, "policy.roce.tos"}}},
		{"tos out of range", func(f *intent.Fabric) { f.Policy.RoCE.ToS = 300 },
			Options{}, []got{{"FC119", Error, "policy.roce.tos"}}},
		// Without lossless classes (plain OpenConfig) the RoCE class is the
		// ECN class: ToS 0 lands outside it and the fix names its DSCP 26,
		// not the default class's 0 (issue 10 item 19).
		{"tos 0 without lossless classes", func(f *intent.Fabric) {
			class(f, "roce").Lossless = false
			f.Policy.RoCE.ToS = 0
		}, Options{}, []got{{"FC119", Error, "policy.roce.tos"}, {"FC119", Error, "policy.roce.tos"}}}, // the wrong class, and not-ECT
		// FC120
		{"dcbx unset", func(f *intent.Fabric) { f.Policy.DCBX = "" },
			Options{}, []got{{"FC120", Error, "policy.dcbx"}}},
		{"dcbx switch-willing, switches cannot advertise", func(f *intent.Fabric) { f.Policy.DCBX = intent.DCBXSwitchWilling },
			Options{}, []got{{"FC120", Warning, "policy.dcbx"}}}, // leaf1, leaf2 (srlinux); spines have no hosts
		{"dcbx switch-willing, switches advertise", func(f *intent.Fabric) { f.Policy.DCBX = intent.DCBXSwitchWilling },
			Options{Platform: func(p intent.Platform) (PlatformInfo, bool) {
				pi, ok := DefaultPlatform(p)
				pi.DCBXAdvertise = true
				return pi, ok
			}}, nil},
		// FC121
		{"link to unknown node", func(f *intent.Fabric) { f.Links[0].A.Node = "gpu9" },
			Options{}, []got{{"FC121", Error, "inventory.links[0].a"}}},
		{"link to unknown switch port", func(f *intent.Fabric) { f.Links[0].B.Port = "ethernet-1/99" },
			Options{}, []got{{"FC121", Error, "inventory.links[0].b"}}},
		{"link to unknown host nic", func(f *intent.Fabric) { f.Links[0].A.Port = "eth9" },
			Options{}, []got{{"FC121", Error, "inventory.links[0].a"}}},
		{"link to itself", func(f *intent.Fabric) { f.Links[0].A = f.Links[0].B },
			Options{}, []got{{"FC121", Error, "inventory.links[0]"}}},
		// FC122
		{"port used twice", func(f *intent.Fabric) { f.Links[1].B.Port = "ethernet-1/1" },
			Options{}, []got{{"FC122", Error, "inventory.links[1].b"}}},
		{"host NIC used twice", func(f *intent.Fabric) { f.Links[1].A = f.Links[0].A },
			Options{}, []got{{"FC122", Error, "inventory.links[1].a"}}},
		{"unknown endpoint used twice", func(f *intent.Fabric) {
			f.Links[0].A.Node = "gpu9"
			f.Links[1].A.Node = "gpu9"
			f.Links[1].A.Port = f.Links[0].A.Port
		}, Options{}, []got{{"FC121", Error, "inventory.links[0].a"}, {"FC121", Error, "inventory.links[1].a"}, {"FC122", Error, "inventory.links[1].a"}}},
		// FC123
		{"leaf-leaf link closes a cycle", func(f *intent.Fabric) {
			f.Links = append(f.Links, intent.Link{A: intent.Endpoint{Node: "leaf1", Port: "ethernet-1/5"}, B: intent.Endpoint{Node: "leaf2", Port: "ethernet-1/5"}, Pos: at(120)})
		}, Options{}, []got{{"FC123", Warning, "inventory.links[8]"}}},
		{"spine-spine link closes a cycle", func(f *intent.Fabric) {
			f.Links = append(f.Links, intent.Link{A: intent.Endpoint{Node: "spine1", Port: "Ethernet8"}, B: intent.Endpoint{Node: "spine2", Port: "Ethernet8"}, Pos: at(120)})
		}, Options{}, []got{{"FC123", Warning, "inventory.links[8]"}}},
		{"parallel uplinks are not a cycle", func(f *intent.Fabric) {
			f.Links = append(f.Links, intent.Link{A: intent.Endpoint{Node: "leaf1", Port: "ethernet-1/5"}, B: intent.Endpoint{Node: "spine1", Port: "Ethernet8"}, Pos: at(120)})
		}, Options{}, nil},
		{"leaf-leaf link on no cycle", func(f *intent.Fabric) {
			f.Links = f.Links[:4] // hosts only, no spines
			f.Links = append(f.Links, intent.Link{A: intent.Endpoint{Node: "leaf1", Port: "ethernet-1/5"}, B: intent.Endpoint{Node: "leaf2", Port: "ethernet-1/5"}, Pos: at(120)})
		}, Options{}, nil},
		{"ring of switches without hosts", func(f *intent.Fabric) {
			f.Links = []intent.Link{
				{A: intent.Endpoint{Node: "leaf1", Port: "ethernet-1/3"}, B: intent.Endpoint{Node: "spine1", Port: "Ethernet0"}, Pos: at(100)},
				{A: intent.Endpoint{Node: "spine1", Port: "Ethernet4"}, B: intent.Endpoint{Node: "spine2", Port: "Ethernet4"}, Pos: at(101)},
				{A: intent.Endpoint{Node: "spine2", Port: "Ethernet0"}, B: intent.Endpoint{Node: "leaf1", Port: "ethernet-1/4"}, Pos: at(102)},
			}
		}, Options{}, []got{{"FC123", Warning, "inventory.links[0]"}}},
		// FC124
		{"link speed mismatch", func(f *intent.Fabric) { f.Hosts[0].NICs[0].Speed = 100e9 },
			Options{}, []got{{"FC124", Warning, "inventory.links[0]"}}},
		{"link cable length mismatch", func(f *intent.Fabric) { f.Hosts[0].NICs[0].CableMeters = 5 },
			Options{}, []got{{"FC124", Warning, "inventory.links[0]"}}},
		{"host NIC cable length matches", func(f *intent.Fabric) { f.Hosts[0].NICs[0].CableMeters = 3 }, Options{}, nil},
		// FC125
		{"eos port at the policy default mtu 9216", func(f *intent.Fabric) {
			f.Switches[2].Platform = intent.PlatformEOS
		}, Options{}, []got{{"FC125", Error, "inventory.switches[spine1].ports[Ethernet0]"}}},
		{"eos ports at 9214 with their peers", func(f *intent.Fabric) {
			f.Switches[2].Platform = intent.PlatformEOS
			for j := range f.Switches[2].Ports {
				f.Switches[2].Ports[j].MTU = 9214
			}
			f.Switches[0].Ports[2].MTU = 9214 // leaf1:ethernet-1/3 - spine1:Ethernet0
			f.Switches[1].Ports[2].MTU = 9214 // leaf2:ethernet-1/3 - spine1:Ethernet4
		}, Options{}, nil},
		{"one eos port above 9214 among good ones", func(f *intent.Fabric) {
			f.Policy.MTU = 9214
			f.Switches[2].Platform = intent.PlatformEOS
			f.Switches[2].Ports[3].MTU = 9216 // unlinked
		}, Options{}, []got{{"FC125", Error, "inventory.switches[spine1].ports[Ethernet12]"}}},
		{"srlinux port mtu below 1500 (7220 IXR minimum)", func(f *intent.Fabric) {
			f.Policy.HostMTU, f.Policy.RoCEPathMTU = 1200, 1024
			f.Switches[0].Ports[5].MTU = 1400 // unlinked
		}, Options{}, []got{{"FC125", Error, "inventory.switches[leaf1].ports[ethernet-1/6]"}}},
		// The intent's MTU is the IP MTU (issue 10 item 16): a 7220 IXR takes
		// port mtu 9412, the L2 frame without FCS, so IP MTU 9398.
		{"srlinux ports above ip mtu 9398", func(f *intent.Fabric) {
			f.Policy.MTU = 9400
		}, Options{}, []got{
			{"FC125", Error, "inventory.switches[leaf1].ports[ethernet-1/1]"},
			{"FC125", Error, "inventory.switches[leaf2].ports[ethernet-1/1]"},
			{"FC125", Error, "inventory.switches[spine1].ports[Ethernet0]"},
			{"FC125", Error, "inventory.switches[spine2].ports[Ethernet0]"},
		}},
		{"srlinux ports at ip mtu 9398 are fine, sonic ports above 9216 are not", func(f *intent.Fabric) {
			f.Policy.MTU = 9398
		}, Options{}, []got{
			{"FC125", Error, "inventory.switches[spine1].ports[Ethernet0]"},
			{"FC125", Error, "inventory.switches[spine2].ports[Ethernet0]"},
		}},
		{"openconfig has no mtu range to check", func(f *intent.Fabric) {
			f.Policy.MTU = 9500
			f.Switches = f.Switches[:2]
			f.Switches[0].Platform, f.Switches[1].Platform = intent.PlatformOpenConfig, intent.PlatformOpenConfig
			f.Policy.Classes = f.Policy.Classes[:1]
			f.Policy.Classes[0].Weight = 100
			f.Links = f.Links[:4]
		}, Options{}, nil},
		// FC129: 60 KB is below mlx5's 157,386 B at 400G, 3 m (the leaf
		// ports' cable), MTU 9000; 200 KB is above.
		{"host lossless buffer below the mlx5 minimum", func(f *intent.Fabric) {
			f.Policy.HostBuffer = hostBuffer(60_000)
		}, Options{}, []got{{"FC129", Error, "policy.hostBuffers[buffer=1].size"}}},
		{"host lossless buffer above the mlx5 minimum", func(f *intent.Fabric) {
			f.Policy.HostBuffer = hostBuffer(200_000)
		}, Options{}, nil},
		{"host buffer minimum: mlx5 NICs only, a size left to the driver unchecked", func(f *intent.Fabric) {
			f.Policy.HostBuffer = hostBuffer(60_000)
			for i := range f.Hosts {
				f.Hosts[i].NICs[0].RDMADevice = "bnxt_re0"
			}
			f.Hosts[0].NICs = append(f.Hosts[0].NICs, intent.NIC{Interface: "ens2", RDMADevice: "mlx5_1", Speed: 25e9, CableMeters: 1})
		}, Options{}, nil},
		{"host buffer left to the driver", func(f *intent.Fabric) { f.Policy.HostBuffer = hostBuffer(0) }, Options{}, nil},
		// FC130
		{"rdma-cm roce v1 with dscp classes", func(f *intent.Fabric) { f.Policy.RoCE.Mode = "IB/RoCE v1" },
			Options{}, []got{{"FC130", Warning, "policy.roce.mode"}}},
		// FC131, FC132: without asic, the spines are the default profile's
		// model, an ACS-MSN3800 (64 x 100G, Spectrum-2).
		{"sonic ports above the sku speed", func(f *intent.Fabric) { f.Switches[2].ASIC = "" },
			Options{}, []got{{"FC131", Warning, "inventory.switches[spine1].ports[Ethernet0].speed"}}},
		{"sonic ports at the sku speed share its lossless profile", func(f *intent.Fabric) {
			f.Switches[2].ASIC = ""
			spineAt100G(f, 2)
		}, Options{}, []got{{"FC132", Warning, "inventory.switches[spine1].ports"}}},
		{"sonic-202511 writes its own buffer profiles", func(f *intent.Fabric) {
			f.Switches[2].ASIC, f.Switches[2].Profile = "", "sonic-202511"
			spineAt100G(f, 2)
		}, Options{}, nil},
		{"sonic with every sku port in the inventory", func(f *intent.Fabric) {
			f.Switches[2].ASIC = ""
			spineAt100G(f, 2)
			for i := 4; i < 64; i++ {
				f.Switches[2].Ports = append(f.Switches[2].Ports, intent.Port{Name: fmt.Sprintf("Ethernet%d", 4*i), Speed: 100e9, CableMeters: 3, Pos: at(52)})
			}
		}, Options{}, nil},
		{"srlinux ports above 400G", func(f *intent.Fabric) {
			f.Switches[0].Ports[5].Speed = 800e9 // unlinked
		}, Options{}, []got{{"FC131", Warning, "inventory.switches[leaf1].ports[ethernet-1/6].speed"}}},
		// policy.mode (FC160-FC165). The mutations do what the parser
		// does to the preset's classes (intent.applyMode): lossy takes
		// PFC off them, pfc-only their ECN.
		{"lossy mode: no ECN-before-PFC or headroom finding without PFC", func(f *intent.Fabric) {
			lossy(f)
			f.Switches[0].BufferBytes = 1_200_000 // lossless: FC111 (Kmax above buffer - headroom)
		}, Options{}, nil},
		{"lossy mode with a lossless class", func(f *intent.Fabric) {
			f.Policy.Mode = intent.ModeLossy // roce keeps its own lossless: true
		}, Options{}, []got{{"FC160", Error, "policy.classes[roce].lossless"}}},
		{"lossy mode without ecn on the roce class", func(f *intent.Fabric) {
			lossy(f)
			class(f, "roce").ECN = nil
		}, Options{}, []got{{"FC163", Error, "policy.classes[roce].ecn"}}},
		{"lossy incast above a switch buffer", func(f *intent.Fabric) {
			lossy(f)
			f.Switches[0].BufferBytes = 900_000 // 3 senders at 400G, 3 m: 150 KB + 803 KB
		}, Options{}, []got{{"FC164", Warning, "policy.classes[roce].ecn.min"}}},
		{"lossy mode without a cnp class", func(f *intent.Fabric) {
			lossy(f)
			f.Policy.Classes = f.Policy.Classes[:2]
		}, Options{}, []got{{"FC107", Warning, "policy.classes"}}},
		{"semi-lossless keeps no switch headroom", func(f *intent.Fabric) {
			f.Policy.Mode = intent.ModeSemiLossless
			f.Switches[0].BufferBytes = 100_000 // lossless: FC112
		}, Options{}, nil},
		// FC166: the SONiC spines face no host, so no FC166 above.
		{"semi-lossless: a host on a sonic switch, the watchdog on", semiLosslessHostOnSONiC,
			Options{}, []got{{"FC166", Warning, "policy.watchdog.enabled"}}},
		{"semi-lossless: a host on a sonic switch, the watchdog off", func(f *intent.Fabric) {
			semiLosslessHostOnSONiC(f)
			f.Policy.Watchdog.Enabled = false
		}, Options{}, []got{{"FC114", Warning, "policy.watchdog.enabled"}}},
		{"semi-lossless without links: any sonic port may face a host", func(f *intent.Fabric) {
			f.Policy.Mode = intent.ModeSemiLossless
			f.Links = nil
		}, Options{}, []got{{"FC166", Warning, "policy.watchdog.enabled"}}},
		{"semi-lossless on eos", func(f *intent.Fabric) {
			f.Policy.Mode = intent.ModeSemiLossless
			f.Policy.MTU = 9214
			f.Switches[2].Platform = intent.PlatformEOS
			f.Switches[2].ASIC = ""
		}, Options{}, []got{{"FC162", Error, "inventory.switches[spine1].platform"}}},
		{"semi-lossless without a lossless class", func(f *intent.Fabric) {
			f.Policy.Mode = intent.ModeSemiLossless
			class(f, "roce").Lossless = false
		}, Options{}, []got{{"FC160", Error, "policy.classes[roce].lossless"}}},
		{"pfc-only", pfcOnly, Options{}, []got{{"FC165", Warning, "policy.mode"}}},
		{"pfc-only with ecn", func(f *intent.Fabric) {
			f.Policy.Mode = intent.ModePFCOnly
		}, Options{}, []got{{"FC165", Warning, "policy.mode"}, {"FC161", Error, "policy.classes[roce].ecn"}}},
		{"pfc-only without the watchdog", func(f *intent.Fabric) {
			pfcOnly(f)
			f.Policy.Watchdog.Enabled = false
		}, Options{}, []got{{"FC165", Warning, "policy.mode"}, {"FC114", Error, "policy.watchdog.enabled"}}},
		{"chain of switches without hosts", func(f *intent.Fabric) {
			f.Links = []intent.Link{
				{A: intent.Endpoint{Node: "leaf1", Port: "ethernet-1/3"}, B: intent.Endpoint{Node: "spine1", Port: "Ethernet0"}, Pos: at(100)},
				{A: intent.Endpoint{Node: "spine1", Port: "Ethernet4"}, B: intent.Endpoint{Node: "spine2", Port: "Ethernet4"}, Pos: at(101)},
			}
		}, Options{}, nil},
	}
}

// lossy and pfcOnly set the mode and make the preset's classes what the
// parser makes them in it.
func lossy(f *intent.Fabric) {
	f.Policy.Mode = intent.ModeLossy
	class(f, "roce").Lossless = false
}

func pfcOnly(f *intent.Fabric) {
	f.Policy.Mode = intent.ModePFCOnly
	class(f, "roce").ECN = nil
}

// semiLosslessHostOnSONiC runs the fabric semi-lossless with a fifth host
// cabled to SONiC spine1's free port Ethernet8.
func semiLosslessHostOnSONiC(f *intent.Fabric) {
	f.Policy.Mode = intent.ModeSemiLossless
	f.Hosts = append(f.Hosts, intent.Host{Name: "gpu5", Address: "10.0.1.5", Pos: at(90),
		NICs: []intent.NIC{{Interface: "ens1f0np0", RDMADevice: "mlx5_0", RDMAPort: 1, Speed: 400e9, Pos: at(91)}}})
	f.Links = append(f.Links, intent.Link{A: intent.Endpoint{Node: "gpu5", Port: "ens1f0np0"}, B: intent.Endpoint{Node: "spine1", Port: "Ethernet8"}, Pos: at(120)})
}

// hostBuffer puts priority 3 (the RoCE class's) in receive buffer 1 of the
// given size.
func hostBuffer(size int64) *intent.HostBuffer {
	hb := &intent.HostBuffer{Pos: at(8)}
	hb.PrioToBuffer[3], hb.Sizes[1], hb.BufferPos[1] = 1, size, at(9)
	return hb
}

// spineAt100G runs spine sw's ports, and the leaf ports cabled to them, at 100G.
func spineAt100G(f *intent.Fabric, sw int) {
	for j := range f.Switches[sw].Ports {
		f.Switches[sw].Ports[j].Speed = 100e9
	}
	for _, l := range f.Links {
		for _, e := range [][2]intent.Endpoint{{l.A, l.B}, {l.B, l.A}} {
			if e[1].Node == f.Switches[sw].Name {
				if p := f.Switch(e[0].Node).Port(e[0].Port); p != nil {
					p.Speed = 100e9
				}
			}
		}
	}
}

func TestRules(t *testing.T) {
	tests := ruleCases()
	var all strings.Builder // every message, for the golden file
	covered := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := goodFabric()
			tt.mutate(f)
			fs := Run(f, tt.opts)
			if diff := cmp.Diff(tt.want, summarize(fs), cmpEmpty); diff != "" {
				t.Errorf("Run() mismatch (-want +got):\n%s\nfindings:\n%s", diff, dump(fs))
			}
			fmt.Fprintf(&all, "== %s\n%s", tt.name, dump(fs))
			for _, w := range tt.want {
				covered[w.ID] = true
			}
		})
	}
	for _, r := range Rules() {
		if !covered[r.ID] && r.ID != ParseErrorID {
			t.Errorf("rule %s (%s) has no positive test case", r.ID, r.Name)
		}
	}
	golden(t, "rules.golden", all.String())
}

var update = flag.Bool("update", false, "update golden files")

// golden compares got with testdata/name, or rewrites it with -update. The
// golden file is what a reviewer reads to judge the messages and fixes.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run go test -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

func TestRuleTable(t *testing.T) {
	rules := Rules()
	for i, r := range rules {
		if r.ID == "" || r.Name == "" || r.Summary == "" || (r.run == nil) != (r.ID == ParseErrorID) {
			t.Errorf("rule %d (%s) is incomplete", i, r.ID)
		}
		if i > 0 && rules[i-1].ID >= r.ID {
			t.Errorf("rule IDs not strictly ascending: %s then %s", rules[i-1].ID, r.ID)
		}
	}
	rules[0].ID = "changed"
	if Rules()[0].ID == "changed" {
		t.Error("Rules() returned the table itself, not a copy")
	}
}

func TestRunNeverPanics(t *testing.T) {
	if got := Run(nil, Options{}); got != nil {
		t.Errorf("Run(nil) = %v, want nil", got)
	}
	weird := goodFabric()
	weird.Policy.Classes = append(weird.Policy.Classes,
		intent.Class{Name: "neg", DSCP: []int{-5, 99}, Priority: -1, Lossless: true, Weight: -10, ECN: &intent.ECN{MinBytes: -1, MaxBytes: -2, Probability: 1000}},
		intent.Class{Name: "hi", Priority: 99, Lossless: true, CNP: true})
	weird.Policy.RoCE.ToS = -3
	weird.Policy.HostMTU = -1
	weird.Switches = append(weird.Switches, intent.Switch{Name: "leaf1", Platform: "x", BufferBytes: -1,
		Ports: []intent.Port{{Name: "p", Speed: -1}, {Name: "p", Speed: 1, CableMeters: -3}}})
	weird.Links = append(weird.Links, intent.Link{}, intent.Link{A: intent.Endpoint{Node: "leaf1"}, B: intent.Endpoint{Node: "leaf1"}})
	for _, f := range []*intent.Fabric{{}, weird} {
		fs := Run(f.WithDerive(intent.Derive{CellFactor: -1}), Options{})
		for _, x := range fs {
			if x.ID == "" || x.Message == "" || x.Fix == "" {
				t.Errorf("incomplete finding %+v", x)
			}
		}
	}
}

func TestSeverityText(t *testing.T) {
	for _, s := range []Severity{Info, Warning, Error} {
		b, err := s.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Severity
		if err := back.UnmarshalText(b); err != nil || back != s {
			t.Errorf("round trip of %v: got %v, %v", s, back, err)
		}
	}
	var s Severity
	if err := s.UnmarshalText([]byte("fatal")); err == nil {
		t.Error("UnmarshalText(fatal) succeeded, want an error")
	}
	if _, err := Severity(7).MarshalText(); err == nil {
		t.Error("MarshalText(7) succeeded, want an error")
	}
}

func TestSortedByPosition(t *testing.T) {
	f := goodFabric()
	f.Policy.RoCE.ToS = 107           // line 27
	class(f, "roce").Weight = 40      // line 10
	f.Switches[0].BufferBytes = 1_000 // line 42
	f.Policy.GlobalPause = true       // line 5
	fs := Run(f, Options{})
	var lines []int
	for _, x := range fs {
		lines = append(lines, x.Pos.Line)
	}
	if diff := cmp.Diff([]int{5, 10, 27, 42}, lines); diff != "" {
		t.Errorf("finding lines (-want +got):\n%s\n%s", diff, dump(fs))
	}
}

var cmpEmpty = cmp.Comparer(func(a, b []got) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return cmp.Equal(a, b)
})

// TestLinkEndsFoundAsPortSays: newChecker finds each link's switch port
// from where the last one on that switch was (links listed in port order)
// and by searching otherwise; either way the port Switch.Port names, for
// links in port order, reversed and shuffled.
func TestLinkEndsFoundAsPortSays(t *testing.T) {
	f := bigFabric(1)
	for _, order := range []string{"in order", "reversed", "shuffled"} {
		switch order {
		case "reversed":
			slices.Reverse(f.Links)
		case "shuffled":
			r := rand.New(rand.NewPCG(30, 1))
			r.Shuffle(len(f.Links), func(i, j int) { f.Links[i], f.Links[j] = f.Links[j], f.Links[i] })
		}
		c := newChecker(f, Options{})
		for i, l := range f.Links {
			for j, e := range []intent.Endpoint{l.A, l.B} {
				sw := f.Switch(e.Node)
				if sw == nil {
					continue
				}
				if got, want := c.ends[i][j].port, sw.Port(e.Port); got != want || got == nil {
					t.Fatalf("%s: link %d end %s: port %p, Switch.Port %p", order, i, e, got, want)
				}
			}
		}
	}
}
