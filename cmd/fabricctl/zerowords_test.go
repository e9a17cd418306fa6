package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/check"
)

// TestZeroSpeedCableFlagAndIntentAgree: the --speed and --cable flags and
// check (FC133, on the same value written in the intent) refuse zero in the
// same words, so a zero reads the same wherever it is written.
func TestZeroSpeedCableFlagAndIntentAgree(t *testing.T) {
	src, err := os.ReadFile("../../examples/lab.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		flag, value, defaults string // defaults: lab.yaml leaf1's portDefaults with the zero
		parse                 func(name, v string) error
	}{
		{"speed", "0G", "{speed: 0G, cable: 3m}", func(n, v string) error { _, err := parseSpeedFlag(n, v); return err }},
		{"cable", "0m", "{speed: 400G, cable: 0m}", func(n, v string) error { _, err := parseCableFlag(n, v); return err }},
	} {
		err := tc.parse(tc.flag, tc.value)
		if err == nil {
			t.Fatalf("--%s %s taken", tc.flag, tc.value)
		}
		_, words, ok := strings.Cut(err.Error(), "--"+tc.flag+" "+tc.value+": ")
		if !ok || words == "" {
			t.Fatalf("--%s %s: %v (want --%s %s: and the reason)", tc.flag, tc.value, err, tc.flag, tc.value)
		}
		yaml := strings.Replace(string(src), "{speed: 400G, cable: 3m}", tc.defaults, 1)
		f, err := intent.Parse("lab.yaml", []byte(yaml))
		if err != nil {
			t.Fatal(err)
		}
		var found bool
		for _, x := range check.Run(f, check.Options{}) {
			if x.ID == "FC133" && strings.HasSuffix(x.Path, "."+tc.flag) {
				found = true
				if !strings.Contains(x.Message, words) {
					t.Errorf("--%s %s says %q; FC133 says %q", tc.flag, tc.value, words, x.Message)
				}
			}
		}
		if !found {
			t.Errorf("%s: %s in portDefaults: no FC133", tc.flag, tc.value)
		}
		// plan and apply refuse it before reading a switch, as any
		// check error (the port would otherwise be programmed with a
		// headroom for a speed or cable it does not have).
		file := filepath.Join(t.TempDir(), "fabric.yaml")
		if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"plan", "-f", file}, {"apply", "-f", file, "--lock-dir", t.TempDir()}} {
			verb := args[0]
			stdout, stderr, code := runFabricctl(t, args...)
			if code != ExitCheckFailed || !strings.Contains(stdout+stderr, "FC133") || !strings.Contains(stdout+stderr, words) {
				t.Errorf("%s with %s: %s: exit %d, want %d naming FC133 and %q\n%s%s", verb, tc.flag, tc.value, code, ExitCheckFailed, words, stdout, stderr)
			}
		}
	}
}
