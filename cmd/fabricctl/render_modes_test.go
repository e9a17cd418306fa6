package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
)

// TestRenderDeviceModesEveryPlatform (issue 31): each policy.mode on one
// switch of every platform, rendered with --validate --device: the
// payloads pass the platform's YANG and its device twin (exit 0), or, where
// the platform cannot express the mode, render refuses naming the switch
// and why (exit 1) and check has said so (FC162, FC106) first.
func TestRenderDeviceModesEveryPlatform(t *testing.T) {
	port := map[intent.Platform]string{
		intent.PlatformSRLinux: "ethernet-1/1", intent.PlatformSONiC: "Ethernet0",
		intent.PlatformEOS: "Ethernet1/1", intent.PlatformOpenConfig: "Ethernet1",
	}
	refused := map[string]string{ // mode/platform -> the check rule that says so
		"semi-lossless/eos":        "FC162",
		"semi-lossless/openconfig": "FC106",
		"pfc-only/openconfig":      "FC106",
	}
	dir := t.TempDir()
	for _, m := range intent.Modes() {
		for _, pl := range intent.Platforms() {
			name := m + "/" + string(pl)
			t.Run(name, func(t *testing.T) {
				file := filepath.Join(dir, m+"-"+string(pl)+".yaml")
				src := "apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\n" +
					"policy: {preset: roce-lossless, mode: " + m + ", mtu: 9214}\n" +
					"inventory:\n  switches:\n    - name: leaf1\n      platform: " + string(pl) + "\n      address: 192.0.2.1:57400\n" +
					"      portDefaults: {speed: 400G, cable: 3m}\n      ports:\n        - name: " + port[pl] + "\n"
				if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
					t.Fatal(err)
				}
				code, _, stderr := runCLI(t, t.Context(), "render", "--validate", "--device", "-f", file)
				rule, refuse := refused[name]
				switch {
				case refuse && (code != ExitError || !strings.Contains(stderr, "switch leaf1 ("+string(pl)+"): policy.mode "+m) || !strings.Contains(stderr, rule)):
					t.Errorf("render: exit %d, want %d with the refusal naming switch leaf1 and check's %s\n%s", code, ExitError, rule, stderr)
				case !refuse && code != ExitOK:
					t.Errorf("render --validate --device: exit %d, want 0\n%s", code, stderr)
				}
			})
		}
	}
}

// TestLabModesExamples: each examples/modes intent goes through lab's
// check, plan, apply and diff against profiled twins of its switches (the
// SONiC twin with its release's write semantics), ending in sync.
func TestLabModesExamples(t *testing.T) {
	for _, m := range []string{"lossy", "semi-lossless", "pfc-only"} {
		t.Run(m, func(t *testing.T) {
			code, out, errOut := runCLI(t, t.Context(), "lab", "--dir", t.TempDir(), "-f", filepath.Join("..", "..", "examples", "modes", m+".yaml"))
			if code != ExitOK || !strings.Contains(out, "In sync:") {
				t.Fatalf("lab -f examples/modes/%s.yaml: exit %d\n%s%s", m, code, out, errOut)
			}
		})
	}
}
