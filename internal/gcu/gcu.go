// Package gcu models the field-operation validation of SONiC's generic
// config updater (GCU), which sonic-gnmi's Set goes through (sonic-gnmi
// ApplyPatchDb -> sonic-host-services gcu.py -> `config apply-patch`).
//
// Before GCU applies a patch it diffs the whole running CONFIG_DB against
// the simulated target (sonic-utilities generic_config_updater/
// gu_common.py ConfigWrapper.validate_field_operation:
// jsonpatch.JsonPatch.from_diff(old_config, target_config)) and runs, for
// every resulting operation on a table listed in
// gcu_field_operation_validators.conf.json, that table's validators. On
// the 202405 and 202411 branches PFC_WD, BUFFER_POOL, BUFFER_PROFILE and
// WRED_PROFILE use rdma_config_update_validator
// (field_operation_validators.py), which:
//
//   - refuses everything on an ASIC it cannot name from the HWSKU
//     (get_asic_name: Mellanox SKUs by exact name, Broadcom by substring);
//   - drops every path element holding a digit (port and profile names
//     such as Ethernet8 or pg_lossless_100000_5m_profile), joins the rest
//     with "/" in lower case, and for a dict value appends each of the
//     value's keys (as they are, not lower-cased);
//   - needs each such field to appear, exactly, in one scenario's field
//     list, the operation in that scenario's operations, and the ASIC to
//     have a non-empty minimum version there (and, when the image's
//     build_version holds an 8-digit branch, a branch not older).
//
// So on those branches GCU refuses to create a buffer profile (its "pool",
// "size", "xon" are in no scenario), to create or change any WRED profile
// field but AZURE_LOSSLESS's green thresholds and probability, and to
// create PFC_WD|GLOBAL or the PFC_WD table.
//
// Later branches name other validators for some tables (Functions):
//
//   - 202505: WRED_PROFILE uses wred_profile_config_update_validator,
//     rdma_config_update_validator_common with its defaults: no path
//     element is dropped and a field matches a scenario's when its last
//     "/"-separated element equals it. So the green thresholds and
//     probability of any WRED profile may be replaced; a new profile (its
//     "ecn", "wred_green_enable" ... in no scenario, "add" in none) may not.
//   - 202511: BUFFER_PROFILE uses buffer_profile_config_update_validator:
//     an operation on a whole entry (/BUFFER_PROFILE/<name>: add, remove,
//     replace) passes on any ASIC, before the ASIC is even asked; a field's
//     goes to rdma_config_update_validator_common's defaults. WRED_PROFILE
//     has no validator at all, and BUFFER_POOL's one scenario lists no
//     field, so every BUFFER_POOL change is refused.
//
// Data lives in the release
// profile (internal/profile, write.gcu); this package is the logic, used
// by the SONiC twin (to refuse what the device refuses) and by the SONiC
// planner (to refuse at plan time, naming the path, what the device
// would refuse at apply time).
package gcu

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"unicode"
)

// Validators is the field-operation validation of one release.
type Validators struct {
	// Source cites the data.
	Source string `json:"source"`
	// Function is the validator's name as GCU reports it, for every table
	// of Tables that Functions does not name.
	Function string `json:"function"`
	// Functions names, per table, the validator GCU runs when it is not
	// Function (gcu_field_operation_validators.conf.json
	// field_operation_validators). Each must be one KnownFunctions lists.
	Functions map[string]string `json:"functions,omitempty"`
	// Tables lists, per CONFIG_DB table, the validator's scenarios in file
	// order (the first scenario naming a field decides it).
	Tables map[string][]Scenario `json:"tables"`
	// IllegalRemoves are JSON pointers whose removal GCU refuses outright
	// (gu_common.py illegal_operations_to_fields_map).
	IllegalRemoves []string `json:"illegalRemoves"`
	// MellanoxSKUs and BroadcomSKUs name the ASIC of a HWSKU
	// (helper_data.rdma_config_update_validator).
	MellanoxSKUs map[string][]string `json:"mellanoxSKUs"`
	BroadcomSKUs map[string][]string `json:"broadcomSKUs"`
}

// Scenario is one entry of a table's validator_data.
type Scenario struct {
	Name   string   `json:"name"`
	Fields []string `json:"fields"`
	Ops    []string `json:"ops"`
	// Since is the minimum branch (YYYYMMDD) per ASIC; an ASIC missing or
	// with "" is refused.
	Since map[string]string `json:"since"`
}

// Unknown is the ASIC name of a HWSKU no list names.
const Unknown = "unknown"

