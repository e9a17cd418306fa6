package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricctl/fabricctl/internal/sim"
)

// The golden files of this package are rewritten with `go test -update`.
// Several command test files share the package, so the flag is registered
// only once, by whichever file gets there first.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "update golden files")
	}
}

func updateGoldens() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// runFabricctl runs the CLI in-process.
func runFabricctl(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

// toRepoRoot makes the repository root the working directory for the rest
// of the test, so paths in the output read as a user typing them there would
// see them, and returns this package's testdata directory.
func toRepoRoot(t *testing.T) (testdata string) {
	t.Helper()
	td, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir("../..")
	return td
}

func checkGolden(t *testing.T, testdata, name, got string) {
	t.Helper()
	path := filepath.Join(testdata, name)
	if updateGoldens() {
		if err := os.MkdirAll(testdata, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (go test -update creates it): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

// TestCheckBrokenExample is the golden of
// `fabricctl check -f examples/broken/fabric.yaml` (text, no colour).
func TestCheckBrokenExample(t *testing.T) {
	td := toRepoRoot(t)
	out, errOut, code := runFabricctl(t, "check", "-f", "examples/broken/fabric.yaml")
	if code != ExitCheckFailed {
		t.Errorf("exit code = %d, want %d (stderr %q)", code, ExitCheckFailed, errOut)
	}
	if errOut != "" {
		t.Errorf("stderr = %q, want nothing (the findings are the output)", errOut)
	}
	checkGolden(t, td, "check_broken.golden", out)
	// Every mistake the example is built to show is caught.
	for _, id := range []string{"FC105", "FC107", "FC108", "FC111", "FC112", "FC113", "FC117", "FC119"} {
		if !strings.Contains(out, " "+id+": ") {
			t.Errorf("check output lacks rule %s", id)
		}
	}
}

func writeIntent(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fabric.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const cleanIntent = `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: pod1}
policy:
  preset: roce-lossless
inventory:
  switches:
    - name: leaf1
      platform: srlinux
      address: 127.0.0.1:57400
      credentials: {usernameEnv: GNMI_USER, passwordEnv: GNMI_PASS}
      buffer: 2MB
      ports:
        - {name: "ethernet-1/{1..4}", speed: 400G, cable: 3m}
`

func TestCheckExitCodes(t *testing.T) {
	clean := writeIntent(t, cleanIntent)
	warn := writeIntent(t, strings.Replace(cleanIntent, "preset: roce-lossless", "preset: roce-lossless\n  watchdog: {enabled: false}", 1))
	bad := writeIntent(t, strings.Replace(cleanIntent, "preset: roce-lossless", "preset: roce-lossless\n  globalPause: true", 1))
	unparsable := writeIntent(t, "apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\npolicy:\n  mtu: big\n  colour: red\n")
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"clean", []string{"check", "-f", clean}, ExitOK},
		{"warnings only", []string{"check", "-f", warn}, ExitOK},
		{"warnings with --strict", []string{"check", "--strict", "-f", warn}, ExitCheckFailed},
		{"errors", []string{"check", "-f", bad}, ExitCheckFailed},
		{"parse errors", []string{"check", "-f", unparsable}, ExitCheckFailed},
		{"unreadable file", []string{"check", "-f", filepath.Join(t.TempDir(), "missing.yaml")}, ExitError},
		{"no file", []string{"check"}, ExitUsage},
		{"bad output", []string{"check", "-f", clean, "-o", "yaml"}, ExitUsage},
		{"unknown flag", []string{"check", "--frobnicate"}, ExitUsage},
		{"list rules", []string{"check", "--list-rules"}, ExitOK},
		{"list rules markdown", []string{"check", "--list-rules", "-o", "markdown"}, ExitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runFabricctl(t, tt.args...)
			if code != tt.want {
				t.Errorf("fabricctl %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(tt.args, " "), code, tt.want, out, errOut)
			}
		})
	}
}

func TestCheckParseErrorsAllReported(t *testing.T) {
	p := writeIntent(t, "apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\npolicy:\n  mtu: big\n  colour: red\n")
	out, _, _ := runFabricctl(t, "check", "-f", p)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var errs []string
	for _, l := range lines {
		if strings.Contains(l, ": error FC100: ") {
			errs = append(errs, l)
		}
	}
	if len(errs) < 2 {
		t.Fatalf("got %d FC100 lines, want both the bad mtu and the unknown key:\n%s", len(errs), out)
	}
	if !strings.HasPrefix(errs[0], p+":4:") || !strings.HasPrefix(errs[1], p+":5:") {
		t.Errorf("parse errors not positioned and sorted (want lines 4 then 5):\n%s", out)
	}
}

func TestCheckJSON(t *testing.T) {
	bad := writeIntent(t, strings.Replace(cleanIntent, "preset: roce-lossless", "preset: roce-lossless\n  globalPause: true", 1))
	out, _, code := runFabricctl(t, "check", "-o", "json", "-f", bad)
	if code != ExitCheckFailed {
		t.Errorf("exit %d, want %d", code, ExitCheckFailed)
	}
	var rep struct {
		Files    []string
		Findings []struct {
			ID, Severity, File, Path, Message, Fix string
			Line, Col                              int
		}
		Errors, Warnings, Infos int
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if rep.Errors != 1 || len(rep.Findings) != 1 {
		t.Fatalf("got %d errors / %d findings, want 1 / 1:\n%s", rep.Errors, len(rep.Findings), out)
	}
	f := rep.Findings[0]
	if f.ID != "FC116" || f.Severity != "error" || f.File != bad || f.Line != 6 || f.Col != 16 || f.Path != "policy.globalPause" || f.Fix == "" {
		t.Errorf("finding = %+v, want FC116 error at %s:6:16 (the value) on policy.globalPause with a fix", f, bad)
	}
}

func TestHeadroomCommand(t *testing.T) {
	td := toRepoRoot(t)
	out, errOut, code := runFabricctl(t, "headroom", "--speed", "400G", "--cable", "100m", "--mtu", "9216")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	checkGolden(t, td, "headroom_400g_100m.golden", out)

	out, _, code = runFabricctl(t, "headroom", "--speed", "100G", "--cable", "100m", "--mtu", "9216", "-o", "json")
	if code != ExitOK {
		t.Fatalf("json: exit %d", code)
	}
	var rep struct {
		RequiredBytes int64
		RequiredModel string
		Models        []struct {
			Model string
			Bytes int64
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	// DOMAIN.md section 4: at 100G/100m/9216 the IEEE model gives ~87 KB and
	// is the largest (mlx5 76,767 B, SONiC ~56 KB).
	if len(rep.Models) != 3 || rep.RequiredModel != "ieee-802.1qbb" || rep.RequiredBytes < 86_500 || rep.RequiredBytes > 87_500 {
		t.Errorf("100G/100m: required %d B by %s over %d models, want ~87,000 B by ieee-802.1qbb over 3", rep.RequiredBytes, rep.RequiredModel, len(rep.Models))
	}

	for _, args := range [][]string{
		{"headroom"},
		{"headroom", "--speed", "fast"},
		{"headroom", "--speed", "400G", "--cable", "far"},
		{"headroom", "--speed", "400G", "--mtu", "10"},
		{"headroom", "--speed", "400G", "--cell-factor", "0.5"},
		{"headroom", "--speed", "400G", "-o", "xml"},
	} {
		if _, _, code := runFabricctl(t, args...); code != ExitUsage {
			t.Errorf("fabricctl %s: exit %d, want %d", strings.Join(args, " "), code, ExitUsage)
		}
	}
}

func TestCheckNeverPrintsSecrets(t *testing.T) {
	const inline, fromEnv = "hunter2-inline-secret", "hunter2-env-secret"
	t.Setenv("GNMI_PASS", fromEnv)
	withInline := writeIntent(t, strings.Replace(cleanIntent,
		"{usernameEnv: GNMI_USER, passwordEnv: GNMI_PASS}", "{username: admin, password: "+inline+"}", 1))
	clean := writeIntent(t, cleanIntent)
	for _, args := range [][]string{
		{"check", "-f", withInline},
		{"check", "-f", withInline, "-o", "json"},
		{"check", "-f", clean},
		{"check", "-f", clean, "-o", "json"},
	} {
		out, errOut, code := runFabricctl(t, args...)
		for _, s := range []string{inline, fromEnv} {
			if strings.Contains(out+errOut, s) {
				t.Errorf("fabricctl %s (exit %d) printed a secret:\n%s%s", strings.Join(args, " "), code, out, errOut)
			}
		}
	}
	if _, _, code := runFabricctl(t, "check", "-f", withInline); code != ExitCheckFailed {
		t.Errorf("inline password: exit %d, want %d (the parser must refuse it)", code, ExitCheckFailed)
	}
}

// TestCheckListRulesIncludesSimulate: --list-rules lists the rules check
// --simulate adds (sim.Rules, FC150-FC153) in every format, each marked as
// needing --simulate, and Run's own rules unmarked.
func TestCheckListRulesIncludesSimulate(t *testing.T) {
	for _, format := range []string{"text", "markdown", "json"} {
		out, _, code := runFabricctl(t, "check", "--list-rules", "-o", format)
		if code != ExitOK {
			t.Fatalf("%s: exit %d", format, code)
		}
		for _, r := range sim.Rules {
			line := ""
			for _, l := range strings.Split(out, "\n") {
				if strings.Contains(l, r.ID) {
					line = l
				}
			}
			if format == "json" {
				if !strings.Contains(out, `"id": "`+r.ID+`"`) || strings.Count(out, `"needs": "--simulate"`) != len(sim.Rules) {
					t.Errorf("json: %s missing or not marked as needing --simulate:\n%s", r.ID, out)
				}
				continue
			}
			if line == "" || !strings.Contains(line, "needs ") || !strings.Contains(line, "--simulate") {
				t.Errorf("%s: %s missing or not marked as needing --simulate: %q", format, r.ID, line)
			}
		}
		if strings.Contains(out, "FC101") && strings.Count(out, "--simulate") != len(sim.Rules) {
			t.Errorf("%s: --simulate marks on rules other than sim.Rules:\n%s", format, out)
		}
	}
}
