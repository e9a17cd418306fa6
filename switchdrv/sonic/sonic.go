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
//     class, BUFFER_PG|<port>|<prio> for every lossless priority, PFC_WD|<port>.
//
// Merged single fields: CABLE_LENGTH|AZURE/<port>, PORT|<port>/mtu,
// PFC_WD|GLOBAL/POLL_INTERVAL and FLEX_COUNTER_TABLE|{PFCWD,QUEUE,PG_WATERMARK}/
// FLEX_COUNTER_STATUS (so the counters validate needs are polled).
// Buffer pools are platform-specific (they come from the SKU's buffer
// template) and are never touched: BUFFER_PROFILE entries use the existing
// ingress_lossless_pool.
package sonic

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
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

var quirks = switchdrv.Quirks{
	PFC:                   true,
	MaxLosslessPriorities: 2, // SONiC default pfc_enable "3,4"
	BufferCellBytes:       256,
	Origin:                Origin,
	WatchdogMin:           100,
	WatchdogMax:           5000,
}

// Platform is the SONiC platform.
type Platform struct{}

// Register adds the SONiC platform to r.
func Register(r *switchdrv.Registry) error { return r.Register(Platform{}) }

// Name implements switchdrv.Platform.
func (Platform) Name() intent.Platform { return intent.PlatformSONiC }

// Quirks implements switchdrv.Platform.
func (Platform) Quirks() switchdrv.Quirks { return quirks }

// SchedulerName is the SCHEDULER key of a class.
func SchedulerName(class string) string { return schedulerPrefix + strings.ToUpper(class) }

// WREDName is the WRED_PROFILE key of a class.
func WREDName(class string) string { return wredPrefix + strings.ToUpper(class) }

type compiler struct {
	f  *intent.Fabric
	sw *intent.Switch
	d  *switchdrv.Desired
}

// Compile implements switchdrv.Platform.
func (Platform) Compile(f *intent.Fabric, sw *intent.Switch) (*switchdrv.Desired, error) {
	if f == nil || sw == nil {
		return nil, fmt.Errorf("sonic: compile: nil fabric or switch")
	}
	c := compiler{f: f, sw: sw, d: &switchdrv.Desired{
		Switch: sw.Name, Platform: intent.PlatformSONiC, Encoding: gnmipb.Encoding_JSON_IETF,
	}}
	if err := c.compile(); err != nil {
		return nil, fmt.Errorf("switch %s (sonic): %w", sw.Name, err)
	}
	return c.d, nil
}

func path(elems ...string) *gnmipb.Path {
	p := &gnmipb.Path{Origin: Origin, Elem: make([]*gnmipb.PathElem, 0, len(elems)+2)}
	p.Elem = append(p.Elem, &gnmipb.PathElem{Name: "CONFIG_DB"}, &gnmipb.PathElem{Name: "localhost"})
	for _, e := range elems {
		p.Elem = append(p.Elem, &gnmipb.PathElem{Name: e})
	}
	return p
}

func val(v any) (*gnmipb.TypedValue, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: b}}, nil
}

// replace sets the whole hash of table|key.
func (c *compiler) replace(table, key string, fields map[string]string) error {
	v, err := val(fields)
	if err != nil {
		return fmt.Errorf("%s|%s: %w", table, key, err)
	}
	c.d.Replaces = append(c.d.Replaces, &gnmipb.Update{Path: path(table, key), Val: v})
	return nil
}

// field merges one field of table|key.
func (c *compiler) field(table, key, field, value string) error {
	v, err := val(value)
	if err != nil {
		return fmt.Errorf("%s|%s: %w", table, key, err)
	}
	c.d.Updates = append(c.d.Updates, &gnmipb.Update{Path: path(table, key, field), Val: v})
	return nil
}

func itoa(i int) string { return strconv.Itoa(i) }

func join(ps []int) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = itoa(p)
	}
	return strings.Join(s, ",")
}

