package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/tune"
)

// tuneIntent has a switch of each platform that can express PFC, each
// with a buffer where the platform has a shared one, and the preset's ECN
// written out, so tune's edits replace values in place.
const tuneIntent = `# tune test: one switch per PFC platform
apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata:
  name: tune
policy:
  preset: roce-lossless
  classes:
    - name: roce
      ecn:
        min: 150KB   # the preset's
        max: 1.5MB
        probability: 100%
inventory:
  switches:
    - name: sonic1
      platform: sonic
      address: "192.0.2.2:8080"
      buffer: 2MB
      portDefaults: {speed: 100G, cable: 3m}
      ports:
        - name: Ethernet{0..4..4}
    - name: srl1
      platform: srlinux
      address: "192.0.2.1:57400"
      portDefaults: {speed: 100G, cable: 3m}
      ports:
        - name: ethernet-1/{1..2}
    - name: eos1
      platform: eos
      address: "192.0.2.3:6030"
      buffer: 2MB
      portDefaults: {speed: 100G, cable: 3m, mtu: 9214}
      ports:
        - name: Ethernet{1..2}/1
`

// ocSwitch adds an OpenConfig switch: it cannot express PFC (check's
// FC106), but render still compiles its ECN profile, which the YANG
// validation takes or refuses.
const ocSwitch = `    - name: oc1
      platform: openconfig
      address: "192.0.2.4:6030"
      buffer: 2MB
      portDefaults: {speed: 100G, cable: 3m}
      ports:
        - name: Ethernet{1..2}
`

// TestTuneCommand (issue 31 item 6): tune on a 16:1 incast writes a
// tuned intent (--out) that passes check and whose payloads every
// platform's YANG and device twin take (render --validate --device, the
// pattern of render_device_test.go), with lower p99 FCT and no lossless
// drop; the same seed prints the same JSON; --write edits the file in
// place with the same result.
func TestTuneCommand(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "fabric.yaml")
	if err := os.WriteFile(in, []byte(tuneIntent), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "tuned.yaml")
	plots := filepath.Join(dir, "plots")
	stdout, stderr, code := runFabricctl(t, "tune", "-f", in, "--scenario", "incast:16:1", "--seed", "3", "--out", out, "--plots", plots)
	if code != ExitOK {
		t.Fatalf("tune: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"p99 FCT", "median FCT", "pause time", "throughput", "fabric.yaml:11:14: policy.classes[roce].ecn.min: 150KB -> ", "--- " + in, "+        min: "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("tune output lacks %q:\n%s", want, stdout)
		}
	}
	for _, p := range []string{"1-before-queue.svg", "1-after-queue.svg", "1-before-rate.svg", "1-after-rate.svg"} {
		if b, err := os.ReadFile(filepath.Join(plots, p)); err != nil || !strings.Contains(string(b), "<svg") {
			t.Errorf("plot %s: %v", p, err)
		}
	}
	tuned, err := intent.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := intent.Load(in)
	e, e0 := tuned.Policy.ClassByName("roce").ECN, orig.Policy.ClassByName("roce").ECN
	if e.MinBytes == e0.MinBytes && e.MaxBytes == e0.MaxBytes && e.Probability == e0.Probability {
		t.Fatalf("the tuned intent has the preset's ECN %+v", *e)
	}
	runCLIWant(t, ExitOK, "check", "-f", out)
	runCLIWant(t, ExitOK, "render", "--validate", "--device", "-f", out)

	// every platform, OpenConfig too: the tuned values in each payload
	withOC := filepath.Join(dir, "tuned-oc.yaml")
	b, _ := os.ReadFile(out)
	if err := os.WriteFile(withOC, append(b, ocSwitch...), 0o644); err != nil {
		t.Fatal(err)
	}
	runCLIWant(t, ExitOK, "render", "--validate", "--device", "-f", withOC)
	js := runCLIWant(t, ExitOK, "render", "-o", "json", "-f", withOC)
	for _, v := range []string{strconv.FormatInt(e.MinBytes, 10), strconv.FormatInt(e.MaxBytes, 10)} {
		if strings.Count(js, v) < 4 {
			t.Errorf("render -o json: %s appears %d times, want in each of the 4 platforms' payloads", v, strings.Count(js, v))
		}
	}

	// JSON, deterministic for a seed
	var reps [2]tune.Report
	for i := range reps {
		stdout, stderr, code := runFabricctl(t, "tune", "-f", in, "--scenario", "incast:16:1", "--seed", "3", "-o", "json", "--parallel", []string{"1", "2"}[i])
		if code != ExitOK || json.Unmarshal([]byte(stdout), &reps[i]) != nil {
			t.Fatalf("tune -o json: exit %d\n%s\n%s", code, stdout, stderr)
		}
	}
	if a, b := reps[0], reps[1]; a.AfterSetting.ECN == nil || *a.AfterSetting.ECN != *b.AfterSetting.ECN || !maps.Equal(a.AfterSetting.DCQCN, b.AfterSetting.DCQCN) || len(a.AfterSetting.DCQCN) != 6 || a.Evaluated != b.Evaluated || a.After.Runs[0] != b.After.Runs[0] {
		t.Errorf("same seed, different results:\n%+v\n%+v", a.AfterSetting, b.AfterSetting)
	}
	r := reps[0]
	if r.After.Runs[0].P99FCT >= r.Before.Runs[0].P99FCT || r.After.Drops != 0 || r.Seed != 3 || len(r.Changes) == 0 {
		t.Errorf("json: before %+v after %+v changes %+v", r.Before.Runs, r.After.Runs, r.Changes)
	}
	if r.AfterSetting.ECN.Min != e.MinBytes || r.AfterSetting.ECN.Max != e.MaxBytes {
		t.Errorf("json best %+v, --out wrote %+v", *r.AfterSetting.ECN, *e)
	}

	// --write: in place, the same text --out wrote
	_, stderr, code = runFabricctl(t, "tune", "-f", in, "--scenario", "incast:16:1", "--seed", "3", "--write")
	written, _ := os.ReadFile(in)
	if code != ExitOK || string(written) != string(b) || !strings.Contains(stderr, "wrote "+in) {
		t.Errorf("--write: exit %d, file differs from --out's:\n%s\n%s", code, written, stderr)
	}
	if !strings.Contains(string(written), "# the preset's") {
		t.Errorf("--write lost a comment:\n%s", written)
	}
}

