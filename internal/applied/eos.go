package applied

import (
	"fmt"
	"strconv"
	"strings"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/sim"
	"github.com/fabricctl/fabricctl/switchdrv"
)

// noteEOSHeadroom says where an EOS port's headroom comes from.
const noteEOSHeadroom = "EOS: headroom is the intent's (intent/portfacts): EOS sizes its PFC headroom itself and fabricctl writes none, and XOFF is the ASIC's shared-buffer threshold (not in the configuration)"

// eos decodes one EOS port from the CLI configuration switchdrv/eos writes
// and reads back with `show running-config all` over origin cli (the
// forms of Arista AVD's eos_cli_config_gen templates, which eos.go cites):
//
//   - PFC: "interface <port>" with "priority-flow-control on" and
//     "priority-flow-control priority <p> no-drop" (AVD
//     ethernet-interfaces.j2): PFC for p both ways; "no
//     priority-flow-control" (what a lossy apply writes) or no "on", and
//     "priority-flow-control priority <p> drop", are PFC off;
//   - ECN: "tx-queue <q>" > "random-detect ecn minimum-threshold <min>
//     bytes maximum-threshold <max> bytes max-mark-probability <p>" (AVD
//     ethernet-interface-tx-queues.j2), other units converted (kbytes,
//     mbytes);
//   - MTU: "mtu <n>", the IP MTU on EOS;
//   - headroom and XOFF are not configured (noteEOSHeadroom): the
//     intent's headroom (portfacts Headroom.Occupied), XOFF -1.
func (d *decoder) eos(p intent.Port, pc *sim.PortConfig, notes *[]string) error {
	lines := d.rb.CLILines()
	if lines == nil {
		return fmt.Errorf("no CLI configuration read (origin cli)")
	}
	head := "interface " + p.Name
	var pfcOn bool
	var noDrop [8]bool
	for _, l := range lines {
		rest, ok := strings.CutPrefix(l, head+switchdrv.CLISep)
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		switch {
		case rest == "priority-flow-control on":
			pfcOn = true
		case len(f) == 4 && f[0] == "priority-flow-control" && f[1] == "priority" && f[3] == "no-drop":
			if n, err := strconv.Atoi(f[2]); err == nil && n >= 0 && n < 8 {
				noDrop[n] = true
			}
		case len(f) == 2 && f[0] == "mtu":
			if n, err := strconv.Atoi(f[1]); err == nil {
				pc.MTU = n
			}
		case len(f) >= 3 && f[0] == "tx-queue":
			q, err := strconv.Atoi(f[1])
			sub := strings.Fields(strings.TrimPrefix(strings.Join(f[2:], " "), ">> "))
			if err != nil || q < 0 || q > 7 || len(sub) < 2 || sub[0] != "random-detect" || sub[1] != "ecn" {
				continue
			}
			e, err := eosECN(sub[2:])
			if err != nil {
				return fmt.Errorf("%s tx-queue %d: %w", head, q, err)
			}
			pc.Prio[q].ECN = e
		}
	}
	port := d.facts.Port(d.f, p)
	for prio := range pc.Prio {
		pc.Prio[prio].PFC = pfcOn && noDrop[prio]
		if pc.Prio[prio].PFC {
			pc.Prio[prio].Headroom = port.Headroom.Occupied
		}
	}
	*notes = append(*notes, noteEOSHeadroom)
	return nil
}

