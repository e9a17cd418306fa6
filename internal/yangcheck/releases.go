package yangcheck

import (
	"fmt"

	"github.com/fabricctl/fabricctl/intent"
)

// The releases fabricctl validates against. Line numbers cite the
// release's own module text at the commit its Source names (read with git
// in a snapshot of the repository; the modules themselves are not
// shipped: see the README, "Platform profiles").

// srl2410 cites nokia/srlinux-yang-models at tag v24.10.3.
const (
	srl2410    = "nokia/srlinux-yang-models v24.10.3 srlinux-yang-models/srl_nokia/models/"
	srl2410Qos = srl2410 + "qos/srl_nokia-qos.yang"
	srl2410If  = srl2410 + "interfaces/srl_nokia-interfaces.yang"
)

var releases = []*Release{
	{
		Name: "srlinux-25.3.1", Platform: intent.PlatformSRLinux, Dir: "srlinux",
		Source: "nokia/srlinux-yang-models tag v25.3.1, commit cd5995eaa6818d02bfff3ae718b89454a82191eb (the shipped models/srlinux)",
	},
	{
		Name: "srlinux-24.10.3", Platform: intent.PlatformSRLinux, Dir: "srlinux-24.10.3", Base: "srlinux-25.3.1",
		Source: "nokia/srlinux-yang-models tag v24.10.3, commit d494866b8f91f7390bb779855b2078b1ae372a0c (2025-02-28)",
		Covers: []string{"qos", "interface"},
		Verified: "2026-12-06: the derived schema against the v24.10.3 modules (a snapshot of nokia/srlinux-yang-models, not shipped) with goyang v1.6.3 " +
			"(no difference in a config node below /qos and /interface, every released feature on and the 7220 IXR-H4 set) and libyang yanglint 2.1.30 (the examples and the mutations of TestReleaseMutationsAgreeWithYanglint)",
		// Features the 25.3.1 modules test that srl_nokia-features v24.10.3
		// does not declare (the two files' feature statements compared).
		AbsentFeatures: prefixed("srl_nokia-features",
			"breakout-speed-1G", "forward-error-correction-ethernet", "load-balancing", "loopback-mode-terminal", "mda",
			"optical-line-system", "per-port-hash-seed", "platform-hash-polynomial-visibility", "port-host-if-fec-stats-router",
			"port-host-if-fec-stats-transceiver", "port-speed-1T", "qos-pfc-headroom-buffer", "qos-pfc-peak-buffer",
			"qos-pre-classifier", "submgmt-fpcx", "system-hash-profile", "transceiver-firmware-version",
			"transceiver-link-length-info", "vlan-loopback"),
		Edits: []Edit{
			// The PFC priority of a pfc-queue and of a paused queue is a
			// leaf-list of at most one uint8 in 24.10 (RFC 7951: [3]), a
			// leaf in 25.3, where each list also gets a unique statement.
			{Module: "srl_nokia-qos", At: pfcQueuePath("unique pfc-pause-frame-priority"), Op: EditRemove,
				Source: srl2410Qos + ":1923 (no unique on list pfc-queue; 25.3.1 line 1924 adds it)"},
			{Module: "srl_nokia-qos", At: pfcQueuePath("leaf pfc-pause-frame-priority"), Op: EditKeyword, Arg: "leaf-list",
				Source: srl2410Qos + ":1944 leaf-list pfc-pause-frame-priority"},
			{Module: "srl_nokia-qos", At: pfcQueuePath("leaf-list pfc-pause-frame-priority"), Op: EditInsert, Text: "max-elements 1;",
				Source: srl2410Qos + ":1948 max-elements 1"},
			{Module: "srl_nokia-qos", At: pauseQueuePath("unique pfc-pause-frame-priority"), Op: EditRemove,
				Source: srl2410Qos + ":1993 (no unique on received-pfc-pause-frames list queue; 25.3.1 line 1994 adds it)"},
			{Module: "srl_nokia-qos", At: pauseQueuePath("leaf pfc-pause-frame-priority"), Op: EditKeyword, Arg: "leaf-list",
				Source: srl2410Qos + ":2004 leaf-list pfc-pause-frame-priority"},
			{Module: "srl_nokia-qos", At: pauseQueuePath("leaf-list pfc-pause-frame-priority"), Op: EditInsert, Text: "max-elements 1;",
				Source: srl2410Qos + ":2008 max-elements 1"},
			// 24.10 restricts a subinterface's pfc, queues, scheduler and
			// policer-policies with a must on the (presence) container;
			// 25.3 moved each must to the leaves and dropped the presence.
			{Module: "srl_nokia-qos", At: []string{"grouping pfc-interface", "container pfc"}, Op: EditInsert,
				Text:   `presence "pfc"; must 'string(../interface-ref/subinterface) = ""' { error-message "Attachment of pfc, not permitted for sub-interfaces"; }`,
				Source: srl2410Qos + ":2155-2160"},
			{Module: "srl_nokia-qos", At: []string{"grouping pfc-interface", "container pfc", "leaf pfc-mapping-profile", `must string(../../interface-ref/subinterface) = ""`}, Op: EditRemove,
				Source: srl2410Qos + ":2161 (leaf pfc-mapping-profile has no must)"},
			{Module: "srl_nokia-qos", At: []string{"grouping pfc-interface", "container pfc", "leaf pfc-enable", `must . = false() or string(../../interface-ref/subinterface) = ""`}, Op: EditRemove,
				Source: srl2410Qos + ":2168 (leaf pfc-enable has only the flow-control must)"},
			{Module: "srl_nokia-qos", At: []string{"grouping qos-interface-queue-root-top", "container queues"}, Op: EditInsert,
				Text:   `presence "queues"; must 'string(../../interface-ref/subinterface) = ""' { error-message "configuring of a queue only permitted for interfaces"; }`,
				Source: srl2410Qos + ":239-242"},
			{Module: "srl_nokia-qos", At: []string{"grouping qos-interface-queue-root-top", "container queues", "list queue", "leaf queue-name", `must string(../../../../interface-ref/subinterface) = ""`}, Op: EditRemove,
				Source: srl2410Qos + ":247 (leaf queue-name has no must)"},
			{Module: "srl_nokia-qos", At: []string{"grouping qos-interface-scheduler-top", "container scheduler"}, Op: EditInsert,
				Text:   `presence "scheduler"; must 'string(../../interface-ref/subinterface) = ""' { error-message "Attachment of a scheduler only permitted for interfaces"; srl_nokia-ext:if-feature "not srl_nokia-features:fpcx"; }`,
				Source: srl2410Qos + ":521-525"},
			{Module: "srl_nokia-qos", At: []string{"grouping qos-interface-scheduler-top", "container scheduler", "leaf scheduler-policy", `must string(../../../interface-ref/subinterface) = ""`}, Op: EditRemove,
				Source: srl2410Qos + ":634 (leaf scheduler-policy has no must)"},
			{Module: "srl_nokia-qos", At: []string{"grouping fpcx-subinterface-qos-input", "container policer-policies"}, Op: EditInsert,
				Text:   `presence "policer-policies"; must 'string(../../interface-ref/subinterface) != ""' { error-message "Attachment of policer-polices, not permitted for interfaces"; }`,
				Source: srl2410Qos + ":658-662"},
			{Module: "srl_nokia-qos", At: []string{"grouping fpcx-subinterface-qos-input", "container policer-policies", "leaf policer-policy", `must string(../../../interface-ref/subinterface) != ""`}, Op: EditRemove,
				Source: srl2410Qos + ":663 (leaf policer-policy has no must)"},
			{Module: "srl_nokia-qos", At: []string{"grouping qos-interface-input-top", "container input"}, Op: EditInsert,
				Text: `presence "qos-subinterface-input";`, Source: srl2410Qos + ":969"},
			{Module: "srl_nokia-qos", At: []string{"grouping qos-interfaces", "container interfaces"}, Op: EditInsert,
				Text: `presence "Enables configuration of QoS parameters for the interface";`, Source: srl2410Qos + ":1048"},

			// srl_nokia-interfaces: 25.3 added checks 24.10 does not make,
			// and gated loopback-mode terminal with a feature where 24.10
			// refuses it with a must.
			{Module: "srl_nokia-interfaces", At: []string{"typedef loopback-mode-type", "type enumeration", "enum terminal", "if-feature"}, Op: EditRemove,
				Source: srl2410If + ":238-241 (enum terminal, no if-feature)"},
			{Module: "srl_nokia-interfaces", At: []string{"grouping interface-phys-config", "leaf loopback-mode"}, Op: EditInsert,
				Text: `must "not(. = 'terminal')" { error-message "terminal mode not supported"; }`, Source: srl2410If + ":493-495"},
			{Module: "srl_nokia-interfaces", At: []string{"grouping interface-phys-config", "leaf swap-src-dst-mac"}, Op: EditRemove,
				Source: srl2410If + ":488-500 (leaf loopback-mode; no swap-src-dst-mac follows it)"},
			{Module: "srl_nokia-interfaces", At: breakoutPath("leaf num-breakout-ports", "8"), Op: EditRemove,
				Source: srl2410If + ":402 (leaf num-breakout-ports: no must on 8 ports of a coherent optic)"},
			{Module: "srl_nokia-interfaces", At: breakoutPath("leaf breakout-port-speed", "10G"), Op: EditRemove, Source: srl2410If + ":436 (leaf breakout-port-speed has no must)"},
			{Module: "srl_nokia-interfaces", At: breakoutPath("leaf breakout-port-speed", "25G"), Op: EditRemove, Source: srl2410If + ":436"},
			{Module: "srl_nokia-interfaces", At: breakoutPath("leaf breakout-port-speed", "50G"), Op: EditRemove, Source: srl2410If + ":436"},
			{Module: "srl_nokia-interfaces", At: breakoutPath("leaf breakout-port-speed", "200G"), Op: EditRemove, Source: srl2410If + ":436"},
			{Module: "srl_nokia-interfaces", At: breakoutPath("leaf breakout-port-speed", "400G"), Op: EditRemove, Source: srl2410If + ":436"},
			{Module: "srl_nokia-interfaces", At: []string{"grouping interface-top", "list interface", "container ethernet", "leaf aggregate-id", "must not(../../load-balancing/hash-profile)"}, Op: EditRemove,
				Source: srl2410If + ":1779 (leaf aggregate-id: no must on a hash-profile)"},
			{Module: "srl_nokia-interfaces-vlans", At: []string{"grouping vlan-tpid-config", "leaf tpid", "must (true() = ../vlan-tagging) or (. = 'TPID_0X8100')"}, Op: EditRemove,
				Source: srl2410 + "interfaces/srl_nokia-interfaces-vlans.yang:490 (leaf tpid has two musts, not the TPID_0X8100 one)"},
			// srl_nokia-common: 24.10 names an MDA slot /a../f in interface
			// names (25.3: /m1../m6), one character shorter.
			{Module: "srl_nokia-common", Op: EditText, Arg: `(/m[1-6])?`, Text: `(/[abcdef])?`,
				Source: srl2410 + "common/srl_nokia-common.yang:159,174,359,700,709,717,731,740,753,762"},
			{Module: "srl_nokia-common", Op: EditText, Arg: `length "3..21"`, Text: `length "3..20"`,
				Source: srl2410 + "common/srl_nokia-common.yang:158,173,691,708,716"},
			{Module: "srl_nokia-common", Op: EditText, Arg: `length "5..26"`, Text: `length "5..25"`,
				Source: srl2410 + "common/srl_nokia-common.yang:723,739,746,761"},
		},
	},
	{
		Name: "openconfig", Platform: intent.PlatformOpenConfig, Dir: "openconfig",
		Source: "openconfig/public commit 94f589629e1e88d0a8dbd2b3024f829196801f2e (openconfig-qos 2.2.0; the shipped models/openconfig)",
	},
	{
		Name: "arista-eos", Platform: intent.PlatformEOS, Dir: "arista",
		Source: "aristanetworks/yang commit 63be023aa565 EOS-4.36.1F arista-qos-augments over openconfig/public 94f589629e1e (the shipped models/arista and models/openconfig)",
	},
	{
		Name: "sonic-master", Platform: intent.PlatformSONiC, Dir: "sonic",
		Source: "sonic-net/sonic-buildimage master, commit 086b03bd70f9e211aaaf5f6aefe0790b508d2a94 (2026-08-23), src/sonic-yang-models (the shipped models/sonic)",
	},
	sonicRelease("202405", "cfc766e13eccab4e7603808db3bfa9c5b2dfef17", "2026-06-06").
		with(sonicPollRange("202405", "100..3000", 77), sonicNoStatHistory("202405")).
		with(sonicPortEdits("202405", "1..800000", 100, 125, true)...).
		with(sonicQoSMapPattern("202405", 89, 95)...).
		with(
			Edit{Module: "sonic-port-qos-map", At: qosMapPath("leaf tc_to_dscp_map"), Op: EditRemove,
				Source: sonicCite("202405", "sonic-port-qos-map.yang", 58) + " (list PORT_QOS_MAP_LIST has no tc_to_dscp_map)"},
			Edit{Module: "sonic-port-qos-map", At: []string{"import sonic-tc-dscp-map"}, Op: EditRemove,
				Source: sonicCite("202405", "sonic-port-qos-map.yang", 37) + " (the last import; none of sonic-tc-dscp-map, which 202405 does not have)"},
			Edit{Module: "sonic-tc-queue-map", At: []string{"container sonic-tc-queue-map", "container TC_TO_QUEUE_MAP", "list TC_TO_QUEUE_MAP_LIST", "list TC_TO_QUEUE_MAP", "leaf qindex", "type string", "pattern [0-9]?"},
				Op: EditArgument, Arg: "[0-7]?", Source: sonicCite("202405", "sonic-tc-queue-map.yang", 57)},
			sonicNoDiscardAction("202405"),
			Edit{Module: "sonic-port", At: portPath("leaf dhcp_rate_limit"), Op: EditRemove,
				Source: sonicCite("202405", "sonic-port.yang", 97) + " (leaf speed; no dhcp_rate_limit follows it)"},
			Edit{Module: "sonic-port", At: portPath("leaf lanes", "when"), Op: EditText,
				Arg:    "='fabric') or\n\t\t\t\t\t(/sdm:sonic-device_metadata/sdm:DEVICE_METADATA/sdm:localhost/sdm:hwsku='msft_four_asic_vs') or \n\t\t\t\t\t(/sdm:sonic-device_metadata/sdm:DEVICE_METADATA/sdm:localhost/sdm:hwsku='msft_multi_asic_vs')))",
				Text:   "='fabric')))",
				Source: sonicCite("202405", "sonic-port.yang", 77) + " (the lanes when names no hwsku)"},
			flexNoBulk("202405", "PG_WATERMARK", 94), flexNoBulkPrefix("202405", "PG_WATERMARK", 94),
			flexNoBulk("202405", "QUEUE", 143), flexNoBulkPrefix("202405", "QUEUE", 143),
		).absentModules("sonic-tc-dscp-map"),
	sonicRelease("202411", "566f5575d56e54fa77a0903228fc965ab76041ff", "2026-08-06").
		with(sonicPollRange("202411", "100..3000", 77), sonicNoStatHistory("202411"), sonicNoDiscardAction("202411")).
		with(sonicPortEdits("202411", "1..800000", 102, 133, true)...).
		with(sonicQoSMapPattern("202411", 94, 100)...),
	sonicRelease("202505", "ff3c0c9f686a1d0dbddbe813b233b3b7a51bd8e2", "2026-07-31").
		with(sonicPollRange("202505", "100..3000", 77), sonicNoStatHistory("202505")).
		with(sonicPortEdits("202505", "1..800000", 102, 133, true)...).
		with(Edit{Module: "sonic-port", At: portPath("leaf subport", "type uint8", "range"), Op: EditArgument, Arg: "0..12",
			Source: sonicCite("202505", "sonic-port.yang", 171)}),
	sonicRelease("202511", "fde92d26cb6a743e4ca290b8591736f377db741b", "2026-08-23").
		with(sonicPortEdits("202511", "", 0, 0, false)...),
}

