package sonic

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/internal/gcu"
	"github.com/fabricctl/fabricctl/internal/profile"
	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/switchdrv"
)

// Plan-time refinement: the compiled payload (whole hashes per key) is
// rewritten for what CONFIG_DB already holds, because sonic-gnmi applies a
// Set through the generic config updater (GCU), whose behaviour makes a
// blind payload harmful:
//
//   - GCU's patch sorter takes a port admin-down around any change to
//     BUFFER_PG|p|*, BUFFER_QUEUE|p|*, BUFFER_PORT_*_PROFILE_LIST|p,
//     PORT_QOS_MAP|p and QUEUE|p|* (sonic-utilities
//     generic_config_updater/patch_sorter.py, RequiredValueIdentifier):
//     keys that already hold what the intent wants are not written, keys
//     that differ get field-level updates of only what differs, and plan
//     names the ports the Set will flap (issue 10 item 1);
//   - since sonic-gnmi PR #239 (202411+) Replace of a missing key fails the
//     whole Set: missing keys are created with Update, Replace is used only
//     for keys that exist (item 3);
//   - buffer templates write key ranges (BUFFER_PG|p|3-4,
//     BUFFER_QUEUE|p|0-2): the same ranges are written, or an overlapping
//     range is deleted in the same Set and its other priorities kept per
//     priority (item 4);
//   - PFC_WD exists only when the watchdog was enabled at boot, and GCU
//     refuses to create it (item 6);
//   - FABRICCTL_* objects the intent no longer produces are deleted once
//     nothing references them (item 17);
//   - what a mode that sends pause left on a port that now sends none
//     (a lossless priority group, PORT pfc_asym on after semi-lossless)
//     is taken away: nothing on the switch does it (staleLosslessPGs,
//     pfcAsymOff).

// flapTables are the tables whose keys GCU changes only with the port down
// (patch_sorter.py: requiring_patterns of PORT|@|admin_status).
var flapTables = map[string]bool{
	"BUFFER_PG": true, "BUFFER_QUEUE": true, "PORT_QOS_MAP": true, "QUEUE": true,
	"BUFFER_PORT_INGRESS_PROFILE_LIST": true, "BUFFER_PORT_EGRESS_PROFILE_LIST": true,
}

// mergeTables are the tables whose existing entries fabricctl updates
// field by field, keeping the fields it does not manage: PFC_WD|<port> is
// pfcwd's, and 202511's `pfcwd start_default` adds pfc_stat_history to it
// (sonic-utilities c0838d7f6, PR #3779), which a whole-entry write would
// remove.
var mergeTables = map[string]bool{"PFC_WD": true}

// rangeTables key a port's priorities as "port|n" or "port|a-b".
var rangeTables = []string{"BUFFER_PG", "BUFFER_QUEUE", "QUEUE"}

// discoverTables are read whole at plan time.
var discoverTables = []string{
	"BUFFER_PG", "BUFFER_PORT_EGRESS_PROFILE_LIST", "BUFFER_PORT_INGRESS_PROFILE_LIST",
	"BUFFER_PROFILE", "BUFFER_QUEUE", "CABLE_LENGTH", "DEVICE_METADATA", "DSCP_TO_TC_MAP", "FLEX_COUNTER_TABLE",
	"MAP_PFC_PRIORITY_TO_QUEUE", "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", "PFC_WD", "PORT",
	"PORT_QOS_MAP", "QUEUE", "SCHEDULER", "TC_TO_PRIORITY_GROUP_MAP", "TC_TO_QUEUE_MAP", "WRED_PROFILE",
}

// owned says which keys of a table fabricctl created and may delete.
func owned(table, key string) bool {
	switch table {
	case "BUFFER_PROFILE":
		return strings.HasPrefix(key, bufferPrefix)
	case "WRED_PROFILE":
		return strings.HasPrefix(key, wredPrefix)
	case "SCHEDULER":
		return strings.HasPrefix(key, schedulerPrefix)
	case "DSCP_TO_TC_MAP", "TC_TO_QUEUE_MAP", "TC_TO_PRIORITY_GROUP_MAP", "MAP_PFC_PRIORITY_TO_QUEUE", "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP":
		return key == MapName
	}
	return false
}

// Discover implements switchdrv.Refiner: the tables the payload touches or
// depends on, read whole.
func (Platform) Discover(d *switchdrv.Desired) []*gnmipb.Path {
	out := make([]*gnmipb.Path, len(discoverTables))
	for i, t := range discoverTables {
		out[i] = path(t)
	}
	return out
}

type hash = map[string]string

// db is the part of CONFIG_DB plan read: table -> key -> field -> value.
type db map[string]map[string]hash

