package validate

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/safchain/ethtool"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/netnstest"
	"github.com/fabricctl/fabricctl/internal/remote"
)

// lab is a real network: three host namespaces and a software switch (a
// Linux bridge in its own namespace), joined by veth pairs.
//
//	gpu1 eth0 10.99.0.1 ── swp1 ┐
//	gpu2 eth0 10.99.0.2 ── swp2 ├ br0 (namespace "switch")
//	gpu3 eth0 10.99.0.3 ── swp3 ┘
type lab struct {
	sw    *netnstest.NS
	hosts map[string]*netnstest.NS
	f     *intent.Fabric
}

func run(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
}

func newLab(t *testing.T) *lab {
	t.Helper()
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("lab: iproute2 `ip` is not installed")
	}
	sw := netnstest.New(t) // skips unless root
	l := &lab{sw: sw, hosts: map[string]*netnstest.NS{}}
	run(t, sw.Command("ip", "link", "add", "br0", "type", "bridge"))
	run(t, sw.Command("ip", "link", "set", "br0", "up"))
	policy := intent.Policy{
		MTU: 9216, HostMTU: 1500,
		Classes: []intent.Class{
			{Name: "default", Priority: 0, Default: true, Weight: 50},
			{Name: "roce", DSCP: []int{26}, Priority: 3, Lossless: true, Weight: 50},
			{Name: "cnp", DSCP: []int{48}, Priority: 6, Strict: true, CNP: true},
		},
		RoCE: intent.RoCEHost{ToS: 106, CNPDSCP: 48, CNPPriority: 6, Mode: "RoCE v2"},
	}
	l.f = &intent.Fabric{Name: "netns-lab", Policy: policy}
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("gpu%d", i)
		h := netnstest.New(t)
		l.hosts[name] = h
		port := fmt.Sprintf("swp%d", i)
		run(t, exec.Command("ip", "link", "add", "eth0", "netns", h.Name, "type", "veth", "peer", "name", port, "netns", sw.Name))
		run(t, sw.Command("ip", "link", "set", port, "master", "br0"))
		run(t, sw.Command("ip", "link", "set", port, "up"))
		addr := fmt.Sprintf("10.99.0.%d", i)
		run(t, h.Command("ip", "addr", "add", addr+"/24", "dev", "eth0"))
		run(t, h.Command("ip", "link", "set", "eth0", "up"))
		l.f.Hosts = append(l.f.Hosts, intent.Host{Name: name, Address: "local",
			NICs: []intent.NIC{{Interface: "eth0", Address: addr, Speed: 10_000_000_000}}})
	}
	// The links must carry traffic before a test measures loss on them.
	// "ip link set up" returns before the kernel activates the device: its
	// qdisc stays noop (dropping everything) and its operstate down until
	// linkwatch, a deferred kernel work item, runs; on a loaded machine
	// that took long enough for a whole first round of UDP flows to be
	// dropped ("1000 of 1000 lost"). Wait for that event on every link.
	for i := 1; i <= 3; i++ {
		waitLinkUp(t, sw, fmt.Sprintf("swp%d", i))
		waitLinkUp(t, l.hosts[fmt.Sprintf("gpu%d", i)], "eth0")
	}
	waitLinkUp(t, sw, "br0")
	// Neighbours are known up front (permanent entries): ARP resolution is
	// not what the tests measure, and a first packet waiting for an ARP
	// reply on a loaded machine drops the packets queued behind it.
	macs := map[string]string{}
	for name, h := range l.hosts {
		macs[name] = linkMAC(t, h, "eth0")
	}
	for name, h := range l.hosts {
		for other, mac := range macs {
			if other == name {
				continue
			}
			addr := "10.99.0." + strings.TrimPrefix(other, "gpu")
			run(t, h.Command("ip", "neigh", "replace", addr, "lladdr", mac, "dev", "eth0", "nud", "permanent"))
		}
	}
	return l
}