func TestTuneUsage(t *testing.T) {
	clean := writeIntent(t, cleanIntent)
	tests := []struct {
		args []string
		want int
	}{
		{[]string{"tune"}, ExitUsage},
		{[]string{"tune", "-f", clean, "-o", "yaml"}, ExitUsage},
		{[]string{"tune", "-f", "-", "--write"}, ExitUsage},
		{[]string{"tune", "-f", clean, "--write", "--out", "x.yaml"}, ExitUsage},
		{[]string{"tune", "-f", clean, "-f", clean, "--out", "x.yaml"}, ExitUsage},
		{[]string{"tune", "-f", clean, "--budget", "0"}, ExitUsage},
		{[]string{"tune", "-f", clean, "--size", "lots"}, ExitUsage},
		{[]string{"tune", "-f", clean, "--scenario", "incast:4:2"}, ExitError},
		{[]string{"tune", "-f", clean, "--class", "nope"}, ExitError},
	}
	for _, tt := range tests {
		if _, stderr, code := runFabricctl(t, tt.args...); code != tt.want {
			t.Errorf("fabricctl %s: exit %d, want %d\n%s", strings.Join(tt.args, " "), code, tt.want, stderr)
		}
	}
}

// TestTuneCompletion: tune's --scenario and -o complete as simulate's do.
func TestTuneCompletion(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"tune", "--scenario", ""}, []string{"incast:16:1", "alltoall", "slow-receiver:50", "link-down:"}},
		{[]string{"tune", "-o", ""}, []string{"text", "json"}},
	} {
		if got := complete(t, tt.args...); !slices.Equal(got, tt.want) {
			t.Errorf("complete %q = %q, want %q", tt.args, got, tt.want)
		}
	}
}

