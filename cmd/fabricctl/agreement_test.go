package main

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/portfacts"
	"github.com/fabricctl/fabricctl/internal/profile"
	"github.com/fabricctl/fabricctl/internal/sim"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/sonic"
)

// TestAgreement (issue 27 item 2) holds the commands to one story over
// every example and a generated corpus of at least 200 intents that check
// passes (every platform and profile, ASICs, speeds 25-800G, cables 1-300
// m, MTUs; seed 27). For every switch port:
//
//   - the headroom plan writes (SONiC BUFFER_PROFILE xoff of the port's
//     BUFFER_PG, SR Linux pfc-queue reserved bytes of the port's
//     buffer-allocation profile; EOS and OpenConfig write none) is the
//     port's programmed headroom, and SR Linux's pfc-queue
//     maximum-burst-size its XOFF point (intent/portfacts);
//   - simulate runs the port with that headroom (in the switch's buffer
//     cells) and that XOFF point, and each host NIC with the headroom
//     mlx5 computes for the cable host plan gives it (what FC141 reads);
//   - check's FC112 (through the CLI, as a user runs it) holds the buffer
//     to exactly that figure: the switch's buffer set to the lossless
//     priorities x the headroom passes, one byte less is an FC112 error
//     (on main check passed 1 as the cell factor while plan took the
//     ASIC's: buffer 200KB on sonic-202411 at 400G/5 m passed check at
//     150,528 B and plan refused it at 219,136 B);
//
// and an intent check passes is compiled by every platform without an
// error and rendered by the CLI (exit 0): plan refuses nothing check could
// have known.
func TestAgreement(t *testing.T) {
	const want = 200
	reg, err := newRegistry()
	if err != nil {
		t.Fatal(err)
	}
	one := func(c agreeCase) (passed bool) {
		f, err := intent.Load(c.files...)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			return false
		}
		f = f.WithDerive(c.derive)
		agreePlan(t, c.name, reg, f)
		agreeSimulate(t, c.name, f)
		return c.generated && agreeCheck(t, c, f)
	}
	for _, files := range exampleIntents(t) {
		one(agreeCase{name: strings.Join(files, "+"), files: files})
	}
	gen := agreementCorpus(t, t.TempDir(), 27)
	valid, i := 0, 0
	for ; valid < want && i < 4*want; i++ {
		if one(gen(i)) {
			valid++
		}
	}
	t.Logf("generated %d intents, %d pass check", i, valid)
	if valid < want {
		t.Errorf("%d of %d generated intents pass check with their buffers at the headroom, want at least %d", valid, i, want)
	}
}

type agreeCase struct {
	name      string
	files     []string
	derive    intent.Derive
	generated bool
	// yaml is the generated intent with BUFFER_<switch> placeholders for
	// each switch's buffer (generated cases only).
	yaml     string
	switches []string
}

// agreePlan compiles every switch of f and holds what the payloads write
// to the ports' derived facts.
func agreePlan(t *testing.T, name string, reg *switchdrv.Registry, f *intent.Fabric) {
	t.Helper()
	for i := range f.Switches {
		sw := &f.Switches[i]
		p, err := reg.Lookup(sw.Platform)
		if err != nil {
			t.Fatal(err)
		}
		d, err := p.Compile(f, sw)
		if err != nil {
			continue // agreeCheck holds check to have refused it
		}
		facts := portfacts.Ports(f, sw)
		var written map[string]writtenPort
		switch sw.Platform {
		case intent.PlatformSONiC:
			written = sonicWritten(t, d)
		case intent.PlatformSRLinux:
			written = srlWritten(t, d)
		default:
			continue // EOS and OpenConfig write no headroom or XOFF
		}
		if len(portfacts.SendPriorities(f)) == 0 {
			continue // no switch sends pause (no PFC, or semi-lossless): no headroom to write
		}
		for _, pf := range facts {
			w, ok := written[pf.Name]
			if !ok {
				t.Errorf("%s: switch %s port %s: plan writes no headroom", name, sw.Name, pf.Name)
				continue
			}
			if w.headroom != pf.Headroom.Programmed {
				t.Errorf("%s: switch %s port %s: plan writes headroom %d B, the port's programmed headroom is %d B", name, sw.Name, pf.Name, w.headroom, pf.Headroom.Programmed)
			}
			for _, l := range pf.Lossless {
				if x, ok := w.xoff[l.Priority]; ok && x != l.StaticXOFF {
					t.Errorf("%s: switch %s port %s priority %d: plan writes XOFF %d B, the port's static XOFF point is %d B", name, sw.Name, pf.Name, l.Priority, x, l.StaticXOFF)
				}
			}
		}
	}
}