func readDB(read func(*gnmipb.Path) (any, bool)) db {
	out := db{}
	for _, t := range discoverTables {
		v, ok := read(path(t))
		m, _ := v.(map[string]any)
		if !ok || m == nil {
			continue
		}
		tab := map[string]hash{}
		for k, kv := range m {
			fields, _ := kv.(map[string]any)
			h := hash{}
			for f, fv := range fields {
				h[f] = str(fv)
			}
			tab[k] = h
		}
		out[t] = tab
	}
	return out
}

func str(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// want is the compiled payload as CONFIG_DB operations.
type want struct {
	keys   map[string]map[string]hash // table -> key -> whole hash
	fields map[string]map[string]hash // table -> key -> merged fields
	dels   map[string]map[string]bool // table -> key -> delete
	order  []string                   // "table|key" in compile order, for a stable payload
	seen   map[string]bool
}

func (w *want) note(t, k string) {
	if id := t + "\x00" + k; !w.seen[id] {
		w.seen[id] = true
		w.order = append(w.order, id)
	}
}

func (w *want) setKey(t, k string, h hash) {
	if w.keys[t] == nil {
		w.keys[t] = map[string]hash{}
	}
	w.keys[t][k] = h
	w.note(t, k)
}

func (w *want) setField(t, k, f, v string) {
	if w.fields[t] == nil {
		w.fields[t] = map[string]hash{}
	}
	if w.fields[t][k] == nil {
		w.fields[t][k] = hash{}
	}
	w.fields[t][k][f] = v
	w.note(t, k)
}

func (w *want) del(t, k string) {
	if w.dels[t] == nil {
		w.dels[t] = map[string]bool{}
	}
	w.dels[t][k] = true
	w.note(t, k)
}

// elems returns table, key and field ("" when absent) of a CONFIG_DB path.
func elems(p *gnmipb.Path) (table, key, field string, err error) {
	e := p.GetElem()
	if len(e) < 4 || len(e) > 5 || e[0].GetName() != "CONFIG_DB" {
		return "", "", "", fmt.Errorf("unexpected path %v", p)
	}
	table, key = e[2].GetName(), e[3].GetName()
	if len(e) == 5 {
		field = e[4].GetName()
	}
	return table, key, field, nil
}

func decodeValue(u *gnmipb.Update) (any, error) {
	var v any
	if err := json.Unmarshal(u.GetVal().GetJsonIetfVal(), &v); err != nil {
		return nil, err
	}
	return v, nil
}

func parseWant(d *switchdrv.Desired) (*want, error) {
	w := &want{keys: map[string]map[string]hash{}, fields: map[string]map[string]hash{}, dels: map[string]map[string]bool{}, seen: map[string]bool{}}
	for _, u := range d.Replaces {
		t, k, f, err := elems(u.GetPath())
		if err != nil {
			return nil, err
		}
		v, err := decodeValue(u)
		if err != nil {
			return nil, err
		}
		m, ok := v.(map[string]any)
		if f != "" || !ok {
			return nil, fmt.Errorf("replace %s|%s: want a whole hash", t, k)
		}
		h := hash{}
		for f, fv := range m {
			h[f] = str(fv)
		}
		w.setKey(t, k, h)
	}
	for _, u := range d.Updates {
		t, k, f, err := elems(u.GetPath())
		if err != nil {
			return nil, err
		}
		v, err := decodeValue(u)
		if err != nil {
			return nil, err
		}
		if f != "" {
			w.setField(t, k, f, str(v))
			continue
		}
		m, _ := v.(map[string]any)
		for f, fv := range m {
			w.setField(t, k, f, str(fv))
		}
	}
	for _, p := range d.Deletes {
		t, k, f, err := elems(p)
		if err != nil || f != "" {
			return nil, fmt.Errorf("delete %v: want a key", p)
		}
		w.del(t, k)
	}
	return w, nil
}

// prioRange parses the priority part of "port|3" or "port|3-4".
func prioRange(key string) (port string, lo, hi int, ok bool) {
	i := strings.LastIndexByte(key, '|')
	if i < 0 {
		return "", 0, 0, false
	}
	port, r := key[:i], key[i+1:]
	a, b, isRange := strings.Cut(r, "-")
	lo, err1 := strconv.Atoi(a)
	hi, err2 := lo, error(nil)
	if isRange {
		hi, err2 = strconv.Atoi(b)
	}
	if err1 != nil || err2 != nil || lo < 0 || hi < lo || hi > 15 {
		return "", 0, 0, false
	}
	return port, lo, hi, true
}

func rangeKey(port string, lo, hi int) string {
	if lo == hi {
		return port + "|" + strconv.Itoa(lo)
	}
	return port + "|" + strconv.Itoa(lo) + "-" + strconv.Itoa(hi)
}

// referencesOwned says whether h names one of fabricctl's objects.
func referencesOwned(h hash) bool {
	for _, v := range h {
		if strings.HasPrefix(refName(v), "FABRICCTL") {
			return true
		}
	}
	return false
}

// refName strips the old "[TABLE|name]" reference form.
func refName(v string) string {
	v = strings.TrimSuffix(strings.TrimPrefix(v, "["), "]")
	if i := strings.IndexByte(v, '|'); i >= 0 {
		v = v[i+1:]
	}
	return v
}

// normaliseRanges makes the wanted per-priority keys of a range table use
// the key ranges already on the switch (item 4): a range whose priorities
// all want the same hash is written as that range; a range that overlaps
// differently is deleted in the same Set and its other priorities keep
// their hash under per-priority keys. Keys of fabricctl's own objects on
// priorities the intent no longer names are deleted (item 17).
func normaliseRanges(w *want, have db, table string, lossless map[string][]int) {
	wk := w.keys[table]
	if wk == nil {
		wk = map[string]hash{}
	}
	ports := map[string]bool{}
	for k := range wk {
		if p, _, _, ok := prioRange(k); ok {
			ports[p] = true
		}
	}
	existing := slices.Sorted(maps.Keys(have[table]))
	for _, k := range existing {
		port, lo, hi, ok := prioRange(k)
		if !ok || !ports[port] {
			continue
		}
		if _, same := wk[k]; same {
			continue // the very key is wanted
		}
		var wanted []int
		for n := lo; n <= hi; n++ {
			if _, ok := wk[rangeKey(port, n, n)]; ok {
				wanted = append(wanted, n)
			}
		}
		old := have[table][k]
		switch {
		case len(wanted) == 0:
			if referencesOwned(old) {
				w.del(table, k) // fabricctl's, on priorities no longer wanted
			}
			continue
		case !referencesOwned(old) && allHold(wk, port, wanted, old):
			// The range already gives every wanted priority what the
			// intent wants, and its other priorities are not ours:
			// nothing to write.
			for _, n := range wanted {
				delete(wk, rangeKey(port, n, n))
			}
			continue
		case len(wanted) == hi-lo+1 && lo < hi && allEqual(wk, port, lo, hi):
			h := wk[rangeKey(port, lo, lo)]
			for n := lo; n <= hi; n++ {
				delete(wk, rangeKey(port, n, n))
			}
			w.setKey(table, k, h)
			continue
		}
		// Overlap with different wishes: remove the range, keep the
		// priorities the intent does not name with their hash.
		w.del(table, k)
		if referencesOwned(old) {
			continue
		}
		for n := lo; n <= hi; n++ {
			if _, ok := wk[rangeKey(port, n, n)]; ok {
				continue
			}
			h := maps.Clone(old)
			if !slices.Contains(lossless[port], n) && w.fields["PORT"][port] != nil {
				// A lossless setting of the range does not pass to a
				// priority of an inventory port that sends no pause for
				// it: no lossless priority group (its headroom would be
				// reserved for nothing), the lossy egress profile.
				switch {
				case table == "BUFFER_PG" && isLosslessPG(have, h):
					continue
				case table == "BUFFER_QUEUE" && h["profile"] == egressLossless:
					lp := lossyQueueProfile(have, port)
					if lp == "" {
						break
					}
					h["profile"] = lp
				}
			}
			w.setKey(table, rangeKey(port, n, n), h)
		}
	}
}

// losslessOf maps each inventory port (a PORT field written) to the
// priorities it sends pause for: the wanted PORT_QOS_MAP pfc_enable
// (none in lossy and semi-lossless).
func losslessOf(w *want) map[string][]int {
	out := map[string][]int{}
	for port := range w.fields["PORT"] {
		for _, s := range strings.Split(w.keys["PORT_QOS_MAP"][port]["pfc_enable"], ",") {
			if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
				out[port] = append(out[port], n)
			}
		}
	}
	return out
}

