package twin

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv/internal/jtree"
)

// Traffic is what one port and priority carried, as its counters see it.
// The twin maps priority N to queue N, as fabricctl's compilers do.
type Traffic struct {
	Packets   uint64 // packets the queue transmitted
	Drops     uint64 // packets the queue dropped
	ECNMarked uint64 // packets the queue marked CE (WRED/ECN)
	PauseTx   uint64 // PFC pause frames the port sent for the priority (its ingress hit xoff)
	PauseRx   uint64 // PFC pause frames the port received for the priority
	Storms    uint64 // PFC watchdog detections (a queue paused too long: deadlock/storm)
}

func (a Traffic) add(b Traffic) Traffic {
	return Traffic{a.Packets + b.Packets, a.Drops + b.Drops, a.ECNMarked + b.ECNMarked,
		a.PauseTx + b.PauseTx, a.PauseRx + b.PauseRx, a.Storms + b.Storms}
}

// counterLeaf is one counter of the twin's platform: where it lives in the
// datastore and which Traffic field feeds it.
type counterLeaf struct {
	path  *gnmipb.Path
	field func(Traffic) uint64
	str   bool // stored as a decimal string (SONiC COUNTERS_DB, whose hashes hold strings)
}

// counterLeaves lists the counters of port/prio in the twin's platform
// model, at the paths validate.SwitchCounters and fabricctl watch read:
//
//	sonic:      target COUNTERS_DB /COUNTERS/<port>: SAI_PORT_STAT_PFC_<p>_TX_PKTS,
//	            _RX_PKTS; /COUNTERS/<port>/Queues/<port>:<q>: SAI_QUEUE_STAT_PACKETS,
//	            SAI_QUEUE_STAT_DROPPED_PACKETS, SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS;
//	            /COUNTERS/<port>/Pfcwd/<port>:<q>: PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED
//	            (sonic-gnmi's virtual COUNTERS paths; SAI counter names from
//	            sai/inc/saiport.h and saiqueue.h, PFC watchdog stats from
//	            sonic-swss orchagent/pfcwdorch.cpp)
//	srlinux:    /qos/interfaces/interface[interface-id]/output/queues/queue[queue-name=unicast-<q>]
//	            /queue-statistics/aggregate-statistics/{transmitted,dropped,ecn-marked}-packets;
//	            .../pfc/statistics/pfc-priority[index=<p>]/{pfc-pause-frames-generated,
//	            pfc-pause-frames-received,deadlock-recovery-occurrences} (srl_nokia-qos)
//	eos, openconfig: /qos/interfaces/interface[interface-id]/output/queues/queue[name=<q>]
//	            /state/{transmit-pkts,dropped-pkts} (openconfig-qos), plus
//	            ecn-marked-pkts on EOS (arista-qos-augments); OpenConfig has no
//	            PFC counters, so pause and watchdog traffic is not visible there.
func (t *Twin) counterLeaves(port string, prio int) []counterLeaf {
	elem := func(name string, kv ...string) *gnmipb.PathElem {
		e := &gnmipb.PathElem{Name: name}
		if len(kv) > 0 {
			e.Key = map[string]string{}
			for i := 0; i+1 < len(kv); i += 2 {
				e.Key[kv[i]] = kv[i+1]
			}
		}
		return e
	}
	path := func(target string, es ...*gnmipb.PathElem) *gnmipb.Path {
		return &gnmipb.Path{Target: target, Elem: es}
	}
	p, q := strconv.Itoa(prio), strconv.Itoa(prio)
	packets := func(x Traffic) uint64 { return x.Packets }
	drops := func(x Traffic) uint64 { return x.Drops }
	ecn := func(x Traffic) uint64 { return x.ECNMarked }
	ptx := func(x Traffic) uint64 { return x.PauseTx }
	prx := func(x Traffic) uint64 { return x.PauseRx }
	storms := func(x Traffic) uint64 { return x.Storms }
	switch t.opts.Platform {
	case intent.PlatformSONiC:
		const db = "COUNTERS_DB"
		qk := port + ":" + q
		return []counterLeaf{
			{path(db, elem("COUNTERS"), elem(port), elem("SAI_PORT_STAT_PFC_"+p+"_TX_PKTS")), ptx, true},
			{path(db, elem("COUNTERS"), elem(port), elem("SAI_PORT_STAT_PFC_"+p+"_RX_PKTS")), prx, true},
			{path(db, elem("COUNTERS"), elem(port), elem("Queues"), elem(qk), elem("SAI_QUEUE_STAT_PACKETS")), packets, true},
			{path(db, elem("COUNTERS"), elem(port), elem("Queues"), elem(qk), elem("SAI_QUEUE_STAT_DROPPED_PACKETS")), drops, true},
			{path(db, elem("COUNTERS"), elem(port), elem("Queues"), elem(qk), elem("SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS")), ecn, true},
			{path(db, elem("COUNTERS"), elem(port), elem("Pfcwd"), elem(qk), elem("PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED")), storms, true},
		}
	case intent.PlatformSRLinux:
		qs := []*gnmipb.PathElem{elem("qos"), elem("interfaces"), elem("interface", "interface-id", port), elem("output"), elem("queues"),
			elem("queue", "queue-name", "unicast-"+q), elem("queue-statistics"), elem("aggregate-statistics")}
		pfc := []*gnmipb.PathElem{elem("qos"), elem("interfaces"), elem("interface", "interface-id", port), elem("pfc"), elem("statistics"),
			elem("pfc-priority", "index", p)}
		leaf := func(base []*gnmipb.PathElem, name string) *gnmipb.Path {
			return path("", append(append([]*gnmipb.PathElem{}, base...), elem(name))...)
		}
		return []counterLeaf{
			{leaf(qs, "transmitted-packets"), packets, false},
			{leaf(qs, "dropped-packets"), drops, false},
			{leaf(qs, "ecn-marked-packets"), ecn, false},
			{leaf(pfc, "pfc-pause-frames-generated"), ptx, false},
			{leaf(pfc, "pfc-pause-frames-received"), prx, false},
			{leaf(pfc, "deadlock-recovery-occurrences"), storms, false},
		}
	case intent.PlatformEOS, intent.PlatformOpenConfig:
		st := []*gnmipb.PathElem{elem("qos"), elem("interfaces"), elem("interface", "interface-id", port), elem("output"), elem("queues"),
			elem("queue", "name", q), elem("state")}
		leaf := func(name string) *gnmipb.Path {
			return path("", append(append([]*gnmipb.PathElem{}, st...), elem(name))...)
		}
		out := []counterLeaf{{leaf("transmit-pkts"), packets, false}, {leaf("dropped-pkts"), drops, false}}
		if t.opts.Platform == intent.PlatformEOS {
			out = append(out, counterLeaf{leaf("ecn-marked-pkts"), ecn, false})
		}
		return out
	}
	return nil
}

