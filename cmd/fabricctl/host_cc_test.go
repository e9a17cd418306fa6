package main

import (
	"strings"
	"testing"
)

// hostCCIntent is a host whose policy sets congestion control
// (policy.dcqcn) and ConnectX's lossy-RoCE accelerations.
const hostCCIntent = `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: pod1}
policy:
  preset: roce-lossless
  dcqcn:
    rateReduceMonitorPeriod: 50us
    timeReset: 55us
    byteReset: 10MB
    aiRate: 40M
    minDecreaseFactor: 25%
    g: 1020
    clampTargetRate: true
    minTimeBetweenCNPs: 8us
  nicAccelerations: {adaptiveRetransmission: true, slowRestart: true, selectiveRepeat: false}
inventory:
  hosts:
    - name: gpu1
      address: local
      nics:
        - {interface: ens1f0np0, rdma: RDMA0, speed: 400G, cable: 3m, address: 10.0.0.1}
`

// TestHostPlanAssumeCongestionControl (issue 31 item 3): host plan --assume
// shows all of host congestion control without a NIC: on a fresh mlx5
// every policy.dcqcn write to debugfs cc_params and the mlxreg ROCE_ACCL
// command as a manual step; on a fresh bnxt_en the bnxt_re configfs cc
// writes with their apply, and what bnxt_re has no equivalent of.
func TestHostPlanAssumeCongestionControl(t *testing.T) {
	var got strings.Builder
	for _, tc := range []struct{ assume, rdma, output string }{
		{"fresh", "mlx5_0", "commands"},
		{"fresh:bnxt_en", "bnxt_re0", "text"},
	} {
		code, out, errOut := runHost(t, strings.Replace(hostCCIntent, "RDMA0", tc.rdma, 1),
			"host", "plan", "-f", "-", "--host", "gpu1", "--assume", tc.assume, "-o", tc.output)
		if code != ExitOK {
			t.Fatalf("--assume %s: exit %d: %s", tc.assume, code, errOut)
		}
		got.WriteString("=== host plan --assume " + tc.assume + " -o " + tc.output + "\n" + out)
	}
	checkGolden(t, "testdata", "host_plan_assume_cc.golden", got.String())
}

// TestCheckRefusesDCQCNOutOfRange: a policy.dcqcn value outside what the
// NICs' drivers accept fails check with its file:line.
func TestCheckRefusesDCQCNOutOfRange(t *testing.T) {
	f := writeIntent(t, strings.Replace(hostCCIntent, "timeReset: 55us", "timeReset: 40ms", 1))
	out, errOut, code := runFabricctl(t, "check", "-f", f)
	if code != ExitCheckFailed || !strings.Contains(out+errOut, f+":8:16: error FC100: policy.dcqcn.timeReset: 40000us is out of range 1us-32767us") {
		t.Errorf("check: exit %d\n%s%s", code, out, errOut)
	}
}
