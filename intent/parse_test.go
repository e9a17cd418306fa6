package intent

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const header = "apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\n"

func mustParse(t *testing.T, src string) *Fabric {
	t.Helper()
	f, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return f
}

func TestPresetMatchesNVIDIALosslessDefaults(t *testing.T) {
	f := mustParse(t, header+"policy: {preset: roce-lossless}\n")
	p := f.Policy
	type cls struct {
		Name       string
		DSCP       []int
		Prio       int
		Lossless   bool
		Strict     bool
		Weight     int
		ECNMin     int64
		ECNMax     int64
		ECNProb    int
		CNP, Deflt bool
	}
	var got []cls
	for _, c := range p.Classes {
		x := cls{Name: c.Name, DSCP: c.DSCP, Prio: c.Priority, Lossless: c.Lossless, Strict: c.Strict, Weight: c.Weight, CNP: c.CNP, Deflt: c.Default}
		if c.ECN != nil {
			x.ECNMin, x.ECNMax, x.ECNProb = c.ECN.MinBytes, c.ECN.MaxBytes, c.ECN.Probability
		}
		got = append(got, x)
	}
	want := []cls{
		{Name: "default", Prio: 0, Weight: 50, Deflt: true},
		{Name: "roce", DSCP: []int{26}, Prio: 3, Lossless: true, Weight: 50, ECNMin: 150000, ECNMax: 1501500, ECNProb: 100},
		{Name: "cnp", DSCP: []int{48}, Prio: 6, Strict: true, CNP: true},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("preset classes mismatch (-want +got):\n%s", d)
	}
	if p.RoCE.ToS != 106 || p.RoCE.CNPDSCP != 48 || p.RoCE.CNPPriority != 6 || p.RoCE.Mode != "RoCE v2" {
		t.Errorf("RoCE host settings = %+v, want ToS 106, CNP DSCP 48 prio 6, RoCE v2", p.RoCE)
	}
	if !p.Watchdog.Enabled || p.Watchdog.Detect != 200*time.Millisecond {
		t.Errorf("watchdog = %+v, want enabled with 200ms detect", p.Watchdog)
	}
	if p.PFCBitmap() != 1<<3 {
		t.Errorf("PFCBitmap = %08b, want 00001000", p.PFCBitmap())
	}
	m := p.DSCPToPriority()
	if m[26] != 3 || m[48] != 6 || m[0] != 0 || m[46] != 0 {
		t.Errorf("DSCP map wrong: 26->%d 48->%d 0->%d 46->%d", m[26], m[48], m[0], m[46])
	}
}

func TestPresetOverrideFieldByField(t *testing.T) {
	f := mustParse(t, header+`policy:
  preset: roce-lossless
  classes:
    - name: roce
      ecn: {min: 200KB}
    - name: storage
      dscp: [24, 25]
      priority: 4
      lossless: true
      weight: 0
`)
	roce := f.Policy.ClassByName("roce")
	if roce.ECN.MinBytes != 200000 || roce.ECN.MaxBytes != 1501500 || !roce.Lossless || roce.Priority != 3 {
		t.Errorf("roce after override = %+v ECN %+v; want min overridden, the rest from the preset", roce, roce.ECN)
	}
	if roce.Pos.Line != 6 {
		t.Errorf("overridden class position = %v, want line 6", roce.Pos)
	}
	if got := f.Policy.LosslessPriorities(); !cmp.Equal(got, []int{3, 4}) {
		t.Errorf("LosslessPriorities = %v, want [3 4]", got)
	}
}

