// Package srl compiles the intent into gNMI SetRequests for Nokia SR Linux
// (native srl_nokia-qos and srl_nokia-interfaces, JSON_IETF, no origin).
//
// What fabricctl owns on an SR Linux switch, and so replaces:
//   - /qos/classifiers/dscp-policy[name=FABRICCTL_DSCP] (all 64 DSCPs),
//   - /qos/scheduler-policies/scheduler-policy[name=FABRICCTL_SCHED],
//   - /qos/buffer-management/queue-management-profile[name=FABRICCTL_ECN_<CLASS>],
//   - /qos/buffer-management/buffer-allocation-profile[name=FABRICCTL_PFC_<bytes>]
//     (one per distinct headroom; ports with equal speed, cable and MTU share
//     one): the input pfc-queues, each with the headroom it may take and the
//     maximum-burst-size at which it sends pause,
//   - /qos/buffer-management/buffer-allocation-profile[name=FABRICCTL_QUEUES]:
//     the output queues of ECN classes with their maximum-burst-size,
//   - /qos/pfc-mapping-profile[name=FABRICCTL_PFC],
//   - /qos/interfaces/interface[interface-id=<port>] and [interface-id=<port>.<sub>]
//     for every inventory port (the whole QoS binding of that port).
//
// The intent's MTU is the IP MTU; /interface/mtu is the L2 frame without
// FCS, so Compile adds the Ethernet header (PortMTU).
//
// Merged (update): /qos/explicit-congestion-notification (presence), the
// standard forwarding classes fc<N> -> unicast-<N>, the queues unicast-<N>
// and the pfc-queues pfc<N> of the priorities the intent uses,
// /interface[name=<port>]/mtu and /interface[name=<port>]/ethernet/flow-control
// (receive and transmit, off when PFC is on).
// Deleted (what an earlier intent left, where the switch has it): the
// WRED-ECN profile of a class without ECN and, with no ECN class, the
// explicit-congestion-notification presence and FABRICCTL_QUEUES; and, by
// plan's stale-object rule (switchdrv.Owned), a FABRICCTL_ECN_ profile of a
// class renamed or removed once no interface's queue names it.
// Everything else under /qos (other policies, other ports) is left alone.
package srl

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/portfacts"
	"github.com/fabricctl/fabricctl/internal/memo"
	"github.com/fabricctl/fabricctl/internal/profile"
	"github.com/fabricctl/fabricctl/switchdrv"
)

// Names of the entries fabricctl owns.
const (
	DSCPPolicy      = "FABRICCTL_DSCP"
	SchedulerPolicy = "FABRICCTL_SCHED"
	PFCProfile      = "FABRICCTL_PFC"
	ecnPrefix       = "FABRICCTL_ECN_"
	bufferPrefix    = "FABRICCTL_PFC_"
	// OutputBuffers is the output buffer-allocation-profile giving the ECN
	// queues their maximum-burst-size.
	OutputBuffers = "FABRICCTL_QUEUES"
)

// quirks are read from the newest SR Linux profile (internal/profile/data/profiles/srlinux-*.json).
var quirks = switchdrv.DefaultQuirks(intent.PlatformSRLinux)

// Limits from srl_nokia-qos that Compile enforces (the device would reject
// anything else).
const (
	recoveryMinMS = 100
	recoveryMaxMS = 1500
	// scheduler-policy scheduler sequence is 0..1: sequence 0 is strict,
	// sequence 1 is weighted (weight 1..255).
	maxWeight = 255
	// ethOverhead is what an untagged Ethernet frame adds to the IP MTU
	// without FCS (the 7220's maximum IP MTU 9398 against its maximum port
	// MTU 9412, srl_nokia-interfaces.yang); a VLAN tag adds vlanTag.
	ethOverhead = 14
	vlanTag     = 4
	// portMTUMin/Max bound /interface/mtu on 7220 IXR-D/H systems
	// (srl_nokia-interfaces.yang mtu description; the range 1450..9500 is
	// VSRL's, and a must keeps ethernet ports at 1500 or more).
	portMTUMin = 1500
	portMTUMax = 9412
)

// PortMTU converts the intent's IP MTU of a port into SR Linux's interface
// mtu: the L2 frame without FCS ("Port MTU in bytes including ethernet
// overhead but excluding 4-bytes FCS", srl_nokia-interfaces.yang). The
// subinterface fabricctl classifies on is taken as untagged when its index
// is 0 and as carrying one VLAN tag otherwise.
func PortMTU(ipMTU, subinterface int) int {
	if subinterface != 0 {
		return ipMTU + ethOverhead + vlanTag
	}
	return ipMTU + ethOverhead
}

// Platform is the SR Linux platform.
type Platform struct{}

// Register adds the SR Linux platform to r.
func Register(r *switchdrv.Registry) error { return r.Register(Platform{}) }

