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

// TestScenarioErrors: bad scenarios are errors that say what is wrong.
func TestScenarioErrors(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"incast:0:1", "incast:N:1"},
		{"slow-receiver:150", "PCT 0-100"},
		{"bogus", "unknown scenario"},
		{"alltoall:3", "no argument"},
	} {
		if _, err := ParseSpec(tc.spec); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.spec, err, tc.want)
		}
	}
	for _, tc := range []struct{ yaml, want string }{
		{"flows: []\n", "no flows"},
		{"flows:\n  - {from: h1, to: h1}\n", "two different hosts"},
		{"flows:\n  - {from: h1, to: h2, size: lots}\n", "size"},
		{"flows:\n  - {from: h1, to: h2, path: [h2, h1]}\n", "path must start at h1"},
		{"duration: -1ms\nflows:\n  - {from: h1, to: h2}\n", "duration"},
		{"flows:\n  - {from: h1, to: h2}\nslowReceivers: {h2: 200%}\n", "0-100%"},
	} {
		if _, err := ParseScenarioYAML("s.yaml", []byte(tc.yaml)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.yaml, err, tc.want)
		}
	}
	// a path through a host, a link that does not exist, an unknown class
	f := parse(t, ringIntent)
	for _, tc := range []struct{ yaml, want string }{
		{"flows:\n  - {from: h1, to: h5, path: [h1, leaf1, h2, leaf1, leaf3, h5]}\n", "hosts do not forward"},
		{"flows:\n  - {from: h1, to: h5, path: [h1, leaf2, leaf3, h5]}\n", "no working link"},
		{"flows:\n  - {from: h1, to: h5, class: gold}\n", "no class"},
		{"flows:\n  - {from: h1, to: h5}\nlinkDown: [[leaf1, h9]]\n", "unknown node"},
	} {
		sc, err := ParseScenarioYAML("s.yaml", []byte(tc.yaml))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Build(f, sc, StarOptions{}, 1); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.yaml, err, tc.want)
		}
	}
	// link-down reroutes: with leaf1-leaf2 down, h1 reaches h3 the long way
	sc, _ := ParseSpec("link-down:leaf1-leaf2")
	n, err := Build(f, sc, StarOptions{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, fl := range n.flows {
		if fl.src.name == "h1" && fl.dst.name == "h3" && len(fl.path) != 4 {
			t.Errorf("h1 -> h3 with leaf1-leaf2 down: %d hops, want 4 (via leaf3)", len(fl.path))
		}
	}
}