// isLosslessPG says whether a BUFFER_PG hash names a lossless profile: one
// with an xoff, the headroom after XOFF (ingress_lossy_profile has none).
func isLosslessPG(have db, h hash) bool {
	return have["BUFFER_PROFILE"][refName(h["profile"])]["xoff"] != ""
}

// lossyQueueProfile is the egress profile of port's lossy queues as its
// buffer template made them (buffers_config.j2: BUFFER_QUEUE <port>|0-2
// and |5-6), the first in key order of the port's BUFFER_QUEUE keys that
// is not egress_lossless_profile; "" when there is none.
func lossyQueueProfile(have db, port string) string {
	for _, k := range slices.Sorted(maps.Keys(have["BUFFER_QUEUE"])) {
		if p, _, _, ok := prioRange(k); ok && p == port {
			if prof := have["BUFFER_QUEUE"][k]["profile"]; prof != "" && refName(prof) != egressLossless {
				return prof
			}
		}
	}
	return ""
}

// coversNone says whether none of prios lies in lo..hi.
func coversNone(prios []int, lo, hi int) bool {
	return !slices.ContainsFunc(prios, func(p int) bool { return lo <= p && p <= hi })
}

// staleLosslessQueues points the BUFFER_QUEUE keys of inventory ports that
// hold egress_lossless_profile on priorities none of which the port sends
// pause for (an earlier intent's lossless class, now moved or lossy) at the
// port's lossy egress profile: fabricctl gave them the lossless one
// (compile's BUFFER_QUEUE, issue 10 item 7), and the template's <port>|3-4
// where neither 3 nor 4 is lossless. A range that holds a lossless
// priority is kept whole, as the template's BUFFER_PG <port>|3-4 is.
func staleLosslessQueues(w *want, have db, lossless map[string][]int, notes *[]string) {
	var ports []string
	for _, k := range slices.Sorted(maps.Keys(have["BUFFER_QUEUE"])) {
		port, lo, hi, ok := prioRange(k)
		if !ok || w.fields["PORT"][port] == nil || w.dels["BUFFER_QUEUE"][k] || w.keys["BUFFER_QUEUE"][k] != nil {
			continue
		}
		if refName(have["BUFFER_QUEUE"][k]["profile"]) != egressLossless || !coversNone(lossless[port], lo, hi) {
			continue
		}
		lp := lossyQueueProfile(have, port)
		if lp == "" {
			continue
		}
		h := maps.Clone(have["BUFFER_QUEUE"][k])
		h["profile"] = lp
		w.setKey("BUFFER_QUEUE", k, h)
		if !slices.Contains(ports, port) {
			ports = append(ports, port)
		}
	}
	if len(ports) > 0 {
		*notes = append(*notes, fmt.Sprintf("egress queues of %s whose priorities send no pause in this intent get the ports' lossy egress profile back in place of egress_lossless_profile", strings.Join(sortPorts(ports), ", ")))
	}
}