func TestRangesExpandAndZip(t *testing.T) {
	f := mustParse(t, header+`policy: {preset: roce-lossless}
inventory:
  switches:
    - name: leaf{1..2}
      platform: sonic
      address: "10.0.0.{1..2}:8080"
      portDefaults: {speed: 100G, cable: 5m}
      ports:
        - name: Ethernet{0..124..4}
        - {name: Ethernet200, speed: 400G, mtu: 9100}
  hosts:
    - name: gpu{01..08}
      address: 10.0.1.{1..8}
      nics:
        - {interface: eth0, rdma: mlx5_0, address: "192.168.1.{1..8}"}
  links:
    - ["gpu{01..08}:eth0", "leaf1:Ethernet{0..28..4}"]
`)
	if len(f.Switches) != 2 || f.Switches[1].Address != "10.0.0.2:8080" {
		t.Fatalf("switches = %d, leaf2 address %q", len(f.Switches), f.Switches[1].Address)
	}
	ports := f.Switches[0].Ports
	if len(ports) != 33 || ports[1].Name != "Ethernet4" || ports[32].Name != "Ethernet200" {
		t.Errorf("ports: %d, [1]=%s [32]=%s; want 33 in natural order", len(ports), ports[1].Name, ports[32].Name)
	}
	if ports[0].CableMeters != 5 || ports[0].Speed != 100e9 || ports[32].Speed != 400e9 || ports[32].MTU != 9100 {
		t.Errorf("port defaults not applied: %+v / %+v", ports[0], ports[32])
	}
	if f.Hosts[7].Name != "gpu08" || f.Hosts[7].NICs[0].Address != "192.168.1.8" || f.Hosts[7].Address != "10.0.1.8" {
		t.Errorf("host 8 = %+v", f.Hosts[7])
	}
	if len(f.Links) != 8 || f.Links[7].A.String() != "gpu08:eth0" || f.Links[7].B.String() != "leaf1:Ethernet28" {
		t.Errorf("links = %d, last %v", len(f.Links), f.Links[len(f.Links)-1])
	}
}

func TestSplitFilesMerge(t *testing.T) {
	f, err := ParseSources(
		Source{Name: "policy.yaml", Data: []byte(header + "metadata: {name: pod}\npolicy: {preset: roce-lossless}\n")},
		Source{Name: "inv/leafs.yaml", Data: []byte(header + "inventory:\n  switches:\n    - {name: leaf1, platform: eos, address: a:6030, tls: {ca: ca.pem}, ports: [{name: Ethernet1, speed: 100G}]}\n")},
		Source{Name: "inv/hosts.yaml", Data: []byte(header + "inventory:\n  hosts:\n    - {name: h1, address: local}\n")},
	)
	if err != nil {
		t.Fatal(err)
	}
	if f.Name != "pod" || len(f.Switches) != 1 || len(f.Hosts) != 1 || !f.Hosts[0].IsLocal() {
		t.Errorf("merged fabric: name %q, %d switches, %d hosts", f.Name, len(f.Switches), len(f.Hosts))
	}
	if f.Switches[0].TLS.CA != "inv/ca.pem" {
		t.Errorf("TLS CA = %q, want it relative to the file that named it (inv/ca.pem)", f.Switches[0].TLS.CA)
	}
	if f.Switches[0].Pos.File != "inv/leafs.yaml" || f.Switches[0].Pos.Line != 5 {
		t.Errorf("switch position = %v, want inv/leafs.yaml:5", f.Switches[0].Pos)
	}
}