// writtenPort is what a payload programs for one port: the headroom of its
// lossless priority groups and, where the platform takes one, the XOFF
// point per priority.
type writtenPort struct {
	headroom int64
	xoff     map[int]int64
}

// sonicWritten decodes CONFIG_DB BUFFER_PG|<port>|<prio> -> BUFFER_PROFILE
// xoff.
func sonicWritten(t *testing.T, d *switchdrv.Desired) map[string]writtenPort {
	t.Helper()
	profiles := map[string]int64{}
	pgs := map[string]string{}
	for _, u := range append(append([]*gnmipb.Update{}, d.Replaces...), d.Updates...) {
		el := u.GetPath().GetElem()
		if u.GetPath().GetOrigin() != sonic.Origin || len(el) < 4 {
			continue
		}
		var v map[string]string
		if json.Unmarshal(u.GetVal().GetJsonIetfVal(), &v) != nil {
			continue
		}
		switch el[2].GetName() {
		case "BUFFER_PROFILE":
			x, err := strconv.ParseInt(v["xoff"], 10, 64)
			if err != nil {
				t.Fatalf("BUFFER_PROFILE|%s xoff %q", el[3].GetName(), v["xoff"])
			}
			profiles[el[3].GetName()] = x
		case "BUFFER_PG":
			port, _, _ := strings.Cut(el[3].GetName(), "|")
			pgs[port] = v["profile"]
		}
	}
	out := map[string]writtenPort{}
	for port, prof := range pgs {
		x, ok := profiles[prof]
		if !ok {
			t.Fatalf("BUFFER_PG of %s names profile %s, which the payload does not write", port, prof)
		}
		out[port] = writtenPort{headroom: x}
	}
	return out
}

// srlWritten decodes /qos/interfaces/interface input
// pfc-buffer-allocation-profile -> buffer-allocation-profile pfc-queue
// maximum-pfc-reserved-share-bytes (headroom) and maximum-burst-size
// (XOFF point).
func srlWritten(t *testing.T, d *switchdrv.Desired) map[string]writtenPort {
	t.Helper()
	type pfcQueue struct {
		Name     string `json:"pfc-queue-name"`
		MBS      int64  `json:"maximum-burst-size"`
		Reserved int64  `json:"maximum-pfc-reserved-share-bytes"`
	}
	profiles := map[string][]pfcQueue{}
	portProfile := map[string]string{}
	for _, u := range append(append([]*gnmipb.Update{}, d.Replaces...), d.Updates...) {
		el := u.GetPath().GetElem()
		if len(el) == 0 {
			continue
		}
		switch last := el[len(el)-1]; last.GetName() {
		case "buffer-allocation-profile":
			var bp struct {
				Name   string `json:"name"`
				Queues struct {
					PFCQueue []pfcQueue `json:"pfc-queue"`
				} `json:"queues"`
			}
			if err := json.Unmarshal(u.GetVal().GetJsonIetfVal(), &bp); err != nil {
				t.Fatal(err)
			}
			profiles[last.GetKey()["name"]] = bp.Queues.PFCQueue
		case "interface":
			var qi struct {
				InterfaceRef struct {
					Interface string `json:"interface"`
				} `json:"interface-ref"`
				Input struct {
					PFC string `json:"pfc-buffer-allocation-profile"`
				} `json:"input"`
			}
			if json.Unmarshal(u.GetVal().GetJsonIetfVal(), &qi) == nil && qi.Input.PFC != "" {
				portProfile[qi.InterfaceRef.Interface] = qi.Input.PFC
			}
		}
	}
	out := map[string]writtenPort{}
	for port, name := range portProfile {
		qs, ok := profiles[name]
		if !ok || len(qs) == 0 {
			t.Fatalf("port %s names buffer-allocation-profile %s, which the payload does not write with pfc-queues", port, name)
		}
		w := writtenPort{headroom: qs[0].Reserved, xoff: map[int]int64{}}
		for _, q := range qs {
			if q.Reserved != w.headroom {
				t.Errorf("port %s: pfc-queues of one profile with different headroom %d and %d", port, q.Reserved, w.headroom)
			}
			prio, err := strconv.Atoi(strings.TrimPrefix(q.Name, "pfc"))
			if err != nil {
				t.Fatalf("pfc-queue name %q", q.Name)
			}
			w.xoff[prio] = q.MBS
		}
		out[port] = w
	}
	return out
}

