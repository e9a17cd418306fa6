package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
	"github.com/fabricctl/fabricctl/validate"
)

const lab8 = "../../examples/lab8/fabric.yaml"

// TestValidateYourFabricBeforeItExists is issue 28's end-to-end test: the
// example fabric of eight switches (SR Linux, SONiC, EOS) and six hosts is
// started with `lab -f` (fresh twins, kept), applied with the user's
// unchanged intent through --lab, driven with an incast scenario (`lab
// traffic incast:5:1`), and `validate --lab` (the sim engine: the
// validation plan's flows through the configuration read back from the
// twins, their counters posted to the twins and read back over gNMI)
// passes with a switch counter row for every switch port, predicted and
// measured agreeing. Then PFC is removed from one port (leaf3 Ethernet0,
// the SONiC port of gpu3) by a direct gNMI Set, and the same validate
// fails naming that port: its lossless queue dropped, and its readback
// drifted.
func TestValidateYourFabricBeforeItExists(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lab")
	startKeptLab(t, "-f", lab8, "--fresh", "--dir", dir)
	runCLIWant(t, ExitOK, "apply", "-f", lab8, "--lab", dir, "--backup-dir", filepath.Join(dir, "backups"))
	out := runCLIWant(t, ExitOK, "lab", "traffic", "incast:5:1", "--once", "-f", lab8, "--lab", dir)
	if !strings.Contains(out, ", 0 dropped,") {
		t.Fatalf("the incast through the applied intent drops:\n%s", out)
	}
	validateJSON := func(want int, args ...string) *validate.Report {
		t.Helper()
		code, out, errOut := runCLI(t, t.Context(), append([]string{"validate", "-f", lab8, "--lab", dir, "--no-latency", "-o", "json"}, args...)...)
		if code != want {
			t.Fatalf("validate --lab: exit %d, want %d\n%s\n%s", code, want, out, errOut)
		}
		var rep validate.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return &rep
	}
	rep := validateJSON(ExitOK)
	if rep.Engine != "sim" || !strings.Contains(rep.EngineNote, "read back from the lab's 8 twins") {
		t.Errorf("engine %q: %s", rep.Engine, rep.EngineNote)
	}
	f, err := intent.Load(lab8)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]validate.Check{}
	for _, c := range rep.Checks {
		rows[c.ID()] = c
	}
	// Every switch port has its drop row filled from the twin's counters
	// (the platform's own paths, read by the code that reads switches).
	for _, sw := range f.Switches {
		for _, p := range sw.Ports {
			id := "switch.lossless_drops[" + sw.Name + "/" + p.Name + "]"
			if c := rows[id]; c.Status != validate.Pass || c.Observed != "0" {
				t.Errorf("%s: %s %q %s", id, c.Status, c.Observed, c.Message)
			}
		}
	}
	for _, id := range []string{"switch.ecn_marked", "traffic.incast_bandwidth[5->1 gpu1:ens1f0np0]", "switch.pfc_watchdog[leaf3/Ethernet0]",
		"prediction.drops", "prediction.pause_frames", "prediction.pause_frames_rx", "prediction.ecn_marks", "prediction.throughput"} {
		if c := rows[id]; c.Status != validate.Pass {
			t.Errorf("%s: %s %s %s", id, c.Status, c.Observed, c.Message)
		}
	}
	for _, r := range rep.Prediction.Rows {
		if r.Measured != nil && *r.Measured != r.Predicted {
			t.Errorf("the chain is not coherent: %s measured %v, predicted %v", r.Quantity, *r.Measured, r.Predicted)
		}
	}

	// PFC off on one port, as an operator's direct Set would leave it.
	if _, err := useLab(f, dir); err != nil {
		t.Fatal(err)
	}
	c, err := transport.Dial(context.Background(), *f.Switch("leaf3"), transport.Options{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	field := &gnmipb.Path{Origin: "sonic-db", Elem: []*gnmipb.PathElem{{Name: "CONFIG_DB"}, {Name: "localhost"}, {Name: "PORT_QOS_MAP"}, {Name: "Ethernet0"}, {Name: "pfc_enable"}}}
	if _, err := c.Set(context.Background(), &gnmipb.SetRequest{Delete: []*gnmipb.Path{field}}); err != nil {
		t.Fatalf("direct gNMI Set: %v", err)
	}
	rep = validateJSON(ExitCheckFailed, "--no-all-pairs")
	var failed []string
	for _, c := range rep.Checks {
		if c.Status == validate.Fail && c.Name == "switch.lossless_drops" {
			failed = append(failed, c.Target+" "+c.Observed)
		}
	}
	if len(failed) != 1 || !strings.HasPrefix(failed[0], "leaf3/Ethernet0 q3.drops=") {
		t.Errorf("with PFC removed from leaf3 Ethernet0, the drop rows that fail: %v; want that port alone", failed)
	}
	drift := false
	for _, c := range rep.Checks {
		drift = drift || c.Status == validate.Fail && c.Name == "readback.drift" && strings.Contains(c.Target, "switch leaf3") && strings.Contains(c.Target, "Ethernet0")
	}
	if !drift {
		t.Error("the readback does not name leaf3 Ethernet0's drifted PFC")
	}
	if r := rep.Prediction.Rows; len(r) == 0 {
		t.Error("no prediction rows")
	}
}
