// Package applied reads back what each switch holds of its QoS
// configuration, over gNMI with the read plan and diff use
// (switchdrv.Engine.ReadBack: the owned paths of the platform's payload,
// one Get), and decodes it per platform into the simulator's per-port
// configuration (sim.PortConfig): per priority PFC, WRED-ECN of the egress
// queue, headroom and static XOFF of the ingress priority group, and the
// port's IP MTU. The simulator then runs traffic through what apply
// actually left on the switches, not through the intent.
//
// API (used by `fabricctl lab --traffic` and `validate --engine sim`):
//
//	Read(ctx, f, eng) (map[string]*Switch, error)     every switch of f
//	ReadSwitch(ctx, f, sw, eng) (*Switch, error)       one switch
//	Configure(n *sim.Network, sws) error               SetPortConfig per linked port
//	Network(ctx, f, sc, seed, eng) (*sim.Network, map[string]*Switch, error)
//
// Where each field comes from, per platform, and the compiler in switchdrv
// that writes it (a test compiles the examples, applies them to twins,
// reads them back and gets portfacts' figures per port): see sonic.go,
// srl.go, eos.go and oc.go.
//
// Every figure is in bytes as the simulator takes it: a headroom is
// rounded up to the switch's buffer cell (portfacts.Switch.CellBytes), as
// the ASIC occupies it and portfacts' Headroom.Occupied counts it.
package applied

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/portfacts"
	"github.com/fabricctl/fabricctl/internal/sim"
	"github.com/fabricctl/fabricctl/switchdrv"
)

// Switch is one switch's QoS configuration as read back.
type Switch struct {
	Name     string
	Platform intent.Platform
	// Ports holds every inventory port's configuration, by port name.
	Ports map[string]sim.PortConfig
	// Notes say what the platform's model cannot tell (e.g. OpenConfig
	// has no PFC model) and which figures come from the intent instead.
	Notes []string
}

