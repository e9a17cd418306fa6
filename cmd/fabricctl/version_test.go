package main

import (
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/internal/yangcheck"
)

// TestVersionListsYANG: fabricctl version names every shipped YANG module
// with its version and source commit.
func TestVersionListsYANG(t *testing.T) {
	t.Setenv(yangcheck.EnvDir, "")
	stdout, stderr, code := runFabricctl(t, "version")
	if code != ExitOK {
		t.Fatalf("version exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"YANG modules (embedded,",
		"openconfig-qos", "2.2.0 (2026-04-30)", "openconfig/public@94f589629e1e",
		"srl_nokia-qos", "nokia/srlinux-yang-models@cd5995eaa681",
		"sonic-port-qos-map", "sonic-net/sonic-buildimage@086b03bd70f9",
		"arista-qos-augments", "aristanetworks/yang@63be023aa565",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("version output lacks %q:\n%s", want, stdout)
		}
	}
}
