package tune

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/portfacts"
)

// Programmed is the tuned thresholds as switches program them: whole
// buffer cells of their ASIC (portfacts ECN), one entry per platform and
// cell.
type Programmed struct {
	Platform  intent.Platform `json:"platform"`
	CellBytes int64           `json:"cellBytes"`
	MinCells  int64           `json:"minCells"`
	MaxCells  int64           `json:"maxCells"`
	Switches  []string        `json:"switches"`
}

// Programmed lists the RoCE class's ECN thresholds of the tuned intent
// (w.Fabric) in the switches' cells, as portfacts derives them.
func (r *Result) Programmed(w *Written) []Programmed {
	if w == nil || w.Fabric == nil {
		return nil
	}
	var out []Programmed
	for i := range w.Fabric.Switches {
		sw := &w.Fabric.Switches[i]
		if len(sw.Ports) == 0 {
			continue
		}
		pf := portfacts.PortOf(w.Fabric, sw, sw.Ports[0])
		l := pf.LosslessAt(r.class.Priority)
		if l == nil || l.ECN == nil || pf.Switch.CellBytes == 0 {
			continue
		}
		p := Programmed{Platform: sw.Platform, CellBytes: pf.Switch.CellBytes, MinCells: l.ECN.MinCells, MaxCells: l.ECN.MaxCells}
		k := slices.IndexFunc(out, func(o Programmed) bool {
			return o.Platform == p.Platform && o.CellBytes == p.CellBytes && o.MinCells == p.MinCells && o.MaxCells == p.MaxCells
		})
		if k < 0 {
			out = append(out, p)
			k = len(out) - 1
		}
		out[k].Switches = append(out[k].Switches, sw.Name)
	}
	return out
}

// SettingJSON is a setting in the intent's terms: the ECN thresholds in
// bytes, the DCQCN parameters by their policy.dcqcn names as the intent
// writes them.
type SettingJSON struct {
	Mode  string            `json:"mode,omitempty"`
	ECN   *ECNJSON          `json:"ecn,omitempty"`
	DCQCN map[string]string `json:"dcqcn,omitempty"`
}

// ECNJSON is a class's ECN thresholds.
type ECNJSON struct {
	Min         int64 `json:"minBytes"`
	Max         int64 `json:"maxBytes"`
	Probability int   `json:"probability"`
}

func settingJSON(s Setting, dcqcn bool) SettingJSON {
	j := SettingJSON{Mode: string(s.Mode)}
	if !s.Mode.ECN() {
		return j // no ECN marking, no DCQCN
	}
	for _, row := range settingRows(s, dcqcn, false) {
		if name, ok := strings.CutPrefix(row[0], "dcqcn."); ok {
			if j.DCQCN == nil {
				j.DCQCN = map[string]string{}
			}
			j.DCQCN[name] = row[1]
		}
	}
	if s.Kmax > 0 {
		j.ECN = &ECNJSON{s.Kmin, s.Kmax, s.Pmax}
	}
	return j
}

// Report is the JSON form of a search and its edits.
type Report struct {
	Class         string            `json:"class"`
	Scenarios     []string          `json:"scenarios"`
	Seed          int64             `json:"seed"`
	Duration      time.Duration     `json:"durationNs"`
	Evaluated     int               `json:"evaluated"`
	DCQCNSearched bool              `json:"dcqcnSearched"`
	Bounds        Bounds            `json:"bounds"`
	BeforeSetting SettingJSON       `json:"beforeSetting"`
	AfterSetting  SettingJSON       `json:"afterSetting"`
	Before        *Score            `json:"before"`
	After         *Score            `json:"after"`
	Edits         []Edit            `json:"edits"`
	Changes       []Change          `json:"changes"`
	Programmed    []Programmed      `json:"programmed,omitempty"`
	Files         map[string]string `json:"files,omitempty"` // the tuned text of each changed file
	// Modes are the modes searched (--modes), the intent's own first.
	Modes []ModeJSON `json:"modes,omitempty"`
	Notes []string   `json:"notes,omitempty"`
}

// ModeJSON is the search of one mode.
type ModeJSON struct {
	Mode string `json:"mode"`
	// Refused says why the intent's switches cannot express it (check's
	// FC106, FC162); the mode was not simulated.
	Refused   string       `json:"refused,omitempty"`
	Evaluated int          `json:"evaluated"`
	Setting   *SettingJSON `json:"setting,omitempty"`
	Score     *Score       `json:"score,omitempty"`
	// Best is the overall best: the tuned setting is this mode's.
	Best bool `json:"best,omitempty"`
}

