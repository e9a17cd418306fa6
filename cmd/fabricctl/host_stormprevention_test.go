package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/hostdrv"
	"github.com/fabricctl/fabricctl/intent"
)

// TestHostPauseStormPreventionCommands: policy.hostPauseStormPrevention on
// the host commands. Against a fresh mlx5 the plan writes the ethtool
// tunable after global pause and before PFC (the value is unknown: no
// source gives the firmware's default); against a backup whose NIC was off
// host diff reports the drift off -> the stall time; against a backup whose
// NIC answered EOPNOTSUPP host plan fails naming the NIC and saying it
// cannot do it.
func TestHostPauseStormPreventionCommands(t *testing.T) {
	src := strings.Replace(hostTestIntent, "  preset: roce-lossless\n", "  preset: roce-lossless\n  hostPauseStormPrevention: 250ms\n", 1)
	code, out, errOut := runHost(t, src, "host", "plan", "-f", "-", "--host", "gpu1", "--assume", "fresh", "-o", "commands")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if want := "ethtool -A ens1f0np0 rx off tx off\nethtool --set-tunable ens1f0np0 pfc-prevention-tout 250\ndcb pfc set dev ens1f0np0"; !strings.Contains(out, want) {
		t.Errorf("-o commands lacks %q:\n%s", want, out)
	}
	if code, out, _ = runHost(t, src, "host", "plan", "-f", "-", "--host", "gpu1", "--assume", "fresh"); !strings.Contains(out, "ens1f0np0/pfc-prevention-tout\n      unknown -> 250ms") {
		t.Errorf("plan --assume fresh: exit %d\n%s", code, out)
	}

	f, err := intent.Parse("fabric.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	backup := func(field string) string {
		t.Helper()
		b, err := json.Marshal(hostdrv.FreshBackup(f.Host("gpu1"), "mlx5_core"))
		if err != nil {
			t.Fatal(err)
		}
		s := strings.Replace(string(b), `"interface":"ens1f0np0"`, `"interface":"ens1f0np0",`+field, 1)
		if s == string(b) {
			t.Fatalf("test bug: no interface in %s", b)
		}
		p := filepath.Join(t.TempDir(), "backup.json")
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	code, out, errOut = runHost(t, src, "host", "diff", "-f", "-", "--host", "gpu1", "--assume", backup(`"pfcPreventionTout":0`))
	if code != ExitChanges || !strings.Contains(out, "ens1f0np0/pfc-prevention-tout\n      off -> 250ms") {
		t.Errorf("host diff against a NIC that is off: exit %d, want %d with off -> 250ms\n%s\n%s", code, ExitChanges, out, errOut)
	}
	code, out, errOut = runHost(t, src, "host", "plan", "-f", "-", "--host", "gpu1", "--assume", backup(`"pfcPreventionToutUnsupported":true`))
	if code != ExitError || !strings.Contains(out+errOut, "ens1f0np0: pfc-prevention-tout: this NIC cannot do policy.hostPauseStormPrevention") {
		t.Errorf("host plan against a NIC without prevention: exit %d, want %d naming the NIC\n%s\n%s", code, ExitError, out, errOut)
	}
}
