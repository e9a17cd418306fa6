package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/spf13/cobra"
	"google.golang.org/grpc/status"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/profile"
	"github.com/fabricctl/fabricctl/internal/yangcheck"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/srl"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

// switchProfile is the release profile of sw (switches[].profile and
// switches[].asic; default the platform's default profile).
func switchProfile(sw *intent.Switch) (*profile.Profile, error) {
	p, err := profile.LookupFor(string(sw.Platform), sw.Profile)
	if err != nil {
		return nil, fmt.Errorf("switch %s: %w", sw.Name, err)
	}
	return p.WithASIC(sw.ASIC)
}

// deviceTwin is an offline twin of sw's release profile with the full
// validation of schema (the YANG of the profile's release, never another
// release's): from the factory-default datastore, or empty when
// the caller puts the observed state in (plan).
func deviceTwin(sw *intent.Switch, schema *yangcheck.Schema, factory bool) (*twin.Twin, *profile.Profile, error) {
	prof, err := switchProfile(sw)
	if err != nil {
		return nil, nil, err
	}
	tw, err := twin.New(twin.Options{Name: sw.Name, Profile: prof, Factory: factory, Schema: schema,
		Validator: twin.YANGValidator(schema, prof)})
	return tw, prof, err
}

// seedUnderlay gives twin tw of sw the operator's configuration the intent
// builds on and fabricctl does not write, and returns what it assumed ("" for
// nothing):
//   - SR Linux: each inventory port as an enabled routed interface with the
//     subinterface its classifier attaches to (ports[].subinterface),
//     ip-mtu the port's IP MTU. A fresh 7220 has none of them (only mgmt0);
//     a real fabric's startup configuration creates them with the
//     addresses (containerlab's configs do), and plan checks they exist;
//   - SONiC, with watchdog: the PFC watchdog started at boot
//     (DEVICE_METADATA default_pfcwd_status enable), PFC_WD as sonic-utilities'
//     `pfcwd start_default` leaves it (pfcwd/main.py: GLOBAL POLL_INTERVAL
//     200 and, per port, action drop, detection and restoration 200 ms);
//     without it plan reports the watchdog as lacking (SONiC's config
//     updater cannot create PFC_WD).
func seedUnderlay(tw *twin.Twin, f *intent.Fabric, sw *intent.Switch, watchdog bool) (string, error) {
	if len(sw.Ports) == 0 {
		return "", nil
	}
	switch sw.Platform {
	case intent.PlatformSRLinux:
		mtus := map[int]bool{}
		subs := map[int]bool{}
		for _, p := range sw.Ports {
			path := &gnmipb.Path{Elem: []*gnmipb.PathElem{{Name: "srl_nokia-interfaces:interface", Key: map[string]string{"name": p.Name}}}}
			if err := tw.Put(path, srl.OperatorInterface(f, p)); err != nil {
				return "", fmt.Errorf("switch %s: seed interface %s: %w", sw.Name, p.Name, err)
			}
			mtus[f.PortMTU(p)], subs[p.Subinterface] = true, true
		}
		return fmt.Sprintf("its %d inventory port(s) %s as routed interfaces with subinterface %s, ip-mtu %s (the operator's, which plan reads from the switch)",
			len(sw.Ports), portSpan(sw), joinKeys(subs), joinKeys(mtus)), nil
	case intent.PlatformSONiC:
		var said []string
		if prof := tw.Profile(); prof != nil {
			n, err := seedSONiCPorts(tw, prof, sw)
			if err != nil {
				return "", err
			}
			if n > 0 {
				said = append(said, fmt.Sprintf("%d inventory port(s) at the intent's speed (PORT; breakout and speed are the operator's)", n))
			}
		}
		if !watchdog {
			return strings.Join(said, "; "), nil
		}
		tab := map[string]any{"GLOBAL": map[string]any{"POLL_INTERVAL": "200"}}
		for _, p := range sw.Ports {
			tab[p.Name] = map[string]any{"action": "drop", "detection_time": "200", "restoration_time": "200"}
		}
		path := &gnmipb.Path{Origin: "sonic-db", Elem: []*gnmipb.PathElem{{Name: "CONFIG_DB"}, {Name: "localhost"}, {Name: "PFC_WD"}}}
		if err := tw.Put(path, tab); err != nil {
			return "", fmt.Errorf("switch %s: seed PFC_WD: %w", sw.Name, err)
		}
		said = append(said, "the PFC watchdog started at boot (PFC_WD as `pfcwd start_default` leaves it)")
		return strings.Join(said, "; "), nil
	}
	return "", nil
}

