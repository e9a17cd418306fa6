package clab

import (
	"bytes"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// MaxFileSize bounds a topology file or topology-data.json.
const MaxFileSize = 16 << 20

// Topology is a containerlab lab: its nodes and the links between them.
type Topology struct {
	// Name is the lab name (containerlab `name`).
	Name string
	// Prefix is the container name prefix (containerlab `prefix`); nil = the
	// default "clab".
	Prefix *string
	// File is the file it was read from.
	File string
	// Mgmt is the management network.
	Mgmt Mgmt
	// Nodes sorted by name.
	Nodes []Node
	// Links in file order. Links that touch a special endpoint (host,
	// mgmt-net, macvlan) or have one end are not listed.
	Links []Link
	// FromData is true when the topology came from a deployed lab's
	// topology-data.json (then mgmt addresses are the ones in use).
	FromData bool
}

// Mgmt is the lab's management network.
type Mgmt struct {
	Network    string
	IPv4Subnet string
}

// Node is one containerlab node.
type Node struct {
	Name  string
	Kind  string
	Image string
	Type  string
	// MgmtIPv4 is the node's management IPv4 address without prefix length
	// ("" = assigned by containerlab at deploy time).
	MgmtIPv4 string
	// Exec lists the commands containerlab runs in the node after deploy.
	Exec          []string
	StartupConfig string
	Binds         []string
	Pos           Pos
}

// Endpoint is one end of a link as containerlab names it.
type Endpoint struct {
	Node      string
	Interface string
	// IPv4 is the address containerlab itself configures on the endpoint
	// (extended link format `ipv4:`), "" if none.
	IPv4 string
}

func (e Endpoint) String() string { return e.Node + ":" + e.Interface }

// Link is a point-to-point link between two nodes.
type Link struct {
	A, B Endpoint
	Pos  Pos
}

// Pos is a position in a topology file; Line 0 means none (JSON input).
type Pos struct {
	File string
	Line int
	Col  int
}

func (p Pos) String() string {
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Error is one problem in a topology file.
type Error struct {
	Pos Pos
	Msg string
}

func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// Errors is every problem found in one file, in file order.
type Errors []*Error

func (es Errors) Error() string {
	if len(es) == 1 {
		return es[0].Error()
	}
	lines := []string{fmt.Sprintf("%d errors in containerlab topology:", len(es))}
	for _, e := range es {
		lines = append(lines, "  "+e.Error())
	}
	return strings.Join(lines, "\n")
}

// Node returns the named node, or nil.
func (t *Topology) Node(name string) *Node {
	for i := range t.Nodes {
		if t.Nodes[i].Name == name {
			return &t.Nodes[i]
		}
	}
	return nil
}

// LabDir is the directory containerlab creates next to the topology file
// for the lab's artifacts (certificates, topology-data.json): clab-<name>.
func (t *Topology) LabDir() string { return "clab-" + t.Name }

// ContainerName is the name containerlab gives the node's container and
// writes into /etc/hosts of the lab host: clab-<lab>-<node> by default.
func (t *Topology) ContainerName(node string) string {
	if t.Prefix == nil {
		return "clab-" + t.Name + "-" + node
	}
	switch p := *t.Prefix; p {
	case "":
		return node
	case "__lab-name":
		return t.Name + "-" + node
	default:
		return p + "-" + t.Name + "-" + node
	}
}

// Load reads a topology file (*.clab.yml / *.clab.yaml) or a deployed lab's
// topology-data.json, chosen by content: JSON starts with '{'. A directory
// is a lab directory (clab-<lab>, holding topology-data.json) or, as
// containerlab reads it, a directory with exactly one *.clab.yml.
func Load(path string) (*Topology, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		p, err := findTopology(path)
		if err != nil {
			return nil, err
		}
		path = p
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read containerlab topology: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read containerlab topology %s: %w", path, err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("containerlab topology %s: larger than %d MiB", path, MaxFileSize>>20)
	}
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		return ParseData(path, data)
	}
	return Parse(path, data)
}

func findTopology(dir string) (string, error) {
	data := filepath.Join(dir, "topology-data.json")
	if _, err := os.Stat(data); err == nil {
		return data, nil
	}
	var found []string
	for _, pat := range []string{"*.clab.yml", "*.clab.yaml"} {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return "", err
		}
		found = append(found, m...)
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", fmt.Errorf("read containerlab topology: %s has no topology-data.json and no *.clab.yml", dir)
	}
	return "", fmt.Errorf("read containerlab topology: %s has %d topology files (%s): name one", dir, len(found), strings.Join(found, ", "))
}

