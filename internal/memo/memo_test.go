package memo

import (
	"sync"
	"testing"
)

// TestBoundedKeepsAtMostMax: past Max keys, values are made anew and not
// kept; a kept value is the one every later Get returns.
func TestBoundedKeepsAtMostMax(t *testing.T) {
	b := &Bounded[int, *int]{Max: 3}
	made := 0
	mk := func(i int) func() *int { return func() *int { made++; v := i; return &v } }
	first := map[int]*int{}
	for i := range 5 {
		first[i] = b.Get(i, mk(i))
	}
	kept := 0
	b.Range(func(k int, v *int) bool {
		kept++
		if *v != k || first[k] != v {
			t.Errorf("key %d keeps %d (%p), first Get gave %p", k, *v, v, first[k])
		}
		return true
	})
	if kept != 3 {
		t.Fatalf("%d kept, want 3", kept)
	}
	for i := range 5 {
		again := b.Get(i, mk(i))
		if i < 3 && again != first[i] {
			t.Errorf("key %d: a kept value made again", i)
		}
		if i >= 3 && again == first[i] {
			t.Errorf("key %d: kept past Max", i)
		}
	}
	if made != 7 {
		t.Errorf("made %d values, want 7 (5, then the 2 not kept)", made)
	}
}

// TestBoundedOneValuePerKey: goroutines asking one key at once, with room
// for all of them, all get the value kept (run with -race).
func TestBoundedOneValuePerKey(t *testing.T) {
	b := &Bounded[string, *int]{Max: 100}
	got := make([]*int, 16)
	var wg sync.WaitGroup
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = b.Get("k", func() *int { return new(int) })
		}()
	}
	wg.Wait()
	for _, p := range got {
		if p != got[0] {
			t.Fatal("one key gave two values")
		}
	}
}
