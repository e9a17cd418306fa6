package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/netnstest"
	"github.com/fabricctl/fabricctl/internal/remote"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
	"github.com/fabricctl/fabricctl/validate"
)

func mustRun(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
}

// TestValidateCLIUDPLab runs `fabricctl validate --engine udp` against a real
// network: three host namespaces and a Linux bridge in a switch namespace.
// Clean, it exits 0; with a token bucket on the receiver's switch port, the
// 2->1 incast drops packets and it exits 3 with failures in the JUnit file.
func TestValidateCLIUDPLab(t *testing.T) {
	for _, tt := range []struct {
		name       string
		bottleneck bool
		wantCode   int
	}{
		{"clean", false, ExitOK},
		{"bottleneck", true, ExitCheckFailed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sw := netnstest.New(t) // skips unless root
			mustRun(t, sw.Command("ip", "link", "add", "br0", "type", "bridge"))
			mustRun(t, sw.Command("ip", "link", "set", "br0", "up"))
			args := []string{"validate", "--engine", "udp", "--udp-packets", "800", "--udp-rate", "2000", "--no-latency"}
			var hosts strings.Builder
			for i := 1; i <= 3; i++ {
				h := netnstest.New(t)
				port := fmt.Sprintf("swp%d", i)
				mustRun(t, exec.Command("ip", "link", "add", "eth0", "netns", h.Name, "type", "veth", "peer", "name", port, "netns", sw.Name))
				mustRun(t, sw.Command("ip", "link", "set", port, "master", "br0"))
				mustRun(t, sw.Command("ip", "link", "set", port, "up"))
				mustRun(t, h.Command("ip", "addr", "add", fmt.Sprintf("10.98.0.%d/24", i), "dev", "eth0"))
				mustRun(t, h.Command("ip", "link", "set", "eth0", "up"))
				fmt.Fprintf(&hosts, "    - name: gpu%d\n      address: local\n      nics:\n        - {interface: eth0, speed: 10G, address: 10.98.0.%d}\n", i, i)
				args = append(args, "--netns", fmt.Sprintf("gpu%d=%s", i, h.Name))
			}
			if tt.bottleneck {
				mustRun(t, sw.Command("tc", "qdisc", "add", "dev", "swp1", "root", "tbf", "rate", "8mbit", "burst", "10kb", "latency", "20ms"))
			}
			dir := t.TempDir()
			file := filepath.Join(dir, "lab.yaml")
			yaml := "apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\nmetadata: {name: netns-lab}\npolicy:\n  preset: roce-lossless\ninventory:\n  hosts:\n" + hosts.String()
			if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			junit := filepath.Join(dir, "validate.xml")
			md := filepath.Join(dir, "validate.md")
			args = append(args, "-f", file, "--junit", junit, "--markdown", md)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var stdout, stderr bytes.Buffer
			code := run(ctx, args, strings.NewReader(""), &stdout, &stderr)
			t.Logf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
			if code != tt.wantCode {
				t.Fatalf("exit code = %d, want %d", code, tt.wantCode)
			}
			// Every host has a readback row, namespaced ones a skip with
			// the reason; the udp table has loss, not bandwidth.
			for i := 1; i <= 3; i++ {
				row := false
				for _, l := range strings.Split(stdout.String(), "\n") {
					f := strings.Fields(l)
					row = row || (len(f) > 3 && f[0] == "SKIP" && f[1] == "readback" && f[2] == "host" && f[3] == fmt.Sprintf("gpu%d", i) && strings.Contains(l, "network namespace"))
				}
				if !row {
					t.Errorf("no skipped readback row with a reason for host gpu%d", i)
				}
			}
			if strings.Contains(stdout.String(), "Gb/s") || !strings.Contains(stdout.String(), "LOST") {
				t.Errorf("the udp flow table must show loss and no bandwidth column")
			}
			b, err := os.ReadFile(junit)
			if err != nil {
				t.Fatal(err)
			}
			var suites struct {
				Tests    int `xml:"tests,attr"`
				Failures int `xml:"failures,attr"`
			}
			if err := xml.Unmarshal(b, &suites); err != nil {
				t.Fatalf("junit report: %v", err)
			}
			if suites.Tests == 0 || (suites.Failures > 0) != tt.bottleneck {
				t.Errorf("junit: %d tests, %d failures; want failures only with the bottleneck", suites.Tests, suites.Failures)
			}
			mdb, err := os.ReadFile(md)
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]string{false: "**PASS**", true: "**FAIL**"}[tt.bottleneck]; !bytes.Contains(mdb, []byte(want)) {
				t.Errorf("markdown report lacks %s:\n%s", want, mdb)
			}
		})
	}
}

