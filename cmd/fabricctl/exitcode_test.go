package main

import (
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
