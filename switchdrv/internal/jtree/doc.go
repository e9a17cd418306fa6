// Package jtree handles the JSON trees gNMI carries (JSON and JSON_IETF):
// decoding with numbers kept exact, stripping module prefixes, walking and
// editing a tree by gNMI path, merging, and flattening to leaves with
// canonical values so that two encodings of the same data compare equal.
//
// YANG list keys are not in the JSON, so lists inside a value are keyed by a
// documented heuristic (ListKey); lists named by a path use the path's keys.
package jtree
