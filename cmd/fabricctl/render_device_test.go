package main

import (
	"bytes"
	"io/fs"
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
	sets := map[string][]string{}
	root := filepath.Join("..", "..", "examples")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && !examples.IntentDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if filepath.Ext(p) != ".yaml" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !bytes.Contains(b, []byte("apiVersion: fabricctl.io/")) {
			return nil
		}
		key, _ := filepath.Rel(root, p)
		if dir := filepath.Dir(p); dir != root {
			key, _ = filepath.Rel(root, dir)
		}
		sets[key] = append(sets[key], p)
		return nil
	})
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
