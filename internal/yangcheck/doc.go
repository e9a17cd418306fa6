// Package yangcheck validates gNMI JSON_IETF payloads against the real YANG
// models of a switch platform, loaded with goyang, before anything is sent.
//
// It checks what a device's own YANG layer would reject on a Set: unknown
// members, RFC 7951 module qualification, leaf types (integers and their
// ranges, strings with lengths and patterns, enumerations, identityrefs,
// booleans, decimal64, unions, bits, binary, empty, leafrefs as their target
// type), list keys (present, well typed, matching the path, unique),
// unique leaf-list values, choice/case exclusivity, mandatory leaves that no
// when/if-feature guards (in every object of the payload, so a merge that
// omits one is reported too) and writes to config-false nodes.
// It does not evaluate must/when/if-feature expressions or leafref
// require-instance (they need the device's whole datastore and feature set),
// except that a node gated by a feature no released software has (SR Linux
// future-0-0) is reported as the device would: unknown.
//
// SONiC is addressed the way sonic-gnmi does it: origin "sonic-db" and paths
// /CONFIG_DB/localhost/<TABLE>/<KEY>/<field>, with CONFIG_DB's string-valued
// hashes mapped onto the sonic-*.yang container/list structure the way
// sonic-yang-mgmt translates them (keys split on "|", map tables such as
// DSCP_TO_TC_MAP as the inner key/value list).
package yangcheck