func TestErrorsArePositionedAndComplete(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string // "line:col path" of each error, in order
	}{
		{"empty", "", []string{"1:1 "}},
		{"only comments", "# nothing\n", []string{"1:1 "}},
		{"binary", "\x00\x01\x02", []string{"1:1 "}},
		{"tabs", header + "policy:\n\tpreset: roce-lossless\n", []string{"4:1 "}},
		{"no header", "policy: {preset: roce-lossless}\n", []string{"1:1 apiVersion", "1:1 kind"}},
		{"wrong version", "apiVersion: v9\nkind: Fabric\npolicy: {preset: roce-lossless}\n", []string{"1:1 apiVersion"}},
		{"unknown keys everywhere", header + "policy:\n  preset: roce-lossless\n  mtus: 9000\ninventory:\n  swtiches: []\n",
			[]string{"5:3 policy", "7:3 inventory"}},
		{"wrong types", header + "policy:\n  preset: roce-lossless\n  mtu: big\n  globalPause: yes\n",
			[]string{"5:8 policy.mtu", "6:16 policy.globalPause"}},
		{"out of range", header + "policy:\n  preset: roce-lossless\n  classes:\n    - {name: x, dscp: [64], priority: 9}\n",
			[]string{"6:24 policy.classes[x].dscp", "6:39 policy.classes[x].priority"}},
		{"huge number", header + "policy:\n  mtu: 99999999999999999999999\n", []string{"4:8 policy.mtu"}},
		{"duplicate key", header + "policy:\n  preset: roce-lossless\n  preset: none\n", []string{"5:3 policy.preset"}},
		{"bad units", header + "policy:\n  preset: roce-lossless\n  watchdog: {detect: 200}\n  classes:\n    - {name: roce, ecn: {min: 150XB}}\n",
			[]string{"5:22 policy.watchdog.detect", "7:31 policy.classes[roce].ecn.min"}},
		{"inline secret", header + "policy: {preset: roce-lossless}\ninventory:\n  switches:\n    - {name: s, platform: sonic, address: 'a:1', credentials: {password: hunter2}}\n",
			[]string{"6:63 inventory.switches[s].credentials"}},
		{"unknown platform", header + "policy: {preset: roce-lossless}\ninventory:\n  switches:\n    - {name: s, platform: junos, address: 'a:1'}\n",
			[]string{"6:27 inventory.switches[s].platform"}},
		{"no policy", header + "inventory: {}\n", []string{"1:1 policy"}},
		{"duplicate names", header + "policy: {preset: roce-lossless}\ninventory:\n  hosts:\n    - {name: h1}\n    - {name: h1}\n",
			[]string{"7:7 inventory.hosts[h1].name"}},
		{"range mismatch", header + "policy: {preset: roce-lossless}\ninventory:\n  links:\n    - [\"a{1..2}:e\", \"b:p{1..3}\"]\n",
			[]string{"6:7 inventory.links[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(tt.src))
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("Parse error = %v (%T), want intent.Errors", err, err)
			}
			var got []string
			for _, e := range es {
				if e.Pos.File != "t.yaml" {
					t.Errorf("error %q has file %q, want t.yaml", e, e.Pos.File)
				}
				got = append(got, strings.TrimSpace(fmt.Sprintf("%d:%d %s", e.Pos.Line, e.Pos.Col, e.Path)))
			}
			want := make([]string, len(tt.want))
			for i, w := range tt.want {
				want[i] = strings.TrimSpace(w)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("errors mismatch (-want +got):\n%s\nfull: %v", d, err)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error text leaks the inline secret: %v", err)
			}
		})
	}
}

func TestAliasBombIsRefused(t *testing.T) {
	// The intent's schema nests lists two deep (hosts -> nics), so the worst
	// alias expansion is quadratic: 3,000 hosts each aliasing one list of
	// 3,000 NICs is 9 million NIC nodes from a ~70 KB file.
	const n = 3000
	var b strings.Builder
	b.WriteString(header + "policy: {preset: roce-lossless}\nx-nics: &n [")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "{interface: e%d},", i)
	}
	b.WriteString("]\ninventory:\n  hosts:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "    - {name: h%d, nics: *n}\n", i)
	}
	_, err := Parse("bomb.yaml", []byte(b.String()))
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("alias bomb: error = %v, want intent.Errors", err)
	}
	if !strings.Contains(err.Error(), "alias bomb") {
		t.Errorf("error does not explain the refusal: %v", err)
	}
}

func TestAnchorsAndMergeKeysWork(t *testing.T) {
	f := mustParse(t, header+`policy: {preset: roce-lossless}
inventory:
  switches:
    - &leaf
      name: leaf1
      platform: srlinux
      address: "10.0.0.1:57400"
      portDefaults: {speed: 400G}
      ports: [{name: "ethernet-1/{1..4}"}]
    - <<: *leaf
      name: leaf2
      address: "10.0.0.2:57400"
`)
	if len(f.Switches) != 2 || len(f.Switches[1].Ports) != 4 || f.Switches[1].Platform != PlatformSRLinux {
		t.Errorf("merge key: got %d switches, leaf2 %+v", len(f.Switches), f.Switches[1])
	}
}

