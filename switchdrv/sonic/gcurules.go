package sonic

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/fabricctl/fabricctl/internal/gcu"
)

// GCU's field-operation validators (internal/gcu; sonic-utilities
// generic_config_updater/gcu_field_operation_validators.conf.json and
// field_operation_validators.py, branches 202405 and 202411) refuse, on
// every ASIC, to create a buffer profile or a WRED profile, and allow only
// these field changes (on ASICs they know): BUFFER_PROFILE xoff and
// dynamic_th, WRED_PROFILE AZURE_LOSSLESS green_min_threshold,
// green_max_threshold and green_drop_probability. So on those releases
// fabricctl works with the objects the switch's own templates made:
//
//   - a lossless priority group keeps the profile buffermgrd gave it
//     (BUFFER_PG|port|3-4 -> pg_lossless_<speed>_<cable>_profile, from the
//     SKU's pg_profile_lookup.ini); where its xoff is below the headroom
//     the intent needs, xoff is raised (a field replace, allowed), and
//     plan says that size and xon stay as the vendor table made them;
//   - an ECN class's queue uses AZURE_LOSSLESS (qos_config.j2 gives
//     lossless queues that WRED profile) and fabricctl sets its green
//     thresholds and probability (several ECN classes share it, with the
//     earliest marking); its drop enables and ECN mode stay as the
//     template made them, and plan says so;
//   - no FABRICCTL_PG_* or FABRICCTL_ECN_* object is created, and old ones
//     are left in place (GCU refuses to remove them too), named in a note.
//
// A last check runs GCU's own rules over the diff the refined Set makes
// to CONFIG_DB: whatever would still be refused is a plan error naming the
// path, not a Set the switch refuses.

// gcuSwitch is GCU's field validation on one switch: its release's
// validators, the ASIC GCU names from its HWSKU, and the 8-digit branch of
// its image's build_version ("" when it has none, as community builds:
// then GCU compares no version).
type gcuSwitch struct {
	v            *gcu.Validators
	asic, branch string
}

func (g gcuSwitch) check(ops []gcu.Op) *gcu.Refusal { return g.v.Check(ops, g.asic, g.branch) }

// azureLossless is the WRED profile of lossless queues in every SONiC QoS
// template (sonic-buildimage files/build_templates/qos_config.j2).
const azureLossless = "AZURE_LOSSLESS"

// gcuRewrite rewrites w for GCU's field validators v on a switch whose
// ASIC GCU names g.asic. It returns plan notes and the prefixes of compile's
// notes that no longer apply, or an error when the intent cannot be met
// within what GCU allows.
//
// Later branches allow more (internal/gcu): 202511's config updater lets a
// whole buffer profile be created or removed and validates no WRED
// profile, 202505's lets any WRED profile's green thresholds change. So
// each rewrite runs only where GCU would refuse what compile wants of
// that table (gcuTakes): on 202511 the intent's own FABRICCTL_PG_* and
// FABRICCTL_ECN_* profiles are written as on a release without GCU.
func gcuRewrite(w *want, have db, g gcuSwitch) (notes, drop []string, err error) {
	if !gcuTakes(w, have, g, "BUFFER_PROFILE") {
		if err := gcuBuffers(w, have, g, &notes, &drop); err != nil {
			return nil, nil, err
		}
	}
	if !gcuTakes(w, have, g, "WRED_PROFILE") {
		if err := gcuWRED(w, have, g, &notes); err != nil {
			return nil, nil, err
		}
	}
	return notes, drop, nil
}

// gcuTakes reports whether GCU lets the Set leave table t as compile wants
// it: its validators pass every operation of the diff.
func gcuTakes(w *want, have db, g gcuSwitch, t string) bool {
	return g.check(gcuDiff(w, have, map[string]bool{t: true})) == nil
}

// gcuDiff is the JSON patch GCU derives, for tables, from what CONFIG_DB
// holds to what the refined Set leaves (gcu.Diff over tableAfter).
func gcuDiff(w *want, have db, tables map[string]bool) []gcu.Op {
	old := map[string]any{}
	next := map[string]any{}
	for t := range tables {
		if have[t] == nil && len(w.keys[t]) == 0 && len(w.fields[t]) == 0 {
			continue
		}
		if have[t] != nil {
			old[t] = tableAny(have[t])
		}
		if n := tableAfter(w, have, t); len(n) > 0 {
			next[t] = tableAny(n)
		}
	}
	return gcu.Diff(old, next, tables)
}

