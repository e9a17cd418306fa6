package sim

import (
	"fmt"
	"hash/fnv"
	"math"
	"sort"
	"strings"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/portfacts"
)

// Network is the fabric the simulator runs: nodes and ports from the
// intent's links, the QoS classes from its policy, and the flows of a
// scenario.
type Network struct {
	fabric  *intent.Fabric
	nodes   []*node
	byName  map[string]*node
	ports   []*port
	flows   []*flow
	classes [8]classCfg
	// switchPause is false for the modes in which switches never send
	// pause (semi-lossless: intent.RoCEMode.SwitchSendsPause): a switch
	// that drops a lossless class there drops by design, and RoCE RC
	// recovers it.
	switchPause bool
	cnpPrio     int
	mtuPayload  int
	watchdog    intent.Watchdog
	portInfo    map[*port]portInfo
	scenario    string
	dist        map[*node]map[*node]int // BFS distances to each destination
	swFacts     map[*intent.Switch]*portfacts.Switch
	// Synthetic is set when the topology was made up (the intent had no
	// hosts for the scenario); Notes say how.
	Synthetic bool
	Notes     []string
}

type portInfo struct {
	pos  intent.Pos
	path string
	link int // index into fabric.Links, -1 when synthetic
}

func (n *Network) lossless() []int {
	var out []int
	for p, c := range n.classes {
		if c.lossless {
			out = append(out, p)
		}
	}
	return out
}

// FromIntent builds the network of f: every link whose two ends resolve to
// a switch port or host NIC. Speeds and cables come from the switch side
// (a host-host link is ignored); the headroom of each lossless priority
// group of a switch port is portfacts' (Port.Headroom, the figure the
// compilers program, in the switch's buffer cells) and so is its XOFF point; a switch's buffer (intent switches[].buffer) is the
// headroom pool of each of its ports.
func FromIntent(f *intent.Fabric) (*Network, error) {
	n := &Network{fabric: f, byName: map[string]*node{}, portInfo: map[*port]portInfo{}, watchdog: f.Policy.Watchdog, swFacts: map[*intent.Switch]*portfacts.Switch{},
		switchPause: f.Policy.Mode.SwitchSendsPause()}
	n.policy(&f.Policy)
	for i := range f.Switches {
		n.addNode(f.Switches[i].Name, false)
	}
	for i := range f.Hosts {
		n.addNode(f.Hosts[i].Name, true)
	}
	for li, l := range f.Links {
		if err := n.addLink(f, li, l); err != nil {
			return nil, err
		}
	}
	return n, nil
}

func (n *Network) policy(pol *intent.Policy) {
	n.mtuPayload = pol.RoCEPathMTU
	if n.mtuPayload <= 0 {
		n.mtuPayload = intent.DefaultRoCEPathMTU
	}
	n.cnpPrio = pol.RoCE.CNPPriority
	if c := pol.CNPClass(); c != nil {
		n.cnpPrio = c.Priority
	}
	for _, c := range pol.Classes {
		if c.Priority < 0 || c.Priority > 7 {
			continue
		}
		cc := classCfg{used: true, lossless: c.Lossless, strict: c.Strict, weight: c.Weight, name: c.Name, pos: c.Pos}
		if c.ECN != nil {
			cc.ecn = true
			cc.kmin, cc.kmax = c.ECN.MinBytes, c.ECN.MaxBytes
			cc.pmax = float64(c.ECN.Probability) / 100
		}
		n.classes[c.Priority] = cc
	}
	if !n.classes[n.cnpPrio].used {
		n.classes[n.cnpPrio] = classCfg{used: true, strict: true, name: "cnp"}
	}
}

func (n *Network) addNode(name string, host bool) *node {
	nd := &node{name: name, host: host, idx: len(n.nodes)}
	n.nodes = append(n.nodes, nd)
	n.byName[name] = nd
	return nd
}

// linkEnd is what the intent says about one end of a link.
type linkEnd struct {
	node  *node
	name  string
	speed int64
	cable float64
	sw    *intent.Switch
	port  *intent.Port
	host  *intent.Host
	nic   *intent.NIC
	pos   intent.Pos
	path  string
}

func (n *Network) end(f *intent.Fabric, e intent.Endpoint) (linkEnd, error) {
	nd := n.byName[e.Node]
	if nd == nil {
		return linkEnd{}, fmt.Errorf("link end %s: no switch or host %q", e, e.Node)
	}
	le := linkEnd{node: nd, name: e.Port}
	if sw := f.Switch(e.Node); sw != nil {
		p := sw.Port(e.Port)
		if p == nil {
			return linkEnd{}, fmt.Errorf("link end %s: switch %s has no port %q", e, sw.Name, e.Port)
		}
		le.sw, le.port, le.speed, le.cable, le.pos = sw, p, p.Speed, p.CableMeters, p.Pos
		le.path = fmt.Sprintf("inventory.switches[%s].ports[%s]", sw.Name, p.Name)
		return le, nil
	}
	h := f.Host(e.Node)
	for i, nic := range h.NICs {
		if nic.Interface == e.Port {
			le.host, le.nic = h, &h.NICs[i]
			le.speed, le.cable, le.pos = nic.Speed, nic.CableMeters, nic.Pos
			le.path = fmt.Sprintf("inventory.hosts[%s].nics[%s]", h.Name, nic.Interface)
			return le, nil
		}
	}
	return linkEnd{}, fmt.Errorf("link end %s: host %s has no NIC %q", e, h.Name, e.Port)
}

