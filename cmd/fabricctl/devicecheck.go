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
	"strings"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/spf13/cobra"
	"google.golang.org/grpc/status"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/profile"
	"github.com/fabricctl/fabricctl/internal/yangcheck"
	"github.com/fabricctl/fabricctl/switchdrv"
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

// deviceCheck applies each switch's SetRequest (refined against the factory
// datastore, as plan refines it against the switch, for platforms whose
// payload depends on what the switch holds: SONiC) to a twin of its release
// profile started from the profile's factory-default datastore, as the
// device applies it (write semantics, whole-datastore validation: leafref,
// must, when, mandatory, features), and prints each refusal to w with the
// device's reason. It returns how many switches were checked and refused.
func deviceCheck(w io.Writer, f *intent.Fabric, ds []*switchdrv.Desired, schemaFor func(*profile.Profile) (*yangcheck.Schema, error)) (n, bad int, err error) {
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
			fmt.Fprintf(w, "%s (%s, profile %s, factory defaults): the device would refuse the SetRequest: %s\n", d.Switch, d.Platform, prof.Name, refusal(err))
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
// opt-in. Unlike lab's profiled twins (which get the operator's routed
// subinterfaces), a bare factory datastore lacks the SR Linux subinterfaces
// the classifiers attach to, so render --device refuses the SR Linux
// payloads with require-instance; plan --device costs a Get of each
// switch's whole configuration.
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
