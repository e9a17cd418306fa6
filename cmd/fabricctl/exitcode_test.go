package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUsageErrorsExit64: every mistake in the command line itself exits 64,
// whichever command it is made on: extra arguments, a missing or unknown
// subcommand of a command group, and flag values that parse but make no
// sense (NaN).
func TestUsageErrorsExit64(t *testing.T) {
	clean := writeIntent(t, cleanIntent)
	for _, args := range [][]string{
		{"apply", "-f", clean, "plan1.json", "plan2.json"},
		{"perftest", "parse", "a.txt", "b.txt"},
		{"check", "-f", clean, "extra"},
		{"host"},
		{"host", "aply", "-f", clean},
		{"inventory"},
		{"inventory", "imprt"},
		{"perftest"},
		{"perftest", "parze"},
		{"completion"},
		{"completion", "tcsh"},
		{"headroom", "--speed", "100G", "--cell-factor", "NaN"},
		{"check", "-f", clean, "--cell-factor", "NaN"},
	} {
		out, errOut, code := runFabricctl(t, args...)
		if code != ExitUsage {
			t.Errorf("fabricctl %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, ExitUsage, out, errOut)
		}
	}
}

// TestGroupHelpStillWorks: --help and help on a command group print its help
// and succeed.
func TestGroupHelpStillWorks(t *testing.T) {
	for _, args := range [][]string{{"host", "--help"}, {"help", "host"}, {"inventory", "--help"}, {"completion", "bash"}} {
		out, errOut, code := runFabricctl(t, args...)
		if code != ExitOK || out == "" {
			t.Errorf("fabricctl %s: exit %d with %d bytes of output, want 0 and some output\nstderr:\n%s", strings.Join(args, " "), code, len(out), errOut)
		}
	}
}

// TestUnknownTargetIsRefused: a --switch or --host naming no target fails,
// never exits 0 having done nothing. With a saved plan the names are
// checked against the plan's targets (before, apply PLAN --switch leaf9
// filtered every target away, applied nothing and exited 0). An unknown
// --switch is an error (1), an unknown --host a usage error (64), as
// when planning afresh.
func TestUnknownTargetIsRefused(t *testing.T) {
	clean := writeIntent(t, cleanIntent)
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(plan, []byte(`{"version": 1, "fabric": "pod1", "targets": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	withHost := writeIntent(t, cleanIntent+`  hosts:
    - {name: gpu1, address: 192.0.2.1, nics: [{interface: eth1}]}
`)
	for _, tt := range []struct {
		args []string
		want int
	}{
		{[]string{"plan", "-f", clean, "--switch", "leaf9"}, ExitError},
		{[]string{"diff", "-f", clean, "--switch", "leaf9"}, ExitError},
		{[]string{"apply", "-f", clean, "--switch", "leaf9"}, ExitError},
		{[]string{"render", "-f", clean, "--switch", "leaf9"}, ExitError},
		{[]string{"diff", "-f", clean, "--host", "gpu9"}, ExitUsage},
		{[]string{"apply", "-f", clean, "--switch", "leaf9", plan}, ExitError},
		{[]string{"apply", "-f", clean, "--switch", "leaf1", plan}, ExitError}, // in the intent, not in the plan
		{[]string{"apply", "-f", clean, "--host", "gpu9", plan}, ExitUsage},
		{[]string{"apply", "-f", withHost, "--host", "gpu1", plan}, ExitError}, // in the intent, not in the plan
		// The hand-made plan records no intent hash: --force goes past that.
		{[]string{"apply", "-f", withHost, "--host", "gpu1", "--skip-hosts", "--force", "--backup-dir", dir, plan}, ExitOK},
	} {
		out, errOut, code := runFabricctl(t, tt.args...)
		name := tt.args[len(tt.args)-1]
		if strings.HasSuffix(name, ".json") {
			name = tt.args[4]
		}
		if code != tt.want || (code != ExitOK && !strings.Contains(errOut, name)) {
			t.Errorf("fabricctl %s: exit %d, want %d naming %s\nstdout:\n%s\nstderr:\n%s", strings.Join(tt.args, " "), code, tt.want, name, out, errOut)
		}
	}
}