// TestValidateRDMAWithoutDevice: on a machine without RDMA devices the rdma
// engine stops before any traffic with one line that suggests --engine udp.
func TestValidateRDMAWithoutDevice(t *testing.T) {
	if ents, _ := os.ReadDir("/sys/class/infiniband"); len(ents) > 0 {
		t.Skip("this machine has an RDMA device; the test needs one without")
	}
	file := filepath.Join(t.TempDir(), "fabric.yaml")
	yaml := "apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\nmetadata: {name: nordma}\npolicy: {preset: roce-lossless}\ninventory:\n  hosts:\n" +
		"    - name: gpu1\n      address: local\n      nics: [{interface: lo, rdma: mlx5_0}]\n" +
		"    - name: gpu2\n      address: local\n      nics: [{interface: lo, rdma: mlx5_1}]\n"
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, t.Context(), "validate", "-f", file, "--no-readback", "--no-counters")
	if code != ExitError {
		t.Errorf("exit %d, want %d", code, ExitError)
	}
	want := "fabricctl: --engine rdma needs an RDMA device, and gpu1, gpu2 have none (/sys/class/infiniband is empty or missing); without RDMA NICs use --engine udp\n"
	if errOut != want || out != "" {
		t.Errorf("stdout %q, stderr %q; want no table and the one line %q", out, errOut, want)
	}
}

func TestValidateUsage(t *testing.T) {
	for _, args := range [][]string{
		{"validate"},
		{"validate", "-f", "x.yaml", "--engine", "ib"},
		{"validate", "-f", "x.yaml", "--netns", "gpu1=ns1"},
		{"validate", "-f", "x.yaml", "--engine", "udp", "--netns", "gpu1"},
		{"validate", "-f", "x.yaml", "-o", "yaml"},
		{"validate", "-f", "x.yaml", "--no-all-pairs", "--no-incast"},
		// udpflow refuses these rates on every flow: refuse them up front.
		{"validate", "-f", "x.yaml", "--engine", "udp", "--udp-rate", "NaN"},
		{"validate", "-f", "x.yaml", "--engine", "udp", "--udp-rate", "+Inf"},
		{"validate", "-f", "x.yaml", "--host-binary", " "},
		{"validate", "-f", "x.yaml", "--remote-fabricctl", ""}, // the old name still binds the same value
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, strings.NewReader(""), &out, &errb); code != ExitUsage {
			t.Errorf("fabricctl %s: exit %d, want %d (%s)", strings.Join(args, " "), code, ExitUsage, errb.String())
		}
	}
}

func TestPerftestParseCLI(t *testing.T) {
	for _, tt := range []struct {
		file string
		code int
	}{
		{"../../validate/perftest/testdata/output/ib_write_bw_mib_all.txt", ExitOK},
		{"../../validate/perftest/testdata/bad/unclosed.txt", ExitError},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"perftest", "parse", "-o", "json", tt.file}, strings.NewReader(""), &out, &errb)
		if code != tt.code {
			t.Errorf("perftest parse %s: exit %d, want %d (%s)", tt.file, code, tt.code, errb.String())
		}
	}
}

