package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// render --validate --device applies each SetRequest (SONiC's refined
// against the factory CONFIG_DB, as plan would) to the factory datastore of
// the switch's profile. Issue 9 evidence: before issue 10's fixes the lab's
// SR Linux and SONiC payloads were both refused. A factory 7220 lacks the
// routed subinterfaces the classifiers attach to (the operator's
// configuration): issue 27 item 4, render takes the intent's ports and
// their subinterfaces as existing and says so (exit 0); --bare is the
// factory datastore alone, which refuses the SR Linux payload.
func TestRenderValidateDevice(t *testing.T) {
	file := filepath.Join("..", "..", "examples", "lab.yaml")
	_, stderr, code := runFabricctl(t, "render", "-f", file, "--validate", "--device")
	if code != ExitOK {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitOK, stderr)
	}
	if want := "leaf1 (srlinux, profile srlinux-25.3): assumed on the factory datastore: its 4 inventory port(s) ethernet-1/1 .. ethernet-1/4 as routed interfaces with subinterface 0, ip-mtu 9216"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	_, stderr, code = runFabricctl(t, "render", "-f", file, "--validate", "--device", "--bare")
	if code != ExitCheckFailed {
		t.Fatalf("--bare: exit %d, want %d; stderr:\n%s", code, ExitCheckFailed, stderr)
	}
	for _, want := range []string{
		"leaf1 (srlinux, profile srlinux-25.3, factory defaults): the device would refuse",
		"require-instance",
		"1 of 3 switch(es) would refuse",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("--bare: stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "leaf2 (sonic") {
		t.Errorf("the SONiC payload, refined against the factory CONFIG_DB, is refused:\n%s", stderr)
	}
	if _, stderr, code := runFabricctl(t, "render", "-f", file, "--device"); code != ExitUsage || !strings.Contains(stderr, "--device needs --validate") {
		t.Errorf("--device without --validate: exit %d, %s", code, stderr)
	}
}
