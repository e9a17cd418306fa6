package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// complete asks cobra's hidden __complete command, as the shell scripts of
// fabricctl completion do, and returns the candidates.
func complete(t *testing.T, args ...string) []string {
	t.Helper()
	code, out, errOut := runCLI(t, t.Context(), append([]string{"__complete"}, args...)...)
	if code != ExitOK {
		t.Fatalf("__complete %v: exit %d: %s", args, code, errOut)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" && !strings.HasPrefix(l, ":") {
			got = append(got, strings.SplitN(l, "\t", 2)[0])
		}
	}
	return got
}

func TestCompletionOfFlagValues(t *testing.T) {
	f := filepath.Join(t.TempDir(), "fabric.yaml")
	text := `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
policy: {preset: roce-lossless}
inventory:
  switches:
    - {name: "leaf{1..2}", platform: srlinux, address: "10.0.0.{1..2}:57400", ports: [{name: e1, speed: 400G}]}
    - {name: spine1, platform: sonic, address: "10.0.1.1:8080", ports: [{name: Ethernet0, speed: 400G}]}
  hosts:
    - {name: gpu1, address: 10.0.2.1}
`
	if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"render", "-o", ""}, []string{"prototext", "json"}},
		{[]string{"plan", "-o", ""}, []string{"text", "json", "markdown"}},
		{[]string{"apply", "--output", ""}, []string{"text", "json"}},
		{[]string{"host", "plan", "-o", ""}, []string{"text", "json", "markdown", "commands", "netlink"}},
		{[]string{"validate", "--engine", ""}, []string{"rdma", "udp"}},
		{[]string{"plan", "--log-level", ""}, []string{"debug", "info", "warn", "error"}},
		{[]string{"plan", "-f", f, "--switch", ""}, []string{"leaf1", "leaf2", "spine1"}},
		{[]string{"diff", "-f", f, "--switch", "le"}, []string{"leaf1", "leaf2"}},
		{[]string{"apply", "-f", f, "--host", ""}, []string{"gpu1"}},
		{[]string{"plan", "--switch", ""}, nil}, // no -f: nothing to offer
	}
	for _, tt := range tests {
		if got := complete(t, tt.args...); !slices.Equal(got, tt.want) {
			t.Errorf("complete %q = %q, want %q", tt.args, got, tt.want)
		}
	}
}
