package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/check"
)

type headroomOptions struct {
	speed  string
	cable  string
	mtu    int
	asic   string
	output string
	// cellFactor is --cell-factor (0: the ASIC's, else 1), the flag every
	// command takes.
	cellFactor float64
	// files and port: --port NODE:PORT of the intent in files explains
	// that port's (or host NIC's) derived facts.
	files []string
	port  string
	// given are the flags given on the command line: --port takes the
	// port's figures from the intent and refuses a flag that would set
	// one of them (a default is no value given).
	given func(name string) bool
}

func newHeadroomCmd(d *deps) *cobra.Command {
	o := &headroomOptions{}
	cmd := &cobra.Command{
		Use:   "headroom --speed 400G --cable 100m --mtu 9216",
		Short: "Show the PFC headroom one lossless priority needs, by three published models",
		Long: `Headroom computes the ingress buffer one lossless priority of one port must
reserve to absorb what is still in flight after it sends PFC XOFF, with the three
published models side by side: the IEEE 802.1Qbb delay model, SONiC's dynamic
buffer calculation and the mlx5 NIC driver; with --asic, also the switch
vendor's validated lookup table for that ASIC. The largest is what check (FC112)
requires; multiply by the lossless priorities per port. The assumptions behind
the numbers are printed with them.

With -f INTENT --port SWITCH:PORT it explains that port's figures as every
command reads them (intent/portfacts): the inputs with where each comes from
(speed, cable, MTU, ASIC, cell and cell factor), the models, the headroom
programmed and what it takes of the buffer, the XOFF point and ECN thresholds
of each lossless class. --port HOST:INTERFACE explains a host NIC's: mlx5's
headroom, the cable the driver is given, what the link needs and the smallest
lossless receive buffer the driver takes.

Exit codes: 0 ok, 64 usage.`,
		Example: `  fabricctl headroom --speed 400G --cable 100m --mtu 9216
  fabricctl headroom --speed 100G --cable 3m --mtu 9216 --cell-factor 2 -o json
  fabricctl headroom --speed 400G --cable 5m --asic tomahawk4
  fabricctl headroom -f fabric.yaml --port leaf2:Ethernet0
  fabricctl headroom -f fabric.yaml --port gpu1:ens1f0np0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.cellFactor = d.cellFactor
			o.given = cmd.Flags().Changed
			if o.port != "" || len(o.files) > 0 {
				return o.explain(d, cmd.InOrStdin(), cmd.OutOrStdout())
			}
			in, err := o.input()
			if err != nil {
				return err
			}
			return o.run(cmd.OutOrStdout(), in)
		},
	}
	cmd.Flags().StringVar(&o.speed, "speed", "", "port speed, e.g. 100G, 400G (required)")
	cmd.Flags().StringVar(&o.cable, "cable", "100m", "cable length, e.g. 3m, 100m")
	cmd.Flags().IntVar(&o.mtu, "mtu", intent.DefaultMTU, "port MTU in bytes")
	cmd.Flags().StringVar(&o.asic, "asic", "", "switch ASIC ("+strings.Join(intent.ASICNames(), ", ")+"): adds the vendor's lookup table as a fourth model and, for NVIDIA Spectrum, its cell factor")
	cmd.Flags().StringVarP(&o.output, "output", "o", "text", "output format: text or json")
	cmd.Flags().StringArrayVarP(&o.files, "file", "f", nil, "intent file (repeatable; - reads stdin): with --port, explain that port's figures")
	cmd.Flags().StringVar(&o.port, "port", "", "SWITCH:PORT or HOST:INTERFACE of the intent (-f) whose derived figures to explain")
	return cmd
}

func (o *headroomOptions) input() (intent.HeadroomInput, error) {
	var in intent.HeadroomInput
	if err := checkOutput(o.output, "text", "json"); err != nil {
		return in, err
	}
	if o.speed == "" {
		return in, usagef("--speed is required (e.g. --speed 400G)")
	}
	speed, err := parseSpeedFlag("speed", o.speed)
	if err != nil {
		return in, err
	}
	cable, err := parseCableFlag("cable", o.cable)
	if err != nil {
		return in, err
	}
	if o.mtu < 64 || o.mtu > 65535 {
		return in, usagef("--mtu %d: want 64 to 65535", o.mtu)
	}
	in = intent.HeadroomInput{Speed: speed, CableMeters: cable, MTU: o.mtu, CellFactor: 1, ASIC: o.asic}
	if o.asic != "" {
		a, ok := intent.LookupASIC(o.asic)
		if !ok {
			return in, usagef("--asic %q: want one of %s", o.asic, strings.Join(intent.ASICNames(), ", "))
		}
		in.CellFactor = a.CellFactor()
	}
	if o.cellFactor > 0 {
		in.CellFactor = o.cellFactor
	}
	return in, nil
}

func (o *headroomOptions) run(out io.Writer, in intent.HeadroomInput) error {
	r := check.Headroom(in)
	var err error
	if o.output == "json" {
		err = r.WriteJSON(out)
	} else {
		err = r.WriteText(out)
	}
	if err != nil {
		return fmt.Errorf("headroom: write output: %w", err)
	}
	return nil
}