func (n *Network) addLink(f *intent.Fabric, li int, l intent.Link) error {
	a, err := n.end(f, l.A)
	if err != nil {
		return fmt.Errorf("%s: %w", l.Pos, err)
	}
	b, err := n.end(f, l.B)
	if err != nil {
		return fmt.Errorf("%s: %w", l.Pos, err)
	}
	if a.node.host && b.node.host {
		return nil
	}
	// the switch side says the speed and the cable (headroom is computed from it)
	speed, cable := a.speed, a.cable
	if a.sw == nil || speed == 0 {
		speed, cable = b.speed, b.cable
	}
	if speed == 0 {
		speed = max(a.speed, b.speed)
	}
	if speed <= 0 {
		return fmt.Errorf("%s: link %s - %s: no speed on either end", l.Pos, l.A, l.B)
	}
	nicLink := a.sw == nil || b.sw == nil
	pa := n.newPort(f, a, b, nicLink, speed, cable, li)
	pb := n.newPort(f, b, a, nicLink, speed, cable, li)
	pa.peer, pb.peer = pb, pa
	return nil
}

// newPort makes one end of a link. Between two switches the delay to the
// peer is the cable's propagation (5 ns/m) plus one interface delay as the
// IEEE 802.1Qbb model counts it (intent.HeadroomIEEE's "2 x interface
// delay" term, halved), and a port answers a pause in PauseQuanta: the
// simulated pause loop has every term the switches' headroom models add.
//
// On a link to a host NIC (nicLink) the loop of the NIC's pause is the
// NIC's own: a ConnectX NIC reserves calculate_xoff's headroom (mlx5
// en/port_buffer.c, portfacts.MLX5.Xoff: (301 + 2.16 x cable) B per Gb/s
// + 2.72 MTU) above its XOFF threshold (update_xoff_threshold: xoff
// threshold = size - xoff): it counts on its link partner stopping within
// 301 B per Gb/s of line rate (2,408 ns at 40G and above, the speed
// floored at 40G) plus the cable. That is what the NIC programs; IEEE's
// interface delays (122,880 bit times per end at 100G) are worst-case
// bounds, and with both of them and a PauseQuanta response no ConnectX
// headroom would hold at 100G (59,562 B against 55,815 B at 3 m). So the
// NIC's pause reaches the switch after the cable's propagation, and the
// switch port answers it within what the NIC's budget leaves after its own
// interface delay (portfacts.MLX5PeerBudget), when its PauseQuanta
// response is longer. The switch's pause to the NIC keeps the IEEE loop
// its headroom models assume.
func (n *Network) newPort(f *intent.Fabric, e, peer linkEnd, nicLink bool, speed int64, cable float64, li int) *port {
	p := &port{n: e.node, name: e.name, idx: len(n.ports), bps: float64(speed), sendMask: 0xFF, honourMask: 0xFF}
	p.psByte = 8e12 / p.bps
	in := intent.HeadroomInput{Speed: speed, CableMeters: cable, MTU: f.Policy.MTU}
	if e.port != nil {
		in.MTU = f.PortMTU(*e.port)
	}
	var ifDelayBytes float64
	for _, t := range intent.HeadroomIEEE(in).Terms {
		if t.Name == "2 x interface delay" {
			ifDelayBytes = t.Bytes / 2
		}
	}
	p.delay = Time(math.Round(cable*5000)) + Time(math.Round(ifDelayBytes*p.psByte))
	p.quantum = Time(math.Round(512 * 1e12 / p.bps))
	p.resp = Time(intent.PauseQuanta(speed)) * p.quantum
	p.ctrlDelay = p.delay
	if nicLink && e.sw == nil {
		p.ctrlDelay = Time(math.Round(cable * 5000))
	}
	if nicLink && e.sw != nil {
		ifDelay := p.delay - Time(math.Round(cable*5000))
		p.resp = min(p.resp, max(Time(portfacts.MLX5PeerBudget(speed).Nanoseconds())*Nanosecond-ifDelay, 0))
	}
	p.factsXOFF = -1
	if e.sw != nil {
		// The port's derived facts (portfacts): the headroom the
		// compilers program, in the switch's buffer cells, and the XOFF
		// point check reports; the link's speed and cable where the port
		// has none of its own.
		port := *e.port
		if port.Speed <= 0 {
			port.Speed = speed
		}
		if port.CableMeters <= 0 {
			port.CableMeters = cable
		}
		sf := n.swFacts[e.sw]
		if sf == nil {
			sf = portfacts.SwitchOf(f, e.sw)
			n.swFacts[e.sw] = sf
		}
		pf := sf.Port(f, port)
		p.headroom = pf.Headroom.Occupied
		for _, l := range pf.Lossless {
			if l.XOFF >= 0 && (p.factsXOFF < 0 || l.XOFF < p.factsXOFF) {
				p.factsXOFF = l.XOFF
			}
		}
		p.buffer = e.sw.BufferBytes
		p.wdAction = sf.Watchdog.Action
		// Which priorities the port sends and honours pause on, as the
		// mode has the compilers program them.
		p.sendMask, p.honourMask = sf.PFCSend, sf.PFCHonour
	} else {
		// a NIC computes its own: mlx5's calculate_xoff with the cable
		// and MTU host plan gives the driver (portfacts.NIC.Headroom).
		// (end gives every host end its NIC)
		p.headroom = portfacts.NICOn(f, e.host, *e.nic, peer.sw, peer.port).Headroom
	}
	n.ports = append(n.ports, p)
	e.node.ports = append(e.node.ports, p)
	n.portInfo[p] = portInfo{pos: e.pos, path: e.path, link: li}
	return p
}

