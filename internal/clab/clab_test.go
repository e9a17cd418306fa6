package clab

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/check"
)

var update = flag.Bool("update", false, "update golden files")

// labsDir holds the lab topologies and their intents.
const labsDir = "../../containerlab"

// lab is one topology of containerlab/ with its intent and the import
// options that reproduce the intent's inventory.
type lab struct {
	dir, topo string
	speed     string
}

var labs = []lab{
	{dir: "srl-leafspine", topo: "srl-leafspine.clab.yml", speed: "400G"},
	{dir: "sonic", topo: "sonic.clab.yml", speed: "40G"},
	{dir: "mixed", topo: "mixed.clab.yml", speed: "40G"},
}

func (l lab) importOptions() ImportOptions {
	return ImportOptions{Speed: l.speed, Cable: "3m", SSHUser: "root", SSHKeyFile: "lab_key", KnownHosts: "known_hosts",
		BaseDir: filepath.Join(labsDir, l.dir), Source: l.topo}
}

func TestEveryLabIsListed(t *testing.T) {
	got, err := filepath.Glob(filepath.Join(labsDir, "*", "*.clab.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range labs {
		want = append(want, filepath.Join(labsDir, l.dir, l.topo))
	}
	sort.Strings(got)
	sort.Strings(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("topologies in %s (-listed in labs +on disk):\n%s", labsDir, diff)
	}
}

func TestLabsParse(t *testing.T) {
	for _, l := range labs {
		t.Run(l.dir, func(t *testing.T) {
			top, err := Load(filepath.Join(labsDir, l.dir, l.topo))
			if err != nil {
				t.Fatal(err)
			}
			if top.Name != l.dir {
				t.Errorf("lab name = %q, want %q (the directory name)", top.Name, l.dir)
			}
			roles := map[Role]int{}
			for _, n := range top.Nodes {
				k, ok := Kind(n.Kind)
				if !ok {
					t.Errorf("node %s: unknown kind %q", n.Name, n.Kind)
				}
				roles[k.Role]++
				if n.MgmtIPv4 == "" {
					t.Errorf("node %s has no fixed mgmt-ipv4: the intent could not name it", n.Name)
				}
				if n.Image == "" || !strings.Contains(n.Image, ":") {
					t.Errorf("node %s: image %q is not pinned to a tag", n.Name, n.Image)
				}
				if n.StartupConfig != "" {
					if _, err := os.Stat(filepath.Join(labsDir, l.dir, n.StartupConfig)); err != nil {
						t.Errorf("node %s: startup-config: %v", n.Name, err)
					}
				}
			}
			if roles[RoleSwitch] != 4 || roles[RoleHost] != 4 {
				t.Errorf("got %d switches and %d hosts, want 2 spines + 2 leaves and 4 hosts", roles[RoleSwitch], roles[RoleHost])
			}
			if len(top.Links) != 8 {
				t.Errorf("got %d links, want 8", len(top.Links))
			}
		})
	}
}

func TestLabIntentsAgreeWithTopologies(t *testing.T) {
	for _, l := range labs {
		t.Run(l.dir, func(t *testing.T) {
			top, err := Load(filepath.Join(labsDir, l.dir, l.topo))
			if err != nil {
				t.Fatal(err)
			}
			f, err := intent.Load(filepath.Join(labsDir, l.dir, "fabric.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range Diff(top, f) {
				t.Errorf("%s vs fabric.yaml: %s", l.topo, d)
			}
			for _, fd := range check.Run(f, check.Options{}) {
				if fd.Severity >= check.Warning {
					t.Errorf("check: %s", fd)
				}
			}
		})
	}
}

// inventoryOf strips what import cannot know (positions, files, names) so
// two fabrics compare on their inventories.
func inventoryOf(f *intent.Fabric) (sw []intent.Switch, hosts []intent.Host, links []intent.Link) {
	links = append([]intent.Link(nil), f.Links...)
	for i := range links {
		if links[i].B.String() < links[i].A.String() {
			links[i].A, links[i].B = links[i].B, links[i].A
		}
	}
	sort.Slice(links, func(i, j int) bool { return linkKey(links[i]) < linkKey(links[j]) })
	return f.Switches, f.Hosts, links
}

// ignorePos ignores where things are written: positions, and the
// positions of the keys written (Fields).
var ignorePos = cmpopts.IgnoreTypes(intent.Pos{}, intent.Fields{})

func TestImportEqualsHandWrittenIntent(t *testing.T) {
	for _, l := range labs {
		t.Run(l.dir, func(t *testing.T) {
			dir := filepath.Join(labsDir, l.dir)
			top, err := Load(filepath.Join(dir, l.topo))
			if err != nil {
				t.Fatal(err)
			}
			o := l.importOptions()
			inv, err := Import(top, o)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := inv.WriteYAML(&buf, o); err != nil {
				t.Fatal(err)
			}
			// The import sits next to the hand-written intent, so relative
			// paths (lab CA, key) resolve alike; the policy comes from it.
			hand := filepath.Join(dir, "fabric.yaml")
			handData, err := os.ReadFile(hand)
			if err != nil {
				t.Fatal(err)
			}
			want, err := intent.Parse(hand, handData)
			if err != nil {
				t.Fatal(err)
			}
			got, err := intent.ParseSources(
				intent.Source{Name: filepath.Join(dir, "policy.yaml"), Data: []byte("apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\npolicy: {preset: roce-lossless}\n")},
				intent.Source{Name: filepath.Join(dir, "inventory.yaml"), Data: buf.Bytes()})
			if err != nil {
				t.Fatalf("import output does not parse: %v\n%s", err, buf.Bytes())
			}
			ws, wh, wl := inventoryOf(want)
			gs, gh, gl := inventoryOf(got)
			if diff := cmp.Diff(ws, gs, ignorePos); diff != "" {
				t.Errorf("switches (-fabric.yaml +import):\n%s", diff)
			}
			if diff := cmp.Diff(wh, gh, ignorePos); diff != "" {
				t.Errorf("hosts (-fabric.yaml +import):\n%s", diff)
			}
			if diff := cmp.Diff(wl, gl, ignorePos); diff != "" {
				t.Errorf("links (-fabric.yaml +import):\n%s", diff)
			}
			if got.Name != want.Name {
				t.Errorf("import names the fabric %q, fabric.yaml %q", got.Name, want.Name)
			}
		})
	}
}

func TestImportGolden(t *testing.T) {
	l := labs[0]
	top, err := Load(filepath.Join(labsDir, l.dir, l.topo))
	if err != nil {
		t.Fatal(err)
	}
	o := l.importOptions()
	inv, err := Import(top, o)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := inv.WriteYAML(&buf, o); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", l.dir+".inventory.yaml")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if diff := cmp.Diff(string(want), buf.String()); diff != "" {
		t.Errorf("import of %s mismatch (-%s +got):\n%s", l.topo, golden, diff)
	}
}

func TestParseData(t *testing.T) {
	tests := []struct {
		file      string
		wantNodes []Node
		wantLinks []Link
		wantInv   *Inventory
	}{{
		// A deployed srl-leafspine lab in containerlab's current export
		// format (core/export_templates/auto.tmpl): written for this test
		// from that template, with the addresses the topology fixes.
		file: "srl-leafspine.topology-data.json",
		wantLinks: []Link{
			{A: Endpoint{Node: "gpu1", Interface: "eth1"}, B: Endpoint{Node: "leaf1", Interface: "e1-1"}},
			{A: Endpoint{Node: "gpu2", Interface: "eth1"}, B: Endpoint{Node: "leaf1", Interface: "e1-2"}},
			{A: Endpoint{Node: "gpu3", Interface: "eth1"}, B: Endpoint{Node: "leaf2", Interface: "e1-1"}},
			{A: Endpoint{Node: "gpu4", Interface: "eth1"}, B: Endpoint{Node: "leaf2", Interface: "e1-2"}},
			{A: Endpoint{Node: "leaf1", Interface: "e1-31"}, B: Endpoint{Node: "spine1", Interface: "e1-1"}},
			{A: Endpoint{Node: "leaf1", Interface: "e1-32"}, B: Endpoint{Node: "spine2", Interface: "e1-1"}},
			{A: Endpoint{Node: "leaf2", Interface: "e1-31"}, B: Endpoint{Node: "spine1", Interface: "e1-2"}},
			{A: Endpoint{Node: "leaf2", Interface: "e1-32"}, B: Endpoint{Node: "spine2", Interface: "e1-2"}},
		},
	}, {
		// The older link format ({"a": ..., "z": ...}),
		// with a bridge, an address set by containerlab and a dummy link.
		file: "legacy.topology-data.json",
		wantNodes: []Node{
			{Name: "br1", Kind: "bridge"},
			{Name: "h1", Kind: "linux", Image: "alpine:3", MgmtIPv4: "172.20.20.4"},
			{Name: "sonic", Kind: "sonic-vs", Image: "docker-sonic-vs:202405", MgmtIPv4: "172.20.20.3"},
			{Name: "srl", Kind: "srl", Image: "ghcr.io/nokia/srlinux:23.10.1", Type: "ixrd2l", MgmtIPv4: "172.20.20.2"},
		},
		wantLinks: []Link{
			{A: Endpoint{Node: "srl", Interface: "e1-1"}, B: Endpoint{Node: "sonic", Interface: "eth1"}},
			{A: Endpoint{Node: "h1", Interface: "eth1", IPv4: "192.0.2.10/24"}, B: Endpoint{Node: "sonic", Interface: "eth2"}},
			{A: Endpoint{Node: "h1", Interface: "eth2"}, B: Endpoint{Node: "br1", Interface: "h1-eth2"}},
		},
		wantInv: &Inventory{
			Lab: "legacy",
			Switches: []Switch{
				{Name: "sonic", Kind: "sonic-vs", Platform: intent.PlatformSONiC, Address: "172.20.20.3:8080",
					UsernameEnv: "SONIC_USERNAME", PasswordEnv: "SONIC_PASSWORD", SkipVerify: true, Ports: []string{"Ethernet0", "Ethernet4"},
					Profile: "sonic-202405"}, // docker-sonic-vs:202405
				{Name: "srl", Kind: "srl", Platform: intent.PlatformSRLinux, Address: "172.20.20.2:57400",
					UsernameEnv: "SRL_USERNAME", PasswordEnv: "SRL_PASSWORD", CA: ".tls/ca/ca.pem", Ports: []string{"ethernet-1/1"}},
			},
			Hosts: []Host{{Name: "h1", Address: "172.20.20.4", NICs: []NIC{{Interface: "eth1", Address: "192.0.2.10"}}}},
			Links: []intent.Link{
				{A: intent.Endpoint{Node: "srl", Port: "ethernet-1/1"}, B: intent.Endpoint{Node: "sonic", Port: "Ethernet0"}},
				{A: intent.Endpoint{Node: "h1", Port: "eth1"}, B: intent.Endpoint{Node: "sonic", Port: "Ethernet4"}},
			},
			Notes: []string{"link h1:eth2 -- br1:h1-eth2: leaves the fabric through a bridge node; not imported",
				"switch srl: image ghcr.io/nokia/srlinux:23.10.1 is release 23.10, which has no profile (known: srlinux-24.10, srlinux-25.3); the intent plans for srlinux-25.3 unless switches[].profile says otherwise"},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			top, err := Load(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if !top.FromData {
				t.Error("FromData = false for a topology-data.json")
			}
			if tc.wantNodes != nil {
				if diff := cmp.Diff(tc.wantNodes, top.Nodes, cmpopts.IgnoreFields(Node{}, "Pos")); diff != "" {
					t.Errorf("nodes (-want +got):\n%s", diff)
				}
			}
			if diff := cmp.Diff(tc.wantLinks, top.Links, cmpopts.IgnoreFields(Link{}, "Pos")); diff != "" {
				t.Errorf("links (-want +got):\n%s", diff)
			}
			if tc.wantInv != nil {
				inv, err := Import(top, ImportOptions{BaseDir: "testdata"})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.wantInv, inv, ignorePos); diff != "" {
					t.Errorf("Import (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// The deployed lab's topology-data.json names the same inventory as the
// topology file (only the lab CA path differs: it is inside the lab dir).
func TestDataAgreesWithTopologyFile(t *testing.T) {
	data, err := Load(filepath.Join("testdata", "srl-leafspine.topology-data.json"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := intent.Load(filepath.Join(labsDir, "srl-leafspine", "fabric.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(data, f); len(d) > 0 {
		t.Errorf("topology-data.json vs fabric.yaml:\n%s", strings.Join(d, "\n"))
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantPos []Pos // line:col of each error, in order
	}{
		{"not yaml", "name: x\ntopology: [\n", []Pos{{Line: 3}}},
		{"no name", "topology:\n  nodes:\n    a: {kind: linux}\n", []Pos{{Line: 1, Col: 1}}},
		{"unknown top-level key", "name: x\ntopolgy:\n  nodes: {}\n", []Pos{{Line: 1, Col: 1}, {Line: 2, Col: 1}}},
		{"node without kind", "name: x\ntopology:\n  nodes:\n    a: {image: alpine:3}\n", []Pos{{Line: 4, Col: 5}}},
		{"kind not a string", "name: x\ntopology:\n  nodes:\n    a: {kind: [linux]}\n", []Pos{{Line: 4, Col: 5}, {Line: 4, Col: 15}}},
		{"bad endpoint", "name: x\ntopology:\n  nodes:\n    a: {kind: linux}\n  links:\n    - endpoints: [\"a-eth1\", \"a:eth2\"]\n", []Pos{{Line: 6, Col: 19}}},
		{"unknown node in link", "name: x\ntopology:\n  nodes:\n    a: {kind: linux}\n  links:\n    - endpoints: [\"a:eth1\", \"b:eth1\"]\n", []Pos{{Line: 6, Col: 29}}},
		{"interface used twice", "name: x\ntopology:\n  nodes:\n    a: {kind: linux}\n    b: {kind: linux}\n  links:\n    - endpoints: [\"a:eth1\", \"b:eth1\"]\n    - endpoints: [\"a:eth1\", \"b:eth2\"]\n", []Pos{{Line: 8, Col: 19}}},
		{"one endpoint", "name: x\ntopology:\n  nodes:\n    a: {kind: linux}\n  links:\n    - endpoints: [\"a:eth1\"]\n", []Pos{{Line: 6, Col: 18}}},
		{"duplicate node", "name: x\ntopology:\n  nodes:\n    a: {kind: linux}\n    a: {kind: linux}\n", []Pos{{Line: 5, Col: 5}}},
		{"bad mgmt-ipv4", "name: x\ntopology:\n  nodes:\n    a: {kind: linux, mgmt-ipv4: 10.0.0.300}\n", []Pos{{Line: 4, Col: 33}}},
		{"mgmt-ipv4 outside the subnet", "name: x\nmgmt: {ipv4-subnet: 172.30.10.0/24}\ntopology:\n  nodes:\n    a: {kind: linux, mgmt-ipv4: 172.30.11.5}\n", []Pos{{Line: 5, Col: 33}}},
		{"mgmt-ipv4 twice", "name: x\ntopology:\n  nodes:\n    a: {kind: linux, mgmt-ipv4: 10.0.0.1}\n    b: {kind: linux, mgmt-ipv4: 10.0.0.1}\n", []Pos{{Line: 5, Col: 33}}},
		{"undefined group", "name: x\ntopology:\n  nodes:\n    a: {group: g}\n", []Pos{{Line: 4, Col: 5}, {Line: 4, Col: 8}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("t.clab.yml", []byte(tc.in))
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("Parse error = %v (%T), want Errors", err, err)
			}
			var got []Pos
			for _, e := range es {
				got = append(got, Pos{Line: e.Pos.Line, Col: e.Pos.Col})
				if e.Pos.File != "t.clab.yml" {
					t.Errorf("error %q names file %q", e, e.Pos.File)
				}
			}
			want := tc.wantPos
			if tc.name == "not yaml" { // yaml.v3 reports a line only
				want = []Pos{{Line: got[0].Line, Col: 1}}
				if got[0].Line < 2 {
					t.Errorf("YAML error at line %d, want the line of the bad list", got[0].Line)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("error positions (-want +got):\n%s\nerrors: %v", diff, err)
			}
		})
	}
}

func TestParseDefaultsKindsGroupsAndExtendedLinks(t *testing.T) {
	in := `name: ext
prefix: ""
topology:
  defaults:
    kind: linux
  kinds:
    nokia_srlinux: {image: ghcr.io/nokia/srlinux:24.10.1, type: ixrd3l}
    linux: {image: debian:12-slim, exec: ["ip addr add 10.0.0.1/24 dev eth1"]}
  groups:
    leaves: {kind: nokia_srlinux}
  nodes:
    leaf1: {group: leaves}
    h1: {}
    h2: {exec: ["bash -c 'rdma link add rxe7 type rxe netdev eth1'"]}
  links:
    - type: veth
      endpoints:
        - {node: h1, interface: eth1}
        - {node: leaf1, interface: ethernet-1/3}
    - endpoints: [h2:eth1, leaf1:e1-4]
    - type: host
      endpoint: {node: h2, interface: eth9}
      host-interface: h2-eth9
    - endpoints: [h2:eth2, host:h2-eth2]
`
	top, err := Parse("ext.clab.yml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	wantNodes := []Node{
		{Name: "h1", Kind: "linux", Image: "debian:12-slim", Exec: []string{"ip addr add 10.0.0.1/24 dev eth1"}},
		{Name: "h2", Kind: "linux", Image: "debian:12-slim", Exec: []string{"bash -c 'rdma link add rxe7 type rxe netdev eth1'"}},
		{Name: "leaf1", Kind: "nokia_srlinux", Image: "ghcr.io/nokia/srlinux:24.10.1", Type: "ixrd3l"},
	}
	if diff := cmp.Diff(wantNodes, top.Nodes, cmpopts.IgnoreFields(Node{}, "Pos"), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	inv, err := Import(top, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantHosts := []Host{
		{Name: "h1", Address: "h1", NICs: []NIC{{Interface: "eth1", Address: "10.0.0.1"}}},
		{Name: "h2", Address: "h2", NICs: []NIC{{Interface: "eth1", RDMA: "rxe7"}}},
	}
	if diff := cmp.Diff(wantHosts, inv.Hosts); diff != "" {
		t.Errorf("hosts (-want +got):\n%s", diff)
	}
	if got, want := inv.Switches[0].Address, "leaf1:57400"; got != want { // prefix "" names containers after the node
		t.Errorf("leaf1 address = %q, want %q", got, want)
	}
	if diff := cmp.Diff([]string{"ethernet-1/3", "ethernet-1/4"}, inv.Switches[0].Ports); diff != "" {
		t.Errorf("leaf1 ports (-want +got):\n%s", diff)
	}
}

func TestImportRejectsUnknownKindsAndInterfaces(t *testing.T) {
	tests := []struct{ name, in string }{
		{"unknown kind", "name: x\ntopology:\n  nodes:\n    r1: {kind: juniper_crpd}\n"},
		{"sonic eth0", "name: x\ntopology:\n  nodes:\n    s: {kind: sonic-vs}\n    h: {kind: linux}\n  links:\n    - endpoints: [s:eth0, h:eth1]\n"},
		{"srl bad interface", "name: x\ntopology:\n  nodes:\n    s: {kind: nokia_srlinux}\n    h: {kind: linux}\n  links:\n    - endpoints: [s:mgmt0, h:eth1]\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			top, err := Parse("x.clab.yml", []byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Import(top, ImportOptions{}); err == nil {
				t.Error("Import succeeded, want an error")
			}
		})
	}
}

func TestInterfaceNames(t *testing.T) {
	tests := []struct {
		kind, in, want string
		wantErr        bool
	}{
		{"nokia_srlinux", "e1-1", "ethernet-1/1", false},
		{"srl", "e1-32", "ethernet-1/32", false},
		{"nokia_srlinux", "e1-2-3", "ethernet-1/2/3", false},
		{"nokia_srlinux", "ethernet-1/7", "ethernet-1/7", false},
		{"nokia_srlinux", "mgmt0", "", true},
		{"sonic-vs", "eth1", "Ethernet0", false},
		{"sonic-vs", "eth2", "Ethernet4", false},
		{"sonic-vm", "eth32", "Ethernet124", false},
		{"sonic-vm", "Ethernet8", "Ethernet8", false},
		{"sonic-vs", "eth0", "", true},
		{"arista_ceos", "eth1", "Ethernet1", false},
		{"ceos", "Ethernet3/1", "Ethernet3/1", false},
		{"ceos", "eth0", "", true},
		{"linux", "ens1f0np0", "ens1f0np0", false},
	}
	for _, tc := range tests {
		k, ok := Kind(tc.kind)
		if !ok {
			t.Fatalf("Kind(%q) unknown", tc.kind)
		}
		got, err := k.Interface(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s %q: err = %v, want error %v", tc.kind, tc.in, err, tc.wantErr)
			continue
		}
		if got != tc.want {
			t.Errorf("%s %q = %q, want %q", tc.kind, tc.in, got, tc.want)
		}
	}
}

func TestCompressRoundTrips(t *testing.T) {
	tests := []struct {
		in, want []string
	}{
		{[]string{"ethernet-1/1", "ethernet-1/2", "ethernet-1/3"}, []string{"ethernet-1/{1..3}"}},
		{[]string{"Ethernet0", "Ethernet4", "Ethernet8", "Ethernet20"}, []string{"Ethernet{0..8..4}", "Ethernet20"}},
		{[]string{"eth1"}, []string{"eth1"}},
		{[]string{"e01", "e02"}, []string{"e01", "e02"}},
		{[]string{"ethernet-1/1", "ethernet-1/2/1", "ethernet-1/2/2"}, []string{"ethernet-1/1", "ethernet-1/2/{1..2}"}},
		{[]string{"Ethernet1/1", "Ethernet2/1"}, []string{"Ethernet1/1", "Ethernet2/1"}},
	}
	for _, tc := range tests {
		got := Compress(tc.in)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Compress(%q) (-want +got):\n%s", tc.in, diff)
		}
		var back []string
		for _, r := range got {
			e, err := intent.Expand(r)
			if err != nil {
				t.Fatalf("Expand(%q): %v", r, err)
			}
			back = append(back, e...)
		}
		if diff := cmp.Diff(tc.in, back); diff != "" {
			t.Errorf("Expand(Compress(%q)) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestE2EScriptSyntax(t *testing.T) {
	script := filepath.Join(labsDir, "e2e.sh")
	if _, err := os.Stat(script); err != nil {
		t.Fatal(err)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	if out, err := exec.Command(bash, "-n", script).CombinedOutput(); err != nil {
		t.Errorf("bash -n %s: %v\n%s", script, err, out)
	}
	for _, s := range append([]string{script, filepath.Join(labsDir, "sonic-setup.sh")}, mustGlob(t, filepath.Join(labsDir, "*", "configs", "*.sh"))...) {
		if out, err := exec.Command(bash, "-n", s).CombinedOutput(); err != nil {
			t.Errorf("bash -n %s: %v\n%s", s, err, out)
		}
	}
	// Usage errors stop before anything is touched: exit 64 (usage).
	for _, args := range [][]string{{}, {"no-such-lab"}, {"srl-leafspine", "extra"}} {
		cmd := exec.Command(bash, append([]string{script}, args...)...)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 64 {
			t.Errorf("e2e.sh %q: %v, want exit 64\n%s", args, err, out)
		}
	}
	sc, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Log("shellcheck is not installed: syntax checked with bash -n only")
		return
	}
	if out, err := exec.Command(sc, "-x", script, filepath.Join(labsDir, "hosts", "host-setup.sh"), filepath.Join(labsDir, "sonic-setup.sh")).CombinedOutput(); err != nil {
		t.Errorf("shellcheck: %v\n%s", err, out)
	}
}

func mustGlob(t *testing.T, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLoadDirectory(t *testing.T) {
	// a directory with one topology file, as containerlab reads it
	top, err := Load(filepath.Join(labsDir, "srl-leafspine"))
	if err != nil {
		t.Fatal(err)
	}
	if top.FromData || top.Name != "srl-leafspine" {
		t.Errorf("Load(dir) = lab %q from data %v, want the srl-leafspine topology file", top.Name, top.FromData)
	}
	// a lab directory holding topology-data.json
	lab := filepath.Join(t.TempDir(), "clab-srl-leafspine")
	if err := os.Mkdir(lab, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("testdata", "srl-leafspine.topology-data.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lab, "topology-data.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if top, err := Load(lab); err != nil || !top.FromData {
		t.Errorf("Load(lab dir) = %+v, %v; want the topology-data.json", top, err)
	}
	// none, or two: an error naming the directory
	empty := t.TempDir()
	if _, err := Load(empty); err == nil || !strings.Contains(err.Error(), empty) {
		t.Errorf("Load(empty dir) error = %v, want one naming %s", err, empty)
	}
	for _, n := range []string{"a.clab.yml", "b.clab.yaml"} {
		if err := os.WriteFile(filepath.Join(empty, n), []byte("name: x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Load(empty); err == nil {
		t.Error("Load(dir with two topologies) succeeded, want an error")
	}
}

// TestSRLinuxLabsHavePFC (issue 10 item 20): every SR Linux node of every lab
// runs a 7220 model with PFC: IXR-D4, D5, H4 or H5 (Nokia SR Linux QoS
// guide, "Priority-based flow control"; not the IXR-D3L/D2L/D1, which
// containerlab deploys by default). Types as containerlab names them
// (nodes/srl: ixr-h4, and the older aliases ixrh4 ...).
func TestSRLinuxLabsHavePFC(t *testing.T) {
	pfc := map[string]bool{}
	for _, ty := range []string{"ixr-d4", "ixr-d5", "ixr-h4", "ixr-h4-32d", "ixr-h5-32d", "ixr-h5-64d", "ixr-h5-64o"} {
		pfc[ty] = true
		pfc[strings.ReplaceAll(ty, "-", "")] = true
	}
	n := 0
	for _, l := range labs {
		top, err := Load(filepath.Join(labsDir, l.dir, l.topo))
		if err != nil {
			t.Fatal(err)
		}
		for _, node := range top.Nodes {
			if node.Kind != "nokia_srlinux" && node.Kind != "srl" {
				continue
			}
			n++
			if !pfc[node.Type] {
				t.Errorf("%s: node %s is type %q, a model without PFC; use ixr-h4 (or d4, d5, h5)", l.topo, node.Name, node.Type)
			}
		}
	}
	if n == 0 {
		t.Fatal("no SR Linux node in the labs")
	}
}

// profileOf: the release profile a switch image's tag names, or a note.
func TestProfileOfImage(t *testing.T) {
	for _, tt := range []struct {
		plat        intent.Platform
		image, want string
		note        bool
	}{
		{intent.PlatformSONiC, "vrnetlab/sonic_sonic-vs:202405", "sonic-202405", false},
		{intent.PlatformSONiC, "docker-sonic-vs:202511.3-abc", "sonic-202511", false},
		{intent.PlatformSONiC, "registry:5000/docker-sonic-vs", "", true}, // a port, no tag
		{intent.PlatformSONiC, "docker-sonic-vs:latest", "", true},
		{intent.PlatformSONiC, "docker-sonic-vs:202305", "", true},
		{intent.PlatformSRLinux, "ghcr.io/nokia/srlinux:24.10.1", "srlinux-24.10", false},
		{intent.PlatformSRLinux, "ghcr.io/nokia/srlinux:25.3.2", "srlinux-25.3", false},
		{intent.PlatformSRLinux, "ghcr.io/nokia/srlinux", "", true},
		{intent.PlatformEOS, "ceos:4.33.1F", "", false},
	} {
		got, note := profileOf(tt.plat, tt.image)
		if got != tt.want || (note != "") != tt.note {
			t.Errorf("profileOf(%s, %s) = %q, %q", tt.plat, tt.image, got, note)
		}
	}
}

// TestSRLinuxLabConfigsCarryTheIntent (issue 27 item 4): the SR Linux plan
// refuses a port without the subinterface its classifier attaches to, or
// whose ip-mtu is below the RoCE packets, and diff reports an ip-mtu below
// the port's IP MTU; so every SR Linux startup configuration of the labs
// creates each inventory port's subinterface with an ip-mtu of at least the
// port's IP MTU (SR Linux's default-ip-mtu is 1500).
func TestSRLinuxLabConfigsCarryTheIntent(t *testing.T) {
	n := 0
	for _, l := range labs {
		f, err := intent.Load(filepath.Join(labsDir, l.dir, "fabric.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		for _, sw := range f.Switches {
			if sw.Platform != intent.PlatformSRLinux {
				continue
			}
			file := filepath.Join(labsDir, l.dir, "configs", sw.Name+".cli")
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range sw.Ports {
				n++
				prefix := "set / interface " + p.Name + " subinterface " + strconv.Itoa(p.Subinterface) + " ip-mtu "
				mtu := 0
				for _, line := range strings.Split(string(b), "\n") {
					if v, ok := strings.CutPrefix(strings.TrimSpace(line), prefix); ok {
						mtu, _ = strconv.Atoi(v)
					}
				}
				if mtu < f.PortMTU(p) {
					t.Errorf("%s: %s.%d has ip-mtu %d (0: not set, default 1500), want at least the port's IP MTU %d: add %q", file, p.Name, p.Subinterface, mtu, f.PortMTU(p), prefix+strconv.Itoa(f.PortMTU(p)))
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no SR Linux port in the labs")
	}
}
