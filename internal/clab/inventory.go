package clab

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/profile"
)

// ImportOptions are the choices the topology itself does not make.
type ImportOptions struct {
	// Speed and Cable are every switch port's line rate and cable length
	// (veth links have neither), e.g. "100G" and "3m".
	Speed, Cable string
	// SSHUser, SSHKeyFile and KnownHosts go into every host's ssh block
	// ("" leaves a field out; the user defaults to root).
	SSHUser, SSHKeyFile, KnownHosts string
	// BaseDir is the directory the written inventory will live in: the lab
	// CA path is written relative to it. "" means the topology's directory.
	BaseDir string
	// Source is the command-line name of the topology, for the header comment.
	Source string
	// Name is the fabric name written to metadata.name ("" = the lab name):
	// it must equal the name a policy file merged with the inventory gives.
	Name string
}

// Inventory is the fabricctl inventory of a lab.
type Inventory struct {
	Lab      string
	Switches []Switch // sorted by name
	Hosts    []Host   // sorted by name
	Links    []intent.Link
	// Notes say what was left out and why (bridges, nodes without data links).
	Notes []string
}

// Switch is one switch of the imported inventory.
type Switch struct {
	Name     string
	Kind     string
	Platform intent.Platform
	Address  string // gNMI host:port
	// UsernameEnv and PasswordEnv name the environment variables holding the
	// gNMI credentials.
	UsernameEnv, PasswordEnv string
	// CA is the lab CA bundle (SR Linux), relative to BaseDir.
	CA string
	// SkipVerify: TLS without verifying the certificate (lab only).
	SkipVerify bool
	// Insecure: plaintext gRPC (lab only).
	Insecure bool
	Ports    []string // NOS port names, natural order
	// Profile is the release profile the node's image tag names (profileOf),
	// "" when it names none fabricctl has.
	Profile string
}

// Host is one Linux host of the imported inventory.
type Host struct {
	Name    string
	Address string // SSH destination: the mgmt address or container name
	NICs    []NIC  // natural order of Interface
}

// NIC is one data interface of a host.
type NIC struct {
	Interface string
	RDMA      string // Soft-RoCE device the node's exec creates on it ("" = none)
	Address   string // IPv4 the node's exec or the link sets on it ("" = none)
}

var (
	// ip addr add 10.10.1.11/24 dev eth1  (also "ip -4 address add")
	execAddr = regexp.MustCompile(`\bip\s+(?:-4\s+)?a(?:ddr(?:ess)?)?\s+add\s+(\d{1,3}(?:\.\d{1,3}){3})(?:/\d+)?\s+dev\s+([A-Za-z0-9_.@-]+)`)
	// rdma link add rxe0 type rxe netdev eth1
	execRXE = regexp.MustCompile(`\brdma\s+link\s+add\s+([A-Za-z0-9_.-]+)\s+type\s+rxe\s+netdev\s+([A-Za-z0-9_.@-]+)`)
)

// credentialEnv is the environment variable prefix per platform.
var credentialEnv = map[intent.Platform]string{
	intent.PlatformSRLinux: "SRL",
	intent.PlatformSONiC:   "SONIC",
	intent.PlatformEOS:     "EOS",
}

