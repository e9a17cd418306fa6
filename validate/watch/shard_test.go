package watch_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/validate/watch"
)

func TestParseShard(t *testing.T) {
	for in, want := range map[string]watch.Shard{
		"0/1": {0, 1}, "2/3": {2, 3}, " 1 / 4": {1, 4},
		// A StatefulSet pod's name: its ordinal.
		"fabricctl-watch-2/3": {2, 3}, "watch-0/2": {0, 2},
	} {
		if got, err := watch.ParseShard(in); err != nil || got != want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "3", "3/3", "-1/3", "1/0", "a/3", "1/b", "fabricctl-watch/3", "1/3/4"} {
		if got, err := watch.ParseShard(in); err == nil {
			t.Errorf("ParseShard(%q) = %v, want an error", in, got)
		}
	}
}

func names(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("leaf%d", i+1)
	}
	return out
}

// TestShardPartitionAndBalance: every switch is on exactly one of the
// shards, and 2,000 switches spread evenly (each of 3 shards within 10 %
// of a third).
func TestShardPartitionAndBalance(t *testing.T) {
	const n, count = 2000, 3
	per := make([]int, count)
	for _, name := range names(n) {
		owners := 0
		for i := range count {
			if (watch.Shard{Index: i, Count: count}).Owns(name) {
				owners++
				per[i]++
			}
		}
		if owners != 1 {
			t.Fatalf("%s is on %d shards, want 1", name, owners)
		}
	}
	for i, c := range per {
		if c < n/count*9/10 || c > n/count*11/10 {
			t.Errorf("shard %d/%d has %d of %d switches, want about %d", i, count, c, n, n/count)
		}
	}
}

// TestShardGrowMovesOnlyToTheNewShard: going from 3 to 4 shards moves a
// switch only to the new shard (never between old ones), about a quarter
// of them; a naive hash mod N would move three quarters.
func TestShardGrowMovesOnlyToTheNewShard(t *testing.T) {
	const n = 2000
	moved := 0
	for _, name := range names(n) {
		before, after := watch.Of(name, 3), watch.Of(name, 4)
		if before == after {
			continue
		}
		moved++
		if after != 3 {
			t.Errorf("%s moved from shard %d to %d of 4; only the new shard 3 may take switches", name, before, after)
		}
	}
	if moved < n/4*8/10 || moved > n/4*12/10 {
		t.Errorf("%d of %d switches moved going to 4 shards, want about %d", moved, n, n/4)
	}
}

func shardFabric(t *testing.T, n int) *intent.Fabric {
	t.Helper()
	f, err := intent.Parse("shard.yaml", fmt.Appendf(nil, `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: shard}
policy: {preset: roce-lossless}
inventory:
  switches:
    - name: leaf{1..%[1]d}
      platform: srlinux
      address: "127.0.0.1:{20001..%[2]d}"
      tls: {insecure: true}
      portDefaults: {speed: 400G, cable: 3m}
      ports:
        - name: ethernet-1/1
`, n, 20000+n))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestShardKeepsSwitchesWhenOthersAreAdded: shard 1 of 3 of a 90-switch
// fabric watches its switches; a reload to 150 switches (60 added) keeps
// every one of them (none removed or restarted) and adds only switches the
// shard owns, and a reload back drops only those.
func TestShardKeepsSwitchesWhenOthersAreAdded(t *testing.T) {
	sh := watch.Shard{Index: 1, Count: 3}
	w, err := watch.New(watch.Options{Fabric: shardFabric(t, 90), Shard: sh})
	if err != nil {
		t.Fatal(err)
	}
	r, err := w.Reload(shardFabric(t, 150))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Removed)+len(r.Restarted) != 0 {
		t.Errorf("adding switches removed %v and restarted %v on shard %s; a switch must stay on its shard", r.Removed, r.Restarted, sh)
	}
	var wantKept, wantAdded []string
	for i, name := range names(150) {
		if !sh.Owns(name) {
			continue
		}
		if i < 90 {
			wantKept = append(wantKept, name)
		} else {
			wantAdded = append(wantAdded, name)
		}
	}
	slices.Sort(wantKept)
	slices.Sort(wantAdded)
	slices.Sort(r.Kept)
	slices.Sort(r.Added)
	if !slices.Equal(r.Kept, wantKept) || !slices.Equal(r.Added, wantAdded) {
		t.Errorf("reload to 150 switches: kept %v added %v; want kept %v added %v", r.Kept, r.Added, wantKept, wantAdded)
	}
	if len(wantKept) < 20 || len(wantAdded) < 10 {
		t.Fatalf("shard %s owns %d of the first 90 and %d of the 60 added: the test needs more of each", sh, len(wantKept), len(wantAdded))
	}
	r, err = w.Reload(shardFabric(t, 90))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(r.Removed)
	if len(r.Added)+len(r.Restarted) != 0 || !slices.Equal(r.Removed, wantAdded) {
		t.Errorf("reload back to 90: %+v; want only %v removed", r, wantAdded)
	}
}

// TestShardMayOwnNone: a shard of a fabric smaller than the shard count
// may own no switch: it runs (and exports only its own health) rather
// than failing, so a StatefulSet's replicas all start.
func TestShardMayOwnNone(t *testing.T) {
	f := shardFabric(t, 1)
	owner := watch.Of("leaf1", 4)
	other := (owner + 1) % 4
	if _, err := watch.New(watch.Options{Fabric: f, Shard: watch.Shard{Index: other, Count: 4}}); err != nil {
		t.Errorf("shard %d/4 of a one-switch fabric: %v", other, err)
	}
}
