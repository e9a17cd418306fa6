package perftest

import (
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var update = flag.Bool("update", false, "update golden files")

// sharedDir returns the shared reference directory (FABRICCTL_SHARED, or
// ../shared next to the repository root), or "" when it is absent.
func sharedDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("FABRICCTL_SHARED"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			d := filepath.Join(dir, "..", "shared")
			if _, err := os.Stat(d); err != nil {
				return ""
			}
			return d
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// inputs lists every perftest output the golden test covers: the real ones
// from the shared directory and the generated ones under testdata/output.
func inputs(t testing.TB) map[string]string {
	t.Helper()
	files := map[string]string{}
	gen, err := filepath.Glob("testdata/output/*.txt")
	if err != nil || len(gen) == 0 {
		t.Fatalf("no generated outputs in testdata/output: %v", err)
	}
	for _, f := range gen {
		files[filepath.Base(f)] = f
	}
	return files
}

func realInputs(t testing.TB) map[string]string {
	t.Helper()
	d := sharedDir(t)
	if d == "" {
		return nil
	}
	real, _ := filepath.Glob(filepath.Join(d, "testdata", "perftest", "*.txt"))
	files := map[string]string{}
	for _, f := range real {
		if filepath.Base(f) == "SOURCE.txt" {
			continue
		}
		files["real_"+filepath.Base(f)] = f
	}
	return files
}

func TestParseGolden(t *testing.T) {
	files := inputs(t)
	real := realInputs(t)
	if len(real) == 0 {
		t.Log("shared perftest outputs not found (set FABRICCTL_SHARED or put shared/ next to the repo): testing generated outputs only")
	}
	for k, v := range real {
		files[k] = v
	}
	for name, path := range files {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseBytes(name, b)
			if err != nil {
				t.Fatalf("Parse(%s): %v", name, err)
			}
			golden := filepath.Join("testdata", "golden", strings.TrimSuffix(name, ".txt")+".json")
			if *update {
				out, err := json.MarshalIndent(got, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, append(out, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			wb, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("read golden (run with -update to create): %v", err)
			}
			var want Report
			if err := json.Unmarshal(wb, &want); err != nil {
				t.Fatalf("golden %s: %v", golden, err)
			}
			if diff := cmp.Diff(&want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("Parse(%s) mismatch (-want +got):\n%s", name, diff)
			}
		})
	}
}

func f64(v float64) *float64 { return &v }

// TestParseValues checks the numbers that matter against values read by eye
// from the files, so the goldens cannot silently drift.
func TestParseValues(t *testing.T) {
	approx := cmpopts.EquateApprox(0, 1e-6)
	tests := []struct {
		file string
		want Report
	}{
		{
			file: "testdata/output/ib_write_bw_606_mb.txt",
			want: Report{
				Test: "RDMA_Write BW Test", Kind: Bandwidth, Unit: "MB/sec",
				Bandwidth: []BWRow{{Bytes: 65536, Iterations: 5000,
					PeakGbps: 11030.78 * 1048576 * 8 / 1e9, AvgGbps: 11030.45 * 1048576 * 8 / 1e9, MsgRateMpps: 0.176487}},
			},
		},
		{
			file: "testdata/output/ib_write_bw_gbits_duration_cpu.txt",
			want: Report{
				Test: "RDMA_Write BW Test", Kind: Bandwidth, Unit: "Gb/sec",
				Bandwidth: []BWRow{{Bytes: 65536, Iterations: 3519200, PeakGbps: 0, AvgGbps: 369.07, MsgRateMpps: 0.70395, CPUUtil: f64(4.31)}},
			},
		},
		{
			file: "testdata/output/ib_write_lat_duration.txt",
			want: Report{
				Test: "RDMA_Write Latency Test", Kind: LatencyDuration,
				Latency: []LatRow{{Bytes: 2, Iterations: 4795310, AvgUsec: f64(1.04), TPS: f64(479531)}},
			},
		},
		{
			file: "testdata/output/ib_write_lat_old.txt",
			want: Report{
				Test: "RDMA_Write Latency Test", Kind: Latency,
				Latency: []LatRow{{Bytes: 2, Iterations: 1000, MinUsec: f64(1.10), MaxUsec: f64(6.41), TypicalUsec: f64(1.14)}},
			},
		},
	}
	ignoreInfo := cmpopts.IgnoreFields(Report{}, "Info")
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			b, err := os.ReadFile(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseBytes(tt.file, b)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&tt.want, got, approx, ignoreInfo); diff != "" {
				t.Errorf("Parse mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseRealLatency(t *testing.T) {
	d := sharedDir(t)
	if d == "" {
		t.Skip("shared/testdata/perftest not found: set FABRICCTL_SHARED")
	}
	b, err := os.ReadFile(filepath.Join(d, "testdata", "perftest", "ib_write_lat_rdmacm.txt"))
	if err != nil {
		t.Skipf("real latency output missing: %v", err)
	}
	got, err := ParseBytes("ib_write_lat_rdmacm.txt", b)
	if err != nil {
		t.Fatal(err)
	}
	want := []LatRow{{Bytes: 2, Iterations: 1000, MinUsec: f64(0.76), MaxUsec: f64(0.95), TypicalUsec: f64(0.78),
		AvgUsec: f64(0.78), StdevUsec: f64(0.01), P99Usec: f64(0.83), P999Usec: f64(0.95)}}
	if diff := cmp.Diff(want, got.Latency); diff != "" {
		t.Errorf("latency rows mismatch (-want +got):\n%s", diff)
	}
	if len(got.Warnings) != 1 || !strings.HasPrefix(got.Warnings[0], "Conflicting CPU frequency") {
		t.Errorf("Warnings = %q, want the one CPU frequency warning", got.Warnings)
	}
	if got.Info["GID index"] != "3" || got.Info["rdma_cm QPs"] != "ON" {
		t.Errorf("Info = %v, want GID index 3 and rdma_cm QPs ON", got.Info)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		file     string
		wantLine int
		noTable  bool
	}{
		{file: "no_device.txt", wantLine: 0, noTable: true},
		{file: "header_only.txt", wantLine: 22},
		{file: "unclosed.txt", wantLine: 23},
		{file: "short_row.txt", wantLine: 23},
		{file: "unknown_header.txt", wantLine: 22},
		{file: "mixed.txt", wantLine: 25},
		{file: "public_elided.txt", wantLine: 12},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "bad", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			rep, err := ParseBytes(tt.file, b)
			if err == nil {
				t.Fatalf("Parse(%s) = %+v, want an error", tt.file, rep)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%s) error %v (%T), want a *ParseError", tt.file, err, err)
			}
			if pe.Line != tt.wantLine {
				t.Errorf("Parse(%s) error line = %d, want %d (%v)", tt.file, pe.Line, tt.wantLine, err)
			}
			if got := errors.Is(err, ErrNoTable); got != tt.noTable {
				t.Errorf("errors.Is(err, ErrNoTable) = %v, want %v", got, tt.noTable)
			}
		})
	}
}

func TestMebibyteFactor(t *testing.T) {
	// 1 MiB/s = 1,048,576 B/s = 0.008388608 Gb/s.
	if got, want := mebibyteGbps, 0.008388608; math.Abs(got-want) > 1e-15 {
		t.Errorf("mebibyteGbps = %v, want %v", got, want)
	}
}

func FuzzParse(f *testing.F) {
	for _, p := range inputs(f) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	bad, _ := filepath.Glob("testdata/bad/*.txt")
	for _, p := range bad {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		rep, err := ParseBytes("fuzz", b)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is %T, want *ParseError", err, err)
			}
			return
		}
		if len(rep.Bandwidth)+len(rep.Latency) == 0 {
			t.Fatalf("Parse returned no error and no rows: %+v", rep)
		}
	})
}