// ASIC names hwsku's ASIC as get_asic_name does for asic_type mellanox,
// broadcom or vs: an exact, case-insensitive Mellanox SKU, else a Broadcom
// SKU contained in hwsku (families in sorted order; GCU walks its dict in
// file order, and no two families' SKUs are substrings of one name).
func (v *Validators) ASIC(hwsku string) string {
	if v == nil {
		return Unknown
	}
	for _, fam := range slices.Sorted(maps.Keys(v.MellanoxSKUs)) {
		for _, s := range v.MellanoxSKUs[fam] {
			if strings.EqualFold(s, hwsku) {
				return fam
			}
		}
	}
	low := strings.ToLower(hwsku)
	for _, fam := range slices.Sorted(maps.Keys(v.BroadcomSKUs)) {
		for _, s := range v.BroadcomSKUs[fam] {
			if strings.Contains(low, strings.ToLower(s)) {
				return fam
			}
		}
	}
	return Unknown
}

// Op is one JSON patch operation on CONFIG_DB: Path holds the table, key
// and field parts (unescaped), Value the added or replacing value.
type Op struct {
	Op    string // add, remove, replace
	Path  []string
	Value any
}

// Pointer is the op's JSON pointer.
func (o Op) Pointer() string {
	var b strings.Builder
	for _, p := range o.Path {
		b.WriteByte('/')
		b.WriteString(pointerEscaper.Replace(p))
	}
	return b.String()
}

// pointerEscaper escapes a JSON pointer's reference token (RFC 6901 section 3).
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// Diff lists the JSON patch operations jsonpatch.JsonPatch.from_diff
// derives from old to target CONFIG_DB (table -> key -> field -> value),
// for the tables in only (all when nil): a table or key that appears is
// one add of its whole value, one that disappears one remove, a field
// that changes one replace. Operations are sorted by path. (from_diff also
// turns a removed value equal to an added one into a move; fabricctl never
// renames an entry, and a move is refused by every scenario anyway.)
func Diff(old, target map[string]any, only map[string]bool) []Op {
	var out []Op
	var walk func(path []string, a, b map[string]any, depth int)
	walk = func(path []string, a, b map[string]any, depth int) {
		keys := map[string]bool{}
		for k := range a {
			keys[k] = true
		}
		for k := range b {
			keys[k] = true
		}
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			if depth == 0 && only != nil && !only[k] {
				continue
			}
			p := append(slices.Clip(path), k)
			av, inA := a[k]
			bv, inB := b[k]
			switch {
			case !inA:
				out = append(out, Op{Op: "add", Path: p, Value: bv})
			case !inB:
				out = append(out, Op{Op: "remove", Path: p})
			default:
				am, aok := av.(map[string]any)
				bm, bok := bv.(map[string]any)
				if aok && bok {
					walk(p, am, bm, depth+1)
				} else if !reflect.DeepEqual(av, bv) {
					out = append(out, Op{Op: "replace", Path: p, Value: bv})
				}
			}
		}
	}
	walk(nil, old, target, 0)
	return out
}

// Branch is the branch version GCU reads from an image's build_version
// (sonic_version.yml; field_operation_validators.py, the same code on
// 202411, 202505 and 202511): the last "."-separated part made of exactly
// 8 digits, "" when there is none (community builds, named
// <branch>.<build number>-<commit> by sonic-buildimage's sonic_get_version,
// carry none). A leading "SONiC." (sonic-gnmi's OTHERS /osversion/build
// adds it) is a part of no digits and changes nothing.
func Branch(buildVersion string) string {
	branch := ""
	for _, part := range strings.Split(buildVersion, ".") {
		if len(part) == 8 && !strings.ContainsFunc(part, func(r rune) bool { return r < '0' || r > '9' }) {
			branch = part
		}
	}
	return branch
}

// Refusal is GCU's refusal of a patch, with its own words.
type Refusal struct {
	Op     Op
	Reason string // why, in fabricctl's words
	Text   string // GCU's message (IllegalPatchOperationError)
}

func (r *Refusal) Error() string { return r.Text }

// Check runs GCU's validate_field_operation over ops on asic (ASIC's
// answer for the switch's HWSKU); branch is the image's 8-digit branch
// version ("" when build_version holds none, as on community builds named
// like 202411.xxx: then no version is compared). It returns the first
// refusal, or nil.
func (v *Validators) Check(ops []Op, asic, branch string) *Refusal {
	if v == nil {
		return nil
	}
	for _, o := range ops {
		ptr := o.Pointer()
		if o.Op == "remove" && slices.Contains(v.IllegalRemoves, ptr) {
			return &Refusal{Op: o, Reason: "GCU never removes " + ptr,
				Text: fmt.Sprintf("Given patch operation is invalid. Operation: %s is illegal on field: %s", o.Op, ptr)}
		}
	}
	for _, o := range ops {
		if len(o.Path) == 0 {
			continue
		}
		fn := v.function(o.Path[0])
		if fn == "" {
			continue
		}
		if why := v.allowed(fn, v.Tables[o.Path[0]], o, asic, branch); why != "" {
			return &Refusal{Op: o, Reason: why,
				Text: fmt.Sprintf("Modification of %s table is illegal- validating function %s returned False", o.Path[0], fn)}
		}
	}
	return nil
}

