// Package sonic compiles the intent into gNMI SetRequests for community
// SONiC: CONFIG_DB tables written through sonic-gnmi with origin "sonic-db",
// paths /CONFIG_DB/localhost/<TABLE>/<KEY>[/<field>] and json_ietf_val
// values (CONFIG_DB hashes: every value a string).
//
// What fabricctl owns, and so replaces whole keys of:
//   - the FABRICCTL maps: DSCP_TO_TC_MAP, TC_TO_QUEUE_MAP,
//     TC_TO_PRIORITY_GROUP_MAP, MAP_PFC_PRIORITY_TO_QUEUE,
//     PFC_PRIORITY_TO_PRIORITY_GROUP_MAP (key FABRICCTL),
//   - SCHEDULER|FABRICCTL_<CLASS>, WRED_PROFILE|FABRICCTL_ECN_<CLASS>,
//     BUFFER_PROFILE|FABRICCTL_PG_<bytes> (one per distinct headroom),
//   - per inventory port: PORT_QOS_MAP|<port>, QUEUE|<port>|<prio> for every
//     class, BUFFER_PG|<port>|<prio> for every lossless priority, PFC_WD|<port>
//     (deleted when the watchdog is off or no class is lossless); on the
//     priorities a port sends no pause for (all in lossy and
//     semi-lossless) plan deletes every lossless BUFFER_PG, the template's
//     included unless its range holds a lossless priority, and points
//     egress_lossless_profile queues at the port's lossy egress profile
//     (refine.go staleLosslessPGs, staleLosslessQueues).
//
// Merged: the inventory ports' fields of CABLE_LENGTH|AZURE (one update),
// and single fields PORT|<port>/mtu (and pfc_asym: on in semi-lossless,
// off where the switch has it on and the intent does not),
// PFC_WD|GLOBAL/POLL_INTERVAL and
// FLEX_COUNTER_TABLE|{PFCWD,QUEUE,PG_WATERMARK}/FLEX_COUNTER_STATUS (so the
// counters validate needs are polled).
// Buffer pools are platform-specific (they come from the SKU's buffer
// template) and are never touched: BUFFER_PROFILE entries use the existing
// ingress_lossless_pool.
//
// This is the payload compile makes from the intent alone (render). Plan
// rewrites it for what CONFIG_DB holds (refine.go) and, on releases whose
// config updater refuses to create buffer and WRED profiles (202405,
// 202411), for the template's own profiles instead (gcurules.go).
package sonic

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/portfacts"
	"github.com/fabricctl/fabricctl/internal/profile"
	"github.com/fabricctl/fabricctl/switchdrv"
)

// Origin is the sonic-gnmi origin that writes CONFIG_DB.
const Origin = "sonic-db"

// Names of the entries fabricctl owns.
const (
	MapName          = "FABRICCTL"
	schedulerPrefix  = "FABRICCTL_"
	wredPrefix       = "FABRICCTL_ECN_"
	bufferPrefix     = "FABRICCTL_PG_"
	cableLengthTable = "AZURE" // the key every SONiC buffer template uses
	losslessPool     = "ingress_lossless_pool"
)

// SONiC watchdog ranges (sonic-pfcwd.yang), in milliseconds.
const (
	restoreMinMS = 100
	restoreMaxMS = 60000
	pollMinMS    = 100
	pollMaxMS    = 1000
)

// quirks are read from the default SONiC profile (internal/profile/data/profiles/sonic-*.json).
var quirks = switchdrv.DefaultQuirks(intent.PlatformSONiC)

// Platform is the SONiC platform.
type Platform struct{}

// Register adds the SONiC platform to r.
func Register(r *switchdrv.Registry) error { return r.Register(Platform{}) }

// Name implements switchdrv.Platform.
func (Platform) Name() intent.Platform { return intent.PlatformSONiC }

// Quirks implements switchdrv.Platform.
func (Platform) Quirks() switchdrv.Quirks { return quirks }

// SchedulerName is the SCHEDULER key of a class.
func SchedulerName(class string) string {
	return schedulerPrefix + token(class, maxKeyLen-len(schedulerPrefix))
}

// WREDName is the WRED_PROFILE key of a class.
func WREDName(class string) string { return wredPrefix + token(class, maxKeyLen-len(wredPrefix)) }

// maxKeyLen: sonic-yang names are [a-zA-Z0-9][-a-zA-Z0-9_]{0,31}.
const maxKeyLen = 32

