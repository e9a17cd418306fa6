package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version and revision are set at build time (scripts/build-release.sh):
// -ldflags "-X main.version=v1.2.3 -X main.revision=<git commit>".
var version, revision = "dev", ""

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
			if revision != "" {
				v += " (revision " + revision + ")"
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "fabricctl %s\n", v)
			return err
		},
	}
}
