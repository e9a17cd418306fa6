// Package check runs the static pre-deployment rules of fabricctl over a
// parsed intent: everything that can be proven wrong about a lossless RoCE
// fabric before any device is touched (DSCP and priority maps, PFC limits,
// CNP class, ECN thresholds, PFC headroom, ETS, watchdog, MTU, host ToS,
// DCBX ownership, links and PFC deadlock risk).
//
// Run is pure: no I/O, deterministic output. Platform knowledge reaches it
// through Options as data (PlatformInfo), so this package does not import the
// switch drivers. Every rule has a stable ID (FC1xx) listed by Rules.
package check
