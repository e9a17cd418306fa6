package validate

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
)

// Subscriber is the part of the gNMI client switch counters need
// (*transport.Client implements it).
type Subscriber interface {
	SubscribeOnce(ctx context.Context, prefix *gnmipb.Path, paths []*gnmipb.Path) ([]*gnmipb.Notification, error)
}

// Normalised switch counter names, per priority / queue N (fabricctl maps a
// class's priority to the queue of the same index):
//
//	qN.drops       queue drops (SONiC SAI_QUEUE_STAT_DROPPED_PACKETS, SR Linux
//	               dropped-packets + egq-dropped-packets, OpenConfig dropped-pkts)
//	qN.tx_packets  packets the queue sent (SONiC SAI_QUEUE_STAT_PACKETS, SR Linux
//	               aggregate-statistics transmitted-packets, OpenConfig
//	               transmit-pkts): what a lossy class's drop rate is taken of
//	qN.ecn_marked  ECN-marked packets (SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS,
//	               SR Linux ecn-marked-packets)
//	pN.pfc_tx      PFC pause frames sent (SAI_PORT_STAT_PFC_N_TX_PKTS,
//	               SR Linux pfc-pause-frames-generated)
//	pN.pfc_rx      PFC pause frames received
//	qN.watchdog    PFC watchdog detections (PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED,
//	               SR Linux deadlock-recovery-occurrences)
//	pfc_discards   packets dropped at ingress because the port's PFC buffer
//	               ran out (SR Linux total-packet-pfc-discards): lossless
//	               traffic, since only PFC priorities use that buffer
const (
	ctrDrops       = "drops"
	ctrTxPackets   = "tx_packets"
	ctrECNMarked   = "ecn_marked"
	ctrPFCTx       = "pfc_tx"
	ctrPFCRx       = "pfc_rx"
	ctrWatchdog    = "watchdog"
	ctrPFCDiscards = "pfc_discards"
)

// profileDrops is the temporary name of SR Linux per-profile queue drops
// (in-profile, out-profile ...), which platforms with the
// qos-queue-profile-stats feature report instead of the aggregate
// dropped-packets leaf; Read folds them into qN.drops.
const profileDrops = "profile_drops"

// SwitchCounters reads queue, PFC and watchdog counters of a switch's ports
// with one gNMI Subscribe ONCE, using the platform's own counter model.
type SwitchCounters struct {
	Switch   string
	Platform intent.Platform
	Ports    []string
	Sub      Subscriber
}

var _ Source = (*SwitchCounters)(nil)

// Name implements Source.
func (c *SwitchCounters) Name() string { return "switch " + c.Switch }

// Kind implements Source.
func (c *SwitchCounters) Kind() string { return "switch" }

// Paths returns the subscription prefix and paths for the platform.
//
//	sonic:      target COUNTERS_DB, /COUNTERS/<port>, /COUNTERS/<port>/Queues,
//	            /COUNTERS/<port>/Pfcwd
//	srlinux:    /qos/interfaces/interface[interface-id=<port>]/output/queues and
//	            .../pfc/statistics
//	eos,
//	openconfig: /qos/interfaces/interface[interface-id=<port>]/output/queues
//	            (OpenConfig has no PFC counters)
func (c *SwitchCounters) Paths() (*gnmipb.Path, []*gnmipb.Path, error) {
	var paths []*gnmipb.Path
	elems := func(names ...string) []*gnmipb.PathElem {
		out := make([]*gnmipb.PathElem, len(names))
		for i, n := range names {
			out[i] = &gnmipb.PathElem{Name: n}
		}
		return out
	}
	qosIf := func(port string, rest ...string) *gnmipb.Path {
		e := []*gnmipb.PathElem{{Name: "qos"}, {Name: "interfaces"}, {Name: "interface", Key: map[string]string{"interface-id": port}}}
		return &gnmipb.Path{Elem: append(e, elems(rest...)...)}
	}
	switch c.Platform {
	case intent.PlatformSONiC:
		for _, p := range c.Ports {
			paths = append(paths,
				&gnmipb.Path{Elem: elems("COUNTERS", p)},
				&gnmipb.Path{Elem: elems("COUNTERS", p, "Queues")},
				&gnmipb.Path{Elem: elems("COUNTERS", p, "Pfcwd")})
		}
		return &gnmipb.Path{Target: "COUNTERS_DB"}, paths, nil
	case intent.PlatformSRLinux:
		for _, p := range c.Ports {
			paths = append(paths, qosIf(p, "output", "queues"), qosIf(p, "pfc", "statistics"))
		}
	case intent.PlatformEOS, intent.PlatformOpenConfig:
		for _, p := range c.Ports {
			paths = append(paths, qosIf(p, "output", "queues"))
		}
	default:
		return nil, nil, fmt.Errorf("switch %s: no counter model for platform %q", c.Switch, c.Platform)
	}
	return &gnmipb.Path{}, paths, nil
}

