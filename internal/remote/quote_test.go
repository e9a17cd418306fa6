package remote

import (
	"bytes"
	"os/exec"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// nastyArgs are arguments a shell would mangle if quoting were wrong.
var nastyArgs = []string{
	"",
	"plain",
	"two words",
	"it's",
	"'",
	"''",
	`'\''`,
	`"double"`,
	`back\slash`,
	`trailing\`,
	"$HOME",
	"${HOME}",
	"$(id -u)",
	"`id -u`",
	"*",
	"[a-z]*",
	"{a,b}",
	"~",
	"~root",
	"a=b",
	"-n",
	"--",
	"#comment",
	"semi;colon",
	"a && b || c",
	"pipe|cat",
	"redir>x",
	"<in",
	"bg &",
	"new\nline",
	"tab\there",
	"bang!",
	"é ü 日本",
	"\xff\xfe invalid utf-8",
	"%s\\0",
}

func TestQuote(t *testing.T) {
	tests := []struct {
		argv []string
		want string
	}{
		{[]string{"ib_write_bw", "-d", "mlx5_0", "-x", "3", "--report_gbits", "10.0.1.2"}, "ib_write_bw -d mlx5_0 -x 3 --report_gbits 10.0.1.2"},
		{[]string{"echo", ""}, "echo ''"},
		{[]string{"echo", "it's $HOME"}, `echo 'it'\''s $HOME'`},
		{[]string{"a=b", "~", "*"}, `'a=b' '~' '*'`},
		{[]string{"user@host:/path,x+y%z"}, "user@host:/path,x+y%z"},
		{nil, ""},
	}
	for _, tt := range tests {
		if got := Quote(tt.argv); got != tt.want {
			t.Errorf("Quote(%q) = %q, want %q", tt.argv, got, tt.want)
		}
	}
}

// TestQuoteRoundTrip proves with the real /bin/sh that the quoted line splits
// back into exactly the original words.
func TestQuoteRoundTrip(t *testing.T) {
	for _, shell := range []string{"/bin/sh", "/bin/bash", "/bin/dash"} {
		if _, err := exec.LookPath(shell); err != nil {
			t.Logf("%s not installed, not tested", shell)
			continue
		}
		t.Run(shell, func(t *testing.T) {
			line := "printf '%s\\0' " + Quote(nastyArgs)
			out, err := exec.Command(shell, "-c", line).Output()
			if err != nil {
				t.Fatalf("%s -c %q: %v", shell, line, err)
			}
			got := splitNUL(out)
			if diff := cmp.Diff(nastyArgs, got); diff != "" {
				t.Errorf("%s split Quote(nastyArgs) differently (-want +got):\n%s", shell, diff)
			}
		})
	}
}

func splitNUL(b []byte) []string {
	b = bytes.TrimSuffix(b, []byte{0})
	var out []string
	for _, w := range bytes.Split(b, []byte{0}) {
		out = append(out, string(w))
	}
	return out
}
