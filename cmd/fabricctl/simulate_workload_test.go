package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
)

// portFlagCommands are the commands that take a port speed (--speed) or a
// cable length (--cable), each with the arguments that make a value taken
// end in a known way: simulate and tune read an intent that does not
// exist (exit 1), inventory import a topology that does not exist (exit
// 1), headroom computes (exit 0; it needs --speed, given unless the flag
// under test is --speed). All of them read the flags before anything else.
func portFlagCommands(t *testing.T, flag string) []struct {
	name string
	args []string
	ok   int
} {
	missing := filepath.Join(t.TempDir(), "none.yaml")
	headroom := []string{"headroom"}
	if flag != "speed" {
		headroom = append(headroom, "--speed", "100G")
	}
	return []struct {
		name string
		args []string
		ok   int
	}{
		{"simulate", []string{"simulate", "-f", missing}, ExitError},
		{"tune", []string{"tune", "-f", missing}, ExitError},
		{"headroom", headroom, ExitOK},
		{"inventory import", []string{"inventory", "import", "--containerlab", missing}, ExitError},
	}
}

// TestWorkloadFlagsAgree: every command taking --speed or --cable
// (simulate, tune, headroom, inventory import) takes and refuses the same
// values with the same words (one parse: parseSpeedFlag, parseCableFlag),
// and simulate and tune the same --size (workloadFlags). A value refused is
// the usage error (exit 64) with one stderr for all; a value taken ends as
// the command ends without the flag's fault (see portFlagCommands).
func TestWorkloadFlagsAgree(t *testing.T) {
	for _, tt := range []struct {
		flag, value string
		ok          bool
		// words the refusal must say (the intent's own, or FC127's)
		says string
	}{
		{"speed", "100G", true, ""},
		{"speed", "400Gbps", true, ""},
		{"speed", "25g", true, ""},
		{"speed", "1.6T", true, ""},
		{"speed", "1G", true, ""},
		{"speed", "0G", false, "--speed 0G: no line rate"},
		{"speed", "0", false, "--speed 0: no line rate"},
		{"speed", "-100G", false, `--speed: rate "-100G": want a number with a unit`},
		{"speed", "fast", false, `--speed: rate "fast": want a number with a unit`},
		{"speed", "100", false, `--speed: rate "100": want a number with a unit`},
		{"speed", "50GB/s", false, "B is a byte"},
		{"speed", "400M", false, "--speed 400M: 400M is 400 Mb/s, below 1G: too slow for RoCE and surely a unit typo; did you mean 400G? (FC127)"},
		{"speed", "20T", false, `--speed: "20T": too large`},
		{"cable", "3m", true, ""},
		{"cable", "0.5km", true, ""},
		{"cable", "150cm", true, ""},
		{"cable", "100 m", true, ""},
		{"cable", "0m", false, "--cable 0m: no length"},
		{"cable", "three", false, `--cable: length "three": want a number with a unit`},
		{"cable", "3M", false, "units are lower case (M would be mega): write 3m"},
		{"cable", "3", false, `--cable: length "3"`},
		{"cable", "200km", false, "longer than 100 km"},
		{"size", "512KB", true, ""},
		{"size", "4MB", true, ""},
		{"size", "1000", true, ""},
		{"size", "64KiB", true, ""},
		{"size", "0", false, "--size 0: no size"},
		{"size", "-1KB", false, `--size: size "-1KB": want a whole number of bytes or a number with a unit`},
		{"size", "lots", false, `--size: size "lots": want a whole number of bytes or a number with a unit`},
		{"size", "150kb", false, "b is a bit, sizes are in bytes: write 150kB"},
	} {
		t.Run(tt.flag+"="+tt.value, func(t *testing.T) {
			cmds := portFlagCommands(t, tt.flag)
			if tt.flag == "size" {
				cmds = cmds[:2] // simulate and tune
			}
			var first string
			for i, c := range cmds {
				_, stderr, code := runFabricctl(t, append(c.args, "--"+tt.flag, tt.value)...)
				if tt.ok {
					if code != c.ok || strings.Contains(stderr, "--"+tt.flag) {
						t.Errorf("%s --%s %q: exit %d %q, want %d and no word of the flag", c.name, tt.flag, tt.value, code, stderr, c.ok)
					}
					continue
				}
				if code != ExitUsage || !strings.Contains(stderr, tt.says) {
					t.Errorf("%s --%s %q: exit %d %q, want %d saying %q", c.name, tt.flag, tt.value, code, stderr, ExitUsage, tt.says)
				}
				if i == 0 {
					first = stderr
				} else if stderr != first {
					t.Errorf("--%s %q: %s says %q, %s %q: want the same", tt.flag, tt.value, cmds[0].name, first, c.name, stderr)
				}
			}
		})
	}
}

// TestWorkloadAndPortFlagsReadAsTheIntent: a --speed or --cable value is what the same
// value is as a switch port's speed: or cable: in the intent (one grammar,
// intent.ParseRate and intent.ParseLength), and a value the intent's
// grammar refuses is refused in the words the intent's parse error uses.
// The flags refuse two values more, both said in the test above: zero (a
// flag cannot mean "not given") and a speed below 1G (FC127, which check
// raises on the intent).
func TestWorkloadAndPortFlagsReadAsTheIntent(t *testing.T) {
	port := func(speed, cable string) (*intent.Fabric, error) {
		doc := fmt.Sprintf(`apiVersion: %s
kind: %s
policy: {preset: roce-lossless}
inventory:
  switches:
    - name: leaf1
      platform: sonic
      address: 192.0.2.1:8080
      ports: [{name: Ethernet0, speed: %q, cable: %q}]
`, intent.APIVersion, intent.Kind, speed, cable)
		return intent.Parse("fabric.yaml", []byte(doc))
	}
	for _, v := range []string{"100G", "400Gbps", "25g", "1.6T", "800 G", "fast", "100", "50GB/s", "-1G", "20T", "1,5G"} {
		f, yerr := port(v, "3m")
		got, ferr := parseSpeedFlag("speed", v)
		switch {
		case yerr == nil && ferr == nil:
			if w := f.Switches[0].Ports[0].Speed; got != w {
				t.Errorf("--speed %s is %d b/s, speed: %s in the intent %d", v, got, v, w)
			}
		case yerr != nil && ferr != nil:
			_, words, _ := strings.Cut(ferr.Error(), "--speed: ")
			if words == "" || !strings.Contains(yerr.Error(), words) {
				t.Errorf("--speed %s says %q, the intent %q: want the intent's words", v, ferr, yerr)
			}
		default:
			t.Errorf("--speed %s: flag error %v, intent error %v: want both or neither", v, ferr, yerr)
		}
	}
	for _, v := range []string{"3m", "0.5km", "150cm", "100 m", "three", "3M", "3", "200km", "3 metres"} {
		f, yerr := port("100G", v)
		got, ferr := parseCableFlag("cable", v)
		switch {
		case yerr == nil && ferr == nil:
			if w := f.Switches[0].Ports[0].CableMeters; got != w {
				t.Errorf("--cable %s is %g m, cable: %s in the intent %g m", v, got, v, w)
			}
		case yerr != nil && ferr != nil:
			_, words, _ := strings.Cut(ferr.Error(), "--cable: ")
			if words == "" || !strings.Contains(yerr.Error(), words) {
				t.Errorf("--cable %s says %q, the intent %q: want the intent's words", v, ferr, yerr)
			}
		default:
			t.Errorf("--cable %s: flag error %v, intent error %v: want both or neither", v, ferr, yerr)
		}
	}
}
