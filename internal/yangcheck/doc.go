// Package yangcheck validates gNMI JSON_IETF payloads and whole datastores
// against the real YANG models of a switch platform, loaded with goyang.
//
// # Where the YANG comes from
//
// The modules are shipped in the repository (models/<vendor>/, each folder
// with its SOURCE.txt and its source repository's LICENSE; THIRD_PARTY.md)
// and embedded in the binary as models.tar.gz (go generate; a test fails
// when the archive and the folder differ). Open("") returns them unless
// $FABRICCTL_YANG_DIR (or an explicit directory, render --yang-dir) names
// a tree laid out the same way. Platform(p) loads and caches a platform's
// schema; Versions() lists module, revision / openconfig-version and the
// source repository at its commit (fabricctl version prints it).
//
// # Releases
//
// A release profile validates with its release's module set, never another
// release's: ReleaseSchema(name) (Tree.LoadRelease) loads a Release
// (releases.go). The shipped folders are each platform's newest release;
// an older one whose own folder the tree lacks (srlinux-24.10.3,
// sonic-202405 ... sonic-202511) is derived from them by the differences
// its Release lists (Edit: a statement of a module's text removed, renamed,
// re-argued or given a sub-statement, cited to the release's own text;
// AbsentFeatures: features the release does not declare, off whatever the
// feature set says). A derived release is exact in every config node below
// its Covers; TestReleaseMatchesItsModules compares it there with the
// release's own modules when ../shared/yang/<release> has them.
//
// # One payload: Validate, ValidateUpdate, CheckUpdate
//
// What a device's YANG layer rejects in one update, on its own: unknown
// members, RFC 7951 module qualification, leaf types (integers and their
// ranges, strings with lengths and patterns, enumerations, identityrefs,
// booleans, decimal64, unions, bits, binary, empty, leafrefs as their target
// type), list keys (present, well typed, matching the path, unique), unique
// leaf-list values, choice/case exclusivity, mandatory leaves that no
// when/if-feature guards (in every object of the payload, so a merge that
// omits one is reported too) and writes to config-false nodes; a node gated
// by a feature no released software has (SR Linux future-0-0) is unknown.
// It needs no datastore, so it does not evaluate must/when/leafref
// require-instance.
//
// # A whole datastore: ValidateDatastore
//
//	func (s *Schema) ValidateDatastore(origin string, tree map[string]any, opts DatastoreOptions) Violations
//
// validates the result of a Set the way the device's management layer does
// before it commits: the checks above on every node, then
//   - leafref require-instance (the path evaluated from the leaf; a value
//     no target node has is RuleLeafref);
//   - must (RuleMust; Msg is the statement's error-message when it has one,
//     e.g. SR Linux's "pfc and ethernet flow-control are mutually
//     exclusive", AppTag its error-app-tag) and when (RuleWhen: a node
//     exists whose when is false), as YANG XPath 1.0 over the datastore:
//     github.com/antchfx/xpath with a navigator over the data tree
//     (xpath.go lists the YANG idioms rewritten for it: current(),
//     re-match(), prefixed names and identity literals);
//   - mandatory leaves and choices and min-elements (RuleMandatory),
//     below every existing node and every non-presence container of an
//     existing node, skipping nodes whose when is false or whose feature
//     is off, and only in the case of a choice that is in use;
//   - if-feature (on the node, its augment, uses, choice and case, and on
//     enum values) against opts.Features ("module:feature" -> on; a feature
//     whose own if-feature is false is off); a node behind a disabled
//     feature is RuleFeature, reported as unknown, as the device does.
//
// Member names may be module-qualified or not (twins strip qualifiers).
// Origin sonic-db takes CONFIG_DB ({"CONFIG_DB":{"localhost":{TABLE:{KEY:
// {field: value}}}}}) mapped onto the sonic-yang modules the way
// sonic-yang-mgmt translates them (keys split on "|", map tables such as
// DSCP_TO_TC_MAP as the inner key/value list), so the leafrefs between
// tables (PORT_QOS_MAP -> DSCP_TO_TC_MAP, BUFFER_PG -> BUFFER_PROFILE,
// QUEUE -> SCHEDULER / WRED_PROFILE, anything -> PORT) are checked.
//
// SR Linux idioms that libyang reads differently are evaluated as the device
// means them (vendorBooleans in xpath.go: ". = false()" compares the value;
// vendorNotEqual: "../priority != 'strict'" is true when priority is absent;
// mustOn: the srl_nokia-ext:if-feature extension on a must). max-elements
// and unique statements are checked too (RuleSchema).
//
// Cost: indexed key lookups (list[key=current()...], and
// current()/../list[key='const']), per-validation leafref value sets and
// context-free expressions evaluated once keep a 64-port SR Linux or SONiC
// datastore under 20 ms of CPU (BenchmarkValidateDatastore*).
//
// The tests hold the validator against libyang's yanglint (datastore_test.go)
// on the examples' compiled payloads and a table of mutated datastores.
package yangcheck
