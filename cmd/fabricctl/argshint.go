package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fabricctl/fabricctl/intent"
)

// fileArgHint turns the error of a command that takes its intent with -f
// and got it as an argument (fabricctl check fabric.yaml, which cobra
// reports as 'unknown command "fabric.yaml"') into the fix. Other errors are
// returned as they are.
func fileArgHint(cmd *cobra.Command, args []string, err error) error {
	f := cmd.Flags().Lookup("file")
	if f == nil || f.Shorthand != "f" || len(args) == 0 {
		return err
	}
	for _, a := range args {
		if !looksLikeFile(a) {
			continue
		}
		if f.Changed {
			return fmt.Errorf("unexpected argument %q: each intent file needs its own -f (did you mean -f %s?)", a, a)
		}
		return fmt.Errorf("unexpected argument %q: the intent is given with -f (did you mean %s -f %s?)", a, cmd.CommandPath(), a)
	}
	return err
}

// isYAMLName: the name of a YAML file (an intent, not a JSON plan).
func isYAMLName(a string) bool {
	a = strings.ToLower(a)
	return strings.HasSuffix(a, ".yaml") || strings.HasSuffix(a, ".yml")
}

// looksLikeFile: a YAML or JSON name, or a file that exists.
func looksLikeFile(a string) bool {
	if isYAMLName(a) || strings.HasSuffix(strings.ToLower(a), ".json") {
		return true
	}
	st, err := os.Stat(a)
	return err == nil && st.Mode().IsRegular()
}

// withoutFlags removes flags a shared binder (switchFlags.bind) added that
// do not apply to cmd, so that its --help does not offer them and a user
// who passes one is told it is unknown rather than silently ignored.
func withoutFlags(cmd *cobra.Command, names ...string) {
	var keep []*pflag.Flag
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !slices.Contains(names, f.Name) {
			keep = append(keep, f)
		}
	})
	cmd.ResetFlags()
	for _, f := range keep {
		cmd.Flags().AddFlag(f)
	}
}

// netnsCoverage checks, for validate --engine udp with --netns, that every
// host of the intent runs on this machine: mapped to a namespace, or
// address: local. The udp engine runs either all hosts here or all of them
// over SSH; a host left out would otherwise be dialled over SSH, and the
// user asked for credentials a lab does not have.
func netnsCoverage(f *intent.Fabric, nsOf map[string]string) error {
	var missing []string
	for _, h := range f.Hosts {
		if nsOf[h.Name] == "" && !h.IsLocal() {
			missing = append(missing, h.Name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return usagef("--netns maps %d of %d hosts; %s %s neither mapped nor local: give each a --netns %s=NAMESPACE, or address: local in the intent (the udp engine runs every host on this machine with --netns, or every host over SSH without it)",
		len(nsOf), len(f.Hosts), strings.Join(missing, ", "), plural(len(missing), "is", "are"), missing[0])
}