// specialNodes are link endpoints that are not lab nodes.
var specialNodes = map[string]bool{"host": true, "mgmt-net": true, "macvlan": true}

// Parse reads a containerlab topology file. The error, if any, is an Errors
// with file:line:col positions.
func Parse(name string, data []byte) (top *Topology, err error) {
	p := &parser{file: name}
	defer func() {
		if r := recover(); r != nil { // yaml.v3 has panicked on malformed input before
			top, err = nil, Errors{{Pos: Pos{File: name, Line: 1, Col: 1}, Msg: fmt.Sprintf("YAML parser failed: %v", r)}}
		}
	}()
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, Errors{{Pos: yamlErrPos(name, err), Msg: "invalid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}}
	}
	if len(doc.Content) == 0 {
		return nil, Errors{{Pos: Pos{File: name, Line: 1, Col: 1}, Msg: "empty topology file"}}
	}
	t := p.topology(doc.Content[0])
	if len(p.errs) > 0 {
		sort.SliceStable(p.errs, func(i, j int) bool {
			a, b := p.errs[i].Pos, p.errs[j].Pos
			if a.Line != b.Line {
				return a.Line < b.Line
			}
			return a.Col < b.Col
		})
		return nil, p.errs
	}
	return t, nil
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

func yamlErrPos(file string, err error) Pos {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		l, _ := strconv.Atoi(m[1])
		return Pos{File: file, Line: l, Col: 1}
	}
	return Pos{File: file, Line: 1, Col: 1}
}

type parser struct {
	file string
	errs Errors
}

func (p *parser) pos(n *yaml.Node) Pos { return Pos{File: p.file, Line: n.Line, Col: n.Column} }

func (p *parser) errorf(n *yaml.Node, format string, a ...any) {
	p.errs = append(p.errs, &Error{Pos: p.pos(n), Msg: fmt.Sprintf(format, a...)})
}

func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// mapping returns the key/value pairs of a mapping node in order, reporting
// duplicate keys; nil and an error when n is not a mapping.
func (p *parser) mapping(n *yaml.Node, what string) [][2]*yaml.Node {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "%s: want a mapping", what)
		return nil
	}
	var out [][2]*yaml.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolve(n.Content[i+1])
		if k.Value == "<<" { // merge key: splice the referenced mapping in
			for _, kv := range p.mapping(v, what) {
				if !seen[kv[0].Value] {
					seen[kv[0].Value] = true
					out = append(out, kv)
				}
			}
			continue
		}
		if seen[k.Value] {
			p.errorf(k, "%s: key %q is given twice", what, k.Value)
			continue
		}
		seen[k.Value] = true
		out = append(out, [2]*yaml.Node{k, v})
	}
	return out
}

func (p *parser) str(n *yaml.Node, what string) string {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode || n.Tag == "!!map" || n.Tag == "!!seq" {
		p.errorf(n, "%s: want a string", what)
		return ""
	}
	if n.Tag == "!!null" {
		return ""
	}
	return n.Value
}

func (p *parser) strList(n *yaml.Node, what string) []string {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "%s: want a list of strings", what)
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for _, c := range n.Content {
		out = append(out, p.str(c, what))
	}
	return out
}

// nodeFields are the node settings this package reads; the other keys of a
// containerlab node (env, ports, labels, ...) are accepted and ignored, as
// containerlab owns that schema.
type nodeFields struct {
	kind, image, typ, mgmtIPv4, startup, group string
	exec, binds                                []string
	hasExec                                    bool
	mgmtNode                                   *yaml.Node // where mgmt-ipv4 was written
}

func (p *parser) fields(n *yaml.Node, what string) nodeFields {
	var f nodeFields
	for _, kv := range p.mapping(n, what) {
		k, v := kv[0], kv[1]
		switch k.Value {
		case "kind":
			f.kind = p.str(v, what+".kind")
		case "image":
			f.image = p.str(v, what+".image")
		case "type":
			f.typ = p.str(v, what+".type")
		case "mgmt-ipv4", "mgmt_ipv4":
			f.mgmtIPv4, f.mgmtNode = p.str(v, what+".mgmt-ipv4"), v
		case "startup-config":
			f.startup = p.str(v, what+".startup-config")
		case "group":
			f.group = p.str(v, what+".group")
		case "exec":
			f.exec, f.hasExec = p.strList(v, what+".exec"), true
		case "binds":
			f.binds = p.strList(v, what+".binds")
		}
	}
	return f
}

