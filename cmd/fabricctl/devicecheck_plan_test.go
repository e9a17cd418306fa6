package main

import (
	"path/filepath"
	"strings"
	"testing"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/profile"
)

// plan --device reads each switch's whole configuration and asks a twin of
// its release profile whether the SetRequest would be accepted. Issue 9
// evidence: the SR Linux payload passes on a 7220 twin that has the
// operator's routed subinterfaces (it was refused until the validator read
// the weighted scheduler 1 without priority as SR Linux does); on
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
	if code != ExitOK {
		t.Errorf("exit %d, want %d", code, ExitOK)
	}
	for _, want := range []string{
		"switch leaf2 (sonic):",
		"note: ports that will flap (SONiC's config updater takes them admin-down around port-critical changes): Ethernet0, Ethernet12, Ethernet4, Ethernet8",
	} {
		if !strings.Contains(out+errOut, want) {
			t.Errorf("plan --device lacks %q:\n%s\n%s", want, out, errOut)
		}
	}
	if strings.Contains(out+errOut, "would refuse") {
		t.Errorf("plan --device says a device would refuse its SetRequest:\n%s\n%s", out, errOut)
	}
	t.Logf("%s\n%s", out, errOut)

	// Without the subinterface the classifier attaches to (the operator's,
	// not fabricctl's) the 7220 would refuse: plan refuses first, naming
	// the port and the fix (issue 27 item 4), and asks no device check.
	sub := &gnmipb.Path{Elem: []*gnmipb.PathElem{{Name: "interface", Key: map[string]string{"name": "ethernet-1/3"}}, {Name: "subinterface", Key: map[string]string{"index": "0"}}}}
	if err := twinByName(t, l, "leaf1").Delete(sub); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, t.Context(), "plan", "-f", l.file, "--device", "--skip-hosts")
	if code != ExitError {
		t.Errorf("exit %d, want %d", code, ExitError)
	}
	for _, want := range []string{
		"port ethernet-1/3 subinterface 0: ethernet-1/3.0 does not exist",
		"set / interface ethernet-1/3 subinterface 0 type routed ip-mtu 9216",
	} {
		if !strings.Contains(out+errOut, want) {
			t.Errorf("plan --device without leaf1's ethernet-1/3.0 lacks %q:\n%s\n%s", want, out, errOut)
		}
	}
	t.Logf("%s\n%s", out, errOut)
}

// plan --detailed-exitcode counts changes, not lacks: what a switch lacks
// and apply cannot give it (here SONiC's PFC watchdog, which only the
// pfcwd CLI starts) is shown, but applying the plan would not change it,
// so a CI loop of "plan --detailed-exitcode || apply" would never settle on
// it; diff, which reports drift, exits 2 on it.
func TestPlanDetailedExitcodeCountsChangesNotLacks(t *testing.T) {
	reg, err := newRegistry()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	l, err := startLabWith(dir, reg, labProfiles{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	runCLIWant(t, ExitOK, "apply", "-f", l.file, "--skip-hosts", "--backup-dir", filepath.Join(dir, "b"))
	wd := &gnmipb.Path{Origin: "sonic-db", Elem: []*gnmipb.PathElem{{Name: "CONFIG_DB"}, {Name: "localhost"}, {Name: "PFC_WD"}}}
	if err := twinByName(t, l, "leaf2").Delete(wd); err != nil {
		t.Fatal(err)
	}
	out := runCLIWant(t, ExitOK, "plan", "-f", l.file, "--skip-hosts", "--detailed-exitcode")
	if !strings.Contains(out, "PFC_WD") {
		t.Errorf("plan does not show the missing watchdog:\n%s", out)
	}
	out = runCLIWant(t, ExitChanges, "diff", "-f", l.file, "--skip-hosts")
	if !strings.Contains(out, "PFC_WD") {
		t.Errorf("diff does not name the missing watchdog:\n%s", out)
	}
}