// modesJSON is r.Modes in the report's terms.
func (r *Result) modesJSON() []ModeJSON {
	var out []ModeJSON
	for _, m := range r.Modes {
		j := ModeJSON{Mode: string(m.Mode), Refused: m.Refused, Evaluated: m.Evaluated, Score: m.Best}
		if m.Best != nil {
			sj := settingJSON(m.Best.Setting, r.DCQCN)
			j.Setting, j.Best = &sj, m.Best.Setting == r.Best
		}
		out = append(out, j)
	}
	return out
}

// writeModes writes the table of the modes searched: each mode's best
// setting and its score, the overall best marked, refused modes with why.
func (r *Result) writeModes(b *strings.Builder) {
	tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MODE\tSIMULATED\tP99 FCT (x intent's)\tUNFINISHED\tDROPS (LOSSLESS)\tPAUSE TIME\tBEST SETTING OF THE MODE")
	for _, m := range r.Modes {
		if m.Refused != "" {
			fmt.Fprintf(tw, "%s\t-\t\t\t\t\trefused: %s\n", m.Mode, m.Refused)
			continue
		}
		if m.Best == nil {
			fmt.Fprintf(tw, "%s\t%d\t\t\t\t\tno setting inside the bounds within the budget\n", m.Mode, m.Evaluated)
			continue
		}
		sc := m.Best
		var drops int64
		flows := 0
		for _, run := range sc.Runs {
			drops += run.Drops
			flows += run.Flows
		}
		mark := ""
		if sc.Setting == r.Best {
			mark = "  <- best"
		}
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%d/%d\t%d (%d)\t%s\t%s%s\n", m.Mode, m.Evaluated, sc.FCT, sc.Unfinished, flows, drops, sc.Drops, us(sc.PauseTime), sc.Setting, mark)
	}
	tw.Flush()
}

// Report builds the JSON form of r and its written edits w.
func (r *Result) Report(w *Written) Report {
	rep := Report{Class: r.Class, Scenarios: r.Scenarios(), Seed: r.Seed, Duration: r.Duration, Evaluated: r.Evaluated,
		DCQCNSearched: r.DCQCN, Bounds: r.Bounds, BeforeSetting: settingJSON(r.Base, r.DCQCN), AfterSetting: settingJSON(r.Best, r.DCQCN),
		Before: r.Before, After: r.After, Edits: r.Edits, Modes: r.modesJSON(), Notes: r.Notes}
	if rep.Edits == nil {
		rep.Edits = []Edit{}
	}
	rep.Changes = []Change{}
	if w != nil {
		rep.Changes = append(rep.Changes, w.Changes...)
		rep.Programmed = r.Programmed(w)
		rep.Files = map[string]string{}
		for i, s := range w.Sources {
			if old := r.fabric.Sources[i]; string(old.Data) != string(s.Data) {
				rep.Files[s.Name] = string(s.Data)
			}
		}
	}
	return rep
}

// WriteJSON writes r's report as indented JSON.
func (r *Result) WriteJSON(out io.Writer, w *Written) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(r.Report(w))
}

func pct(before, after float64) string {
	if before == 0 {
		if after == 0 {
			return "="
		}
		return "new"
	}
	d := (after - before) / before * 100
	if d > -0.05 && d < 0.05 {
		return "="
	}
	return fmt.Sprintf("%+.1f%%", d)
}

func us(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return strconv.FormatFloat(float64(d)/1e3, 'f', 1, 64) + "us"
}

func gbps(v float64) string { return strconv.FormatFloat(v/1e9, 'f', 1, 64) + "G" }

// settingRows are the parameters of a setting as the table shows them,
// the same rows for every setting (so that two settings line up): the
// mode (withMode), the ECN thresholds ("none" where the class marks
// nothing) and the DCQCN parameters ("off" in pfc-only mode, where the
// hosts run none).
func settingRows(s Setting, dcqcn, withMode bool) [][2]string {
	var rows [][2]string
	if withMode {
		rows = append(rows, [2]string{"mode", string(s.Mode)})
	}
	if s.Mode.ECN() && s.Kmax > 0 {
		rows = append(rows, [2]string{"ecn.min", intent.FormatSize(s.Kmin)}, [2]string{"ecn.max", intent.FormatSize(s.Kmax)},
			[2]string{"ecn.probability", strconv.Itoa(s.Pmax) + "%"})
	} else {
		rows = append(rows, [2]string{"ecn.min", "none"}, [2]string{"ecn.max", "none"}, [2]string{"ecn.probability", "none"})
	}
	if dcqcn && !s.Mode.ECN() {
		for _, n := range []string{"aiRate", "haiRate", "timeReset", "rateReduceMonitorPeriod", "minDecreaseFactor", "g"} {
			rows = append(rows, [2]string{"dcqcn." + n, "off"})
		}
	} else if dcqcn {
		d := s.DCQCN
		rows = append(rows,
			[2]string{"dcqcn.aiRate", intent.FormatRate(int64(d.AIRate))},
			[2]string{"dcqcn.haiRate", intent.FormatRate(int64(d.HAIRate))},
			[2]string{"dcqcn.timeReset", durText(d.TimeReset)},
			[2]string{"dcqcn.rateReduceMonitorPeriod", durText(d.RateReducePeriod)},
			[2]string{"dcqcn.minDecreaseFactor", strconv.Itoa(int(d.MinDecFactor*100+0.5)) + "%"},
			[2]string{"dcqcn.g", strconv.Itoa(int(1024 - d.G*1024 + 0.5))})
	}
	return rows
}