// Name implements switchdrv.Platform.
func (Platform) Name() intent.Platform { return intent.PlatformSRLinux }

// Quirks implements switchdrv.Platform.
func (Platform) Quirks() switchdrv.Quirks { return quirks }

// JSON shapes of the srl_nokia-qos entries fabricctl writes. Field order is
// the YANG order; the encoding is RFC 7951 (uint64 as strings).
type (
	dscpPolicy struct {
		Name string      `json:"name"`
		DSCP []dscpEntry `json:"dscp"`
	}
	dscpEntry struct {
		Value           int    `json:"value"`
		ForwardingClass string `json:"forwarding-class"`
	}
	schedulerPolicy struct {
		Name      string      `json:"name"`
		Scheduler []scheduler `json:"scheduler"`
	}
	scheduler struct {
		Sequence int          `json:"sequence"`
		Priority string       `json:"priority,omitempty"`
		Input    []schedInput `json:"input"`
	}
	schedInput struct {
		ID        string `json:"id"`
		InputType string `json:"input-type"`
		QueueName string `json:"queue-name"`
		Weight    int    `json:"weight,omitempty"`
	}
	queueMgmtProfile struct {
		Name string `json:"name"`
		WRED struct {
			Slope []wredSlope `json:"wred-slope"`
		} `json:"wred"`
	}
	wredSlope struct {
		TrafficType     string `json:"traffic-type"`
		DropProbability string `json:"drop-probability"`
		EnableECN       bool   `json:"enable-ecn"`
		SlopeEnabled    bool   `json:"slope-enabled"`
		MinThreshold    string `json:"min-threshold"`
		MaxThreshold    string `json:"max-threshold"`
		MaxDropPercent  int    `json:"max-drop-probability-percent"`
	}
	bufferProfile struct {
		Name   string `json:"name"`
		Queues struct {
			Queue    []queueBuffer    `json:"queue,omitempty"`
			PFCQueue []pfcQueueBuffer `json:"pfc-queue,omitempty"`
		} `json:"queues"`
	}
	queueBuffer struct {
		Name             string `json:"queue-name"`
		MaximumBurstSize int64  `json:"maximum-burst-size"`
	}
	pfcQueueBuffer struct {
		Name string `json:"pfc-queue-name"`
		// MaximumBurstSize is the depth at which the pfc-queue sends pause
		// on 7220 IXR (feature qos-pfc-xgs).
		MaximumBurstSize int64 `json:"maximum-burst-size"`
		// ReservedBytes is the headroom the pfc-queue may take from the
		// forwarding complex's PFC reserved buffer.
		ReservedBytes int64 `json:"maximum-pfc-reserved-share-bytes"`
	}
	// forwardingClass, namedQueue and namedPFCQueue are the named objects
	// of srl_nokia-qos forwarding-classes-config and queue-names-config.
	forwardingClass struct {
		Name   string `json:"name"`
		Index  int    `json:"forwarding-class-index"`
		Output struct {
			UnicastQueue   string `json:"unicast-queue"`
			MulticastQueue string `json:"multicast-queue"`
		} `json:"output"`
	}
	namedQueue struct {
		Name  string `json:"name"`
		Index int    `json:"queue-index"`
	}
	namedPFCQueue struct {
		Name  string `json:"pfc-queue-name"`
		Index int    `json:"queue-index"`
	}
	// pfcMappingProfile is generic in how the release writes
	// pfc-pause-frame-priority (pausePriority).
	pfcMappingProfile[P pausePriority] struct {
		Name            string `json:"name"`
		ReceivedTraffic struct {
			Unicast struct {
				PFCQueue []pfcQueueMap[P] `json:"pfc-queue,omitempty"`
			} `json:"unicast-mapping"`
		} `json:"received-traffic"`
		ReceivedPause struct {
			Deadlock *deadlock       `json:"deadlock,omitempty"`
			Queue    []pauseQueue[P] `json:"queue"`
		} `json:"received-pfc-pause-frames"`
	}
	// pfcQueueMap has no enable-pfc: that leaf of received-traffic is
	// if-feature future-0-0 (no released SR Linux has it; a Set carrying
	// it is rejected). Mapping the forwarding class to the pfc-queue is
	// what makes the queue generate pause frames.
	pfcQueueMap[P pausePriority] struct {
		Name            string   `json:"pfc-queue-name"`
		ForwardingClass []string `json:"forwarding-class"`
		PausePriority   P        `json:"pfc-pause-frame-priority"`
	}
	deadlock struct {
		Enable         bool `json:"enable"`
		DetectionTimer int  `json:"detection-timer,omitempty"`
		RecoveryTimer  int  `json:"recovery-timer,omitempty"`
	}
	pauseQueue[P pausePriority] struct {
		Name          string `json:"queue-name"`
		PausePriority P      `json:"pfc-pause-frame-priority"`
		EnablePFC     bool   `json:"enable-pfc"`
	}
	qosInterface struct {
		ID           string       `json:"interface-id"`
		InterfaceRef interfaceRef `json:"interface-ref"`
		Input        *ifInput     `json:"input,omitempty"`
		Output       *ifOutput    `json:"output,omitempty"`
		PFC          *ifPFC       `json:"pfc,omitempty"`
	}
	interfaceRef struct {
		Interface    string `json:"interface"`
		Subinterface *int   `json:"subinterface,omitempty"`
	}
	ifInput struct {
		Classifiers *struct {
			DSCPPolicy string `json:"dscp-policy"`
		} `json:"classifiers,omitempty"`
		PFCBufferProfile string `json:"pfc-buffer-allocation-profile,omitempty"`
	}
	ifOutput struct {
		Queues *struct {
			Queue []ifQueue `json:"queue"`
		} `json:"queues,omitempty"`
		Scheduler struct {
			Policy string `json:"scheduler-policy"`
		} `json:"scheduler"`
		BufferProfile string `json:"buffer-allocation-profile,omitempty"`
	}
	ifQueue struct {
		Name    string `json:"queue-name"`
		Profile string `json:"queue-management-profile"`
	}
	ifPFC struct {
		Profile string `json:"pfc-mapping-profile"`
		Enable  bool   `json:"pfc-enable"`
	}
)

