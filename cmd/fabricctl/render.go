package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/spf13/cobra"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/prototext"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/profile"
	"github.com/fabricctl/fabricctl/internal/yangcheck"
	"github.com/fabricctl/fabricctl/switchdrv"
)

type renderOptions struct {
	// d gives loadIntent (the derived-fact flags).
	d         *deps
	files     []string
	switches  []string
	output    string
	yangCheck bool
	yangDir   string
	// device: with --validate, also apply each SetRequest to the switch's
	// release profile's factory-default datastore as the device would.
	device, deviceSet bool
	// bare: with --device, the factory datastore alone, without the
	// subinterfaces the intent takes as existing.
	bare bool
}

func newRenderCmd(d *deps) *cobra.Command {
	o := &renderOptions{d: d}
	cmd := &cobra.Command{
		Use:   "render -f INTENT [-f MORE] [--switch NAME] [-o prototext|json]",
		Short: "Print the gNMI SetRequest each switch would get, without dialing anything",
		Long: `Render compiles the intent for every switch (or the ones named with --switch)
and prints the one gNMI SetRequest per switch that apply would send: replace for
the subtrees fabricctl owns, update for single leaves and CLI lines. Nothing is
contacted; credentials are not read.

The findings of fabricctl check (errors and warnings) are printed to
stderr first; render still renders, so a payload can be inspected, but plan
and apply refuse such an intent.

Platform notes (for example that plain OpenConfig cannot express PFC) are
printed as comments (prototext) or in a "notes" member (json).

--validate checks every JSON_IETF payload against the platform's YANG models
(--yang-dir, else $FABRICCTL_YANG_DIR, else the modules embedded in
fabricctl: see fabricctl version) and prints each violation to stderr; CLI-origin lines are not
YANG-modelled and are not checked. --device (with --validate) also applies each
SetRequest, as the device would, to the factory-default datastore of the
switch's release profile (switches[].profile) and validates the whole result
(leafref, must, when, mandatory, the profile's features), printing the
device's reason for a refusal. What the intent takes as existing and
fabricctl does not write is assumed there and printed (SR Linux: each
inventory port as a routed interface with its subinterface and ip-mtu, which
plan checks on the switch); --bare checks the factory datastore alone, on
which every SR Linux payload is refused (its classifiers' subinterfaces are
missing).

Exit codes: 0 ok, 1 the intent cannot be read or compiled (or the YANG cannot
be loaded), 3 --validate found violations, 64 usage.`,
		Example: `  fabricctl render -f fabric.yaml
  fabricctl render -f policy.yaml -f inventory.yaml --switch leaf1 -o json
  fabricctl render -f fabric.yaml --validate > /dev/null
  fabricctl render -f fabric.yaml --validate --device > /dev/null`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.deviceSet = cmd.Flags().Changed("device")
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringArrayVarP(&o.files, "file", "f", nil, "intent file (repeatable; - reads stdin)")
	cmd.Flags().StringArrayVar(&o.switches, "switch", nil, "only this switch (repeatable)")
	cmd.Flags().StringVarP(&o.output, "output", "o", "prototext", "output format: prototext or json")
	cmd.Flags().BoolVar(&o.yangCheck, "validate", false, "check every payload against the platform YANG (exit 3 on violations)")
	cmd.Flags().BoolVar(&o.device, "device", renderDeviceDefault, "with --validate: apply each SetRequest to the release profile's factory-default datastore and validate the whole result as the device does")
	cmd.Flags().BoolVar(&o.bare, "bare", false, "with --device: the factory datastore alone, without the subinterfaces the intent takes as existing")
	cmd.Flags().StringVar(&o.yangDir, "yang-dir", "", "YANG tree for --validate, one folder per vendor (default $"+yangcheck.EnvDir+", else the modules embedded in fabricctl)")
	return cmd
}

func (o *renderOptions) validate() error {
	if err := checkOutput(o.output, "prototext", "json"); err != nil {
		return err
	}
	if len(o.files) == 0 {
		return usagef("no intent file given: use -f FILE")
	}
	if o.yangDir != "" && !o.yangCheck {
		return usagef("--yang-dir needs --validate")
	}
	if o.device && !o.yangCheck && o.deviceSet {
		return usagef("--device needs --validate")
	}
	if o.bare && !o.device {
		return usagef("--bare is a form of --device: use --validate --device --bare")
	}
	return nil
}

func (o *renderOptions) run(stdin io.Reader, out, errw io.Writer) error {
	f, err := o.d.loadIntent(stdin, o.files...)
	if err != nil {
		return withCode(ExitError, fmt.Errorf("load intent (run fabricctl check for details): %w", err))
	}
	if _, err := printFindings(f, errw); err != nil { // render shows, it does not refuse
		return err
	}
	if len(f.Switches) == 0 {
		fmt.Fprintf(errw, "fabricctl: fabric %s has no switches (inventory.switches): nothing to render\n", f.Name)
	}
	reg, err := newRegistry()
	if err != nil {
		return withCode(ExitError, err)
	}
	sws, err := renderSelect(f, o.switches)
	if err != nil {
		return withCode(ExitError, err)
	}
	var yc *yangChecker
	if o.yangCheck {
		tree, err := yangcheck.Open(o.yangDir)
		if err != nil {
			return withCode(ExitError, fmt.Errorf("render --validate: %w", err))
		}
		yc = &yangChecker{tree: tree, w: errw, schemas: map[string]*yangcheck.Schema{}}
	}
	// Switch by switch: compile one, write it, check it, let it go. Only
	// the buffered writer's 64 KiB and one switch's payload are held, not
	// the whole fabric's.
	bw := bufio.NewWriterSize(out, 64<<10)
	var sw renderWriter = &renderText{w: bw}
	if o.output == "json" {
		sw = &renderJSONWriter{w: bw}
	}
	var checked []*switchdrv.Desired // kept only for --device, after the schema check
	for _, s := range sws {
		p, err := reg.Lookup(s.Platform)
		if err != nil {
			return withCode(ExitError, fmt.Errorf("switch %s: %w", s.Name, err))
		}
		d, err := p.Compile(f, s)
		if err != nil {
			return withCode(ExitError, err)
		}
		if err := sw.write(d); err != nil {
			return withCode(ExitError, fmt.Errorf("render: write output: %w", err))
		}
		if yc != nil {
			if err := yc.check(s, d); err != nil {
				return err
			}
			if o.device {
				checked = append(checked, d)
			}
		}
	}
	if err := sw.end(); err != nil {
		return withCode(ExitError, fmt.Errorf("render: write output: %w", err))
	}
	if err := bw.Flush(); err != nil {
		return withCode(ExitError, fmt.Errorf("render: write output: %w", err))
	}
	if yc == nil {
		return nil
	}
	if yc.bad > 0 {
		return withCode(ExitCheckFailed, fmt.Errorf("render --validate: %d YANG violation(s) in %d payload(s)", yc.bad, yc.n))
	}
	if o.device {
		n, refused, err := deviceCheck(errw, f, checked, yc.schema, o.bare)
		if err != nil {
			return withCode(ExitError, fmt.Errorf("render --validate --device: %w", err))
		}
		if refused > 0 {
			return withCode(ExitCheckFailed, fmt.Errorf("render --validate --device: %d of %d switch(es) would refuse their SetRequest", refused, n))
		}
	}
	return nil
}

// yangChecker validates every YANG-modelled payload of each switch and
// prints the violations, one per line: switch, path of the update,
// violation. Each switch is judged by the YANG of its release profile
// (yangcheck.Tree.LoadRelease), never by another release's.
type yangChecker struct {
	tree    *yangcheck.Tree
	w       io.Writer
	schemas map[string]*yangcheck.Schema // by release
	n, bad  int
}

// schema returns the schema of the profile's release from the checker's
// YANG tree, loading it once.
func (c *yangChecker) schema(prof *profile.Profile) (*yangcheck.Schema, error) {
	if s, ok := c.schemas[prof.YANG.Release]; ok {
		return s, nil
	}
	s, err := c.tree.LoadRelease(prof.YANG.Release)
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", prof.Name, err)
	}
	c.schemas[prof.YANG.Release] = s
	return s, nil
}