// Import maps a lab onto a fabricctl inventory: switch kinds become
// switches with their gNMI address and the NOS names of their linked ports,
// linux nodes with links become hosts whose NICs are their linked interfaces
// (with the Soft-RoCE device and address their exec commands set up), and
// every link between them becomes an intent link.
func Import(t *Topology, o ImportOptions) (*Inventory, error) {
	inv := &Inventory{Lab: t.Name}
	var errs []string
	info := map[string]KindInfo{}
	for _, n := range t.Nodes {
		k, ok := Kind(n.Kind)
		if !ok {
			errs = append(errs, fmt.Sprintf("%s: node %s: kind %q is not one fabricctl can configure (known: %s)",
				n.Pos, n.Name, n.Kind, strings.Join(Kinds(), ", ")))
			continue
		}
		info[n.Name] = k
	}
	ports := map[string]map[string]bool{}
	nics := map[string]map[string]bool{}
	for _, l := range t.Links {
		ka, okA := info[l.A.Node]
		kb, okB := info[l.B.Node]
		if !okA || !okB {
			continue // reported above
		}
		if ka.Role == RoleOther || kb.Role == RoleOther {
			other := t.Node(l.B.Node).Kind
			if ka.Role == RoleOther {
				other = t.Node(l.A.Node).Kind
			}
			inv.Notes = append(inv.Notes, fmt.Sprintf("link %s -- %s: leaves the fabric through a %s node; not imported", l.A, l.B, other))
			continue
		}
		var ends [2]intent.Endpoint
		bad := false
		for i, e := range []Endpoint{l.A, l.B} {
			k := info[e.Node]
			name, err := k.Interface(e.Interface)
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s: link %s -- %s: node %s: %v", l.Pos, l.A, l.B, e.Node, err))
				bad = true
				continue
			}
			ends[i] = intent.Endpoint{Node: e.Node, Port: name}
			set := nics
			if k.Role == RoleSwitch {
				set = ports
			}
			if set[e.Node] == nil {
				set[e.Node] = map[string]bool{}
			}
			set[e.Node][name] = true
		}
		if !bad {
			inv.Links = append(inv.Links, intent.Link{A: ends[0], B: ends[1]})
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("import %s: %s", t.File, strings.Join(errs, "; "))
	}
	caDir := t.caPath()
	base := o.BaseDir
	if base == "" {
		base = filepath.Dir(t.File)
	}
	ca, err := relPath(base, caDir)
	if err != nil {
		return nil, fmt.Errorf("import %s: lab CA path: %w", t.File, err)
	}
	for _, n := range t.Nodes {
		k, ok := info[n.Name]
		if !ok {
			continue
		}
		addr := n.MgmtIPv4
		if addr == "" {
			addr = t.ContainerName(n.Name)
		}
		switch k.Role {
		case RoleSwitch:
			env := credentialEnv[k.Platform]
			sw := Switch{Name: n.Name, Kind: n.Kind, Platform: k.Platform, Address: addr + ":" + strconv.Itoa(k.GNMIPort),
				UsernameEnv: env + "_USERNAME", PasswordEnv: env + "_PASSWORD", Ports: sortedKeys(ports[n.Name])}
			switch k.Platform {
			case intent.PlatformSRLinux:
				sw.CA = ca
			case intent.PlatformSONiC:
				sw.SkipVerify = true
			case intent.PlatformEOS:
				sw.Insecure = true
			}
			var note string
			if sw.Profile, note = profileOf(k.Platform, n.Image); note != "" {
				inv.Notes = append(inv.Notes, fmt.Sprintf("switch %s: %s", n.Name, note))
			}
			if len(sw.Ports) == 0 {
				inv.Notes = append(inv.Notes, fmt.Sprintf("switch %s has no data links", n.Name))
			}
			inv.Switches = append(inv.Switches, sw)
		case RoleHost:
			if len(nics[n.Name]) == 0 {
				inv.Notes = append(inv.Notes, fmt.Sprintf("node %s (%s) has no data links: not a fabric host", n.Name, n.Kind))
				continue
			}
			h := Host{Name: n.Name, Address: addr}
			addrs, rxe := execSetup(n.Exec)
			for _, l := range t.Links { // addresses containerlab sets itself
				for _, e := range []Endpoint{l.A, l.B} {
					if e.Node == n.Name && e.IPv4 != "" && addrs[e.Interface] == "" {
						addrs[e.Interface] = strings.SplitN(e.IPv4, "/", 2)[0]
					}
				}
			}
			for _, ifn := range sortedKeys(nics[n.Name]) {
				h.NICs = append(h.NICs, NIC{Interface: ifn, RDMA: rxe[ifn], Address: addrs[ifn]})
			}
			inv.Hosts = append(inv.Hosts, h)
		}
	}
	return inv, nil
}

// caPath is where containerlab (v0.48 and later) keeps the lab CA.
func (t *Topology) caPath() string {
	dir := filepath.Dir(t.File)
	if t.FromData { // the file is <labdir>/topology-data.json
		return filepath.Join(dir, ".tls", "ca", "ca.pem")
	}
	return filepath.Join(dir, t.LabDir(), ".tls", "ca", "ca.pem")
}

