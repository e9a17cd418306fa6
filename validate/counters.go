package validate

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/fabricctl/fabricctl/internal/remote"
	"github.com/fabricctl/fabricctl/validate/perftest"
)

// Sample is one reading of counters: target -> counter name -> value.
// Targets are "host/rdma/<dev>/<port>", "host/ethtool/<iface>" (prefixed by
// the host name) and "<switch>/<port>" for switches.
type Sample map[string]map[string]uint64

// Source reads one set of counters.
type Source interface {
	// Name identifies the source in errors ("gpu1 rdma mlx5_0/1").
	Name() string
	// Kind is "host" or "switch".
	Kind() string
	Read(ctx context.Context) (Sample, error)
}

// ErrNotApplicable is wrapped by a source whose counters do not exist on
// its target (an interface without driver statistics, such as lo); the run
// reports it as a skipped check, not an error.
var ErrNotApplicable = errors.New("counters not available on this target")

// Delta returns after - before per target and counter. A counter that went
// down (a reset, a driver reload) is reported as its after value, a lower
// bound (Resets lists them, and Run reports them as errors); counters
// present on one side only are left out. A target read on both sides is
// always present, with an empty map when it has no counter, so the verdict
// can say its evidence is missing.
func Delta(before, after Sample) map[string]map[string]int64 {
	out := map[string]map[string]int64{}
	for t, a := range after {
		b, ok := before[t]
		if !ok {
			continue
		}
		out[t] = map[string]int64{}
		for k, av := range a {
			bv, ok := b[k]
			if !ok {
				continue
			}
			d := int64(av - bv)
			if av < bv {
				d = int64(av)
			}
			out[t][k] = d
		}
	}
	return out
}

// Resets returns, per target, the counters that went down between before
// and after ("name before->after", sorted): cleared by someone, reset by a
// driver reload, or wrapped. Their Delta is only a lower bound.
func Resets(before, after Sample) map[string][]string {
	out := map[string][]string{}
	for t, a := range after {
		b := before[t]
		for k, av := range a {
			if bv, ok := b[k]; ok && av < bv {
				out[t] = append(out[t], fmt.Sprintf("%s %d->%d", k, bv, av))
			}
		}
		sort.Strings(out[t])
	}
	return out
}

// RDMACounters reads /sys/class/infiniband/<dev>/ports/<port>/hw_counters/*.
type RDMACounters struct {
	Host   string
	Device string
	Port   int
	// FS is rooted at "/" (os.DirFS("/") locally); nil = read through Runner.
	FS     fs.FS
	Runner remote.Runner
	// SysRoot is where the runner finds sys/ ("" = "/"); tests point it at a
	// temporary tree.
	SysRoot string
}

var _ Source = (*RDMACounters)(nil)

// Name implements Source.
func (c *RDMACounters) Name() string { return fmt.Sprintf("%s rdma %s/%d", c.Host, c.Device, c.Port) }

// Kind implements Source.
func (c *RDMACounters) Kind() string { return "host" }

// Target is the sample key.
func (c *RDMACounters) Target() string { return fmt.Sprintf("%s/rdma/%s/%d", c.Host, c.Device, c.Port) }

var nameRe = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`)

// Read implements Source.
func (c *RDMACounters) Read(ctx context.Context) (Sample, error) {
	if !nameRe.MatchString(c.Device) {
		return nil, fmt.Errorf("host %s: rdma device %q is not a valid name", c.Host, c.Device)
	}
	dir := path.Join("sys/class/infiniband", c.Device, "ports", strconv.Itoa(c.Port), "hw_counters")
	fsys := c.FS
	if fsys == nil {
		if c.Runner == nil {
			return nil, fmt.Errorf("host %s: rdma counters of %s: no filesystem and no runner", c.Host, c.Device)
		}
		root := strings.TrimSuffix(c.SysRoot, "/")
		res, err := c.Runner.Run(ctx, []string{"grep", "-r", "-H", ".", root + "/" + dir}, nil)
		var ee *remote.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode == 2 && len(res.Stdout) > 0) {
			return nil, fmt.Errorf("host %s: read rdma hw_counters of %s port %d: %w", c.Host, c.Device, c.Port, err)
		}
		fsys = perftest.GrepFS(res.Stdout, root)
	}
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("host %s: read rdma hw_counters of %s port %d: %w", c.Host, c.Device, c.Port, err)
	}
	m := map[string]uint64{}
	for _, e := range ents {
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			continue
		}
		m[e.Name()] = v
	}
	return Sample{c.Target(): m}, nil
}

// StatsReader reads a netdev's driver statistics (`ethtool -S`).
// *ethtool.Ethtool of github.com/safchain/ethtool implements it.
type StatsReader interface {
	Stats(iface string) (map[string]uint64, error)
}

// EthtoolCounters reads driver statistics of one host interface: locally
// through Stats (the ETHTOOL_GSTATS ioctl), remotely by running
// `ethtool -S <iface>` through Runner.
type EthtoolCounters struct {
	Host      string
	Interface string
	Stats     StatsReader
	Runner    remote.Runner
}

var _ Source = (*EthtoolCounters)(nil)

// Name implements Source.
func (c *EthtoolCounters) Name() string { return c.Host + " ethtool " + c.Interface }

// Kind implements Source.
func (c *EthtoolCounters) Kind() string { return "host" }

// Target is the sample key.
func (c *EthtoolCounters) Target() string { return c.Host + "/ethtool/" + c.Interface }

// Read implements Source.
func (c *EthtoolCounters) Read(ctx context.Context) (Sample, error) {
	if !nameRe.MatchString(c.Interface) {
		return nil, fmt.Errorf("host %s: interface %q is not a valid name", c.Host, c.Interface)
	}
	if c.Stats != nil {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m, err := c.Stats.Stats(c.Interface)
		if errors.Is(err, syscall.EOPNOTSUPP) {
			return nil, fmt.Errorf("host %s: %s has no driver statistics: %w", c.Host, c.Interface, ErrNotApplicable)
		}
		if err != nil {
			return nil, fmt.Errorf("host %s: ethtool stats of %s: %w", c.Host, c.Interface, err)
		}
		return Sample{c.Target(): m}, nil
	}
	if c.Runner == nil {
		return nil, fmt.Errorf("host %s: ethtool stats of %s: no stats reader and no runner", c.Host, c.Interface)
	}
	res, err := c.Runner.Run(ctx, []string{"ethtool", "-S", c.Interface}, nil)
	if err != nil && strings.Contains(string(res.Stdout)+string(res.Stderr), "no stats available") {
		return nil, fmt.Errorf("host %s: %s has no driver statistics: %w", c.Host, c.Interface, ErrNotApplicable)
	}
	if err != nil {
		return nil, fmt.Errorf("host %s: ethtool -S %s: %w", c.Host, c.Interface, err)
	}
	return Sample{c.Target(): ParseEthtoolStats(res.Stdout)}, nil
}

// ParseEthtoolStats reads `ethtool -S` output ("NIC statistics:" then
// "     name: value" lines). Lines that are not "name: unsigned" are skipped.
func ParseEthtoolStats(b []byte) map[string]uint64 {
	m := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			continue
		}
		m[strings.TrimSpace(k)] = n
	}
	return m
}
