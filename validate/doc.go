// Package validate proves a fabric lossless and measures it: it reads the
// configuration back (drift is a failed check), reads host and switch
// counters before and after traffic, drives traffic between the hosts (all
// pairs in N-1 rounds of disjoint pairs, then an N->1 incast) with perftest
// over RDMA or with DSCP-marked UDP flows where there is no RDMA NIC, and
// turns the counter deltas and measurements into pass/fail/skip checks with
// the numbers behind them. Reports render as text, JSON, JUnit XML and
// Markdown.
//
// Subpackages: perftest (perftest command lines, GID rule, output parser,
// pair runner), schedule (round-robin and incast schedules), udpflow (the
// UDP traffic engine).
package validate
