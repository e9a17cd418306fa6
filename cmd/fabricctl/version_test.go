package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/internal/yangcheck"
)

// TestVersionListsYANG: fabricctl version names every shipped YANG module
// with its version and source commit.
func TestVersionListsYANG(t *testing.T) {
	t.Setenv(yangcheck.EnvDir, "")
	stdout, stderr, code := runFabricctl(t, "version")
	if code != ExitOK {
		t.Fatalf("version exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"YANG modules (embedded,",
		"openconfig-qos", "2.2.0 (2026-04-30)", "openconfig/public@94f589629e1e",
		"srl_nokia-qos", "nokia/srlinux-yang-models@cd5995eaa681",
		"sonic-port-qos-map", "sonic-net/sonic-buildimage@086b03bd70f9",
		"arista-qos-augments", "aristanetworks/yang@63be023aa565",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("version output lacks %q:\n%s", want, stdout)
		}
	}
}

func TestVersionTextJSONAndFlagAgree(t *testing.T) {
	code, text, errOut := runCLI(t, t.Context(), "version")
	if code != ExitOK {
		t.Fatalf("version exited %d: %s", code, errOut)
	}
	if !strings.HasPrefix(text, "fabricctl ") || !strings.Contains(text, "\n  revision ") || !strings.Contains(text, "\n  go ") {
		t.Errorf("version text lacks the version, revision or go lines:\n%s", text)
	}
	code, flag, _ := runCLI(t, t.Context(), "--version")
	if code != ExitOK || flag != text {
		t.Errorf("--version (exit %d) prints\n%s\nwant what version prints:\n%s", code, flag, text)
	}
	code, js, _ := runCLI(t, t.Context(), "version", "-o", "json")
	var v versionInfo
	if err := json.Unmarshal([]byte(js), &v); code != ExitOK || err != nil || v.Version == "" || v.GoVersion == "" {
		t.Errorf("version -o json (exit %d, %v) = %+v:\n%s", code, err, v, js)
	}
	if !strings.HasPrefix(text, "fabricctl "+v.Version+"\n") {
		t.Errorf("text version line %q disagrees with JSON version %q", strings.SplitN(text, "\n", 2)[0], v.Version)
	}
}

func TestVersionTextNamesTheVCSStamp(t *testing.T) {
	v := versionInfo{Version: "v1.2.3", Module: "github.com/fabricctl/fabricctl", ModuleVersion: "(devel)",
		Revision: "0123abcd", Time: "2026-12-02T12:00:00Z", Modified: true, GoVersion: "go1.26",
		YANG: []yangVersion{{Platform: "srlinux", Source: "nokia/srlinux-yang-models", Version: "v25.3.1"}}}
	var b strings.Builder
	if err := v.writeText(&b); err != nil {
		t.Fatal(err)
	}
	want := `fabricctl v1.2.3
  module    github.com/fabricctl/fabricctl (devel)
  revision  0123abcd (modified)
  time      2026-12-02T12:00:00Z
  go        go1.26
  yang      srlinux v25.3.1 (nokia/srlinux-yang-models)
`
	if b.String() != want {
		t.Errorf("writeText =\n%s\nwant\n%s", b.String(), want)
	}
}
