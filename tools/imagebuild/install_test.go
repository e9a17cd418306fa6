package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The README's first way in: go install of the module path. Here it runs
// from the local checkout (no network), which is the same package and
// module path the proxy serves for `go install ...@latest`.
func TestGoInstallFromCheckout(t *testing.T) {
	root := repoRoot(t)
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(string(gomod), "\n"); first != "module github.com/fabricctl/fabricctl" {
		t.Fatalf("go.mod says %q: `go install github.com/fabricctl/fabricctl/cmd/fabricctl@latest` needs the module path to match the repository", first)
	}
	// go install pkg@version refuses a main module with replace or exclude
	// directives.
	for _, d := range []string{"\nreplace ", "\nexclude ", "\nreplace(", "\nexclude("} {
		if strings.Contains(string(gomod), d) {
			t.Errorf("go.mod has a %q directive: `go install ...@latest` would refuse the module", strings.TrimSpace(d))
		}
	}
	gobin := t.TempDir()
	cmd := exec.Command("go", "install", "./cmd/fabricctl")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOBIN="+gobin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install ./cmd/fabricctl: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(gobin, "fabricctl"), "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "fabricctl ") {
		t.Fatalf("installed fabricctl version: %v\n%s", err, out)
	}
}

// examples/gitops installs the pinned release with its install script. Run
// that script against the release built here, with curl replaced by a test
// double that serves the release assets from disk (there is no network):
// the right sum installs and runs the binary; a wrong or missing pin
// installs nothing.
func TestGitOpsInstallScriptVerifiesThePin(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skip("the install script is for linux amd64/arm64 runners")
	}
	dist := buildRelease(t)
	root := repoRoot(t)
	script := filepath.Join(root, "examples", "gitops", ".github", "install-fabricctl.sh")
	shim := t.TempDir()
	// The test double for curl: it accepts only the release URL the script
	// must use and copies the asset from dist.
	fakeCurl := `#!/usr/bin/env bash
set -euo pipefail
out= url=
while [ $# -gt 0 ]; do
  case $1 in -o) out=$2; shift 2 ;; --retry|--proto) shift 2 ;; -*) shift ;; *) url=$1; shift ;; esac
done
echo "$url" >> "$(dirname "$0")/urls"
prefix=https://github.com/fabricctl/fabricctl/releases/download/` + testVersion + `/
case $url in "$prefix"fabricctl_linux_amd64|"$prefix"fabricctl_linux_arm64) ;; *) echo "curl (test double): unexpected URL $url" >&2; exit 22 ;; esac
cp "` + dist + `/${url#"$prefix"}" "$out"
`
	if err := os.WriteFile(filepath.Join(shim, "curl"), []byte(fakeCurl), 0o755); err != nil {
		t.Fatal(err)
	}
	sums := map[string]string{}
	b, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(l)
		sums[f[1]] = f[0]
	}
	run := func(amd64, arm64 string) (string, string, error) {
		dir := t.TempDir()
		ghPath := filepath.Join(dir, "github_path")
		cmd := exec.Command("bash", script)
		cmd.Env = append(os.Environ(),
			"PATH="+shim+":"+os.Getenv("PATH"),
			"FABRICCTL_VERSION="+testVersion,
			"FABRICCTL_SHA256_AMD64="+amd64,
			"FABRICCTL_SHA256_ARM64="+arm64,
			"FABRICCTL_INSTALL_DIR="+filepath.Join(dir, "bin"),
			"GITHUB_PATH="+ghPath,
		)
		out, err := cmd.CombinedOutput()
		return string(out), filepath.Join(dir, "bin", "fabricctl"), err
	}
	out, bin, err := run(sums["fabricctl_linux_amd64"], sums["fabricctl_linux_arm64"])
	if err != nil {
		t.Fatalf("install with the right pins: %v\n%s", err, out)
	}
	if !strings.Contains(out, testVersion) || !strings.Contains(out, testRevision) {
		t.Errorf("the installed fabricctl printed %q; want the release version and revision", out)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Errorf("not installed: %v", err)
	}
	zero := strings.Repeat("0", 64)
	for name, pins := range map[string][2]string{
		"wrong sum":   {zero, zero},
		"placeholder": {"pin-the-sha256-of-fabricctl_linux_amd64", "pin-the-sha256-of-fabricctl_linux_arm64"},
		"swapped":     {sums["fabricctl_linux_arm64"], sums["fabricctl_linux_amd64"]},
	} {
		out, bin, err := run(pins[0], pins[1])
		if err == nil {
			t.Errorf("%s: install succeeded:\n%s", name, out)
		}
		if !strings.Contains(out, "::error::") {
			t.Errorf("%s: no ::error:: annotation in %q", name, out)
		}
		if _, err := os.Stat(bin); err == nil {
			t.Errorf("%s: a binary was installed", name)
		}
	}
}
