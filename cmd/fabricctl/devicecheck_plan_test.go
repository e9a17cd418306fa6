package main

import (
	"strings"
	"testing"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/profile"
)

// plan --device reads each switch's whole configuration and asks a twin of
// its release profile whether the SetRequest would be accepted. Issue 9
// evidence: the SR Linux payload is still refused on a 7220 twin (the
// sequence-1 weighted scheduler without priority, which strict XPath 1.0
// and libyang refuse and SR Linux accepts: not yet handled); on
// sonic-202405 with the watchdog enabled at boot the SONiC payload passes
// and the plan names the ports GCU will flap.
func TestPlanDevice(t *testing.T) {
	reg, err := newRegistry()
	if err != nil {
		t.Fatal(err)
	}
	p405, _ := profile.Lookup("sonic-202405")
	l, err := startLabWith(t.TempDir(), reg, labProfiles{intent.PlatformSONiC: p405})
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	// A switch whose image enabled the PFC watchdog at boot has PFC_WD.
	if err := twinByName(t, l, "leaf2").Put(&gnmipb.Path{Origin: "sonic-db", Elem: []*gnmipb.PathElem{{Name: "CONFIG_DB"}, {Name: "localhost"}, {Name: "PFC_WD"}}},
		map[string]any{"GLOBAL": map[string]any{"POLL_INTERVAL": "100"}}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, t.Context(), "plan", "-f", l.file, "--device", "--skip-hosts")
	if code != ExitError {
		t.Errorf("exit %d, want %d", code, ExitError)
	}
	for _, want := range []string{
		"switch leaf1: the device would refuse this SetRequest: (InvalidArgument)",
		"scheduler with sequence 0 must be strict priority and scheduler with sequence 1 must be weighted RR",
		"switch leaf2 (sonic):",
		"note: ports that will flap (SONiC's config updater takes them admin-down around port-critical changes): Ethernet0, Ethernet12, Ethernet4, Ethernet8",
	} {
		if !strings.Contains(out+errOut, want) {
			t.Errorf("plan --device lacks %q:\n%s\n%s", want, out, errOut)
		}
	}
	t.Logf("%s\n%s", out, errOut)
}