func prefixed(mod string, names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = mod + ":" + n
	}
	return out
}

// pfcQueuePath and pauseQueuePath are the statement paths of the two lists
// of srl_nokia-qos pfc-mapping-profile that carry a pfc-pause-frame-priority.
func pfcQueuePath(last string) []string {
	return []string{"grouping pfc-profile-config", "list pfc-mapping-profile", "container received-traffic",
		"container unicast-mapping", "list pfc-queue", last}
}

func pauseQueuePath(last string) []string {
	return []string{"grouping pfc-profile-config", "list pfc-mapping-profile", "container received-pfc-pause-frames",
		"list queue", last}
}

// breakoutPath is the must of a breakout-mode leaf that 25.3 added for
// digital coherent optics at value v.
func breakoutPath(leaf, v string) []string {
	return []string{"grouping interface-phys-config", "container breakout-mode", leaf,
		"must not((. = '" + v + "') and ../../transceiver/functional-type = 'digital-coherent-optics')"}
}

// sonicCover are the sonic-yang data nodes of the CONFIG_DB tables
// fabricctl writes (switchdrv/sonic): a derived SONiC release is its
// branch's own below them.
var sonicCover = []string{
	"sonic-pfcwd", "sonic-port-qos-map", "sonic-port", "sonic-buffer-profile", "sonic-buffer-pg",
	"sonic-queue/QUEUE/QUEUE_LIST", "sonic-scheduler", "sonic-wred-profile", "sonic-dscp-tc-map",
	"sonic-tc-queue-map", "sonic-tc-priority-group-map", "sonic-pfc-priority-queue-map",
	"sonic-pfc-priority-priority-group-map", "sonic-cable-length",
	"sonic-flex_counter/FLEX_COUNTER_TABLE/PFCWD", "sonic-flex_counter/FLEX_COUNTER_TABLE/QUEUE",
	"sonic-flex_counter/FLEX_COUNTER_TABLE/PG_WATERMARK",
}

