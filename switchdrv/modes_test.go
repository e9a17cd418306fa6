package switchdrv_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/yangcheck"
	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/switchdrv"
)

// modeFabric is one switch of platform pl (two ports) under policy.mode m.
func modeFabric(t *testing.T, m intent.RoCEMode, pl intent.Platform) *intent.Fabric {
	t.Helper()
	src := "apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\n" +
		"policy: {preset: roce-lossless, mode: " + string(m) + ", mtu: 9214}\n" +
		"inventory:\n  switches:\n    - name: sw1\n      platform: " + string(pl) + "\n      address: 192.0.2.1:57400\n" +
		"      portDefaults: {speed: 400G, cable: 3m}\n      ports:\n        - name: " + compilePortName(pl, 0) + "\n        - name: " + compilePortName(pl, 1) + "\n"
	f, err := intent.Parse("modes.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// payloadText is every path and value of d as one text to search.
func payloadText(d *switchdrv.Desired) string {
	var b strings.Builder
	for _, u := range append(append([]*gnmipb.Update{}, d.Replaces...), d.Updates...) {
		b.WriteString(yangcheck.PathString(u.GetPath()))
		b.WriteString(" ")
		b.Write(u.GetVal().GetJsonIetfVal())
		b.WriteString(u.GetVal().GetAsciiVal())
		b.WriteString("\n")
	}
	return b.String()
}

// TestModesCompilePerPlatform: what each policy.mode compiles to on each
// platform (the README's "RoCE modes" table), or the refusal where the
// platform's model cannot express it. The payloads' YANG validity is
// TestCompiledPayloadsValidate's (examples/modes) and the twins'
// (cmd/fabricctl TestRenderDeviceEveryExample).
func TestModesCompilePerPlatform(t *testing.T) {
	const (
		srlRecvMap = `"received-traffic":{"unicast-mapping":{"pfc-queue":` // pause generated
		srlReact   = `"enable-pfc":true`                                   // received pause honoured
		srlPFCOn   = `"pfc-enable":true`
		srlECN     = `explicit-congestion-notification`
		srlHead    = `"pfc-buffer-allocation-profile"`
	)
	tests := []struct {
		mode     intent.RoCEMode
		pl       intent.Platform
		has, not []string
		refused  bool
	}{
		{mode: intent.ModeLossless, pl: intent.PlatformSRLinux, has: []string{srlRecvMap, srlReact, srlPFCOn, srlECN, srlHead}},
		{mode: intent.ModeLossy, pl: intent.PlatformSRLinux, has: []string{srlECN}, not: []string{"pfc-mapping-profile", srlPFCOn, srlHead}},
		// srl_nokia-qos: reaction to received pause without a
		// received-traffic mapping (no pause generated), no headroom
		{mode: intent.ModeSemiLossless, pl: intent.PlatformSRLinux, has: []string{srlReact, srlPFCOn, srlECN}, not: []string{srlRecvMap, srlHead}},
		{mode: intent.ModePFCOnly, pl: intent.PlatformSRLinux, has: []string{srlRecvMap, srlReact, srlPFCOn, srlHead}, not: []string{srlECN, "queue-management-profile"}},

		{mode: intent.ModeLossless, pl: intent.PlatformSONiC, has: []string{`"pfc_enable":"3"`, "WRED_PROFILE", "BUFFER_PG", "PFC_WD"}, not: []string{"pfc_asym"}},
		// PFC off = PORT_QOS_MAP without pfc_enable (qosorch writes 0)
		{mode: intent.ModeLossy, pl: intent.PlatformSONiC, has: []string{"WRED_PROFILE", "PORT_QOS_MAP"}, not: []string{"pfc_enable", "BUFFER_PG", "pfc_asym", "PFC_WD/"}},
		// pfc_asym on: RX on every priority, TX (pfc_enable) none
		{mode: intent.ModeSemiLossless, pl: intent.PlatformSONiC, has: []string{"pfc_asym", "WRED_PROFILE"}, not: []string{"pfc_enable", "BUFFER_PG"}},
		{mode: intent.ModePFCOnly, pl: intent.PlatformSONiC, has: []string{`"pfc_enable":"3"`, "BUFFER_PG", "PFC_WD"}, not: []string{"WRED_PROFILE", "wred_profile"}},

		{mode: intent.ModeLossless, pl: intent.PlatformEOS, has: []string{"priority-flow-control priority 3 no-drop", "tx-queue 3\n      random-detect ecn minimum-threshold", "priority-flow-control priority 4 drop"}, not: []string{"no priority-flow-control", "tx-queue 3\n      no random-detect ecn"}},
		// the CLI merges: lossy writes PFC off on the port and drop on
		// each class's priority (AVD ethernet-interfaces.j2), so a port
		// an earlier lossless apply left pausing stops
		{mode: intent.ModeLossy, pl: intent.PlatformEOS, has: []string{"random-detect ecn minimum-threshold", "   no priority-flow-control\n", "priority-flow-control priority 3 drop", "no priority-flow-control pause watchdog\n"}, not: []string{"no-drop", "priority-flow-control on"}},
		{mode: intent.ModeSemiLossless, pl: intent.PlatformEOS, refused: true},
		// and pfc-only takes the marking off the classes' queues
		{mode: intent.ModePFCOnly, pl: intent.PlatformEOS, has: []string{"priority-flow-control priority 3 no-drop", "pause watchdog", "tx-queue 3\n      no random-detect ecn"}, not: []string{"random-detect ecn minimum-threshold"}},

		{mode: intent.ModeLossless, pl: intent.PlatformOpenConfig, has: []string{`"enable-ecn":true`}},
		{mode: intent.ModeLossy, pl: intent.PlatformOpenConfig, has: []string{`"enable-ecn":true`}},
		{mode: intent.ModeSemiLossless, pl: intent.PlatformOpenConfig, refused: true},
		{mode: intent.ModePFCOnly, pl: intent.PlatformOpenConfig, refused: true},
	}
	r := compileRegistry(t)
	for _, tt := range tests {
		t.Run(string(tt.mode)+"/"+string(tt.pl), func(t *testing.T) {
			f := modeFabric(t, tt.mode, tt.pl)
			p, err := r.Lookup(tt.pl)
			if err != nil {
				t.Fatal(err)
			}
			d, err := p.Compile(f, &f.Switches[0])
			if tt.refused {
				if !errors.Is(err, switchdrv.ErrModeUnsupported) || !strings.Contains(err.Error(), "switch sw1") {
					t.Fatalf("Compile = %v, want the mode refused (ErrModeUnsupported) naming switch sw1", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			text := payloadText(d)
			for _, s := range tt.has {
				if !strings.Contains(text, s) {
					t.Errorf("payload lacks %q:\n%s", s, text)
				}
			}
			for _, s := range tt.not {
				if strings.Contains(text, s) {
					t.Errorf("payload has %q:\n%s", s, text)
				}
			}
		})
	}
}

// onTwin points f's switch where done's is (the same twin).
func onTwin(f, done *intent.Fabric) *intent.Fabric {
	f.Switches[0].Address, f.Switches[0].TLS = done.Switches[0].Address, done.Switches[0].TLS
	return f
}

// TestSONiCModeChangeLeavesNoLosslessBuffers: on the sonic-202411 twin
// (factory CONFIG_DB: BUFFER_PG <port>|3-4 -> pg_lossless_100000_5m_profile
// as buffermgrd makes it; the config updater refuses to create buffer
// profiles), lossless -> lossy -> lossless -> semi-lossless -> lossless.
// Lossy and semi-lossless delete the inventory ports' lossless priority
// groups, since sonic-swss cfgmgr/buffermgr.cpp never removes one when
// pfc_enable goes (doSpeedUpdateTask only adds), and leave the lossy PG 0
// and the ports outside the inventory alone; lossless again finds
// buffermgrd's pg_lossless profile of the port's speed; leaving
// semi-lossless writes PORT pfc_asym off (sonic-swss portsorch.cpp changes
// the PFC mode only when the entry carries pfc_asym).
func TestSONiCModeChangeLeavesNoLosslessBuffers(t *testing.T) {
	f := modeFabric(t, intent.ModeLossless, intent.PlatformSONiC)
	tw, eng := sonicLab(t, f, true)
	sonicApply(t, eng, f)
	lossy := onTwin(modeFabric(t, intent.ModeLossy, intent.PlatformSONiC), f)
	p := sonicApply(t, eng, lossy)
	if noteWith(p, "lossless priority groups removed from Ethernet0, Ethernet8") == "" {
		t.Errorf("lossy plan does not say which lossless priority groups it removes: %q", p.Targets[0].Notes)
	}
	for _, port := range []string{"Ethernet0", "Ethernet8"} {
		for _, k := range []string{"|3-4", "|3", "|4"} {
			if v, ok := value(t, tw, "BUFFER_PG/"+port+k); ok {
				t.Errorf("lossy: BUFFER_PG|%s%s = %v left", port, k, v)
			}
		}
		if v, _ := value(t, tw, "BUFFER_PG/"+port+"|0"); v["profile"] != "ingress_lossy_profile" {
			t.Errorf("lossy: BUFFER_PG|%s|0 = %v, want the template's ingress_lossy_profile kept", port, v)
		}
	}
	if v, _ := value(t, tw, "BUFFER_PG/Ethernet4|3-4"); v["profile"] != "pg_lossless_100000_5m_profile" {
		t.Errorf("lossy: BUFFER_PG|Ethernet4|3-4 (not in the inventory) = %v, want it untouched", v)
	}
	if _, req := sonicPlan(t, eng, lossy); len(req.GetUpdate())+len(req.GetReplace())+len(req.GetDelete()) > 0 {
		t.Errorf("lossy plan after apply not empty: %v", req)
	}
	// buffermgrd adds the PG back for the port's last pfc_enable when its
	// cable length changes (static model): diff shows it as drift.
	if err := tw.Put(path(cdb+"BUFFER_PG/Ethernet0|3"), map[string]any{"profile": "pg_lossless_100000_5m_profile"}); err != nil {
		t.Fatal(err)
	}
	p, _ = sonicPlan(t, eng, lossy)
	if cs := p.Targets[0].Changes; len(cs) != 1 || cs[0].Action != plan.Delete || cs[0].Path != cdb+"BUFFER_PG/Ethernet0|3" {
		t.Errorf("lossy plan with BUFFER_PG|Ethernet0|3 back: changes %+v, want its delete alone", cs)
	}
	sonicApply(t, eng, lossy)

	sonicApply(t, eng, onTwin(modeFabric(t, intent.ModeLossless, intent.PlatformSONiC), f))
	if v, _ := value(t, tw, "BUFFER_PG/Ethernet0|3"); !strings.HasPrefix(fmt.Sprint(v["profile"]), "pg_lossless_100000_") {
		t.Errorf("lossless again: BUFFER_PG|Ethernet0|3 = %v, want buffermgrd's pg_lossless profile of the port's speed", v)
	}

	semi := onTwin(modeFabric(t, intent.ModeSemiLossless, intent.PlatformSONiC), f)
	sonicApply(t, eng, semi)
	if v, _ := value(t, tw, "PORT/Ethernet0"); v["pfc_asym"] != "on" {
		t.Errorf("semi-lossless: PORT|Ethernet0 = %v, want pfc_asym on", v)
	}
	if v, ok := value(t, tw, "BUFFER_PG/Ethernet0|3"); ok {
		t.Errorf("semi-lossless: BUFFER_PG|Ethernet0|3 = %v left", v)
	}
	last := onTwin(modeFabric(t, intent.ModeLossless, intent.PlatformSONiC), f)
	sonicApply(t, eng, last)
	if v, _ := value(t, tw, "PORT/Ethernet0"); v["pfc_asym"] != "off" {
		t.Errorf("lossless after semi-lossless: PORT|Ethernet0 = %v, want pfc_asym off", v)
	}
	if _, req := sonicPlan(t, eng, last); len(req.GetUpdate())+len(req.GetReplace())+len(req.GetDelete()) > 0 {
		t.Errorf("lossless plan after apply not empty: %v", req)
	}
}

// TestSONiCSemiLosslessRunsNoPFCWatchdog: semi-lossless on SONiC runs no
// PFC watchdog, decided from SONiC's sources: orchagent watches only the
// priorities of PORT_QOS_MAP pfcwd_sw_enable (sonic-swss qosorch.cpp
// setPortPfcWatchdogStatus, pfcwdorch.cpp getLosslessTcsForPort: "No
// lossless TC found"), the pfcwd CLI skips a port without pfc_enable
// (sonic-utilities pfcwd/main.py verify_pfc_enable_status_per_port), and
// even where a watchdog were forced its recovery could not stop the port
// honouring pause: PfcWdLossyHandler clears the priority through
// setPortPfc, which in pfc_asym's separate mode writes only
// SAI_PORT_ATTR_PRIORITY_FLOW_CONTROL_TX while RX stays 0xff (portsorch.cpp
// setPortPfcAsym). So a port taken from lossless to semi-lossless loses
// its PFC_WD entry and pfcwd_sw_enable, and the plan says why.
func TestSONiCSemiLosslessRunsNoPFCWatchdog(t *testing.T) {
	f := modeFabric(t, intent.ModeLossless, intent.PlatformSONiC)
	tw, eng := sonicLab(t, f, true)
	sonicApply(t, eng, f)
	if _, ok := value(t, tw, "PFC_WD/Ethernet0"); !ok {
		t.Fatal("lossless: no PFC_WD|Ethernet0")
	}
	semi := onTwin(modeFabric(t, intent.ModeSemiLossless, intent.PlatformSONiC), f)
	p := sonicApply(t, eng, semi)
	for _, port := range []string{"Ethernet0", "Ethernet8"} {
		if v, ok := value(t, tw, "PFC_WD/"+port); ok {
			t.Errorf("semi-lossless: PFC_WD|%s = %v left", port, v)
		}
		qm, _ := value(t, tw, "PORT_QOS_MAP/"+port)
		for _, fld := range []string{"pfc_enable", "pfcwd_sw_enable"} {
			if v, ok := qm[fld]; ok {
				t.Errorf("semi-lossless: PORT_QOS_MAP|%s %s = %v left", port, fld, v)
			}
		}
	}
	if noteWith(p, "pfcwd_sw_enable") == "" || noteWith(p, "PRIORITY_FLOW_CONTROL_TX") == "" {
		t.Errorf("semi-lossless plan does not say why no watchdog runs: %q", p.Targets[0].Notes)
	}
}
