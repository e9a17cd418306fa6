package main

import (
	"path/filepath"
	"testing"
)

// TestWorkloadFlagsAgree: simulate and tune take and refuse the same
// --speed, --cable and --size values with the same words (one parse,
// workloadFlags), and refuse them before reading the intent: the intent
// here does not exist, so a value taken ends in that error (exit 1) and a
// value refused in the usage error (exit 64).
func TestWorkloadFlagsAgree(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none.yaml")
	for _, tt := range []struct {
		flag, value string
		ok          bool
	}{
		{"speed", "100G", true},
		{"speed", "400Gbps", true},
		{"speed", "0G", false},
		{"speed", "-100G", false},
		{"speed", "fast", false},
		{"cable", "3m", true},
		{"cable", "0.5km", true},
		{"cable", "0m", false},
		{"cable", "three", false},
		{"size", "512KB", true},
		{"size", "4MB", true},
		{"size", "1000", true},
		{"size", "0", false},
		{"size", "-1KB", false},
		{"size", "lots", false},
	} {
		t.Run(tt.flag+"="+tt.value, func(t *testing.T) {
			type result struct {
				code   int
				stderr string
			}
			var got []result
			for _, cmd := range []string{"simulate", "tune"} {
				_, stderr, code := runFabricctl(t, cmd, "-f", missing, "--"+tt.flag, tt.value)
				got = append(got, result{code, stderr})
			}
			want := ExitUsage
			if tt.ok {
				want = ExitError // the missing intent, read after the flags
			}
			if got[0] != got[1] {
				t.Errorf("--%s %q: simulate exit %d %q, tune exit %d %q: want the same", tt.flag, tt.value, got[0].code, got[0].stderr, got[1].code, got[1].stderr)
			}
			if got[0].code != want {
				t.Errorf("--%s %q: exit %d (%q), want %d", tt.flag, tt.value, got[0].code, got[0].stderr, want)
			}
		})
	}
}