// sonicRelease is SONiC branch's module set, derived from master's.
func sonicRelease(branch, commit, date string) *Release {
	return &Release{
		Name: "sonic-" + branch, Platform: intent.PlatformSONiC, Dir: "sonic-" + branch, Base: "sonic-master",
		Source: "sonic-net/sonic-buildimage branch " + branch + ", commit " + commit + " (" + date + "), src/sonic-yang-models " +
			"(sonic-types and sonic-extension rendered from yang-templates as for master)",
		Covers: sonicCover,
		Verified: "2026-12-06: the derived schema against the branch's own modules (a snapshot of sonic-net/sonic-buildimage, not shipped) with goyang v1.6.3 " +
			"(no difference in a config node of the tables fabricctl writes) and libyang yanglint 2.1.30 (TestReleaseMutationsAgreeWithYanglint)",
	}
}

func (r *Release) with(edits ...Edit) *Release {
	r.Edits = append(r.Edits, edits...)
	return r
}

func (r *Release) absentModules(mods ...string) *Release {
	r.AbsentModules = append(r.AbsentModules, mods...)
	return r
}

func sonicCite(branch, file string, line int) string {
	return fmt.Sprintf("sonic-net/sonic-buildimage %s src/sonic-yang-models/yang-models/%s:%d", branch, file, line)
}

