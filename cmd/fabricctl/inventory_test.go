package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInventoryImport imports the SR Linux lab, writes the inventory next to
// a policy file and checks the two together, as the README tells users to.
func TestInventoryImport(t *testing.T) {
	dir := t.TempDir()
	topo, err := filepath.Abs("../../containerlab/srl-leafspine/srl-leafspine.clab.yml")
	if err != nil {
		t.Fatal(err)
	}
	inv := filepath.Join(dir, "inventory.yaml")
	stdout, stderr, code := runFabricctl(t, "inventory", "import", "--containerlab", topo, "-o", inv, "--speed", "400G", "--cable", "5m")
	if code != ExitOK {
		t.Fatalf("import exit %d, want 0; stderr:\n%s", code, stderr)
	}
	if stdout != "" {
		t.Errorf("import with -o printed to stdout:\n%s", stdout)
	}
	data, err := os.ReadFile(inv)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"speed: 400G, cable: 5m", "address: \"172.30.10.21:57400\"", "[\"gpu1:eth1\", \"leaf1:ethernet-1/1\"]"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("inventory lacks %q:\n%s", want, data)
		}
	}
	// The lab CA path is written relative to the output file.
	rel, err := filepath.Rel(dir, filepath.Join(filepath.Dir(topo), "clab-srl-leafspine", ".tls", "ca", "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "ca: "+filepath.ToSlash(rel)) {
		t.Errorf("inventory does not point tls.ca at %s:\n%s", rel, data)
	}
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte("apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\npolicy: {preset: roce-lossless}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runFabricctl(t, "check", "-f", policy, "-f", inv); code != ExitOK {
		t.Errorf("check of policy + imported inventory: exit %d, want 0\n%s", code, stderr)
	}
}

func TestInventoryImportExitCodes(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.clab.yml")
	bad := filepath.Join(t.TempDir(), "bad.clab.yml")
	if err := os.WriteFile(bad, []byte("name: x\ntopology:\n  nodes:\n    r1: {kind: juniper_vmx}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"no topology", []string{"inventory", "import"}, ExitUsage},
		{"bad speed", []string{"inventory", "import", "--containerlab", bad, "--speed", "fast"}, ExitUsage},
		{"bad cable", []string{"inventory", "import", "--containerlab", bad, "--cable", "-3m"}, ExitUsage},
		{"no subcommand", []string{"inventory"}, ExitUsage},
		{"missing file", []string{"inventory", "import", "--containerlab", missing}, ExitError},
		{"unknown kind", []string{"inventory", "import", "--containerlab", bad}, ExitError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runFabricctl(t, tc.args...)
			if code != tc.want {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.want, stderr)
			}
		})
	}
}
