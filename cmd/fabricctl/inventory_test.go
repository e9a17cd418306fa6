package main

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
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
	stdout, stderr, code := runFabricctl(t, "inventory", "import", "--containerlab", topo, "--out", inv, "--speed", "400G", "--cable", "5m")
	if code != ExitOK {
		t.Fatalf("import exit %d, want 0; stderr:\n%s", code, stderr)
	}
	if stdout != "" {
		t.Errorf("import with --out printed to stdout:\n%s", stdout)
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
	// A policy with its own metadata.name: the import takes it with --name.
	named := filepath.Join(dir, "named-policy.yaml")
	if err := os.WriteFile(named, []byte("apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\nmetadata: {name: pod1}\npolicy: {preset: roce-lossless}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, code := runFabricctl(t, "check", "-f", named, "-f", inv); code != ExitCheckFailed {
		t.Errorf("check of a policy named pod1 + an inventory named for the lab: exit %d, want %d (the names differ)", code, ExitCheckFailed)
	}
	if _, stderr, code := runFabricctl(t, "inventory", "import", "--containerlab", topo, "--out", inv, "--name", "pod1"); code != ExitOK {
		t.Fatalf("import --name: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := runFabricctl(t, "check", "-f", named, "-f", inv); code != ExitOK {
		t.Errorf("check of policy pod1 + inventory imported with --name pod1: exit %d, want 0\n%s", code, stderr)
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
		{"-o is a format, not a file", []string{"inventory", "import", "--containerlab", bad, "-o", "inv.yaml"}, ExitUsage},
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

// fabricctlCall finds fabricctl invocations: `fabricctl sub ...` or, in
// e2e.sh, `"$fabricctl" sub ...`.
var fabricctlCall = regexp.MustCompile(`(?:^|[\s(;&|{])(?:"\$fabricctl"|fabricctl) +([a-z][^\n|;&)]*)`)

// TestLabAndGitOpsUseRealFlags runs every fabricctl command line written in
// the lab script, the lab and GitOps READMEs and the sample workflow through
// the real command tree: each subcommand and flag must exist, so the docs
// cannot drift from the CLI.
func TestLabAndGitOpsUseRealFlags(t *testing.T) {
	files := []string{
		"../../containerlab/e2e.sh",
		"../../containerlab/README.md",
		"../../examples/gitops/README.md",
		"../../examples/gitops/.github/workflows/fabric.yml",
	}
	d := &deps{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}
	root := newRootCmd(d)
	seen := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range commandLines(file, string(data)) {
			for _, m := range fabricctlCall.FindAllStringSubmatch(line, -1) {
				args := strings.Fields(m[1])
				cmd, rest, err := root.Find(args)
				if err != nil || cmd == root {
					t.Errorf("%s: %q: no such fabricctl command (%v)", file, strings.TrimSpace(m[0]), err)
					continue
				}
				seen++
				for _, a := range rest {
					var f *pflag.Flag
					switch {
					case strings.HasPrefix(a, "--"):
						name, _, _ := strings.Cut(a[2:], "=")
						f = cmd.Flags().Lookup(name)
						if f == nil {
							f = cmd.InheritedFlags().Lookup(name)
						}
					case len(a) == 2 && a[0] == '-' && a[1] != '-':
						f = cmd.Flags().ShorthandLookup(a[1:])
						if f == nil {
							f = cmd.InheritedFlags().ShorthandLookup(a[1:])
						}
					default:
						continue
					}
					if f == nil {
						t.Errorf("%s (line %d of the commands): %s has no flag %s", file, i+1, cmd.CommandPath(), a)
					}
				}
			}
		}
	}
	if seen < 20 {
		t.Errorf("found %d fabricctl command lines, want at least 20: is the pattern still right?", seen)
	}
}

// commandLines returns the lines of a file that are commands: every line of
// a script, the run: lines of a workflow (not names or comments), and code
// (fenced blocks and `spans`) of a Markdown file.
func commandLines(file, data string) []string {
	var out []string
	switch filepath.Ext(file) {
	case ".md":
		fenced := false
		for _, l := range strings.Split(data, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "```") {
				fenced = !fenced
				continue
			}
			if fenced {
				if !strings.HasPrefix(strings.TrimSpace(l), "#") {
					out = append(out, l)
				}
				continue
			}
			for _, span := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(l, -1) {
				out = append(out, span[1])
			}
		}
	default:
		for _, l := range strings.Split(data, "\n") {
			tl := strings.TrimSpace(l)
			if strings.HasPrefix(tl, "#") || strings.HasPrefix(tl, "- name:") || strings.HasPrefix(tl, "name:") ||
				strings.HasPrefix(tl, "echo") || strings.HasPrefix(tl, "die ") || strings.HasPrefix(tl, "step ") {
				continue
			}
			out = append(out, l)
		}
	}
	return out
}
