package sim

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fabricctl/fabricctl/intent"
)

// MaxAllToAllHosts bounds the hosts of a generated all-to-all (its flows
// grow with the square); a scenario file can name any flows.
const MaxAllToAllHosts = 64

// Scenario is the traffic of a run and what is broken in the fabric.
type Scenario struct {
	Name     string
	Flows    []FlowSpec
	Slow     map[string]float64 // host -> drain rate in percent of its line rate
	LinkDown [][2]string        // node pairs whose links are down for the whole run
	Duration time.Duration      // 0 = the caller's
	Seed     int64              // 0 = the caller's
	// Hosts is how many hosts the scenario needs; when the intent has fewer
	// linked hosts, the run uses a synthetic star (one switch) instead.
	Hosts int
	// Class is the class of the flows the scenario makes up ("" = the first
	// lossless class); flows of a file name their own.
	Class string
	// Size is the payload of each generated flow (0 = send for the whole
	// run); with a size, the flow's completion time is reported.
	Size int64
	spec string
}

// FlowSpec is one flow of a scenario.
type FlowSpec struct {
	From, To string
	Class    string // class name; "" = the RoCE class (the first lossless, else the one with ECN)
	Size     int64  // payload bytes; 0 = send for the whole run
	Start    time.Duration
	Path     []string // node names from From to To; nil = ECMP shortest paths
	Pos      intent.Pos
}

// ParseSpec reads a scenario: "incast:N:1", "alltoall", "slow-receiver:PCT"
// (a 4:1 incast into a receiver that drains at PCT % of line rate; 0 never
// drains), "link-down:A-B" (all-to-all with the links between A and B down)
// or the name of a YAML scenario file.
func ParseSpec(spec string) (*Scenario, error) {
	kind, arg, _ := strings.Cut(spec, ":")
	sc := &Scenario{Name: spec, spec: kind}
	switch kind {
	case "incast":
		a, b, ok := strings.Cut(arg, ":")
		n, err := strconv.Atoi(a)
		if !ok || b != "1" || err != nil || n < 1 || n > 4096 {
			return nil, fmt.Errorf("scenario %q: want incast:N:1 with N 1-4096", spec)
		}
		sc.Hosts = n + 1
	case "alltoall":
		if arg != "" {
			return nil, fmt.Errorf("scenario %q: alltoall takes no argument", spec)
		}
		sc.Hosts = 2
	case "slow-receiver":
		pct, err := intent.ParsePercent(arg)
		if err != nil || pct < 0 || pct > 100 {
			return nil, fmt.Errorf("scenario %q: want slow-receiver:PCT with PCT 0-100 (%% of line rate the receiver drains)", spec)
		}
		sc.Hosts = 5
		sc.Slow = map[string]float64{"": pct}
	case "link-down":
		if arg == "" {
			return nil, fmt.Errorf("scenario %q: want link-down:A-B (two switch names)", spec)
		}
		sc.LinkDown = [][2]string{{arg, ""}} // split once the node names are known
		sc.Hosts = 2
	default:
		if strings.HasSuffix(spec, ".yaml") || strings.HasSuffix(spec, ".yml") {
			data, err := os.ReadFile(spec)
			if err != nil {
				return nil, fmt.Errorf("scenario: %w", err)
			}
			return ParseScenarioYAML(spec, data)
		}
		return nil, fmt.Errorf("unknown scenario %q: want incast:N:1, alltoall, slow-receiver:PCT, link-down:A-B or a .yaml file", spec)
	}
	return sc, nil
}

type yamlFlow struct {
	From  string   `yaml:"from"`
	To    string   `yaml:"to"`
	Class string   `yaml:"class"`
	Size  string   `yaml:"size"`
	Start string   `yaml:"start"`
	Path  []string `yaml:"path"`
	line  int
	col   int
}