// topLevel and topologyKeys are the keys containerlab defines; anything else
// is a typo containerlab itself would reject.
var (
	topLevel     = map[string]bool{"name": true, "prefix": true, "mgmt": true, "topology": true, "settings": true, "debug": true}
	topologyKeys = map[string]bool{"nodes": true, "links": true, "kinds": true, "defaults": true, "groups": true}
)

func (p *parser) topology(root *yaml.Node) *Topology {
	t := &Topology{File: p.file}
	var topo *yaml.Node
	for _, kv := range p.mapping(root, "topology file") {
		k, v := kv[0], kv[1]
		switch k.Value {
		case "name":
			t.Name = p.str(v, "name")
		case "prefix":
			s := p.str(v, "prefix")
			t.Prefix = &s
		case "mgmt":
			for _, m := range p.mapping(v, "mgmt") {
				switch m[0].Value {
				case "network":
					t.Mgmt.Network = p.str(m[1], "mgmt.network")
				case "ipv4-subnet", "ipv4_subnet":
					t.Mgmt.IPv4Subnet = p.str(m[1], "mgmt.ipv4-subnet")
				}
			}
		case "topology":
			topo = v
		default:
			if !topLevel[k.Value] {
				p.errorf(k, "unknown top-level key %q (containerlab knows name, prefix, mgmt, topology, settings)", k.Value)
			}
		}
	}
	if t.Name == "" {
		p.errorf(root, "name: required field is missing (the lab name)")
	}
	if topo == nil {
		p.errorf(root, "topology: required field is missing")
		return t
	}
	var defaults nodeFields
	kinds := map[string]nodeFields{}
	groups := map[string]nodeFields{}
	var nodesNode, linksNode *yaml.Node
	for _, kv := range p.mapping(topo, "topology") {
		k, v := kv[0], kv[1]
		switch k.Value {
		case "defaults":
			defaults = p.fields(v, "topology.defaults")
		case "kinds":
			for _, kk := range p.mapping(v, "topology.kinds") {
				kinds[kk[0].Value] = p.fields(kk[1], "topology.kinds."+kk[0].Value)
			}
		case "groups":
			for _, g := range p.mapping(v, "topology.groups") {
				groups[g[0].Value] = p.fields(g[1], "topology.groups."+g[0].Value)
			}
		case "nodes":
			nodesNode = v
		case "links":
			linksNode = v
		default:
			if !topologyKeys[k.Value] {
				p.errorf(k, "topology: unknown key %q (containerlab knows nodes, links, kinds, defaults, groups)", k.Value)
			}
		}
	}
	if nodesNode == nil {
		p.errorf(topo, "topology.nodes: required field is missing")
		return t
	}
	var subnet netip.Prefix
	if t.Mgmt.IPv4Subnet != "" {
		var err error
		if subnet, err = netip.ParsePrefix(t.Mgmt.IPv4Subnet); err != nil || !subnet.Addr().Is4() {
			p.errorf(root, "mgmt.ipv4-subnet: %q is not an IPv4 prefix", t.Mgmt.IPv4Subnet)
			subnet = netip.Prefix{}
		}
	}
	mgmtBy := map[string]string{}
	for _, kv := range p.mapping(nodesNode, "topology.nodes") {
		n, at := p.node(kv[0], kv[1], defaults, kinds, groups)
		if n.MgmtIPv4 != "" {
			a, err := netip.ParseAddr(n.MgmtIPv4)
			switch {
			case err != nil || !a.Is4():
				p.errorf(at, "topology.nodes.%s.mgmt-ipv4: %q is not an IPv4 address", n.Name, n.MgmtIPv4)
			case subnet.IsValid() && !subnet.Contains(a):
				p.errorf(at, "topology.nodes.%s.mgmt-ipv4: %s is outside mgmt.ipv4-subnet %s", n.Name, a, subnet)
			case mgmtBy[n.MgmtIPv4] != "":
				p.errorf(at, "topology.nodes.%s.mgmt-ipv4: %s is also node %s's address", n.Name, a, mgmtBy[n.MgmtIPv4])
			default:
				mgmtBy[n.MgmtIPv4] = n.Name
			}
		}
		t.Nodes = append(t.Nodes, n)
	}
	sort.Slice(t.Nodes, func(i, j int) bool { return naturalLess(t.Nodes[i].Name, t.Nodes[j].Name) })
	if linksNode != nil {
		p.links(t, linksNode)
	}
	return t
}