func relPath(base, target string) (string, error) {
	ab, err := filepath.Abs(base)
	if err != nil {
		return "", err
	}
	at, err := filepath.Abs(target)
	if err != nil {
		return "", err
	}
	r, err := filepath.Rel(ab, at)
	if err != nil {
		return "", err
	}
	return filepath.ToSlash(r), nil
}

// execSetup reads what a linux node's exec commands configure: IPv4
// addresses and Soft-RoCE devices per interface.
func execSetup(cmds []string) (addrs, rxe map[string]string) {
	addrs, rxe = map[string]string{}, map[string]string{}
	for _, c := range cmds {
		for _, m := range execAddr.FindAllStringSubmatch(c, -1) {
			if addrs[m[2]] == "" {
				addrs[m[2]] = m[1]
			}
		}
		for _, m := range execRXE.FindAllStringSubmatch(c, -1) {
			if rxe[m[2]] == "" {
				rxe[m[2]] = m[1]
			}
		}
	}
	return addrs, rxe
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return naturalLess(out[i], out[j]) })
	return out
}

// WriteYAML writes the inventory as an intent file that holds only the
// inventory (apiVersion, kind, metadata, inventory), to be merged with a
// policy file: fabricctl check -f policy.yaml -f inventory.yaml.
func (inv *Inventory) WriteYAML(w io.Writer, o ImportOptions) error {
	bw := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	src := o.Source
	if src == "" {
		src = inv.Lab
	}
	p("# Inventory of the containerlab lab %q, written by\n", inv.Lab)
	p("#   fabricctl inventory import --containerlab %s\n", src)
	p("# Merge it with a policy: fabricctl check -f policy.yaml -f <this file>\n")
	p("# gNMI credentials are read from the environment, never stored here:\n")
	envs := map[string]bool{}
	for _, s := range inv.Switches {
		if !envs[s.UsernameEnv] {
			envs[s.UsernameEnv] = true
			p("#   %s / %s for %s switches\n", s.UsernameEnv, s.PasswordEnv, s.Platform)
		}
	}
	for _, s := range inv.Switches {
		if s.SkipVerify || s.Insecure {
			p("# tls.skipVerify / tls.insecure below are for the lab only.\n")
			break
		}
	}
	for _, n := range inv.Notes {
		p("# note: %s\n", n)
	}
	p("apiVersion: %s\n", intent.APIVersion)
	p("kind: %s\n", intent.Kind)
	name := inv.Lab
	if o.Name != "" {
		name = o.Name
	}
	p("metadata:\n  name: %s\n", yq(name))
	p("inventory:\n")
	if len(inv.Switches) > 0 {
		p("  switches:\n")
	}
	for _, s := range inv.Switches {
		p("    - name: %s\n", yq(s.Name))
		p("      platform: %s\n", s.Platform)
		p("      address: %s\n", yq(s.Address))
		if s.Profile != "" {
			p("      profile: %s\n", s.Profile)
		}
		p("      credentials: {usernameEnv: %s, passwordEnv: %s}\n", s.UsernameEnv, s.PasswordEnv)
		switch {
		case s.CA != "":
			p("      tls: {ca: %s}\n", yq(s.CA))
		case s.SkipVerify:
			p("      tls: {skipVerify: true}\n")
		case s.Insecure:
			p("      tls: {insecure: true}\n")
		}
		p("      portDefaults: {speed: %s, cable: %s}\n", yq(o.Speed), yq(o.Cable))
		if len(s.Ports) > 0 {
			p("      ports:\n")
			for _, r := range Compress(s.Ports) {
				p("        - name: %s\n", yq(r))
			}
		}
	}
	if len(inv.Hosts) > 0 {
		p("  hosts:\n")
	}
	for _, h := range inv.Hosts {
		p("    - name: %s\n", yq(h.Name))
		p("      address: %s\n", yq(h.Address))
		var ssh []string
		if o.SSHUser != "" {
			ssh = append(ssh, "user: "+yq(o.SSHUser))
		}
		if o.SSHKeyFile != "" {
			ssh = append(ssh, "keyFile: "+yq(o.SSHKeyFile))
		}
		if o.KnownHosts != "" {
			ssh = append(ssh, "knownHosts: "+yq(o.KnownHosts))
		}
		if len(ssh) > 0 {
			p("      ssh: {%s}\n", strings.Join(ssh, ", "))
		}
		p("      nics:\n")
		for _, n := range h.NICs {
			f := []string{"interface: " + yq(n.Interface)}
			if n.RDMA != "" {
				f = append(f, "rdma: "+yq(n.RDMA))
			}
			if n.Address != "" {
				f = append(f, "address: "+yq(n.Address))
			}
			p("        - {%s}\n", strings.Join(f, ", "))
		}
	}
	if len(inv.Links) > 0 {
		p("  links:\n")
	}
	for _, l := range inv.Links {
		p("    - [%s, %s]\n", yq(l.A.String()), yq(l.B.String()))
	}
	return bw.Flush()
}