// seedSONiCPorts sets each inventory port's PORT entry of SONiC twin tw to
// the intent's speed: the SKU's port_config.ini names the ports, breakout
// and speed are the operator's. A port the SKU does not have is an error, as
// it would be on the switch. A 100G port keeps fec rs (sonic-buildimage
// src/sonic-config-engine/minigraph.py), another speed has none. It returns
// how many entries it changed.
func seedSONiCPorts(tw *twin.Twin, prof *profile.Profile, sw *intent.Switch) (int, error) {
	n := 0
	for _, p := range sw.Ports {
		path := &gnmipb.Path{Origin: "sonic-db", Elem: []*gnmipb.PathElem{{Name: "CONFIG_DB"}, {Name: "localhost"}, {Name: "PORT"}, {Name: p.Name}}}
		v, ok := tw.Value(path)
		entry, _ := v.(map[string]any)
		if !ok || entry == nil {
			return n, fmt.Errorf("switch %s: port %s is not a port of the %s (profile %s: its CONFIG_DB has no PORT|%s)",
				sw.Name, p.Name, prof.Model, prof.Name, p.Name)
		}
		if p.Speed <= 0 {
			continue
		}
		speed := strconv.FormatInt(p.Speed/1_000_000, 10)
		if entry["speed"] == speed {
			continue
		}
		entry["speed"] = speed
		if speed == "100000" {
			entry["fec"] = "rs"
		} else {
			delete(entry, "fec")
		}
		if err := tw.Put(path, entry); err != nil {
			return n, fmt.Errorf("switch %s: seed PORT|%s: %w", sw.Name, p.Name, err)
		}
		n++
	}
	return n, nil
}

// portSpan names a switch's ports: the one, or first .. last.
func portSpan(sw *intent.Switch) string {
	if len(sw.Ports) == 1 {
		return sw.Ports[0].Name
	}
	return sw.Ports[0].Name + " .. " + sw.Ports[len(sw.Ports)-1].Name
}

// joinKeys is the set's members, ascending, joined with "/".
func joinKeys(m map[int]bool) string {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	s := make([]string, len(keys))
	for i, k := range keys {
		s[i] = fmt.Sprint(k)
	}
	return strings.Join(s, "/")
}

// deviceCheck applies each switch's SetRequest (refined against the factory
// datastore, as plan refines it against the switch, for platforms whose
// payload depends on what the switch holds: SONiC) to a twin of its release
// profile started from the profile's factory-default datastore, as the
// device applies it (write semantics, whole-datastore validation: leafref,
// must, when, mandatory, features), and prints each refusal to w with the
// device's reason. Unless bare, the datastore first gets what the intent
// takes as existing and fabricctl does not write (seedUnderlay: SR Linux's
// routed subinterfaces), printed to w as an assumption. It returns how
// many switches were checked and refused.
func deviceCheck(w io.Writer, f *intent.Fabric, ds []*switchdrv.Desired, schemaFor func(*profile.Profile) (*yangcheck.Schema, error), bare bool) (n, bad int, err error) {
	reg, err := newRegistry()
	if err != nil {
		return 0, 0, err
	}
	for _, d := range ds {
		sw := f.Switch(d.Switch)
		if sw == nil {
			return n, bad, fmt.Errorf("switch %s: not in the intent", d.Switch)
		}
		prof, err := switchProfile(sw)
		if err != nil {
			return n, bad, err
		}
		schema, err := schemaFor(prof)
		if err != nil {
			return n, bad, err
		}
		tw, _, err := deviceTwin(sw, schema, true)
		if err != nil {
			return n, bad, err
		}
		n++
		base := "factory defaults"
		if !bare {
			assumed, err := seedUnderlay(tw, f, sw, false)
			if err != nil {
				return n, bad, err
			}
			if assumed != "" {
				base = "factory defaults + assumed"
				fmt.Fprintf(w, "%s (%s, profile %s): assumed on the factory datastore: %s; --bare checks the factory datastore alone\n", d.Switch, d.Platform, prof.Name, assumed)
			}
		}
		req := d.SetRequest()
		if plat, err := reg.Lookup(sw.Platform); err == nil {
			if r, ok := plat.(switchdrv.Refiner); ok {
				// Plan refines such a payload against what the switch
				// holds: here, the factory datastore.
				rd := *d
				rd.Replaces, rd.Updates, rd.Deletes = slices.Clone(d.Replaces), slices.Clone(d.Updates), slices.Clone(d.Deletes)
				if err := r.Refine(&rd, tw.Value); err != nil {
					return n, bad, fmt.Errorf("switch %s: %w", d.Switch, err)
				}
				req = rd.SetRequest()
			}
		}
		if err := tw.Apply(req); err != nil {
			bad++
			fmt.Fprintf(w, "%s (%s, profile %s, %s): the device would refuse the SetRequest: %s\n", d.Switch, d.Platform, prof.Name, base, refusal(err))
		}
	}
	return n, bad, nil
}

