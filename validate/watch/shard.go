package watch

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/fabricctl/fabricctl/intent"
)

// Shard is one of Count watch processes that split a fabric's switches
// between them (fabricctl watch --shard INDEX/COUNT): each streams and
// exports only the switches it owns, and a Prometheus scraping all of them
// sees every switch once. The zero Shard is the whole fabric.
type Shard struct {
	Index, Count int
}

// ParseShard reads "INDEX/COUNT", INDEX from 0 to COUNT-1 as a Kubernetes
// StatefulSet numbers its pods. INDEX may also be a StatefulSet pod's name,
// "<statefulset>-<ordinal>" (the StatefulSet documentation's "Ordinal
// Index"), so that each replica takes its shard from its own name:
// --shard $(POD_NAME)/3.
func ParseShard(s string) (Shard, error) {
	slash := strings.LastIndexByte(s, '/')
	ok := slash >= 0
	i, n := strings.TrimSpace(s[:max(slash, 0)]), s[slash+1:]
	if k := strings.LastIndexByte(i, '-'); k > 0 {
		i = i[k+1:] // a pod's name: its ordinal
	}
	index, err1 := strconv.Atoi(i)
	count, err2 := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("shard %q: want INDEX/COUNT, e.g. 0/3", s)
	}
	if count < 1 || index < 0 || index >= count {
		return Shard{}, fmt.Errorf("shard %q: want 0 <= INDEX < COUNT", s)
	}
	return Shard{Index: index, Count: count}, nil
}

// String is "INDEX/COUNT" ("" for the whole fabric).
func (s Shard) String() string {
	if s.Count <= 1 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// Of is the shard (0 to count-1) that owns the switch named name among
// count shards, by rendezvous (highest random weight) hashing: every shard
// scores the name and the highest score wins. It depends on nothing but
// the name and count, so a switch stays on its shard whatever switches are
// added to or removed from the intent (and in whatever order they are
// listed); going from count to count+1 shards moves only the switches the
// new shard wins, about 1/(count+1) of them, and none between the old
// shards (Thaler and Ravishankar, "Using name-based mappings to increase
// hit rates", IEEE/ACM ToN 6(1), 1998).
func Of(name string, count int) int {
	best, owner := uint64(0), 0
	for j := range count {
		if w := weight(name, j); j == 0 || w > best {
			best, owner = w, j
		}
	}
	return owner
}

// weight is shard j's score of name: FNV-1a of the name and the shard's
// number, finished with a 64-bit mixer (splitmix64's) so that scores of
// neighbouring shards are independent.
func weight(name string, j int) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	_, _ = h.Write([]byte{0, byte(j), byte(j >> 8), byte(j >> 16), byte(j >> 24)})
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Owns says whether the shard watches the switch named name.
func (s Shard) Owns(name string) bool {
	return s.Count <= 1 || Of(name, s.Count) == s.Index
}

// pick keeps the switches of sws the shard owns.
func (s Shard) pick(sws []*intent.Switch) []*intent.Switch {
	if s.Count <= 1 {
		return sws
	}
	var out []*intent.Switch
	for _, sw := range sws {
		if s.Owns(sw.Name) {
			out = append(out, sw)
		}
	}
	return out
}
