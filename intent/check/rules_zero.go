// FC133: a speed or cable written as zero.

package check

import (
	"fmt"
	"strings"

	"github.com/fabricctl/fabricctl/intent"
)

// The unit grammar spells zero (speed: 0G, cable: 0m) and the parser takes
// it, but no command can use it. Every derived number starts from a port's
// speed and cable (intent/headroom.go: the IEEE model's 2 x 5 ns/m x length
// x rate on the cable, SONiC's bytes on cable, mlx5's 2.16 x length x
// speed), and the commands disagree on what a zero means: check leaves a
// port of speed 0 out of FC112 and computes a 0 m port's headroom without
// the cable, the compilers program that headroom, simulate replaces either
// by its link's (internal/sim), and host plan reads a NIC's zero as not
// given (portfacts.NICOn, mlx5's own cable kept). So zero is refused, as
// the --speed and --cable flags refuse it (cmd/fabricctl parseSpeedFlag,
// parseCableFlag), in their words: "no line rate", "no length".
//
// A zero cable is not a short DAC rounded down: the grammar writes lengths
// below a metre (0.5m, 50cm), and at 0.5 m the cable term of the IEEE
// model is 2 x 5 ns x 0.5 x 400 Gb/s = 250 B, which a zero leaves out;
// the longer the written-as-zero cable really is, the more (3 KB at 3 m,
// 100 KB at 100 m), and headroom that is short drops lossless traffic.
// SONiC's CABLE_LENGTH would be written 0m (switchdrv/sonic writes the
// length rounded up to whole metres).

// zeroSpeedWords and zeroCableWords are the flags' words.
const (
	zeroSpeedWords = "no line rate; want one such as 100G or 400G"
	zeroCableWords = "no length; want one such as 3m or 100m"
)

// FC133
func (c *checker) zeroSpeedCable() {
	for i := range c.f.Switches {
		sw := &c.f.Switches[i]
		var zeroSpeed, zeroCable []*intent.Port
		for j := range sw.Ports {
			p := &sw.Ports[j]
			if p.Speed <= 0 {
				zeroSpeed = append(zeroSpeed, p)
			}
			if p.CableMeters <= 0 {
				zeroCable = append(zeroCable, p)
			}
		}
		if len(zeroSpeed) > 0 {
			c.zeroPorts(sw, zeroSpeed, "speed", "speed 0: "+zeroSpeedWords+
				" (every command derives the port's PFC headroom, XOFF point and ECN room from it; check cannot size its headroom, FC112)")
		}
		if len(zeroCable) > 0 {
			c.zeroPorts(sw, zeroCable, "cable", "cable 0m: "+zeroCableWords+
				" (the PFC headroom counts what is in flight on the cable, 2 x 5 ns/m x length x rate: a zero leaves it out, and a port shorter than 1 m is written 0.5m or 50cm)")
		}
	}
	for i := range c.f.Hosts {
		h := &c.f.Hosts[i]
		for j := range h.NICs {
			n := &h.NICs[j]
			zs := n.Speed <= 0 && n.Fields.Has("speed")
			zc := n.CableMeters <= 0 && n.Fields.Has("cable")
			if !zs && !zc {
				continue
			}
			// What the NIC is taken at: its switch port's (linkedNIC).
			peer := c.linkedNIC(h, intent.NIC{Interface: n.Interface})
			path := fmt.Sprintf("inventory.hosts[%s].nics[%s].", h.Name, n.Interface)
			if zs {
				fix := "write the NIC's line rate, e.g. speed: 400G, or leave speed out to take its switch port's"
				var edits []Edit
				if peer.Speed > 0 {
					v := intent.FormatRate(peer.Speed)
					fix = "write its switch port's speed: speed: " + v + " (what leaving speed out reads as)"
					edits = []Edit{set(path+"speed", v)}
				}
				c.report(Error, pos(n.Pos, h.Pos), path+"speed", fix,
					"host %s, NIC %s: speed 0: %s (a NIC without a speed takes its switch port's; zero says neither)", h.Name, n.Interface, zeroSpeedWords).with(edits...)
			}
			if zc {
				fix := "write the NIC's cable length, e.g. cable: 3m, or leave cable out to keep the driver's own"
				var edits []Edit
				if peer.CableMeters > 0 {
					v := trimFloat(peer.CableMeters) + "m"
					fix = "write its switch port's cable: cable: " + v + " (host plan writes it as mlx5's PFC cable length)"
					edits = []Edit{set(path+"cable", v)}
				}
				c.report(Error, pos(n.Pos, h.Pos), path+"cable", fix,
					"host %s, NIC %s: cable 0m: %s (host plan would leave mlx5's own cable length, which sizes the NIC's headroom)", h.Name, n.Interface, zeroCableWords).with(edits...)
			}
		}
	}
}

// zeroPorts reports ports, sw's ports whose key (speed or cable) is zero,
// as one finding. The fix gives each the value of its link's other end
// when every one of them has such an end with a value (FC124 would
// otherwise find the ends disagreeing); otherwise a person says it.
func (c *checker) zeroPorts(sw *intent.Switch, ports []*intent.Port, key, what string) {
	p := ports[0]
	subject := "port " + p.Name
	if len(ports) > 1 {
		subject = fmt.Sprintf("%d ports %s..%s", len(ports), p.Name, ports[len(ports)-1].Name)
	}
	edits := make([]Edit, 0, len(ports))
	var values []string
	for _, q := range ports {
		s, l, ok := c.peersOf(sw)[q].speedCable()
		v := ""
		switch {
		case !ok:
		case key == "speed" && s > 0:
			v = intent.FormatRate(s)
		case key == "cable" && l > 0:
			v = trimFloat(l) + "m"
		}
		if v == "" {
			edits = nil
			break
		}
		edits = append(edits, set(portPath(sw, q)+"."+key, v))
		if len(values) == 0 || values[len(values)-1] != v {
			values = append(values, v)
		}
	}
	var fix string
	switch {
	case edits == nil && key == "speed":
		fix = "write the port's line rate, e.g. speed: 400G (on the port or in portDefaults)"
	case edits == nil:
		fix = "write the cable's length, e.g. cable: 3m (on the port or in portDefaults; left out, it is 100m, NVIDIA's assumption)"
	case len(values) == 1:
		fix = fmt.Sprintf("write the %s of the link's other end: %s: %s", key, key, values[0])
	default:
		fix = fmt.Sprintf("write on each port the %s of its link's other end (%s)", key, strings.Join(values, ", "))
	}
	c.report(Error, pos(p.Pos, sw.Pos), portPath(sw, p)+"."+key, fix,
		"switch %s, %s: %s", sw.Name, subject, what).with(edits...)
}