// pausePriority is how a release writes srl_nokia-qos
// pfc-pause-frame-priority: a uint8 leaf (25.3: 3) or a leaf-list of at
// most one (24.10: [3]); the profile says which
// (profile.Shapes.PFCPauseFramePriority, held to the release's YANG by
// TestPauseShapeIsTheReleases).
type pausePriority interface{ int | []int }

func pauseAsLeaf(prio int) int       { return prio }
func pauseAsLeafList(prio int) []int { return []int{prio} }

// mappingProfile is the pfc-mapping-profile of the lossless priorities,
// the priority written by pp, with the deadlock settings dl.
// send are the priorities the switch generates pause for
// (received-traffic unicast-mapping: "Parameters related to receiving
// traffic for pfc-generation", srl_nokia-qos pfc-profile-config), honour
// those whose received pause its egress queues react to
// (received-pfc-pause-frames queue enable-pfc: "Enables/disables reaction
// to received pfc-frames for a given pfc-priority"). In semi-lossless mode
// send is empty: traffic maps to no pfc-queue, so no pause is generated,
// while the queues still stop on a received pause.
func mappingProfile[P pausePriority](send, honour []int, pp func(int) P, dl *deadlock) pfcMappingProfile[P] {
	mp := pfcMappingProfile[P]{Name: PFCProfile}
	for _, prio := range send {
		mp.ReceivedTraffic.Unicast.PFCQueue = append(mp.ReceivedTraffic.Unicast.PFCQueue, pfcQueueMap[P]{
			Name: pfcQueue(prio), ForwardingClass: []string{fc(prio)}, PausePriority: pp(prio),
		})
	}
	for _, prio := range honour {
		mp.ReceivedPause.Queue = append(mp.ReceivedPause.Queue, pauseQueue[P]{Name: queue(prio), PausePriority: pp(prio), EnablePFC: true})
	}
	mp.ReceivedPause.Deadlock = dl
	return mp
}

// modeName is m as the intent writes it (a Policy built in code has none: lossless).
func modeName(m intent.RoCEMode) intent.RoCEMode {
	if m == "" {
		return intent.ModeLossless
	}
	return m
}

func fc(prio int) string       { return "fc" + strconv.Itoa(prio) }
func queue(prio int) string    { return "unicast-" + strconv.Itoa(prio) }
func pfcQueue(prio int) string { return "pfc" + strconv.Itoa(prio) }
func mcQueue(prio int) string  { return "multicast-" + strconv.Itoa(prio) }

// ECNProfile is the queue-management profile name of a class (characters
// other than letters, digits, '_' and '-' become '_').
func ECNProfile(class string) string { return ecnPrefix + switchdrv.KeyPart(class, 0) }

// Compile implements switchdrv.Platform.
func (Platform) Compile(f *intent.Fabric, sw *intent.Switch) (*switchdrv.Desired, error) {
	return switchdrv.Compile(intent.PlatformSRLinux, f, sw, func(d *switchdrv.Desired) error {
		prof, err := profile.LookupFor(string(intent.PlatformSRLinux), sw.Profile)
		if err != nil {
			return err
		}
		return (&compiler{f: f, sw: sw, d: d, prof: prof}).compile()
	})
}

type compiler struct {
	f  *intent.Fabric
	sw *intent.Switch
	d  *switchdrv.Desired
	// prof is the switch's release profile (switches[].profile): the
	// release's JSON shapes.
	prof *profile.Profile
	// headroom is each port's programmed headroom (portfacts), in
	// sw.Ports' order, worked out at the first need.
	headroom []int64
}

