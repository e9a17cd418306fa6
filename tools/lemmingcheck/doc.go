// Package lemmingcheck tests fabricctl against a third-party gNMI server:
// lemming's reference gNMI server (github.com/openconfig/lemming/gnmi,
// v0.4.0), which stores OpenConfig configuration in ygot GoStructs
// generated from the OpenConfig models and validates every Set against
// them. It is a module of its own so that lemming's dependencies stay out
// of fabricctl's go.mod; scripts/test-tools.sh runs it.
//
// The tests build cmd/fabricctl from the checkout and run it as a user
// does (check, render, plan, apply, diff) against lemming servers on
// 127.0.0.1; BenchmarkApplyVsBareSetLemming compares apply with a bare
// one-Set client on 16 of them.
package lemmingcheck
