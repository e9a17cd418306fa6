package yangcheck

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
)

// TestEmbeddedMatchesFolder fails when models.tar.gz (what the binary
// embeds) and the models/ folder differ: run `go generate
// ./internal/yangcheck` after changing a module.
func TestEmbeddedMatchesFolder(t *testing.T) {
	emb, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := OpenDir("models")
	if err != nil {
		t.Fatal(err)
	}
	ef, df := emb.Files(), dir.Files()
	if strings.Join(ef, "\n") != strings.Join(df, "\n") {
		t.Fatalf("models.tar.gz has files\n%s\nmodels/ has\n%s\nrun go generate ./internal/yangcheck", strings.Join(ef, " "), strings.Join(df, " "))
	}
	for _, f := range ef {
		a, _ := emb.File(f)
		b, _ := dir.File(f)
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between models.tar.gz and models/: run go generate ./internal/yangcheck", f)
		}
	}
	// Every vendor folder says where it is from and under which licence.
	for _, v := range []string{"openconfig", "srlinux", "sonic", "arista"} {
		for _, f := range []string{"SOURCE.txt", "LICENSE"} {
			if _, ok := emb.File(v + "/" + f); !ok {
				t.Errorf("embedded YANG has no %s/%s", v, f)
			}
		}
	}
}

func TestOpenOverride(t *testing.T) {
	t.Setenv(EnvDir, "")
	tr, err := Open("")
	if err != nil || tr.String() != "embedded" {
		t.Fatalf("Open(\"\") with no override = %v, %v; want the embedded tree", tr, err)
	}
	t.Setenv(EnvDir, "models")
	if tr, err = Open(""); err != nil || tr.String() != "models" {
		t.Fatalf("Open(\"\") with %s=models = %v, %v", EnvDir, tr, err)
	}
	missing := filepath.Join(t.TempDir(), "nope")
	t.Setenv(EnvDir, missing)
	if _, err := Open(""); err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("Open with %s=%s: err %v, want one naming the directory", EnvDir, missing, err)
	}
	// An explicit directory beats the variable.
	if tr, err = Open("models"); err != nil || tr.String() != "models" {
		t.Fatalf("Open(models) = %v, %v", tr, err)
	}
	empty := t.TempDir()
	if err := os.Mkdir(filepath.Join(empty, "srlinux"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPlatform(empty, intent.PlatformSRLinux); err == nil {
		t.Fatal("LoadPlatform of a tree without modules succeeded")
	}
}

func TestVersions(t *testing.T) {
	t.Setenv(EnvDir, "")
	vs, err := Versions()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]ModuleVersion{}
	for _, v := range vs {
		if v.Repo == "" || len(v.Commit) != 40 {
			t.Errorf("%s/%s: no source repository or commit: %+v", v.Vendor, v.Name, v)
		}
		byName[v.Vendor+"/"+v.Name] = v
	}
	for key, want := range map[string]ModuleVersion{
		"openconfig/openconfig-qos":  {OCVersion: "2.2.0", Revision: "2026-04-30", Repo: "https://github.com/openconfig/public", Commit: "94f589629e1e88d0a8dbd2b3024f829196801f2e"},
		"srlinux/srl_nokia-qos":      {Repo: "https://github.com/nokia/srlinux-yang-models", Commit: "cd5995eaa6818d02bfff3ae718b89454a82191eb"},
		"sonic/sonic-port-qos-map":   {Repo: "https://github.com/sonic-net/sonic-buildimage", Commit: "086b03bd70f9e211aaaf5f6aefe0790b508d2a94"},
		"sonic/ietf-inet-types":      {Revision: "2013-07-15", Repo: "https://github.com/openconfig/public", Commit: "94f589629e1e88d0a8dbd2b3024f829196801f2e"},
		"arista/arista-qos-augments": {OCVersion: "0.0.4", Revision: "2020-11-30", Repo: "https://github.com/aristanetworks/yang", Commit: "63be023aa565c8943ff74e746dfefa215df1c8d5"},
	} {
		got, ok := byName[key]
		if !ok {
			t.Errorf("Versions has no %s", key)
			continue
		}
		if (want.OCVersion != "" && got.OCVersion != want.OCVersion) || (want.Revision != "" && got.Revision != want.Revision) || got.Repo != want.Repo || got.Commit != want.Commit {
			t.Errorf("%s = %+v, want %+v", key, got, want)
		}
	}
}
