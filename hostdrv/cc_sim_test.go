package hostdrv_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/hostdrv"
	"github.com/fabricctl/fabricctl/internal/dcqcntest"
	"github.com/fabricctl/fabricctl/internal/sim"
)

// simNIC is a simulator parameter back in the NIC's unit, by its
// policy.dcqcn key: the inverse of sim.DCQCNFromPolicy, written out here
// so the test compares two independent readings.
func simNIC(d sim.DCQCN, key string) int64 {
	us := func(t sim.Time) int64 { return int64(t / sim.Microsecond) }
	b := func(v bool) int64 {
		if v {
			return 1
		}
		return 0
	}
	switch key {
	case "rateReduceMonitorPeriod":
		return us(d.RateReducePeriod)
	case "timeReset":
		return us(d.TimeReset)
	case "byteReset":
		return d.ByteReset
	case "threshold":
		return int64(d.Threshold)
	case "aiRate":
		return int64(d.AIRate / 1e6)
	case "haiRate":
		return int64(d.HAIRate / 1e6)
	case "minDecreaseFactor":
		return int64(d.MinDecFactor*100 + 0.5)
	case "minRate":
		return int64(d.MinRate / 1e6)
	case "rateOnFirstCNP":
		return int64(d.RateOnFirstCNP / 1e6)
	case "g":
		return 1024 - int64(d.G*1024+0.5)
	case "alphaUpdatePeriod":
		return us(d.AlphaPeriod)
	case "initialAlpha":
		return int64(d.InitialAlpha*1024 + 0.5)
	case "clampTargetRate":
		return b(d.ClampTarget)
	case "clampTargetRateAfterTimeIncrease":
		return b(d.ClampTargetAfterTimeInc)
	case "minTimeBetweenCNPs":
		return us(d.MinTimeBetweenCNP)
	}
	return -1
}

// TestHostGetsWhatSimulateRuns (issue 31 item 3: "simulate uses the same
// values the hosts get"): every policy.dcqcn value host apply writes to
// the mlx5 test double, read back from its control file, is the value
// simulate runs with (sim.DCQCNFromPolicy), converted back to the NIC's
// unit independently of both.
func TestHostGetsWhatSimulateRuns(t *testing.T) {
	ctx := context.Background()
	d, root := hostdrv.NewRig(t, "debugfs")
	f, h := hostdrv.LoadIntent(t, hostdrv.WithDCQCN)
	p, err := d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Apply(ctx, p); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	dc := sim.DCQCNFromPolicy(&f.Policy)
	n := 0
	for _, v := range f.Policy.DCQCN.Values() {
		b, err := os.ReadFile(filepath.Join(root, "sys/kernel/debug/mlx5/0000:3b:00.0/cc_params", v.MLX5))
		if err != nil {
			t.Fatal(err)
		}
		got := strings.TrimSpace(string(b))
		if s := simNIC(dc, v.Key); strconv.FormatInt(s, 10) != got {
			t.Errorf("policy.dcqcn.%s: the host's %s is %s, simulate runs %d", v.Key, v.MLX5, got, s)
		}
		n++
	}
	if n != dcqcntest.Fields {
		t.Errorf("compared %d values, want %d (every field but gd, which the simulator does not model)", n, dcqcntest.Fields)
	}
}
