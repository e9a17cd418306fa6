package perftest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"path"
	"sort"
	"strconv"
	"strings"
	"testing/fstest"

	"github.com/fabricctl/fabricctl/internal/remote"
)

// GID is one entry of an RDMA port's GID table.
type GID struct {
	Index  int
	GID    netip.Addr // as written in sysfs (IPv6 form)
	Type   string     // "RoCE v2", "RoCE v1", "IB/RoCE v1"
	Netdev string
}

// IPv4 returns the IPv4 address of an IPv4-mapped GID.
func (g GID) IPv4() (netip.Addr, bool) {
	if g.GID.Is4In6() {
		return g.GID.Unmap(), true
	}
	return netip.Addr{}, false
}

// ErrNoGID is wrapped when no GID entry satisfies the rule.
var ErrNoGID = errors.New("no RoCE v2 IPv4 GID")

// ReadGIDs reads the GID table of dev port from sysfs under fsys, which is
// rooted at "/" (os.DirFS("/") on a live system): gids/<i>,
// gid_attrs/types/<i> and gid_attrs/ndevs/<i> of
// sys/class/infiniband/<dev>/ports/<port>. Empty (all-zero) entries and
// entries whose attributes cannot be read (the kernel returns EINVAL for
// unused slots) are skipped. The result is sorted by index.
func ReadGIDs(fsys fs.FS, dev string, port int) ([]GID, error) {
	if !devRe.MatchString(dev) {
		return nil, fmt.Errorf("rdma device %q is not a valid ib device name", dev)
	}
	base := path.Join("sys/class/infiniband", dev, "ports", strconv.Itoa(port))
	ents, err := fs.ReadDir(fsys, path.Join(base, "gids"))
	if err != nil {
		return nil, fmt.Errorf("rdma device %s port %d: read gid table: %w", dev, port, err)
	}
	var out []GID
	for _, e := range ents {
		idx, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := fs.ReadFile(fsys, path.Join(base, "gids", e.Name()))
		if err != nil {
			continue
		}
		addr, err := netip.ParseAddr(strings.TrimSpace(string(raw)))
		if err != nil || addr.IsUnspecified() {
			continue
		}
		typ, err := fs.ReadFile(fsys, path.Join(base, "gid_attrs", "types", e.Name()))
		if err != nil {
			continue
		}
		nd, _ := fs.ReadFile(fsys, path.Join(base, "gid_attrs", "ndevs", e.Name()))
		out = append(out, GID{Index: idx, GID: addr, Type: strings.TrimSpace(string(typ)), Netdev: strings.TrimSpace(string(nd))})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out, nil
}

// SelectGID applies fabricctl's GID rule, the same on every host: the
// lowest-index entry of type "RoCE v2" on netdev whose GID is IPv4-mapped
// and, when addr is valid, equal to addr. This is the index perftest needs
// in -x (and NCCL in NCCL_IB_GID_INDEX).
func SelectGID(gids []GID, netdev string, addr netip.Addr) (GID, error) {
	var seen []string
	for _, g := range gids {
		v4, ok := g.IPv4()
		if g.Type == "RoCE v2" && g.Netdev == netdev && ok && (!addr.IsValid() || v4 == addr.Unmap()) {
			return g, nil
		}
		seen = append(seen, fmt.Sprintf("%d=%s/%s/%s", g.Index, g.GID, g.Type, orDash(g.Netdev)))
	}
	want := "netdev " + netdev
	if addr.IsValid() {
		want += " address " + addr.String()
	}
	if len(seen) == 0 {
		return GID{}, fmt.Errorf("%w for %s: the gid table is empty", ErrNoGID, want)
	}
	return GID{}, fmt.Errorf("%w for %s among %s", ErrNoGID, want, strings.Join(seen, ", "))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// GIDIndex reads the GID table from fsys and applies SelectGID.
func GIDIndex(fsys fs.FS, dev string, port int, netdev string, addr netip.Addr) (GID, error) {
	gids, err := ReadGIDs(fsys, dev, port)
	if err != nil {
		return GID{}, err
	}
	g, err := SelectGID(gids, netdev, addr)
	if err != nil {
		return GID{}, fmt.Errorf("rdma device %s port %d: %w", dev, port, err)
	}
	return g, nil
}

// RemoteGIDIndex reads the GID table of a host through r with one command
// (grep -r -H . over the three sysfs directories) and applies the same rule
// as GIDIndex.
func RemoteGIDIndex(ctx context.Context, r remote.Runner, dev string, port int, netdev string, addr netip.Addr) (GID, error) {
	if !devRe.MatchString(dev) {
		return GID{}, fmt.Errorf("host %s: rdma device %q is not a valid ib device name", r.Host(), dev)
	}
	base := path.Join("/sys/class/infiniband", dev, "ports", strconv.Itoa(port))
	argv := []string{"grep", "-r", "-H", ".", base + "/gids", base + "/gid_attrs/types", base + "/gid_attrs/ndevs"}
	res, err := r.Run(ctx, argv, nil)
	// grep exits 2 when some files cannot be read (unused GID slots return
	// EINVAL); what it could read is still on stdout.
	var ee *remote.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode == 2 && len(res.Stdout) > 0) {
		return GID{}, fmt.Errorf("host %s: read gid table of %s port %d: %w", r.Host(), dev, port, err)
	}
	fsys := GrepFS(res.Stdout, "")
	g, err := GIDIndex(fsys, dev, port, netdev, addr)
	if err != nil {
		return GID{}, fmt.Errorf("host %s: %w", r.Host(), err)
	}
	return g, nil
}

// GrepFS turns the "path:content" lines of `grep -r -H . DIR...` (one line
// per one-line sysfs file) into an in-memory tree rooted at root ("" = "/"),
// so files read over a remote runner go through the same fs.FS code as a
// local os.DirFS("/"). Lines outside root are ignored. Paths must not contain
// ':' (sysfs names of ib devices and counters do not).
func GrepFS(out []byte, root string) fs.FS {
	prefix := strings.TrimSuffix(root, "/") + "/"
	m := fstest.MapFS{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		p, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || !strings.HasPrefix(p, prefix) {
			continue
		}
		m[strings.TrimPrefix(p, prefix)] = &fstest.MapFile{Data: []byte(v + "\n")}
	}
	return m
}
