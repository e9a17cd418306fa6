// Package intent reads fabricctl's declarative fabric intent: YAML files with
// the RoCE QoS policy and the inventory of switches, hosts and links. Parse and
// Load turn bytes into a typed, defaulted and unit-normalised *Fabric (bytes,
// bits/s, metres, time.Duration) or into Errors, every one of which names the
// file, line, column and field path. The package does no network I/O.
//
// The static pre-deployment rules live in the check subpackage; the headroom
// models in headroom.go are combined per port and per NIC, with the
// platforms' roundings, by the portfacts subpackage, which every command
// reads.
package intent
