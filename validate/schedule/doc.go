// Package schedule plans which hosts send traffic to which, and when: all
// pairs of N hosts in N-1 rounds of disjoint pairs (the circle method of a
// round-robin tournament), and incast N->1. It is pure: no I/O.
package schedule
