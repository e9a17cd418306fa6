package check

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/portfacts"
)

// HeadroomReport is the three headroom models side by side for one port
// profile, as `fabricctl headroom` prints it and FC112 applies it.
type HeadroomReport struct {
	Input    intent.HeadroomInput
	Models   []intent.HeadroomResult
	Required int64 // bytes per lossless priority: the largest model
	// Rounded is Required rounded up to 1 KiB: what the switch compilers
	// program and FC111/FC112 check against (before a platform's cell).
	Rounded       int64
	RequiredModel intent.HeadroomModel
	Assumptions   []string
}

// Headroom computes the report for in (portfacts.HeadroomOf: the figures
// check, plan and simulate read).
func Headroom(in intent.HeadroomInput) HeadroomReport {
	h := portfacts.HeadroomOf(in)
	return HeadroomReport{Input: in, Models: h.Models, Required: h.Required, Assumptions: intent.HeadroomAssumptions(in),
		Rounded: h.Programmed, RequiredModel: h.Model}
}

func (r HeadroomReport) cellFactor() float64 {
	if r.Input.CellFactor == 0 {
		return 1
	}
	return r.Input.CellFactor
}

// WriteText prints the models as columns of terms, the required maximum and
// the assumptions behind the numbers.
func (r HeadroomReport) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "PFC headroom per lossless priority per port: %s, %s m cable, MTU %d, cell factor %g\n\n",
		intent.FormatRate(r.Input.Speed), trimFloat(r.Input.CableMeters), r.Input.MTU, r.cellFactor())
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 0, 3, ' ', 0)
	rows := 0
	for _, m := range r.Models {
		rows = max(rows, len(m.Terms))
	}
	cell := func(name, value string) string { return fmt.Sprintf("%s\t%11s\t", name, value) }
	var line strings.Builder
	for _, m := range r.Models {
		line.WriteString(cell(string(m.Model), ""))
	}
	fmt.Fprintln(tw, line.String())
	for i := range rows {
		line.Reset()
		for _, m := range r.Models {
			if i < len(m.Terms) {
				line.WriteString(cell(m.Terms[i].Name, bytesStr(int64(m.Terms[i].Bytes+0.5))))
			} else {
				line.WriteString(cell("", ""))
			}
		}
		fmt.Fprintln(tw, line.String())
	}
	line.Reset()
	for _, m := range r.Models {
		line.WriteString(cell("total", bytesStr(m.Bytes)))
	}
	fmt.Fprintln(tw, line.String())
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, l := range strings.SplitAfter(table.String(), "\n") {
		b.WriteString(strings.TrimRight(l, " \n"))
		if strings.HasSuffix(l, "\n") {
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, "\nrequired: %s per lossless priority (the largest model, %s)\n", bytesStr(r.Required), r.RequiredModel)
	fmt.Fprintf(&b, "programmed: %s (rounded up to 1 KiB: what plan writes; check counts it in the switch's buffer cells)\n", bytesStr(r.Rounded))
	if len(r.Assumptions) > 0 {
		b.WriteString("assumptions:\n")
		for _, a := range r.Assumptions {
			fmt.Fprintf(&b, "  - %s\n", a)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

type jsonTerm struct {
	Name  string  `json:"name"`
	Bytes float64 `json:"bytes"`
}

type jsonModel struct {
	Model intent.HeadroomModel `json:"model"`
	Bytes int64                `json:"bytes"`
	Terms []jsonTerm           `json:"terms"`
}

// WriteJSON prints the report as one JSON object.
func (r HeadroomReport) WriteJSON(w io.Writer) error {
	out := struct {
		Speed         int64                `json:"speedBitsPerSecond"`
		CableMeters   float64              `json:"cableMeters"`
		MTU           int                  `json:"mtu"`
		CellFactor    float64              `json:"cellFactor"`
		Models        []jsonModel          `json:"models"`
		Required      int64                `json:"requiredBytes"`
		Rounded       int64                `json:"programmedBytes"`
		RequiredModel intent.HeadroomModel `json:"requiredModel"`
		Assumptions   []string             `json:"assumptions"`
	}{
		Speed: r.Input.Speed, CableMeters: r.Input.CableMeters, MTU: r.Input.MTU, CellFactor: r.cellFactor(),
		Required: r.Required, Rounded: r.Rounded, RequiredModel: r.RequiredModel, Assumptions: r.Assumptions,
	}
	if out.Assumptions == nil {
		out.Assumptions = []string{}
	}
	for _, m := range r.Models {
		jm := jsonModel{Model: m.Model, Bytes: m.Bytes}
		for _, t := range m.Terms {
			jm.Terms = append(jm.Terms, jsonTerm{t.Name, t.Bytes})
		}
		out.Models = append(out.Models, jm)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
