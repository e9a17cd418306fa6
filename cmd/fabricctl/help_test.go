package main

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spf13/cobra"
)

// TestHelpLinesWrap renders every command's --help and checks that no line
// is wider than helpWidth: Long texts are wrapped by hand, flag usages by the
// usage template.
func TestHelpLinesWrap(t *testing.T) {
	root := newRootCmd(&deps{stdout: new(bytes.Buffer), stderr: new(bytes.Buffer)})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		var b bytes.Buffer
		c.SetOut(&b)
		c.SetErr(&b)
		if err := c.Help(); err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(b.String(), "\n") {
			if n := utf8.RuneCountInString(l); n > helpWidth {
				t.Errorf("%s --help: line of %d columns:\n%s", c.CommandPath(), n, l)
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
}

func TestWrapHelp(t *testing.T) {
	in := "  -o, --output string   output format: text, json, markdown, commands (dcb/ethtool/ip/echo lines) or netlink\n" +
		"short line\n\n" +
		"A prose paragraph whose first line is far too wide for an eighty column terminal window\nand a second line.\n" +
		"  indented example line that is much too long for the terminal and must wrap at a space"
	want := "  -o, --output string   output format: text, json, markdown, commands\n" +
		"                        (dcb/ethtool/ip/echo lines) or netlink\n" +
		"short line\n\n" +
		"A prose paragraph whose first line is far too wide for an eighty column terminal\nwindow and a second line.\n" +
		"  indented example line that is much too long for the terminal and must wrap at\n  a space"
	if got := wrapHelp(in, helpWidth); got != want {
		t.Errorf("wrapHelp =\n%s\nwant\n%s", got, want)
	}
}