func allHold(wk map[string]hash, port string, prios []int, h hash) bool {
	for _, n := range prios {
		if !maps.Equal(wk[rangeKey(port, n, n)], h) {
			return false
		}
	}
	return true
}

func allEqual(wk map[string]hash, port string, lo, hi int) bool {
	first := wk[rangeKey(port, lo, lo)]
	for n := lo + 1; n <= hi; n++ {
		if !maps.Equal(first, wk[rangeKey(port, n, n)]) {
			return false
		}
	}
	return true
}

// Refine implements switchdrv.Refiner.
func (Platform) Refine(d *switchdrv.Desired, read func(*gnmipb.Path) (any, bool)) error {
	have := readDB(read)
	d.Notes = slices.DeleteFunc(d.Notes, func(n string) bool { return strings.HasPrefix(n, renderGCUNote) })
	w, err := parseWant(d)
	if err != nil {
		return err
	}
	if l := portsExist(w, have); l != nil {
		// Nothing else can be planned for ports the switch does not
		// have: the payload stays as compiled, and plan and apply stop
		// at the switch (diff reports it as drift).
		d.Lacks = append(d.Lacks, *l)
		return nil
	}
	var notes []string

	// PFC_WD (item 6). GCU validates a patch it derives from the config
	// diff (gu_common.py validate_field_operation: jsonpatch.from_diff);
	// a new PFC_WD table or a new PFC_WD|GLOBAL arrives as one add whose
	// value keys never match the field list of
	// gcu_field_operation_validators.conf.json ("global/poll_interval",
	// "action", ...), so GCU refuses to create them on every ASIC. Only
	// per-port entries and the GLOBAL field of an existing table can be
	// written.
	// What the watchdog lacks that the config updater cannot write is
	// drift with the pfcwd commands that make it (watchdogLack).
	if wantsTable(w, "PFC_WD") {
		switch {
		case len(have["PFC_WD"]) == 0:
			d.Lacks = append(d.Lacks, watchdogLack(w, "CONFIG_DB has no PFC_WD table: the watchdog was not started (SONiC creates PFC_WD only when it starts, at boot with DEVICE_METADATA default_pfcwd_status enable, or with the pfcwd CLI), and SONiC's config updater refuses to create it (sonic-utilities generic_config_updater field_operation_validators.py), so apply leaves it out", true))
			dropTable(w, "PFC_WD")
		case have["PFC_WD"]["GLOBAL"] == nil && w.fields["PFC_WD"]["GLOBAL"] != nil:
			d.Lacks = append(d.Lacks, watchdogLack(w, "CONFIG_DB has no PFC_WD|GLOBAL and SONiC's config updater refuses to create it, so apply leaves the poll interval out", false))
			delete(w.fields["PFC_WD"], "GLOBAL")
		}
	}
	// GCU's field-operation validators (gcurules.go).
	g := gcuOf(d, have)
	if g.v != nil && wantsTable(w, "PFC_WD") {
		probe := gcu.Op{Op: "replace", Path: []string{"PFC_WD", "Ethernet0", "action"}, Value: "drop"}
		if r := g.check([]gcu.Op{probe}); r != nil && !watchdogHolds(w, have) {
			d.Lacks = append(d.Lacks, watchdogLack(w, fmt.Sprintf("SONiC's config updater refuses PFC_WD changes on this switch (%s: %s), so apply leaves the watchdog out", r.Reason, r.Text), true))
			dropTable(w, "PFC_WD")
		}
	}
	if g.v != nil {
		n, drop, err := gcuRewrite(w, have, g)
		if err != nil {
			return err
		}
		notes = append(notes, n...)
		for _, pre := range drop {
			d.Notes = slices.DeleteFunc(d.Notes, func(n string) bool { return strings.HasPrefix(n, pre) })
		}
	}
	// BUFFER_QUEUE (item 7) points lossless priorities at the template's
	// egress_lossless_profile; without that profile there is nothing to
	// point at.
	if wantsTable(w, "BUFFER_QUEUE") && have["BUFFER_PROFILE"][egressLossless] == nil {
		dropTable(w, "BUFFER_QUEUE")
		notes = append(notes, "BUFFER_QUEUE not managed: the switch has no BUFFER_PROFILE|"+egressLossless+" (its buffer template did not create one); lossless priorities other than 3 and 4 may keep a lossy egress profile")
	}
	// The priorities each inventory port sends pause for: its wanted
	// PORT_QOS_MAP pfc_enable.
	lossless := losslessOf(w)
	for _, t := range rangeTables {
		normaliseRanges(w, have, t, lossless)
	}
	notes = append(notes, staleLosslessPGs(w, have, lossless)...)
	staleLosslessQueues(w, have, lossless, &notes)
	pfcAsymOff(w, have)
	deleteStale(w, have, &notes)
	if g.v != nil {
		gcuKeepStale(w, g, &notes)
		if err := gcuFinalCheck(w, have, g); err != nil {
			return err
		}
	}

	// Emit.
	d.Replaces, d.Updates, d.Deletes = nil, nil, nil
	flaps := map[string]bool{}
	flap := func(t, k string) {
		if flapTables[t] {
			p := k
			if i := strings.IndexByte(k, '|'); i >= 0 {
				p = k[:i]
			}
			flaps[p] = true
		}
	}
	// Keys of a table CONFIG_DB does not have are created with the table
	// in one update at the table: GCU applies the patch with python
	// jsonpatch, whose add of TABLE/KEY fails when TABLE is missing.
	newTables := map[string]map[string]any{}
	var newOrder []string
	create := func(t, k string, h hash) {
		if have[t] != nil {
			d.Updates = append(d.Updates, hashUpdate(t, k, h))
			return
		}
		if newTables[t] == nil {
			newTables[t] = map[string]any{}
			newOrder = append(newOrder, t)
		}
		newTables[t][k] = h
	}
	for _, id := range w.order {
		t, k, _ := strings.Cut(id, "\x00")
		obs, exists := have[t][k]
		if w.dels[t][k] {
			if exists {
				d.Deletes = append(d.Deletes, path(t, k))
				flap(t, k)
			}
			continue
		}
		if h, ok := w.keys[t][k]; ok {
			switch {
			case !exists:
				create(t, k, h)
				flap(t, k)
			case maps.Equal(h, obs):
			case flapTables[t]:
				fieldDiff(d, t, k, h, obs, true)
				flap(t, k)
			case mergeTables[t]:
				fieldDiff(d, t, k, h, obs, false)
			default:
				d.Replaces = append(d.Replaces, hashUpdate(t, k, h))
				if t == "BUFFER_PROFILE" {
					notes = append(notes, fmt.Sprintf("BUFFER_PROFILE|%s exists with other fields; SONiC's config updater refuses field changes of buffer profiles on most ASICs (sonic-utilities generic_config_updater/gcu_field_operation_validators.conf.json, BUFFER_PROFILE): if the Set is refused, delete the profile's users and the profile by hand, or change the intent so the profile gets a new name", k))
				}
			}
			continue
		}
		if h, ok := w.fields[t][k]; ok {
			if !exists {
				create(t, k, h)
				flap(t, k)
				continue
			}
			if fieldDiff(d, t, k, h, obs, false) {
				flap(t, k)
			}
		}
	}
	for _, t := range newOrder {
		b, err := json.Marshal(newTables[t])
		if err != nil {
			return err
		}
		d.Updates = append(d.Updates, &gnmipb.Update{Path: path(t), Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: b}}})
	}
	if len(flaps) > 0 {
		ps := slices.Sorted(maps.Keys(flaps))
		notes = append(notes, fmt.Sprintf("this Set flaps %d port(s): %s (SONiC's config updater takes a port admin-down while it changes its PORT_QOS_MAP, QUEUE, BUFFER_PG, BUFFER_QUEUE or BUFFER_PORT_*_PROFILE_LIST keys: sonic-utilities generic_config_updater/patch_sorter.py)", len(ps), strings.Join(sortPorts(ps), ", ")))
	}
	d.Notes = append(d.Notes, notes...)
	return nil
}

