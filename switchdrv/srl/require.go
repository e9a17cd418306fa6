package srl

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/memo"
	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/switchdrv"
)

// SR Linux's system MTU defaults out of the box (nokia/srlinux-yang-models
// srl_nokia/models/system/srl_nokia-mtu.yang: default-ip-mtu default 1500,
// default-l2-mtu default 9232): a subinterface without its own ip-mtu or
// l2-mtu takes them ("The default IP MTU for a subinterface is taken from
// /system/mtu/default-ip-mtu", srl_nokia-interfaces.yang ip-mtu; l2-mtu
// likewise from default-l2-mtu).
const (
	defaultIPMTU = 1500
	defaultL2MTU = 9232
)

// Paths of the system-wide MTU defaults a subinterface without its own
// takes (srl_nokia-mtu.yang).
var (
	defaultIPMTUPath = &gnmipb.Path{Elem: []*gnmipb.PathElem{{Name: "system"}, {Name: "mtu"}, {Name: "default-ip-mtu"}}}
	defaultL2MTUPath = &gnmipb.Path{Elem: []*gnmipb.PathElem{{Name: "system"}, {Name: "mtu"}, {Name: "default-l2-mtu"}}}
)

// SubinterfacePath is the subinterface of port the DSCP classifier
// attaches to: /interface[name=<port>]/subinterface[index=<sub>]. The path
// is read only: it is shared, as the ports' path elements are (portElem),
// by every switch of the fabric with a port of that name; each made its
// own, their key maps were a fifth of what an in-sync plan allocated
// beyond the read itself.
func SubinterfacePath(port string, sub int) *gnmipb.Path {
	return subinterfacePaths.Get(subinterfaceKey{port, sub}, func() *gnmipb.Path {
		return &gnmipb.Path{Elem: []*gnmipb.PathElem{
			portElem("interface", "name", port),
			portElem("subinterface", "index", strconv.Itoa(sub)),
		}}
	})
}

// subinterfacePaths are the shared subinterface paths, bounded as
// portElems.
var subinterfacePaths = memo.Bounded[subinterfaceKey, *gnmipb.Path]{Max: 1 << 14}

type subinterfaceKey struct {
	port string
	sub  int
}

// requirements are what the payload relies on and does not write: each
// port's subinterface (the classifier's qos interface <port>.<sub> is a
// leafref to it, so without it the switch refuses the whole Set), and an
// MTU on it that carries the intent's packets. A routed subinterface
// forwards IP packets only up to its ip-mtu ("If an IPv4 or IPv6 packet
// exceeds this size it is dropped", srl_nokia-interfaces.yang ip-mtu),
// default /system/mtu/default-ip-mtu (1500); a bridged one frames up to
// its l2-mtu (Ethernet header and VLAN tags included, FCS excluded),
// default /system/mtu/default-l2-mtu (9232). Below the largest RoCE packet
// (intent.Policy.RoCEPacket) RoCE is dropped: plan refuses. Below the
// port's IP MTU only larger packets are: drift, not a refusal.
func requirements(f *intent.Fabric, sw *intent.Switch) []switchdrv.Requirement {
	if len(sw.Ports) == 0 {
		return nil
	}
	reqs := []switchdrv.Requirement{{Path: defaultIPMTUPath}, {Path: defaultL2MTUPath}}
	roce := f.Policy.RoCEPacket()
	for _, port := range sw.Ports {
		name, sub, ipMTU := port.Name, port.Subinterface, f.PortMTU(port)
		reqs = append(reqs, switchdrv.Requirement{Path: SubinterfacePath(name, sub),
			Check: func(v any, ok bool, read func(*gnmipb.Path) (any, bool)) *plan.Lack {
				return subinterfaceLack(name, sub, ipMTU, roce, v, ok, read)
			}})
	}
	return reqs
}

