package hostdrv

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/netnstest"
)

const benchNICs = 8

func benchIntent(b *testing.B) (*intent.Fabric, *intent.Host, []string) {
	var nics strings.Builder
	var ifs []string
	for i := range benchNICs {
		ifn := fmt.Sprintf("ens%df0np0", i+1)
		ifs = append(ifs, ifn)
		fmt.Fprintf(&nics, "        - {interface: %s, rdma: mlx5_%d, speed: 400G, cable: 3m}\n", ifn, i)
	}
	src := strings.SplitAfter(testIntent, "      nics:\n")[0] + nics.String()
	f, err := intent.Parse("bench.yaml", []byte(src))
	if err != nil {
		b.Fatal(err)
	}
	return f, f.Host("gpu1"), ifs
}

// BenchmarkPlanApply8 is plan + apply + read-back of a fresh host with 8
// mlx5 RoCE interfaces: temp sysfs/configfs tree with ECN files, and the
// kernel test double (which encodes and parses every dcbnl message).
func BenchmarkPlanApply8(b *testing.B) {
	f, h, ifs := benchIntent(b)
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		root := mlx5Tree(b, treeOpts{ecn: "sysfs", configfs: true, memory: true}, ifs...)
		d := &Driver{Kernel: newFakeKernel(ifs...), Files: &countingFiles{DirFiles: NewDirFiles(root)}}
		b.StartTimer()
		p, err := d.Plan(ctx, f, h)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := d.Apply(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlanInSync8 is the steady state of `host apply --watch`: a host
// with 8 interfaces already in sync is observed and nothing is written.
func BenchmarkPlanInSync8(b *testing.B) {
	f, h, ifs := benchIntent(b)
	ctx := context.Background()
	root := mlx5Tree(b, treeOpts{ecn: "sysfs", configfs: true, memory: true}, ifs...)
	d := &Driver{Kernel: newFakeKernel(ifs...), Files: &countingFiles{DirFiles: NewDirFiles(root)}}
	p, err := d.Plan(ctx, f, h)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := d.Apply(ctx, p); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		p, err := d.Plan(ctx, f, h)
		if err != nil || len(p.Steps) != 0 {
			b.Fatalf("in-sync plan: %v, %d steps", err, len(p.Steps))
		}
	}
}

// BenchmarkSpawnTools8 is the shell-out baseline: the same writes for 8
// interfaces done by spawning processes, 13 per NIC: ip link, dcb
// dcbx/app/pfc/ets, ethtool -A, and a shell for each of the 7 configfs/sysfs
// lines (mkdir, ToS, mode, 2 ECN enables, CNP DSCP and priority; they write to
// /dev/null here). It runs on veths in a private netns where dcb fails fast
// with EOPNOTSUPP, so it is process start-up cost only: a real mlx5 host adds
// the driver's work, and mlnx_qos (Python) costs far more per call.
func BenchmarkSpawnTools8(b *testing.B) {
	for _, bin := range []string{"ip", "dcb"} {
		if _, err := exec.LookPath(bin); err != nil {
			b.Skipf("%s not installed", bin)
		}
	}
	ns := netnstest.New(b)
	var cmds [][]string
	for i := range benchNICs {
		ifn := fmt.Sprintf("ens%df0np0", i+1)
		ns.Veth(b, ifn, fmt.Sprintf("peer%d", i))
		cmds = append(cmds,
			[]string{"ip", "link", "set", "dev", ifn, "mtu", "9000"},
			[]string{"dcb", "dcbx", "set", "dev", ifn, "host", "ieee"},
			[]string{"dcb", "app", "add", "dev", ifn, "dscp-prio", "26:3", "48:6"},
			[]string{"dcb", "pfc", "set", "dev", ifn, "prio-pfc", "3:on", "delay", "3"},
			[]string{"dcb", "ets", "set", "dev", ifn, "prio-tc", "3:3", "6:6", "tc-tsa", "6:strict", "tc-bw", "0:50", "3:50"},
			[]string{"ethtool", "-A", ifn, "rx", "off", "tx", "off"})
		for range 7 {
			cmds = append(cmds, []string{"sh", "-c", "echo 106 > /dev/null"})
		}
	}
	for b.Loop() {
		err := ns.Do(func() error {
			for _, c := range cmds {
				_ = exec.Command(c[0], c[1:]...).Run() // dcb/ethtool fail on veth; the spawn is what is measured
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