func (c *yangChecker) check(sw *intent.Switch, d *switchdrv.Desired) error {
	prof, err := switchProfile(sw)
	if err != nil {
		return withCode(ExitError, fmt.Errorf("render --validate: %w", err))
	}
	s, err := c.schema(prof)
	if err != nil {
		return withCode(ExitError, fmt.Errorf("render --validate: %w", err))
	}
	for _, u := range append(append([]*gnmipb.Update{}, d.Replaces...), d.Updates...) {
		if u.GetPath().GetOrigin() == yangcheck.OriginCLI {
			continue
		}
		c.n++
		for _, v := range s.ValidateUpdate(nil, u) {
			c.bad++
			fmt.Fprintf(c.w, "%s (%s) %s: %s\n", d.Switch, d.Platform, yangcheck.PathString(u.GetPath()), v)
		}
	}
	return nil
}

// renderSelect returns the selected switches (all when only is empty), in
// the intent's (sorted) order.
func renderSelect(f *intent.Fabric, only []string) ([]*intent.Switch, error) {
	want := map[string]bool{}
	for _, n := range only {
		if f.Switch(n) == nil {
			names := make([]string, len(f.Switches))
			for i, s := range f.Switches {
				names[i] = s.Name
			}
			return nil, fmt.Errorf("--switch %s: no such switch in the intent (switches: %s)", n, strings.Join(names, ", "))
		}
		want[n] = true
	}
	var out []*intent.Switch
	for i := range f.Switches {
		if len(want) == 0 || want[f.Switches[i].Name] {
			out = append(out, &f.Switches[i])
		}
	}
	return out, nil
}