// losslessProfile is the lossless buffer profile (one with an xoff) of
// port's priority group holding prio, else of another of the port's
// priority groups, else the one buffermgrd gives the port when
// pfc_enable names a priority: pg_lossless_<PORT speed>_<CABLE_LENGTH of
// the port>_profile (sonic-swss cfgmgr/buffermgr.cpp doSpeedUpdateTask),
// where it exists, else another pg_lossless profile of the port's speed (a
// port fabricctl took to lossy or semi-lossless has no lossless priority
// group left: staleLosslessPGs); "" when there is none.
func losslessProfile(have db, port string, prio int) string {
	other := ""
	for _, k := range slices.Sorted(maps.Keys(have["BUFFER_PG"])) {
		p, lo, hi, ok := prioRange(k)
		prof := have["BUFFER_PG"][k]["profile"]
		if !ok || p != port || have["BUFFER_PROFILE"][prof]["xoff"] == "" {
			continue
		}
		if lo <= prio && prio <= hi {
			return prof
		}
		if other == "" {
			other = prof
		}
	}
	if other != "" {
		return other
	}
	speed, cable := have["PORT"][port]["speed"], have["CABLE_LENGTH"][cableLengthTable][port]
	if speed == "" {
		return ""
	}
	if prof := "pg_lossless_" + speed + "_" + cable + "_profile"; cable != "" && have["BUFFER_PROFILE"][prof]["xoff"] != "" {
		return prof
	}
	// buffermgrd makes the profile when the port's cable length changes
	// while pfc_enable names a priority; one it made for the port's speed
	// and another length serves (gcuBuffers raises its xoff to the need).
	for _, prof := range slices.Sorted(maps.Keys(have["BUFFER_PROFILE"])) {
		if strings.HasPrefix(prof, "pg_lossless_"+speed+"_") && strings.HasSuffix(prof, "_profile") && have["BUFFER_PROFILE"][prof]["xoff"] != "" {
			return prof
		}
	}
	return ""
}

func gcuBuffers(w *want, have db, g gcuSwitch, notes, dropNotes *[]string) error {
	ours := w.keys["BUFFER_PROFILE"]
	if len(ours) == 0 {
		return nil
	}
	need := map[string]int64{} // existing profile -> the xoff its ports need
	users := map[string][]string{}
	for _, k := range slices.Sorted(maps.Keys(w.keys["BUFFER_PG"])) {
		h := w.keys["BUFFER_PG"][k]
		spec, isOurs := ours[h["profile"]]
		if !isOurs {
			continue
		}
		port, prio, _, ok := prioRange(k)
		if !ok {
			continue
		}
		prof := losslessProfile(have, port, prio)
		if prof == "" {
			return fmt.Errorf("BUFFER_PG|%s: the switch has no lossless buffer profile for port %s (no BUFFER_PG of the port names a profile with xoff, and there is no pg_lossless_<speed>_<cable>_profile for its PORT speed and CABLE_LENGTH), and SONiC's config updater on this release refuses to create buffer profiles (%s); give the port a lossless priority group first (its speed and CABLE_LENGTH let buffermgrd make one)", k, port, g.v.Source)
		}
		w.keys["BUFFER_PG"][k] = hash{"profile": prof}
		x, _ := strconv.ParseInt(spec["xoff"], 10, 64)
		need[prof] = max(need[prof], x)
		users[prof] = append(users[prof], k)
	}
	delete(w.keys, "BUFFER_PROFILE")                    // compile's: all FABRICCTL_PG profiles
	*dropNotes = append(*dropNotes, bufferProfilesNote) // about the FABRICCTL_PG profiles not written
	for _, prof := range slices.Sorted(maps.Keys(need)) {
		cur := have["BUFFER_PROFILE"][prof]
		x, _ := strconv.ParseInt(cur["xoff"], 10, 64)
		ports := sortPorts(portsOf(users[prof]))
		portList := strings.Join(ports, ", ")
		if x >= need[prof] {
			*notes = append(*notes, fmt.Sprintf("lossless buffers: %s keeps BUFFER_PROFILE|%s (xoff %d B, at least the %d B of headroom the intent needs; size %s, xon %s from the SKU's pg_profile_lookup.ini): SONiC's config updater on this release refuses to create buffer profiles", portList, prof, x, need[prof], cur["size"], cur["xon"]))
			continue
		}
		val := strconv.FormatInt(need[prof], 10)
		op := gcu.Op{Op: "replace", Path: []string{"BUFFER_PROFILE", prof, "xoff"}, Value: val}
		if r := g.check([]gcu.Op{op}); r != nil {
			return fmt.Errorf("BUFFER_PROFILE|%s: xoff %d B is below the %d B of headroom %s need, and SONiC's config updater refuses to raise it on this switch (%s: %s); raise it with the platform's buffer tools or shorten the cable lengths in the intent", prof, x, need[prof], portList, r.Reason, r.Text)
		}
		w.setField("BUFFER_PROFILE", prof, "xoff", val)
		also := ""
		if n := otherPorts(have, prof, ports); n > 0 {
			also = fmt.Sprintf(" (and for the %d other port(s) outside the inventory that use it)", n)
		}
		*notes = append(*notes, fmt.Sprintf("lossless buffers: xoff of BUFFER_PROFILE|%s raised from %d to %d B for %s%s; its size %s and xon %s stay as the SKU's pg_profile_lookup.ini made them, since SONiC's config updater on this release allows only xoff and dynamic_th changes of a buffer profile (on Mellanox, where size = xon + xoff, the reserved size does not grow with it)", prof, x, need[prof], portList, also, cur["size"], cur["xon"]))
	}
	return nil
}