func TestRangeProductIsBounded(t *testing.T) {
	// 100,000 switches x 100,000 ports would be 10^10 ports from 3 lines.
	src := header + "policy: {preset: roce-lossless}\ninventory:\n  switches:\n" +
		"    - {name: 's{1..100000}', platform: sonic, address: '10.{1..100000}:1', ports: [{name: 'e{1..100000}', speed: 100G}]}\n"
	done := make(chan error, 1)
	go func() { _, err := Parse("t.yaml", []byte(src)); done <- err }()
	select {
	case err := <-done:
		var es Errors
		if !errors.As(err, &es) || !(strings.Contains(err.Error(), "expands to more than") || strings.Contains(err.Error(), "a switch has at most")) {
			t.Fatalf("error = %v, want a positioned 'expands to more than' or per-switch port limit error", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Parse did not refuse a 10^10-port range product")
	}
}

// TestExpansionBudgetStopsResolving: once the ranges of a fabric exceed the
// expansion budget, the resolver reports it once and expands nothing more.
// Before, every later switch rebuilt its whole port list (up to the budget
// each) and every later link its ranges: a 3 KB file of aliased port lists
// took a minute and 3.5 GB.
func TestExpansionBudgetStopsResolving(t *testing.T) {
	var b strings.Builder
	b.WriteString(header + "policy: {preset: roce-lossless}\nx-ports: &p\n")
	for i := range 5 {
		fmt.Fprintf(&b, "  - {name: 'e%d/{1..100}', speed: 100G}\n", i)
	}
	b.WriteString("x-link: &l ['a{1..100}:x', 'b{1..100}:y']\ninventory:\n  switches:\n")
	for i := range 10 {
		fmt.Fprintf(&b, "    - {name: s%d, platform: sonic, address: 'a:1', ports: *p}\n", i)
	}
	b.WriteString("  links:\n")
	for range 10 {
		b.WriteString("    - *l\n")
	}
	errs := &errList{limit: maxErrors}
	parts := decodeSource(Source{Name: "t.yaml", Data: []byte(b.String())}, errs)
	if len(errs.errs) > 0 {
		t.Fatalf("decode: %v", errs.result())
	}
	const limit = 1000 // 10 switches x 500 ports + 10 x 100 links = 6,000
	r := &resolver{errs: errs, f: &Fabric{}, limit: limit}
	r.resolve(parts)
	n := 0
	for _, e := range errs.errs {
		if strings.Contains(e.Msg, "expands to more than") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d 'expands to more than' errors, want 1: %v", n, errs.result())
	}
	if r.objects > limit+500 {
		t.Errorf("resolver expanded %d objects against a budget of %d: it went on after the overrun", r.objects, limit)
	}
}

// TestMergeKeyBombIsRefused: merge keys whose values are lists of aliases
// of lists double at every level; 40 levels were 2^40 merges, uncounted by
// the alias budget (a 1.5 KB file that never finished).
func TestMergeKeyBombIsRefused(t *testing.T) {
	var b strings.Builder
	b.WriteString(header + "x-0: &x0 {}\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "x-%d: &x%d [*x%d, *x%d]\n", i, i, i-1, i-1)
	}
	b.WriteString("policy: {<<: *x40, preset: roce-lossless}\n")
	done := make(chan error, 1)
	go func() { _, err := Parse("bomb.yaml", []byte(b.String())); done <- err }()
	select {
	case err := <-done:
		var es Errors
		if !errors.As(err, &es) {
			t.Fatalf("merge bomb: error = %v, want intent.Errors", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Parse did not refuse a merge-key bomb")
	}
}

// TestMergeKeySemantics: a merged mapping's own merge keys apply (nested
// merges), and in a list of merged mappings the earlier ones win, as YAML's
// merge key type and yaml.v3 define them.
func TestMergeKeySemantics(t *testing.T) {
	f := mustParse(t, header+`policy: {preset: roce-lossless}
x-base: &base {speed: 100G, mtu: 9000}
x-mid: &mid
  <<: *base
  cable: 3m
x-a: &a {speed: 400G}
x-b: &b {speed: 200G, cable: 7m}
inventory:
  switches:
    - name: leaf1
      platform: sonic
      address: "10.0.0.1:8080"
      portDefaults:
        <<: *mid
      ports: [{name: "Ethernet0"}]
    - name: leaf2
      platform: sonic
      address: "10.0.0.2:8080"
      portDefaults:
        <<: [*a, *b]
      ports: [{name: "Ethernet0"}]
`)
	got := []Port{f.Switches[0].Ports[0], f.Switches[1].Ports[0]}
	want := []Port{
		{Name: "Ethernet0", Speed: 100e9, CableMeters: 3, MTU: 9000},
		{Name: "Ethernet0", Speed: 400e9, CableMeters: 7},
	}
	if d := cmp.Diff(want, got, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Pos" || p.Last().String() == ".Fields" }, cmp.Ignore())); d != "" {
		t.Errorf("merged ports mismatch (-want +got):\n%s", d)
	}
}

// TestLinkDuplicateKeyIsAnError: duplicate keys are errors everywhere, also
// in a link written as a mapping (the second a silently replaced the first).
func TestLinkDuplicateKeyIsAnError(t *testing.T) {
	_, err := Parse("t.yaml", []byte(header+`policy: {preset: roce-lossless}
inventory:
  links:
    - {a: "gpu1:eth0", a: "gpu2:eth0", b: "leaf1:e1"}
`))
	var es Errors
	if !errors.As(err, &es) || len(es) != 1 || es[0].Pos.Line != 6 || !strings.Contains(es[0].Msg, "duplicate") {
		t.Errorf("error = %v, want one 'duplicate' error on line 6", err)
	}
}

func TestDeviceNamesFollowKernelRules(t *testing.T) {
	for _, tt := range []struct {
		nic  string
		want string // path of the error, "" = accepted
	}{
		{"{interface: ens1f0np0, rdma: mlx5_0}", ""},
		{"{interface: eth0.100, rdma: rxe0}", ""},
		{"{interface: ../../etc, rdma: mlx5_0}", "inventory.hosts[h].nics[../../etc].interface"},
		{"{interface: eth0, rdma: ../../../evil}", "inventory.hosts[h].nics[eth0].rdma"},
		{"{interface: averyveryverylongname0}", "inventory.hosts[h].nics[averyveryverylongname0].interface"},
		{"{interface: \"eth 0\"}", "inventory.hosts[h].nics[eth 0].interface"},
		{"{interface: \"..\"}", "inventory.hosts[h].nics[..].interface"},
		{"{interface: \"eth0:1\"}", "inventory.hosts[h].nics[eth0:1].interface"},
	} {
		src := header + "policy: {preset: roce-lossless}\ninventory:\n  hosts:\n    - name: h\n      nics: [" + tt.nic + "]\n"
		_, err := Parse("t.yaml", []byte(src))
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: unexpected error %v", tt.nic, err)
			}
			continue
		}
		var es Errors
		if !errors.As(err, &es) || len(es) != 1 || es[0].Path != tt.want || es[0].Pos.Line != 7 {
			t.Errorf("%s: error = %v, want one error at line 7, path %s", tt.nic, err, tt.want)
		}
	}
}

func TestLatencyIterationsAtLeastFive(t *testing.T) {
	_, err := Parse("t.yaml", []byte(header+"policy: {preset: roce-lossless}\nvalidation: {iterations: 4}\n"))
	var es Errors
	if !errors.As(err, &es) || es[0].Path != "validation.iterations" {
		t.Errorf("iterations 4 (perftest needs 5): error = %v", err)
	}
}

func TestBundleRoundTrip(t *testing.T) {
	f, err := ParseSources(
		Source{Name: "policy.yaml", Data: []byte(header + "metadata: {name: pod}\npolicy: {preset: roce-lossless, mtu: 9100}\n")},
		Source{Name: "hosts.yaml", Data: []byte(header + "inventory:\n  hosts:\n    - {name: 'h{1..3}', address: '10.0.0.{1..3}'}\n")},
	)
	if err != nil {
		t.Fatal(err)
	}
	g, err := Parse("<stdin>", f.Bundle())
	if err != nil {
		t.Fatalf("the bundle does not parse: %v", err)
	}
	if g.Name != "pod" || g.Policy.MTU != 9100 || len(g.Hosts) != 3 || g.Hosts[2].Address != "10.0.0.3" {
		t.Errorf("bundle parsed to name %q, MTU %d, %d hosts; want the same fabric", g.Name, g.Policy.MTU, len(g.Hosts))
	}
}

func TestLoadFromReadsTheGivenStdin(t *testing.T) {
	f, err := LoadFrom(strings.NewReader(header+"policy: {preset: roce-lossless}\n"), "-")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Sources) != 1 || f.Sources[0].Name != "<stdin>" || f.Files[0] != "<stdin>" {
		t.Errorf("sources = %+v, want one named <stdin>", f.Files)
	}
}

func TestHostBuffers(t *testing.T) {
	f := mustParse(t, header+`policy:
  preset: roce-lossless
  hostBuffers:
    - {buffer: 0, size: 128KB, priorities: [0, 6]}
    - {buffer: 1, size: 256KB, priorities: [3]}
`)
	hb := f.Policy.HostBuffer
	if hb == nil {
		t.Fatal("HostBuffer is nil")
	}
	if hb.PrioToBuffer != [8]int{0, 0, 0, 1, 0, 0, 0, 0} || hb.Sizes != [8]int64{128000, 256000} {
		t.Errorf("HostBuffer = %+v", hb)
	}
	if mustParse(t, header+"policy: {preset: roce-lossless}\n").Policy.HostBuffer != nil {
		t.Error("no hostBuffers should leave the NIC's buffers alone (nil)")
	}
	_, err := Parse("t.yaml", []byte(header+`policy:
  preset: roce-lossless
  hostBuffers:
    - {buffer: 1, priorities: [3]}
    - {buffer: 1, priorities: [4]}
    - {buffer: 2, priorities: [3]}
`))
	var es Errors
	if !errors.As(err, &es) || len(es) != 2 || es[0].Path != "policy.hostBuffers[1].buffer" || es[1].Path != "policy.hostBuffers[2].priorities" {
		t.Fatalf("want 2 errors (buffer 1 twice, priority 3 twice), got %v", err)
	}
	_, err = Parse("t.yaml", []byte(header+"policy:\n  hostBuffers: [{buffer: 8, priorities: [9]}]\n"))
	if !errors.As(err, &es) || len(es) != 2 {
		t.Fatalf("want 2 range errors (buffer 8, priority 9), got %v", err)
	}
}

// TestToSFromRoCEClassWithoutPFC (issue 10 item 19): on a platform without
// PFC (plain OpenConfig) the RoCE class is lossy with ECN; the host ToS must
// still come from it (DSCP 26 << 2 | ECT(0) = 106), not be 0 (not-ECT, the
// default class).
func TestToSFromRoCEClassWithoutPFC(t *testing.T) {
	f := mustParse(t, header+`policy:
  preset: roce-lossless
  classes:
    - name: roce
      lossless: false
`)
	if got := f.Policy.RoCE.ToS; got != 106 {
		t.Errorf("RoCE.ToS = %d, want 106 (DSCP 26 of class roce, ECT(0))", got)
	}
	if cl := f.Policy.RoCEClass(); cl == nil || cl.Name != "roce" {
		t.Errorf("RoCEClass() = %v, want class roce", cl)
	}
}

// TestSecretsInTheWrongFieldAreNotEchoed: a password written where a
// mapping or a variable name belongs is reported without its value.
func TestSecretsInTheWrongFieldAreNotEchoed(t *testing.T) {
	const secret = "hunter2-S3cret!"
	for _, creds := range []string{
		`credentials: "admin:` + secret + `"`,
		`credentials: {usernameEnv: GNMI_USER, passwordEnv: "` + secret + `"}`,
		`credentials: {usernameEnv: "` + secret + `", passwordEnv: GNMI_PASS}`,
		`credentials: {usernameEnv: GNMI_USER, passwordEnv: [` + secret + `]}`,
		`credentials: {password: "` + secret + `"}`,
	} {
		src := `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
policy: {preset: roce-lossless}
inventory:
  switches:
    - name: leaf1
      platform: srlinux
      address: 127.0.0.1:57400
      ` + creds + `
`
		_, err := Parse("fabric.yaml", []byte(src))
		if err == nil {
			t.Errorf("%s: accepted", creds)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: the error echoes the secret: %v", creds, err)
		}
		var es Errors
		if !errors.As(err, &es) || !es[0].Pos.IsValid() {
			t.Errorf("%s: error without a position: %v", creds, err)
		}
	}
}

// TestErrorPathsNameEntriesOneWay: the decoder and the resolver name a list
// entry the same way, by its name as written (a range stays a range).
func TestErrorPathsNameEntriesOneWay(t *testing.T) {
	const head = `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
policy: {preset: roce-lossless}
inventory:
  switches:
    - name: leaf{1..2}
      platform: srlinux
`
	tests := []struct {
		name, body string
		want       []string
	}{
		{"decoder", `      address: 10.0.0.{1..2}:57400
      colour: red
      ports: [{name: e3, speed: fast}]
`, []string{"inventory.switches[leaf{1..2}]", "inventory.switches[leaf{1..2}].ports[e3].speed"}},
		{"resolver", `      address: 10.0.0.{1..2}:57400
      ports: [{name: "e{1..2}", mtu: 9000}]
`, []string{"inventory.switches[leaf{1..2}].ports[e{1..2}].speed"}},
		{"resolver, shared address", `      address: 10.0.0.1:57400
      ports: [{name: "e{1..2}", speed: 100G}]
`, []string{"inventory.switches[leaf{1..2}].address"}},
	}
	for _, tt := range tests {
		_, err := Parse("f.yaml", []byte(head+tt.body))
		var es Errors
		if !errors.As(err, &es) {
			t.Fatalf("%s: Parse = %v, want intent.Errors", tt.name, err)
		}
		var got []string
		for _, e := range es {
			got = append(got, e.Path)
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("%s: error paths (-want +got):\n%s", tt.name, d)
		}
	}
}

// TestSwitchProxy: switches[].proxy is an HTTP CONNECT proxy as
// http://host:port; anything else (credentials in it above all) is an
// error at its line, and the credentials are not echoed.
func TestSwitchProxy(t *testing.T) {
	base := "apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\nmetadata: {name: p}\npolicy: {preset: roce-lossless}\ninventory:\n  switches:\n    - name: leaf1\n      platform: srlinux\n      address: leaf1:57400\n      proxy: %s\n"
	f, err := Parse("fabric.yaml", []byte(fmt.Sprintf(base, "http://proxy.mgmt:3128")))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Switches[0].Proxy; got != "http://proxy.mgmt:3128" {
		t.Errorf("proxy %q", got)
	}
	for _, bad := range []string{"socks5://p:1080", "http://user:hunter2@p:3128", "http://p", "p:3128", "http://p:3128/x"} {
		_, err := Parse("fabric.yaml", []byte(fmt.Sprintf(base, bad)))
		if err == nil {
			t.Errorf("proxy %q accepted", bad)
			continue
		}
		if !strings.Contains(err.Error(), "fabric.yaml:10:") || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("proxy %q: %v (want fabric.yaml:10, no secret)", bad, err)
		}
	}
}

// TestPredictionTolerance: validation.predictionTolerance is a percent
// (default 20%, what validate.DefaultPredictionTolerance says); 0% would
// warn on every difference and is refused naming the field.
func TestPredictionTolerance(t *testing.T) {
	f, err := Parse("t.yaml", []byte(header+"policy: {preset: roce-lossless}\nvalidation: {predictionTolerance: 35%}\n"))
	if err != nil || f.Validation.PredictionTolerance != 0.35 {
		t.Errorf("35%%: %v, %v", f, err)
	}
	f, err = Parse("t.yaml", []byte(header+"policy: {preset: roce-lossless}\n"))
	if err != nil || f.Validation.PredictionTolerance != 0.2 {
		t.Errorf("default: %v, %v", f.Validation.PredictionTolerance, err)
	}
	_, err = Parse("t.yaml", []byte(header+"policy: {preset: roce-lossless}\nvalidation: {predictionTolerance: 0%}\n"))
	var es Errors
	if !errors.As(err, &es) || es[0].Path != "validation.predictionTolerance" {
		t.Errorf("0%%: error = %v", err)
	}
}
