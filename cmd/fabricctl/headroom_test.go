package main

import (
	"strings"
	"testing"
)

// TestHeadroomPortRefusesPortFigures: headroom --port takes the port's
// speed, cable, MTU and ASIC from the intent, so a flag that would set one
// of them is refused, naming it, rather than silently left unused (--cable
// and --mtu have defaults, so what counts is whether they were given).
func TestHeadroomPortRefusesPortFigures(t *testing.T) {
	lab := "../../examples/lab.yaml"
	if _, errOut, code := runFabricctl(t, "headroom", "-f", lab, "--port", "leaf2:Ethernet0"); code != ExitOK {
		t.Fatalf("--port alone: exit %d, %q", code, errOut)
	}
	for _, tc := range []struct {
		flags []string
		names string
	}{
		{[]string{"--speed", "100G"}, "no --speed"},
		{[]string{"--cable", "3m"}, "no --cable"},
		{[]string{"--cable", "100m"}, "no --cable"}, // the default, given
		{[]string{"--mtu", "9100"}, "no --mtu"},
		{[]string{"--asic", "spectrum2"}, "no --asic"},
		{[]string{"--cable", "3m", "--mtu", "9100"}, "no --cable, --mtu"},
	} {
		args := append([]string{"headroom", "-f", lab, "--port", "leaf2:Ethernet0"}, tc.flags...)
		_, errOut, code := runFabricctl(t, args...)
		if code != ExitUsage || !strings.Contains(errOut, "--port takes the port's speed, cable, MTU and ASIC from the intent: "+tc.names+"\n") {
			t.Errorf("headroom %s: exit %d, %q; want %d naming %s", strings.Join(tc.flags, " "), code, errOut, ExitUsage, tc.names)
		}
	}
}