// token turns a class name into an upper-case key part cut to max bytes.
func token(class string, max int) string { return switchdrv.KeyPart(class, max) }

// Compile implements switchdrv.Platform.
func (Platform) Compile(f *intent.Fabric, sw *intent.Switch) (*switchdrv.Desired, error) {
	return switchdrv.Compile(intent.PlatformSONiC, f, sw, func(d *switchdrv.Desired) error {
		d.Profile = sw.Profile
		return (&compiler{f: f, sw: sw, d: d}).compile()
	})
}

type compiler struct {
	f  *intent.Fabric
	sw *intent.Switch
	d  *switchdrv.Desired
}

func path(elems ...string) *gnmipb.Path {
	// One allocation for all elements: compile speed matters at scale.
	es := make([]gnmipb.PathElem, len(elems)+2)
	p := &gnmipb.Path{Origin: Origin, Elem: make([]*gnmipb.PathElem, len(es))}
	es[0].Name, es[1].Name = "CONFIG_DB", "localhost"
	for i, e := range elems {
		es[i+2].Name = e
	}
	for i := range es {
		p.Elem[i] = &es[i]
	}
	return p
}

// replace sets the whole hash of table|key.
func (c *compiler) replace(table, key string, fields ...kv) error {
	v := &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: encodeHash(fields)}}
	c.d.Replaces = append(c.d.Replaces, &gnmipb.Update{Path: path(table, key), Val: v})
	return nil
}

// encodeHash encodes a CONFIG_DB hash as a JSON object with sorted keys, the
// bytes encoding/json produces for a map[string]string (without reflection:
// compile speed matters at 2,000 switches).
func encodeHash(fields []kv) []byte {
	n := 2
	for _, f := range fields {
		n += len(f.k) + len(f.v) + 6
	}
	// Insertion sort: hashes are small and often already sorted.
	for i := 1; i < len(fields); i++ {
		for j := i; j > 0 && fields[j].k < fields[j-1].k; j-- {
			fields[j], fields[j-1] = fields[j-1], fields[j]
		}
	}
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i, f := range fields {
		if i > 0 && f.k == fields[i-1].k {
			continue // duplicate field: first wins
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, f.k)
		b = append(b, ':')
		b = appendString(b, f.v)
	}
	return append(b, '}')
}

// kv is one field of a CONFIG_DB hash.
type kv struct{ k, v string }

func fromMap(m map[string]string) []kv {
	out := make([]kv, 0, len(m))
	for k, v := range m {
		out = append(out, kv{k, v})
	}
	return out
}

// appendString appends s as a JSON string (RFC 8259 escaping; HTML
// characters escaped as encoding/json does).
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch == '"' || ch == '\\':
			b = append(b, '\\', ch)
		case ch == '\n':
			b = append(b, '\\', 'n')
		case ch == '\r':
			b = append(b, '\\', 'r')
		case ch == '\t':
			b = append(b, '\\', 't')
		case ch == '\b':
			b = append(b, '\\', 'b')
		case ch == '\f':
			b = append(b, '\\', 'f')
		case ch < 0x20 || ch == '<' || ch == '>' || ch == '&':
			b = append(b, '\\', 'u', '0', '0', hex[ch>>4], hex[ch&0xf])
		default:
			b = append(b, ch)
		}
	}
	return append(b, '"')
}

// egressLosslessJSON is BUFFER_QUEUE's hash for a lossless queue.
var egressLosslessJSON = encodeHash([]kv{{"profile", egressLossless}})

// raw replaces table|key with an already encoded hash (shared, read-only).
func (c *compiler) raw(table, key string, hash []byte) {
	v := &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: hash}}
	c.d.Replaces = append(c.d.Replaces, &gnmipb.Update{Path: path(table, key), Val: v})
}

// field merges one field of table|key.
func (c *compiler) field(table, key, field, value string) error {
	v := &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: appendString(nil, value)}}
	c.d.Updates = append(c.d.Updates, &gnmipb.Update{Path: path(table, key, field), Val: v})
	return nil
}

func itoa(i int) string { return strconv.Itoa(i) }

// sizeConvention is what BUFFER_PROFILE "size" means on the switch's ASIC
// (issue 10 item 5): xon + xoff on Mellanox (the headroom; the SKUs'
// pg_profile_lookup.ini: size = xon + xoff), the guaranteed minimum on
// Broadcom (sonic-swss orchagent/bufferorch.cpp passes it as
// SAI_BUFFER_PROFILE_ATTR_BUFFER_SIZE, the reserved buffer; the headroom
// is xoff). Unknown ASIC: xon + xoff, the safe reading (on Broadcom it
// reserves more than needed, never less).
type sizeConvention struct {
	asic          string
	known         bool
	guaranteedMin bool
}

