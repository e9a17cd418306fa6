// Package twin is a DEVICE TWIN: an in-process gNMI target on a real gRPC
// listener (127.0.0.1:0) that behaves like one switch platform for the parts
// fabricctl uses. It announces that platform's models and encodings, keeps a
// datastore (a JSON tree per origin and target; SONiC's
// /CONFIG_DB/localhost/TABLE/KEY under origin sonic-db, COUNTERS_DB as a
// target; EOS CLI lines under origin cli), applies each SetRequest atomically
// (delete, replace, update; all or nothing), answers Get and Subscribe ONCE,
// and can inject faults (reject, delay, hang, drop the connection).
//
// A twin is not a switch: it does not validate payloads against YANG, has no
// defaults, no state derived from config and no hardware. Tests and
// `fabricctl lab` use it; output that involves twins says so.
package twin
