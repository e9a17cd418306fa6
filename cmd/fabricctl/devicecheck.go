package main

import (
	"fmt"
	"io"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/profile"
	"github.com/fabricctl/fabricctl/internal/yangcheck"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

// switchProfile is the release profile of sw (switches[].profile and
// switches[].asic; default the platform's newest).
func switchProfile(sw *intent.Switch) (*profile.Profile, error) {
	p, err := profile.LookupFor(string(sw.Platform), sw.Profile)
	if err != nil {
		return nil, fmt.Errorf("switch %s: %w", sw.Name, err)
	}
	return p.WithASIC(sw.ASIC)
}

// deviceTwin is an offline twin of sw's release profile with the full
// validation of schema: from the factory-default datastore, or empty when
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

// deviceCheck applies each switch's SetRequest to a twin of its release
// profile started from the profile's factory-default datastore, as the
// device applies it (write semantics, whole-datastore validation: leafref,
// must, when, mandatory, features), and prints each refusal to w with the
// device's reason. It returns how many switches were checked and refused.
func deviceCheck(w io.Writer, f *intent.Fabric, ds []*switchdrv.Desired, schemaFor func(intent.Platform) (*yangcheck.Schema, error)) (n, bad int, err error) {
	for _, d := range ds {
		sw := f.Switch(d.Switch)
		if sw == nil {
			return n, bad, fmt.Errorf("switch %s: not in the intent", d.Switch)
		}
		schema, err := schemaFor(sw.Platform)
		if err != nil {
			return n, bad, err
		}
		tw, prof, err := deviceTwin(sw, schema, true)
		if err != nil {
			return n, bad, err
		}
		n++
		if err := tw.Apply(d.SetRequest()); err != nil {
			bad++
			fmt.Fprintf(w, "%s (%s, profile %s, factory defaults): the device would refuse the SetRequest: %v\n", d.Switch, d.Platform, prof.Name, err)
		}
	}
	return n, bad, nil
}

// renderDeviceDefault: render --validate also checks against the profile's
// factory datastore (--device) by default once the compilers' payloads pass
// (issue 10); until then it is opt-in, like lab's profiled twins.
const renderDeviceDefault = labStrictDefault