// Read implements Source.
func (c *SwitchCounters) Read(ctx context.Context) (Sample, error) {
	prefix, paths, err := c.Paths()
	if err != nil {
		return nil, err
	}
	notes, err := c.Sub.SubscribeOnce(ctx, prefix, paths)
	if err != nil {
		return nil, fmt.Errorf("switch %s: read counters: %w", c.Switch, err)
	}
	s := Sample{}
	for _, p := range c.Ports {
		s[c.Switch+"/"+p] = map[string]uint64{}
	}
	for _, n := range notes {
		for _, u := range n.GetUpdate() {
			elems := append(append([]*gnmipb.PathElem{}, n.GetPrefix().GetElem()...), u.GetPath().GetElem()...)
			if c.Platform == intent.PlatformSONiC {
				c.addSONiC(s, elems, u.GetVal())
			} else {
				c.addYANG(s, elems, u.GetVal())
			}
		}
	}
	foldProfileDrops(s)
	return s, nil
}

// foldProfileDrops turns the per-profile drops of a queue into its qN.drops
// when the aggregate leaf is absent. The SR Linux YANG has either the
// aggregate leaves or the profile containers (if-feature
// qos-queue-profile-stats), never both; if a device sent both, the
// aggregate wins and nothing is counted twice.
func foldProfileDrops(s Sample) {
	for _, m := range s {
		for k, v := range m {
			q, ok := strings.CutSuffix(k, "."+profileDrops)
			if !ok {
				continue
			}
			delete(m, k)
			if _, agg := m[q+"."+ctrDrops]; !agg {
				m[q+"."+ctrDrops] = v
			}
		}
	}
}

func (c *SwitchCounters) add(s Sample, port, name string, v uint64) {
	m := s[c.Switch+"/"+port]
	if m == nil {
		m = map[string]uint64{}
		s[c.Switch+"/"+port] = m
	}
	m[name] += v
}

// addYANG maps one SR Linux / OpenConfig leaf.
func (c *SwitchCounters) addYANG(s Sample, elems []*gnmipb.PathElem, tv *gnmipb.TypedValue) {
	if len(elems) == 0 {
		return
	}
	port, queue, prio := "", -1, -1
	profile := false
	for _, e := range elems {
		switch e.GetName() {
		case "interface":
			port = e.GetKey()["interface-id"]
		case "queue":
			q := e.GetKey()["queue-name"]
			if q == "" {
				q = e.GetKey()["name"]
			}
			queue = trailingInt(q)
		case "pfc-priority":
			prio, _ = strconv.Atoi(e.GetKey()["index"])
		case "per-lag-member-statistics":
			return // counted in the aggregate already
		case "in-profile", "in-plus-profile", "out-profile", "exceed-profile":
			profile = true
		}
	}
	v, ok := uintValue(tv)
	if port == "" || !ok {
		return
	}
	switch leaf := elems[len(elems)-1].GetName(); {
	case profile:
		if queue >= 0 && leaf == "dropped-packets" {
			c.add(s, port, fmt.Sprintf("q%d.%s", queue, profileDrops), v)
		}
	case queue < 0 && prio < 0 && leaf == "total-packet-pfc-discards":
		c.add(s, port, ctrPFCDiscards, v)
	case queue >= 0 && (leaf == "dropped-packets" || leaf == "egq-dropped-packets" || leaf == "dropped-pkts"):
		c.add(s, port, fmt.Sprintf("q%d.%s", queue, ctrDrops), v)
	case queue >= 0 && (leaf == "transmitted-packets" || leaf == "transmit-pkts"):
		c.add(s, port, fmt.Sprintf("q%d.%s", queue, ctrTxPackets), v)
	case queue >= 0 && (leaf == "ecn-marked-packets" || leaf == "ecn-marked-pkts"):
		c.add(s, port, fmt.Sprintf("q%d.%s", queue, ctrECNMarked), v)
	case prio >= 0 && leaf == "pfc-pause-frames-generated":
		c.add(s, port, fmt.Sprintf("p%d.%s", prio, ctrPFCTx), v)
	case prio >= 0 && leaf == "pfc-pause-frames-received":
		c.add(s, port, fmt.Sprintf("p%d.%s", prio, ctrPFCRx), v)
	case prio >= 0 && leaf == "deadlock-recovery-occurrences":
		c.add(s, port, fmt.Sprintf("q%d.%s", prio, ctrWatchdog), v)
	}
}

