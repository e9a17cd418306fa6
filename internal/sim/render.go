package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"
)

func dur(t Time) string {
	d := time.Duration(t / Nanosecond)
	if d == 0 && t > 0 {
		return fmt.Sprintf("%dps", int64(t))
	}
	return d.String()
}

func bytesStr(b int64) string {
	switch {
	case b >= 1_000_000:
		return fmt.Sprintf("%.2fMB", float64(b)/1e6)
	case b >= 10_000:
		return fmt.Sprintf("%.1fKB", float64(b)/1e3)
	}
	return fmt.Sprintf("%dB", b)
}

func rateStr(bps float64) string {
	switch {
	case bps >= 1e9:
		return fmt.Sprintf("%.2fG", bps/1e9)
	case bps >= 1e6:
		return fmt.Sprintf("%.1fM", bps/1e6)
	}
	return fmt.Sprintf("%.0f", bps)
}

// WriteText prints the run: header, verdict, port and priority table, flows.
func (r *Result) WriteText(w io.Writer) error {
	var b strings.Builder
	r.header(&b, "")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PORT\tPRIO\tCLASS\tMAX Q\tMEAN Q\tPAUSED\tPAUSE TX/RX\tECN\tCNP TX/RX\tDROPS\tWATCHDOG")
	for _, p := range r.Ports {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%d/%d\t%d\t%d/%d\t%d\t%d\n", p.Name(), p.Priority, classLabel(p),
			bytesStr(p.MaxQueue), bytesStr(int64(p.MeanQueue)), dur(p.PausedTime), p.PauseSent, p.PauseRecv,
			p.ECNMarks, p.CNPSent, p.CNPRecv, p.Drops, p.WatchdogTriggers)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString("\n")
	r.flowTable(&b, "")
	_, err := io.WriteString(w, b.String())
	return err
}

func classLabel(p PortResult) string {
	if p.Lossless {
		return p.Class + " (lossless)"
	}
	return p.Class
}

// Verdict is the one-line summary: lossless held or not.
func (r *Result) Verdict() string {
	t := r.Totals(true)
	switch {
	case r.Deadlock != nil && r.Deadlock.AtEnd:
		return fmt.Sprintf("DEADLOCK: from %s the pause cycle %s has not sent a lossless frame", dur(r.Deadlock.At), strings.Join(r.Deadlock.Cycle, " -> "))
	case t.Drops > 0:
		return fmt.Sprintf("LOSSLESS BROKEN: %d drops on lossless priorities (%d headroom overflow, %d watchdog)", t.Drops, t.HeadroomDrops, t.WatchdogDrops)
	case t.WatchdogTriggers > 0:
		return fmt.Sprintf("lossless held, but the PFC watchdog fired %d times", t.WatchdogTriggers)
	case r.Recovery.Flows > 0 && r.Recovery.Flows == len(r.Flows):
		return r.lossyVerdict()
	}
	return "lossless held: 0 drops on lossless priorities"
}

func (r *Result) header(b *strings.Builder, md string) {
	fmt.Fprintf(b, "%sscenario %s, %s of fabric time, seed %d\n", md, r.Scenario, dur(r.Duration), r.Seed)
	for _, n := range r.Notes {
		fmt.Fprintf(b, "%snote: %s\n", md, n)
	}
	fmt.Fprintf(b, "%s%s\n", md, r.Verdict())
	for i, d := range r.Deadlocks {
		end := "not resolved by the end of the run"
		if !d.AtEnd {
			end = "resolved at " + dur(d.Resolved)
		}
		fmt.Fprintf(b, "%sdeadlock %d of %d at %s (cycle %s) %s; PFC watchdog triggers meanwhile: %d\n", md, i+1, len(r.Deadlocks), dur(d.At), strings.Join(d.Cycle, " -> "), end, d.WatchdogTriggers)
	}
	t := r.Totals(true)
	fmt.Fprintf(b, "%slossless: paused %s in all, %d pause frames, %d ECN marks, max queue %s; flows: %d, Jain fairness %.4f\n",
		md, dur(t.PausedTime), t.PauseSent, t.ECNMarks, bytesStr(t.MaxQueue), len(r.Flows), r.Jain)
	r.fctLine(b, md)
	r.recoveryLine(b, md)
	c := r.Conservation
	fmt.Fprintf(b, "%sbytes: sent %d = delivered %d + queued %d + in flight %d + dropped %d + discarded %d (%s)\n", md, c.Sent, c.Delivered, c.Queued, c.InFlight, c.Dropped, c.Discarded,
		map[bool]string{true: "balanced", false: "NOT BALANCED"}[c.Holds()])
	fmt.Fprintf(b, "%s%d events in %s (%.2g events/s)\n\n", md, r.Events, r.Wall.Round(time.Millisecond), r.EventsPerSec)
}

