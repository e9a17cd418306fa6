// Package oc compiles the intent into gNMI SetRequests for a switch that
// speaks plain OpenConfig (openconfig-qos 2.2.0, JSON_IETF, no origin).
//
// openconfig-qos has no model for PFC, PFC watchdog or headroom, so Compile
// leaves them out, says so in Desired.Notes, and Quirks.PFC is false: the
// check command reports it as a finding instead of silently skipping it.
//
// What fabricctl owns, and so replaces: the queues, forwarding groups and
// scheduler inputs named after the intent's classes (upper case), the
// classifiers FABRICCTL_V4/FABRICCTL_V6, the queue-management profiles
// FABRICCTL_ECN_<CLASS>, the scheduler policy FABRICCTL and, for every
// inventory port, /qos/interfaces/interface[interface-id=<port>]. Merged
// (update): /interfaces/interface[name=<port>] with config name, type
// ethernetCsmacd and mtu, the intent's IP MTU plus the 14-byte Ethernet
// header (the model's mtu is the frame size). What an earlier intent named
// after a class since renamed or removed (its queue, forwarding group and
// FABRICCTL_ECN_ profile) plan deletes once nothing names it
// (switchdrv.Owned; the queue and group only where fabricctl's own
// scheduler policy or classifiers name them on the switch).
package oc

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv"
)

// ocInterface is the part of openconfig-interfaces interface that Compile
// merges.
type ocInterface struct {
	Name   string `json:"name"`
	Config struct {
		Name string `json:"name"`
		Type string `json:"type"`
		MTU  int    `json:"mtu"`
	} `json:"config"`
}

// ethOverhead is the untagged Ethernet header the interface mtu counts on
// top of the IP MTU (openconfig-interfaces: 1514 on Ethernet).
const ethOverhead = 14

// Names of the entries fabricctl owns.
const (
	ClassifierV4    = "FABRICCTL_V4"
	ClassifierV6    = "FABRICCTL_V6"
	SchedulerPolicy = "FABRICCTL"
	ecnPrefix       = "FABRICCTL_ECN_"
)

// NotePFC is the note Compile adds when the intent has lossless classes.
const NotePFC = "PFC (priority flow control, its watchdog and headroom) is not expressible in openconfig-qos: configure it out of band on this switch"

// quirks are read from the OpenConfig profile (internal/profile/data/profiles/openconfig.json).
var quirks = switchdrv.DefaultQuirks(intent.PlatformOpenConfig)

// Platform is the plain OpenConfig platform.
type Platform struct{}

// Register adds the OpenConfig platform to r.
func Register(r *switchdrv.Registry) error { return r.Register(Platform{}) }

// Name implements switchdrv.Platform.
func (Platform) Name() intent.Platform { return intent.PlatformOpenConfig }

// Quirks implements switchdrv.Platform.
func (Platform) Quirks() switchdrv.Quirks { return quirks }

// QueueName is the queue, forwarding group and scheduler input name of a class.
func QueueName(class string) string { return strings.ToUpper(class) }

// ECNProfile is the queue-management profile name of a class.
func ECNProfile(class string) string { return ecnPrefix + strings.ToUpper(class) }

