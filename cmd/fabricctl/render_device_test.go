package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/examples"
)

// exampleIntents returns every example intent under ../../examples as the
// files that make it (a top-level *.yaml alone, a folder's *.yaml together,
// and the GitOps repository's fabric), by name.
func exampleIntents(t *testing.T) map[string][]string {
	t.Helper()
	root := filepath.Join("..", "..", "examples")
	sets, err := examples.IntentSets(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) < 4 {
		t.Fatalf("found %d example intents, want at least 4", len(sets))
	}
	// The GitOps repository's fabric: its policy and inventory files.
	gitops, err := filepath.Glob(filepath.Join(root, "gitops", "fabric", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	inv, err := filepath.Glob(filepath.Join(root, "gitops", "fabric", "inventory", "*.yaml"))
	if err != nil || len(gitops)+len(inv) < 2 {
		t.Fatalf("examples/gitops/fabric: %v files, %v", append(gitops, inv...), err)
	}
	sets["gitops/fabric"] = append(gitops, inv...)
	return sets
}

// TestRenderDeviceEveryExample (issue 27 item 4): the README's evidence
// command, render --validate --device, exits 0 on every example: the SR
// Linux subinterfaces the classifiers attach to are taken as existing
// (routed, ip-mtu the port's IP MTU) and the output says so; --bare is the
// factory datastore alone, on which SR Linux refuses the payloads
// (leafref to the missing subinterfaces), exit 3.
func TestRenderDeviceEveryExample(t *testing.T) {
	for name, files := range exampleIntents(t) {
		t.Run(name, func(t *testing.T) {
			args := []string{"render", "--validate", "--device"}
			for _, f := range files {
				args = append(args, "-f", f)
			}
			code, _, stderr := runCLI(t, t.Context(), args...)
			if code != ExitOK {
				t.Fatalf("fabricctl %s: exit %d, want 0\n%s", strings.Join(args, " "), code, stderr)
			}
			srl := false
			for _, f := range files {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				srl = srl || bytes.Contains(b, []byte("platform: srlinux"))
			}
			if !srl {
				return
			}
			if !strings.Contains(stderr, "assumed on the factory datastore") || !strings.Contains(stderr, "--bare") {
				t.Errorf("render --device does not print what it assumed on SR Linux:\n%s", stderr)
			}
			code, _, stderr = runCLI(t, t.Context(), append(args, "--bare")...)
			if code != ExitCheckFailed || !strings.Contains(stderr, "require-instance") {
				t.Errorf("render --device --bare: exit %d, want 3 with the leafref refusal\n%s", code, stderr)
			}
		})
	}
}

// TestRenderBareNeedsDevice: --bare is a form of --device.
func TestRenderBareNeedsDevice(t *testing.T) {
	runCLIWant(t, ExitUsage, "render", "-f", "../../examples/lab.yaml", "--validate", "--bare")
}
