package switchdrv_test

import (
	"errors"
	"strings"
	"testing"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/yangcheck"
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

		{mode: intent.ModeLossless, pl: intent.PlatformEOS, has: []string{"priority-flow-control priority 3 no-drop", "random-detect ecn minimum-threshold"}, not: []string{"no priority-flow-control", "no random-detect ecn"}},
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
