package sim

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"time"
)

// TestRender: the plots are well-formed SVG with one polyline per series,
// the Markdown embeds them, and the JSON round-trips.
func TestRender(t *testing.T) {
	r := run(t, parse(t, minimalIntent), "slow-receiver:30", StarOptions{}, Options{Duration: 200 * time.Microsecond})
	plots := r.Plots()
	if len(plots) != 3 {
		t.Fatalf("%d plots, want queue, rate and pause", len(plots))
	}
	for _, p := range plots {
		dec := xml.NewDecoder(strings.NewReader(p.SVG))
		lines := 0
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: not well-formed SVG: %v", p.Name, err)
			}
			if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
				lines++
			}
		}
		if lines == 0 {
			t.Errorf("%s: no series drawn", p.Name)
		}
	}
	var md, js, txt bytes.Buffer
	if err := r.WriteMarkdown(&md, nil); err != nil || strings.Count(md.String(), "<svg") != 3 {
		t.Errorf("markdown: %v, %d plots", err, strings.Count(md.String(), "<svg"))
	}
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Conservation != r.Conservation || len(back.Ports) != len(r.Ports) {
		t.Errorf("json round trip: %v", err)
	}
	if err := r.WriteText(&txt); err != nil || !strings.Contains(txt.String(), "seed 1") {
		t.Errorf("text: %v\n%s", err, txt.String())
	}
}