func pfcwdPath(steps ...string) []string {
	return append([]string{"container sonic-pfcwd", "container PFC_WD", "list PFC_WD_LIST"}, steps...)
}

func portPath(steps ...string) []string {
	return append([]string{"container sonic-port", "container PORT", "list PORT_LIST"}, steps...)
}

func qosMapPath(steps ...string) []string {
	return append([]string{"container sonic-port-qos-map", "container PORT_QOS_MAP", "list PORT_QOS_MAP_LIST"}, steps...)
}

// sonicPollRange: PFC_WD GLOBAL POLL_INTERVAL is 100..3000 ms before
// sonic-buildimage PR #25034 (commit 224df9b518, master; 202511 has it),
// 100..1000 after.
func sonicPollRange(branch, r string, line int) Edit {
	return Edit{Module: "sonic-pfcwd", At: pfcwdPath("leaf POLL_INTERVAL", "type uint32", "range"), Op: EditArgument, Arg: r,
		Source: sonicCite(branch, "sonic-pfcwd.yang", line)}
}

// sonicNoStatHistory: pfc_stat_history came with sonic-buildimage PR
// #21848 (commit ad5d83b276; 202511 has it, 202505 not).
func sonicNoStatHistory(branch string) Edit {
	return Edit{Module: "sonic-pfcwd", At: pfcwdPath("leaf pfc_stat_history"), Op: EditRemove,
		Source: sonicCite(branch, "sonic-pfcwd.yang", 27) + " (list PFC_WD_LIST has no pfc_stat_history)"}
}