// agreeSimulate builds the simulator's network of f and holds every switch
// port's headroom and XOFF point to the port's derived facts.
func agreeSimulate(t *testing.T, name string, f *intent.Fabric) {
	t.Helper()
	n, err := sim.FromIntent(f)
	if err != nil {
		return // nothing to simulate (no links); check has its own say
	}
	lossless := len(f.Policy.LosslessPriorities())
	for _, th := range sim.New(n, sim.Options{}).Thresholds() {
		if th.Host {
			// A NIC: mlx5's headroom with the cable host plan gives
			// the driver (portfacts.NIC), as check's FC141 reads it.
			h := f.Host(th.Node)
			for _, nic := range h.NICs {
				if nf := portfacts.NICOf(f, h, nic); nic.Interface == th.Port && th.Headroom != nf.Headroom {
					t.Errorf("%s: host %s %s: simulate's NIC headroom %d B, the NIC's %d B", name, th.Node, th.Port, th.Headroom, nf.Headroom)
				}
			}
			continue
		}
		sw := f.Switch(th.Node)
		pf := portfacts.PortOf(f, sw, *sw.Port(th.Port))
		if th.Headroom != pf.Headroom.Occupied {
			t.Errorf("%s: switch %s port %s: simulate's headroom %d B, the port's %d B", name, th.Node, th.Port, th.Headroom, pf.Headroom.Occupied)
		}
		want := int64(-1)
		for _, l := range pf.Lossless {
			if l.XOFF >= 0 && (want < 0 || l.XOFF < want) {
				want = l.XOFF
			}
		}
		if lossless > 0 && want >= 0 && th.XOFF != want {
			t.Errorf("%s: switch %s port %s: simulate's XOFF %d B, the port's XOFF point %d B", name, th.Node, th.Port, th.XOFF, want)
		}
	}
}

