package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersionSaysHowItWasBuilt: without a VCS stamp (go build
// -buildvcs=false, which some environments put in GOFLAGS; a build outside
// a checkout; go install module@version) version falls back to the module
// version, reads a pseudo-version's commit and time, and says how the
// binary was built instead of "revision unknown".
func TestVersionSaysHowItWasBuilt(t *testing.T) {
	env := []debug.BuildSetting{{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "amd64"}, {Key: "CGO_ENABLED", Value: "0"}, {Key: "-trimpath", Value: "true"}}
	cases := []struct {
		name        string
		modVersion  string
		settings    []debug.BuildSetting
		stamped     bool
		wantVersion string
		wantRev     string
		wantTime    string
		wantBuild   string
	}{
		{"buildvcs=false", "(devel)", env, false, "(devel)", "", "",
			"go build without a VCS stamp (-buildvcs=false, perhaps from GOFLAGS, or outside a git checkout) [linux/amd64, CGO_ENABLED=0, -trimpath]"},
		{"go install of a release", "v1.4.0", env, false, "v1.4.0", "", "",
			"go install of module version v1.4.0 (no VCS stamp)"},
		{"go install of a commit", "v0.0.0-20261206031234-e2f7ca4abcde", env, false, "v0.0.0-20261206031234-e2f7ca4abcde", "e2f7ca4abcde", "2026-12-06T03:12:34Z",
			"go install of a pseudo-version (revision and time read from it)"},
		{"go install of a commit after a tag", "v1.4.1-0.20261206031234-e2f7ca4abcde", nil, false, "v1.4.1-0.20261206031234-e2f7ca4abcde", "e2f7ca4abcde", "2026-12-06T03:12:34Z",
			"go install of a pseudo-version"},
		{"go build in a checkout", "(devel)", append([]debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.time", Value: "2026-12-02T12:00:00Z"}}, env...), false, "(devel)", "0123abcd", "2026-12-02T12:00:00Z",
			"go build in a git checkout"},
		{"release", "(devel)", env, true, "v9", "", "", "release build (version and revision stamped with -ldflags)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bi := &debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Path: "github.com/fabricctl/fabricctl", Version: tc.modVersion}, Settings: tc.settings}
			v := versionInfo{Version: "dev", Module: bi.Main.Path, ModuleVersion: bi.Main.Version}
			if tc.stamped {
				v.Version = "v9"
			}
			for _, s := range tc.settings {
				switch s.Key {
				case "vcs.revision":
					v.Revision = s.Value
				case "vcs.time":
					v.Time = s.Value
				}
			}
			if v.Version == "dev" {
				v.Version = v.ModuleVersion
			}
			v.Build = buildFacts(&v, bi, tc.stamped)
			if v.Version != tc.wantVersion || v.Revision != tc.wantRev || v.Time != tc.wantTime || !strings.HasPrefix(v.Build, tc.wantBuild) {
				t.Errorf("got version %q revision %q time %q build %q\nwant %q %q %q %q", v.Version, v.Revision, v.Time, v.Build, tc.wantVersion, tc.wantRev, tc.wantTime, tc.wantBuild)
			}
			var b strings.Builder
			if err := v.writeText(&b); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(b.String(), "unknown") || !strings.Contains(b.String(), "\n  built     ") {
				t.Errorf("text:\n%s", b.String())
			}
		})
	}
}

// TestVersionOfThisBinary: the test binary has no VCS stamp (go test
// records none), as a -buildvcs=false build: its version says how it was
// built.
func TestVersionOfThisBinary(t *testing.T) {
	out, errOut, code := runFabricctl(t, "version")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out, "revision  unknown") || !strings.Contains(out, "\n  built     ") {
		t.Errorf("version:\n%s", out)
	}
}