type (
	named struct {
		Name string `json:"name"`
	}
	queue struct {
		Name   string `json:"name"`
		Config struct {
			Name    string `json:"name"`
			QueueID int    `json:"queue-id"`
		} `json:"config"`
	}
	fwdGroup struct {
		Name   string `json:"name"`
		Config struct {
			Name        string `json:"name"`
			OutputQueue string `json:"output-queue"`
		} `json:"config"`
	}
	classifier struct {
		Name   string `json:"name"`
		Config struct {
			Name string `json:"name"`
			Type string `json:"type"`
		} `json:"config"`
		Terms struct {
			Term []term `json:"term"`
		} `json:"terms"`
	}
	term struct {
		ID     string `json:"id"`
		Config struct {
			ID string `json:"id"`
		} `json:"config"`
		Conditions *conditions `json:"conditions,omitempty"`
		Actions    struct {
			Config struct {
				TargetGroup string `json:"target-group"`
			} `json:"config"`
		} `json:"actions"`
	}
	conditions struct {
		IPv4 *dscpCond `json:"ipv4,omitempty"`
		IPv6 *dscpCond `json:"ipv6,omitempty"`
	}
	dscpCond struct {
		Config struct {
			DSCPSet []int `json:"dscp-set"`
		} `json:"config"`
	}
	qmProfile struct {
		Name   string `json:"name"`
		Config named  `json:"config"`
		WRED   struct {
			Uniform struct {
				Config wredConfig `json:"config"`
			} `json:"uniform"`
		} `json:"wred"`
	}
	wredConfig struct {
		MinThreshold   string `json:"min-threshold"`
		MaxThreshold   string `json:"max-threshold"`
		MaxDropPercent int    `json:"max-drop-probability-percent"`
		EnableECN      bool   `json:"enable-ecn"`
		Drop           bool   `json:"drop"`
	}
	schedPolicy struct {
		Name       string `json:"name"`
		Config     named  `json:"config"`
		Schedulers struct {
			Scheduler []sched `json:"scheduler"`
		} `json:"schedulers"`
	}
	sched struct {
		Sequence int `json:"sequence"`
		Config   struct {
			Sequence int    `json:"sequence"`
			Priority string `json:"priority,omitempty"`
		} `json:"config"`
		Inputs struct {
			Input []schedInput `json:"input"`
		} `json:"inputs"`
	}
	schedInput struct {
		ID     string `json:"id"`
		Config struct {
			ID        string `json:"id"`
			InputType string `json:"input-type"`
			Queue     string `json:"queue"`
			Weight    string `json:"weight,omitempty"`
		} `json:"config"`
	}
	qosInterface struct {
		ID     string `json:"interface-id"`
		Config struct {
			ID string `json:"interface-id"`
		} `json:"config"`
		InterfaceRef struct {
			Config struct {
				Interface string `json:"interface"`
			} `json:"config"`
		} `json:"interface-ref"`
		Input struct {
			Classifiers struct {
				Classifier []ifClassifier `json:"classifier"`
			} `json:"classifiers"`
		} `json:"input"`
		Output struct {
			SchedulerPolicy struct {
				Config named `json:"config"`
			} `json:"scheduler-policy"`
			Queues *struct {
				Queue []ifQueue `json:"queue"`
			} `json:"queues,omitempty"`
		} `json:"output"`
	}
	ifClassifier struct {
		Type   string `json:"type"`
		Config struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"config"`
	}
	ifQueue struct {
		Name   string `json:"name"`
		Config struct {
			Name    string `json:"name"`
			Profile string `json:"queue-management-profile"`
		} `json:"config"`
	}
)

// Compile implements switchdrv.Platform.
func (Platform) Compile(f *intent.Fabric, sw *intent.Switch) (*switchdrv.Desired, error) {
	return switchdrv.Compile(intent.PlatformOpenConfig, f, sw, func(d *switchdrv.Desired) error {
		return (&compiler{f: f, sw: sw, d: d}).compile()
	})
}

type compiler struct {
	f  *intent.Fabric
	sw *intent.Switch
	d  *switchdrv.Desired
}

func (c *compiler) compile() error {
	p := &c.f.Policy
	if p.Mode == intent.ModeSemiLossless || p.Mode == intent.ModePFCOnly {
		// Both modes are PFC and nothing else in its place (pfc-only
		// drops ECN, semi-lossless's point is how pause is handled):
		// what openconfig-qos could compile would be neither.
		return switchdrv.ModeUnsupported(p.Mode, "openconfig-qos has no PFC, pause or watchdog model, and the mode is about PFC; use the switch's native platform (srlinux, sonic, eos) or mode lossy")
	}
	if len(p.LosslessPriorities()) > 0 {
		c.d.Notes = append(c.d.Notes, NotePFC)
	}
	for _, cl := range p.Classes {
		var q queue
		q.Name, q.Config.Name, q.Config.QueueID = QueueName(cl.Name), QueueName(cl.Name), cl.Priority
		if err := c.d.Replace(q, switchdrv.Elem("qos"), switchdrv.Elem("queues"), switchdrv.Elem("queue", "name", q.Name)); err != nil {
			return err
		}
	}
	for _, cl := range p.Classes {
		var g fwdGroup
		g.Name, g.Config.Name, g.Config.OutputQueue = QueueName(cl.Name), QueueName(cl.Name), QueueName(cl.Name)
		if err := c.d.Replace(g, switchdrv.Elem("qos"), switchdrv.Elem("forwarding-groups"), switchdrv.Elem("forwarding-group", "name", g.Name)); err != nil {
			return err
		}
	}
	for _, af := range []struct{ name, typ string }{{ClassifierV4, "IPV4"}, {ClassifierV6, "IPV6"}} {
		cls := classifier{Name: af.name}
		cls.Config.Name, cls.Config.Type = af.name, af.typ
		var def *intent.Class
		for i, cl := range p.Classes {
			if cl.Default {
				def = &p.Classes[i]
			}
			if len(cl.DSCP) == 0 || cl.Default {
				continue
			}
			var t term
			t.ID = fmt.Sprintf("%02d-%s", 10+len(cls.Terms.Term)*10, cl.Name)
			t.Config.ID = t.ID
			dc := &dscpCond{}
			dc.Config.DSCPSet = cl.DSCP
			if af.typ == "IPV4" {
				t.Conditions = &conditions{IPv4: dc}
			} else {
				t.Conditions = &conditions{IPv6: dc}
			}
			t.Actions.Config.TargetGroup = QueueName(cl.Name)
			cls.Terms.Term = append(cls.Terms.Term, t)
		}
		if def != nil {
			var t term
			t.ID = "99-" + def.Name
			t.Config.ID = t.ID
			t.Actions.Config.TargetGroup = QueueName(def.Name)
			cls.Terms.Term = append(cls.Terms.Term, t)
		}
		if err := c.d.Replace(cls, switchdrv.Elem("qos"), switchdrv.Elem("classifiers"), switchdrv.Elem("classifier", "name", cls.Name)); err != nil {
			return err
		}
	}
	// What an earlier intent named after a class since renamed or
	// removed is stale, and plan deletes it once nothing names it
	// (switchdrv.Owned): the WRED-ECN profiles by their FABRICCTL_ECN_
	// prefix; the queues and forwarding groups, named after the class
	// alone, only where fabricctl's own scheduler policy FABRICCTL or
	// classifiers FABRICCTL_V4/V6 name them on the switch (they point only
	// at what fabricctl wrote), never a queue or group of another's.
	qos := func(el ...*gnmipb.PathElem) *gnmipb.Path {
		return &gnmipb.Path{Elem: append([]*gnmipb.PathElem{switchdrv.Elem("qos")}, el...)}
	}
	scope := qos()
	c.d.Owned = append(c.d.Owned,
		switchdrv.Owned{List: qos(switchdrv.Elem("queue-management-profiles"), switchdrv.Elem("queue-management-profile")), Key: "name", Prefix: ecnPrefix, Scope: scope},
		switchdrv.Owned{List: qos(switchdrv.Elem("queues"), switchdrv.Elem("queue")), Key: "name", Scope: scope,
			By: []*gnmipb.Path{qos(switchdrv.Elem("scheduler-policies"), switchdrv.Elem("scheduler-policy", "name", SchedulerPolicy))}},
		switchdrv.Owned{List: qos(switchdrv.Elem("forwarding-groups"), switchdrv.Elem("forwarding-group")), Key: "name", Scope: scope,
			By: []*gnmipb.Path{
				qos(switchdrv.Elem("classifiers"), switchdrv.Elem("classifier", "name", ClassifierV4)),
				qos(switchdrv.Elem("classifiers"), switchdrv.Elem("classifier", "name", ClassifierV6)),
			}},
	)
	var ecnQueues []ifQueue
	for _, cl := range p.Classes {
		if cl.ECN == nil {
			// ECN turned off on the class: the profile an earlier apply
			// named for it goes too (the queue binding, replaced with the
			// interface, no longer names it; a gNMI Delete of a path the
			// target lacks is no error, gNMI specification 3.4.6).
			c.d.Deletes = append(c.d.Deletes, &gnmipb.Path{Elem: []*gnmipb.PathElem{switchdrv.Elem("qos"), switchdrv.Elem("queue-management-profiles"), switchdrv.Elem("queue-management-profile", "name", ECNProfile(cl.Name))}})
			continue
		}
		qm := qmProfile{Name: ECNProfile(cl.Name), Config: named{ECNProfile(cl.Name)}}
		qm.WRED.Uniform.Config = wredConfig{
			MinThreshold: strconv.FormatInt(cl.ECN.MinBytes, 10), MaxThreshold: strconv.FormatInt(cl.ECN.MaxBytes, 10),
			MaxDropPercent: cl.ECN.Probability, EnableECN: true, Drop: false,
		}
		if err := c.d.Replace(qm, switchdrv.Elem("qos"), switchdrv.Elem("queue-management-profiles"), switchdrv.Elem("queue-management-profile", "name", qm.Name)); err != nil {
			return err
		}
		var iq ifQueue
		iq.Name, iq.Config.Name, iq.Config.Profile = QueueName(cl.Name), QueueName(cl.Name), qm.Name
		ecnQueues = append(ecnQueues, iq)
	}
	sp := schedPolicy{Name: SchedulerPolicy, Config: named{SchedulerPolicy}}
	var strict, wrr []schedInput
	for _, cl := range p.Classes {
		var in schedInput
		in.ID, in.Config.ID, in.Config.InputType, in.Config.Queue = QueueName(cl.Name), QueueName(cl.Name), "QUEUE", QueueName(cl.Name)
		if cl.Strict {
			strict = append(strict, in)
			continue
		}
		in.Config.Weight = strconv.Itoa(cl.Weight)
		wrr = append(wrr, in)
	}
	seq := 0
	if len(strict) > 0 {
		var s sched
		s.Sequence, s.Config.Sequence, s.Config.Priority = seq, seq, "STRICT"
		s.Inputs.Input = strict
		sp.Schedulers.Scheduler = append(sp.Schedulers.Scheduler, s)
		seq++
	}
	if len(wrr) > 0 {
		var s sched
		s.Sequence, s.Config.Sequence = seq, seq
		s.Inputs.Input = wrr
		sp.Schedulers.Scheduler = append(sp.Schedulers.Scheduler, s)
	}
	if err := c.d.Replace(sp, switchdrv.Elem("qos"), switchdrv.Elem("scheduler-policies"), switchdrv.Elem("scheduler-policy", "name", SchedulerPolicy)); err != nil {
		return err
	}
	sort.Slice(ecnQueues, func(i, j int) bool { return ecnQueues[i].Name < ecnQueues[j].Name })
	for _, port := range c.sw.Ports {
		var qi qosInterface
		qi.ID, qi.Config.ID, qi.InterfaceRef.Config.Interface = port.Name, port.Name, port.Name
		for _, af := range []struct{ name, typ string }{{ClassifierV4, "IPV4"}, {ClassifierV6, "IPV6"}} {
			var ic ifClassifier
			ic.Type, ic.Config.Type, ic.Config.Name = af.typ, af.typ, af.name
			qi.Input.Classifiers.Classifier = append(qi.Input.Classifiers.Classifier, ic)
		}
		qi.Output.SchedulerPolicy.Config.Name = SchedulerPolicy
		if len(ecnQueues) > 0 {
			qi.Output.Queues = &struct {
				Queue []ifQueue `json:"queue"`
			}{Queue: ecnQueues}
		}
		if err := c.d.Replace(qi, switchdrv.Elem("qos"), switchdrv.Elem("interfaces"), switchdrv.Elem("interface", "interface-id", port.Name)); err != nil {
			return err
		}
	}
	for _, port := range c.sw.Ports {
		// The intent's MTU is the IP MTU; openconfig-interfaces' mtu is
		// the frame ("e.g., 1514 bytes on an Ethernet interface"), without
		// FCS: add the Ethernet header.
		mtu := c.f.PortMTU(port) + ethOverhead
		if mtu < 0 || mtu > 65535 {
			return fmt.Errorf("port %s: IP MTU %d is interface mtu %d, outside 0..65535", port.Name, c.f.PortMTU(port), mtu)
		}
		// The merge names the key leaf config/name and the mandatory
		// config/type (openconfig-interfaces; every Ethernet port is
		// ethernetCsmacd), so a target that has not instantiated the
		// interface accepts it too; on one that has, they are unchanged.
		var ifc ocInterface
		ifc.Name, ifc.Config.Name, ifc.Config.Type, ifc.Config.MTU = port.Name, port.Name, "iana-if-type:ethernetCsmacd", mtu
		if err := c.d.Update(ifc, switchdrv.Elem("interfaces"), switchdrv.Elem("interface", "name", port.Name)); err != nil {
			return err
		}
	}
	return nil
}