// route returns the egress ports from src's NIC to dst: shortest paths over
// switches (hosts never forward), ECMP among equal next hops by a hash of
// the flow id and the seed. On a two-tier Clos this is up-down routing.
func (n *Network) route(src, dst *node, id int, seed int64) ([]*port, error) {
	if n.dist == nil {
		n.dist = map[*node]map[*node]int{}
	}
	dist := n.dist[dst]
	if dist == nil {
		dist = n.distances(dst)
		n.dist[dst] = dist
	}
	var path []*port
	cur := src
	for cur != dst {
		var cands []*port
		best := math.MaxInt
		for _, p := range cur.ports {
			if p.down || p.peer == nil || p.peer.down {
				continue
			}
			nb := p.peer.n
			if nb.host && nb != dst {
				continue
			}
			d, ok := dist[nb]
			if !ok {
				continue
			}
			if d < best {
				best, cands = d, cands[:0]
			}
			if d == best {
				cands = append(cands, p)
			}
		}
		if len(cands) == 0 || cur.host && len(path) > 0 {
			return nil, fmt.Errorf("no path from %s to %s", src.name, dst.name)
		}
		pick := cands[0]
		if len(cands) > 1 {
			h := fnv.New64a()
			fmt.Fprintf(h, "%d/%d/%s", seed, id, cur.name)
			pick = cands[h.Sum64()%uint64(len(cands))]
		}
		path = append(path, pick)
		cur = pick.peer.n
		if len(path) > len(n.nodes) {
			return nil, fmt.Errorf("routing loop from %s to %s", src.name, dst.name)
		}
	}
	return path, nil
}

// distances is a BFS from dst over up links; hosts other than dst are not transit.
func (n *Network) distances(dst *node) map[*node]int {
	dist := map[*node]int{dst: 0}
	queue := []*node{dst}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur.host && cur != dst {
			continue
		}
		for _, p := range cur.ports {
			if p.down || p.peer == nil || p.peer.down {
				continue
			}
			nb := p.peer.n
			if _, ok := dist[nb]; !ok {
				dist[nb] = dist[cur] + 1
				queue = append(queue, nb)
			}
		}
	}
	return dist
}

// pathVia is the egress ports along the given node names (src first, dst last).
func (n *Network) pathVia(names []string) ([]*port, error) {
	var path []*port
	for i := 0; i+1 < len(names); i++ {
		a, b := n.byName[names[i]], n.byName[names[i+1]]
		if a == nil || b == nil {
			return nil, fmt.Errorf("path %v: unknown node %q", names, map[bool]string{true: names[i], false: names[i+1]}[a == nil])
		}
		if i > 0 && a.host {
			return nil, fmt.Errorf("path %v: %s is a host in the middle of the path (hosts do not forward)", names, a.name)
		}
		var pick *port
		for _, p := range a.ports {
			if p.peer != nil && p.peer.n == b && !p.down {
				pick = p
				break
			}
		}
		if pick == nil {
			return nil, fmt.Errorf("path %v: no working link %s - %s", names, a.name, b.name)
		}
		path = append(path, pick)
	}
	return path, nil
}

// reverse is the way back along path (for CNPs): the peer ports in reverse order.
func reverse(path []*port) []*port {
	out := make([]*port, len(path))
	for i, p := range path {
		out[len(path)-1-i] = p.peer
	}
	return out
}

// hostNames returns the hosts that have a link, sorted by name.
func (n *Network) hostNames() []string {
	var out []string
	for _, nd := range n.nodes {
		if nd.host && len(nd.ports) > 0 {
			out = append(out, nd.name)
		}
	}
	sort.Slice(out, func(i, j int) bool { return naturalLess(out[i], out[j]) })
	return out
}

// naturalLess orders names with numbers by value: h2 before h10.
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
