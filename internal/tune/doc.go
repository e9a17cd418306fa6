// Package tune searches a fabric's RoCE congestion settings by simulation:
// the RoCE class's ECN thresholds and marking probability, the hosts' DCQCN
// parameters and (optionally) the pfc-only mode, for workload scenarios of
// internal/sim, under the constraints of the intent's platforms (the
// compilers' and YANG ranges, Limits) and its buffers (one MTU for Kmin, the
// smallest XOFF point of intent/portfacts for Kmax). The objective ranks
// lossless drops, unfinished flows, p99 flow completion time, pause time and
// throughput, in that order.
//
// The best setting comes back as check.Edit values (the edits check's fixes
// use, check.Apply makes them on a fabric) and as text: Write makes them in
// the intent's YAML files where the values are written, or adds the keys
// the files leave to a preset, keeping everything else; the written intent
// is parsed back and checked before it is offered.
//
// tune does no I/O: cmd/fabricctl's tune command reads the intent and writes
// the files and plots.
package tune