// renderWriter writes one switch at a time.
type renderWriter interface {
	write(d *switchdrv.Desired) error
	end() error
}

type renderText struct{ w io.Writer }

func (r *renderText) write(d *switchdrv.Desired) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# switch %s (%s), encoding %s: %d replace, %d update\n", d.Switch, d.Platform, d.Encoding, len(d.Replaces), len(d.Updates))
	for _, n := range d.Notes {
		fmt.Fprintf(&b, "# note: %s\n", n)
	}
	txt, err := prototext.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(d.SetRequest())
	if err != nil {
		return fmt.Errorf("switch %s: %w", d.Switch, err)
	}
	b.Write(txt)
	b.WriteString("\n")
	_, err = r.w.Write(b.Bytes())
	return err
}

func (r *renderText) end() error { return nil }

// renderJSON is one switch in -o json: every operation with its path and
// its value decoded (JSON values as JSON, CLI text as a string).
type renderJSON struct {
	Switch   string          `json:"switch"`
	Platform intent.Platform `json:"platform"`
	Encoding string          `json:"encoding"`
	Notes    []string        `json:"notes,omitempty"`
	Replace  []renderOp      `json:"replace"`
	Update   []renderOp      `json:"update"`
}

type renderOp struct {
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value"`
}

func renderOps(us []*gnmipb.Update) ([]renderOp, error) {
	out := make([]renderOp, 0, len(us))
	for _, u := range us {
		op := renderOp{Path: yangcheck.PathString(u.GetPath())}
		switch v := u.GetVal().GetValue().(type) {
		case *gnmipb.TypedValue_JsonIetfVal:
			op.Value = v.JsonIetfVal
		case *gnmipb.TypedValue_JsonVal:
			op.Value = v.JsonVal
		default:
			b, err := protojson.Marshal(u.GetVal())
			if err != nil {
				return nil, fmt.Errorf("%s: %w", op.Path, err)
			}
			op.Value = b
		}
		if !json.Valid(op.Value) {
			return nil, fmt.Errorf("%s: value is not valid JSON", op.Path)
		}
		out = append(out, op)
	}
	return out, nil
}

// renderJSONWriter streams a JSON array, one element per switch, indented
// as one encode of the whole array would be.
type renderJSONWriter struct {
	w io.Writer
	n int
}

func (r *renderJSONWriter) write(d *switchdrv.Desired) error {
	e := renderJSON{Switch: d.Switch, Platform: d.Platform, Encoding: d.Encoding.String(), Notes: d.Notes}
	var err error
	if e.Replace, err = renderOps(d.Replaces); err != nil {
		return fmt.Errorf("switch %s: %w", d.Switch, err)
	}
	if e.Update, err = renderOps(d.Updates); err != nil {
		return fmt.Errorf("switch %s: %w", d.Switch, err)
	}
	b, err := json.MarshalIndent(e, "  ", "  ")
	if err != nil {
		return fmt.Errorf("switch %s: %w", d.Switch, err)
	}
	sep := ",\n  "
	if r.n == 0 {
		sep = "[\n  "
	}
	r.n++
	if _, err := io.WriteString(r.w, sep); err != nil {
		return err
	}
	_, err = r.w.Write(b)
	return err
}

func (r *renderJSONWriter) end() error {
	if r.n == 0 {
		_, err := io.WriteString(r.w, "[]\n")
		return err
	}
	_, err := io.WriteString(r.w, "\n]\n")
	return err
}