// addSONiC maps a COUNTERS_DB answer: /COUNTERS/<port> (port stats),
// /COUNTERS/<port>/Queues and /Pfcwd (keyed "<port>:<queue>"). Values may
// come as one JSON object or leaf by leaf; numbers are strings.
func (c *SwitchCounters) addSONiC(s Sample, elems []*gnmipb.PathElem, tv *gnmipb.TypedValue) {
	names := make([]string, len(elems))
	for i, e := range elems {
		names[i] = e.GetName()
	}
	if len(names) < 2 || names[0] != "COUNTERS" {
		return
	}
	port := names[1]
	var tree any
	if b := tv.GetJsonIetfVal(); b != nil {
		_ = json.Unmarshal(b, &tree)
	} else if b := tv.GetJsonVal(); b != nil {
		_ = json.Unmarshal(b, &tree)
	} else if v, ok := uintValue(tv); ok {
		tree = strconv.FormatUint(v, 10)
	}
	// Rebuild the object rooted at /COUNTERS/<port>.
	for i := len(names) - 1; i >= 2; i-- {
		tree = map[string]any{names[i]: tree}
	}
	root, ok := tree.(map[string]any)
	if !ok {
		return
	}
	for k, v := range root {
		switch k {
		case "Queues", "Pfcwd":
			if len(names) == 2 {
				// Real COUNTERS_DB answers /COUNTERS/<port> with port stats
				// only; queue stats come from their own subscription, so a
				// nested copy is not counted twice.
				continue
			}
			qs, _ := v.(map[string]any)
			for qk, qv := range qs {
				q := trailingInt(qk)
				stats, _ := qv.(map[string]any)
				if q < 0 {
					continue
				}
				for name, val := range stats {
					n, ok := jsonUint(val)
					if !ok {
						continue
					}
					switch name {
					case "SAI_QUEUE_STAT_DROPPED_PACKETS":
						c.add(s, port, fmt.Sprintf("q%d.%s", q, ctrDrops), n)
					case "SAI_QUEUE_STAT_PACKETS":
						c.add(s, port, fmt.Sprintf("q%d.%s", q, ctrTxPackets), n)
					case "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS":
						c.add(s, port, fmt.Sprintf("q%d.%s", q, ctrECNMarked), n)
					case "PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED":
						c.add(s, port, fmt.Sprintf("q%d.%s", q, ctrWatchdog), n)
					}
				}
			}
		default:
			// SAI_PORT_STAT_PFC_<p>_TX_PKTS / _RX_PKTS
			if !strings.HasPrefix(k, "SAI_PORT_STAT_PFC_") {
				continue
			}
			n, ok := jsonUint(v)
			if !ok {
				continue
			}
			rest := strings.TrimPrefix(k, "SAI_PORT_STAT_PFC_")
			p, dir, _ := strings.Cut(rest, "_")
			prio, err := strconv.Atoi(p)
			if err != nil || prio < 0 || prio > 7 {
				continue
			}
			switch dir {
			case "TX_PKTS":
				c.add(s, port, fmt.Sprintf("p%d.%s", prio, ctrPFCTx), n)
			case "RX_PKTS":
				c.add(s, port, fmt.Sprintf("p%d.%s", prio, ctrPFCRx), n)
			}
		}
	}
}

func trailingInt(s string) int {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	if i == len(s) {
		return -1
	}
	n, err := strconv.Atoi(s[i:])
	if err != nil {
		return -1
	}
	return n
}

func uintValue(tv *gnmipb.TypedValue) (uint64, bool) {
	switch v := tv.GetValue().(type) {
	case *gnmipb.TypedValue_UintVal:
		return v.UintVal, true
	case *gnmipb.TypedValue_IntVal:
		if v.IntVal >= 0 {
			return uint64(v.IntVal), true
		}
	case *gnmipb.TypedValue_StringVal:
		n, err := strconv.ParseUint(v.StringVal, 10, 64)
		return n, err == nil
	case *gnmipb.TypedValue_JsonIetfVal:
		var x any
		if json.Unmarshal(v.JsonIetfVal, &x) == nil {
			return jsonUint(x)
		}
	case *gnmipb.TypedValue_JsonVal:
		var x any
		if json.Unmarshal(v.JsonVal, &x) == nil {
			return jsonUint(x)
		}
	}
	return 0, false
}

func jsonUint(v any) (uint64, bool) {
	switch x := v.(type) {
	case string:
		n, err := strconv.ParseUint(x, 10, 64)
		return n, err == nil
	case float64:
		if x >= 0 && x < 1<<63 {
			return uint64(x), true
		}
	}
	return 0, false
}
