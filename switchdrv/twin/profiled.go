package twin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fabricctl/fabricctl/internal/gcu"
	"github.com/fabricctl/fabricctl/internal/profile"
	"github.com/fabricctl/fabricctl/internal/yangcheck"
	"github.com/fabricctl/fabricctl/switchdrv/internal/jtree"
)

// DatastoreValidator validates a whole datastore (the JSON tree of one
// origin) after a Set, the way the device's management layer validates the
// candidate configuration before it commits. A non-nil error rejects the
// whole Set; its text is the device's reason.
type DatastoreValidator func(origin string, tree map[string]any) error

// YANGValidator validates a datastore against s the way the device of
// profile prof does (yangcheck.ValidateDatastore): the schema checks, then
// leafref require-instance, must, when, mandatory nodes and if-feature
// against the profile's feature set (nil prof: every released feature on).
//
// s must be the YANG of the profile's release (yangcheck.ReleaseSchema of
// prof.YANG.Release): with another release's, every Set is refused saying
// so, rather than judged by models the device does not run.
func YANGValidator(s *yangcheck.Schema, prof *profile.Profile) DatastoreValidator {
	if prof != nil && s.Release() != prof.YANG.Release {
		err := fmt.Errorf("profile %s speaks the YANG of release %s; this twin was given release %s's", prof.Name, prof.YANG.Release, s.Release())
		return func(string, map[string]any) error { return err }
	}
	opts := yangcheck.DatastoreOptions{Features: FeatureSet(s, prof)}
	return func(origin string, tree map[string]any) error {
		if vs := s.ValidateDatastore(origin, tree, opts); len(vs) > 0 {
			return vs
		}
		return nil
	}
}

// FeatureSet is prof's YANG feature set in the form ValidateDatastore takes
// ("module:feature" -> on), every feature of the profile's feature module
// listed; nil when the profile uses no feature module.
func FeatureSet(s *yangcheck.Schema, prof *profile.Profile) map[string]bool {
	if prof == nil || prof.Features.Module == "" {
		return nil
	}
	names := s.Features(prof.Features.Module)
	if names == nil {
		return nil
	}
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[prof.Features.Module+":"+n] = prof.FeatureOn(n)
	}
	return m
}

// profiled reports whether the twin imitates a release profile.
func (t *Twin) profiled() bool { return t.opts.Profile != nil }

// Profile is the release profile the twin imitates (nil for a bare twin).
func (t *Twin) Profile() *profile.Profile { return t.opts.Profile }

// loadFactory puts the profile's factory-default datastore in place.
func (t *Twin) loadFactory() error {
	origin, tree, err := t.opts.Profile.FactoryDatastore()
	if err != nil {
		return fmt.Errorf("twin %s: profile %s: %w", t.opts.Name, t.opts.Profile.Name, err)
	}
	if len(tree) > 0 {
		t.data[origin+"@"] = normalizeGo(tree)
	}
	return nil
}

// nativeWriteDisabled is sonic-gnmi's answer when gnmi_native_write=false
// (the telemetry container): gnmi_server/server.go Set.
var nativeWriteDisabled = status.Error(codes.Unimplemented, "GNMI native write is disabled")

// sonicConfig reports whether p is a CONFIG_DB write that sonic-gnmi hands
// to the generic config updater (mixed_db_client.go SetIncrementalConfig).
func (t *Twin) sonicConfig(p *gnmipb.Path) bool {
	es := p.GetElem()
	return t.profiled() && t.opts.Profile.Platform == "sonic" && p.GetOrigin() == "sonic-db" &&
		len(es) >= 1 && es[0].GetName() == "CONFIG_DB"
}

// sonicErr is an error the way sonic-gnmi returns it: a plain Go error from
// the Set handler, which gRPC reports as codes.Unknown.
func sonicErr(format string, a ...any) error {
	return status.Errorf(codes.Unknown, format, a...)
}

// goFmt prints a JSON tree the way Go's %v prints sonic-gnmi's
// map[string]interface{} (keys sorted), cut at 400 bytes.
func goFmt(v any) string {
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			b.WriteString("map[")
			for i, k := range slices.Sorted(maps.Keys(x)) {
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(k + ":")
				walk(x[k])
			}
			b.WriteByte(']')
		case []any:
			b.WriteByte('[')
			for i, e := range x {
				if i > 0 {
					b.WriteByte(' ')
				}
				walk(e)
			}
			b.WriteByte(']')
		default:
			fmt.Fprint(&b, x)
		}
	}
	walk(v)
	s := b.String()
	if len(s) > 400 {
		s = s[:400] + "...(cut by the twin)"
	}
	return s
}

