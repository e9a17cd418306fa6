package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// guardIntent is a fabric with one switch nobody listens for: a command
// that gets past the checks fails to reach it (exit 1), one the checks stop
// never tries (exit 3).
func guardIntent(t *testing.T, policy string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "fabric.yaml")
	text := `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: guard}
policy:
  preset: roce-lossless
` + policy + `inventory:
  switches:
    - name: leaf1
      platform: srlinux
      address: 127.0.0.1:1
      tls: {insecure: true}
      ports: [{name: ethernet-1/1, speed: 400G, cable: 3m}]
`
	if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestPlanAndApplyRunTheChecksFirst(t *testing.T) {
	bad := "  roce: {tos: 107}\n"                                       // FC119 error: CE on every packet
	warn := "  watchdog: {detect: 200ms, restore: 100ms, poll: 50ms}\n" // FC114 warning: restore < detect
	tests := []struct {
		name     string
		args     []string
		policy   string
		wantCode int
		// stderr must contain these; stdout must contain wantOut.
		wantErr []string
		wantOut string
	}{
		{"plan refuses errors", []string{"plan"}, bad, ExitCheckFailed,
			[]string{"error FC119: policy.roce.tos", "plan refused: 1 check finding", "--force"}, ""},
		{"apply refuses errors", []string{"apply", "--timeout", "1s"}, bad, ExitCheckFailed,
			[]string{"error FC119", "apply refused: 1 check finding"}, ""},
		{"apply -o json refuses errors", []string{"apply", "-o", "json"}, bad, ExitCheckFailed,
			[]string{"error FC119", "apply refused"}, ""},
		{"plan --force goes on and says so", []string{"plan", "--force", "--timeout", "1s"}, bad, ExitError,
			[]string{"error FC119", "--force: going on past 1 check finding"}, "Forced (--force) past 1 check finding: FC119 policy.roce.tos."},
		{"plan --force -o json records the findings", []string{"plan", "--force", "-o", "json", "--timeout", "1s"}, bad, ExitError,
			[]string{"error FC119"}, `"forcedFindings": [
    "FC119 policy.roce.tos"
  ]`},
		{"warnings print but do not block", []string{"plan", "--timeout", "1s"}, warn, ExitError,
			[]string{"warning FC114: policy.watchdog.restore"}, ""},
		{"--strict blocks on warnings", []string{"plan", "--strict"}, warn, ExitCheckFailed,
			[]string{"warning FC114", "plan refused: 1 check finding"}, ""},
		{"apply --strict blocks on warnings", []string{"apply", "--strict"}, warn, ExitCheckFailed,
			[]string{"warning FC114", "apply refused"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := guardIntent(t, tt.policy)
			args := append(tt.args, "-f", f, "--backup-dir", filepath.Join(t.TempDir(), "b"))
			if tt.args[0] == "plan" {
				args = append(tt.args, "-f", f)
			}
			code, out, errOut := runCLI(t, t.Context(), args...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, out, errOut)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			if tt.wantOut != "" && !strings.Contains(out, tt.wantOut) {
				t.Errorf("stdout lacks %q:\n%s", tt.wantOut, out)
			}
			if tt.wantCode == ExitCheckFailed && strings.Contains(errOut, "127.0.0.1:1") {
				t.Errorf("a refused run still dialled the switch:\n%s", errOut)
			}
		})
	}
}

func TestRenderPrintsFindingsOnStderr(t *testing.T) {
	f := guardIntent(t, "  roce: {tos: 107}\n")
	code, out, errOut := runCLI(t, t.Context(), "render", "-f", f)
	if code != ExitOK {
		t.Fatalf("render exited %d:\n%s", code, errOut)
	}
	if !strings.Contains(errOut, "error FC119: policy.roce.tos") || strings.Contains(out, "FC119") {
		t.Errorf("render: findings belong on stderr only\nstdout:\n%s\nstderr:\n%s", out, errOut)
	}
}

// TestDowngradeWarnings: tls.skipVerify and --insecure are named on stderr
// at every log level, with or without credentials.
func TestDowngradeWarnings(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "fabric.yaml")
	text := `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: tls}
policy: {preset: roce-lossless}
inventory:
  switches:
    - name: leaf{1..2}
      platform: srlinux
      address: 127.0.0.{1..2}:1
      tls: {skipVerify: true}
      ports: [{name: ethernet-1/1, speed: 400G, cable: 3m}]
    - name: spine1
      platform: sonic
      address: 127.0.0.3:1
      credentials: {usernameEnv: GNMI_USER, passwordEnv: GNMI_PASS}
      ports: [{name: Ethernet0, speed: 400G, cable: 3m}]
`
	if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, level := range []string{"debug", "warn", "error"} {
		_, _, errOut := runCLI(t, t.Context(), "diff", "-f", f, "--timeout", "200ms", "--log-level", level)
		if !strings.Contains(errOut, "(tls.skipVerify) for 2 switches: leaf1, leaf2") || strings.Contains(errOut, "plaintext") {
			t.Errorf("--log-level %s: stderr does not name the skipVerify switches (only):\n%s", level, errOut)
		}
		_, _, errOut = runCLI(t, t.Context(), "diff", "-f", f, "--timeout", "200ms", "--log-level", level, "--insecure", "--switch", "spine1")
		if !strings.Contains(errOut, "plaintext gRPC without TLS (--insecure) to 1 switch: spine1") {
			t.Errorf("--log-level %s --insecure: stderr does not name the switch:\n%s", level, errOut)
		}
	}
}

func TestRenderWithoutSwitchesSaysSo(t *testing.T) {
	f := filepath.Join(t.TempDir(), "hosts-only.yaml")
	if err := os.WriteFile(f, []byte("apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\nmetadata: {name: lab}\npolicy: {preset: roce-lossless}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCLI(t, t.Context(), "render", "-f", f)
	if code != ExitOK || !strings.Contains(errOut, "fabric lab has no switches (inventory.switches): nothing to render") {
		t.Errorf("render of a fabric without switches: exit %d, stderr %q", code, errOut)
	}
}