// Play plays traffic through port and priority: each counter of the
// platform's model moves by the matching Traffic field (counters only ever
// grow, as hardware counters do until they are cleared). Counters are
// state (config false): they live apart from the configuration datastore,
// so a Set never validates them and a Get of type CONFIG never sees them.
func (t *Twin) Play(port string, prio int, tr Traffic) error {
	if prio < 0 || prio > 7 {
		return fmt.Errorf("twin %s: priority %d is not 0-7", t.opts.Name, prio)
	}
	leaves := t.counterLeaves(port, prio)
	if leaves == nil {
		return fmt.Errorf("twin %s: no counter model for platform %q", t.opts.Name, t.opts.Platform)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, l := range leaves {
		root := t.stateTree(t.namespace(l.path))
		var cur uint64
		if v, ok := jtree.Get(t.tree(t.namespace(l.path)), l.path.GetElem()); ok {
			// A counter set with Put (tests) counts on from there.
			cur, _ = strconv.ParseUint(jtree.Text(v), 10, 64)
		}
		if v, ok := jtree.Get(root, l.path.GetElem()); ok {
			cur, _ = strconv.ParseUint(jtree.Text(v), 10, 64)
		}
		n := cur + l.field(tr)
		var v any = json.Number(strconv.FormatUint(n, 10))
		if l.str {
			v = strconv.FormatUint(n, 10)
		}
		if err := jtree.Replace(root, l.path.GetElem(), v); err != nil {
			return fmt.Errorf("twin %s: counter %s: %w", t.opts.Name, jtree.PathKey(l.path), err)
		}
	}
	return nil
}

// Rate plays perSecond traffic through port and priority continuously (a
// simple rate model: every tick, perSecond scaled to the tick, with the
// remainders carried so the long-run rate is exact) until stop is called
// (callers stop it before closing the twin; a stopped twin's datastore is
// still written, which is harmless).
func (t *Twin) Rate(port string, prio int, perSecond Traffic, tick time.Duration) (stop func(), err error) {
	if tick <= 0 {
		tick = 100 * time.Millisecond
	}
	if err := t.Play(port, prio, Traffic{}); err != nil { // create the counters, check the arguments
		return nil, err
	}
	done := make(chan struct{})
	var once sync.Once
	go func() {
		tk := time.NewTicker(tick)
		defer tk.Stop()
		start := time.Now()
		var sent Traffic
		for {
			select {
			case <-done:
				return
			case now := <-tk.C:
				el := now.Sub(start).Seconds()
				due := func(rate, got uint64) uint64 {
					want := uint64(float64(rate) * el)
					if want < got {
						return 0
					}
					return want - got
				}
				step := Traffic{due(perSecond.Packets, sent.Packets), due(perSecond.Drops, sent.Drops), due(perSecond.ECNMarked, sent.ECNMarked),
					due(perSecond.PauseTx, sent.PauseTx), due(perSecond.PauseRx, sent.PauseRx), due(perSecond.Storms, sent.Storms)}
				if t.Play(port, prio, step) == nil {
					sent = sent.add(step)
				}
			}
		}
	}()
	return func() { once.Do(func() { close(done) }) }, nil
}
