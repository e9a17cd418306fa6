package validate

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteJSON writes the report as indented JSON.
func WriteJSON(w io.Writer, r *Report) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func flowLatency(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", float64(d)/float64(time.Microsecond))
}

func flowGbps(f FlowResult) string {
	if f.Gbps == 0 && (f.Test == "latency" || f.Err != "") {
		return "-"
	}
	return fmt.Sprintf("%.2f", f.Gbps)
}

func flowLoss(f FlowResult, engine string) string {
	if engine != "udp" {
		return "-"
	}
	return fmt.Sprintf("%d/%d", f.Lost, f.Sent)
}

// WriteText renders the report for a terminal: the flows, the checks, and
// the verdict with its counts.
func WriteText(w io.Writer, r *Report) error {
	var b strings.Builder
	s := r.Summarize()
	fmt.Fprintf(&b, "fabric %s: engine %s, %d traffic rounds, %d flows, %s (traffic %s)\n\n", r.Fabric, r.Engine, r.Rounds, len(r.Flows),
		r.Elapsed.Round(time.Millisecond), r.TrafficElapsed.Round(time.Millisecond))
	if r.EngineNote != "" {
		fmt.Fprintf(&b, "%s.\n\n", r.EngineNote)
	}
	if len(r.Flows) > 0 {
		// The udp engine sends paced packets: it measures loss, not
		// bandwidth; perftest measures bandwidth, and loses nothing it
		// could count. Each table shows the columns its engine measures.
		udp := r.Engine == "udp"
		// The udp engine's paced flows have no bandwidth to set a
		// predicted one beside (the prediction table has it).
		pred := r.Prediction != nil && !udp
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		measuredCol := "Gb/s"
		if udp {
			measuredCol = "LOST"
		}
		predCol := ""
		if pred {
			predCol = "\tPREDICTED Gb/s"
		}
		fmt.Fprintf(tw, "TEST\tROUND\tCLIENT\tSERVER\t%s%s\tP50 us\tP99 us\tP99.9 us\tERROR\n", measuredCol, predCol)
		for _, f := range r.Flows {
			measured := flowGbps(f)
			if udp {
				measured = flowLoss(f, r.Engine)
			}
			if pred {
				measured += "\t" + predictedGbps(f)
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", f.Test, f.Round, f.Client, f.Server, measured,
				flowLatency(f.P50), flowLatency(f.P99), flowLatency(f.P999), orDashText(f.Err))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		b.WriteString("\n")
	}
	if p := r.Prediction; p != nil {
		fmt.Fprintf(&b, "predicted by the simulator on %s (%s simulated per round, counts scaled to %s of traffic); tolerance %.0f%%:\n",
			p.Source, p.Simulated, p.Scaled.Round(time.Millisecond), p.Tolerance*100)
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "QUANTITY\tPREDICTED\tMEASURED\tAPART\tSTATUS")
		for _, row := range p.Rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", row.Quantity, fmtQty(row.Predicted, row.Unit), measuredQty(row), apart(row), strings.ToUpper(string(row.Status)))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, n := range p.Notes {
			fmt.Fprintf(&b, "note: %s\n", n)
		}
		b.WriteString("\n")
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STATUS\tCHECK\tTARGET\tOBSERVED\tLIMIT\tDETAIL")
	for _, c := range r.Checks {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", strings.ToUpper(string(c.Status)), c.Name, orDashText(c.Target),
			orDashText(c.Observed), orDashText(c.Limit), orDashText(c.Message))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(&b, "\n%s: %d passed, %d failed, %d skipped, %d errors%s\n", r.Verdict(), s.Pass, s.Fail, s.Skip, s.Error, warnings(s))
	_, err := io.WriteString(w, b.String())
	return err
}

func warnings(s Summary) string {
	if s.Warn == 0 {
		return ""
	}
	return fmt.Sprintf(", %d %s", s.Warn, map[bool]string{true: "warning", false: "warnings"}[s.Warn == 1])
}

func predictedGbps(f FlowResult) string {
	if f.PredictedGbps == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f", *f.PredictedGbps)
}

func measuredQty(row PredictionRow) string {
	if row.Measured == nil {
		return "-"
	}
	return fmtQty(*row.Measured, row.Unit)
}

func apart(row PredictionRow) string {
	if row.Measured == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", row.Divergence*100)
}