// subinterfaceLack is what port's subinterface sub (value v, ok when it
// exists) lacks for IP MTU ipMTU and RoCE packets of roce bytes, or nil.
func subinterfaceLack(port string, sub, ipMTU, roce int, v any, ok bool, read func(*gnmipb.Path) (any, bool)) *plan.Lack {
	// The texts are made for a lack only: an in-sync plan asks every
	// port and finds none.
	id := func() string { return port + "." + strconv.Itoa(sub) }
	what := func() string { return "port " + port + " subinterface " + strconv.Itoa(sub) }
	if !ok {
		id := id()
		return &plan.Lack{What: what(), Refuses: true,
			Reason: fmt.Sprintf("%s does not exist: the DSCP classifier attaches to it (/qos/interfaces/interface[interface-id=%s]/interface-ref/subinterface is a leafref to it), so the switch would refuse the whole SetRequest", id, id),
			Fix:    fmt.Sprintf("create it (SR Linux CLI: `set / interface %s subinterface %d type routed ip-mtu %d`, with its addresses and network-instance), or name the subinterface the port uses in ports[].subinterface", port, sub, ipMTU)}
	}
	m, _ := v.(map[string]any)
	if stripModule(str(member(m, "type"))) == "bridged" {
		// Frames: the IP packet plus the Ethernet header (and a VLAN tag
		// on a non-zero subinterface), FCS excluded, as /interface/mtu.
		l2, from := number(member(m, "l2-mtu")), "its l2-mtu"
		if l2 == 0 {
			l2, from = defaultL2MTU, "no l2-mtu of its own: /system/mtu/default-l2-mtu, 9232 out of the box"
			if dv, ok := read(defaultL2MTUPath); ok && number(dv) > 0 {
				l2, from = number(dv), "no l2-mtu of its own: /system/mtu/default-l2-mtu"
			}
		}
		need, needRoCE := PortMTU(ipMTU, sub), PortMTU(roce, sub)
		return mtuLack("l2-mtu", "frames", from, l2, need, needRoCE, roce, func() (string, string, string) {
			return what(), id(), fmt.Sprintf("set / interface %s subinterface %d l2-mtu %d", port, sub, need)
		})
	}
	ip, from := number(member(m, "ip-mtu")), "its ip-mtu"
	if ip == 0 {
		ip, from = defaultIPMTU, "no ip-mtu of its own: /system/mtu/default-ip-mtu, 1500 out of the box"
		if dv, ok := read(defaultIPMTUPath); ok && number(dv) > 0 {
			ip, from = number(dv), "no ip-mtu of its own: /system/mtu/default-ip-mtu"
		}
	}
	return mtuLack("ip-mtu", "IP packets", from, ip, ipMTU, roce, roce, func() (string, string, string) {
		return what(), id(), fmt.Sprintf("set / interface %s subinterface %d ip-mtu %d", port, sub, ipMTU)
	})
}

// mtuLack compares a subinterface's MTU have (taken from where) with the
// intent's need and the RoCE packets' needRoCE (roce bytes of IP); texts
// gives the lack's subject, the subinterface's name and the CLI command
// that fixes it, asked only for a lack.
func mtuLack(leaf, unit, from string, have, need, needRoCE, roce int, texts func() (what, id, cli string)) *plan.Lack {
	switch {
	case have < needRoCE:
		what, id, cli := texts()
		return &plan.Lack{What: what, Refuses: true,
			Reason: fmt.Sprintf("%s carries %s of up to %d B (%s), below the RoCE packets of up to %d B (rocePathMTU + %d B of RoCEv2 headers): the switch drops RoCE traffic routed through %s", id, unit, have, from, roce, intent.RoCEOverhead, id),
			Fix:    fmt.Sprintf("set its %s to the port's %d (SR Linux CLI: `%s`)", leaf, need, cli)}
	case have < need:
		what, id, cli := texts()
		return &plan.Lack{What: what,
			Reason: fmt.Sprintf("%s carries %s of up to %d B (%s), below the %d B the intent's MTU needs: larger packets are dropped (RoCE's, up to %d B, pass)", id, unit, have, from, need, roce),
			Fix:    fmt.Sprintf("set its %s to %d (SR Linux CLI: `%s`)", leaf, need, cli)}
	}
	return nil
}

// member is m's member name, unqualified or with a module prefix (a target
// may qualify members RFC 7951 leaves unqualified).
func member(m map[string]any, name string) any {
	if v, ok := m[name]; ok {
		return v
	}
	for k, v := range m {
		if _, after, ok := strings.Cut(k, ":"); ok && after == name {
			return v
		}
	}
	return nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// stripModule drops an identity's module prefix (srl_nokia-interfaces:routed).
func stripModule(s string) string {
	if _, after, ok := strings.Cut(s, ":"); ok {
		return after
	}
	return s
}

// number reads a uint16 leaf as RFC 7951 JSON carries it (a number; some
// targets send a string); 0 when it is neither.
func number(v any) int {
	switch n := v.(type) {
	case json.Number:
		i, _ := strconv.Atoi(n.String())
		return i
	case float64:
		return int(n)
	case int:
		return n
	case int64:
		return int(n)
	case string:
		i, _ := strconv.Atoi(n)
		return i
	}
	return 0
}

// OperatorInterface is the configuration of port the intent relies on and
// fabricctl does not write, as RFC 7951 JSON of
// /srl_nokia-interfaces:interface[name=<port>]: an enabled interface with
// the routed subinterface its classifier attaches to (ports[].subinterface)
// and ip-mtu the port's IP MTU, which plan checks (requirements). A real
// fabric's startup configuration creates it, with addresses; the lab's and
// the tests' twins are seeded with it.
func OperatorInterface(f *intent.Fabric, port intent.Port) map[string]any {
	return map[string]any{"name": port.Name, "admin-state": "enable", "subinterface": []any{
		map[string]any{"index": port.Subinterface, "type": "srl_nokia-interfaces:routed", "admin-state": "enable", "ip-mtu": f.PortMTU(port)}}}
}