func portsOf(keys []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range keys {
		p, _, _ := strings.Cut(k, "|")
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// wredGCUFields are the WRED fields GCU lets fabricctl set on AZURE_LOSSLESS.
var wredGCUFields = []string{"green_min_threshold", "green_max_threshold", "green_drop_probability"}

func gcuWRED(w *want, have db, g gcuSwitch, notes *[]string) error {
	ours := w.keys["WRED_PROFILE"]
	if len(ours) == 0 {
		return nil
	}
	az := have["WRED_PROFILE"][azureLossless]
	var target hash
	var from []string
	for _, k := range slices.Sorted(maps.Keys(w.keys["QUEUE"])) {
		h := w.keys["QUEUE"][k]
		wp := h["wred_profile"]
		spec, isOurs := ours[wp]
		if !isOurs {
			continue
		}
		if az == nil {
			return fmt.Errorf("QUEUE|%s: ECN needs a WRED profile, the switch has no WRED_PROFILE|%s, and SONiC's config updater on this release refuses to create WRED profiles (%s)", k, azureLossless, g.v.Source)
		}
		switch {
		case target == nil:
			target, from = maps.Clone(spec), []string{wp}
		case !slices.Contains(from, wp):
			// One WRED profile for every ECN class: the earliest marking
			// of them all (lowest thresholds, highest probability), which
			// keeps every queue at least as short as its class asks.
			target["green_min_threshold"] = minNum(target["green_min_threshold"], spec["green_min_threshold"])
			target["green_max_threshold"] = minNum(target["green_max_threshold"], spec["green_max_threshold"])
			target["green_drop_probability"] = maxNum(target["green_drop_probability"], spec["green_drop_probability"])
			from = append(from, wp)
		}
		h = maps.Clone(h)
		h["wred_profile"] = azureLossless
		w.keys["QUEUE"][k] = h
	}
	delete(w.keys, "WRED_PROFILE") // compile's: all FABRICCTL_ECN profiles
	if target == nil {
		return nil
	}
	if len(from) > 1 {
		classes := make([]string, len(from))
		for i, wp := range from {
			classes[i] = strings.TrimPrefix(wp, wredPrefix)
		}
		*notes = append(*notes, fmt.Sprintf("ECN: classes %s share WRED_PROFILE|%s (SONiC's config updater on this release lets fabricctl change no other WRED profile), with the earliest marking of them: min %s B, max %s B, probability %s %%", strings.Join(classes, ", "), azureLossless, target["green_min_threshold"], target["green_max_threshold"], target["green_drop_probability"]))
	}
	for _, f := range wredGCUFields {
		if az[f] == target[f] {
			continue
		}
		op := gcu.Op{Op: "replace", Path: []string{"WRED_PROFILE", azureLossless, f}, Value: target[f]}
		if az[f] == "" {
			op.Op = "add"
		}
		if r := g.check([]gcu.Op{op}); r != nil {
			return fmt.Errorf("WRED_PROFILE|%s/%s: SONiC's config updater refuses to set it on this switch (%s: %s); set ECN with the platform's tools or drop ECN from the intent", azureLossless, f, r.Reason, r.Text)
		}
		w.setField("WRED_PROFILE", azureLossless, f, target[f])
	}
	var kept []string
	for _, f := range slices.Sorted(maps.Keys(az)) {
		if slices.Contains(wredGCUFields, f) || strings.HasPrefix(f, "yellow_") || strings.HasPrefix(f, "red_") {
			continue
		}
		kept = append(kept, f+"="+az[f])
	}
	*notes = append(*notes, fmt.Sprintf("ECN: the ECN classes' queues use WRED_PROFILE|%s with the intent's green thresholds and probability; its %s stay as the QoS template made them, since SONiC's config updater on this release allows only those three fields to change (with wred_green_enable true, non-ECT packets of those queues can be WRED-dropped past the thresholds)", azureLossless, strings.Join(kept, ", ")))
	return nil
}

// gcuKeepStale keeps in place the stale FABRICCTL objects GCU refuses to
// remove, with a note.
func gcuKeepStale(w *want, g gcuSwitch, notes *[]string) {
	for _, t := range []string{"BUFFER_PROFILE", "WRED_PROFILE"} {
		for _, k := range slices.Sorted(maps.Keys(w.dels[t])) {
			if !owned(t, k) {
				continue
			}
			if r := g.check([]gcu.Op{{Op: "remove", Path: []string{t, k}}}); r != nil {
				delete(w.dels[t], k)
				*notes = append(*notes, fmt.Sprintf("%s|%s is no longer used but is left in place: SONiC's config updater on this release refuses to remove it (%s); remove it with 'sonic-db-cli CONFIG_DB DEL' if wanted", t, k, r.Reason))
			}
		}
	}
}

// gcuFinalCheck runs GCU's validators over what the refined Set does to
// CONFIG_DB: a refusal is a plan error naming the path.
func gcuFinalCheck(w *want, have db, g gcuSwitch) error {
	if r := g.check(gcuDiff(w, have, g.v.Watched())); r != nil {
		return fmt.Errorf("SONiC's config updater would refuse this Set: %s %s: %s (%s)", r.Op.Op, r.Op.Pointer(), r.Reason, r.Text)
	}
	return nil
}

// tableAny is a table with its hashes as the generic JSON values GCU's
// validators read.
func tableAny(tab map[string]hash) map[string]any {
	m := make(map[string]any, len(tab))
	for k, h := range tab {
		m[k] = toAny(h)
	}
	return m
}

func toAny(h hash) map[string]any {
	m := make(map[string]any, len(h))
	for k, v := range h {
		m[k] = v
	}
	return m
}

func minNum(a, b string) string {
	x, _ := strconv.ParseInt(a, 10, 64)
	y, _ := strconv.ParseInt(b, 10, 64)
	if y < x {
		return b
	}
	return a
}

func maxNum(a, b string) string {
	x, _ := strconv.ParseInt(a, 10, 64)
	y, _ := strconv.ParseInt(b, 10, 64)
	if y > x {
		return b
	}
	return a
}

// otherPorts counts the ports other than ports whose BUFFER_PG names prof.
func otherPorts(have db, prof string, ports []string) int {
	seen := map[string]bool{}
	for _, p := range ports {
		seen[p] = true
	}
	n := 0
	for k, h := range have["BUFFER_PG"] {
		p, _, _ := strings.Cut(k, "|")
		if h["profile"] == prof && !seen[p] {
			seen[p] = true
			n++
		}
	}
	return n
}