func (r *Result) flowTable(b *strings.Builder, sep string) {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	rec := r.Recovery.Flows > 0
	if rec {
		fmt.Fprintln(tw, "FLOW\tPATH\tPRIO\tRECEIVED\tGOODPUT\tFCT\tRATE\tCNPS\tRESENT\tNAKS\tTIMEOUTS")
	} else {
		fmt.Fprintln(tw, "FLOW\tPATH\tPRIO\tRECEIVED\tGOODPUT\tFCT\tRATE\tCNPS")
	}
	for _, f := range r.Flows {
		fct := "-"
		if f.Finished {
			fct = dur(f.FCT)
		} else if f.Failed {
			fct = "failed"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\t%s\t%d", f.ID, f.Path, f.Priority, bytesStr(f.Received),
			rateStr(f.Goodput), fct, rateStr(f.Rate), f.CNPs)
		if rec {
			fmt.Fprintf(tw, "\t%s\t%d\t%d", bytesStr(f.Retransmitted), f.NAKs, f.Timeouts)
		}
		fmt.Fprintln(tw)
	}
	_ = tw.Flush()
}

// WriteJSON prints the result as one JSON object.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteMarkdown prints the result as Markdown with the plots inline as SVG
// (GitHub renders an <img> of a data: URI; the SVGs are also what
// WriteSVG writes to files).
func (r *Result) WriteMarkdown(w io.Writer, plotLinks map[string]string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## fabricctl simulate: %s\n\n", r.Scenario)
	var h strings.Builder
	r.header(&h, "")
	for _, l := range strings.Split(strings.TrimSpace(h.String()), "\n") {
		fmt.Fprintf(&b, "- %s\n", l)
	}
	b.WriteString("\n### Ports and priorities\n\n| port | prio | class | max queue | mean queue | paused | pause tx/rx | ECN marks | CNP tx/rx | drops | watchdog |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, p := range r.Ports {
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %d/%d | %d | %d/%d | %d | %d |\n", p.Name(), p.Priority, classLabel(p),
			bytesStr(p.MaxQueue), bytesStr(int64(p.MeanQueue)), dur(p.PausedTime), p.PauseSent, p.PauseRecv, p.ECNMarks, p.CNPSent, p.CNPRecv, p.Drops, p.WatchdogTriggers)
	}
	b.WriteString("\n### Flows\n\n| flow | path | prio | received | goodput | FCT | rate | CNPs |\n|---|---|---|---|---|---|---|---|\n")
	for _, f := range r.Flows {
		fct := "-"
		if f.Finished {
			fct = dur(f.FCT)
		}
		fmt.Fprintf(&b, "| %d | %s | %d | %s | %s | %s | %s | %d |\n", f.ID, f.Path, f.Priority, bytesStr(f.Received),
			rateStr(f.Goodput), fct, rateStr(f.Rate), f.CNPs)
	}
	b.WriteString("\n### Over time\n\n")
	for _, pl := range r.Plots() {
		if link, ok := plotLinks[pl.Name]; ok {
			fmt.Fprintf(&b, "![%s](%s)\n\n", pl.Title, link)
		} else {
			fmt.Fprintf(&b, "<details><summary>%s</summary>\n\n%s\n</details>\n\n", pl.Title, pl.SVG)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Plot is one SVG chart of the run.
type Plot struct {
	Name  string // file stem: queue, rate, pause
	Title string
	SVG   string
}

// Plots returns the queue depth, sending rate and pause charts. Each
// draws at most maxPlotted lines (the busiest queues, the first flows)
// and leaves out series that stayed at zero in every sample; its legend
// says how many it left out (the JSON result holds every series).
func (r *Result) Plots() []Plot {
	var out []Plot
	if len(r.Queues) > 0 {
		out = append(out, Plot{"queue", "Egress queue depth (bytes), busiest queues", svgChart("Egress queue depth", "queue depth (bytes)", "bytes", r.Times, r.Queues)})
	}
	if len(r.Rates) > 0 {
		out = append(out, Plot{"rate", "DCQCN sending rate (Gb/s) of the flows", svgChart("Sending rate", "sending rate (Gb/s)", "Gb/s", r.Times, r.Rates)})
	}
	if len(r.Paused) > 0 {
		out = append(out, Plot{"pause", "Share of each interval paused by PFC, most paused queues", svgChart("Time paused", "share of the interval paused", "share", r.Times, r.Paused)})
	}
	return out
}

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#393b79", "#637939"}

// drawn returns the series a chart draws: those with a non-zero sample,
// at most maxPlotted, and how many non-empty ones it left out.
func drawn(series []Series) (out []Series, left int) {
	for _, s := range series {
		empty := true
		for _, v := range s.Values {
			if v != 0 {
				empty = false
				break
			}
		}
		switch {
		case empty:
		case len(out) < maxPlotted:
			out = append(out, s)
		default:
			left++
		}
	}
	return out, left
}

// svgChart draws series as polylines over time, with the axes titled (the
// y axis in unit) and a legend: a small self-contained SVG writer (no
// plotting dependency).
func svgChart(title, yTitle, unit string, times []Time, all []Series) string {
	const W, H, L, R, T, B = 760, 320, 84, 190, 30, 52
	series, left := drawn(all)
	scale := 1.0
	if unit == "Gb/s" {
		scale = 1e-9
	}
	var ymax float64
	for _, s := range series {
		for _, v := range s.Values {
			ymax = max(ymax, v*scale)
		}
	}
	if ymax == 0 {
		ymax = 1
	}
	tmax := Time(1)
	if n := len(times); n > 0 {
		tmax = max(times[n-1], 1)
	}
	x := func(t Time) float64 { return L + float64(t)/float64(tmax)*(W-L-R) }
	y := func(v float64) float64 { return H - B - v/ymax*(H-T-B) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`, W, H, W, H)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`, W, H)
	fmt.Fprintf(&b, `<text x="%d" y="18" font-size="13">%s</text>`, L, xmlEscape(title))
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`, L, H-B, W-R, H-B)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`, L, T, L, H-B)
	for i := 0; i <= 4; i++ {
		v := ymax * float64(i) / 4
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`, L-4, y(v)+4, axisLabel(v, unit))
		tt := Time(float64(tmax) * float64(i) / 4)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`, x(tt), H-B+16, dur(tt))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">time (simulated)</text>`, (L+W-R)/2, H-B+34)
	fmt.Fprintf(&b, `<text x="14" y="%d" text-anchor="middle" transform="rotate(-90 14 %d)">%s</text>`, (T+H-B)/2, (T+H-B)/2, xmlEscape(yTitle))
	for i, s := range series {
		c := palette[i%len(palette)]
		var pts strings.Builder
		for j, v := range s.Values {
			if j < len(times) {
				fmt.Fprintf(&pts, "%.1f,%.1f ", x(times[j]), y(v*scale))
			}
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.2" points="%s"/>`, c, strings.TrimSpace(pts.String()))
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="%s">%s</text>`, W-R+8, T+12+14*i, c, xmlEscape(s.Name))
	}
	if left > 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d">+%d more series not drawn</text>`, W-R+8, T+12+14*len(series), left)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

func axisLabel(v float64, unit string) string {
	switch unit {
	case "bytes":
		return bytesStr(int64(math.Round(v)))
	case "Gb/s":
		return fmt.Sprintf("%.3g Gb/s", v)
	}
	return fmt.Sprintf("%.2g", v)
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