// waitLinkUp waits until dev in ns is up as the kernel sees it: operstate
// UP (or UNKNOWN, for a device without carrier reporting) and a qdisc other
// than noop. Polled, bounded generously: it is an event on a busy machine.
func waitLinkUp(t *testing.T, ns *netnstest.NS, dev string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, err := ns.Command("ip", "-o", "link", "show", "dev", dev).Output()
		if err != nil {
			t.Fatalf("ip link show %s: %v", dev, err)
		}
		line := string(out)
		if !strings.Contains(line, "qdisc noop") && (strings.Contains(line, "state UP") || strings.Contains(line, "state UNKNOWN")) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s in %s never came up: %s", dev, ns.Name, line)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// linkMAC is dev's hardware address in ns.
func linkMAC(t *testing.T, ns *netnstest.NS, dev string) string {
	t.Helper()
	out, err := ns.Command("ip", "-o", "link", "show", "dev", dev).Output()
	if err != nil {
		t.Fatalf("ip link show %s: %v", dev, err)
	}
	f := strings.Fields(string(out))
	for i, w := range f {
		if w == "link/ether" && i+1 < len(f) {
			return f[i+1]
		}
	}
	t.Fatalf("%s in %s: no link/ether address in %q", dev, ns.Name, out)
	return ""
}

// bottleneck puts a token bucket on the switch port toward host i: the
// egress queue toward the incast receiver overflows and drops.
func (l *lab) bottleneck(t *testing.T, i int) {
	t.Helper()
	if _, err := exec.LookPath("tc"); err != nil {
		t.Skip("lab: iproute2 `tc` is not installed")
	}
	run(t, l.sw.Command("tc", "qdisc", "add", "dev", fmt.Sprintf("swp%d", i), "root", "tbf", "rate", "8mbit", "burst", "10kb", "latency", "20ms"))
}

func (l *lab) exec(host string, f func() error) error {
	ns, ok := l.hosts[host]
	if !ok {
		return fmt.Errorf("lab: no host %s", host)
	}
	return ns.Do(f)
}

// nsRunner runs commands inside a host namespace (`ip netns exec NS argv`);
// a test stand-in for the SSH runner of a remote host.
type nsRunner struct {
	remote.Local
	ns string
}

func (r nsRunner) Run(ctx context.Context, argv []string, stdin io.Reader) (remote.Result, error) {
	return r.Local.Run(ctx, append([]string{"ip", "netns", "exec", r.ns}, argv...), stdin)
}

func (r nsRunner) Start(ctx context.Context, argv []string) (remote.Process, error) {
	return r.Local.Start(ctx, append([]string{"ip", "netns", "exec", r.ns}, argv...))
}

func (l *lab) runner(host string) (remote.Runner, error) {
	ns, ok := l.hosts[host]
	if !ok {
		return nil, fmt.Errorf("lab: no host %s", host)
	}
	return nsRunner{Local: remote.Local{Name: host}, ns: ns.Name}, nil
}

// fabricctlDouble links "fabricctl" to this test binary, whose TestMain
// runs UDPCommand when started under that name.
func fabricctlDouble(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "fabricctl")
	if err := os.Symlink(exe, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// bridgeQdisc is a lab counter source for the software switch: the drop
// counter of each bridge port's root qdisc (`tc -s qdisc show dev swpN`).
// A Linux bridge has one egress queue per port, so its drops are reported
// against the queue of the class under test (priority 3).
type bridgeQdisc struct {
	ns    *netnstest.NS
	ports []string
}

func (b *bridgeQdisc) Name() string { return "switch lab-bridge" }
func (b *bridgeQdisc) Kind() string { return "switch" }

var droppedRe = regexp.MustCompile(`dropped (\d+)`)

func (b *bridgeQdisc) Read(ctx context.Context) (Sample, error) {
	s := Sample{}
	for _, p := range b.ports {
		out, err := b.ns.Command("tc", "-s", "qdisc", "show", "dev", p).Output()
		if err != nil {
			return nil, fmt.Errorf("lab-bridge %s: tc -s qdisc: %w", p, err)
		}
		var drops uint64
		for _, m := range droppedRe.FindAllStringSubmatch(string(out), -1) {
			n, _ := strconv.ParseUint(m[1], 10, 64)
			drops += n
		}
		s["lab-bridge/"+p] = map[string]uint64{"q3.drops": drops}
	}
	return s, nil
}

// ethtoolIn reads driver stats with the ETHTOOL_GSTATS ioctl on a socket
// opened inside the host's namespace.
func ethtoolIn(t *testing.T, ns *netnstest.NS) *ethtool.Ethtool {
	t.Helper()
	var e *ethtool.Ethtool
	if err := ns.Do(func() error {
		var err error
		e, err = ethtool.NewEthtool()
		return err
	}); err != nil {
		t.Fatalf("ethtool socket in %s: %v", ns.Name, err)
	}
	t.Cleanup(e.Close)
	return e
}

// TestLabUDP proves the validator on a real network: without a bottleneck
// the fabric carries every flow and validation passes; with a token bucket
// on the receiver's switch port, the 2->1 incast overflows it and the
// validator reports the drops (flow loss and switch queue drops) and fails.
func TestLabUDP(t *testing.T) {
	for _, tt := range []struct {
		name       string
		bottleneck bool
		remote     bool // RemoteUDPEngine: fabricctl udp-recv/udp-send processes in the namespaces
		want       string
	}{
		{name: "clean fabric passes", want: "PASS"},
		{name: "bottleneck under incast fails", bottleneck: true, want: "FAIL"},
		{name: "remote engine, clean", remote: true, want: "PASS"},
		{name: "remote engine, bottleneck", remote: true, bottleneck: true, want: "FAIL"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := newLab(t)
			if tt.bottleneck {
				l.bottleneck(t, 1)
			}
			sources := []Source{&bridgeQdisc{ns: l.sw, ports: []string{"swp1", "swp2", "swp3"}}}
			for _, h := range l.f.Hosts {
				sources = append(sources, &EthtoolCounters{Host: h.Name, Interface: "eth0", Stats: ethtoolIn(t, l.hosts[h.Name])})
			}
			var eng Engine = &UDPEngine{Exec: l.exec, ToS: l.f.Policy.RoCE.ToS, Size: 1000, Packets: 1000, Rate: 2500, Idle: 500 * time.Millisecond}
			if tt.remote {
				eng = &RemoteUDPEngine{Runner: l.runner, Fabricctl: []string{fabricctlDouble(t)}, ToS: l.f.Policy.RoCE.ToS,
					Size: 1000, Packets: 1000, Rate: 2500, Idle: 500 * time.Millisecond}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
			defer cancel()
			// The remote engine starts two processes per flow: the incast
			// round alone keeps the test short.
			allPairs := !tt.remote
			rep, err := Run(ctx, l.f, Options{Engine: eng, Sources: sources, AllPairs: allPairs, Incast: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("checks:\n%s", checkLines(rep))
			if got := rep.Verdict(); got != tt.want {
				t.Errorf("verdict = %s, want %s; checks:\n%s", got, tt.want, checkLines(rep))
			}
			wantRounds := 4 // 3 hosts: 3 all-pairs rounds (one bye each) + incast
			if !allPairs {
				wantRounds = 1
			}
			if rep.Rounds != wantRounds {
				t.Errorf("rounds = %d, want %d", rep.Rounds, wantRounds)
			}
			var incastLost, incastSent uint64
			for _, f := range rep.Flows {
				if f.Err != "" {
					t.Errorf("flow %s->%s: %s", f.Client, f.Server, f.Err)
				}
				if f.Test == "incast" {
					incastLost += f.Lost
					incastSent += f.Sent
				}
				if f.ToSMismatch != 0 {
					t.Errorf("flow %s->%s: %d packets arrived re-marked", f.Client, f.Server, f.ToSMismatch)
				}
			}
			if incastSent != 2000 {
				t.Errorf("incast sent %d packets, want 2000", incastSent)
			}
			drops := rep.Deltas["lab-bridge/swp1"]["q3.drops"]
			if tt.bottleneck {
				if incastLost == 0 || drops == 0 {
					t.Errorf("bottleneck: incast lost %d, switch drops %d; want both > 0", incastLost, drops)
				}
				if !hasCheck(rep, "traffic.loss", Fail) || !hasCheck(rep, "switch.lossless_drops", Fail) {
					t.Errorf("bottleneck: want failed traffic.loss and switch.lossless_drops checks:\n%s", checkLines(rep))
				}
			} else if incastLost != 0 || drops != 0 {
				t.Errorf("clean: incast lost %d, switch drops %d; want 0", incastLost, drops)
			}
		})
	}
}

func hasCheck(r *Report, name string, st Status) bool {
	for _, c := range r.Checks {
		if c.Name == name && c.Status == st {
			return true
		}
	}
	return false
}

func checkLines(r *Report) string {
	var b strings.Builder
	for _, c := range r.Checks {
		fmt.Fprintf(&b, "  %-5s %s %s %s (%s)\n", c.Status, c.ID(), c.Observed, c.Limit, c.Message)
	}
	return b.String()
}