func (y *yamlFlow) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			switch k := n.Content[i]; k.Value {
			case "from", "to", "class", "size", "start", "path":
			default:
				return fmt.Errorf("line %d: unknown flow key %q (want from, to, class, size, start, path)", k.Line, k.Value)
			}
		}
	}
	type plain yamlFlow
	var p plain
	d := *n
	if err := d.Decode(&p); err != nil {
		return err
	}
	*y = yamlFlow(p)
	y.line, y.col = n.Line, n.Column
	return nil
}

type yamlScenario struct {
	Name          string            `yaml:"name"`
	Duration      string            `yaml:"duration"`
	Seed          int64             `yaml:"seed"`
	Flows         []yamlFlow        `yaml:"flows"`
	SlowReceivers map[string]string `yaml:"slowReceivers"`
	LinkDown      [][]string        `yaml:"linkDown"`
}

// ParseScenarioYAML reads a scenario file:
//
//	name: ring
//	duration: 2ms
//	seed: 7
//	flows:
//	  - {from: h1, to: h3, class: roce, size: 1MB, start: 10us, path: [h1, leaf1, leaf2, leaf3, h3]}
//	slowReceivers: {h3: 50%}
//	linkDown: [[leaf1, spine1]]
func ParseScenarioYAML(name string, data []byte) (*Scenario, error) {
	var y yamlScenario
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&y); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	sc := &Scenario{Name: y.Name, Seed: y.Seed, Slow: map[string]float64{}, spec: "file"}
	if sc.Name == "" {
		sc.Name = name
	}
	if y.Duration != "" {
		d, err := intent.ParseDuration(y.Duration)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%s: duration %q: want a positive duration such as 2ms", name, y.Duration)
		}
		sc.Duration = d
	}
	if len(y.Flows) == 0 {
		return nil, fmt.Errorf("%s: no flows", name)
	}
	for _, yf := range y.Flows {
		at := fmt.Sprintf("%s:%d:%d", name, yf.line, yf.col)
		if yf.From == "" || yf.To == "" || yf.From == yf.To {
			return nil, fmt.Errorf("%s: a flow needs from and to, two different hosts", at)
		}
		fs := FlowSpec{From: yf.From, To: yf.To, Class: yf.Class, Path: yf.Path, Pos: intent.Pos{File: name, Line: yf.line, Col: yf.col}}
		if yf.Size != "" {
			v, err := intent.ParseSize(yf.Size)
			if err != nil || v <= 0 {
				return nil, fmt.Errorf("%s: size %q: want a positive size such as 1MB", at, yf.Size)
			}
			fs.Size = v
		}
		if yf.Start != "" {
			v, err := intent.ParseDuration(yf.Start)
			if err != nil || v < 0 {
				return nil, fmt.Errorf("%s: start %q: want a duration such as 10us", at, yf.Start)
			}
			fs.Start = v
		}
		if len(fs.Path) > 0 && (fs.Path[0] != fs.From || fs.Path[len(fs.Path)-1] != fs.To) {
			return nil, fmt.Errorf("%s: path must start at %s and end at %s", at, fs.From, fs.To)
		}
		sc.Flows = append(sc.Flows, fs)
	}
	for h, v := range y.SlowReceivers {
		pct, err := intent.ParsePercent(v)
		if err != nil || pct < 0 || pct > 100 {
			return nil, fmt.Errorf("%s: slowReceivers.%s %q: want 0-100%%", name, h, v)
		}
		sc.Slow[h] = pct
	}
	for _, l := range y.LinkDown {
		if len(l) != 2 {
			return nil, fmt.Errorf("%s: linkDown entries are [nodeA, nodeB]", name)
		}
		sc.LinkDown = append(sc.LinkDown, [2]string{l[0], l[1]})
	}
	return sc, nil
}

// StarOptions shape the synthetic star used when the intent has too few hosts.
type StarOptions struct {
	Speed int64   // 0 = the speed of the intent's first switch port, else 100G
	Cable float64 // 0 = that port's cable, else 3 m
}

