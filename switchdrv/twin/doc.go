// Package twin is a DEVICE TWIN: an in-process gNMI target on a real gRPC
// listener (127.0.0.1:0) that behaves like one switch platform for the parts
// fabricctl uses. It announces that platform's models and encodings, keeps a
// datastore (a JSON tree per origin and target; SONiC's
// /CONFIG_DB/localhost/TABLE/KEY under origin sonic-db, COUNTERS_DB as a
// target; EOS CLI lines under origin cli), applies each SetRequest atomically
// (delete, replace, update; all or nothing), answers Get and Subscribe ONCE,
// and can inject faults (reject, delay, hang, drop the connection).
//
// A bare twin (no Options.Profile) starts empty and accepts any well-formed
// payload (Options.Validate may check each one against the schema). A
// PROFILED twin imitates a release profile (internal/profile): it starts
// from the profile's factory-default datastore (Options.Factory), applies
// every Set to a copy and validates the whole result (Options.Validator,
// e.g. YANGValidator: leafref, must, when, mandatory, the profile's
// features), and follows the profile's write semantics (SONiC's sonic-gnmi
// and generic config updater per branch, with port flaps counted; the
// telemetry container's read-only mode; OpenConfig's populate/trim-defaults
// reporting). New builds one without a listener for render and plan.
//
// A twin is still not a switch: no state derived from config beyond the
// above, no hardware. Tests and `fabricctl lab` use it; output that involves
// twins says so.
package twin