// sonicWrite applies one replace or update under /CONFIG_DB/<ns> the way
// sonic-gnmi's JsonClient and the generic config updater do
// (sonic_data_client/json_client.go, mixed_db_client.go):
//   - Update (JSON patch "add") at TABLE/KEY stores the new hash whole; at
//     TABLE/KEY/field it sets one field; at TABLE it stores the table.
//   - Replace is Remove + Add since sonic-gnmi PR #239 (202411+): a key or
//     field that does not exist fails the whole Set with "Invalid entry";
//     before (202405) Replace was Add.
//   - GCU applies the patch with python jsonpatch: adding KEY to a TABLE
//     that CONFIG_DB does not have fails ("member 'TABLE' not found"), so
//     a write below an absent PFC_WD table fails; on 202511 `config
//     apply-patch` first adds the empty table (Write.AddsMissingTables),
//     and only GCU's field validators are left to refuse it.
func (t *Twin) sonicWrite(data map[string]any, p *gnmipb.Path, v any, replace bool) error {
	es := p.GetElem()
	ns := t.namespace(p)
	root, _ := data[ns].(map[string]any)
	if root == nil {
		root = map[string]any{}
		data[ns] = root
	}
	if len(es) < 3 {
		// /CONFIG_DB/<ns> as a whole: sonic-gnmi's full-config replace.
		m, ok := v.(map[string]any)
		if !ok {
			return sonicErr("Invalid table %v", goFmt(v))
		}
		db := map[string]any{}
		if len(es) == 2 {
			dbs, _ := root["CONFIG_DB"].(map[string]any)
			if dbs == nil {
				dbs = map[string]any{}
				root["CONFIG_DB"] = dbs
			}
			if replace {
				dbs[es[1].GetName()] = m
				return nil
			}
			if cur, ok := dbs[es[1].GetName()].(map[string]any); ok {
				db = cur
			}
			maps.Copy(db, m)
			dbs[es[1].GetName()] = db
			return nil
		}
		return sonicErr("Invalid db table Path %v", pathNames(es))
	}
	dbs, _ := root["CONFIG_DB"].(map[string]any)
	if dbs == nil {
		dbs = map[string]any{}
		root["CONFIG_DB"] = dbs
	}
	db, _ := dbs[es[1].GetName()].(map[string]any)
	if db == nil {
		db = map[string]any{}
		dbs[es[1].GetName()] = db
	}
	rest := pathNames(es[2:])
	tname := rest[0]
	table, haveTable := db[tname].(map[string]any)
	failMissing := replace && t.opts.Profile.Write.ReplaceMissingKey == profile.ReplaceMissingFail
	if !haveTable && !failMissing && len(rest) > 1 && t.opts.Profile.Write.AddsMissingTables {
		table, haveTable = map[string]any{}, true
		db[tname] = table
	}
	switch len(rest) {
	case 1:
		m, ok := v.(map[string]any)
		if !ok {
			return sonicErr("Invalid table %v", goFmt(v))
		}
		if failMissing && !haveTable {
			return sonicErr("Invalid database %v -> %v", tname, goFmt(db))
		}
		db[tname] = m
	case 2:
		m, ok := v.(map[string]any)
		if !ok {
			return sonicErr("Invalid entry %v", goFmt(v))
		}
		if !haveTable {
			if failMissing {
				return sonicErr("Invalid database %v -> %v", tname, goFmt(db))
			}
			return sonicErr("ApplyPatchDb: jsonpatch add /%s/%s: member '%s' not found in the running CONFIG_DB (the table does not exist)", tname, rest[1], tname)
		}
		if _, ok := table[rest[1]]; !ok && failMissing {
			return sonicErr("Invalid entry %v", goFmt(table))
		}
		table[rest[1]] = m
	case 3:
		s, isStr := v.(string)
		l, isList := v.([]any)
		if !isStr && !isList {
			if n, ok := v.(json.Number); ok {
				s, isStr = string(n), true
			} else {
				return sonicErr("Invalid field %v", goFmt(v))
			}
		}
		if !haveTable {
			if failMissing {
				return sonicErr("Invalid database %v -> %v", tname, goFmt(db))
			}
			return sonicErr("ApplyPatchDb: jsonpatch add /%s/%s/%s: member '%s' not found in the running CONFIG_DB (the table does not exist)", tname, rest[1], rest[2], tname)
		}
		entry, haveEntry := table[rest[1]].(map[string]any)
		if !haveEntry {
			if failMissing {
				return sonicErr("Invalid entry %v", goFmt(table))
			}
			entry = map[string]any{}
			table[rest[1]] = entry
		}
		if _, ok := entry[rest[2]]; !ok && failMissing {
			return sonicErr("Invalid entry %v", goFmt(entry))
		}
		if isStr {
			entry[rest[2]] = s
		} else {
			entry[rest[2]] = l
		}
	default:
		return sonicErr("Invalid db table Path %v", rest)
	}
	return nil
}