func orDashText(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// WriteMarkdown renders the report for a pull-request comment.
func WriteMarkdown(w io.Writer, r *Report) error {
	var b strings.Builder
	s := r.Summarize()
	fmt.Fprintf(&b, "## fabricctl validate `%s`: **%s**\n\n", mdCode(r.Fabric), r.Verdict())
	fmt.Fprintf(&b, "%d passed, %d failed, %d skipped, %d errors%s; engine `%s`, %d traffic rounds, %d flows, %s.\n\n",
		s.Pass, s.Fail, s.Skip, s.Error, warnings(s), r.Engine, r.Rounds, len(r.Flows), r.Elapsed.Round(time.Millisecond))
	if r.EngineNote != "" {
		fmt.Fprintf(&b, "> %s.\n\n", mdCell(r.EngineNote))
	}
	if s.Fail+s.Error > 0 {
		b.WriteString("### Failed checks\n\n| status | check | target | observed | limit | detail |\n|---|---|---|---|---|---|\n")
		for _, c := range r.Checks {
			if c.Status == Fail || c.Status == Error {
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", c.Status, mdCell(c.Name), mdCell(c.Target), mdCell(c.Observed), mdCell(c.Limit), mdCell(c.Message))
			}
		}
		b.WriteString("\n")
	}
	if s.Warn > 0 {
		b.WriteString("### Warnings\n\n| check | target | observed | limit | detail |\n|---|---|---|---|---|\n")
		for _, c := range r.Checks {
			if c.Status == Warn {
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", mdCell(c.Name), mdCell(c.Target), mdCell(c.Observed), mdCell(c.Limit), mdCell(c.Message))
			}
		}
		b.WriteString("\n")
	}
	if len(r.Flows) > 0 {
		udp := r.Engine == "udp"
		// The udp engine's paced flows have no bandwidth to set a
		// predicted one beside (the prediction table has it).
		pred := r.Prediction != nil && !udp
		measuredCol := "Gb/s"
		if udp {
			measuredCol = "lost"
		}
		predCol, predSep := "", ""
		if pred {
			predCol, predSep = " predicted Gb/s |", "---|"
		}
		fmt.Fprintf(&b, "### Flows\n\n| test | round | client | server | %s |%s p99 µs | error |\n|---|---|---|---|---|%s---|---|\n", measuredCol, predCol, predSep)
		for _, f := range r.Flows {
			measured := flowGbps(f)
			if udp {
				measured = flowLoss(f, r.Engine)
			}
			if pred {
				measured += " | " + predictedGbps(f)
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s |\n", f.Test, f.Round, mdCell(f.Client), mdCell(f.Server), measured,
				flowLatency(f.P99), mdCell(f.Err))
		}
		b.WriteString("\n")
	}
	if p := r.Prediction; p != nil {
		fmt.Fprintf(&b, "### Predicted vs measured\n\nThe simulator on %s (%s simulated per round, counts scaled to %s of traffic); tolerance %.0f%%.\n\n| quantity | predicted | measured | apart | status |\n|---|---|---|---|---|\n",
			mdCell(p.Source), p.Simulated, p.Scaled.Round(time.Millisecond), p.Tolerance*100)
		for _, row := range p.Rows {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", mdCell(row.Quantity), fmtQty(row.Predicted, row.Unit), measuredQty(row), apart(row), row.Status)
		}
		for _, n := range p.Notes {
			fmt.Fprintf(&b, "\n%s\n", mdCell(n))
		}
		b.WriteString("\n")
	}
	b.WriteString("<details><summary>All checks</summary>\n\n| status | check | target | observed | limit | detail |\n|---|---|---|---|---|---|\n")
	for _, c := range r.Checks {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", c.Status, mdCell(c.Name), mdCell(c.Target), mdCell(c.Observed), mdCell(c.Limit), mdCell(c.Message))
	}
	b.WriteString("\n</details>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "\n", " ")
	return s
}

func mdCode(s string) string { return strings.ReplaceAll(s, "`", "'") }

// JUnit XML (the schema Jenkins, GitLab and GitHub test reporters read).
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Timestamp string      `xml:"timestamp,attr,omitempty"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit renders the report as JUnit XML: one testsuite per phase, one
// testcase per check.
func WriteJUnit(w io.Writer, r *Report) error {
	s := r.Summarize()
	out := junitSuites{Name: "fabricctl validate " + r.Fabric + " (engine " + r.Engine + ")", Tests: len(r.Checks), Failures: s.Fail, Errors: s.Error, Skipped: s.Skip,
		Time: fmt.Sprintf("%.3f", r.Elapsed.Seconds())}
	idx := map[string]int{}
	for _, c := range r.Checks {
		i, ok := idx[c.Phase]
		if !ok {
			i = len(out.Suites)
			idx[c.Phase] = i
			out.Suites = append(out.Suites, junitSuite{Name: c.Phase, Timestamp: r.Started.Format(time.RFC3339)})
		}
		su := &out.Suites[i]
		su.Tests++
		detail := strings.TrimSpace(fmt.Sprintf("observed: %s\nlimit: %s\n%s", orDashText(c.Observed), orDashText(c.Limit), c.Message))
		tc := junitCase{Classname: "fabricctl.validate." + c.Phase, Name: c.ID(), Time: "0"}
		switch c.Status {
		case Fail:
			su.Failures++
			tc.Failure = &junitMessage{Message: c.Message, Text: detail}
		case Error:
			su.Errors++
			tc.Error = &junitMessage{Message: c.Message, Text: detail}
		case Skip:
			su.Skipped++
			tc.Skipped = &junitMessage{Message: c.Message}
		case Warn:
			// JUnit has no warning: the case passes and says so.
			tc.SystemOut = "WARNING: " + detail
		default:
			tc.SystemOut = detail
		}
		su.Cases = append(su.Cases, tc)
	}
	b, err := xml.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
