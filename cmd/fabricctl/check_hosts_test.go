package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/intent/check"
)

// TestCheckAndHostPlanAgreeOnTheNICMinimum (issue 27 item 6): a lossless
// host buffer below mlx5's minimum is refused by check (FC129) with the
// number `host plan --assume fresh` refuses it with, at the line that sets
// it; check's fix, applied as its JSON edits say, passes both.
func TestCheckAndHostPlanAgreeOnTheNICMinimum(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "sonic-pod.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	withBuffer := func(size string) string {
		f := filepath.Join(t.TempDir(), "fabric.yaml")
		s := strings.Replace(string(src), "inventory:\n", "  hostBuffers:\n    - {buffer: 1, size: "+size+", priorities: [3, 4]}\ninventory:\n", 1)
		if err := os.WriteFile(f, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	f := withBuffer("60KB")
	out, _, code := runFabricctl(t, "check", "-f", f)
	if code != ExitCheckFailed || !strings.Contains(out, "fabric.yaml:22:25: error FC129: policy.hostBuffers[buffer=1].size: lossless receive buffer 1 of 60,000 B is below mlx5's minimum of 65,286 B on 4 hosts (stor1, stor2, stor3, stor4; 4 NICs)") {
		t.Fatalf("check: exit %d\n%s", code, out)
	}
	_, errOut, code := runFabricctl(t, "host", "plan", "-f", f, "--host", "stor1", "--assume", "fresh")
	if code == ExitOK || !strings.Contains(errOut, "lossless buffer 1 of 60000 B is below mlx5's minimum 65286 B") {
		t.Fatalf("host plan --assume fresh: exit %d\n%s", code, errOut)
	}

	// The fix, as check -o json gives it.
	js, _, _ := runFabricctl(t, "check", "-f", f, "-o", "json")
	var r struct {
		Findings []struct {
			ID    string
			Edits []check.Edit
		}
	}
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		t.Fatal(err)
	}
	var size string
	for _, x := range r.Findings {
		if x.ID == "FC129" && len(x.Edits) == 1 && x.Edits[0].Path == "policy.hostBuffers[buffer=1].size" {
			size = x.Edits[0].Value
		}
	}
	if size != "66KB" {
		t.Fatalf("FC129's edit sets size %q, want 66KB:\n%s", size, js)
	}
	f = withBuffer(size)
	if out, _, code := runFabricctl(t, "check", "-f", f); code != ExitOK || strings.Contains(out, "FC129") {
		t.Errorf("check after the fix: exit %d\n%s", code, out)
	}
	if _, errOut, code := runFabricctl(t, "host", "plan", "-f", f, "--host", "stor1", "--assume", "fresh"); code != ExitOK {
		t.Errorf("host plan --assume fresh after the fix: exit %d\n%s", code, errOut)
	}
}
