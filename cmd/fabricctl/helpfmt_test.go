package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spf13/cobra"
)

// helpOf renders every command's --help as the user sees it (through the
// root's help function), keyed by command path.
func helpOf(t *testing.T) (map[string]string, map[string]*cobra.Command) {
	t.Helper()
	root := newRootCmd(&deps{stdout: new(bytes.Buffer), stderr: new(bytes.Buffer)})
	help := map[string]string{}
	cmds := map[string]*cobra.Command{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		var b bytes.Buffer
		c.SetOut(&b)
		c.SetErr(&b)
		if err := c.Help(); err != nil {
			t.Fatal(err)
		}
		help[c.CommandPath()] = b.String()
		cmds[c.CommandPath()] = c
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	return help, cmds
}

// exampleCommands returns the commands of a help text's Examples section,
// each with its shell line continuations joined.
func exampleCommands(help string) []string {
	var out []string
	in := false
	cur := ""
	for _, l := range strings.Split(help, "\n") {
		switch {
		case l == "Examples:":
			in = true
			continue
		case l == "" || l[0] != ' ':
			in = false
		}
		if !in {
			continue
		}
		t := strings.TrimSpace(l)
		if strings.HasSuffix(t, " \\") {
			cur += strings.TrimSuffix(t, "\\")
			continue
		}
		out = append(out, cur+t)
		cur = ""
	}
	if cur != "" {
		out = append(out, cur+"<dangling continuation>")
	}
	return out
}

// TestHelpExamplesAreWholeCommands checks every example line of every
// command's --help, as printed (wrapped to 80 columns): each is a whole,
// copy-pasteable command. Every fabricctl invocation in it (a line may pipe
// or chain several) is parsed by the real command tree: the command exists,
// every flag is known and has its value, and the positional arguments are
// what the command accepts. A wrapped line that split "-o" from "json" or
// left an argument on a line of its own fails here.
func TestHelpExamplesAreWholeCommands(t *testing.T) {
	help, _ := helpOf(t)
	n := 0
	for path, h := range help {
		for _, ex := range exampleCommands(h) {
			n++
			if strings.HasPrefix(ex, "#") {
				continue
			}
			if err := parseExample(ex); err != nil {
				t.Errorf("%s --help: example %q: %v", path, ex, err)
			}
		}
	}
	if n < 30 {
		t.Fatalf("found %d examples; the Examples sections were not read", n)
	}
}

// parseExample parses each fabricctl invocation of a shell line.
func parseExample(line string) error {
	if i := strings.Index(line, " #"); i >= 0 {
		line = line[:i]
	}
	words := shellWords(line)
	var segs [][]string
	var cur []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "|" || w == "&&" || w == "||" || w == ";":
			segs = append(segs, cur)
			cur = nil
		case w == ">" || w == ">>" || w == "<" || w == "2>":
			i++ // the file
		default:
			cur = append(cur, strings.Trim(w, `"'`))
		}
	}
	segs = append(segs, cur)
	fabricctl := 0
	for k, seg := range segs {
		if len(seg) == 0 {
			return fmt.Errorf("empty command")
		}
		if seg[0] != "fabricctl" {
			// Only a producer piped into fabricctl may be another program.
			if k+1 < len(segs) && segs[k+1][0] == "fabricctl" && knownTools[seg[0]] {
				continue
			}
			return fmt.Errorf("%q is not a fabricctl command (a line split from the one above?)", strings.Join(seg, " "))
		}
		fabricctl++
		root := newRootCmd(&deps{stdout: new(bytes.Buffer), stderr: new(bytes.Buffer)})
		c, rest, err := root.Find(seg[1:])
		if err != nil {
			return err
		}
		if c == root && len(seg) > 1 && !strings.HasPrefix(seg[1], "-") {
			return fmt.Errorf("unknown command %q", seg[1])
		}
		if err := c.ParseFlags(rest); err != nil {
			return err
		}
		if c.Args != nil {
			if err := c.Args(c, c.Flags().Args()); err != nil {
				return err
			}
		}
	}
	if fabricctl == 0 {
		return fmt.Errorf("no fabricctl command")
	}
	return nil
}

// knownTools are the programs the examples pipe into fabricctl.
var knownTools = map[string]bool{"ib_write_bw": true, "ib_write_lat": true, "cat": true}

// TestHelpWrapLeavesNoOrphans checks that the lines wrapHelp breaks are
// filled: a line that is not in the command's own text as written, followed
// by a continuation of the same entry, could not have taken the
// continuation's first word. The validate and watch tables were wrapped
// line by line before, leaving a word or two on lines of their own
// ("with", "SSH,").
func TestHelpWrapLeavesNoOrphans(t *testing.T) {
	help, cmds := helpOf(t)
	for path, h := range help {
		written := map[string]bool{}
		for _, l := range strings.Split(cmds[path].Long, "\n") {
			written[strings.TrimSpace(l)] = true
		}
		lines := strings.Split(h, "\n")
		for i := 0; i+1 < len(lines); i++ {
			a, b := lines[i], lines[i+1]
			if written[strings.TrimSpace(a)] || strings.TrimSpace(b) == "" {
				continue
			}
			hang := hangOf(a)
			if hang == 0 || indentOf(b) != hang || hangOf(b) == hang+0 && secondColumn(b) > 0 {
				continue
			}
			first := strings.Fields(b)[0]
			if utf8.RuneCountInString(a)+1+utf8.RuneCountInString(first) <= helpWidth {
				t.Errorf("%s --help: line %d is broken early (%q would fit):\n%s\n%s", path, i+1, first, a, b)
			}
		}
	}
}

// TestRootHelpExitCodes: the top-level help lists every exit code.
func TestRootHelpExitCodes(t *testing.T) {
	help, _ := helpOf(t)
	h := strings.Join(strings.Fields(help["fabricctl"]), " ")
	for _, code := range []int{ExitOK, ExitError, ExitChanges, ExitCheckFailed, ExitRolledBack, ExitPartial, ExitUsage} {
		if !strings.Contains(h, fmt.Sprintf(" %d ", code)) {
			t.Errorf("fabricctl --help does not list exit code %d:\n%s", code, h)
		}
	}
}

func TestWrapCommand(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"  fabricctl simulate -f fabric.yaml --scenario slow-receiver:0 --duration 5ms -o json",
			"  fabricctl simulate -f fabric.yaml --scenario slow-receiver:0 --duration 5ms \\\n      -o json"},
		{"  fabricctl plan -f fabric.yaml --out plan.json && fabricctl apply -f fabric.yaml plan.json",
			"  fabricctl plan -f fabric.yaml --out plan.json \\\n      && fabricctl apply -f fabric.yaml plan.json"},
		{"  fabricctl check -f fabric.yaml", "  fabricctl check -f fabric.yaml"},
	} {
		if got := wrapCommand(tc.in, helpWidth); got != tc.want {
			t.Errorf("wrapCommand(%q) =\n%s\nwant\n%s", tc.in, got, tc.want)
		}
	}
}
