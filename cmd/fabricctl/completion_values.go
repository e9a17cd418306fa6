package main

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fabricctl/fabricctl/intent"
)

// scenarioCompletion completes simulate --scenario: the built-in scenarios
// (incast:16:1, alltoall, slow-receiver:50, and link-down:A-B for every
// switch-to-switch link of the intent named with -f), or, for a value that
// is none of them (a path), the .yaml files a scenario is read from.
func scenarioCompletion(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	builtins := []string{"incast:16:1", "alltoall", "slow-receiver:50", "link-down:"}
	if strings.HasPrefix(toComplete, "link-down:") {
		pairs, _ := intentNames(func(f *intent.Fabric) (out []string) {
			for _, l := range f.Links {
				if f.Switch(l.A.Node) != nil && f.Switch(l.B.Node) != nil {
					p := "link-down:" + l.A.Node + "-" + l.B.Node
					if !slices.Contains(out, p) {
						out = append(out, p)
					}
				}
			}
			return out
		})(cmd, args, toComplete)
		return pairs, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, b := range builtins {
		if strings.HasPrefix(b, toComplete) {
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		return []cobra.Completion{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
	}
	dir := cobra.ShellCompDirectiveNoFileComp
	if len(out) == 1 && out[0] == "link-down:" {
		dir |= cobra.ShellCompDirectiveNoSpace
	}
	return out, dir
}

// asicCompletion completes --asic with the ASICs fabricctl has tables for.
func asicCompletion(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	for _, a := range intent.ASICNames() {
		if strings.HasPrefix(a, toComplete) {
			out = append(out, a)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
