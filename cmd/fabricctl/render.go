package main

import (
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
	"github.com/fabricctl/fabricctl/internal/yangcheck"
	"github.com/fabricctl/fabricctl/switchdrv"
)

type renderOptions struct {
	files     []string
	switches  []string
	output    string
	yangCheck bool
	yangDir   string
}

func newRenderCmd(d *deps) *cobra.Command {
	o := &renderOptions{}
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
(--yang-dir, else $FABRICCTL_YANG_DIR, else ../shared/yang beside the
repository) and prints each violation to stderr; CLI-origin lines are not
YANG-modelled and are not checked.

Exit codes: 0 ok, 1 the intent cannot be read or compiled (or the YANG cannot
be loaded), 3 --validate found violations, 64 usage.`,
		Example: `  fabricctl render -f fabric.yaml
  fabricctl render -f policy.yaml -f inventory.yaml --switch leaf1 -o json
  fabricctl render -f fabric.yaml --validate --yang-dir ../shared/yang > /dev/null`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
	cmd.Flags().StringVar(&o.yangDir, "yang-dir", "", "YANG tree for --validate (default $"+yangcheck.EnvDir+" or ../shared/yang)")
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
	return nil
}

func (o *renderOptions) run(stdin io.Reader, out, errw io.Writer) error {
	f, err := intent.LoadFrom(stdin, o.files...)
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
	ds, err := renderCompile(reg, f, o.switches)
	if err != nil {
		return withCode(ExitError, err)
	}
	if o.output == "json" {
		err = writeRenderJSON(out, ds)
	} else {
		err = writeRenderText(out, ds)
	}
	if err != nil {
		return withCode(ExitError, fmt.Errorf("render: write output: %w", err))
	}
	if o.yangCheck {
		return o.checkYANG(errw, ds)
	}
	return nil
}

// checkYANG validates every YANG-modelled payload of ds and prints the
// violations, one per line: switch, path of the update, violation.
func (o *renderOptions) checkYANG(w io.Writer, ds []*switchdrv.Desired) error {
	root := o.yangDir
	if root == "" {
		var err error
		if root, err = yangcheck.Dir(); err != nil {
			return withCode(ExitError, fmt.Errorf("render --validate: %w", err))
		}
	}
	schemas := map[intent.Platform]*yangcheck.Schema{}
	n, bad := 0, 0
	for _, d := range ds {
		s, ok := schemas[d.Platform]
		if !ok {
			var err error
			if s, err = yangcheck.LoadPlatform(root, d.Platform); err != nil {
				return withCode(ExitError, fmt.Errorf("render --validate: %w", err))
			}
			schemas[d.Platform] = s
		}
		for _, u := range append(append([]*gnmipb.Update{}, d.Replaces...), d.Updates...) {
			if u.GetPath().GetOrigin() == yangcheck.OriginCLI {
				continue
			}
			n++
			for _, v := range s.ValidateUpdate(nil, u) {
				bad++
				fmt.Fprintf(w, "%s (%s) %s: %s\n", d.Switch, d.Platform, yangcheck.PathString(u.GetPath()), v)
			}
		}
	}
	if bad > 0 {
		return withCode(ExitCheckFailed, fmt.Errorf("render --validate: %d YANG violation(s) in %d payload(s)", bad, n))
	}
	return nil
}

// renderCompile compiles the selected switches (all when only is empty), in
// the intent's (sorted) order.
func renderCompile(reg *switchdrv.Registry, f *intent.Fabric, only []string) ([]*switchdrv.Desired, error) {
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
	var out []*switchdrv.Desired
	for i := range f.Switches {
		sw := &f.Switches[i]
		if len(want) > 0 && !want[sw.Name] {
			continue
		}
		p, err := reg.Lookup(sw.Platform)
		if err != nil {
			return nil, fmt.Errorf("switch %s: %w", sw.Name, err)
		}
		d, err := p.Compile(f, sw)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

func writeRenderText(w io.Writer, ds []*switchdrv.Desired) error {
	var b bytes.Buffer
	for _, d := range ds {
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
	}
	_, err := w.Write(b.Bytes())
	return err
}

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

func writeRenderJSON(w io.Writer, ds []*switchdrv.Desired) error {
	out := make([]renderJSON, 0, len(ds))
	for _, d := range ds {
		r := renderJSON{Switch: d.Switch, Platform: d.Platform, Encoding: d.Encoding.String(), Notes: d.Notes}
		var err error
		if r.Replace, err = renderOps(d.Replaces); err != nil {
			return fmt.Errorf("switch %s: %w", d.Switch, err)
		}
		if r.Update, err = renderOps(d.Updates); err != nil {
			return fmt.Errorf("switch %s: %w", d.Switch, err)
		}
		out = append(out, r)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
