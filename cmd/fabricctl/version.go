package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/fabricctl/fabricctl/internal/yangcheck"
)

// version and revision are set at build time (scripts/build-release.sh):
// -ldflags "-X main.version=v1.2.3 -X main.revision=<git commit>".
var version, revision = "dev", ""

// versionInfo is what `fabricctl version` and `fabricctl --version` print,
// as text or (version -o json) JSON. Each source of version facts fills its
// own fields: the release stamp (ldflags), the Go build info (module,
// VCS revision and time) and the embedded YANG models.
type versionInfo struct {
	// Version is the release version stamped with ldflags, else the module
	// version ("(devel)" for a plain go build in the repository).
	Version       string `json:"version"`
	Module        string `json:"module,omitempty"`
	ModuleVersion string `json:"moduleVersion,omitempty"`
	// Revision, Time and Modified are the VCS stamp go build records
	// (vcs.revision, vcs.time, vcs.modified); empty when built without it
	// (go run, -buildvcs=false, a module download).
	Revision  string `json:"revision,omitempty"`
	Time      string `json:"time,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"goVersion,omitempty"`
	// Build says how the binary was built and so where Version and
	// Revision come from (buildFacts).
	Build string `json:"build,omitempty"`
	// YANG lists the embedded YANG model sets the payloads are checked
	// against (render --validate).
	YANG []yangVersion `json:"yang,omitempty"`
}

// yangVersion names one embedded YANG model set.
type yangVersion struct {
	Platform string `json:"platform"`
	Module   string `json:"module"`
	Source   string `json:"source"`  // repository or document
	Version  string `json:"version"` // release, tag or revision date
}

// readVersion gathers the version facts of the running binary.
func readVersion() versionInfo {
	v := versionInfo{Version: version}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	v.Module, v.ModuleVersion, v.GoVersion = bi.Main.Path, bi.Main.Version, bi.GoVersion
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	if revision != "" {
		// A release build stamps its revision with -ldflags -X (it is built
		// with -buildvcs=false, so the stamp is its only source).
		v.Revision, v.Modified = revision, false
	}
	if v.Version == "dev" && v.ModuleVersion != "" {
		v.Version = v.ModuleVersion
	}
	v.Build = buildFacts(&v, bi, revision != "")
	return v
}

// writeText prints v as aligned lines, the first one "fabricctl VERSION".
func (v versionInfo) writeText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "fabricctl %s\n", v.Version)
	line := func(k, val string) {
		if val != "" {
			b.WriteString(wrapLine(fmt.Sprintf("  %-9s %s", k, val), helpWidth) + "\n")
		}
	}
	mod := v.Module
	if mod != "" && v.ModuleVersion != "" {
		mod += " " + v.ModuleVersion
	}
	line("module", mod)
	rev := v.Revision
	switch {
	case rev == "":
		rev = "none stamped (see built)"
	case v.Modified:
		rev += " (modified)"
	}
	line("revision", rev)
	line("time", v.Time)
	line("go", v.GoVersion)
	line("built", v.Build)
	for _, y := range v.YANG {
		line("yang", fmt.Sprintf("%s %s (%s)", y.Platform, y.Version, y.Source))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func newVersionCmd(d *deps) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the fabricctl version, its VCS revision and build time",
		Long: `Version prints the release version (or the Go module version), the VCS
revision and commit time the binary was built from, the Go version and the
embedded YANG model versions. fabricctl --version prints the same text.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output, "text", "json"); err != nil {
				return err
			}
			v := readVersion()
			if output == "json" {
				ys, err := yangVersions()
				if err != nil {
					return err
				}
				v.YANG = ys
				b, err := json.MarshalIndent(v, "", "  ")
				if err != nil {
					return err
				}
				_, err = cmd.OutOrStdout().Write(append(b, '\n'))
				return err
			}
			return writeFullVersion(cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

// setVersionFlag makes `fabricctl --version` print what `fabricctl version`
// prints.
func setVersionFlag(root *cobra.Command) {
	root.Version = readVersion().Version
	versionTemplateFunc.Do(func() {
		cobra.AddTemplateFunc("fabricctlVersion", func() string {
			var b strings.Builder
			if err := writeFullVersion(&b); err != nil {
				fmt.Fprintf(&b, "error: %v\n", err)
			}
			return b.String()
		})
	})
	root.SetVersionTemplate("{{fabricctlVersion}}")
}

// versionTemplateFunc registers the template function once: cobra keeps
// template functions in a package-level map, and root commands may be
// built concurrently (watch shards in one test process).
var versionTemplateFunc sync.Once

// writeFullVersion prints the version facts and the embedded YANG modules:
// what both `fabricctl version` and `fabricctl --version` print. The YANG
// archive is opened only here, not at every start.
func writeFullVersion(w io.Writer) error {
	if err := readVersion().writeText(w); err != nil {
		return err
	}
	return writeYANGVersions(w)
}

// yangVersions lists the YANG modules fabricctl validates against, for
// version -o json.
func yangVersions() ([]yangVersion, error) {
	t, err := yangcheck.Open("")
	if err != nil {
		return nil, err
	}
	var out []yangVersion
	for _, m := range t.Versions() {
		ver := m.Revision
		if m.OCVersion != "" {
			ver = m.OCVersion + " (" + m.Revision + ")"
		}
		out = append(out, yangVersion{Platform: m.Vendor, Module: m.Name, Version: ver,
			Source: strings.TrimPrefix(m.Repo, "https://github.com/") + "@" + m.Commit})
	}
	return out, nil
}

// writeYANGVersions lists the YANG modules fabricctl validates against (the
// embedded ones, or $FABRICCTL_YANG_DIR's): module, revision or
// openconfig-version, and the source repository at its commit.
func writeYANGVersions(w io.Writer) error {
	t, err := yangcheck.Open("")
	if err != nil {
		return err
	}
	vs := t.Versions()
	if _, err := fmt.Fprintf(w, "YANG modules (%s, %d):\n", t, len(vs)); err != nil {
		return err
	}
	for _, v := range vs {
		ver := v.Revision
		if v.OCVersion != "" {
			ver = v.OCVersion + " (" + v.Revision + ")"
		}
		commit := v.Commit
		if len(commit) > 12 {
			commit = commit[:12]
		}
		if _, err := fmt.Fprintf(w, "  %-10s %-45s %-24s %s@%s\n", v.Vendor, v.Name, ver, strings.TrimPrefix(v.Repo, "https://github.com/"), commit); err != nil {
			return err
		}
	}
	return nil
}