func pathNames(es []*gnmipb.PathElem) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.GetName()
	}
	return out
}

// portCritical returns the port a CONFIG_DB key of a port-critical table
// belongs to ("" when the table is not port-critical): generic_config_updater
// patch_sorter.py takes PORT|p admin-down around changes to BUFFER_PG|p|*,
// BUFFER_PORT_EGRESS_PROFILE_LIST|p, BUFFER_PORT_INGRESS_PROFILE_LIST|p,
// BUFFER_QUEUE|p|*, PORT_QOS_MAP|p and QUEUE|p|*.
func (t *Twin) portCritical(table, key string) string {
	if !slices.Contains(t.opts.Profile.Write.PortCriticalTables, table) {
		return ""
	}
	port, _, _ := strings.Cut(key, "|")
	return port
}

// countFlaps compares CONFIG_DB before and after a Set and counts one flap
// per port whose port-critical entries changed while the port was admin up
// (an admin-down port is not taken down again: patch_sorter.py only moves
// ports whose admin_status is "up").
func (t *Twin) countFlaps(before, after map[string]any) []string {
	if !t.profiled() || len(t.opts.Profile.Write.PortCriticalTables) == 0 {
		return nil
	}
	b := configDB(before)
	a := configDB(after)
	ports := map[string]bool{}
	for _, table := range t.opts.Profile.Write.PortCriticalTables {
		bt, _ := b[table].(map[string]any)
		at, _ := a[table].(map[string]any)
		for _, k := range slices.Collect(maps.Keys(bt)) {
			if !jsonEqual(bt[k], at[k]) {
				ports[t.portCritical(table, k)] = true
			}
		}
		for k := range at {
			if _, ok := bt[k]; !ok {
				ports[t.portCritical(table, k)] = true
			}
		}
	}
	var out []string
	portTable, _ := b["PORT"].(map[string]any)
	for p := range ports {
		if p == "" {
			continue
		}
		if e, ok := portTable[p].(map[string]any); ok && e["admin_status"] != nil && e["admin_status"] != "up" {
			continue
		}
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func configDB(data map[string]any) map[string]any {
	root, _ := data["sonic-db@"].(map[string]any)
	dbs, _ := root["CONFIG_DB"].(map[string]any)
	db, _ := dbs["localhost"].(map[string]any)
	return db
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// FlapTable is the twin-only STATE_DB table (target STATE_DB, origin
// sonic-db) where a SONiC twin counts the port flaps the generic config
// updater caused: /TWIN_PORT_FLAP/<port>/count. A real SONiC logs the
// admin-down/up; no source read here shows it counting them, so the table
// is the twin's own and says so by its name.
const FlapTable = "TWIN_PORT_FLAP"

// PortFlaps returns how often each port was flapped by port-critical
// changes (SONiC profiles; empty otherwise).
func (t *Twin) PortFlaps() map[string]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.flaps)
}

func (t *Twin) recordFlaps(ports []string) {
	if len(ports) == 0 {
		return
	}
	if t.flaps == nil {
		t.flaps = map[string]int{}
	}
	st := t.tree("sonic-db@STATE_DB")
	tbl, _ := st[FlapTable].(map[string]any)
	if tbl == nil {
		tbl = map[string]any{}
		st[FlapTable] = tbl
	}
	for _, p := range ports {
		t.flaps[p]++
		tbl[p] = map[string]any{"count": strconv.Itoa(t.flaps[p])}
	}
}

// validate runs the datastore validator over every namespace the Set
// touched; the error is the device's rejection of the whole Set.
func (t *Twin) validate(data map[string]any, touched map[string]bool) error {
	if t.opts.Validator == nil {
		return nil
	}
	for _, ns := range slices.Sorted(maps.Keys(touched)) {
		origin, target, _ := strings.Cut(ns, "@")
		if origin == "cli" || target != "" {
			continue
		}
		tree, _ := data[ns].(map[string]any)
		if tree == nil {
			tree = map[string]any{}
		}
		if err := t.opts.Validator(origin, tree); err != nil {
			if t.opts.Profile != nil && t.opts.Profile.Platform == "sonic" {
				// GCU validates the simulated config against sonic-yang and
				// fails ApplyPatchDb; sonic-gnmi returns the error as is.
				return sonicErr("ApplyPatchDb: Given patch will produce invalid config: %v", err)
			}
			return status.Errorf(codes.InvalidArgument, "%v", err)
		}
	}
	return nil
}

// gcuFieldOperations refuses a SONiC Set whose effect on CONFIG_DB the
// generic config updater's field-operation validators refuse (profile
// write.gcu; internal/gcu has the rules and their sources). GCU runs them
// first, on the diff of the whole CONFIG_DB before and after the patch
// (generic_updater.py PatchApplier.apply: validate_field_operation before
// the empty-table check and the YANG validation), and names the ASIC from
// DEVICE_METADATA|localhost hwsku. The image's build_version is not
// modelled: community images carry no 8-digit branch, so GCU compares no
// version on them.
func (t *Twin) gcuFieldOperations(before, after map[string]any) error {
	if !t.profiled() || t.opts.Profile.Write.GCU == nil {
		return nil
	}
	v := t.opts.Profile.Write.GCU
	b, a := configDB(before), configDB(after)
	r := v.Check(gcu.Diff(b, a, v.Watched()), v.ASIC(hwsku(b)), gcu.Branch(t.buildVersion()))
	if r == nil {
		return nil
	}
	return sonicErr("ApplyPatchDb: Failed to apply patch: %s", r.Text)
}

// buildVersion is the build_version the twin reports ("" for none).
func (t *Twin) buildVersion() string {
	if t.opts.NoBuildVersion {
		return ""
	}
	if t.opts.BuildVersion != "" {
		return t.opts.BuildVersion
	}
	return t.opts.Profile.Release + ".0-twin"
}

// hwsku is DEVICE_METADATA|localhost hwsku of a CONFIG_DB tree.
func hwsku(db map[string]any) string {
	md, _ := db["DEVICE_METADATA"].(map[string]any)
	lh, _ := md["localhost"].(map[string]any)
	s, _ := lh["hwsku"].(string)
	return s
}

// emptyTables refuses a SONiC Set that leaves a CONFIG_DB table with no
// keys by deleting its keys one by one: GCU (generic_updater.py) raises
// EmptyTableError since empty tables do not show up in CONFIG_DB; deleting
// the table itself is fine. (The twin drops emptied containers, so a table
// that was there and is gone without a table-level delete was emptied.)
func (t *Twin) emptyTables(before, after map[string]any, deletes []*gnmipb.Path) error {
	if len(deletes) == 0 {
		return nil
	}
	b, a := configDB(before), configDB(after)
	tableDeleted := map[string]bool{}
	keyDeleted := map[string]bool{}
	for _, p := range deletes {
		es := pathNames(p.GetElem())
		switch {
		case len(es) == 3:
			tableDeleted[es[2]] = true
		case len(es) > 3:
			keyDeleted[es[2]] = true
		}
	}
	var empty []string
	for tname := range keyDeleted {
		if _, was := b[tname]; !was || tableDeleted[tname] {
			continue
		}
		if _, is := a[tname]; !is {
			empty = append(empty, tname)
		}
	}
	if len(empty) == 0 {
		return nil
	}
	sort.Strings(empty)
	s := ""
	if len(empty) != 1 {
		s = "s"
	}
	return sonicErr("ApplyPatchDb: localhost: given patch is not valid because it will result in empty tables which is not allowed in ConfigDb. Table%s: %s",
		s, strings.Join(empty, ", "))
}

// readTree is the datastore of ns as the target reports it: with the YANG
// defaults populated or trimmed (Options.Defaults) for the default origin.
func (t *Twin) readTree(ns string) map[string]any {
	tree := t.tree(ns)
	if t.opts.Defaults == "" || ns != "@" {
		return tree
	}
	view, _ := jtree.Clone(tree).(map[string]any)
	return t.opts.Schema.Defaults(view, t.opts.Defaults == profile.TrimDefaults)
}

// DefaultsMode is how the twin reports YANG default leaves on Get and
// Subscribe ("" = as written).
func (t *Twin) DefaultsMode() string { return t.opts.Defaults }