// TestTuneSearchSpaceCompiles: the extreme ECN settings the search can
// try (tune.Corners: the lowest and highest levels of min and max,
// probability 1 and 100 %), written into the intent with tune's own
// writer, pass check and compile for every platform into payloads the
// YANG modules and the device twins take (render --validate --device):
// no tuned value can fall outside a platform's range. Without buffers,
// so max goes up to the search's ceiling.
func TestTuneSearchSpaceCompiles(t *testing.T) {
	noBuffer := strings.ReplaceAll(tuneIntent, "      buffer: 2MB\n", "")
	f, err := intent.Parse("fabric.yaml", []byte(noBuffer))
	if err != nil {
		t.Fatal(err)
	}
	corners, err := tune.Corners(f, "")
	if err != nil || len(corners) < 4 {
		t.Fatalf("corners %v: %v", corners, err)
	}
	dir := t.TempDir()
	for i, c := range corners {
		edits := []tune.Edit{
			{Path: "policy.classes[roce].ecn.min", Value: strconv.FormatInt(c.Kmin, 10)},
			{Path: "policy.classes[roce].ecn.max", Value: strconv.FormatInt(c.Kmax, 10)},
			{Path: "policy.classes[roce].ecn.probability", Value: strconv.Itoa(c.Pmax) + "%"},
		}
		srcs, _, err := tune.Write(f.Sources, edits)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "corner"+strconv.Itoa(i)+".yaml")
		if err := os.WriteFile(path, srcs[0].Data, 0o644); err != nil {
			t.Fatal(err)
		}
		runCLIWant(t, ExitOK, "check", "-f", path)
		withOC := filepath.Join(dir, "corner"+strconv.Itoa(i)+"-oc.yaml")
		if err := os.WriteFile(withOC, append(srcs[0].Data, ocSwitch...), 0o644); err != nil {
			t.Fatal(err)
		}
		runCLIWant(t, ExitOK, "render", "--validate", "--device", "-f", withOC)
	}
}

// TestTuneModesCommand: tune --modes on SONiC, SR Linux and EOS switches
// searches lossless, lossy and pfc-only and refuses semi-lossless (EOS,
// check's FC162) saying so; with one setting per mode pfc-only wins this
// incast, and the intent it writes (policy.mode pfc-only, the class's
// written ECN turned off) passes check and compiles for every platform
// into payloads their YANG and device twins take.
func TestTuneModesCommand(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "fabric.yaml")
	if err := os.WriteFile(in, []byte(tuneIntent), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "tuned.yaml")
	stdout, stderr, code := runFabricctl(t, "tune", "-f", in, "--scenario", "incast:16:1", "--modes", "--budget", "1", "--out", out)
	if code != ExitOK {
		t.Fatalf("tune --modes: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"MODE ", "lossy ", "semi-lossless  -", "refused: platform eos (eos1): FC162", "mode pfc-only  <- best",
		"policy.mode: add mode: pfc-only", "policy.classes[roce].ecn.enabled: add enabled: false"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("tune --modes output lacks %q:\n%s", want, stdout)
		}
	}
	tuned, err := intent.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if tuned.Policy.Mode != intent.ModePFCOnly {
		t.Errorf("tuned mode %s, want pfc-only", tuned.Policy.Mode)
	}
	runCLIWant(t, ExitOK, "check", "-f", out)
	runCLIWant(t, ExitOK, "render", "--validate", "--device", "-f", out)

	var rep tune.Report
	stdout, stderr, code = runFabricctl(t, "tune", "-f", in, "--scenario", "incast:16:1", "--modes", "--budget", "1", "-o", "json")
	if code != ExitOK || json.Unmarshal([]byte(stdout), &rep) != nil {
		t.Fatalf("tune --modes -o json: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var modes []string
	for _, m := range rep.Modes {
		modes = append(modes, m.Mode)
	}
	if !slices.Equal(modes, []string{"lossless", "lossy", "semi-lossless", "pfc-only"}) || rep.Modes[2].Refused == "" || !rep.Modes[3].Best || rep.AfterSetting.Mode != "pfc-only" {
		t.Errorf("json modes %+v, after %+v", rep.Modes, rep.AfterSetting)
	}
}