// portHeadroom is the programmed headroom of the switch's port i
// (portfacts: the figure check reports and simulate uses).
func (c *compiler) portHeadroom(i int) int64 {
	if c.headroom == nil {
		c.headroom = switchdrv.PortHeadroomsFor(c.f, c.sw)
	}
	return c.headroom[i]
}

func (c *compiler) compile() error {
	p := &c.f.Policy
	// Per port two bindings, the MTU and flow control; the policies,
	// profiles and named objects are about 17 with the preset's classes.
	c.d.Reserve(4*len(c.sw.Ports) + 8 + 3*len(p.Classes))
	// lossless are the priorities whose received pause the ports honour
	// (pfc-enable, the reaction), send those they generate pause for
	// (pfc-queues with headroom): the same but in semi-lossless mode,
	// where send is empty (portfacts, one home for both).
	lossless, send := portfacts.HonourPriorities(c.f), portfacts.SendPriorities(c.f)
	if len(lossless) > 0 && p.GlobalPause {
		return fmt.Errorf("802.3x flow-control and PFC are mutually exclusive on SR Linux interfaces")
	}
	if p.Mode == intent.ModeSemiLossless {
		c.d.Notes = append(c.d.Notes, fmt.Sprintf("semi-lossless: PFC is enabled on the ports with a mapping profile that reacts to received pause on priorities %v (received-pfc-pause-frames) and maps no traffic to a pfc-queue (received-traffic), so the switch honours the hosts' pause and never generates pause itself; no PFC headroom is reserved", lossless))
	}
	var ecnClasses []intent.Class
	profileOf := map[string]string{}
	for _, cl := range p.Classes {
		if cl.ECN != nil {
			if other, dup := profileOf[ECNProfile(cl.Name)]; dup {
				return fmt.Errorf("classes %q and %q both become profile %s: rename one", other, cl.Name, ECNProfile(cl.Name))
			}
			profileOf[ECNProfile(cl.Name)] = cl.Name
			ecnClasses = append(ecnClasses, cl)
		}
	}
	if len(ecnClasses) > 0 {
		if err := c.d.Update(struct{}{}, elemQos, elemExplicitCongestionNotification); err != nil {
			return err
		}
	} else {
		// Nothing marks any more (ECN turned off on the last ECN class,
		// or mode pfc-only): the presence an earlier apply merged goes,
		// and with it the output buffers only ECN queues needed. A gNMI
		// Delete of a path the switch lacks is no error (gNMI
		// specification 3.4.6).
		c.d.Deletes = append(c.d.Deletes,
			&gnmipb.Path{Elem: []*gnmipb.PathElem{elemQos, elemExplicitCongestionNotification}},
			&gnmipb.Path{Elem: []*gnmipb.PathElem{elemQos, elemBufferManagement, switchdrv.Elem("buffer-allocation-profile", "name", OutputBuffers)}})
	}
	// A class without ECN loses the WRED-ECN profile an earlier apply
	// gave it (the profile is named for the class; its queue's binding,
	// replaced below, no longer names it).
	for _, cl := range p.Classes {
		if cl.ECN == nil {
			c.d.Deletes = append(c.d.Deletes, &gnmipb.Path{Elem: []*gnmipb.PathElem{elemQos, elemBufferManagement, switchdrv.Elem("queue-management-profile", "name", ECNProfile(cl.Name))}})
		}
	}

	// The WRED-ECN profiles are named after the classes: one an earlier
	// intent named for a class since renamed or removed is stale, and plan
	// deletes it once no interface's queue names it (switchdrv.Owned:
	// fabricctl's own by the FABRICCTL_ECN_ prefix, never another's).
	c.d.Owned = append(c.d.Owned, switchdrv.Owned{
		List:   &gnmipb.Path{Elem: []*gnmipb.PathElem{elemQos, elemBufferManagement, {Name: "queue-management-profile"}}},
		Key:    "name",
		Prefix: ecnPrefix,
		Scope:  &gnmipb.Path{Elem: []*gnmipb.PathElem{elemQos, elemInterfaces}},
	})

	if err := c.namedObjects(send); err != nil {
		return err
	}

	// Classifier: every DSCP, explicitly (a routed subinterface cannot take
	// a default forwarding class).
	dp := dscpPolicy{Name: DSCPPolicy, DSCP: make([]dscpEntry, 64)}
	for d, prio := range p.DSCPToPriority() {
		dp.DSCP[d] = dscpEntry{Value: d, ForwardingClass: fc(prio)}
	}
	if err := c.d.Replace(dp, elemQos, elemClassifiers, switchdrv.Elem("dscp-policy", "name", DSCPPolicy)); err != nil {
		return err
	}

	// Scheduler: sequence 0 strict, sequence 1 weighted.
	sp := schedulerPolicy{Name: SchedulerPolicy}
	var strict, wrr []schedInput
	for _, cl := range p.Classes {
		in := schedInput{ID: cl.Name, InputType: "queue", QueueName: queue(cl.Priority)}
		if cl.Strict {
			strict = append(strict, in)
			continue
		}
		if cl.Weight < 1 || cl.Weight > maxWeight {
			return fmt.Errorf("class %s: weight %d outside SR Linux's 1..%d", cl.Name, cl.Weight, maxWeight)
		}
		in.Weight = cl.Weight
		wrr = append(wrr, in)
	}
	if len(strict) > 0 {
		sp.Scheduler = append(sp.Scheduler, scheduler{Sequence: 0, Priority: "strict", Input: strict})
	}
	if len(wrr) > 0 {
		sp.Scheduler = append(sp.Scheduler, scheduler{Sequence: 1, Input: wrr})
	}
	if err := c.d.Replace(sp, elemQos, elemSchedulerPolicies, switchdrv.Elem("scheduler-policy", "name", SchedulerPolicy)); err != nil {
		return err
	}

	// WRED-ECN profiles: enable-ecn and drop probability sent explicitly.
	for _, cl := range ecnClasses {
		q := queueMgmtProfile{Name: ECNProfile(cl.Name)}
		q.WRED.Slope = []wredSlope{{
			TrafficType: "all", DropProbability: "all", EnableECN: true, SlopeEnabled: true,
			MinThreshold:   strconv.FormatInt(cl.ECN.MinBytes, 10),
			MaxThreshold:   strconv.FormatInt(cl.ECN.MaxBytes, 10),
			MaxDropPercent: cl.ECN.Probability,
		}}
		if err := c.d.Replace(q, elemQos, elemBufferManagement, switchdrv.Elem("queue-management-profile", "name", q.Name)); err != nil {
			return err
		}
	}

	// Output buffers: srl_nokia-qos (v23.10-v25.3, qos-interface-queue-root-top)
	// refuses a queue-management-profile on an output queue unless the
	// interface's output buffer-allocation-profile gives that queue a
	// maximum-burst-size other than 0 ("cannot be configured without setting
	// maximum burst size"). A non-zero MBS is a static limit that replaces
	// the chip's dynamic (alpha) one on 7220 IXR.
	if len(ecnClasses) > 0 {
		out := bufferProfile{Name: OutputBuffers}
		for _, cl := range ecnClasses {
			out.Queues.Queue = append(out.Queues.Queue, queueBuffer{Name: queue(cl.Priority), MaximumBurstSize: c.outputMBS(&cl)})
		}
		if err := c.d.Replace(out, elemQos, elemBufferManagement, switchdrv.Elem("buffer-allocation-profile", "name", out.Name)); err != nil {
			return err
		}
		if len(send) > 0 {
			c.d.Notes = append(c.d.Notes, fmt.Sprintf("output queues of ECN classes get a static maximum-burst-size (%s): lossless queues as much as every inventory port's pfc-queue can hold, so PFC, not the egress queue, stops lossless traffic; lossy queues twice their ECN max", OutputBuffers))
		} else {
			c.d.Notes = append(c.d.Notes, fmt.Sprintf("output queues of ECN classes get a static maximum-burst-size (%s) of twice their ECN max: the switch sends no pause in %s mode, so a queue that fills past it drops", OutputBuffers, modeName(p.Mode)))
		}
	}

	// PFC: headroom buffer profiles and the mapping profile with the watchdog.
	portBuffer := map[string]string{}
	if len(send) > 0 {
		byBytes := map[int64]string{} // the profile of each size
		var total int64
		for i, port := range c.sw.Ports {
			h := c.portHeadroom(i)
			total += h * int64(len(send))
			name, ok := byBytes[h]
			if !ok {
				name = bufferPrefix + strconv.FormatInt(h, 10)
				byBytes[h] = name
			}
			portBuffer[port.Name] = name
		}
		if total > 0 {
			// The pfc-queues draw their headroom from the forwarding
			// complex's PFC reserved buffer, a percentage of the chip
			// buffer (linecard forwarding-complex input
			// pfc-buffer-reservation, default 1 %) that fabricctl cannot
			// size without knowing the chip.
			c.d.Notes = append(c.d.Notes, fmt.Sprintf("PFC headroom: the inventory ports need %d bytes of PFC reserved buffer in total; check /qos/linecard/forwarding-complex/input/pfc-reserved-buffer-size (state) and raise pfc-buffer-reservation (default 1 %%) if it is smaller", total))
		}
		sizes := make([]int64, 0, len(byBytes))
		for h := range byBytes {
			sizes = append(sizes, h)
		}
		sort.Slice(sizes, func(i, j int) bool { return sizes[i] < sizes[j] })
		for _, h := range sizes {
			bp := bufferProfile{Name: bufferPrefix + strconv.FormatInt(h, 10)}
			for _, prio := range send {
				bp.Queues.PFCQueue = append(bp.Queues.PFCQueue, pfcQueueBuffer{
					Name: pfcQueue(prio), MaximumBurstSize: c.pfcMBS(prio), ReservedBytes: h,
				})
			}
			if err := c.d.Replace(bp, elemQos, elemBufferManagement, switchdrv.Elem("buffer-allocation-profile", "name", bp.Name)); err != nil {
				return err
			}
		}
	}
	if len(lossless) > 0 {
		dl := &deadlock{Enable: false}
		wd := p.Watchdog
		if wd.Enabled {
			det, rec := int(wd.Detect.Milliseconds()), int(wd.Restore.Milliseconds())
			if det < quirks.WatchdogMin || det > quirks.WatchdogMax {
				return fmt.Errorf("pfc watchdog detect %dms outside SR Linux's %d..%d ms", det, quirks.WatchdogMin, quirks.WatchdogMax)
			}
			if rec < recoveryMinMS || rec > recoveryMaxMS {
				return fmt.Errorf("pfc watchdog restore %dms outside SR Linux's %d..%d ms", rec, recoveryMinMS, recoveryMaxMS)
			}
			dl = &deadlock{Enable: true, DetectionTimer: det, RecoveryTimer: rec}
			// SR Linux deadlock recovery (srl_nokia-qos pfc-mapping-profile
			// received-pfc-pause-frames/deadlock, recovery-timer: "the
			// queue ignores received PFC pause frames") keeps the stuck
			// queue transmitting: SONiC's "forward", not "drop".
			if wd.Action != "" && wd.Action != intent.WatchdogForward {
				c.d.Notes = append(c.d.Notes, fmt.Sprintf("SR Linux deadlock recovery ignores received pause frames on the stuck queue for the recovery timer and keeps transmitting (what SONiC calls forward); the action is not configurable, so watchdog action %q is not what happens on this switch", wd.Action))
			}
		}
		var mp any = mappingProfile(send, lossless, pauseAsLeaf, dl)
		if c.prof.Shapes.PFCPauseFramePriority == profile.ShapeLeafList {
			mp = mappingProfile(send, lossless, pauseAsLeafList, dl)
		}
		if err := c.d.Replace(mp, elemQos, switchdrv.Elem("pfc-mapping-profile", "name", PFCProfile)); err != nil {
			return err
		}
	}

	// Per port: the port's QoS binding and its subinterface's classifier.
	var ecnQueues []ifQueue
	for _, cl := range ecnClasses {
		ecnQueues = append(ecnQueues, ifQueue{Name: queue(cl.Priority), Profile: ECNProfile(cl.Name)})
	}
	// What every port's binding has alike is one value all of them point
	// to (the encoder only reads them); the bindings themselves, the
	// subinterface numbers and the paths' element lists are taken from
	// one array each rather than allocated per port.
	output := &ifOutput{}
	output.Scheduler.Policy = SchedulerPolicy
	if len(ecnQueues) > 0 {
		output.Queues = &struct {
			Queue []ifQueue `json:"queue"`
		}{Queue: ecnQueues}
		output.BufferProfile = OutputBuffers
	}
	var pfc *ifPFC
	inputs := map[string]*ifInput{} // by PFC buffer profile
	if len(lossless) > 0 {
		pfc = &ifPFC{Profile: PFCProfile, Enable: true}
	}
	classified := &ifInput{Classifiers: &struct {
		DSCPPolicy string `json:"dscp-policy"`
	}{DSCPPolicy: DSCPPolicy}}
	n := len(c.sw.Ports)
	bindings := make([]qosInterface, 2*n)
	subs := make([]int, n)
	// Per port: two binding paths of 3 elements, the MTU's of 2 and flow
	// control's of 3.
	elems := make([]*gnmipb.PathElem, 0, 11*n)
	path := func(es ...*gnmipb.PathElem) []*gnmipb.PathElem {
		start := len(elems)
		elems = append(elems, es...)
		return elems[start:len(elems):len(elems)]
	}
	for i, port := range c.sw.Ports {
		qi := &bindings[2*i]
		*qi = qosInterface{ID: port.Name, InterfaceRef: interfaceRef{Interface: port.Name}, Output: output}
		if pfc != nil {
			qi.PFC = pfc
		}
		if len(send) > 0 {
			in := inputs[portBuffer[port.Name]]
			if in == nil {
				in = &ifInput{PFCBufferProfile: portBuffer[port.Name]}
				inputs[portBuffer[port.Name]] = in
			}
			qi.Input = in
		}
		if err := c.d.Replace(qi, path(elemQos, elemInterfaces, portElem("interface", "interface-id", port.Name))...); err != nil {
			return err
		}
		subs[i] = port.Subinterface
		sid := port.Name + "." + strconv.Itoa(port.Subinterface)
		si := &bindings[2*i+1]
		*si = qosInterface{ID: sid, InterfaceRef: interfaceRef{Interface: port.Name, Subinterface: &subs[i]}, Input: classified}
		if err := c.d.Replace(si, path(elemQos, elemInterfaces, portElem("interface", "interface-id", sid))...); err != nil {
			return err
		}
	}
	// srl_nokia-interfaces: a routed subinterface forwards IP packets only
	// up to its ip-mtu, whose default is /system/mtu/default-ip-mtu (1500).
	// The subinterfaces are the operator's (routed or bridged, with their
	// addresses): fabricctl neither creates them nor sets their MTU, but
	// plan reads them (requirements) and refuses a port without one, or
	// with an MTU below the RoCE packets, before anything is written.
	if len(c.sw.Ports) > 0 {
		c.d.Requires = requirements(c.f, c.sw)
		c.d.Notes = append(c.d.Notes, fmt.Sprintf("subinterfaces are not created: the DSCP classifier attaches to each port's subinterface (e.g. %s.%d), which must exist (a leafref) and carry the intent's MTU (routed: ip-mtu %d, the default-ip-mtu is 1500 out of the box; bridged: l2-mtu of at least the port mtu); plan checks both", c.sw.Ports[0].Name, c.sw.Ports[0].Subinterface, c.f.PortMTU(c.sw.Ports[0])))
	}
	// 802.3x pause: one merge of the flow-control container per port; the
	// value is the same on every port, so it is encoded once (read-only).
	fcJSON, err := json.Marshal(flowControl{Receive: p.GlobalPause, Transmit: p.GlobalPause})
	if err != nil {
		return fmt.Errorf("marshal flow-control: %w", err)
	}
	for _, port := range c.sw.Ports {
		ipMTU := c.f.PortMTU(port)
		mtu := PortMTU(ipMTU, port.Subinterface)
		if mtu < portMTUMin || mtu > portMTUMax {
			return fmt.Errorf("port %s: IP MTU %d is port mtu %d, outside the 7220 IXR's %d..%d", port.Name, ipMTU, mtu, portMTUMin, portMTUMax)
		}
		// Both paths start at the port's interface element, read-only
		// like the keyless ones (TestSharedPathElems).
		iface := portElem("interface", "name", port.Name)
		c.d.UpdateJSON(strconv.AppendInt(nil, int64(mtu), 10), path(iface, elemMtu)...)
		c.d.UpdateJSON(fcJSON, path(iface, elemEthernet, elemFlowControl)...)
	}
	return nil
}