func (c *compiler) compile() error {
	p := &c.f.Policy
	lossless := p.LosslessPriorities()
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
		if err := c.replace(m.table, MapName, m.fields); err != nil {
			return err
		}
	}

	// Schedulers and WRED-ECN profiles.
	for _, cl := range p.Classes {
		s := map[string]string{"type": "STRICT"}
		if !cl.Strict {
			if cl.Weight < 1 || cl.Weight > 100 {
				return fmt.Errorf("class %s: DWRR weight %d outside SONiC's 1..100", cl.Name, cl.Weight)
			}
			s = map[string]string{"type": "DWRR", "weight": itoa(cl.Weight)}
		}
		if err := c.replace("SCHEDULER", SchedulerName(cl.Name), s); err != nil {
			return err
		}
	}
	for _, cl := range p.Classes {
		if cl.ECN == nil {
			continue
		}
		mn, mx, pr := strconv.FormatInt(cl.ECN.MinBytes, 10), strconv.FormatInt(cl.ECN.MaxBytes, 10), itoa(cl.ECN.Probability)
		w := map[string]string{"ecn": "ecn_all"}
		for _, color := range []string{"green", "yellow", "red"} {
			w["wred_"+color+"_enable"] = "true"
			w[color+"_min_threshold"] = mn
			w[color+"_max_threshold"] = mx
			w[color+"_drop_probability"] = pr
		}
		if err := c.replace("WRED_PROFILE", WREDName(cl.Name), w); err != nil {
			return err
		}
	}

	// Headroom profiles, one per distinct size.
	portProfile := map[string]string{}
	if len(lossless) > 0 {
		sizes := map[int64]int{} // xoff -> MTU of the first port using it
		for _, port := range c.sw.Ports {
			x := headroom(c.f, port)
			portProfile[port.Name] = bufferPrefix + strconv.FormatInt(x, 10)
			if _, ok := sizes[x]; !ok {
				sizes[x] = c.f.PortMTU(port)
			}
		}
		keys := make([]int64, 0, len(sizes))
		for x := range sizes {
			keys = append(keys, x)
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
		for _, x := range keys {
			// Static headroom: xon is two frames (resume after draining
			// two MTUs below xoff); size = xon + xoff is the PG's reserved
			// headroom, with shared buffer beyond it (dynamic_th 0 = 50 %).
			xon := int64(2 * sizes[x])
			if err := c.replace("BUFFER_PROFILE", bufferPrefix+strconv.FormatInt(x, 10), map[string]string{
				"pool": losslessPool, "xoff": strconv.FormatInt(x, 10), "xon": strconv.FormatInt(xon, 10),
				"size": strconv.FormatInt(x+xon, 10), "dynamic_th": "0",
			}); err != nil {
				return err
			}
		}
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

	for _, port := range c.sw.Ports {
		pq := map[string]string{
			"dscp_to_tc_map": MapName, "tc_to_queue_map": MapName, "tc_to_pg_map": MapName,
			"pfc_to_queue_map": MapName,
		}
		if len(lossless) > 0 {
			pq["pfc_to_pg_map"] = MapName
			pq["pfc_enable"] = join(lossless)
			if wd.Enabled {
				pq["pfcwd_sw_enable"] = join(lossless)
			}
		}
		if err := c.replace("PORT_QOS_MAP", port.Name, pq); err != nil {
			return err
		}
		for _, cl := range p.Classes {
			q := map[string]string{"scheduler": SchedulerName(cl.Name)}
			if cl.ECN != nil {
				q["wred_profile"] = WREDName(cl.Name)
			}
			if err := c.replace("QUEUE", port.Name+"|"+itoa(cl.Priority), q); err != nil {
				return err
			}
		}
		for _, l := range lossless {
			if err := c.replace("BUFFER_PG", port.Name+"|"+itoa(l), map[string]string{"profile": portProfile[port.Name]}); err != nil {
				return err
			}
		}
		if len(lossless) > 0 && wd.Enabled {
			if err := c.replace("PFC_WD", port.Name, map[string]string{
				"action": string(wd.Action), "detection_time": itoa(det), "restoration_time": itoa(rest),
			}); err != nil {
				return err
			}
		}
		if len(lossless) > 0 {
			if err := c.field("CABLE_LENGTH", cableLengthTable, port.Name, strconv.Itoa(int(math.Ceil(port.CableMeters)))+"m"); err != nil {
				return err
			}
		}
		mtu := c.f.PortMTU(port)
		if mtu < 68 || mtu > 9216 {
			return fmt.Errorf("port %s: mtu %d outside SONiC's 68..9216", port.Name, mtu)
		}
		if err := c.field("PORT", port.Name, "mtu", itoa(mtu)); err != nil {
			return err
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
	return nil
}

// headroom is the XOFF headroom one lossless priority of port needs: the
// largest of the published models (intent.Headroom), rounded up to 1 KiB.
func headroom(f *intent.Fabric, port intent.Port) int64 {
	_, req := intent.Headroom(intent.HeadroomInput{Speed: port.Speed, CableMeters: port.CableMeters, MTU: f.PortMTU(port)})
	return int64(math.Ceil(float64(req)/1024) * 1024)
}