// sonicPortEdits: PORT's speed and adv_speeds ranges (1..800000 before
// 1.6T ports; "" keeps master's), adv_speeds and adv_interface_types
// without ordered-by user (unordered), and no fast_linkup (master only).
func sonicPortEdits(branch, speed string, speedLine, advLine int, unordered bool) []Edit {
	var out []Edit
	if speed != "" {
		out = append(out,
			Edit{Module: "sonic-port", At: portPath("leaf speed", "type uint32", "range"), Op: EditArgument, Arg: speed,
				Source: sonicCite(branch, "sonic-port.yang", speedLine)},
			Edit{Module: "sonic-port", At: portPath("leaf-list adv_speeds", "type union", "type uint32", "range"), Op: EditArgument, Arg: speed,
				Source: sonicCite(branch, "sonic-port.yang", advLine)})
	}
	if unordered {
		out = append(out,
			Edit{Module: "sonic-port", At: portPath("leaf-list adv_speeds", "ordered-by"), Op: EditRemove,
				Source: sonicCite(branch, "sonic-port.yang", advLine-5) + " (leaf-list adv_speeds is not ordered-by user)"},
			Edit{Module: "sonic-port", At: portPath("leaf-list adv_interface_types", "ordered-by"), Op: EditRemove,
				Source: sonicCite(branch, "sonic-port.yang", advLine+16) + " (leaf-list adv_interface_types is not ordered-by user)"})
	}
	return append(out, Edit{Module: "sonic-port", At: portPath("leaf fast_linkup"), Op: EditRemove,
		Source: sonicCite(branch, "sonic-port.yang", 36) + " (list PORT_LIST has no fast_linkup)"})
}

