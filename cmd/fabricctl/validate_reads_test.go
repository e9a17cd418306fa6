package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/applied"
	"github.com/fabricctl/fabricctl/internal/labctl"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
	"github.com/fabricctl/fabricctl/validate"
)

// readsFabric is three switches (SR Linux, SONiC, EOS) and three hosts on
// this machine's loopback (127.0.0.1-3: the udp engine runs here, no
// root), linked so that the prediction runs on the intent's own topology.
const readsFabric = `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: reads}
policy: {preset: roce-lossless}
validation: {minBandwidth: 1%}
inventory:
  switches:
    - name: leaf1
      platform: srlinux
      address: "192.0.2.1:57400"
      portDefaults: {speed: 100G, cable: 3m, mtu: 9214}
      ports:
        - name: ethernet-1/{1..2}
    - name: leaf2
      platform: sonic
      address: "192.0.2.2:8080"
      portDefaults: {speed: 100G, cable: 3m, mtu: 9214}
      ports:
        - name: Ethernet{0..4..4}
    - name: spine1
      platform: eos
      address: "192.0.2.3:6030"
      portDefaults: {speed: 100G, cable: 3m, mtu: 9214}
      ports:
        - name: Ethernet{1..3}/1
  hosts:
    - name: h{1..3}
      address: local
      nics:
        - {interface: lo, address: "127.0.0.{1..3}", speed: 100G}
  links:
    - ["h1:lo", "leaf1:ethernet-1/1"]
    - ["h2:lo", "leaf2:Ethernet0"]
    - ["h3:lo", "spine1:Ethernet3/1"]
    - ["leaf1:ethernet-1/2", "spine1:Ethernet1/1"]
    - ["leaf2:Ethernet4", "spine1:Ethernet2/1"]
`

// TestValidateReadsEachSwitchOnce: a validate run reads each switch's
// configuration once, and that one read serves both the readback (the
// plan against the intent) and the prediction (the simulator on the
// configuration read back, internal/applied): the Get requests each twin
// receives in a whole run are those of the readback alone
// (--no-prediction), with the prediction on the configuration read back
// from the switches. So for the udp engine, and for the sim engine on a
// lab, where the simulator's traffic itself runs on what was read. The
// counters' reads (Subscribe ONCE, before and after the traffic) are no
// Gets and stay.
func TestValidateReadsEachSwitchOnce(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "fabric.yaml")
	if err := os.WriteFile(file, []byte(readsFabric), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := intent.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := newRegistry()
	if err != nil {
		t.Fatal(err)
	}
	labDir := filepath.Join(dir, "lab")
	if err := os.MkdirAll(labDir, 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := startLabFor(labDir, reg, f, labProfiles{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.close)
	// The sim engine posts its counters through the control socket, as a
	// kept lab serves it.
	srv, err := labctl.Serve(labDir, labctl.NewLab(l.twins))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	runCLIWant(t, ExitOK, "apply", "-f", file, "--lab", labDir, "--backup-dir", filepath.Join(dir, "backups"))

	// gets runs validate and returns the Gets each twin received, and
	// the report.
	gets := func(args ...string) (map[string]int, *validate.Report) {
		t.Helper()
		before := map[string]int{}
		for _, tw := range l.twins {
			before[tw.Name()] = tw.Gets()
		}
		code, out, errOut := runCLI(t, t.Context(), append([]string{"validate", "-f", file, "--lab", labDir, "-o", "json",
			"--no-latency", "--no-all-pairs", "--sim-duration", "200us"}, args...)...)
		if code != ExitOK && code != ExitCheckFailed && code != ExitError {
			t.Fatalf("validate %s: exit %d\n%s\n%s", strings.Join(args, " "), code, out, errOut)
		}
		var rep validate.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("validate %s: %v\n%s\n%s", strings.Join(args, " "), err, out, errOut)
		}
		n := map[string]int{}
		for _, tw := range l.twins {
			n[tw.Name()] = tw.Gets() - before[tw.Name()]
		}
		return n, &rep
	}
	// One read: the readback alone (no prediction) with the udp engine.
	udp := []string{"--engine", "udp", "--udp-packets", "50", "--udp-rate", "5000"}
	one, _ := gets(append(udp, "--no-prediction")...)
	for name, n := range one {
		if n == 0 {
			t.Fatalf("switch %s: validate --no-prediction sent no Get: nothing was read back", name)
		}
	}
	for _, tc := range []struct {
		name   string
		args   []string
		source string
	}{
		{"udp engine", udp, "the configuration read back from the 3 switches"},
		{"sim engine on a lab", nil, "the configuration read back from the lab's 3 twins"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, rep := gets(tc.args...)
			if diff := cmp.Diff(one, got); diff != "" {
				t.Errorf("Gets per switch of a whole validate run differ from the readback's alone (-readback alone +whole run):\n%s", diff)
			}
			if rep.Prediction == nil || rep.Prediction.Source != tc.source {
				t.Errorf("the prediction did not run on the switches' read-back configuration: %+v", rep.Prediction)
			}
			for _, c := range rep.Checks {
				if c.Phase == validate.PhaseReadback && c.Target != "" && strings.HasPrefix(c.Target, "switch ") && c.Status != validate.Pass {
					t.Errorf("readback %s: %s %s", c.Target, c.Status, c.Message)
				}
			}
		})
	}

	// What the plan kept decodes to the configuration a read of its own
	// gives (the plan fills YANG defaults into its trees as it compares:
	// not into the kept ones).
	t.Run("kept read decodes as a fresh one", func(t *testing.T) {
		read := func(keep bool) map[string]*applied.Switch {
			eng := &switchdrv.Engine{Registry: reg, Transport: transport.Options{Timeout: time.Minute}, Defaults: yangDefaults, KeepReadBacks: keep}
			defer eng.Close()
			if keep {
				p, err := eng.Plan(t.Context(), f, nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := switchdrv.ReadErrors(p); err != nil {
					t.Fatal(err)
				}
			}
			before := map[string]int{}
			for _, tw := range l.twins {
				before[tw.Name()] = tw.Gets()
			}
			sws, err := applied.Read(t.Context(), f, eng)
			if err != nil {
				t.Fatal(err)
			}
			for _, tw := range l.twins {
				if n := tw.Gets() - before[tw.Name()]; keep && n != 0 {
					t.Errorf("switch %s: applied.Read after a plan that kept its reads sent %d Gets, want none", tw.Name(), n)
				}
			}
			return sws
		}
		fresh, kept := read(false), read(true)
		if diff := cmp.Diff(fresh, kept); diff != "" {
			t.Errorf("configuration decoded from the plan's read differs from a read of its own (-own read +plan's):\n%s", diff)
		}
	})
}
