package remote

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// alive reports whether pid is a running (not zombie) process on this
// machine. Orphans are reparented to an init that may reap them late, so a
// zombie counts as gone.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) S ...: the state follows the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] != 'Z' && b[i+2] != 'X'
}

// waitGone fails the test unless every pid is gone within a few seconds.
func waitGone(t *testing.T, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Errorf("pid %d still alive after stop", pid)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// waitOutput polls p.Output() until it contains want (ready detection, the
// way validate waits for a perftest server) and returns it.
func waitOutput(t *testing.T, p Process, want string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out := string(p.Output())
		if strings.Contains(out, want) {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("Output() = %q after 10s, want it to contain %q", out, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// pidsIn parses "key <pid>" lines from output.
func pidsIn(t *testing.T, out string, keys ...string) []int {
	t.Helper()
	var pids []int
	for _, k := range keys {
		found := false
		for _, line := range strings.Split(out, "\n") {
			f := strings.Fields(line)
			if len(f) == 2 && f[0] == k {
				pid, err := strconv.Atoi(f[1])
				if err != nil {
					t.Fatalf("bad pid line %q", line)
				}
				pids = append(pids, pid)
				found = true
			}
		}
		if !found {
			t.Fatalf("no %q line in output %q", k, out)
		}
	}
	return pids
}