// sonicQoSMapPattern: PORT_QOS_MAP pfc_enable and pfcwd_sw_enable refuse
// "" before 202505 (pattern [0-7](,[0-7])*).
func sonicQoSMapPattern(branch string, pfcLine, wdLine int) []Edit {
	return []Edit{
		{Module: "sonic-port-qos-map", At: qosMapPath("leaf pfc_enable", "type string", "pattern"), Op: EditArgument, Arg: "[0-7](,[0-7])*",
			Source: sonicCite(branch, "sonic-port-qos-map.yang", pfcLine)},
		{Module: "sonic-port-qos-map", At: qosMapPath("leaf pfcwd_sw_enable", "type string", "pattern"), Op: EditArgument, Arg: "[0-7](,[0-7])*",
			Source: sonicCite(branch, "sonic-port-qos-map.yang", wdLine)},
	}
}

func sonicNoDiscardAction(branch string) Edit {
	return Edit{Module: "sonic-buffer-profile", At: []string{"container sonic-buffer-profile", "container BUFFER_PROFILE", "list BUFFER_PROFILE_LIST", "leaf packet_discard_action"},
		Op: EditRemove, Source: sonicCite(branch, "sonic-buffer-profile.yang", 28) + " (list BUFFER_PROFILE_LIST has no packet_discard_action)"}
}

func flexNoBulk(branch, table string, line int) Edit {
	return Edit{Module: "sonic-flex_counter", At: []string{"container sonic-flex_counter", "container FLEX_COUNTER_TABLE", "container " + table, "leaf BULK_CHUNK_SIZE"},
		Op: EditRemove, Source: sonicCite(branch, "sonic-flex_counter.yang", line) + " (" + table + " has no BULK_CHUNK_SIZE)"}
}

func flexNoBulkPrefix(branch, table string, line int) Edit {
	return Edit{Module: "sonic-flex_counter", At: []string{"container sonic-flex_counter", "container FLEX_COUNTER_TABLE", "container " + table, "leaf BULK_CHUNK_SIZE_PER_PREFIX"},
		Op: EditRemove, Source: sonicCite(branch, "sonic-flex_counter.yang", line) + " (" + table + " has no BULK_CHUNK_SIZE_PER_PREFIX)"}
}
