package applied

import (
	"fmt"
	"strconv"
	"strings"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/sim"
)

// srlGet reads a path of SR Linux's native models (no origin).
func (d *decoder) srlGet(elems ...*gnmipb.PathElem) (map[string]any, error) {
	v, ok, err := d.rb.Lookup(d.ctx, &gnmipb.Path{Elem: elems})
	if err != nil || !ok {
		return nil, err
	}
	m, _ := v.(map[string]any)
	return m, nil
}

func el(name string, kv ...string) *gnmipb.PathElem {
	e := &gnmipb.PathElem{Name: name}
	if len(kv) == 2 {
		e.Key = map[string]string{kv[0]: kv[1]}
	}
	return e
}

// prios reads pfc-pause-frame-priority: a uint8 leaf (SR Linux 25.3) or a
// leaf-list (earlier releases; profile Shapes.PFCPauseFramePriority).
func prios(v any) []int {
	var out []int
	switch t := v.(type) {
	case []any:
		for _, e := range t {
			if n, ok := num(e); ok {
				out = append(out, int(n))
			}
		}
	default:
		if n, ok := num(t); ok {
			out = append(out, int(n))
		}
	}
	return out
}

// srl decodes one SR Linux port from srl_nokia-qos and
// srl_nokia-interfaces, what switchdrv/srl (srl.go compile) writes:
//
//   - PFC: /qos/interfaces/interface[interface-id=<port>]/pfc
//     {pfc-enable, pfc-mapping-profile} -> /qos/pfc-mapping-profile[name]:
//     received-traffic/unicast-mapping/pfc-queue[]/pfc-pause-frame-priority
//     (the priorities whose pfc-queue generates pause) and
//     received-pfc-pause-frames/queue[]/{enable-pfc, pfc-pause-frame-priority}
//     (the priorities whose egress queue obeys pause). A priority has PFC
//     when the port enables PFC and the profile does both for it; one it
//     only obeys is HonourOnly (semi-lossless);
//   - headroom and XOFF: input/pfc-buffer-allocation-profile ->
//     /qos/buffer-management/buffer-allocation-profile[name]/queues/
//     pfc-queue[]: maximum-pfc-reserved-share-bytes (the headroom the
//     pfc-queue may take) and maximum-burst-size (the depth at which the
//     7220 IXR's pfc-queue sends pause, feature qos-pfc-xgs: its static
//     XOFF point), the pfc-queue's priority from the mapping profile;
//   - ECN: output/queues/queue[queue-name=unicast-<q>]/queue-management-
//     profile -> /qos/buffer-management/queue-management-profile[name]/
//     wred/wred-slope[]: enable-ecn, slope-enabled, min-threshold,
//     max-threshold (bytes), max-drop-probability-percent;
//   - MTU: /interface[name=<port>]/mtu, the L2 frame without FCS
//     (srl_nokia-interfaces.yang): the IP MTU is 14 B less, 18 B on a
//     VLAN-tagged subinterface (portfacts PlatformMTU).
func (d *decoder) srl(p intent.Port, pc *sim.PortConfig) error {
	qi, err := d.srlGet(el("qos"), el("interfaces"), el("interface", "interface-id", p.Name))
	if err != nil {
		return err
	}
	pfc := obj(qi, "pfc")
	pfcQueuePrio := map[string]int{} // pfc-queue name -> pause priority
	if en, _ := pfc["pfc-enable"].(bool); en && str(pfc, "pfc-mapping-profile") != "" {
		name := str(pfc, "pfc-mapping-profile")
		mp, err := d.srlGet(el("qos"), el("pfc-mapping-profile", "name", name))
		if err != nil {
			return err
		}
		if mp == nil {
			return fmt.Errorf("/qos/interfaces/interface[interface-id=%s]/pfc names pfc-mapping-profile %s, which the switch does not have", p.Name, name)
		}
		var gen, obey [8]bool
		for _, q := range list(obj(obj(mp, "received-traffic"), "unicast-mapping"), "pfc-queue") {
			for _, pr := range prios(q["pfc-pause-frame-priority"]) {
				if pr >= 0 && pr < 8 {
					gen[pr] = true
					pfcQueuePrio[str(q, "pfc-queue-name")] = pr
				}
			}
		}
		for _, q := range list(obj(mp, "received-pfc-pause-frames"), "queue") {
			if en, _ := q["enable-pfc"].(bool); !en {
				continue
			}
			for _, pr := range prios(q["pfc-pause-frame-priority"]) {
				if pr >= 0 && pr < 8 {
					obey[pr] = true
				}
			}
		}
		for prio := range pc.Prio {
			pc.Prio[prio].PFC = gen[prio] && obey[prio]
			// semi-lossless compiles to a profile that obeys pause but
			// maps no traffic to a pfc-queue, so the port never sends it
			pc.Prio[prio].HonourOnly = obey[prio] && !gen[prio]
		}
	}
	if name := str(obj(qi, "input"), "pfc-buffer-allocation-profile"); name != "" {
		bp, err := d.srlGet(el("qos"), el("buffer-management"), el("buffer-allocation-profile", "name", name))
		if err != nil {
			return err
		}
		if bp == nil {
			return fmt.Errorf("/qos/interfaces/interface[interface-id=%s]/input names buffer-allocation-profile %s, which the switch does not have", p.Name, name)
		}
		for _, q := range list(obj(bp, "queues"), "pfc-queue") {
			qn := str(q, "pfc-queue-name")
			prio, ok := pfcQueuePrio[qn]
			if !ok {
				n, err := strconv.Atoi(strings.TrimPrefix(qn, "pfc"))
				if err != nil || n < 0 || n > 7 {
					continue // a pfc-queue no priority maps to
				}
				prio = n
			}
			if h, ok := num(q["maximum-pfc-reserved-share-bytes"]); ok {
				pc.Prio[prio].Headroom = d.cells(h)
			}
			if x, ok := num(q["maximum-burst-size"]); ok {
				pc.Prio[prio].XOFF = x
			}
		}
	}
	for _, q := range list(obj(obj(qi, "output"), "queues"), "queue") {
		qn, prof := str(q, "queue-name"), str(q, "queue-management-profile")
		if prof == "" {
			continue
		}
		prio, err := d.srlQueueIndex(qn)
		if err != nil {
			return err
		}
		qm, err := d.srlGet(el("qos"), el("buffer-management"), el("queue-management-profile", "name", prof))
		if err != nil {
			return err
		}
		if qm == nil {
			return fmt.Errorf("output queue %s names queue-management-profile %s, which the switch does not have", qn, prof)
		}
		for _, s := range list(obj(qm, "wred"), "wred-slope") {
			ecn, _ := s["enable-ecn"].(bool)
			on, _ := s["slope-enabled"].(bool)
			if !ecn || !on {
				continue
			}
			if pc.Prio[prio].ECN, err = wredECN(s, "queue-management-profile "+prof+": a wred-slope"); err != nil {
				return err
			}
			break
		}
	}
	v, ok, err := d.rb.Lookup(d.ctx, &gnmipb.Path{Elem: []*gnmipb.PathElem{el("interface", "name", p.Name), el("mtu")}})
	if err != nil {
		return err
	}
	if m, isNum := num(v); ok && isNum {
		pc.MTU = int(m) - 14
		if p.Subinterface != 0 {
			pc.MTU -= 4
		}
	}
	return nil
}

// srlQueueIndex is the index of a named queue: unicast-<N> is N (the
// names switchdrv/srl uses, index N), else /qos/queues/queue[name]/queue-index.
func (d *decoder) srlQueueIndex(name string) (int, error) {
	if n, err := strconv.Atoi(strings.TrimPrefix(name, "unicast-")); err == nil && strings.HasPrefix(name, "unicast-") && n >= 0 && n < 8 {
		return n, nil
	}
	q, err := d.srlGet(el("qos"), el("queues"), el("queue", "name", name))
	if err != nil {
		return 0, err
	}
	if n, ok := num(q["queue-index"]); ok && n >= 0 && n < 8 {
		return int(n), nil
	}
	return 0, fmt.Errorf("queue %s: no queue-index 0-7", name)
}