// Star returns a copy of f's policy with a made-up inventory: one switch
// (the platform, profile and ASIC of f's first switch, else SONiC) with
// hosts h1..hN, one NIC each, on ports p1..pN.
func Star(f *intent.Fabric, hosts int, so StarOptions) *intent.Fabric {
	sw := intent.Switch{Name: "sim-leaf", Platform: intent.PlatformSONiC}
	speed, cable := so.Speed, so.Cable
	if len(f.Switches) > 0 {
		s0 := f.Switches[0]
		sw.Platform, sw.Profile, sw.ASIC, sw.BufferBytes, sw.Pos = s0.Platform, s0.Profile, s0.ASIC, s0.BufferBytes, s0.Pos
		if len(s0.Ports) > 0 {
			if speed == 0 {
				speed = s0.Ports[0].Speed
			}
			if cable == 0 {
				cable = s0.Ports[0].CableMeters
			}
		}
	}
	if speed == 0 {
		speed = 100_000_000_000
	}
	if cable == 0 {
		cable = 3
	}
	out := &intent.Fabric{Name: f.Name, Files: f.Files, Policy: f.Policy, Pos: f.Pos}
	for i := 1; i <= hosts; i++ {
		pn := fmt.Sprintf("p%d", i)
		sw.Ports = append(sw.Ports, intent.Port{Name: pn, Speed: speed, CableMeters: cable, Pos: sw.Pos})
		hn := fmt.Sprintf("h%d", i)
		out.Hosts = append(out.Hosts, intent.Host{Name: hn, NICs: []intent.NIC{{Interface: "eth0", Speed: speed, CableMeters: cable}}})
		out.Links = append(out.Links, intent.Link{A: intent.Endpoint{Node: hn, Port: "eth0"}, B: intent.Endpoint{Node: sw.Name, Port: pn}, Pos: sw.Pos})
	}
	out.Switches = []intent.Switch{sw}
	return out
}

// Build makes the network of sc on f: the intent's own topology when it has
// enough linked hosts, else a synthetic star (Network.Synthetic).
func Build(f *intent.Fabric, sc *Scenario, so StarOptions, seed int64) (*Network, error) {
	n, err := FromIntent(f)
	if err != nil {
		return nil, err
	}
	if seed == 0 {
		seed = DefaultSeed
	}
	if sc.spec != "file" && len(n.hostNames()) < sc.Hosts {
		star := Star(f, sc.Hosts, so)
		had := len(n.hostNames())
		if n, err = FromIntent(star); err != nil {
			return nil, err
		}
		n.Synthetic = true
		sp := star.Switches[0]
		n.Notes = append(n.Notes, fmt.Sprintf("the intent has %d linked hosts, the scenario needs %d: synthetic star of %d hosts on one %s switch, %s ports, %gm cables",
			had, sc.Hosts, sc.Hosts, sp.Platform, intent.FormatRate(sp.Ports[0].Speed), sp.Ports[0].CableMeters))
	}
	if err := n.apply(sc, seed); err != nil {
		return nil, err
	}
	n.scenario = sc.Name
	return n, nil
}

func (n *Network) classPrio(name string) (int, error) {
	if name == "" {
		if ll := n.lossless(); len(ll) > 0 {
			return ll[0], nil
		}
		// a lossy RoCE class (ECN only): intent.Policy.RoCEClass's pick
		if c := n.fabric.Policy.RoCEClass(); c != nil {
			return c.Priority, nil
		}
		if d := n.fabric.Policy.DefaultClass(); d != nil {
			return d.Priority, nil
		}
		return 0, nil
	}
	c := n.fabric.Policy.ClassByName(name)
	if c == nil {
		return 0, fmt.Errorf("no class %q in the policy", name)
	}
	return c.Priority, nil
}

