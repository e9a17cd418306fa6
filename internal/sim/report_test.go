package sim

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// TestDeadlockEpisodes (issue 27 item 5): every deadlock episode is
// reported, each with the PFC watchdog's triggers while it lasted. On a
// ring with the watchdog forwarding (it ignores the pause on a stuck
// queue, then restores), the cycle forms again after each restore.
func TestDeadlockEpisodes(t *testing.T) {
	sc, err := ParseScenarioYAML("ring.yaml", []byte(ringFlows(true)))
	if err != nil {
		t.Fatal(err)
	}
	intent := strings.Replace(ringIntent, "  preset: roce-lossless\n", "  preset: roce-lossless\n  watchdog: {enabled: true, detect: 100us, restore: 100us, poll: 20us, action: forward}\n", 1)
	r := runSc(t, parse(t, intent), sc, StarOptions{}, Options{Duration: 3 * time.Millisecond, NoECN: true})
	if len(r.Deadlocks) < 2 {
		t.Fatalf("%d deadlock episodes, want the cycle to form again after the watchdog restores (verdict %q)", len(r.Deadlocks), r.Verdict())
	}
	var text strings.Builder
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	var during int64
	for i, d := range r.Deadlocks {
		during += d.WatchdogTriggers
		if want := fmt.Sprintf("deadlock %d of %d at %s", i+1, len(r.Deadlocks), dur(d.At)); !strings.Contains(text.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, text.String())
		}
	}
	// The watchdog breaks the cycles (a queue it forwards stays in storm
	// until restore, so a cycle can also clear on an earlier trigger).
	if total := r.Totals(true).WatchdogTriggers; during == 0 || during > total {
		t.Errorf("watchdog triggers during the episodes %d, in the run %d", during, total)
	}
	if last := r.Deadlocks[len(r.Deadlocks)-1]; r.Deadlock == nil || r.Deadlock.At != last.At {
		t.Errorf("Deadlock %+v is not the last episode %+v", r.Deadlock, last)
	}
}

// TestNICMeanQueueTimeAveraged (issue 27 item 5): a slow receiver's NIC
// buffer has a time-averaged mean queue, not the egress queue's (0).
func TestNICMeanQueueTimeAveraged(t *testing.T) {
	r := run(t, parse(t, minimalIntent), "slow-receiver:0", StarOptions{}, Options{Duration: 200 * time.Microsecond, NoECN: true})
	p := r.Port("h5:eth0", 3)
	if p == nil {
		t.Fatal("no row for the receiving NIC h5:eth0 priority 3")
	}
	// The buffer fills to its XOFF point and holds it (the receiver
	// drains nothing): the mean is below the maximum and well above 0.
	if p.MeanQueue <= float64(p.MaxQueue)/4 || p.MeanQueue > float64(p.MaxQueue) {
		t.Errorf("NIC mean queue %.0f B, max %d B: want the time average, between a quarter of the max and the max", p.MeanQueue, p.MaxQueue)
	}
}

// TestSeriesEveryFlow (issue 27 item 5): the rate and goodput series hold
// every flow (they held 8) up to 64, and say how many they leave out
// beyond.
func TestSeriesEveryFlow(t *testing.T) {
	f := parse(t, minimalIntent)
	r := run(t, f, "incast:16:1", StarOptions{}, Options{Duration: 50 * time.Microsecond})
	if len(r.Rates) != 16 || len(r.Goodputs) != 16 || r.FlowSeriesLeftOut != 0 {
		t.Errorf("16 flows: %d rate and %d goodput series, %d left out; want 16, 16, 0", len(r.Rates), len(r.Goodputs), r.FlowSeriesLeftOut)
	}
	r = run(t, Star(f, 9, StarOptions{}), "alltoall", StarOptions{}, Options{Duration: 20 * time.Microsecond})
	if n := len(r.Flows); n != 72 || len(r.Rates) != maxFlowSeries || r.FlowSeriesLeftOut != n-maxFlowSeries {
		t.Errorf("%d flows: %d rate series, %d left out; want %d and %d", n, len(r.Rates), r.FlowSeriesLeftOut, maxFlowSeries, n-maxFlowSeries)
	}
	if !strings.Contains(strings.Join(r.Notes, "\n"), "left out") {
		t.Errorf("notes %q do not say what the series left out", r.Notes)
	}
}

// TestChartAxesAndLegend (issue 27 item 5): a chart titles both axes with
// their units, leaves series that stayed at zero out of its legend, and
// says how many series past maxPlotted it did not draw.
func TestChartAxesAndLegend(t *testing.T) {
	times := []Time{0, Microsecond, 2 * Microsecond}
	var series []Series
	series = append(series, Series{Name: "empty", Values: []float64{0, 0, 0}})
	for i := range maxPlotted + 3 {
		series = append(series, Series{Name: fmt.Sprintf("s%d", i), Values: []float64{0, 100e9, 50e9}})
	}
	svg := svgChart("Sending rate", "sending rate (Gb/s)", "Gb/s", times, series)
	var texts []string
	lines := 0
	dec := xml.NewDecoder(strings.NewReader(svg))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed SVG: %v", err)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			if x.Name.Local == "polyline" {
				lines++
			}
		case xml.CharData:
			texts = append(texts, string(x))
		}
	}
	all := strings.Join(texts, "|")
	for _, want := range []string{"sending rate (Gb/s)", "time (simulated)", "100 Gb/s", "+3 more series not drawn"} {
		if !strings.Contains(all, want) {
			t.Errorf("chart lacks %q: %s", want, all)
		}
	}
	if strings.Contains(all, "empty") || lines != maxPlotted {
		t.Errorf("%d lines drawn (want %d), legend %s", lines, maxPlotted, all)
	}
}
