package schedule

import "fmt"

// Pair is one directed test: Client sends to (connects to) Server. Indexes
// refer to the host list the schedule was made for.
type Pair struct {
	Client, Server int
}

// Round is a set of pairs that run at the same time; no host is in two
// pairs of one round.
type Round []Pair

// AllPairs returns every unordered pair of n hosts exactly once, in rounds of
// disjoint pairs: n-1 rounds for even n, n rounds for odd n (each round one
// host has a bye). Every round has floor(n/2) pairs, so a full mesh takes
// O(n) traffic time instead of the O(n^2) of running pairs one by one.
//
// It is the circle method: host 0 stays fixed (or the bye slot for odd n),
// the others rotate one place per round. Directions are balanced: each host
// is the client in about half of its pairs.
func AllPairs(n int) ([]Round, error) {
	if n < 0 {
		return nil, fmt.Errorf("schedule: %d hosts", n)
	}
	if n < 2 {
		return nil, nil
	}
	m := n
	if m%2 == 1 {
		m++ // slot m-1 is the bye
	}
	// ring holds the positions 1..m-1 that rotate; position 0 is fixed.
	ring := make([]int, m-1)
	for i := range ring {
		ring[i] = i + 1
	}
	rounds := make([]Round, 0, m-1)
	for r := 0; r < m-1; r++ {
		var round Round
		// fixed host 0 plays ring[0]
		pairs := [][2]int{{0, ring[0]}}
		for k := 1; k < m/2; k++ {
			pairs = append(pairs, [2]int{ring[k], ring[m-1-k]})
		}
		for _, p := range pairs {
			a, b := p[0], p[1]
			if a >= n || b >= n {
				continue // bye
			}
			// Orient {a<b} as a->b when a+b is odd, else b->a: every host
			// is client (n-1)/2 times for odd n, n/2-1 or n/2 for even n.
			if a > b {
				a, b = b, a
			}
			if (a+b)%2 == 0 {
				a, b = b, a
			}
			round = append(round, Pair{Client: a, Server: b})
		}
		rounds = append(rounds, round)
		// rotate right by one
		last := ring[len(ring)-1]
		copy(ring[1:], ring[:len(ring)-1])
		ring[0] = last
	}
	return rounds, nil
}

// Incast returns one round in which each of senders sends to receiver at the
// same time. senders must not contain receiver.
func Incast(receiver int, senders []int) (Round, error) {
	seen := map[int]bool{}
	var r Round
	for _, s := range senders {
		if s == receiver {
			return nil, fmt.Errorf("schedule: incast receiver %d is also a sender", receiver)
		}
		if seen[s] {
			return nil, fmt.Errorf("schedule: incast sender %d listed twice", s)
		}
		seen[s] = true
		r = append(r, Pair{Client: s, Server: receiver})
	}
	if len(r) == 0 {
		return nil, fmt.Errorf("schedule: incast to %d has no senders", receiver)
	}
	return r, nil
}
