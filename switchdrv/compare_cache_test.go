package switchdrv

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/switchdrv/internal/jtree"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
)

// TestSortByPath holds sortByPath equal to slices.SortStableFunc with
// byPath, its referee, on random changes with repeated paths (the order
// of one path's changes is kept) and on sorted and reversed input.
func TestSortByPath(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	paths := []string{"/a", "/a/b", "/b", "/qos/interfaces/interface[interface-id=ethernet-1/1]", "/qos/interfaces/interface[interface-id=ethernet-1/10]", "/interface[name=ethernet-1/2]/mtu", ""}
	for n := range 200 {
		cs := make([]plan.Change, n%40)
		for i := range cs {
			cs[i] = plan.Change{Action: plan.Create, Path: paths[r.IntN(len(paths))], After: string(rune('a' + i))}
		}
		switch n % 5 {
		case 0:
			slices.SortStableFunc(cs, byPath)
		case 1:
			slices.SortStableFunc(cs, byPath)
			slices.Reverse(cs)
		}
		want := slices.Clone(cs)
		slices.SortStableFunc(want, byPath)
		sortByPath(cs)
		if d := cmp.Diff(want, cs); d != "" {
			t.Fatalf("case %d: sortByPath differs from a stable sort (-want +got):\n%s", n, d)
		}
	}
}

// TestDecodedByPosition: the values plan decoded serve compare by
// position only while the update at that position is the same one; with
// the updates of the Desired reordered, compare decodes each value anew
// and finds what it finds without a cache. ownedPaths takes the keys of
// the values from the cache and gives the keys PathKey gives.
func TestDecodedByPosition(t *testing.T) {
	var d Desired
	for _, n := range []string{"a", "b", "c"} {
		p, err := transport.ParsePath("/qos/queues/queue[name=" + n + "]")
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Update(map[string]any{"name": n, "v": len(n)}, p.GetElem()...); err != nil {
			t.Fatal(err)
		}
	}
	mtu, _ := transport.ParsePath("/interface[name=e1]/mtu")
	d.Updates = append(d.Updates, &gnmipb.Update{Path: mtu, Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: []byte("9000")}}})
	values := d.decodedValues()
	for i, u := range values.ups {
		if !values.vals[i].ready || values.vals[i].key != jtree.PathKey(u.GetPath()) {
			t.Fatalf("value %d (%s): ready %v, key %q", i, jtree.PathKey(u.GetPath()), values.vals[i].ready, values.vals[i].key)
		}
	}
	paths, keys := ownedPaths(d.SetRequest(), values)
	_, want := ownedPaths(d.SetRequest(), nil)
	if d := cmp.Diff(want, keys); d != "" || len(paths) != 4 {
		t.Fatalf("ownedPaths with the cache: %d paths, keys (-without +with):\n%s", len(paths), d)
	}
	// The switch holds every value as compiled.
	snap := &Snapshot{}
	for i, k := range keys {
		snap.Entries = append(snap.Entries, Entry{Path: k, Exists: true, JSON: values.vals[i].raw})
	}
	// Other updates at the cached positions: the same ones reversed, and
	// queue b with another value. No value may come from the cache of
	// another update.
	moved := &Desired{Switch: "s", Updates: slices.Clone(d.Updates)}
	slices.Reverse(moved.Updates)
	bPath, _ := transport.ParsePath("/qos/queues/queue[name=b]")
	var other Desired
	if err := other.Update(map[string]any{"name": "b", "v": 9}, bPath.GetElem()...); err != nil {
		t.Fatal(err)
	}
	moved.Updates[1] = other.Updates[0] // where d's b is cached
	got, err := compare(moved, snap, Quirks{}, values)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := compare(moved, snap, Quirks{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(plain, got); d != "" || len(got) != 1 {
		t.Fatalf("%d changes; with the cache of other updates (-without +with):\n%s", len(got), d)
	}
	if c := newDecoded(moved); c.vals[0].ready {
		t.Fatal("a new cache holds a value before its first use")
	}
}