// agreeCheck runs `fabricctl check` on c with each switch's buffer at the
// lossless priorities x its largest port headroom (FC112 must pass; then,
// if check passes, `render` and every compiler must too) and one byte less
// (an FC112 error naming that switch). It reports whether check passed.
func agreeCheck(t *testing.T, c agreeCase, f *intent.Fabric) bool {
	t.Helper()
	n := int64(len(f.Policy.LosslessPriorities()))
	need := map[string]int64{}
	for i := range f.Switches {
		sw := &f.Switches[i]
		for _, pf := range portfacts.Ports(f, sw) {
			need[sw.Name] = max(need[sw.Name], n*pf.Headroom.Occupied)
		}
	}
	// write sets each switch's buffer to its need plus more (and, with
	// kmax > 0, the roce class's ECN max to kmax).
	write := func(more, kmax int64) string {
		y := c.yaml
		for _, sw := range c.switches {
			y = strings.ReplaceAll(y, "BUFFER_"+sw, strconv.FormatInt(need[sw]+more, 10))
		}
		if kmax > 0 {
			y = strings.Replace(y, "  preset: roce-lossless\n", fmt.Sprintf("  preset: roce-lossless\n  classes:\n    - {name: roce, ecn: {min: 150KB, max: %d}}\n", kmax), 1)
		}
		file := strings.TrimSuffix(c.files[0], ".yaml") + fmt.Sprintf("-buffer%d-kmax%d.yaml", more, kmax)
		if err := os.WriteFile(file, []byte(y), 0o600); err != nil {
			t.Fatal(err)
		}
		return file
	}
	cf := []string{}
	if c.derive.CellFactor > 0 {
		cf = []string{"--cell-factor", strconv.FormatFloat(c.derive.CellFactor, 'g', -1, 64)}
	}
	checkJSON := func(file string, id string) (map[string]bool, int) {
		out, errOut, code := runFabricctl(t, append(cf, "check", "-f", file, "-o", "json")...)
		var r struct {
			Findings []struct {
				ID       string `json:"id"`
				Severity string `json:"severity"`
				Path     string `json:"path"`
			} `json:"findings"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%s: check -o json: %v\n%s%s", c.name, err, out, errOut)
		}
		fc112 := map[string]bool{}
		for _, x := range r.Findings {
			if x.ID == id && x.Severity == "error" {
				sw, _, _ := strings.Cut(strings.TrimPrefix(x.Path, "inventory.switches["), "]")
				fc112[sw] = true
			}
		}
		return fc112, code
	}
	fits := write(0, 0)
	fc112, code := checkJSON(fits, "FC112")
	if len(fc112) > 0 {
		t.Errorf("%s: buffers at the programmed headroom x %d: check reports FC112 on %v (the buffer holds exactly what plan writes)", c.name, n, keys(fc112))
	}
	short, _ := checkJSON(write(-1, 0), "FC112")
	for _, sw := range c.switches {
		if prof := portfacts.SwitchProfile(f.Switch(sw)); prof != nil && prof.PFC && n > 0 && !short[sw] {
			t.Errorf("%s: switch %s buffer one byte below %d x its programmed headroom: check reports no FC112", c.name, sw, n)
		}
	}
	// The XOFF point check holds ECN max to is the port's: with a
	// megabyte of buffer beyond the headroom (on SR Linux the pfc-queue's
	// maximum-burst-size is above Kmax by construction), Kmax at it
	// passes FC111 and one byte more does not.
	pfc := false
	for _, sw := range c.switches {
		if prof := portfacts.SwitchProfile(f.Switch(sw)); prof != nil && prof.PFC && n > 0 && len(f.Switch(sw).Ports) > 0 {
			pfc = true
		}
	}
	withBuffer := write(1_000_000, 1_000_000)
	if g, err := intent.Load(withBuffer); err == nil {
		// simulate's XOFF with buffers in the intent: 1,000,000 B.
		agreeSimulate(t, c.name+" (buffers)", g.WithDerive(c.derive))
	}
	if fc111, _ := checkJSON(withBuffer, "FC111"); len(fc111) > 0 {
		t.Errorf("%s: ECN max at the XOFF point (1,000,000 B of buffer beyond the headroom): check reports FC111", c.name)
	}
	if fc111, _ := checkJSON(write(1_000_000, 1_000_001), "FC111"); pfc && len(fc111) == 0 {
		t.Errorf("%s: ECN max one byte above the XOFF point: check reports no FC111", c.name)
	}
	if code != ExitOK {
		return false
	}
	// check passes: plan's compilers and render take it.
	g, err := intent.Load(fits)
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	g = g.WithDerive(c.derive)
	reg, _ := newRegistry()
	for i := range g.Switches {
		p, _ := reg.Lookup(g.Switches[i].Platform)
		if _, err := p.Compile(g, &g.Switches[i]); err != nil {
			t.Errorf("%s: check passes, the %s compiler refuses switch %s: %v", c.name, g.Switches[i].Platform, g.Switches[i].Name, err)
		}
	}
	if out, errOut, code := runFabricctl(t, append(cf, "render", "-f", fits)...); code != ExitOK {
		t.Errorf("%s: check passes, render exits %d\n%s%s", c.name, code, out, errOut)
	}
	return true
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// agreementCorpus returns a generator of intents from seed: the i-th is
// written into dir (every platform, profile and ASIC; speeds 25-800G;
// cables 1-300 m; MTUs within and at the platform's bounds), with hosts
// linked to switch ports and, where two switches have ports alike, a link
// between them. Every fifth takes --cell-factor 2. Call it with i = 0, 1,
// 2, ... in order (one random stream).
func agreementCorpus(t *testing.T, dir string, seed int64) func(i int) agreeCase {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	type plat struct {
		name   intent.Platform
		asics  []string
		mtus   []int
		prefix string
	}
	plats := []plat{
		{intent.PlatformSONiC, []string{"", "spectrum", "spectrum2", "spectrum3", "spectrum4", "tomahawk4", "trident4"}, []int{9000, 9100, 9216}, "Ethernet"},
		{intent.PlatformSRLinux, []string{"", "tomahawk4", "tomahawk5", "trident4"}, []int{9000, 9100, 9216, 9398}, "ethernet-1/"},
		{intent.PlatformEOS, []string{"", "tomahawk4", "trident3", "jericho2"}, []int{9000, 9100, 9214}, "Ethernet"},
		{intent.PlatformOpenConfig, []string{""}, []int{9000}, "Ethernet"},
	}
	speeds := []string{"25G", "50G", "100G", "200G", "400G", "800G"}
	return func(i int) agreeCase {
		var b strings.Builder
		fmt.Fprintf(&b, "apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\nmetadata: {name: corpus%d}\npolicy:\n  preset: roce-lossless\n", i)
		// Port MTUs at or above the host MTU and the RoCE frame (FC117,
		// FC118 hold the rest), up to each platform's maximum.
		mtu := []int{4200, 9000, 9100, 9214}[rng.Intn(4)]
		hostMTU := min(mtu, 9000)
		if mtu == 4200 {
			hostMTU = 4200
		}
		fmt.Fprintf(&b, "  mtu: %d\n  hostMTU: %d\n", mtu, hostMTU)
		b.WriteString("inventory:\n  switches:\n")
		nsw := 1 + rng.Intn(3)
		var names []string
		type swPort struct{ sw, port, speed, cable string }
		var ports []swPort
		for s := range nsw {
			// OpenConfig (no PFC: check refuses a lossless policy on it,
			// FC106) in every eighth intent only.
			pl := plats[rng.Intn(len(plats)-1)]
			if i%8 == 7 && s == 0 {
				pl = plats[len(plats)-1]
			}
			name := fmt.Sprintf("sw%d", s+1)
			names = append(names, name)
			fmt.Fprintf(&b, "    - name: %s\n      platform: %s\n      address: \"192.0.2.%d:%d\"\n", name, pl.name, s+1, 57400+s)
			if profs := profile.Names(string(pl.name)); len(profs) > 0 {
				fmt.Fprintf(&b, "      profile: %s\n", profs[rng.Intn(len(profs))])
			}
			if a := pl.asics[rng.Intn(len(pl.asics))]; a != "" {
				fmt.Fprintf(&b, "      asic: %s\n", a)
			}
			fmt.Fprintf(&b, "      buffer: BUFFER_%s\n      ports:\n", name)
			for p := range 2 + rng.Intn(3) {
				port := fmt.Sprintf("%s%d", pl.prefix, p+1)
				if pl.name == intent.PlatformSONiC {
					port = fmt.Sprintf("Ethernet%d", 4*p)
				}
				sp := speeds[rng.Intn(len(speeds))]
				cable := []string{"1m", "3m", "5m", "7m", "30m", "100m", "150m", "300m"}[rng.Intn(8)]
				if rng.Intn(3) == 0 {
					cable = fmt.Sprintf("%dm", 1+rng.Intn(300))
				}
				fmt.Fprintf(&b, "        - {name: %q, speed: %s, cable: %s", port, sp, cable)
				if rng.Intn(3) == 0 {
					fmt.Fprintf(&b, ", mtu: %d", pl.mtus[rng.Intn(len(pl.mtus))])
				}
				b.WriteString("}\n")
				ports = append(ports, swPort{name, port, sp, cable})
			}
		}
		// hosts on the first ports of each switch; a switch-switch link
		// between the last ports of two switches when there are two.
		b.WriteString("  hosts:\n")
		var links []string
		used := map[int]bool{}
		for h := range 1 + rng.Intn(2) {
			pi := rng.Intn(len(ports))
			if used[pi] {
				continue
			}
			used[pi] = true
			p := ports[pi]
			fmt.Fprintf(&b, "    - name: h%d\n      address: 198.51.100.%d\n      nics:\n        - {interface: eth0, rdma: mlx5_0, speed: %s, cable: %s}\n", h+1, h+1, p.speed, p.cable)
			links = append(links, fmt.Sprintf("[\"h%d:eth0\", \"%s:%s\"]", h+1, p.sw, p.port))
		}
		if nsw > 1 {
			a, z := len(ports)-1, 0
			if !used[a] && !used[z] && ports[a].sw != ports[z].sw && ports[a].speed == ports[z].speed && ports[a].cable == ports[z].cable {
				links = append(links, fmt.Sprintf("[\"%s:%s\", \"%s:%s\"]", ports[a].sw, ports[a].port, ports[z].sw, ports[z].port))
			}
		}
		if len(links) > 0 {
			b.WriteString("  links:\n")
			for _, l := range links {
				fmt.Fprintf(&b, "    - %s\n", l)
			}
		}
		file := filepath.Join(dir, fmt.Sprintf("corpus%03d.yaml", i))
		c := agreeCase{name: filepath.Base(file), files: []string{file}, generated: true, yaml: b.String(), switches: names}
		if i%5 == 4 {
			c.derive = intent.Derive{CellFactor: 2}
		}
		// The file itself has no buffers (agreeCheck writes them).
		y := b.String()
		for _, n := range names {
			y = strings.ReplaceAll(y, "      buffer: BUFFER_"+n+"\n", "")
		}
		if err := os.WriteFile(file, []byte(y), 0o600); err != nil {
			t.Fatal(err)
		}
		return c
	}
}

// TestAgreementIssue27Rows are the disagreements issue 27 found, each a
// row: the figure check prints is the one plan and lab program, and an
// intent plan refuses for its headroom check refuses too.
func TestAgreementIssue27Rows(t *testing.T) {
	dir := t.TempDir()
	sonic200KB := filepath.Join(dir, "sonic-200kb.yaml")
	if err := os.WriteFile(sonic200KB, []byte(`apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: issue27}
policy: {preset: roce-lossless}
inventory:
  switches:
    - name: leaf1
      platform: sonic
      profile: sonic-202411
      address: "192.0.2.1:8080"
      buffer: 200KB
      ports:
        - {name: Ethernet0, speed: 400G, cable: 5m}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	lab := "../../examples/lab.yaml"
	f, err := intent.Load(lab)
	if err != nil {
		t.Fatal(err)
	}
	leaf2 := portfacts.PortOf(f, f.Switch("leaf2"), f.Switch("leaf2").Ports[0]).Headroom.Programmed
	for _, tc := range []struct {
		name string
		args []string
		code int
		// id and path name the finding that must carry the figure.
		id, path string
		figure   int64
	}{
		// check passed FC112 at 150,528 B (cell factor 1); plan refused
		// at 219,136 B (Spectrum-2's 3).
		{"sonic-202411 400G/5m buffer 200KB: check", []string{"check", "-f", sonic200KB}, ExitCheckFailed, "FC112", "inventory.switches[leaf1].ports[Ethernet0]", 219_136},
		{"sonic-202411 400G/5m buffer 200KB: plan", []string{"plan", "-f", sonic200KB}, ExitCheckFailed, "FC112", "inventory.switches[leaf1].ports[Ethernet0]", 219_136},
		// --cell-factor 1 changes it for every command alike: the
		// headroom fits (150,528 B programmed, 150,624 B in Spectrum-2's
		// 144 B cells) and leaves 49,376 B before XOFF (FC111).
		{"--cell-factor 1: check", []string{"--cell-factor", "1", "check", "-f", sonic200KB}, ExitCheckFailed, "FC111", "policy.classes[roce].ecn.max", 150_528},
		{"--cell-factor 1: check, in cells", []string{"--cell-factor", "1", "check", "-f", sonic200KB}, ExitCheckFailed, "FC111", "policy.classes[roce].ecn.max", 150_624},
		{"--cell-factor 1: plan", []string{"--cell-factor", "1", "plan", "-f", sonic200KB}, ExitCheckFailed, "FC111", "policy.classes[roce].ecn.max", 150_528},
		// check said leaf2 needs 75,776 B, lab's check 113,664 B.
		{"lab.yaml leaf2: check", []string{"check", "-f", lab}, ExitOK, "FC112", "inventory.switches[leaf2].ports[Ethernet0]", 113_664},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runFabricctl(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, out, errOut)
			}
			if tc.id == "" {
				return
			}
			var line string
			for _, l := range strings.Split(out+errOut, "\n") {
				if strings.Contains(l, tc.id+": "+tc.path) {
					line = l
				}
			}
			if fig := formatThousands(tc.figure); !strings.Contains(line, fig+" B") {
				t.Errorf("no %s on %s with %s B:\n%s%s", tc.id, tc.path, fig, out, errOut)
			}
		})
	}
	if leaf2 != 113_664 {
		t.Errorf("lab.yaml leaf2 programs %d B, want 113,664 B", leaf2)
	}
}