// namedObjects merges the forwarding classes, queues and pfc-queues the
// payloads name. From SR Linux 24.3 fc<N>, unicast-<N> and pfc<N> in the
// policies are leafrefs to /qos/forwarding-classes, /qos/queues/queue and
// /qos/queues/pfc-queue, and a fresh install has none of them (they are
// created only on upgrade: Nokia SR Linux QoS guide 24.10, "Named queues and
// forwarding classes"). fabricctl uses the standard names with their own
// index, which every release accepts (the unicast-queue must allows fc[0-7]
// on a default queue; the pfc-queue must keeps pfc<N> on index N), and
// merges them so that what an upgrade created stays as it is. On 7220 IXR
// (feature qos-multicast-queue) a forwarding class has a unicast and a
// multicast queue, which must differ (must ". != ../multicast-queue"): the
// default multicast-<N> (the name the multicast-queue must builds with
// concat("multicast-", queue-index)).
func (c *compiler) namedObjects(lossless []int) error {
	p := &c.f.Policy
	used := map[int]bool{}
	for _, cl := range p.Classes {
		used[cl.Priority] = true
	}
	for _, prio := range p.DSCPToPriority() {
		used[prio] = true
	}
	prios := make([]int, 0, len(used))
	for prio := range used {
		prios = append(prios, prio)
	}
	sort.Ints(prios)
	var names []string
	for _, prio := range prios {
		fcObj := forwardingClass{Name: fc(prio), Index: prio}
		fcObj.Output.UnicastQueue, fcObj.Output.MulticastQueue = queue(prio), mcQueue(prio)
		if err := c.d.Update(fcObj, elemQos, elemForwardingClasses, switchdrv.Elem("forwarding-class", "name", fcObj.Name)); err != nil {
			return err
		}
		for _, q := range []string{queue(prio), mcQueue(prio)} {
			if err := c.d.Update(namedQueue{Name: q, Index: prio}, elemQos, elemQueues, switchdrv.Elem("queue", "name", q)); err != nil {
				return err
			}
		}
		names = append(names, fc(prio)+"->"+queue(prio)+"/"+mcQueue(prio))
	}
	for _, prio := range lossless {
		if err := c.d.Update(namedPFCQueue{Name: pfcQueue(prio), Index: prio}, elemQos, elemQueues, switchdrv.Elem("pfc-queue", "pfc-queue-name", pfcQueue(prio))); err != nil {
			return err
		}
		names = append(names, pfcQueue(prio))
	}
	c.d.Notes = append(c.d.Notes, fmt.Sprintf("named forwarding classes and queues (SR Linux >= 24.3 creates none on a fresh install): merging %s; a forwarding class of another name on one of these indexes makes the switch refuse the standard name: rename it first", strings.Join(names, ", ")))
	return nil
}

