package main

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fabricctl/fabricctl/intent"
)

// outputFormats are the -o values of each command, by command path
// without the leading "fabricctl ". Commands not listed take text or json.
var outputFormats = map[string][]string{
	"check":            {"text", "json", "markdown"},
	"plan":             {"text", "json", "markdown"},
	"render":           {"prototext", "json"},
	"inventory import": {"yaml"},
	"host plan":        {"text", "json", "markdown", "commands", "netlink"},
	"host diff":        {"text", "json", "markdown", "commands", "netlink"},
	"host apply":       {"text", "json", "markdown", "commands", "netlink"},
}

// registerCompletions gives shell completion the values of the flags that
// have a fixed set (-o, --engine, --log-level, --log-format, --asic,
// simulate's built-in --scenario values or scenario files) and the switch
// and host names of the intent named with -f (--switch, --host), on c and
// every command below it.
func registerCompletions(c *cobra.Command) {
	fixed := func(vals ...string) cobra.CompletionFunc {
		return cobra.FixedCompletions(vals, cobra.ShellCompDirectiveNoFileComp)
	}
	if c.Parent() == nil {
		_ = c.RegisterFlagCompletionFunc("log-level", fixed("debug", "info", "warn", "error"))
		_ = c.RegisterFlagCompletionFunc("log-format", fixed("text", "json"))
	}
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		switch f.Name {
		case "output":
			path := strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ")
			formats, ok := outputFormats[path]
			if !ok {
				formats = []string{"text", "json"}
			}
			_ = c.RegisterFlagCompletionFunc("output", fixed(formats...))
		case "engine":
			_ = c.RegisterFlagCompletionFunc("engine", fixed("rdma", "udp"))
		case "scenario":
			_ = c.RegisterFlagCompletionFunc("scenario", scenarioCompletion)
		case "asic":
			_ = c.RegisterFlagCompletionFunc("asic", asicCompletion)
		case "switch":
			_ = c.RegisterFlagCompletionFunc("switch", intentNames(func(f *intent.Fabric) (out []string) {
				for _, sw := range f.Switches {
					out = append(out, sw.Name)
				}
				return out
			}))
		case "host":
			_ = c.RegisterFlagCompletionFunc("host", intentNames(func(f *intent.Fabric) (out []string) {
				for _, h := range f.Hosts {
					out = append(out, h.Name)
				}
				return out
			}))
		}
	})
	for _, s := range c.Commands() {
		registerCompletions(s)
	}
}

// intentNames completes from the intent files given with -f on the command
// line so far (stdin is not read); nothing when there are none or they do
// not parse.
func intentNames(names func(*intent.Fabric) []string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		files, err := cmd.Flags().GetStringArray("file")
		if err != nil || len(files) == 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		if slices.Contains(files, "-") {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		// Cobra parses the flags twice while completing, so an array flag
		// holds each -f twice: keep the first of each.
		seen := map[string]bool{}
		files = slices.DeleteFunc(files, func(f string) bool {
			dup := seen[f]
			seen[f] = true
			return dup
		})
		fab, err := intent.LoadFrom(strings.NewReader(""), files...)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, n := range names(fab) {
			if strings.HasPrefix(n, toComplete) {
				out = append(out, n)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
