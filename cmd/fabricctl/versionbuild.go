package main

import (
	"fmt"
	"regexp"
	"runtime/debug"
	"strings"
	"time"
)

// How a binary was built, told from what it carries (runtime/debug's build
// info and the release stamp), so that `fabricctl version` can say where its
// version comes from when the VCS stamp is missing: `go build
// -buildvcs=false` (some environments set it in GOFLAGS; the release script
// does, and stamps with -ldflags instead), a build outside a git checkout,
// or `go install module@version`, whose module version is the only stamp
// (a pseudo-version v0.0.0-YYYYMMDDhhmmss-abcdef123456 holds the commit and
// its time: cmd/go's "Pseudo-versions" in the modules reference).

// pseudoVersion matches the tail of a Go pseudo-version: the commit time
// (UTC) and a 12-character commit hash prefix.
var pseudoVersion = regexp.MustCompile(`[-.](\d{14})-([0-9a-f]{12})(\+incompatible)?$`)

// buildFacts fills what v lacks from the module version, and returns a
// sentence saying how the binary was built.
func buildFacts(v *versionInfo, bi *debug.BuildInfo, stamped bool) string {
	setting := func(k string) string {
		for _, s := range bi.Settings {
			if s.Key == k {
				return s.Value
			}
		}
		return ""
	}
	var how string
	hasVCS := setting("vcs") != "" || setting("vcs.revision") != ""
	released := v.ModuleVersion != "" && v.ModuleVersion != "(devel)"
	switch {
	case stamped:
		how = "release build (version and revision stamped with -ldflags)"
	case hasVCS:
		how = "go build in a " + setting("vcs") + " checkout"
	case released:
		how = "go install of module version " + v.ModuleVersion + " (no VCS stamp)"
		if m := pseudoVersion.FindStringSubmatch(v.ModuleVersion); m != nil && v.Revision == "" {
			v.Revision = m[2]
			if t, err := time.Parse("20060102150405", m[1]); err == nil {
				v.Time = t.UTC().Format(time.RFC3339)
			}
			how = "go install of a pseudo-version (revision and time read from it)"
		}
	default:
		how = "go build without a VCS stamp (-buildvcs=false, perhaps from GOFLAGS, or outside a git checkout)"
	}
	var env []string
	if goos, arch := setting("GOOS"), setting("GOARCH"); goos != "" {
		env = append(env, goos+"/"+arch)
	}
	if c := setting("CGO_ENABLED"); c != "" {
		env = append(env, "CGO_ENABLED="+c)
	}
	for _, k := range []string{"-trimpath", "-race"} {
		if setting(k) == "true" {
			env = append(env, k)
		}
	}
	if tags := setting("-tags"); tags != "" {
		env = append(env, "-tags="+tags)
	}
	if len(env) > 0 {
		how += fmt.Sprintf(" [%s]", strings.Join(env, ", "))
	}
	return how
}