// egressLossless is the egress profile SONiC's buffer templates give lossless
// queues (sonic-buildimage files/build_templates/buffers_config.j2).
const egressLossless = "egress_lossless_profile"

func wantsTable(w *want, t string) bool { return len(w.keys[t]) > 0 || len(w.fields[t]) > 0 }

func dropTable(w *want, t string) {
	delete(w.keys, t)
	delete(w.fields, t)
}

func hashUpdate(t, k string, h hash) *gnmipb.Update {
	return &gnmipb.Update{Path: path(t, k), Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: encodeHash(fromMap(h))}}}
}

// fieldDiff appends field-level updates of the fields of want that differ
// from have (and, when whole, deletes of fields only on the switch); it
// says whether anything differs.
func fieldDiff(d *switchdrv.Desired, t, k string, want, have hash, whole bool) bool {
	changed := false
	for _, f := range slices.Sorted(maps.Keys(want)) {
		if v, ok := have[f]; ok && v == want[f] {
			continue
		}
		changed = true
		d.Updates = append(d.Updates, &gnmipb.Update{Path: path(t, k, f), Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: appendString(nil, want[f])}}})
	}
	if whole {
		for _, f := range slices.Sorted(maps.Keys(have)) {
			if _, ok := want[f]; !ok {
				changed = true
				d.Deletes = append(d.Deletes, path(t, k, f))
			}
		}
	}
	return changed
}

