package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fabricctl/fabricctl/internal/yangcheck"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = "dev"

func newVersionCmd(d *deps) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the fabricctl version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := version
			if bi, ok := debug.ReadBuildInfo(); ok && v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
				v = bi.Main.Version
			}
			if _, err := fmt.Fprintf(cmd.OutOrStdout(), "fabricctl %s\n", v); err != nil {
				return err
			}
			return writeYANGVersions(cmd.OutOrStdout())
		},
	}
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