// BenchmarkParse parses the 23-row -a bandwidth output.
func BenchmarkParse(b *testing.B) {
	data, err := os.ReadFile("testdata/output/ib_write_bw_mib_all.txt")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ParseBytes("bench", data); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBWAverageIsMsgRateTimesSize: on every bandwidth row of every real
// run here (the public excerpts in testdata, and ../shared's when present;
// the generated outputs' numbers are made up), BW average is MsgRate times
// the message size, within the rounding of the two printed columns: the
// relation avgFromMsgRate relies on (perftest_resources.c print_report_bw
// computes both from one count and one time).
func TestBWAverageIsMsgRateTimesSize(t *testing.T) {
	files := realInputs(t)
	if files == nil {
		files = map[string]string{}
	}
	for k, v := range inputs(t) {
		if strings.HasPrefix(k, "public_") {
			files[k] = v
		}
	}
	rows := 0
	for name, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := ParseBytes(name, b)
		if err != nil {
			continue // latency outputs and the like
		}
		factor := 1.0
		if rep.Unit != "Gb/sec" {
			factor = mebibyteGbps
		}
		for _, r := range rep.Bandwidth {
			if r.AvgFromMsgRate {
				t.Errorf("%s: %d-byte row: average printed as 0.00", name, r.Bytes)
				continue
			}
			rows++
			want := avgFromMsgRate(r.MsgRateMpps, r.Bytes)
			tol := 0.005*factor + avgFromMsgRate(5e-7, r.Bytes)
			if math.Abs(r.AvgGbps-want) > tol {
				t.Errorf("%s: %d-byte row: BW average %.4f Gb/s, MsgRate %.6f Mpps gives %.4f (tolerance %.4f)", name, r.Bytes, r.AvgGbps, r.MsgRateMpps, want, tol)
			}
		}
	}
	t.Logf("%d bandwidth rows of %d real runs", rows, len(files))
	if rows == 0 {
		t.Fatal("no bandwidth row checked")
	}
}

// TestSlowRunBandwidthFromMsgRate: a run slower than BW average's two
// decimals (soft-RoCE on a loaded emulated machine printed 0.00 Gb/s) is
// measured from its message rate, and says so; validate no longer reports
// such a flow as 0 Gb/s.
func TestSlowRunBandwidthFromMsgRate(t *testing.T) {
	b, err := os.ReadFile("testdata/output/ib_write_bw_gbits_duration_cpu.txt")
	if err != nil {
		t.Fatal(err)
	}
	slow := strings.Replace(strings.Replace(string(b), "369.07", "0.00", 1), "0.703950", "0.000015", 1)
	rep, err := ParseBytes("slow", []byte(slow))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Bandwidth) != 1 {
		t.Fatalf("%d rows", len(rep.Bandwidth))
	}
	r := rep.Bandwidth[0]
	if want := 0.000015 * 65536 * 8 / 1000; !r.AvgFromMsgRate || math.Abs(r.AvgGbps-want) > 1e-12 {
		t.Errorf("AvgGbps %v (from MsgRate: %v), want %v from MsgRate", r.AvgGbps, r.AvgFromMsgRate, want)
	}
	// A row whose MsgRate is 0 too stays 0: nothing was measured.
	zero := strings.Replace(slow, "0.000015", "0.000000", 1)
	if rep, err = ParseBytes("zero", []byte(zero)); err != nil {
		t.Fatal(err)
	}
	if r := rep.Bandwidth[0]; r.AvgGbps != 0 || r.AvgFromMsgRate {
		t.Errorf("zero run: %+v", r)
	}
}
