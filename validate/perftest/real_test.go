package perftest

import (
	"context"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fabricctl/fabricctl/internal/remote"
)

// rdmaDevices lists /sys/class/infiniband.
func rdmaDevices() []string {
	ents, err := os.ReadDir("/sys/class/infiniband")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestArgvRealPerftest hands every command line Argv builds to the real
// perftest tools: they must get past perftest's option parser (no
// "Invalid Command or flag", no "TOS only valid for rdma_cm") and stop at
// device detection. It runs only where no RDMA device exists, because with
// one the server side would start a real test and wait for a client.
func TestArgvRealPerftest(t *testing.T) {
	if _, err := exec.LookPath("ib_write_bw"); err != nil {
		t.Skip("perftest is not installed (Debian package perftest): cannot check command lines against the real tools")
	}
	if devs := rdmaDevices(); len(devs) > 0 {
		t.Skipf("RDMA devices %v present: the real tools would start tests; TestRunPairReal covers this machine", devs)
	}
	end := End{Device: "mlx5_0", Port: 1, GIDIndex: 3}
	specs := []Spec{
		{Tool: "ib_write_bw", Size: 65536, Duration: 10 * time.Second, ToS: 106},
		{Tool: "ib_send_bw", Duration: 5 * time.Second, QPs: 4, ToS: 106, RDMACM: true, CPUUtil: true},
		{Tool: "ib_read_bw", Size: 1048576, Duration: 3 * time.Second, ToS: 106},
		{Tool: "ib_write_lat", Size: 2, Iterations: 10000, ToS: 106},
		{Tool: "ib_send_lat", Iterations: 1000, ToS: 106, RDMACM: true},
		{Tool: "ib_read_lat", Iterations: 1000, ToS: -1},
	}
	for _, s := range specs {
		for _, server := range []string{"", "192.0.2.1"} {
			argv, err := s.Argv(end, 18515, server)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			res, err := remote.Local{}.Run(ctx, argv, nil)
			cancel()
			out := string(res.Stdout) + string(res.Stderr)
			for _, bad := range []string{"Invalid Command or flag", "unrecognized option", "TOS only valid", "Parser function exited"} {
				if strings.Contains(out, bad) {
					t.Errorf("%s: perftest rejected the command line (%q):\n%s", strings.Join(argv, " "), bad, out)
				}
			}
			// ib_read_bw 6.06 exits 7 after "Did not detect devices"; the others exit 1.
			if err == nil || !strings.Contains(out, "Did not detect devices") {
				t.Errorf("%s: want perftest to stop at device detection (no RDMA device here), got err %v:\n%s", strings.Join(argv, " "), err, out)
			}
		}
	}
}

// TestRunPairReal runs ib_write_bw between two processes on this host over
// its first RDMA device (loopback RDMA works on mlx5 and Soft-RoCE). Set
// FABRICCTL_RDMA_NETDEV to the device's netdev (and FABRICCTL_RDMA_DEV to pick
// a device). Without an RDMA device it checks instead that a real perftest
// server that cannot find one is reported with perftest's own message.
func TestRunPairReal(t *testing.T) {
	if _, err := exec.LookPath("ib_write_bw"); err != nil {
		t.Skip("perftest is not installed (Debian package perftest)")
	}
	e := &Engine{ReadyTimeout: 5 * time.Second, Slack: 20 * time.Second, Poll: 50 * time.Millisecond}
	spec := Spec{Tool: "ib_write_bw", Duration: 2 * time.Second, ToS: 106}
	devs := rdmaDevices()
	if len(devs) == 0 {
		srv := Side{Runner: remote.Local{Name: "gpu1"}, End: End{Device: "mlx5_0", Port: 1, GIDIndex: 3}, Addr: "127.0.0.1"}
		cli := Side{Runner: remote.Local{Name: "gpu2"}, End: End{Device: "mlx5_0", Port: 1, GIDIndex: 3}}
		_, err := e.RunPair(context.Background(), spec, srv, cli, 18515)
		if err == nil || !strings.Contains(err.Error(), "gpu1") || !strings.Contains(err.Error(), "Unable to find the Infiniband/RoCE device") {
			t.Errorf("RunPair without an RDMA device: err = %v; want perftest's device error naming the server host", err)
		}
		t.Skip("no RDMA device in /sys/class/infiniband: a real perftest run needs an RDMA NIC or Soft-RoCE (rdma link add rxe0 type rxe netdev eth0); checked the failure path only")
	}
	dev := os.Getenv("FABRICCTL_RDMA_DEV")
	if dev == "" {
		dev = devs[0]
	}
	netdev := os.Getenv("FABRICCTL_RDMA_NETDEV")
	if netdev == "" {
		t.Skipf("RDMA device %s present: set FABRICCTL_RDMA_NETDEV to its netdev to run a real perftest pair", dev)
	}
	g, err := GIDIndex(os.DirFS("/"), dev, 1, netdev, netip.Addr{})
	if err != nil {
		t.Fatal(err)
	}
	v4, _ := g.IPv4()
	end := End{Device: dev, Port: 1, GIDIndex: g.Index}
	res, err := e.RunPair(context.Background(), spec, Side{Runner: remote.Local{}, End: end, Addr: v4.String()}, Side{Runner: remote.Local{}, End: end}, 18515)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Report.Bandwidth) != 1 || res.Report.Bandwidth[0].AvgGbps <= 0 {
		t.Errorf("real run report = %+v, want one row with bandwidth", res.Report)
	}
}
