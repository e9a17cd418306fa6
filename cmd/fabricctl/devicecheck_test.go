package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// render --validate --device applies each SetRequest (SONiC's refined
// against the factory CONFIG_DB, as plan would) to the factory datastore of
// the switch's profile. Issue 9 evidence: before issue 10's fixes the lab's
// SR Linux and SONiC payloads were both refused; with the SONiC fixes merged
// only the SR Linux one still is: a factory 7220 lacks the routed
// subinterfaces the classifiers attach to (the operator's configuration,
// which lab's profiled twins get and render's factory datastore does not).
func TestRenderValidateDevice(t *testing.T) {
	file := filepath.Join("..", "..", "examples", "lab.yaml")
	_, stderr, code := runFabricctl(t, "render", "-f", file, "--validate", "--device")
	if code != ExitCheckFailed {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitCheckFailed, stderr)
	}
	for _, want := range []string{
		"leaf1 (srlinux, profile srlinux-25.3, factory defaults): the device would refuse",
		"require-instance",
		"1 of 3 switch(es) would refuse",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "leaf2 (sonic") {
		t.Errorf("the SONiC payload, refined against the factory CONFIG_DB, is refused:\n%s", stderr)
	}
	if _, stderr, code := runFabricctl(t, "render", "-f", file, "--device"); code != ExitUsage || !strings.Contains(stderr, "--device needs --validate") {
		t.Errorf("--device without --validate: exit %d, %s", code, stderr)
	}
}