// eosECN reads "minimum-threshold X UNIT maximum-threshold Y UNIT
// max-mark-probability P" (UNIT bytes, kbytes, mbytes; segments and
// microseconds are not bytes and are refused).
func eosECN(f []string) (*sim.ECNConfig, error) {
	e := &sim.ECNConfig{}
	for i := 0; i < len(f); i++ {
		switch f[i] {
		case "minimum-threshold", "maximum-threshold":
			if i+2 >= len(f) {
				return nil, fmt.Errorf("%s without a value and unit", f[i])
			}
			n, err := strconv.ParseInt(f[i+1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s %q: not a number", f[i], f[i+1])
			}
			switch f[i+2] {
			case "bytes":
			case "kbytes":
				n *= 1000
			case "mbytes":
				n *= 1000_000
			default:
				return nil, fmt.Errorf("%s in %s: not a byte unit the simulator can take", f[i], f[i+2])
			}
			if f[i] == "minimum-threshold" {
				e.MinBytes = n
			} else {
				e.MaxBytes = n
			}
			i += 2
		case "max-mark-probability":
			if i+1 >= len(f) {
				return nil, fmt.Errorf("max-mark-probability without a value")
			}
			n, err := strconv.Atoi(f[i+1])
			if err != nil {
				return nil, fmt.Errorf("max-mark-probability %q: not a number", f[i+1])
			}
			e.Probability = n
			i++
		}
	}
	if e.MaxBytes == 0 {
		return nil, fmt.Errorf("random-detect ecn without thresholds")
	}
	return e, nil
}

// noteOCPFC says what OpenConfig's lack of a PFC model means here.
const noteOCPFC = "OpenConfig: openconfig-qos has no PFC model, so nothing read back says PFC is on: every priority runs without PFC at this switch's ports (a lossless class through them drops when a priority group is full) and no headroom or XOFF is read; PFC configured out of band is not seen"

// oc decodes one OpenConfig port from openconfig-qos and
// openconfig-interfaces, what switchdrv/oc writes:
//
//   - ECN: /qos/interfaces/interface[interface-id=<port>]/output/queues/
//     queue[name]/config/queue-management-profile ->
//     /qos/queue-management-profiles/queue-management-profile[name]/wred/
//     uniform/config {enable-ecn, min-threshold, max-threshold,
//     max-drop-probability-percent}; the queue's priority is
//     /qos/queues/queue[name]/config/queue-id;
//   - MTU: /interfaces/interface[name=<port>]/config/mtu, the frame
//     without FCS ("1514 bytes on an Ethernet interface"): IP MTU + 14;
//   - PFC, headroom, XOFF: no model (noteOCPFC).
func (d *decoder) oc(p intent.Port, pc *sim.PortConfig, notes *[]string) error {
	qi, err := d.srlGet(el("qos"), el("interfaces"), el("interface", "interface-id", p.Name))
	if err != nil {
		return err
	}
	for _, q := range list(obj(obj(qi, "output"), "queues"), "queue") {
		qn := str(q, "name")
		prof := str(obj(q, "config"), "queue-management-profile")
		if prof == "" {
			continue
		}
		qd, err := d.srlGet(el("qos"), el("queues"), el("queue", "name", qn))
		if err != nil {
			return err
		}
		id, ok := num(obj(qd, "config")["queue-id"])
		if !ok || id < 0 || id > 7 {
			return fmt.Errorf("queue %s: no queue-id 0-7", qn)
		}
		qm, err := d.srlGet(el("qos"), el("queue-management-profiles"), el("queue-management-profile", "name", prof))
		if err != nil {
			return err
		}
		if qm == nil {
			return fmt.Errorf("queue %s names queue-management-profile %s, which the switch does not have", qn, prof)
		}
		c := obj(obj(obj(qm, "wred"), "uniform"), "config")
		if on, _ := c["enable-ecn"].(bool); !on {
			continue
		}
		if pc.Prio[id].ECN, err = wredECN(c, "queue-management-profile "+prof+": wred uniform config"); err != nil {
			return err
		}
	}
	v, ok, err := d.rb.Lookup(d.ctx, &gnmipb.Path{Elem: []*gnmipb.PathElem{el("interfaces"), el("interface", "name", p.Name), el("config"), el("mtu")}})
	if err != nil {
		return err
	}
	if m, isNum := num(v); ok && isNum {
		pc.MTU = int(m) - 14
	}
	*notes = append(*notes, noteOCPFC)
	return nil
}