// refusal is a twin's refusal as the device's gRPC code and reason.
func refusal(err error) string {
	st := status.Convert(err)
	return fmt.Sprintf("(%s) %s", st.Code(), st.Message())
}

// renderDeviceDefault: render --validate --device and plan --device stay
// opt-in: render --device starts a twin per switch, and plan --device
// costs a Get of each switch's whole configuration.
const renderDeviceDefault = false

// bindDevice adds plan's --device flag.
func (s *switchFlags) bindDevice(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&s.device, "device", renderDeviceDefault, "read each switch's whole configuration and check the SetRequest against a twin of its release profile (write semantics, leafref, must, when, mandatory, features); SONiC plans name the ports that will flap")
}

// planDeviceCheck loads an offline twin of sw's release profile with the
// switch's observed configuration (the whole datastore of each origin the
// SetRequest writes, read with Get) and applies req to it as the device
// would. The error is the device's refusal; the notes name the SONiC ports
// the generic config updater will take down and up.
func planDeviceCheck(ctx context.Context, c *transport.Client, sw *intent.Switch, req *gnmipb.SetRequest) ([]string, error) {
	prof, err := switchProfile(sw)
	if err != nil {
		return nil, err
	}
	schema, err := yangcheck.ReleaseSchema(prof.YANG.Release)
	if err != nil {
		return nil, err
	}
	tw, _, err := deviceTwin(sw, schema, false)
	if err != nil {
		return nil, err
	}
	roots := map[string]*gnmipb.Path{}
	for _, u := range append(append([]*gnmipb.Update{}, req.GetReplace()...), req.GetUpdate()...) {
		origin := u.GetPath().GetOrigin()
		if origin == "" {
			origin = req.GetPrefix().GetOrigin()
		}
		switch origin {
		case "cli":
		case "sonic-db":
			roots[origin] = &gnmipb.Path{Origin: origin, Elem: []*gnmipb.PathElem{{Name: "CONFIG_DB"}, {Name: "localhost"}}}
		default:
			roots[origin] = &gnmipb.Path{Origin: origin}
		}
	}
	for _, root := range roots {
		notes, err := c.GetConfig(ctx, []*gnmipb.Path{root})
		if err != nil {
			return nil, fmt.Errorf("read the whole configuration (%s): %w", root.GetOrigin(), err)
		}
		for _, n := range notes {
			for _, u := range n.GetUpdate() {
				raw := u.GetVal().GetJsonIetfVal()
				if raw == nil {
					raw = u.GetVal().GetJsonVal()
				}
				if raw == nil {
					continue
				}
				dec := json.NewDecoder(bytes.NewReader(raw))
				dec.UseNumber()
				var v any
				if err := dec.Decode(&v); err != nil {
					return nil, fmt.Errorf("read the whole configuration (%s): %w", root.GetOrigin(), err)
				}
				if err := tw.Put(root, v); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := tw.Apply(req); err != nil {
		return nil, errors.New(refusal(err))
	}
	var out []string
	if flaps := tw.PortFlaps(); len(flaps) > 0 {
		ports := make([]string, 0, len(flaps))
		for p := range flaps {
			ports = append(ports, p)
		}
		sort.Strings(ports)
		out = append(out, fmt.Sprintf("ports that will flap (SONiC's config updater takes them admin-down around port-critical changes): %s", strings.Join(ports, ", ")))
	}
	return out, nil
}