func (c *compiler) sizeConvention() sizeConvention {
	p, err := profile.LookupFor(string(intent.PlatformSONiC), c.sw.Profile)
	if err == nil {
		p, err = p.WithASIC(c.sw.ASIC)
	}
	if err != nil || p.ASICInfo() == nil {
		return sizeConvention{asic: c.sw.ASIC}
	}
	a := p.ASICInfo()
	return sizeConvention{asic: a.Name, known: true, guaranteedMin: a.BufferProfileSize == profile.SizeGuaranteedMinimum}
}

func (s sizeConvention) note(vendor bool, sizes []string) string {
	switch {
	case !s.known:
		return bufferProfilesNote + "ASIC unknown, so size = xon + xoff, the safe reading (the Mellanox convention; on Broadcom it reserves the headroom as guaranteed minimum, more than needed); name switches[].asic for the vendor's"
	case s.guaranteedMin && vendor:
		return bufferProfilesNote + "on " + s.asic + " (Broadcom) size is the PG's guaranteed minimum and xoff the headroom (sonic-swss orchagent/bufferorch.cpp); size from the vendor's table: " + strings.Join(sizes, "; ")
	case s.guaranteedMin:
		return bufferProfilesNote + "on " + s.asic + " (Broadcom) size is the guaranteed minimum, but there is no vendor table for it here: size = xon + xoff reserves the headroom as guaranteed minimum (more than needed, never less)"
	}
	return bufferProfilesNote + "on " + s.asic + " (Mellanox) size = xon + xoff, the PG's headroom (pg_profile_lookup.ini convention)"
}

func join(ps []int) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = itoa(p)
	}
	return strings.Join(s, ",")
}

