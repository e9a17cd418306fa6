package validate

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/remote"
	"github.com/fabricctl/fabricctl/validate/perftest"
	"github.com/fabricctl/fabricctl/validate/udpflow"
)

// TestMain turns the test binary into fakePerftest when it runs under a
// perftest name (see fakeTools).
func TestMain(m *testing.M) {
	if strings.HasPrefix(filepath.Base(os.Args[0]), "ib_") {
		os.Exit(fakePerftest(os.Args))
	}
	// Started as "fabricctl validate udp-recv|udp-send ...": the real
	// UDPCommand, as the fabricctl binary runs it.
	if filepath.Base(os.Args[0]) == "fabricctl" && len(os.Args) > 2 && os.Args[1] == "validate" {
		if err := UDPCommand(context.Background(), os.Args[2], os.Args[3:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakePerftest is a TEST DOUBLE of ib_write_bw / ib_write_lat: it logs its
// argv, makes perftest's TCP control connection on -p (server listens, client
// connects to the address argument) and prints a canned result table in
// perftest's format. It does no RDMA.
func fakePerftest(argv []string) int {
	if p := os.Getenv("FAKE_ARGV_LOG"); p != "" {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintln(f, filepath.Base(argv[0])+" "+strings.Join(argv[1:], " "))
			f.Close()
		}
	}
	port, server := "", ""
	for i := 1; i < len(argv); i++ {
		switch argv[i] {
		case "-d", "-i", "-x", "-s", "-D", "-n", "-q", "-T", "--tclass":
			i++
		case "-p":
			port = argv[i+1]
			i++
		default:
			if !strings.HasPrefix(argv[i], "-") {
				server = argv[i]
			}
		}
	}
	if server == "" {
		ln, err := net.Listen("tcp", "127.0.0.1:"+port)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println("* Waiting for client to connect... *")
		c, err := ln.Accept()
		if err != nil {
			return 1
		}
		_, _ = io.Copy(io.Discard, c)
		return 0
	}
	c, err := net.Dial("tcp", net.JoinHostPort(server, port))
	if err != nil {
		fmt.Fprintln(os.Stderr, " Unable to init the socket connection")
		return 1
	}
	c.Close()
	const rl = "---------------------------------------------------------------------------------------"
	if strings.HasSuffix(argv[0], "_lat") {
		fmt.Println(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] ")
		fmt.Println(" 2       1000          0.76           0.95         0.78     \t       0.78        \t0.01   \t\t0.83    \t\t0.95   ")
	} else {
		fmt.Println(" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]")
		fmt.Println(" 65536      185000           0.00               97.50  \t\t   0.185966")
	}
	fmt.Println(rl)
	return 0
}

func fakeTools(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tool := range []string{"ib_write_bw", "ib_write_lat"} {
		if err := os.Symlink(exe, filepath.Join(dir, tool)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// freePorts finds n consecutive free TCP ports on loopback.
func freePorts(t *testing.T, n int) int {
	t.Helper()
	for base := 42000 + os.Getpid()%2000; base < 60000; base += n {
		ok := true
		var ls []net.Listener
		for i := 0; i < n && ok; i++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", base+i))
			if err != nil {
				ok = false
				continue
			}
			ls = append(ls, l)
		}
		for _, l := range ls {
			l.Close()
		}
		if ok {
			return base
		}
	}
	t.Fatal("no free ports")
	return 0
}

// TestRDMAEngine runs one round of two concurrent pairs through the real
// perftest pair runner and local processes (perftest itself is the test
// double above): every pair gets its own -p, each side its own host's GID
// index, the ToS goes in --tclass, and the parsed bandwidth and latency
// reach the flow results.
func TestRDMAEngine(t *testing.T) {
	logf := filepath.Join(t.TempDir(), "argv.log")
	t.Setenv("FAKE_ARGV_LOG", logf)
	base := freePorts(t, 2)
	gidOf := map[string]int{"gpu1": 3, "gpu2": 5, "gpu3": 7, "gpu4": 9}
	nic := intent.NIC{Interface: "ens1f0np0", RDMADevice: "mlx5_0", RDMAPort: 1, Speed: 100_000_000_000}
	ep := func(h string) Endpoint { return Endpoint{Host: h, NIC: nic} }
	eng := &RDMAEngine{
		Perftest: &perftest.Engine{ToolDir: fakeTools(t), ReadyTimeout: 5 * time.Second, Slack: 10 * time.Second, Poll: 20 * time.Millisecond},
		Runner:   func(h string) (remote.Runner, error) { return remote.Local{Name: h}, nil },
		GID: func(_ context.Context, r remote.Runner, dev string, port int, netdev string, _ netip.Addr) (perftest.GID, error) {
			// Every host's RoCE v2 GID maps 127.0.0.1 here, so servers are reached on loopback.
			return perftest.GID{Index: gidOf[r.Host()], GID: netip.MustParseAddr("::ffff:127.0.0.1"), Type: "RoCE v2", Netdev: netdev}, nil
		},
		ToS: 106, Duration: time.Second, Iterations: 1000, Size: 65536, BasePort: base,
	}
	flows := []Flow{
		{Test: "all-pairs", Round: 1, Client: ep("gpu1"), Server: ep("gpu2")},
		{Test: "all-pairs", Round: 1, Client: ep("gpu3"), Server: ep("gpu4")},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	noRDMA := eng.Run(ctx, KindBandwidth, []Flow{{Test: "all-pairs", Round: 1, Client: Endpoint{Host: "gpu1", NIC: intent.NIC{Interface: "eth0"}}, Server: ep("gpu2")}})
	if !strings.Contains(noRDMA[0].Err, "no RDMA device") {
		t.Errorf("NIC without rdma device: err %q, want it named", noRDMA[0].Err)
	}
	got := eng.Run(ctx, KindBandwidth, flows)
	for _, r := range got {
		if r.Err != "" {
			t.Fatalf("flow %s->%s: %s", r.Client, r.Server, r.Err)
		}
		if !strings.HasPrefix(r.Command, "ib_write_bw ") && !strings.Contains(r.Command, "/ib_write_bw ") {
			t.Errorf("flow %s->%s: command %q, want the ib_write_bw client argv", r.Client, r.Server, r.Command)
		}
		if r.Gbps != 97.5 || r.LineGbps != 100 {
			t.Errorf("flow %s->%s: %.2f of %.0f Gb/s, want 97.50 of 100", r.Client, r.Server, r.Gbps, r.LineGbps)
		}
	}
	lat := eng.Run(ctx, KindLatency, flows[:1])
	if lat[0].Err != "" || lat[0].P99 != 830*time.Nanosecond || lat[0].P999 != 950*time.Nanosecond {
		t.Errorf("latency flow = %+v, want p99 830ns p99.9 950ns", lat[0])
	}

	b, err := os.ReadFile(logf)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	sort.Strings(lines)
	p0, p1 := fmt.Sprint(base), fmt.Sprint(base+1)
	want := []string{
		"ib_write_bw -d mlx5_0 -i 1 -x 3 -F --report_gbits -p " + p0 + " -s 65536 -D 1 --tclass 106 127.0.0.1",
		"ib_write_bw -d mlx5_0 -i 1 -x 5 -F --report_gbits -p " + p0 + " -s 65536 -D 1 --tclass 106",
		"ib_write_bw -d mlx5_0 -i 1 -x 7 -F --report_gbits -p " + p1 + " -s 65536 -D 1 --tclass 106 127.0.0.1",
		"ib_write_bw -d mlx5_0 -i 1 -x 9 -F --report_gbits -p " + p1 + " -s 65536 -D 1 --tclass 106",
		"ib_write_lat -d mlx5_0 -i 1 -x 3 -F --report_gbits -p " + p0 + " -n 1000 --tclass 106 127.0.0.1",
		"ib_write_lat -d mlx5_0 -i 1 -x 5 -F --report_gbits -p " + p0 + " -n 1000 --tclass 106",
	}
	sort.Strings(want)
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("perftest command lines mismatch (-want +got):\n%s", diff)
	}
}

// TestFillUDP: loss is counted against what the sender sent; CE-marked
// packets (ToS 107 for 106) keep their DSCP and are not re-marked; ToS 0
// is.
func TestFillUDP(t *testing.T) {
	r := FlowResult{ToS: 106}
	fillUDP(&r, udpflow.SendStats{Flow: 2, Sent: 100}, []udpflow.FlowStats{
		{Flow: 1, Unique: 5},
		{Flow: 2, Received: 99, Unique: 97, Duplicates: 2, Reordered: 3, SocketDrops: 1, ToS: map[uint8]uint64{106: 90, 107: 5, 0: 4}, P99: time.Millisecond},
	}, 2, 106)
	want := FlowResult{ToS: 106, Sent: 100, Received: 99, Lost: 3, Duplicates: 2, Reordered: 3, SocketDrops: 1, ToSMismatch: 4, ECNMarked: 5, P99: time.Millisecond}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("fillUDP mismatch (-want +got):\n%s", diff)
	}
	// ECN bleached on the way (ECT(0) 106 -> Not-ECT 104): the DSCP survived,
	// but no switch can mark these packets CE any more (WRED drops them
	// instead), so they count as re-marked. ECT -> CE (107) is what a
	// congested queue does and is not.
	r = FlowResult{ToS: 106}
	fillUDP(&r, udpflow.SendStats{Flow: 1, Sent: 10}, []udpflow.FlowStats{
		{Flow: 1, Received: 10, Unique: 10, ToS: map[uint8]uint64{104: 6, 107: 3, 106: 1}},
	}, 1, 106)
	if r.ToSMismatch != 6 || r.ECNMarked != 3 {
		t.Errorf("ECN bleached: tosMismatch %d ecnMarked %d, want 6 and 3", r.ToSMismatch, r.ECNMarked)
	}
	// Sent Not-ECT (ToS 104): arriving as 104 is intact.
	r = FlowResult{ToS: 104}
	fillUDP(&r, udpflow.SendStats{Flow: 1, Sent: 4}, []udpflow.FlowStats{
		{Flow: 1, Received: 4, Unique: 4, ToS: map[uint8]uint64{104: 4}},
	}, 1, 104)
	if r.ToSMismatch != 0 {
		t.Errorf("Not-ECT kept: tosMismatch %d, want 0", r.ToSMismatch)
	}
	// Nothing arrived: everything sent is lost.
	r = FlowResult{ToS: 106}
	fillUDP(&r, udpflow.SendStats{Flow: 3, Sent: 50}, nil, 3, 106)
	if r.Lost != 50 {
		t.Errorf("no receiver stats: lost %d, want 50", r.Lost)
	}
}

// TestRDMASpecDuration: perftest's -D takes whole seconds. An unset duration
// is the 10s default; a shorter one than a second (the intent allows 500ms)
// is perftest's shortest run, not twenty times what was asked.
func TestRDMASpecDuration(t *testing.T) {
	for _, tt := range []struct {
		in, want time.Duration
	}{
		{0, 10 * time.Second},
		{500 * time.Millisecond, time.Second},
		{time.Second, time.Second},
		{2500 * time.Millisecond, 2 * time.Second},
		{30 * time.Second, 30 * time.Second},
	} {
		if got := (&RDMAEngine{Duration: tt.in}).Spec(KindBandwidth).Duration; got != tt.want {
			t.Errorf("Duration %v: perftest -D %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestUDPEngineSlowSender: a flow paced slower than the receiver's idle
// (--udp-rate 5 with a 100ms idle: a packet every 200ms) is a sender that is
// still sending, not one that went quiet. The receiver must keep counting
// until the sender is done; a clean loopback loses nothing.
func TestUDPEngineSlowSender(t *testing.T) {
	ep := func(host string) Endpoint {
		return Endpoint{Host: host, NIC: intent.NIC{Interface: "lo", Address: "127.0.0.1"}}
	}
	e := &UDPEngine{ToS: 106, Size: 64, Packets: 4, Rate: 5, Idle: 100 * time.Millisecond, BasePort: freePorts(t, 1)}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got := e.Run(ctx, KindBandwidth, []Flow{{Test: "all-pairs", Round: 1, Client: ep("a"), Server: ep("b")}})
	if len(got) != 1 || got[0].Err != "" {
		t.Fatalf("flows = %+v, want one flow without error", got)
	}
	if got[0].Sent != 4 || got[0].Lost != 0 {
		t.Errorf("sent %d, lost %d; want 4 sent and none lost on loopback", got[0].Sent, got[0].Lost)
	}
}

// TestRemoteUDPEngineSlowSender: the same slow flow through `fabricctl
// validate udp-recv|udp-send` processes (here local ones): the receiver
// process cannot see its sender, so its idle must outlast the gap between
// two paced packets.
func TestRemoteUDPEngineSlowSender(t *testing.T) {
	ep := func(host string) Endpoint {
		return Endpoint{Host: host, NIC: intent.NIC{Interface: "lo", Address: "127.0.0.1"}}
	}
	e := &RemoteUDPEngine{Runner: func(h string) (remote.Runner, error) { return remote.Local{Name: h}, nil },
		Fabricctl: []string{fabricctlDouble(t)}, ToS: 106, Size: 64, Packets: 4, Rate: 5, Idle: 100 * time.Millisecond, BasePort: freePorts(t, 1)}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got := e.Run(ctx, KindBandwidth, []Flow{{Test: "all-pairs", Round: 1, Client: ep("a"), Server: ep("b")}})
	if len(got) != 1 || got[0].Err != "" {
		t.Fatalf("flows = %+v, want one flow without error", got)
	}
	if got[0].Sent != 4 || got[0].Lost != 0 {
		t.Errorf("sent %d, lost %d; want 4 sent and none lost on loopback", got[0].Sent, got[0].Lost)
	}
}