func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// node resolves one node against its group, kind and the defaults; it also
// returns where its mgmt-ipv4 was written (the key when it was not).
func (p *parser) node(k, v *yaml.Node, defaults nodeFields, kinds, groups map[string]nodeFields) (Node, *yaml.Node) {
	what := "topology.nodes." + k.Value
	f := p.fields(v, what)
	g, gok := groups[f.group]
	if f.group != "" && !gok {
		p.errorf(v, "%s.group: group %q is not defined in topology.groups", what, f.group)
	}
	n := Node{Name: k.Value, Pos: p.pos(k), MgmtIPv4: f.mgmtIPv4}
	n.Kind = first(f.kind, g.kind, defaults.kind)
	kd := kinds[n.Kind]
	n.Image = first(f.image, g.image, kd.image, defaults.image)
	n.Type = first(f.typ, g.typ, kd.typ, defaults.typ)
	n.StartupConfig = first(f.startup, g.startup, kd.startup, defaults.startup)
	for _, src := range []nodeFields{f, g, kd, defaults} {
		if src.hasExec {
			n.Exec = src.exec
			break
		}
	}
	n.Binds = append(append(append(append([]string(nil), defaults.binds...), kd.binds...), g.binds...), f.binds...)
	if n.Kind == "" {
		p.errorf(k, "%s.kind: required field is missing (set kind on the node, its group, or topology.defaults)", what)
	}
	if n.MgmtIPv4 != "" {
		n.MgmtIPv4 = strings.SplitN(n.MgmtIPv4, "/", 2)[0]
	}
	if f.mgmtNode != nil {
		return n, f.mgmtNode
	}
	return n, k
}

func (p *parser) links(t *Topology, n *yaml.Node) {
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "topology.links: want a list")
		return
	}
	used := map[string]*yaml.Node{}
	for i, ln := range n.Content {
		what := fmt.Sprintf("topology.links[%d]", i)
		var eps *yaml.Node
		typ := "veth"
		for _, kv := range p.mapping(ln, what) {
			switch kv[0].Value {
			case "endpoints":
				eps = kv[1]
			case "type":
				typ = p.str(kv[1], what+".type")
			}
		}
		if typ != "veth" {
			continue // host, mgmt-net, macvlan, vxlan, dummy: one lab end only
		}
		if eps == nil {
			p.errorf(ln, "%s.endpoints: required field is missing", what)
			continue
		}
		eps = resolve(eps)
		if eps.Kind != yaml.SequenceNode || len(eps.Content) != 2 {
			p.errorf(eps, "%s.endpoints: want two endpoints [\"node:interface\", \"node:interface\"]", what)
			continue
		}
		var ends [2]Endpoint
		ok := true
		for j, e := range eps.Content {
			ep, good := p.endpoint(e, fmt.Sprintf("%s.endpoints[%d]", what, j))
			ends[j], ok = ep, ok && good
		}
		if !ok {
			continue
		}
		if specialNodes[ends[0].Node] || specialNodes[ends[1].Node] {
			continue
		}
		bad := false
		for j, e := range ends {
			en := eps.Content[j]
			if t.Node(e.Node) == nil {
				p.errorf(en, "%s: node %q is not defined in topology.nodes", what, e.Node)
				bad = true
				continue
			}
			if prev := used[e.String()]; prev != nil {
				p.errorf(en, "%s: %s is already used by the link at line %d", what, e, prev.Line)
				bad = true
				continue
			}
			used[e.String()] = en
		}
		if !bad {
			t.Links = append(t.Links, Link{A: ends[0], B: ends[1], Pos: p.pos(ln)})
		}
	}
}

// endpoint reads "node:interface" or {node: n, interface: i, ...}.
func (p *parser) endpoint(n *yaml.Node, what string) (Endpoint, bool) {
	n = resolve(n)
	switch n.Kind {
	case yaml.ScalarNode:
		node, iface, ok := strings.Cut(n.Value, ":")
		if !ok || node == "" || iface == "" {
			p.errorf(n, "%s: %q: want node:interface", what, n.Value)
			return Endpoint{}, false
		}
		return Endpoint{Node: node, Interface: iface}, true
	case yaml.MappingNode:
		var e Endpoint
		for _, kv := range p.mapping(n, what) {
			switch kv[0].Value {
			case "node":
				e.Node = p.str(kv[1], what+".node")
			case "interface":
				e.Interface = p.str(kv[1], what+".interface")
			case "ipv4":
				e.IPv4 = p.str(kv[1], what+".ipv4")
			}
		}
		if e.Node == "" || e.Interface == "" {
			p.errorf(n, "%s: want node and interface", what)
			return Endpoint{}, false
		}
		return e, true
	}
	p.errorf(n, "%s: want \"node:interface\"", what)
	return Endpoint{}, false
}

// naturalLess orders names with embedded numbers numerically (leaf2 < leaf10).
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digits(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}