// formatThousands writes n with thousands separators, as check does.
func formatThousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestAgreementHostBufferMinimum: the smallest lossless receive buffer a
// ConnectX NIC takes is one figure (portfacts.NIC.BufferMinimum): `host
// plan --assume fresh` refuses a policy.hostBuffers size below it and
// names it, and takes one of exactly that size, at every speed and cable.
func TestAgreementHostBufferMinimum(t *testing.T) {
	for _, tc := range []struct{ speed, cable string }{{"100G", "3m"}, {"25G", "1m"}, {"400G", "30m"}, {"800G", "150m"}} {
		t.Run(tc.speed+"/"+tc.cable, func(t *testing.T) {
			src := func(size string) string {
				return fmt.Sprintf(`apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: pod1}
policy:
  preset: roce-lossless
  hostBuffers: [{buffer: 1, size: %s, priorities: [3]}]
inventory:
  hosts:
    - name: gpu1
      address: local
      nics:
        - {interface: ens1f0np0, rdma: mlx5_0, speed: %s, cable: %s}
`, size, tc.speed, tc.cable)
			}
			f, err := intent.Parse("fabric.yaml", []byte(src("1MB")))
			if err != nil {
				t.Fatal(err)
			}
			minimum := portfacts.NICOf(f, &f.Hosts[0], f.Hosts[0].NICs[0]).BufferMinimum
			code, out, errOut := runHost(t, src(strconv.FormatInt(minimum-1, 10)), "host", "plan", "-f", "-", "--host", "gpu1", "--assume", "fresh")
			if code == ExitOK || !strings.Contains(out+errOut, fmt.Sprintf("minimum %d B", minimum)) {
				t.Errorf("a buffer of %d B: exit %d, want a refusal naming the minimum %d B\n%s%s", minimum-1, code, minimum, out, errOut)
			}
			if code, out, errOut := runHost(t, src(strconv.FormatInt(minimum, 10)), "host", "plan", "-f", "-", "--host", "gpu1", "--assume", "fresh"); code != ExitOK && code != ExitChanges {
				t.Errorf("a buffer of the minimum %d B: exit %d\n%s%s", minimum, code, out, errOut)
			}
		})
	}
}