// pfcMBS is the maximum-burst-size of the pfc-queue of priority prio: on
// 7220 IXR the pfc-queue sends pause when it holds more (srl_nokia-qos
// buffer-allocation-profile pfc-queue maximum-burst-size, feature
// qos-pfc-xgs, default 51200), so it sits above the class's ECN Kmax
// (portfacts.PFCQueueMBS, the port's XOFF point): the queue marks before
// its ingress pauses.
func (c *compiler) pfcMBS(prio int) int64 {
	return portfacts.PFCQueueMBS(c.f.Policy.ClassByPriority(prio), c.f.Policy.MTU)
}

// maxMBS is the largest maximum-burst-size srl_nokia-qos takes (uint32).
const maxMBS = 1<<32 - 1

// outputMBS is the output maximum-burst-size of an ECN class's queue. A
// lossless queue may hold everything the inventory ports' pfc-queues of
// its priority let in (their MBS plus headroom): PFC, not an egress tail
// drop, must stop lossless traffic. A lossy queue gets twice its ECN max,
// room to mark before it drops without taking the shared buffer.
func (c *compiler) outputMBS(cl *intent.Class) int64 {
	mbs := 2 * cl.ECN.MaxBytes
	if cl.Lossless && c.f.Policy.Mode.SwitchSendsPause() {
		mbs = int64(len(c.sw.Ports)) * c.pfcMBS(cl.Priority)
		for i := range c.sw.Ports {
			mbs += c.portHeadroom(i)
		}
	}
	return min(max(mbs, cl.ECN.MaxBytes), maxMBS)
}