// deleteStale deletes the FABRICCTL objects the intent no longer produces
// once nothing left references them (item 17); one still referenced (by a
// port outside the inventory, say) is kept and named in a note.
func deleteStale(w *want, have db, notes *[]string) {
	final := finalRefs(w, have)
	for _, t := range slices.Sorted(maps.Keys(have)) {
		for _, k := range slices.Sorted(maps.Keys(have[t])) {
			if !owned(t, k) || w.keys[t][k] != nil || w.fields[t][k] != nil || w.dels[t][k] {
				continue
			}
			if by := final[k]; len(by) > 0 {
				*notes = append(*notes, fmt.Sprintf("%s|%s is no longer wanted but is kept: still used by %s", t, k, strings.Join(by, ", ")))
				continue
			}
			w.del(t, k)
		}
	}
}

// finalRefs maps each name to the keys that reference it once the Set is
// applied (tableAfter), in table and key order; owned keys do not count.
func finalRefs(w *want, have db) map[string][]string {
	tables := map[string]bool{}
	for _, m := range []map[string]map[string]hash{have, w.keys, w.fields} {
		for t := range m {
			tables[t] = true
		}
	}
	refs := map[string][]string{}
	for _, t := range slices.Sorted(maps.Keys(tables)) {
		after := tableAfter(w, have, t)
		for _, k := range slices.Sorted(maps.Keys(after)) {
			if owned(t, k) {
				continue
			}
			h := after[k]
			for _, f := range slices.Sorted(maps.Keys(h)) {
				for _, v := range strings.Split(h[f], ",") {
					n := refName(strings.TrimSpace(v))
					refs[n] = append(refs[n], t+"|"+k)
				}
			}
		}
	}
	return refs
}

// tableAfter is table t of CONFIG_DB as the refined Set leaves it: what
// the switch has less the deleted keys, each written key as written (a key
// write replaces its hash), and the field writes merged into what is there
// then (a field write to a missing key creates it). Its hashes may be
// have's or w's own: they are not to be changed.
func tableAfter(w *want, have db, t string) map[string]hash {
	after := make(map[string]hash, len(have[t])+len(w.keys[t]))
	for k, h := range have[t] {
		if !w.dels[t][k] {
			after[k] = h
		}
	}
	maps.Copy(after, w.keys[t])
	for k, f := range w.fields[t] {
		h := maps.Clone(after[k])
		if h == nil {
			h = hash{}
		}
		maps.Copy(h, f)
		after[k] = h
	}
	return after
}

