package applied

import (
	"fmt"
	"strconv"
	"strings"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/sim"
)

// sonicHash reads CONFIG_DB table|key through sonic-gnmi's sonic-db paths
// (/CONFIG_DB/localhost/<TABLE>/<KEY>, the paths switchdrv/sonic writes);
// nil when absent.
func (d *decoder) sonicHash(table, key string) (map[string]any, error) {
	p := &gnmipb.Path{Origin: "sonic-db", Elem: []*gnmipb.PathElem{{Name: "CONFIG_DB"}, {Name: "localhost"}, {Name: table}, {Name: key}}}
	v, ok, err := d.rb.Lookup(d.ctx, p)
	if err != nil || !ok {
		return nil, err
	}
	m, _ := v.(map[string]any)
	return m, nil
}

// sonicPrioKey finds the key of table for port and prio: "port|prio" as
// switchdrv/sonic writes it, else a range "port|lo-hi" holding prio as the
// SONiC templates write BUFFER_PG and QUEUE (buffers_config.j2 "3-4").
func (d *decoder) sonicPrioKey(table, port string, prio int) (map[string]any, error) {
	h, err := d.sonicHash(table, port+"|"+strconv.Itoa(prio))
	if h != nil || err != nil {
		return h, err
	}
	p := &gnmipb.Path{Origin: "sonic-db", Elem: []*gnmipb.PathElem{{Name: "CONFIG_DB"}, {Name: "localhost"}, {Name: table}}}
	v, ok, err := d.rb.Lookup(d.ctx, p)
	if err != nil || !ok {
		return nil, err
	}
	tab, _ := v.(map[string]any)
	for k, e := range tab {
		pt, r, ok := strings.Cut(k, "|")
		if !ok || pt != port {
			continue
		}
		lo, hi, isRange := strings.Cut(r, "-")
		if !isRange {
			hi = lo
		}
		a, e1 := strconv.Atoi(lo)
		b, e2 := strconv.Atoi(hi)
		if e1 == nil && e2 == nil && a <= prio && prio <= b {
			h, _ := e.(map[string]any)
			return h, nil
		}
	}
	return nil, nil
}

// sonic decodes one SONiC port from CONFIG_DB, the tables switchdrv/sonic
// (sonic.go compile, refine.go and gcurules.go on releases whose config
// updater keeps the template's profiles) writes:
//
//   - PFC: PORT_QOS_MAP|<port> pfc_enable, the comma list of priorities
//     (sonic-buildimage sonic-port-qos-map.yang); sonic-swss orchagent
//     (qosorch.cpp's PORT_QOS_MAP handler, portsorch.cpp setPortPfc) writes
//     the bits to SAI_PORT_ATTR_PRIORITY_FLOW_CONTROL, pause both ways,
//     unless PORT pfc_asym is on (then _TX only: not modelled here, and
//     fabricctl never sets it);
//   - ECN: QUEUE|<port>|<q> wred_profile -> WRED_PROFILE|<name>: ecn
//     (ecn_none: no marking; sonic-wred-profile.yang), green_min_threshold,
//     green_max_threshold (bytes) and green_drop_probability (percent):
//     the thresholds fabricctl writes for every colour, and the only ones
//     the config updater lets it set on AZURE_LOSSLESS;
//   - headroom: BUFFER_PG|<port>|<p> profile -> BUFFER_PROFILE|<name> xoff,
//     the bytes a priority group takes after it sent XOFF (sonic-swss
//     buffermgr, buffer_headroom lua), rounded up to the ASIC's cell;
//   - XOFF: not in CONFIG_DB (the shared buffer's dynamic threshold,
//     dynamic_th): -1, the simulator derives it from the intent's buffer;
//   - MTU: PORT|<port> mtu, the IP MTU (sonic-port.yang; portfacts:
//     PlatformMTU = IPMTU on SONiC).
func (d *decoder) sonic(p intent.Port, pc *sim.PortConfig) error {
	qm, err := d.sonicHash("PORT_QOS_MAP", p.Name)
	if err != nil {
		return err
	}
	if en := str(qm, "pfc_enable"); en != "" {
		for _, s := range strings.Split(en, ",") {
			prio, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || prio < 0 || prio > 7 {
				return fmt.Errorf("PORT_QOS_MAP|%s pfc_enable %q: not a list of priorities 0-7", p.Name, en)
			}
			pc.Prio[prio].PFC = true
		}
	}
	for prio := range pc.Prio {
		q, err := d.sonicPrioKey("QUEUE", p.Name, prio)
		if err != nil {
			return err
		}
		if wp := str(q, "wred_profile"); wp != "" {
			w, err := d.sonicHash("WRED_PROFILE", wp)
			if err != nil {
				return err
			}
			if w == nil {
				return fmt.Errorf("QUEUE|%s|%d names WRED_PROFILE|%s, which the switch does not have", p.Name, prio, wp)
			}
			if mode := str(w, "ecn"); mode != "" && mode != "ecn_none" {
				mn, ok1 := num(w["green_min_threshold"])
				mx, ok2 := num(w["green_max_threshold"])
				pr, ok3 := num(w["green_drop_probability"])
				if !ok1 || !ok2 || !ok3 {
					return fmt.Errorf("WRED_PROFILE|%s: green_min_threshold, green_max_threshold or green_drop_probability missing or not a number", wp)
				}
				pc.Prio[prio].ECN = &sim.ECNConfig{MinBytes: mn, MaxBytes: mx, Probability: int(pr)}
			}
		}
		pg, err := d.sonicPrioKey("BUFFER_PG", p.Name, prio)
		if err != nil {
			return err
		}
		if prof := str(pg, "profile"); prof != "" {
			bp, err := d.sonicHash("BUFFER_PROFILE", prof)
			if err != nil {
				return err
			}
			if bp == nil {
				return fmt.Errorf("BUFFER_PG|%s|%d names BUFFER_PROFILE|%s, which the switch does not have", p.Name, prio, prof)
			}
			if x, ok := num(bp["xoff"]); ok {
				pc.Prio[prio].Headroom = d.cells(x)
			}
		}
	}
	port, err := d.sonicHash("PORT", p.Name)
	if err != nil {
		return err
	}
	if m, ok := num(port["mtu"]); ok {
		pc.MTU = int(m)
	}
	return nil
}
