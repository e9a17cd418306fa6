package schedule

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAllPairsProperties checks, for every n up to 64: each unordered pair
// exactly once, rounds disjoint, n-1 rounds (n for odd n, one bye per host),
// floor(n/2) pairs per round, and directions balanced within one.
func TestAllPairsProperties(t *testing.T) {
	for n := 0; n <= 64; n++ {
		rounds, err := AllPairs(n)
		if err != nil {
			t.Fatalf("AllPairs(%d): %v", n, err)
		}
		wantRounds := 0
		switch {
		case n < 2:
		case n%2 == 0:
			wantRounds = n - 1
		default:
			wantRounds = n
		}
		if len(rounds) != wantRounds {
			t.Errorf("AllPairs(%d) has %d rounds, want %d", n, len(rounds), wantRounds)
		}
		seen := map[[2]int]int{}
		clientCount := make([]int, n)
		byes := make([]int, n)
		for ri, r := range rounds {
			if len(r) != n/2 {
				t.Errorf("AllPairs(%d) round %d has %d pairs, want %d", n, ri, len(r), n/2)
			}
			busy := map[int]bool{}
			for _, p := range r {
				if p.Client == p.Server || p.Client < 0 || p.Server < 0 || p.Client >= n || p.Server >= n {
					t.Fatalf("AllPairs(%d) round %d: bad pair %+v", n, ri, p)
				}
				if busy[p.Client] || busy[p.Server] {
					t.Errorf("AllPairs(%d) round %d: host in two pairs: %+v", n, ri, r)
				}
				busy[p.Client], busy[p.Server] = true, true
				a, b := min(p.Client, p.Server), max(p.Client, p.Server)
				seen[[2]int{a, b}]++
				clientCount[p.Client]++
			}
			for h := 0; h < n; h++ {
				if !busy[h] {
					byes[h]++
				}
			}
		}
		for a := 0; a < n; a++ {
			for b := a + 1; b < n; b++ {
				if seen[[2]int{a, b}] != 1 {
					t.Errorf("AllPairs(%d): pair %d-%d scheduled %d times, want 1", n, a, b, seen[[2]int{a, b}])
				}
			}
			wantBye := 0
			if n%2 == 1 && n > 1 {
				wantBye = 1
			}
			if byes[a] != wantBye {
				t.Errorf("AllPairs(%d): host %d has %d byes, want %d", n, a, byes[a], wantBye)
			}
			// Each host plays n-1 games; as client about half of them.
			if lo, hi := (n-1)/2, n/2; clientCount[a] < lo || clientCount[a] > hi {
				t.Errorf("AllPairs(%d): host %d is client %d times, want %d..%d", n, a, clientCount[a], lo, hi)
			}
		}
	}
}

func TestAllPairsFour(t *testing.T) {
	got, err := AllPairs(4)
	if err != nil {
		t.Fatal(err)
	}
	want := []Round{
		{{Client: 0, Server: 1}, {Client: 2, Server: 3}},
		{{Client: 0, Server: 3}, {Client: 1, Server: 2}},
		{{Client: 2, Server: 0}, {Client: 3, Server: 1}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("AllPairs(4) mismatch (-want +got):\n%s", diff)
	}
}

func TestIncast(t *testing.T) {
	got, err := Incast(2, []int{0, 1, 3})
	if err != nil {
		t.Fatal(err)
	}
	want := Round{{Client: 0, Server: 2}, {Client: 1, Server: 2}, {Client: 3, Server: 2}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Incast mismatch (-want +got):\n%s", diff)
	}
	for _, bad := range [][]int{{2}, {0, 0}, nil} {
		if _, err := Incast(2, bad); err == nil {
			t.Errorf("Incast(2, %v): want an error", bad)
		}
	}
}

func BenchmarkAllPairs64(b *testing.B) {
	for b.Loop() {
		if _, err := AllPairs(64); err != nil {
			b.Fatal(err)
		}
	}
}
