package remote

import (
	"strconv"
	"strings"
	"testing"
)

// TestLocalRunOutputBounded: a command that prints far more than any tool
// fabricctl runs (a runaway loop, a remote binary gone wrong) must not make
// fabricctl hold all of it: what is kept is capped at maxOutput per stream,
// the head is kept (ready detection reads it), the loss is said, and the
// command still runs to its end instead of blocking on a full pipe.
func TestLocalRunOutputBounded(t *testing.T) {
	n := maxOutput + 1<<20
	res, err := Local{}.Run(t.Context(), []string{"sh", "-c", "head -c " + strconv.Itoa(n) + " /dev/zero | tr '\\0' x; echo done >&2"}, nil)
	if err != nil {
		t.Fatalf("Run() error = %v", err)
	}
	if len(res.Stdout) > maxOutput+len(truncNote)+20 {
		t.Errorf("kept %d bytes of stdout, want at most maxOutput (%d) plus a note", len(res.Stdout), maxOutput)
	}
	tail := string(res.Stdout[max(len(res.Stdout)-80, 0):])
	if !strings.HasPrefix(string(res.Stdout), "xxxx") || !strings.Contains(tail, "truncated: 1048576 more bytes dropped") {
		t.Errorf("stdout (%d bytes, ends %q): want the head kept and the 1 MiB dropped named", len(res.Stdout), tail)
	}
	if string(res.Stderr) != "done\n" {
		t.Errorf("stderr = %q, want the command to have run to its end", res.Stderr)
	}
}