// function is the validator GCU runs on table's operations, "" for none.
func (v *Validators) function(table string) string {
	if fn, ok := v.Functions[table]; ok {
		return fn
	}
	if _, ok := v.Tables[table]; ok {
		return v.Function
	}
	return ""
}

// The validators of sonic-utilities' generic_config_updater/
// field_operation_validators.py this package models.
const (
	rdmaValidator   = "generic_config_updater.field_operation_validators.rdma_config_update_validator"
	wredValidator   = "generic_config_updater.field_operation_validators.wred_profile_config_update_validator"
	bufferValidator = "generic_config_updater.field_operation_validators.buffer_profile_config_update_validator"
)

// KnownFunctions are the validators Check models.
var KnownFunctions = []string{rdmaValidator, wredValidator, bufferValidator}

// allowed is validator fn for one op: "" when it passes, else why not.
//
//   - rdma_config_update_validator is rdma_config_update_validator_common
//     with exact_field_match and remove_port: path elements holding a
//     digit are dropped and the rest must equal a scenario's field;
//   - wred_profile_config_update_validator (202505) is the common one
//     with neither: every element kept, the last one must equal a field;
//   - buffer_profile_config_update_validator (202511) passes add, remove
//     and replace of a whole entry (a path of table and key alone), and
//     is the common one with neither for a field.
func (v *Validators) allowed(fn string, scenarios []Scenario, o Op, asic, branch string) string {
	exact := true
	switch fn {
	case rdmaValidator:
	case bufferValidator:
		if len(o.Path) == 2 {
			if o.Op == "add" || o.Op == "remove" || o.Op == "replace" {
				return ""
			}
			return fmt.Sprintf("%s of a whole %s entry is not add, remove or replace", o.Op, o.Path[0])
		}
		exact = false
	case wredValidator:
		exact = false
	default:
		return fmt.Sprintf("fabricctl does not model GCU's validator %s", fn)
	}
	if asic == Unknown || asic == "" {
		return "its field validators do not know this switch's ASIC (HWSKU)"
	}
	var kept []string
	for _, e := range o.Path[1:] {
		if !exact || !strings.ContainsFunc(e, unicode.IsDigit) {
			kept = append(kept, e)
		}
	}
	cleaned := strings.ToLower(strings.Join(kept, "/"))
	matches := func(f, field string) bool {
		if exact {
			return f == field
		}
		return f[strings.LastIndexByte(f, '/')+1:] == field
	}
	fields := []string{cleaned}
	if m, ok := o.Value.(map[string]any); ok {
		fields = fields[:0]
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if cleaned != "" {
				fields = append(fields, cleaned+"/"+k)
			} else {
				fields = append(fields, k)
			}
		}
	}
	for _, f := range fields {
		var sc *Scenario
		for i := range scenarios {
			if slices.ContainsFunc(scenarios[i].Fields, func(field string) bool { return matches(f, field) }) {
				sc = &scenarios[i]
				break
			}
		}
		switch {
		case sc == nil:
			return fmt.Sprintf("field %q is in none of its %s scenarios", f, o.Path[0])
		case sc.Since[asic] == "":
			return fmt.Sprintf("%s (%q) is not allowed on ASIC %s", sc.Name, f, asic)
		case !slices.Contains(sc.Ops, o.Op):
			return fmt.Sprintf("%s allows %s of %q, not %s", sc.Name, strings.Join(sc.Ops, "/"), f, o.Op)
		case branch != "" && branch < sc.Since[asic]:
			return fmt.Sprintf("%s needs branch %s on %s, the image is %s", sc.Name, sc.Since[asic], asic, branch)
		}
	}
	return ""
}

// Watched lists the tables whose changes Check looks at: those with
// validators and those of IllegalRemoves.
func (v *Validators) Watched() map[string]bool {
	if v == nil {
		return nil
	}
	out := map[string]bool{}
	for t := range v.Tables {
		out[t] = true
	}
	for t := range v.Functions {
		out[t] = true
	}
	for _, p := range v.IllegalRemoves {
		if t, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/"); t != "" {
			out[t] = true
		}
	}
	return out
}