// yq quotes a YAML scalar when it needs it.
func yq(s string) string {
	if s == "" || strings.ContainsAny(s, "{}[],:#&*!|>'\"%@`") || strings.TrimSpace(s) != s ||
		s == "true" || s == "false" || s == "null" || s == "~" || s == "yes" || s == "no" {
		return strconv.Quote(s)
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return strconv.Quote(s)
	}
	return s
}

var trailingNum = regexp.MustCompile(`^(.*?)(\d+)$`)

// Compress writes runs of names that differ only in a trailing number with a
// constant step as intent ranges: ethernet-1/1, ethernet-1/2, ethernet-1/3
// -> ethernet-1/{1..3}; Ethernet0, Ethernet4 -> Ethernet{0..4..4}. The input
// is in natural order; intent.Expand of the output gives it back.
func Compress(names []string) []string {
	var out []string
	for i := 0; i < len(names); {
		m := trailingNum.FindStringSubmatch(names[i])
		if m == nil || strings.ContainsAny(names[i], "{}") || (len(m[2]) > 1 && m[2][0] == '0') {
			out = append(out, names[i])
			i++
			continue
		}
		prefix := m[1]
		start, _ := strconv.Atoi(m[2])
		j, step, last := i+1, 0, start
		for ; j < len(names); j++ {
			mj := trailingNum.FindStringSubmatch(names[j])
			if mj == nil || mj[1] != prefix || (len(mj[2]) > 1 && mj[2][0] == '0') {
				break
			}
			v, _ := strconv.Atoi(mj[2])
			if step == 0 {
				if v <= last {
					break
				}
				step = v - last
			} else if v-last != step {
				break
			}
			last = v
		}
		switch {
		case j-i == 1:
			out = append(out, names[i])
		case step == 1:
			out = append(out, fmt.Sprintf("%s{%d..%d}", prefix, start, last))
		default:
			out = append(out, fmt.Sprintf("%s{%d..%d..%d}", prefix, start, last, step))
		}
		i = j
	}
	return out
}

// profileOf is the release profile a switch image's tag names: a SONiC
// tag of a branch (vrnetlab/sonic_sonic-vs:202405, a build_version) names
// sonic-<branch>, an SR Linux <major>.<minor>.<patch> tag names
// srlinux-<major>.<minor>. It is "" with a note when the tag names a
// release fabricctl has no profile of, or names none (latest): the intent
// then plans for the platform's default.
func profileOf(p intent.Platform, image string) (name, note string) {
	tag := ""
	if i := strings.LastIndexByte(image, ':'); i >= 0 && !strings.Contains(image[i:], "/") {
		tag = image[i+1:]
	}
	rel := ""
	switch p {
	case intent.PlatformSONiC:
		if r := profile.SONiCRelease(tag); r != "" {
			rel = "sonic-" + r
		}
	case intent.PlatformSRLinux:
		if parts := strings.SplitN(tag, ".", 3); len(parts) >= 2 && parts[0] != "" && parts[1] != "" {
			rel = "srlinux-" + parts[0] + "." + parts[1]
		}
	default:
		return "", ""
	}
	def, err := profile.Default(string(p))
	if err != nil {
		return "", ""
	}
	if rel == "" {
		return "", fmt.Sprintf("image %s names no release; the intent plans for %s unless switches[].profile says otherwise", image, def.Name)
	}
	if _, err := profile.LookupFor(string(p), rel); err != nil {
		return "", fmt.Sprintf("image %s is release %s, which has no profile (known: %s); the intent plans for %s unless switches[].profile says otherwise", image, strings.TrimPrefix(rel, string(p)+"-"), strings.Join(profile.Names(string(p)), ", "), def.Name)
	}
	return rel, ""
}
