package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSimulateCommand(t *testing.T) {
	clean := writeIntent(t, cleanIntent)
	// the RoCE class made lossy: ECN/DCQCN only, RoCE RC recovers drops
	lossy := writeIntent(t, strings.Replace(cleanIntent, "preset: roce-lossless\n", "preset: roce-lossless\n  classes:\n    - {name: roce, lossless: false}\n", 1))
	// the same with the NICs forced to selective repeat (ROCE_ACCL): simulate
	// recovers as host apply leaves the NICs unless --recovery says otherwise
	lossySR := writeIntent(t, strings.Replace(cleanIntent, "preset: roce-lossless\n", "preset: roce-lossless\n  nicAccelerations: {selectiveRepeat: true}\n  classes:\n    - {name: roce, lossless: false}\n", 1))
	scen := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(scen, []byte("duration: 100us\nflows:\n  - {from: h1, to: h2, colour: red}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want int
		out  string
	}{
		{"incast on a synthetic star", []string{"simulate", "-f", clean, "--scenario", "incast:4:1", "--duration", "200us"}, ExitOK, "lossless held"},
		{"headroom cut, PFC only: drops", []string{"simulate", "-f", clean, "--scenario", "incast:4:1", "--duration", "200us", "--no-ecn", "--xoff", "16KB", "--headroom", "2KB"}, ExitCheckFailed, "LOSSLESS BROKEN"},
		{"markdown with plots", []string{"simulate", "-f", clean, "--scenario", "slow-receiver:20", "--duration", "200us", "--markdown"}, ExitOK, "<svg"},
		{"sized flows report FCT", []string{"simulate", "-f", clean, "--scenario", "incast:2:1", "--duration", "300us", "--size", "100KB"}, ExitOK, "100.0KB"},
		{"unknown class", []string{"simulate", "-f", clean, "--scenario", "incast:2:1", "--class", "nope"}, ExitError, ""},
		{"bad size", []string{"simulate", "-f", clean, "--size", "lots"}, ExitUsage, ""},
		{"bad scenario", []string{"simulate", "-f", clean, "--scenario", "incast:4:2"}, ExitError, ""},
		{"scenario file with an unknown key", []string{"simulate", "-f", clean, "--scenario", scen}, ExitError, ""},
		{"no file", []string{"simulate"}, ExitUsage, ""},
		{"bad dcqcn", []string{"simulate", "-f", clean, "--dcqcn", "x"}, ExitUsage, ""},
		{"check --simulate", []string{"check", "--simulate", "-f", clean}, ExitOK, ""},
		{"lossy class: drops recovered, exit 0", []string{"simulate", "-f", lossy, "--scenario", "incast:16:1", "--size", "1MB", "--duration", "10ms", "--ack-timeout", "8", "--recovery", "selective-repeat"}, ExitOK, "recovered by selective-repeat"},
		{"lossy class, the intent's NICs in selective repeat", []string{"simulate", "-f", lossySR, "--scenario", "incast:16:1", "--size", "1MB", "--duration", "10ms", "--ack-timeout", "8"}, ExitOK, "recovered by selective-repeat"},
		{"lossy class, --recovery over the intent", []string{"simulate", "-f", lossySR, "--scenario", "incast:16:1", "--size", "1MB", "--duration", "10ms", "--ack-timeout", "8", "--recovery", "go-back-n"}, ExitOK, "recovered by go-back-n"},
		{"compare modes", []string{"simulate", "-f", clean, "--scenario", "incast:16:1", "--size", "1MB", "--duration", "10ms", "--ack-timeout", "8", "--compare-modes"}, ExitOK, "lossy          selective-repeat"},
		{"compare modes: semi-lossless too", []string{"simulate", "-f", clean, "--scenario", "slow-receiver:50", "--size", "1MB", "--duration", "5ms", "--ack-timeout", "8", "--compare-modes"}, ExitOK, "semi-lossless  go-back-n"},
		{"bad recovery", []string{"simulate", "-f", clean, "--recovery", "sack"}, ExitUsage, ""},
		{"bad ack timeout", []string{"simulate", "-f", clean, "--ack-timeout", "32"}, ExitUsage, ""},
		{"compare modes and markdown", []string{"simulate", "-f", clean, "--compare-modes", "--markdown"}, ExitUsage, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runFabricctl(t, tt.args...)
			if code != tt.want || !strings.Contains(out, tt.out) {
				t.Errorf("fabricctl %s: exit %d (want %d), want %q in\nstdout:\n%s\nstderr:\n%s", strings.Join(tt.args, " "), code, tt.want, tt.out, out, errOut)
			}
		})
	}
	out, _, code := runFabricctl(t, "simulate", "-f", clean, "--scenario", "incast:2:1", "--duration", "100us", "-o", "json", "--seed", "7")
	var r struct {
		Seed         int64 `json:"seed"`
		Conservation struct{ Sent, Delivered int64 }
		Flows        []struct{ From string }
	}
	if code != ExitOK || json.Unmarshal([]byte(out), &r) != nil || r.Seed != 7 || len(r.Flows) != 2 || r.Conservation.Sent == 0 {
		t.Errorf("json: exit %d, %+v\n%s", code, r, out)
	}
}
