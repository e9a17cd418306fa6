package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// render --validate --device applies each SetRequest to the factory datastore
// of the switch's profile. Issue 9 evidence: today's compilers' payloads for
// the lab's SR Linux and SONiC switches are refused with the devices'
// reasons (the EOS one is CLI and OpenConfig, which its profile accepts).
// When issue 10's compiler fixes land, this test flips to exit 0.
func TestRenderValidateDevice(t *testing.T) {
	file := filepath.Join("..", "..", "examples", "lab.yaml")
	_, stderr, code := runFabricctl(t, "render", "-f", file, "--validate", "--device")
	if code != ExitCheckFailed {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitCheckFailed, stderr)
	}
	for _, want := range []string{
		"leaf1 (srlinux, profile srlinux-25.3, factory defaults): the device would refuse",
		"require-instance",
		"leaf2 (sonic, profile sonic-202411, factory defaults): the device would refuse",
		"Invalid entry",
		"2 of 3 switch(es) would refuse",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if _, stderr, code := runFabricctl(t, "render", "-f", file, "--device"); code != ExitUsage || !strings.Contains(stderr, "--device needs --validate") {
		t.Errorf("--device without --validate: exit %d, %s", code, stderr)
	}
}
