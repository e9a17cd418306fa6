//go:build race

package main

// raceEnabled: the race detector multiplies memory use 5-10x, so memory
// budgets are not measured under it.
const raceEnabled = true