// Read reads every switch of f back over eng (its Registry and Transport;
// the engine's connections are reused), at most eng.Parallel at once.
func Read(ctx context.Context, f *intent.Fabric, eng *switchdrv.Engine) (map[string]*Switch, error) {
	out := make([]*Switch, len(f.Switches))
	g, gctx := errgroup.WithContext(ctx)
	limit := eng.Parallel
	if limit <= 0 {
		limit = 8 // the engine's own default
	}
	g.SetLimit(limit)
	for i := range f.Switches {
		g.Go(func() error {
			s, err := ReadSwitch(gctx, f, &f.Switches[i], eng)
			out[i] = s
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	m := make(map[string]*Switch, len(out))
	for _, s := range out {
		m[s.Name] = s
	}
	return m, nil
}

// ReadSwitch reads sw back and decodes it for its platform.
func ReadSwitch(ctx context.Context, f *intent.Fabric, sw *intent.Switch, eng *switchdrv.Engine) (*Switch, error) {
	rb, err := eng.ReadBack(ctx, f, sw)
	if err != nil {
		return nil, err
	}
	d := &decoder{ctx: ctx, f: f, sw: sw, rb: rb, facts: portfacts.SwitchOf(f, sw)}
	s := &Switch{Name: sw.Name, Platform: sw.Platform, Ports: map[string]sim.PortConfig{}}
	for _, p := range sw.Ports {
		var pc sim.PortConfig
		for prio := range pc.Prio {
			pc.Prio[prio].XOFF = -1
		}
		var err error
		switch sw.Platform {
		case intent.PlatformSONiC:
			err = d.sonic(p, &pc)
		case intent.PlatformSRLinux:
			err = d.srl(p, &pc)
		case intent.PlatformEOS:
			err = d.eos(p, &pc, &s.Notes)
		case intent.PlatformOpenConfig:
			err = d.oc(p, &pc, &s.Notes)
		default:
			err = fmt.Errorf("no read-back decoder for platform %q", sw.Platform)
		}
		if err != nil {
			return nil, fmt.Errorf("switch %s port %s: %w", sw.Name, p.Name, err)
		}
		s.Ports[p.Name] = pc
	}
	s.Notes = dedupe(s.Notes)
	return s, nil
}

// Configure gives every linked port of n that sws read its configuration
// (a port the network does not have, unlinked in the intent, is skipped).
func Configure(n *sim.Network, sws map[string]*Switch) error {
	names := make([]string, 0, len(sws))
	for name := range sws {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s := sws[name]
		ports := make([]string, 0, len(s.Ports))
		for p := range s.Ports {
			ports = append(ports, p)
		}
		sort.Strings(ports)
		for _, p := range ports {
			if _, ok := n.PortConfigOf(name, p); !ok {
				continue
			}
			if err := n.SetPortConfig(name, p, s.Ports[p]); err != nil {
				return err
			}
		}
	}
	return nil
}

// Network builds the simulator's network of scenario sc on f's own
// topology (the intent's switches, hosts and links) with every switch
// port's configuration read back from the switch. It refuses a scenario
// that needs more linked hosts than the intent has: the switches read
// back are the intent's, not a synthetic star's.
func Network(ctx context.Context, f *intent.Fabric, sc *sim.Scenario, seed int64, eng *switchdrv.Engine) (*sim.Network, map[string]*Switch, error) {
	sws, err := Read(ctx, f, eng)
	if err != nil {
		return nil, nil, err
	}
	n, err := sim.Build(f, sc, sim.StarOptions{}, seed)
	if err != nil {
		return nil, nil, err
	}
	if n.Synthetic {
		return nil, nil, fmt.Errorf("scenario %s: %s; traffic through the switches read back needs the intent's own hosts and links (inventory.hosts, inventory.links)", sc.Name, strings.Join(n.Notes, "; "))
	}
	if err := Configure(n, sws); err != nil {
		return nil, nil, err
	}
	return n, sws, nil
}

// decoder reads one switch's ports.
type decoder struct {
	ctx   context.Context
	f     *intent.Fabric
	sw    *intent.Switch
	rb    *switchdrv.ReadBack
	facts *portfacts.Switch
}

// cells rounds b up to the switch's buffer cell.
func (d *decoder) cells(b int64) int64 {
	if c := d.facts.CellBytes; c > 0 && b%c != 0 {
		b += c - b%c
	}
	return b
}

// num reads a JSON number or a decimal string.
func num(v any) (int64, bool) {
	switch t := v.(type) {
	case float64:
		return int64(t), true
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
		return n, err == nil
	case interface{ String() string }: // json.Number
		n, err := strconv.ParseInt(t.String(), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// str reads a JSON string member of m.
func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// obj reads an object member of m.
func obj(m map[string]any, k string) map[string]any {
	o, _ := m[k].(map[string]any)
	return o
}

// list reads a list member of m as its objects.
func list(m map[string]any, k string) []map[string]any {
	var out []map[string]any
	switch t := m[k].(type) {
	case []any:
		for _, e := range t {
			if o, ok := e.(map[string]any); ok {
				out = append(out, o)
			}
		}
	case map[string]any: // a single entry
		out = append(out, t)
	}
	return out
}

// wredECN reads WRED-ECN from an object with the leaves SR Linux's
// wred-slope and OpenConfig's wred uniform config both have:
// min-threshold and max-threshold (bytes) and max-drop-probability-percent;
// what names the object in the error when one is missing.
func wredECN(m map[string]any, what string) (*sim.ECNConfig, error) {
	mn, ok1 := num(m["min-threshold"])
	mx, ok2 := num(m["max-threshold"])
	pr, ok3 := num(m["max-drop-probability-percent"])
	if !ok1 || !ok2 || !ok3 {
		return nil, fmt.Errorf("%s without min-threshold, max-threshold or max-drop-probability-percent", what)
	}
	return &sim.ECNConfig{MinBytes: mn, MaxBytes: mx, Probability: int(pr)}, nil
}

// Notes are the read-back notes of every switch in sws, in switch name
// order, each once.
func Notes(sws map[string]*Switch) []string {
	names := make([]string, 0, len(sws))
	for n := range sws {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []string
	for _, n := range names {
		out = append(out, sws[n].Notes...)
	}
	return dedupe(out)
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
