// Package memo keeps, for the whole process, the answers of pure functions
// that many goroutines ask again and again, up to a bound.
package memo

import (
	"sync"
	"sync/atomic"
)

// Bounded remembers at most Max values by key (the zero Bounded, Max 0,
// remembers none). Safe for concurrent use. Past Max, a value is made anew
// on every ask and not kept: the memory a long-running process spends on
// it stays bounded whatever keys it meets.
type Bounded[K comparable, V any] struct {
	Max int64
	m   sync.Map // K -> V
	n   atomic.Int64
}

// Get returns the value kept for k, else makes it with make and keeps it
// while fewer than Max are kept. Of goroutines making the value of one
// key at once while there is room, all get the one kept (values compared
// by identity stay one). Concurrent makers each take room, so under
// contention fewer than Max may be kept, never more.
func (b *Bounded[K, V]) Get(k K, make func() V) V {
	if v, ok := b.m.Load(k); ok {
		return v.(V)
	}
	v := make()
	if b.n.Add(1) > b.Max {
		// No room (or the room was taken by goroutines making this very
		// key at once: then one of them kept its value).
		if kept, ok := b.m.Load(k); ok {
			return kept.(V)
		}
		return v
	}
	if prev, loaded := b.m.LoadOrStore(k, v); loaded {
		return prev.(V)
	}
	return v
}

// Range calls f on every kept key and value, as sync.Map.Range does,
// until f returns false.
func (b *Bounded[K, V]) Range(f func(K, V) bool) {
	b.m.Range(func(k, v any) bool { return f(k.(K), v.(V)) })
}
