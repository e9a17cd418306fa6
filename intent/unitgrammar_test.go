package intent

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestUnitGrammarParserAndSchemaAgree checks both ways over a generated
// corpus that every string a unit parser accepts, the JSON Schema of that
// unit (as intent.Schema publishes it) accepts, and every string the parser
// refuses, the schema refuses. The corpus numbers stay below every value
// bound (a size over 2^63 B, a rate over 10T, a length over 100 km), which a
// string pattern cannot state; the test fails if a bound refusal slips in.
func TestUnitGrammarParserAndSchemaAgree(t *testing.T) {
	units := []struct {
		name  string
		typ   reflect.Type
		parse func(string) error
	}{
		{"size", reflect.TypeOf(Size(0)), func(s string) error { _, err := ParseSize(s); return err }},
		{"rate", reflect.TypeOf(Rate(0)), func(s string) error { _, err := ParseRate(s); return err }},
		{"length", reflect.TypeOf(Length(0)), func(s string) error { _, err := ParseLength(s); return err }},
		{"percent", reflect.TypeOf(Percent(0)), func(s string) error { _, err := ParsePercent(s); return err }},
		{"duration", reflect.TypeOf(Duration(0)), func(s string) error { _, err := ParseDuration(s); return err }},
	}
	corpus := unitCorpus()
	if len(corpus) < 5000 {
		t.Fatalf("corpus has %d strings; the generator is broken", len(corpus))
	}
	for _, u := range units {
		sch := compileUnitSchema(t, u.typ)
		var accepted int
		for _, s := range corpus {
			perr := u.parse(s)
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(mustJSON(t, s)))
			if err != nil {
				t.Fatal(err)
			}
			serr := sch.Validate(inst)
			switch {
			case perr == nil && serr != nil:
				t.Errorf("%s %q: the parser accepts it, the schema refuses it: %v", u.name, s, serr)
			case perr != nil && serr == nil:
				t.Errorf("%s %q: the parser refuses it (%v), the schema accepts it", u.name, s, perr)
			case perr == nil:
				accepted++
			}
			if perr != nil && (strings.Contains(perr.Error(), "too large") || strings.Contains(perr.Error(), "longer than") || strings.Contains(perr.Error(), "too long") || strings.Contains(perr.Error(), "whole number of units")) {
				t.Errorf("%s %q: refused for a value bound (%v): the corpus must stay inside the bounds", u.name, s, perr)
			}
		}
		if accepted < 20 {
			t.Errorf("%s: only %d corpus strings parse; the corpus misses the grammar", u.name, accepted)
		}
	}
}

// unitCorpus is every combination of numbers, separators and units seen in
// any grammar, in several letter cases, with malformed numbers and units.
func unitCorpus() []string {
	numbers := []string{"0", "1", "3", "7", "10", "1.5", "0.5", "2.25", "10.0", "09",
		".5", "1.", "-1", "+1", "1e3", "0x10", "1_0", "", "1.2.3", "Inf", "NaN"}
	percentOnly := []string{"99.9", "100", "100.0", "100.5", "101", "1000"}
	seps := []string{"", " ", "  ", "\t"}
	unitSet := map[string]bool{"": true, "X": true, "ft": true, "bit": true, "Gbit": true, "%%": true, "b/": true, "bpss": true, "mi": true, "h30m": true, "m5s": true, "ms1": true}
	for _, g := range []*unitGrammar{sizeGrammar, rateGrammar, lengthGrammar, percentGrammar, durationGrammar} {
		for _, u := range g.units {
			unitSet[u.text] = true
			unitSet[strings.ToLower(u.text)] = true
			unitSet[strings.ToUpper(u.text)] = true
			if u.text != "" {
				unitSet[strings.ToUpper(u.text[:1])+u.text[1:]] = true
			}
		}
	}
	var out []string
	add := func(numbers []string, units map[string]bool) {
		for _, n := range numbers {
			for _, sep := range seps {
				for u := range units {
					s := n + sep + u
					out = append(out, s, " "+s, s+" ")
				}
			}
		}
	}
	add(numbers, unitSet)
	// Numbers around 100 only where no unit multiplies them past a bound.
	add(percentOnly, map[string]bool{"": true, "%": true, "X": true})
	// Durations of several parts, good and bad.
	out = append(out, "1h30m", "1h 30m", "1.5h2m3s", "2s1", "0s", "0", "00", "0.0", "s", "h")
	return out
}

func compileUnitSchema(t *testing.T, typ reflect.Type) *jsonschema.Schema {
	t.Helper()
	b, err := json.Marshal(schemaOf(typ)) // the fragment intent.Schema embeds
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("unit.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("unit.json")
	if err != nil {
		t.Fatalf("%s schema does not compile: %v", typ, err)
	}
	return sch
}

func mustJSON(t *testing.T, s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