// sortPorts orders EthernetN names by number.
func sortPorts(ps []string) []string {
	num := func(s string) int {
		i := len(s)
		for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
			i--
		}
		n, _ := strconv.Atoi(s[i:])
		return n
	}
	sort.SliceStable(ps, func(i, j int) bool {
		if a, b := strings.TrimRight(ps[i], "0123456789"), strings.TrimRight(ps[j], "0123456789"); a != b {
			return a < b
		}
		return num(ps[i]) < num(ps[j])
	})
	return ps
}

// watchdogHolds says whether CONFIG_DB's PFC_WD already holds every field
// of the watchdog the intent wants.
func watchdogHolds(w *want, have db) bool {
	for k, h := range w.keys["PFC_WD"] {
		for f, v := range h {
			if have["PFC_WD"][k][f] != v {
				return false
			}
		}
	}
	for k, h := range w.fields["PFC_WD"] {
		for f, v := range h {
			if have["PFC_WD"][k][f] != v {
				return false
			}
		}
	}
	return true
}

// watchdogLack is the PFC watchdog the intent wants and apply cannot write
// (why), with the sonic-utilities pfcwd commands (pfcwd/main.py) that set
// it as the intent has it: `pfcwd start --action A --restoration-time R
// PORTS D` writes PFC_WD|<port> for each port whose PORT_QOS_MAP has
// pfc_enable (which apply writes: run it first), `pfcwd interval P` the
// GLOBAL poll interval; `config save -y` keeps them over a reboot. (`pfcwd
// start_default` writes only when DEVICE_METADATA default_pfcwd_status is
// enable, and then its own 200 ms defaults, not the intent's.) ports:
// the per-port entries are part of it, else only GLOBAL is.
func watchdogLack(w *want, why string, ports bool) plan.Lack {
	var cmds []string
	if ports {
		byTimers := map[string][]string{}
		var order []string
		for _, p := range sortPorts(slices.Collect(maps.Keys(w.keys["PFC_WD"]))) {
			h := w.keys["PFC_WD"][p]
			cmd := fmt.Sprintf("sudo pfcwd start --action %s --restoration-time %s %%s %s", h["action"], h["restoration_time"], h["detection_time"])
			if byTimers[cmd] == nil {
				order = append(order, cmd)
			}
			byTimers[cmd] = append(byTimers[cmd], p)
		}
		for _, cmd := range order {
			cmds = append(cmds, fmt.Sprintf(cmd, strings.Join(byTimers[cmd], " ")))
		}
	}
	if poll := w.fields["PFC_WD"]["GLOBAL"]["POLL_INTERVAL"]; poll != "" {
		cmds = append(cmds, "sudo pfcwd interval "+poll)
	}
	cmds = append(cmds, "sudo config save -y")
	what := "PFC watchdog (PFC_WD)"
	if !ports {
		what = "PFC watchdog poll interval (PFC_WD|GLOBAL)"
	}
	return plan.Lack{What: what, Reason: why + ": the intent's watchdog is not running as it asks",
		Fix: "after fabricctl apply (pfcwd starts only on ports whose PORT_QOS_MAP has pfc_enable), run on the switch: `" + strings.Join(cmds, "; ") + "`, then fabricctl diff"}
}

