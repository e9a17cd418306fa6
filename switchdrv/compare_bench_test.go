package switchdrv_test

import (
	"testing"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/internal/yangcheck"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/internal/jtree"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
)

// BenchmarkCompareReadBack is the read side of one switch's verify, without
// the network: the JSON an applied SR Linux twin answers the Get of the owned
// paths with (32 ports, the real compiler's intent) is decoded and compared
// with the desired state, YANG defaults filled in, as apply's verify and
// plan's diff do. The desired values are decoded too (no cache).
//
//	go test -run '^$' -bench CompareReadBack -benchmem ./switchdrv/
func BenchmarkCompareReadBack(b *testing.B) {
	f, _, eng := benchFabric(b, 1)
	p, err := eng.Plan(b.Context(), f, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := eng.Apply(b.Context(), f, p); err != nil {
		b.Fatal(err)
	}
	sw := &f.Switches[0]
	plat, err := eng.Registry.Lookup(sw.Platform)
	if err != nil {
		b.Fatal(err)
	}
	d, err := plat.Compile(f, sw)
	if err != nil {
		b.Fatal(err)
	}
	q := plat.Quirks()
	if q.Defaults, err = yangcheck.Platform(sw.Platform); err != nil {
		b.Fatal(err)
	}
	c, err := transport.Dial(b.Context(), *sw, eng.Transport)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	var paths []*gnmipb.Path
	for _, u := range append(append([]*gnmipb.Update{}, d.Replaces...), d.Updates...) {
		paths = append(paths, u.GetPath())
	}
	notes, err := c.GetConfig(b.Context(), paths)
	if err != nil {
		b.Fatal(err)
	}
	var entries []switchdrv.Entry
	size := 0
	for _, n := range notes {
		for _, u := range n.GetUpdate() {
			js := u.GetVal().GetJsonIetfVal()
			size += len(js)
			entries = append(entries, switchdrv.Entry{Path: jtree.PathKey(u.GetPath()), Exists: true, JSON: js})
		}
	}
	if len(entries) != len(paths) {
		b.Fatalf("%d values for %d paths", len(entries), len(paths))
	}
	b.ReportAllocs()
	b.SetBytes(int64(size))
	for b.Loop() {
		snap := &switchdrv.Snapshot{Switch: sw.Name, Entries: append([]switchdrv.Entry(nil), entries...)}
		changes, err := switchdrv.Compare(d, snap, q)
		if err != nil {
			b.Fatal(err)
		}
		if len(changes) != 0 {
			b.Fatalf("%d changes after apply, first %v", len(changes), changes[0])
		}
	}
}
