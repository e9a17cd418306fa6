package check

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fabricctl/fabricctl/intent"
)

// Rule is one static check. ID is stable across releases; Severity is the
// most severe finding the rule can report (some also report lesser ones).
type Rule struct {
	ID       string
	Name     string
	Severity Severity
	Summary  string
	run      func(*checker)
	// Fix says how the rule's findings are fixed: "edit" when every fix
	// it suggests carries Edits (a program can apply it, and the property
	// test does), otherwise the decision a person has to make (a rule
	// without a Fix is such a rule, e.g. the simulator's).
	Fix string
}

// fix is Fix, or "decision" for a rule that says nothing.
func (r Rule) fix() string {
	if r.Fix == "" {
		return "decision"
	}
	return r.Fix
}

// Rules returns the rule table, in ID order (a copy: callers may not change
// what Run does).
func Rules() []Rule { return slices.Clone(ruleTable) }

// ruleTable is every rule Run applies. Keep IDs stable: add new rules at the
// end, never renumber.
var ruleTable = []Rule{
	{ParseErrorID, "intent-parses", Error, "the intent is well-formed: YAML syntax, known keys, types, units and value ranges (reported by the parser)", nil, "decision: what the author meant"},
	{"FC101", "dscp-range", Error, "DSCP values of classes and the host CNP DSCP are within 0-63", (*checker).dscpRange, "edit for the host CNP DSCP; decision for a class DSCP (which value was meant)"},
	{"FC102", "dscp-unique", Error, "a DSCP value belongs to at most one class", (*checker).dscpUnique, "edit: the DSCP stays in the class it matters most to (the RoCE class for the hosts' DSCP, the CNP class for theirs, a lossless class), the default class giving it up first; decision where either class would be left unreached"},
	{"FC103", "priority-range", Error, "class priorities and the host CNP priority are within 0-7", (*checker).priorityRange, "edit for the host CNP priority; decision for a class priority"},
	{"FC104", "priority-unique", Error, "each 802.1p priority (traffic class, queue) belongs to at most one class; never the CNP class and a lossless one", (*checker).priorityUnique, "edit: the later class (the CNP class, when it is one) moves to a free priority; decision where it carries the only DSCPs that reach a lossless class"},
	{"FC105", "lossless-limit", Error, "lossless priorities per port do not exceed the platform limit (2 by default), the switch override or the policy cap", (*checker).losslessLimit, "decision: which classes stay lossless"},
	{"FC106", "pfc-expressible", Error, "every switch carrying lossless classes runs a known platform that can express PFC (plain OpenConfig cannot)", (*checker).pfcExpressible, "decision: the switch's platform"},
	{"FC107", "cnp-class", Error, "a single CNP class exists, is strict priority and is not lossless", (*checker).cnpClass, "edit; decision when there is no CNP class (its DSCP and priority)"},
	{"FC108", "cnp-host", Error, "the CNP DSCP and priority hosts send with match the switches' CNP class, and neither lands on a PFC-enabled priority", (*checker).cnpHost, "edit; decision where the CNP class carries the only DSCPs that reach a lossless class"},
	{"FC109", "ecn-lossless", Error, "every lossless class but the CNP class has ECN marking (DCQCN)", (*checker).ecnLossless, "edit; decision where the XOFF point leaves no room above one MTU (cables, lossless classes or buffer)"},
	{"FC110", "ecn-thresholds", Error, "ECN Kmin < Kmax, Kmin >= one MTU, mark probability 1-100%", (*checker).ecnThresholds, "edit; decision where the XOFF point leaves no room above one MTU (cables, lossless classes or buffer)"},
	{"FC111", "ecn-before-pfc", Error, "ECN Kmax is at most the queue depth at which the ingress sends XOFF (the platform's own XOFF point: SR Linux 7220 the pfc-queue maximum-burst-size; else buffer minus headroom), so ECN fires before PFC", (*checker).ecnBeforePFC, "edit; decision where the XOFF point leaves no room above one MTU (cables, lossless classes or buffer)"},
	{"FC112", "headroom", Error, "each port's buffer holds the PFC headroom of all its lossless priorities (max of the IEEE, SONiC and mlx5 models and, for the switch's ASIC, the vendor's lookup table)", (*checker).headroomFits, "decision: cables, MTU, lossless classes or the buffer"},
	{"FC113", "ets-weights", Error, "ETS weights of the non-strict classes sum to 100%", (*checker).etsWeights, "edit"},
	{"FC114", "watchdog-timers", Error, "PFC watchdog on where PFC is used, with poll < detect <= restore (poll above detect or restore is an error, the rest warnings)", (*checker).watchdogTimers, "edit"},
	{"FC115", "watchdog-platform", Error, "PFC watchdog timers are within the ranges each platform accepts", (*checker).watchdogPlatform, "edit"},
	{"FC116", "global-pause", Error, "802.3x global pause is off where PFC is on", (*checker).globalPause, "edit"},
	{"FC117", "link-mtu", Error, "MTU is equal on both ends of switch links and the host MTU is not above the switch port MTU", (*checker).linkMTU, "edit"},
	{"FC118", "roce-path-mtu", Error, "the RoCE path MTU is 256-4096 and fits in the host MTU with the RoCEv2 headers", (*checker).rocePathMTU, "edit"},
	{"FC119", "host-tos", Error, "host RoCE ToS is the RoCE class DSCP << 2 with ECT(0) (a lossless class; without PFC the ECN class): CE and not-ECT are errors, ECT(1) a warning", (*checker).hostToS, "edit; decision where no DSCP reaches the RoCE class and none can be given back to it or listed in it"},
	{"FC120", "dcbx-owner", Error, "a single owner of host DCB settings: host-static, or switch-willing only where fabricctl configures the host-facing switches to advertise DCBX", (*checker).dcbxOwner, "edit"},
	{"FC121", "link-endpoints", Error, "links join existing switch ports and host NICs, never an endpoint to itself", (*checker).linkEndpoints, "decision: which node or port was meant"},
	{"FC122", "link-port-reuse", Error, "no switch port or host NIC is used by two links", (*checker).linkPortReuse, "decision: which link is wrong"},
	{"FC123", "pfc-deadlock", Warning, "no cyclic buffer dependency among switches for lossless traffic (links form an up-down Clos)", (*checker).pfcDeadlock, "decision: the topology"},
	{"FC124", "link-ends", Warning, "both ends of a link agree on speed and cable length (headroom is computed from them)", (*checker).linkEnds, "decision: which end is right"},
	{"FC125", "port-mtu-platform", Error, "every switch port's IP MTU is within the range its platform accepts (EOS 68-9214, SONiC 68-9216, SR Linux 7220 IXR 1486-9398 = port mtu 1500-9412 less the Ethernet header; from the switch's profile)", (*checker).portMTUPlatform, "edit"},
	{"FC126", "lossless-reached", Error, "every lossless class is reached by some DSCP (its own list, or every unlisted DSCP as the default class)", (*checker).losslessReached, "edit where the host ToS's DSCP is free; decision otherwise"},
	{"FC127", "line-rate", Error, "switch ports and RoCE NICs run at 1G or more (speed 400M is 400 Mb/s: did you mean 400G?)", (*checker).lineRate, "edit"},
	{"FC128", "sonic-one-wred", Warning, "on SONiC 202405/202411, whose config updater creates no WRED profile, every ECN class has the same ECN setting (they share AZURE_LOSSLESS)", (*checker).sonicOneWRED, "edit; decision where the XOFF point leaves no room above one MTU (cables, lossless classes or buffer)"},
	{"FC129", "host-buffer-minimum", Error, "every lossless NIC receive buffer policy.hostBuffers sizes holds the driver's minimum (mlx5: calculate_xoff + max_mtu + cell, the number host plan --assume fresh refuses below)", (*checker).hostBufferMinimum, "edit"},
	{"FC130", "roce-v1-dscp", Warning, "RDMA-CM mode is RoCE v2 where classes match on DSCP (IB/RoCE v1 frames have no IP header: no DSCP, no ECN)", (*checker).roceMode, "edit"},
	{"FC131", "port-speed-sku", Warning, "no switch port is faster than the ports of the model its profile stands for (while the switch's ASIC is that model's)", (*checker).portSpeedSKU, "edit"},
	{"FC132", "shared-buffer-profile", Warning, "plan raises no xoff of a SONiC buffer profile that ports outside the inventory share (releases whose config updater creates no buffer profile)", (*checker).sharedBufferProfile, "decision: list the other ports, or accept the larger xoff on them"},
	{"FC133", "zero-speed-cable", Error, "no switch port or RoCE NIC has a speed or cable of zero (speed: 0G is no line rate, cable: 0m no length: headroom, XOFF and ECN room derive from both)", (*checker).zeroSpeedCable, "edit where the link's other end gives the value; decision otherwise"},
	{"FC141", "nic-headroom", Warning, "a host NIC's PFC headroom, as its driver computes it (mlx5 calculate_xoff) with the cable host plan gives it, covers its link's cable", (*checker).nicHeadroom, "edit"},
	{"FC160", "mode-lossless", Error, "the classes' PFC agrees with policy.mode: no lossless class in lossy mode; semi-lossless and pfc-only need the RoCE class lossless", (*checker).modeLossless, "edit; decision where no class but the CNP class carries the hosts' RoCE DSCP"},
	{"FC161", "mode-ecn", Error, "no class marks ECN in pfc-only mode (no ECN marking on switches, no DCQCN on hosts)", (*checker).modeECN, "edit"},
	{"FC162", "mode-platform", Error, "every switch can express policy.mode: semi-lossless needs a platform whose model honours received pause without sending it (SR Linux, SONiC; not EOS)", (*checker).modePlatform, "decision: the mode or the switch's platform"},
	{"FC163", "lossy-ecn", Error, "in lossy mode the hosts' RoCE class marks ECN (without PFC, ECN and DCQCN are the only congestion control)", (*checker).lossyECN, "edit; decision where the smallest switch buffer leaves no room above one MTU"},
	{"FC164", "lossy-incast", Warning, "in lossy mode every switch port's buffer absorbs an incast (validation.incast senders, else every other host) at line rate for the time DCQCN needs to react after ECN Kmin (portfacts.IncastAt)", (*checker).lossyIncast, "edit: ECN min lowered so the burst fits; decision where even one MTU does not"},
	{"FC165", "pfc-only-spreading", Warning, "pfc-only mode relieves congestion by pause alone, which spreads upstream: said once, with the watchdog it needs (FC114)", (*checker).pfcOnlySpreading, "decision: the mode, or a workload that admits its own traffic"},
	{"FC166", "semi-lossless-watchdog", Warning, "the PFC watchdog the intent turns on does not run on SONiC in semi-lossless mode (pfc_asym): said for the SONiC switches hosts attach to unless policy.hostPauseStormPrevention turns the hosts' own prevention (mlx5 pfc-prevention-tout) on, which stands in for it", (*checker).semiLosslessWatchdog, "edit: policy.hostPauseStormPrevention auto (the hosts' own prevention stands in); decision as the alternative: the mode (lossless runs the watchdog)"},
}

// roceOverhead is what RoCEv2 adds on top of the RDMA payload inside the
// netdev MTU (intent.RoCEOverhead, which says where it comes from).
const roceOverhead = intent.RoCEOverhead

// written reports whether the intent sets key of class cl itself (not the
// preset).
func written(cl *intent.Class, key string) bool { return cl.Fields.Has(key) }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func ints(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

func trimFloat(f float64) string {
	return strings.TrimSuffix(strconv.FormatFloat(f, 'g', -1, 64), ".0")
} // fmt's %g