// portsExist refuses a payload for inventory ports that CONFIG_DB PORT does
// not have (every inventory port gets a PORT|<port> mtu field). SONiC's YANG
// makes the per-port keys leafrefs to PORT (sonic-port-qos-map.yang's ifname
// is a leafref to /sonic-port/PORT/PORT_LIST/name, likewise sonic-queue.yang,
// sonic-pfcwd.yang, sonic-cable-length.yang), so the switch would refuse the
// whole Set; plan names the ports first, as a lack that refuses the plan
// (diff reports it as drift). A read without a PORT table (no ports at all
// is not a SONiC switch) leaves the judgement to the device.
func portsExist(w *want, have db) *plan.Lack {
	ports := have["PORT"]
	if len(ports) == 0 {
		return nil
	}
	var missing []string
	for p := range w.fields["PORT"] {
		if ports[p] == nil {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	all := make([]string, 0, len(ports))
	for p := range ports {
		all = append(all, p)
	}
	all = sortPorts(all)
	return &plan.Lack{What: "inventory port(s) " + strings.Join(sortPorts(missing), ", "), Refuses: true,
		Reason: fmt.Sprintf("inventory port(s) %s not in CONFIG_DB PORT, which has %d ports (%s ... %s): SONiC refuses per-port keys of a port it does not have (leafrefs to PORT in sonic-port-qos-map.yang, sonic-queue.yang), so the switch would refuse the whole Set",
			strings.Join(sortPorts(missing), ", "), len(all), all[0], all[len(all)-1]),
		Fix: "correct the port names in the inventory (or break out / create the port on the switch)"}
}

// gcuOf is the GCU field validation of the switch's release profile (v
// nil when the release has none), the ASIC GCU names from CONFIG_DB's
// DEVICE_METADATA|localhost hwsku, and the 8-digit branch of the image's
// build_version when the switch reported one (Probe).
func gcuOf(d *switchdrv.Desired, have db) gcuSwitch {
	p, err := profile.LookupFor(string(d.Platform), d.Profile)
	md := have["DEVICE_METADATA"]["localhost"]
	if err != nil || p.Write.GCU == nil || md == nil {
		// Every SONiC CONFIG_DB has DEVICE_METADATA|localhost
		// (init_cfg.json.j2, sonic-device_metadata.yang); without it the
		// HWSKU, and so what GCU allows, cannot be told: the judgement
		// is left to the device.
		return gcuSwitch{}
	}
	return gcuSwitch{v: p.Write.GCU, asic: p.Write.GCU.ASIC(md["hwsku"]), branch: gcu.Branch(d.Build)}
}

// staleLosslessPGs deletes the lossless priority groups of the inventory
// ports on priorities none of which the port sends pause for (lossless:
// losslessOf), whoever made them: the template and buffermgrd
// (BUFFER_PG <port>|3-4 -> pg_lossless_<speed>_<cable>_profile) where
// neither 3 nor 4 is lossless any more (policy.mode lossy or
// semi-lossless, or the lossless class moved to another priority), or an
// earlier intent (a pg_lossless PG on the class's old priority where the
// config updater refuses fabricctl's own profiles; FABRICCTL_PG_* ones
// are deleted by normaliseRanges, their profiles then by deleteStale).
// Nothing else removes them: sonic-swss cfgmgr/buffermgr.cpp (the static
// buffer model) only adds lossless PGs when PORT_QOS_MAP pfc_enable
// changes (doSpeedUpdateTask) and removes them only on an admin-down
// Mellanox or Barefoot port, so their headroom would stay reserved out of
// the shared pool for priorities that never pause. A range holding a
// lossless priority is kept whole (the template's 3-4 where 3 is the
// lossless one: splitting it would flap every port). A PG is lossless
// when its profile has an xoff, as losslessProfile reads it. It returns
// the plan's note naming the ports.
func staleLosslessPGs(w *want, have db, lossless map[string][]int) []string {
	var ports []string
	for _, k := range slices.Sorted(maps.Keys(have["BUFFER_PG"])) {
		port, lo, hi, ok := prioRange(k)
		if !ok || w.fields["PORT"][port] == nil || w.dels["BUFFER_PG"][k] || w.keys["BUFFER_PG"][k] != nil {
			continue // not an inventory port, or one normaliseRanges planned
		}
		if !isLosslessPG(have, have["BUFFER_PG"][k]) || !coversNone(lossless[port], lo, hi) {
			continue
		}
		w.del("BUFFER_PG", k)
		if !slices.Contains(ports, port) {
			ports = append(ports, port)
		}
	}
	if len(ports) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("lossless priority groups removed from %s, on priorities that send no pause in this intent: their headroom goes back to the shared pool (buffermgrd never removes a lossless PG when pfc_enable goes: sonic-swss cfgmgr/buffermgr.cpp); with the static buffer model, buffermgrd adds them back for the port's last pfc_enable when its speed or cable length changes, which diff shows", strings.Join(sortPorts(ports), ", "))}
}

// pfcAsymOff writes PORT pfc_asym off on the inventory ports that have it
// on and whose intent does not (semi-lossless, then another mode): with
// the field deleted portsorch would keep the port in separate RX/TX PFC
// (sonic-swss orchagent/portsorch.cpp changes the mode only when the
// PORT entry carries pfc_asym), honouring pause on every priority; off
// puts it back in combined PFC (setPortPfcAsym:
// SAI_PORT_PRIORITY_FLOW_CONTROL_MODE_COMBINED, pfc_enable both ways).
func pfcAsymOff(w *want, have db) {
	for _, port := range sortPorts(slices.Collect(maps.Keys(w.fields["PORT"]))) {
		if _, set := w.fields["PORT"][port]["pfc_asym"]; !set && have["PORT"][port]["pfc_asym"] == "on" {
			w.setField("PORT", port, "pfc_asym", "off")
		}
	}
}