// flowControl is /interface/ethernet/flow-control (srl_nokia-interfaces).
type flowControl struct {
	Receive  bool `json:"receive"`
	Transmit bool `json:"transmit"`
}

// The path elements without keys the compiler writes, one of each for
// every path of every switch: they are read only (the transport encodes
// them, compare and the twins read them; nothing in fabricctl changes a
// compiled path), and a fabric's payloads share them rather than holding
// thousands of copies the garbage collector marks on every cycle.
var (
	elemBufferManagement               = &gnmipb.PathElem{Name: "buffer-management"}
	elemClassifiers                    = &gnmipb.PathElem{Name: "classifiers"}
	elemEthernet                       = &gnmipb.PathElem{Name: "ethernet"}
	elemExplicitCongestionNotification = &gnmipb.PathElem{Name: "explicit-congestion-notification"}
	elemFlowControl                    = &gnmipb.PathElem{Name: "flow-control"}
	elemForwardingClasses              = &gnmipb.PathElem{Name: "forwarding-classes"}
	elemInterfaces                     = &gnmipb.PathElem{Name: "interfaces"}
	elemMtu                            = &gnmipb.PathElem{Name: "mtu"}
	elemQos                            = &gnmipb.PathElem{Name: "qos"}
	elemQueues                         = &gnmipb.PathElem{Name: "queues"}
	elemSchedulerPolicies              = &gnmipb.PathElem{Name: "scheduler-policies"}
)

// The keyed path elements of ports (interface[name=ethernet-1/1], ...)
// are shared the same way: by every switch of a fabric that has a port of
// that name, which is most of them. The set is bounded: past 16,384 names
// a port's element is its own again.
var portElems = memo.Bounded[portElemKey, *gnmipb.PathElem]{Max: 1 << 14}

type portElemKey struct{ name, key, value string }

// portElem is the read-only path element name[key=value] of a port.
func portElem(name, key, value string) *gnmipb.PathElem {
	return portElems.Get(portElemKey{name, key, value}, func() *gnmipb.PathElem {
		return switchdrv.Elem(name, key, value)
	})
}

// sharedElems lists the shared path elements (for the test that holds
// them unchanged).
func sharedElems() []*gnmipb.PathElem {
	return []*gnmipb.PathElem{elemBufferManagement, elemClassifiers, elemEthernet, elemExplicitCongestionNotification,
		elemFlowControl, elemForwardingClasses, elemInterfaces, elemMtu, elemQos, elemQueues, elemSchedulerPolicies}
}