// WriteText writes the before/after tables, the edits with their file
// positions, and the diff of the intent's files.
func (r *Result) WriteText(out io.Writer, w *Written) error {
	var b strings.Builder
	fmt.Fprintf(&b, "tune: class %s, %d scenario(s), seed %d: %d settings simulated, %s of fabric time each\n",
		r.Class, len(r.scenarios), r.Seed, r.Evaluated, r.Duration)
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SETTING\tBEFORE (intent)\tAFTER (tuned)")
	withMode := r.Modes != nil || r.Best.Mode != r.Base.Mode
	bs, as := settingRows(r.Base, r.DCQCN, withMode), settingRows(r.Best, r.DCQCN, withMode)
	for i := range bs {
		mark := ""
		if bs[i][1] != as[i][1] {
			mark = "  *"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s%s\n", bs[i][0], bs[i][1], as[i][1], mark)
	}
	tw.Flush()
	if r.Modes != nil {
		b.WriteString("\n")
		r.writeModes(&b)
	}
	b.WriteString("\n")
	tw = tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tMETRIC\tBEFORE\tAFTER\tCHANGE")
	for i, m0 := range r.Before.Runs {
		m1 := r.After.Runs[i]
		fmt.Fprintf(tw, "%s\tp99 FCT\t%s\t%s\t%s\n", m0.Scenario, us(m0.P99FCT), us(m1.P99FCT), pct(float64(m0.P99FCT), float64(m1.P99FCT)))
		fmt.Fprintf(tw, "\tmedian FCT\t%s\t%s\t%s\n", us(m0.MedianFCT), us(m1.MedianFCT), pct(float64(m0.MedianFCT), float64(m1.MedianFCT)))
		fmt.Fprintf(tw, "\tunfinished flows\t%d/%d\t%d/%d\t\n", m0.Unfinished, m0.Flows, m1.Unfinished, m1.Flows)
		fmt.Fprintf(tw, "\tdrops (lossless)\t%d (%d)\t%d (%d)\t\n", m0.Drops, m0.LosslessDrops, m1.Drops, m1.LosslessDrops)
		fmt.Fprintf(tw, "\tpause time\t%s\t%s\t%s\n", us(m0.PauseTime), us(m1.PauseTime), pct(float64(m0.PauseTime), float64(m1.PauseTime)))
		fmt.Fprintf(tw, "\tthroughput\t%s\t%s\t%s\n", gbps(m0.Throughput), gbps(m1.Throughput), pct(m0.Throughput, m1.Throughput))
	}
	tw.Flush()
	if r.After.Drops > 0 {
		fmt.Fprintf(&b, "\nLOSSLESS BROKEN: the best setting found still drops %d frames on lossless priorities\n", r.After.Drops)
	}
	if len(r.Edits) == 0 {
		b.WriteString("\nthe intent's setting is the best found: no edit\n")
		_, err := io.WriteString(out, b.String())
		return err
	}
	if w != nil {
		if p := r.Programmed(w); len(p) > 0 {
			b.WriteString("\nas programmed (portfacts: whole buffer cells):\n")
			for _, x := range p {
				on := x.Switches[0]
				if n := len(x.Switches); n > 1 {
					on = fmt.Sprintf("%d switches: %s .. %s", n, x.Switches[0], x.Switches[n-1])
				}
				fmt.Fprintf(&b, "  %s, %d B cells (%s): min %d cells, max %d cells\n", x.Platform, x.CellBytes, on, x.MinCells, x.MaxCells)
			}
		}
		b.WriteString("\nedits:\n")
		for _, c := range w.Changes {
			if c.Old != "" {
				fmt.Fprintf(&b, "  %s: %s: %s -> %s\n", c.Pos, c.Path, c.Old, c.New)
			} else {
				fmt.Fprintf(&b, "  %s: %s: add %s\n", c.Pos, c.Path, c.New)
			}
		}
		b.WriteString("\n")
		for i, s := range w.Sources {
			b.WriteString(Diff(r.fabric.Sources[i].Name, string(r.fabric.Sources[i].Data), string(s.Data)))
		}
	}
	_, err := io.WriteString(out, b.String())
	return err
}