// TestValidateCLISwitchTwin wires a switch into a validate run: its counters
// come from an SR Linux device twin over real gNMI, and without
// --no-readback the twin's empty configuration is drift (exit 3).
func TestValidateCLISwitchTwin(t *testing.T) {
	tw, err := twin.Start(twin.Options{Name: "leaf1", Platform: intent.PlatformSRLinux})
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	p, err := transport.ParsePath("/qos/interfaces/interface[interface-id=ethernet-1/1]/output/queues")
	if err != nil {
		t.Fatal(err)
	}
	if err := tw.Put(p, map[string]any{"queue": []any{map[string]any{"queue-name": "unicast-3",
		"queue-statistics": map[string]any{"aggregate-statistics": map[string]any{"dropped-packets": 0, "ecn-marked-packets": 0}}}}}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "fabric.yaml")
	yaml := fmt.Sprintf(`apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: twin-lab}
policy: {preset: roce-lossless}
inventory:
  switches:
    - name: leaf1
      platform: srlinux
      address: %q
      tls: {insecure: true}
      ports:
        - {name: ethernet-1/1, speed: 100G, cable: 3m}
  hosts:
    - name: h1
      address: local
      nics: [{interface: lo, address: 127.0.0.1}]
    - name: h2
      address: local
      nics: [{interface: lo, address: 127.0.0.1}]
`, tw.Addr())
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		extra    []string
		wantCode int
		want     []string
	}{
		{"counters only", []string{"--no-readback"}, ExitOK, []string{"PASS    switch.lossless_drops  leaf1/ethernet-1/1"}},
		{"with readback", nil, ExitCheckFailed, []string{"FAIL    readback.drift", "switch leaf1 /qos"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--log-level", "debug", "validate", "-f", file, "--engine", "udp", "--udp-packets", "200", "--timeout", "5s"}, tt.extra...)
			var out, errb bytes.Buffer
			code := run(context.Background(), args, strings.NewReader(""), &out, &errb)
			t.Logf("stderr:\n%s", errb.String())
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, out.String(), errb.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}

// TestValidateReadbackRemoteCommand: --host-binary may be several words
// ("sudo fabricctl"); the readback of remote hosts must run all of them, as
// the udp engine does, and over the runner validate already holds for the
// host. Here the host's runner is local and the command is
// "env FABRICCTL_WRAPPED=1 <fake fabricctl>", which answers `host plan` with
// a plan only when it was started through the wrapper.
func TestValidateReadbackRemoteCommand(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "fabricctl")
	stamp, _ := json.Marshal(readVersion())
	script := `#!/bin/sh
cat >/dev/null
[ "$FABRICCTL_WRAPPED" = 1 ] || { echo "not wrapped: $*" >&2; exit 1; }
[ "$*" = "version -o json" ] && { cat "$0.version"; exit 0; }
[ "$1 $2" = "host plan" ] || { echo "unexpected: $*" >&2; exit 1; }
echo '{"version":1,"fabric":"pod1","targets":[{"name":"gpu9","kind":"host","changes":[]}]}'
`
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fake+".version", stamp, 0o644); err != nil {
		t.Fatal(err)
	}
	f := &intent.Fabric{Name: "pod1", Hosts: []intent.Host{{Name: "gpu9", Address: "gpu9.example.net",
		NICs: []intent.NIC{{Interface: "eth0"}}}}}
	o := &validateOptions{fabricctl: "env FABRICCTL_WRAPPED=1 " + fake}
	var used []string
	runnerFor := func(host string) (remote.Runner, error) {
		used = append(used, host)
		return remote.Local{Name: host}, nil
	}
	d := &deps{log: slog.New(slog.DiscardHandler)}
	p, err := o.readback(context.Background(), d, f, nil, nil, runnerFor)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Targets) != 1 || p.Targets[0].Name != "gpu9" || p.Targets[0].Error != "" {
		t.Fatalf("readback targets = %+v, want gpu9 read without error", p.Targets)
	}
	if len(used) != 1 || used[0] != "gpu9" {
		t.Errorf("runners used = %v, want validate's runner for gpu9", used)
	}
	// Another build on the host is refused (and allowed with
	// --host-version-skew).
	if err := os.WriteFile(fake+".version", []byte(`{"version":"v0.0.1","revision":"deadbeef"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, _ = o.readback(context.Background(), d, f, nil, nil, runnerFor); len(p.Targets) != 1 || !strings.Contains(p.Targets[0].Error, "another build") {
		t.Errorf("readback of a host with another build: %+v, want it refused", p.Targets)
	}
	o.hostSkew = true
	if p, _ = o.readback(context.Background(), d, f, nil, nil, runnerFor); len(p.Targets) != 1 || p.Targets[0].Error != "" {
		t.Errorf("readback with --host-version-skew: %+v", p.Targets)
	}
}

func TestValidateUDPHalvesHelp(t *testing.T) {
	for _, verb := range []string{"udp-recv", "udp-send"} {
		code, out, errOut := runCLI(t, t.Context(), "validate", verb, "--help")
		if code != ExitOK || !strings.Contains(out, "Usage of fabricctl validate "+verb) {
			t.Errorf("validate %s --help: exit %d, stdout %q, stderr %q", verb, code, out, errOut)
		}
	}
}

// TestValidateCLISimEngine: `validate --engine sim` runs the validation
// plan in the packet simulator on the intent alone (the intent's switches
// are TEST-NET addresses: no device is reached) and every report format
// says so; the prediction's rows are in the JSON.
func TestValidateCLISimEngine(t *testing.T) {
	dir := t.TempDir()
	junit, md := filepath.Join(dir, "v.xml"), filepath.Join(dir, "v.md")
	out := runCLIWant(t, ExitOK, "validate", "-f", "../../validate/testdata/simfabric.yaml", "--engine", "sim", "--sim-duration", "200us",
		"-o", "json", "--junit", junit, "--markdown", md)
	var rep validate.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Engine != "sim" || !strings.Contains(rep.EngineNote, "SIMULATED") || rep.Prediction == nil || len(rep.Flows) != 15 {
		t.Errorf("engine %q note %q prediction %v flows %d", rep.Engine, rep.EngineNote, rep.Prediction != nil, len(rep.Flows))
	}
	for _, p := range []string{junit, md} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "sim") || !strings.Contains(string(b), "prediction") {
			t.Errorf("%s does not name the sim engine and the prediction:\n%s", p, b)
		}
	}
	code, _, errOut := runCLI(t, t.Context(), "validate", "-f", "../../validate/testdata/simfabric.yaml", "--engine", "sim", "--sim-duration", "0s")
	if code != ExitUsage || !strings.Contains(errOut, "--sim-duration") {
		t.Errorf("--sim-duration 0s: exit %d %s", code, errOut)
	}
}