func (c *compiler) compile() error {
	p := &c.f.Policy
	// lossless are the priorities the switch sends pause for, with a
	// lossless priority group, headroom and the watchdog: the lossless
	// classes' but in semi-lossless mode (portfacts.SendPriorities).
	lossless := portfacts.SendPriorities(c.f)
	// semi: semi-lossless, the ports honour the hosts' pause and send
	// none. PORT pfc_asym on puts the port in SAI's separate RX/TX PFC
	// mode with RX on every priority (sonic-swss portsorch
	// setPortPfcAsym: SAI_PORT_PRIORITY_FLOW_CONTROL_MODE_SEPARATE,
	// SAI_PORT_ATTR_PRIORITY_FLOW_CONTROL_RX 0xff), and PORT_QOS_MAP
	// without pfc_enable leaves TX off: qosorch handlePortQosMapTable
	// writes a pfc_enable of 0 when the port had one (`if (pfc_enable ||
	// old_pfc_enable)`), which setPortPfc sends as
	// SAI_PORT_ATTR_PRIORITY_FLOW_CONTROL_TX in separate mode.
	//
	// No PFC watchdog runs in semi-lossless, decided from SONiC's
	// sources: orchagent watches only the priorities of PORT_QOS_MAP
	// pfcwd_sw_enable (qosorch.cpp handlePortQosMapTable ->
	// PortsOrch::setPortPfcWatchdogStatus; pfcwdorch.cpp
	// getLosslessTcsForPort finds "No lossless TC" without it), the pfcwd
	// CLI skips a port without pfc_enable (sonic-utilities pfcwd/main.py
	// verify_pfc_enable_status_per_port), and a watchdog forced on anyway
	// could detect a host's pause storm but not recover from it: every
	// action handler derives from PfcWdLossyHandler, which stops
	// honouring pause by clearing the priority through setPortPfc, and in
	// pfc_asym's separate mode that writes only
	// SAI_PORT_ATTR_PRIORITY_FLOW_CONTROL_TX, while RX stays 0xff. So
	// PFC_WD|<port> is deleted and pfcwd_sw_enable left out (below), as
	// where the switch sends pause on no priority.
	semi := p.Mode == intent.ModeSemiLossless && len(portfacts.HonourPriorities(c.f)) > 0
	if semi {
		c.d.Notes = append(c.d.Notes, fmt.Sprintf("semi-lossless: every port gets PORT pfc_asym on (SAI separate RX/TX PFC: pause received on any priority is honoured) and no pfc_enable (the port sends no pause), no lossless priority group and no headroom; a SAI without separate RX/TX PFC answers NOT_SUPPORTED to pfc_asym, which portsorch takes as success, leaving PFC off on priorities %v: check `show pfc asymmetric` on the switch", portfacts.HonourPriorities(c.f)))
		if p.Watchdog.Enabled {
			c.d.Notes = append(c.d.Notes, "semi-lossless: no PFC watchdog runs (PFC_WD|<port> is removed): SONiC's pfcwd watches only PORT_QOS_MAP pfcwd_sw_enable's priorities, which need pfc_enable (sonic-swss pfcwdorch.cpp, sonic-utilities pfcwd), and its recovery could not stop a port honouring a host's pause storm here: it clears the priority with setPortPfc, which under pfc_asym writes only SAI_PORT_ATTR_PRIORITY_FLOW_CONTROL_TX while RX stays on every priority (sonic-swss pfcactionhandler.cpp, portsorch.cpp); watch the ports' PFC RX counters for storms instead")
		}
	}
	if !p.Mode.PFC() {
		// lossy: no pfc_enable, so qosorch sets the port's PFC to 0 where
		// it had a bitmap (handlePortQosMapTable, as above).
		c.d.Notes = append(c.d.Notes, "lossy: PORT_QOS_MAP carries no pfc_enable, so SONiC turns PFC off on every inventory port (qosorch writes 0 where the port had a PFC bitmap); plan removes the ports' lossless priority groups (BUFFER_PG <port>|3-4 of the template and buffermgrd, or fabricctl's own), which buffermgrd never removes itself (sonic-swss cfgmgr/buffermgr.cpp)")
	}
	isLossless := map[int]bool{}
	for _, l := range lossless {
		isLossless[l] = true
	}

	// Maps.
	dscp := make(map[string]string, 64)
	for d, prio := range p.DSCPToPriority() {
		dscp[itoa(d)] = itoa(prio)
	}
	tcQueue, tcPG, pfcQueue := map[string]string{}, map[string]string{}, map[string]string{}
	for tc := 0; tc < 8; tc++ {
		tcQueue[itoa(tc)] = itoa(tc)
		pfcQueue[itoa(tc)] = itoa(tc)
		if isLossless[tc] {
			tcPG[itoa(tc)] = itoa(tc)
		} else {
			tcPG[itoa(tc)] = "0"
		}
	}
	pfcPG := map[string]string{}
	for _, l := range lossless {
		pfcPG[itoa(l)] = itoa(l)
	}
	for _, m := range []struct {
		table  string
		fields map[string]string
	}{
		{"DSCP_TO_TC_MAP", dscp},
		{"TC_TO_QUEUE_MAP", tcQueue},
		{"TC_TO_PRIORITY_GROUP_MAP", tcPG},
		{"MAP_PFC_PRIORITY_TO_QUEUE", pfcQueue},
		{"PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", pfcPG},
	} {
		if m.table == "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP" && len(lossless) == 0 {
			continue
		}
		if err := c.replace(m.table, MapName, fromMap(m.fields)...); err != nil {
			return err
		}
	}

	// Schedulers and WRED-ECN profiles: class names must stay distinct once
	// made into keys.
	keyOf := map[string]string{}
	for _, cl := range p.Classes {
		k := SchedulerName(cl.Name)
		if other, dup := keyOf[k]; dup {
			return fmt.Errorf("classes %q and %q both become SONiC key %s: rename one", other, cl.Name, k)
		}
		keyOf[k] = cl.Name
	}
	for _, cl := range p.Classes {
		s := []kv{{"type", "STRICT"}}
		if !cl.Strict {
			if cl.Weight < 1 || cl.Weight > 100 {
				return fmt.Errorf("class %s: DWRR weight %d outside SONiC's 1..100", cl.Name, cl.Weight)
			}
			s = []kv{{"type", "DWRR"}, {"weight", itoa(cl.Weight)}}
		}
		if err := c.replace("SCHEDULER", SchedulerName(cl.Name), s...); err != nil {
			return err
		}
	}
	for _, cl := range p.Classes {
		if cl.ECN == nil {
			continue
		}
		mn, mx, pr := strconv.FormatInt(cl.ECN.MinBytes, 10), strconv.FormatInt(cl.ECN.MaxBytes, 10), itoa(cl.ECN.Probability)
		// Mark only, as on the other platforms (issue 10 item 8):
		// orchagent qosorch.cpp maps "ecn" to SAI_WRED_ATTR_ECN_MARK_MODE
		// (ecn_all: ECT packets of every colour are marked on the
		// curve) and wred_<colour>_enable to SAI_WRED_ATTR_<COLOUR>_ENABLE,
		// the WRED drop of that colour, which would also drop non-ECT
		// packets of the lossless queue (up to 100 % past the max
		// threshold). Drop stays off; the thresholds and probability
		// shape the marking.
		w := map[string]string{"ecn": "ecn_all"}
		for _, color := range []string{"green", "yellow", "red"} {
			w["wred_"+color+"_enable"] = "false"
			w[color+"_min_threshold"] = mn
			w[color+"_max_threshold"] = mx
			w[color+"_drop_probability"] = pr
		}
		if err := c.replace("WRED_PROFILE", WREDName(cl.Name), fromMap(w)...); err != nil {
			return err
		}
	}

	// Headroom profiles, one per distinct (xoff, size).
	portProfile := map[string]string{}
	if len(lossless) > 0 {
		conv := c.sizeConvention()
		type spec struct{ xoff, xon, size int64 }
		specs := map[string]spec{}
		var names []string
		var vendorSizes []string
		facts := portfacts.SwitchOf(c.f, c.sw)
		for _, port := range c.sw.Ports {
			// The port's programmed headroom (portfacts: the figure
			// check reports and simulate uses).
			h := facts.PortHeadroom(c.f, port)
			x := h.Programmed
			// Static headroom: xon is two frames (resume after draining
			// two MTUs below xoff).
			sp := spec{xoff: x, xon: int64(2 * h.Input.MTU)}
			name := bufferPrefix + strconv.FormatInt(x, 10)
			switch row, src, ok := intent.VendorRow(h.Input); {
			case conv.guaranteedMin && ok:
				// Broadcom: size is the PG's guaranteed minimum, the
				// headroom is xoff on top of it.
				sp.size = row.Size
				name += "_" + strconv.FormatInt(row.Size, 10)
				vendorSizes = append(vendorSizes, fmt.Sprintf("%s %s/%gm: %d B (%s)", port.Name, intent.FormatRate(port.Speed), port.CableMeters, row.Size, src))
			default:
				// size = xon + xoff is the PG's reserved headroom, with
				// shared buffer beyond it (dynamic_th 0 = 50 %).
				sp.size = sp.xoff + sp.xon
			}
			portProfile[port.Name] = name
			if _, ok := specs[name]; !ok {
				specs[name] = sp
				names = append(names, name)
			}
		}
		sort.Strings(names)
		for _, name := range names {
			sp := specs[name]
			if err := c.replace("BUFFER_PROFILE", name,
				kv{"pool", losslessPool}, kv{"xoff", strconv.FormatInt(sp.xoff, 10)}, kv{"xon", strconv.FormatInt(sp.xon, 10)},
				kv{"size", strconv.FormatInt(sp.size, 10)}, kv{"dynamic_th", "0"},
			); err != nil {
				return err
			}
		}
		c.d.Notes = append(c.d.Notes, conv.note(len(vendorSizes) > 0, vendorSizes))
	}

	// Watchdog ranges.
	wd := p.Watchdog
	var det, rest, poll int
	if wd.Enabled && len(lossless) > 0 {
		det, rest, poll = int(wd.Detect.Milliseconds()), int(wd.Restore.Milliseconds()), int(wd.Poll.Milliseconds())
		switch {
		case det < quirks.WatchdogMin || det > quirks.WatchdogMax:
			return fmt.Errorf("pfc watchdog detect %dms outside SONiC's %d..%d ms", det, quirks.WatchdogMin, quirks.WatchdogMax)
		case rest < restoreMinMS || rest > restoreMaxMS:
			return fmt.Errorf("pfc watchdog restore %dms outside SONiC's %d..%d ms", rest, restoreMinMS, restoreMaxMS)
		case poll < pollMinMS || poll > pollMaxMS:
			return fmt.Errorf("pfc watchdog poll %dms outside SONiC's %d..%d ms", poll, pollMinMS, pollMaxMS)
		}
		if err := c.field("PFC_WD", "GLOBAL", "POLL_INTERVAL", itoa(poll)); err != nil {
			return err
		}
	}

	// Per-port hashes are the same on every port: build them once.
	pq := []kv{{"dscp_to_tc_map", MapName}, {"tc_to_queue_map", MapName}, {"tc_to_pg_map", MapName}, {"pfc_to_queue_map", MapName}}
	if len(lossless) > 0 {
		pq = append(pq, kv{"pfc_to_pg_map", MapName}, kv{"pfc_enable", join(lossless)})
		if wd.Enabled {
			pq = append(pq, kv{"pfcwd_sw_enable", join(lossless)})
		}
	}
	pqJSON := encodeHash(pq)
	type queueHash struct {
		suffix string
		json   []byte
	}
	var queues []queueHash
	for _, cl := range p.Classes {
		q := []kv{{"scheduler", SchedulerName(cl.Name)}}
		if cl.ECN != nil {
			q = append(q, kv{"wred_profile", WREDName(cl.Name)})
		}
		queues = append(queues, queueHash{"|" + itoa(cl.Priority), encodeHash(q)})
	}
	wdJSON := encodeHash([]kv{{"action", string(wd.Action)}, {"detection_time", itoa(det)}, {"restoration_time", itoa(rest)}})
	for _, port := range c.sw.Ports {
		c.raw("PORT_QOS_MAP", port.Name, pqJSON)
		for _, q := range queues {
			c.raw("QUEUE", port.Name+q.suffix, q.json)
		}
		for _, l := range lossless {
			if err := c.replace("BUFFER_PG", port.Name+"|"+itoa(l), kv{"profile", portProfile[port.Name]}); err != nil {
				return err
			}
		}
		// Egress: the templates give only queues 3-4 the lossless egress
		// profile (buffers_config.j2: BUFFER_QUEUE port|3-4
		// egress_lossless_profile, |0-2 and |5-6 egress_lossy_profile);
		// a lossless class on another priority must not keep a lossy
		// profile, which can tail-drop (issue 10 item 7).
		for _, l := range lossless {
			c.raw("BUFFER_QUEUE", port.Name+"|"+itoa(l), egressLosslessJSON)
		}
		if len(lossless) > 0 && wd.Enabled {
			c.raw("PFC_WD", port.Name, wdJSON)
		} else {
			// pfcwd keeps watching a port while PFC_WD|<port> exists.
			c.d.Deletes = append(c.d.Deletes, path("PFC_WD", port.Name))
		}
		mtu := c.f.PortMTU(port)
		if mtu < 68 || mtu > 9216 {
			return fmt.Errorf("port %s: mtu %d outside SONiC's 68..9216", port.Name, mtu)
		}
		if err := c.field("PORT", port.Name, "mtu", itoa(mtu)); err != nil {
			return err
		}
		if semi {
			if err := c.field("PORT", port.Name, "pfc_asym", "on"); err != nil {
				return err
			}
		}
	}
	if len(lossless) > 0 && len(c.sw.Ports) > 0 {
		// One field per inventory port: an update at CABLE_LENGTH|AZURE
		// would be a JSON patch add of the whole hash, wiping every other
		// port's length (sonic-gnmi json_client.go; issue 10 item 2).
		for _, port := range c.sw.Ports {
			if err := c.field("CABLE_LENGTH", cableLengthTable, port.Name, strconv.Itoa(int(math.Ceil(port.CableMeters)))+"m"); err != nil {
				return err
			}
		}
	}
	for _, fc := range []string{"PFCWD", "QUEUE", "PG_WATERMARK"} {
		if fc == "PFCWD" && (len(lossless) == 0 || !wd.Enabled) {
			continue
		}
		if err := c.field("FLEX_COUNTER_TABLE", fc, "FLEX_COUNTER_STATUS", "enable"); err != nil {
			return err
		}
	}
	if p.GlobalPause && len(lossless) > 0 {
		c.d.Notes = append(c.d.Notes, "802.3x global pause is requested together with PFC; SONiC's CONFIG_DB has no pause field, turn it off with the platform tools")
	}
	if prof, err := profile.LookupFor(string(intent.PlatformSONiC), c.sw.Profile); err == nil && prof.Write.GCU != nil {
		c.d.Notes = append(c.d.Notes, renderGCUNote+prof.Name+"'s config updater refuses to create buffer and WRED profiles, so plan, which reads the switch's CONFIG_DB, writes the template's pg_lossless profiles and AZURE_LOSSLESS instead (README, SONiC)")
	}
	return nil
}

// bufferProfilesNote starts the note on the FABRICCTL_PG profiles' size
// convention.
const bufferProfilesNote = "buffer profiles: "

// renderGCUNote starts the note compile gives a switch whose release's
// config updater refuses fabricctl's own buffer and WRED profiles; plan
// rewrites the payload (gcurules.go) and drops the note.
const renderGCUNote = "this payload is the intent's own objects: "