func (n *Network) linkDown(a, b string) error {
	if b == "" { // "A-B" from the command line: find the split into two node names
		for i := range len(a) {
			if a[i] == '-' && n.byName[a[:i]] != nil && n.byName[a[i+1:]] != nil {
				a, b = a[:i], a[i+1:]
				break
			}
		}
		if b == "" {
			return fmt.Errorf("link-down:%s: want two switch names of the fabric joined by '-' (e.g. link-down:leaf1-spine1)", a)
		}
	}
	na, nb := n.byName[a], n.byName[b]
	if na == nil || nb == nil {
		return fmt.Errorf("link-down: unknown node in %s-%s", a, b)
	}
	found := false
	for _, p := range na.ports {
		if p.peer != nil && p.peer.n == nb {
			p.down, p.peer.down, found = true, true, true
		}
	}
	if !found {
		return fmt.Errorf("link-down: no link between %s and %s", a, b)
	}
	return nil
}

func (n *Network) apply(sc *Scenario, seed int64) error {
	for _, l := range sc.LinkDown {
		if err := n.linkDown(l[0], l[1]); err != nil {
			return err
		}
	}
	hosts := n.hostNames()
	specs := sc.Flows
	switch sc.spec {
	case "incast", "slow-receiver":
		senders := sc.Hosts - 1
		dst := hosts[len(hosts)-1]
		for i := range senders {
			specs = append(specs, FlowSpec{From: hosts[i], To: dst, Class: sc.Class, Size: sc.Size})
		}
		if pct, ok := sc.Slow[""]; ok {
			sc.Slow = map[string]float64{dst: pct}
		}
	case "alltoall", "link-down":
		if len(hosts) > MaxAllToAllHosts {
			n.Notes = append(n.Notes, fmt.Sprintf("all-to-all among the first %d of %d hosts (%d flows)", MaxAllToAllHosts, len(hosts), MaxAllToAllHosts*(MaxAllToAllHosts-1)))
			hosts = hosts[:MaxAllToAllHosts]
		}
		for _, a := range hosts {
			for _, b := range hosts {
				if a != b {
					specs = append(specs, FlowSpec{From: a, To: b, Class: sc.Class, Size: sc.Size})
				}
			}
		}
	}
	for h, pct := range sc.Slow {
		nd := n.byName[h]
		if nd == nil || !nd.host || len(nd.ports) == 0 {
			return fmt.Errorf("slow receiver %q: no linked host of that name", h)
		}
		nd.slow = true
		nd.drainBps = nd.ports[0].bps * pct / 100
	}
	for i, fs := range specs {
		if err := n.addFlow(i, fs, seed); err != nil {
			if fs.Pos.Line > 0 {
				return fmt.Errorf("%s: %w", fs.Pos, err)
			}
			return err
		}
	}
	if len(n.flows) == 0 {
		return errors.New("the scenario has no flows")
	}
	return nil
}

func (n *Network) addFlow(id int, fs FlowSpec, seed int64) error {
	src, dst := n.byName[fs.From], n.byName[fs.To]
	if src == nil || !src.host || dst == nil || !dst.host {
		return fmt.Errorf("flow %s -> %s: both ends must be linked hosts of the intent's inventory (it has: %s)", fs.From, fs.To, orNone(n.hostNames()))
	}
	prio, err := n.classPrio(fs.Class)
	if err != nil {
		return fmt.Errorf("flow %s -> %s: %w", fs.From, fs.To, err)
	}
	var path []*port
	if len(fs.Path) > 0 {
		path, err = n.pathVia(fs.Path)
	} else {
		path, err = n.route(src, dst, id, seed)
	}
	if err != nil {
		return fmt.Errorf("flow %s -> %s: %w", fs.From, fs.To, err)
	}
	f := &flow{id: id, src: src, dst: dst, prio: prio, path: path, rpath: reverse(path), size: fs.Size,
		start: Time(fs.Start.Nanoseconds()) * Nanosecond}
	n.flows = append(n.flows, f)
	src.flows = append(src.flows, f)
	return nil
}

func orNone(v []string) string {
	if len(v) == 0 {
		return "none; generated scenarios use a synthetic star"
	}
	return strings.Join(v, ", ")
}
