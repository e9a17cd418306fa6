package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSimulateRunsTheIntentsDCQCN: simulate runs policy.dcqcn (what host
// apply writes) by default: an intent without it simulates exactly as
// --dcqcn mlx5 does, and one that sets it simulates differently from the
// mlx5 defaults and exactly as its own values say.
func TestSimulateRunsTheIntentsDCQCN(t *testing.T) {
	run := func(src string, extra ...string) string {
		t.Helper()
		f := writeIntent(t, src)
		args := append([]string{"simulate", "-f", f, "--scenario", "incast:4:1", "--duration", "300us", "--seed", "3", "-o", "json"}, extra...)
		out, errOut, code := runFabricctl(t, args...)
		if code != ExitOK && code != ExitCheckFailed {
			t.Fatalf("fabricctl %s: exit %d\n%s", strings.Join(args, " "), code, errOut)
		}
		// The result without the wall-clock figures, which differ per run.
		var r map[string]any
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("simulate -o json: %v", err)
		}
		delete(r, "wallNs")
		delete(r, "eventsPerSecond")
		b, _ := json.Marshal(r)
		return string(b)
	}
	plain := run(cleanIntent)
	if mlx5 := run(cleanIntent, "--dcqcn", "mlx5"); plain != mlx5 {
		t.Errorf("without policy.dcqcn, simulate differs from --dcqcn mlx5")
	}
	// A gentler reaction point: a small first-CNP rate and slow recovery.
	tuned := strings.Replace(cleanIntent, "  preset: roce-lossless\n", "  preset: roce-lossless\n  dcqcn: {rateOnFirstCNP: 10G, timeReset: 1000us, byteReset: 10MB, aiRate: 1M}\n", 1)
	withDCQCN := run(tuned)
	if withDCQCN == plain {
		t.Errorf("policy.dcqcn did not change what simulate runs")
	}
	if ignored := run(tuned, "--dcqcn", "mlx5"); ignored != plain {
		t.Errorf("--dcqcn mlx5 still ran the intent's policy.dcqcn")
	}
}
