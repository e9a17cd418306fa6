package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/yangcheck"
)

func TestRenderPrototextIsCompile(t *testing.T) {
	file := filepath.Join("..", "..", "examples", "srl-pod.yaml")
	stdout, stderr, code := runFabricctl(t, "render", "-f", file, "--switch", "leaf2")
	if code != ExitOK {
		t.Fatalf("render exit %d, stderr %s", code, stderr)
	}
	got := &gnmipb.SetRequest{}
	if err := prototext.Unmarshal([]byte(stdout), got); err != nil {
		t.Fatalf("render output is not one prototext SetRequest: %v\n%s", err, stdout)
	}
	f, err := intent.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := newRegistry()
	if err != nil {
		t.Fatal(err)
	}
	p, err := reg.Lookup(intent.PlatformSRLinux)
	if err != nil {
		t.Fatal(err)
	}
	d, err := p.Compile(f, f.Switch("leaf2"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(d.SetRequest(), got, protocmp.Transform()); diff != "" {
		t.Errorf("render --switch leaf2 mismatch with Compile (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(stdout, "# switch leaf2 (srlinux)") {
		t.Errorf("render output does not start with the switch comment:\n%.200s", stdout)
	}
}

func TestRenderJSON(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "mixed")
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	args := []string{"render", "-o", "json"}
	for _, f := range files {
		args = append(args, "-f", f)
	}
	stdout, stderr, code := runFabricctl(t, args...)
	if code != ExitOK {
		t.Fatalf("render exit %d, stderr %s", code, stderr)
	}
	var got []renderJSON
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("render -o json output does not decode: %v", err)
	}
	fab, err := intent.Load(files...)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(fab.Switches) {
		t.Fatalf("render -o json: %d switches, want %d", len(got), len(fab.Switches))
	}
	for i, r := range got {
		if r.Switch != fab.Switches[i].Name || r.Platform != fab.Switches[i].Platform {
			t.Errorf("switch %d = %s (%s), want %s (%s)", i, r.Switch, r.Platform, fab.Switches[i].Name, fab.Switches[i].Platform)
		}
		if len(r.Replace) == 0 {
			t.Errorf("switch %s: no replace operations", r.Switch)
		}
		if r.Platform == intent.PlatformOpenConfig && len(r.Notes) == 0 {
			t.Errorf("switch %s: openconfig without the PFC note", r.Switch)
		}
	}
}

func TestRenderErrors(t *testing.T) {
	file := filepath.Join("..", "..", "examples", "srl-pod.yaml")
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"no file", []string{"render"}, ExitUsage},
		{"bad output", []string{"render", "-f", file, "-o", "yaml"}, ExitUsage},
		{"unknown switch", []string{"render", "-f", file, "--switch", "nope"}, ExitError},
		{"missing file", []string{"render", "-f", filepath.Join(t.TempDir(), "none.yaml")}, ExitError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, code := runFabricctl(t, tc.args...); code != tc.want {
				t.Errorf("fabricctl %v exit %d, want %d", tc.args, code, tc.want)
			}
		})
	}
}

func TestRenderValidate(t *testing.T) {
	// The embedded models: nothing beside the repository is needed.
	t.Setenv(yangcheck.EnvDir, "")
	yang := filepath.Join("..", "..", "internal", "yangcheck", "models")
	dir := filepath.Join("..", "..", "examples", "mixed")
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	args := []string{"render", "--validate"}
	for _, f := range files {
		args = append(args, "-f", f)
	}
	if _, stderr, code := runFabricctl(t, args...); code != ExitOK {
		t.Errorf("render --validate of examples/mixed: exit %d, want 0; stderr:\n%s", code, stderr)
	}
	args = append([]string{"render", "--validate", "--yang-dir", yang}, args[2:]...)
	// A YANG tree whose SR Linux model lacks what the compiler sends must
	// fail with exit 3: copy the tree, drop pfc-mapping-profile.
	broken := t.TempDir()
	for _, sub := range []string{"srlinux", "sonic", "openconfig", "arista"} {
		if err := os.CopyFS(filepath.Join(broken, sub), os.DirFS(filepath.Join(yang, sub))); err != nil {
			t.Fatal(err)
		}
	}
	qos := filepath.Join(broken, "srlinux", "srl_nokia-qos.yang")
	b, err := os.ReadFile(qos)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte("leaf pfc-enable {"), []byte("leaf pfc-enabled {"), 1)
	if err := os.WriteFile(qos, b, 0o644); err != nil {
		t.Fatal(err)
	}
	args[3] = broken
	_, stderr, code := runFabricctl(t, args...)
	if code != ExitCheckFailed || !strings.Contains(stderr, "pfc-enable") {
		t.Errorf("render --validate against a model without pfc-enable: exit %d, want %d naming pfc-enable; stderr:\n%s", code, ExitCheckFailed, stderr)
	}
}

// TestRenderNeverReadsCredentials: render does not dial, so the credentials
// the intent points at are never read and never printed.
func TestRenderNeverReadsCredentials(t *testing.T) {
	const secret = "s3cr3t-render-password"
	t.Setenv("SRL_USERNAME", "admin-render-user")
	t.Setenv("SRL_PASSWORD", secret)
	file := filepath.Join("..", "..", "examples", "srl-pod.yaml")
	for _, o := range []string{"prototext", "json"} {
		stdout, stderr, code := runFabricctl(t, "render", "-f", file, "-o", o, "--log-level", "debug")
		if code != ExitOK {
			t.Fatalf("render -o %s exit %d: %s", o, code, stderr)
		}
		if strings.Contains(stdout+stderr, secret) || strings.Contains(stdout+stderr, "admin-render-user") {
			t.Errorf("render -o %s printed a credential", o)
		}
	}
}