// TestHeadroomExplainsPort: `headroom -f INTENT --port` prints a port's
// and a NIC's figures as every command reads them (portfacts), and refuses
// what it cannot explain.
func TestHeadroomExplainsPort(t *testing.T) {
	lab := "../../examples/lab.yaml"
	f, err := intent.Load(lab)
	if err != nil {
		t.Fatal(err)
	}
	sw := f.Switch("leaf2")
	pf := portfacts.PortOf(f, sw, sw.Ports[0])
	out, errOut, code := runFabricctl(t, "headroom", "-f", lab, "--port", "leaf2:"+sw.Ports[0].Name, "-o", "json")
	var got struct {
		Programmed int64   `json:"programmedBytes"`
		Occupied   int64   `json:"occupiedBytes"`
		CellFactor float64 `json:"cellFactor"`
	}
	if code != ExitOK || json.Unmarshal([]byte(out), &got) != nil {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if got.Programmed != pf.Headroom.Programmed || got.Occupied != pf.Headroom.Occupied || got.CellFactor != pf.Switch.CellFactor {
		t.Errorf("headroom --port: %+v, the port's facts: programmed %d, occupied %d, cell factor %g", got, pf.Headroom.Programmed, pf.Headroom.Occupied, pf.Switch.CellFactor)
	}
	// --cell-factor changes the explanation as it changes every command.
	out, _, _ = runFabricctl(t, "--cell-factor", "1", "headroom", "-f", lab, "--port", "leaf2:"+sw.Ports[0].Name, "-o", "json")
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.CellFactor != 1 || got.Programmed != portfacts.PortOf(f.WithDerive(intent.Derive{CellFactor: 1}), sw, sw.Ports[0]).Headroom.Programmed {
		t.Errorf("--cell-factor 1: %+v (%v)", got, err)
	}
	h := f.Host("host1")
	nf := portfacts.NICOf(f, h, h.NICs[0])
	out, errOut, code = runFabricctl(t, "headroom", "-f", lab, "--port", "host1:"+h.NICs[0].Interface, "-o", "json")
	var nic struct {
		Headroom int64 `json:"headroomBytes"`
		Minimum  int64 `json:"bufferMinimumBytes"`
	}
	if code != ExitOK || json.Unmarshal([]byte(out), &nic) != nil || nic.Headroom != nf.Headroom || nic.Minimum != nf.BufferMinimum {
		t.Errorf("NIC: exit %d, %+v, want headroom %d and minimum %d\n%s%s", code, nic, nf.Headroom, nf.BufferMinimum, out, errOut)
	}
	for _, args := range [][]string{
		{"headroom", "-f", lab},
		{"headroom", "--port", "leaf2:Ethernet0"},
		{"headroom", "-f", lab, "--port", "leaf2"},
		{"headroom", "-f", lab, "--port", "leaf9:Ethernet0"},
		{"headroom", "-f", lab, "--port", "leaf2:Ethernet99"},
		{"headroom", "-f", lab, "--port", "host1:eth9"},
		{"headroom", "-f", lab, "--port", "leaf2:Ethernet0", "--speed", "100G"},
	} {
		if _, _, code := runFabricctl(t, args...); code != ExitUsage {
			t.Errorf("fabricctl %s: exit %d, want %d", strings.Join(args, " "), code, ExitUsage)
		}
	}
}
