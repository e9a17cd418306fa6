package intent

import (
	"strings"
	"testing"
)

// The vendor model reproduces the rows of the SKUs' own tables
// (sonic-buildimage device/nokia/*/pg_profile_lookup.ini).
func TestHeadroomVendorNokiaPgProfileLookup(t *testing.T) {
	tests := []struct {
		asic  string
		speed int64
		cable float64
		want  int64
	}{
		{"tomahawk4", 400e9, 5, 307848},  // Nokia-IXR7220-H4-64D: 400000 5m xoff 307848
		{"th4", 100e9, 40, 177632},       // alias; 100000 40m
		{"tomahawk4", 400e9, 3, 307848},  // shorter than the shortest row: that row
		{"tomahawk4", 400e9, 20, 330200}, // between rows: the longer row (conservative)
		{"tomahawk5", 800e9, 300, 929132},
		{"trident4", 400e9, 100, 209562},
		{"tomahawk6", 400e9, 5, 464520},
	}
	for _, tt := range tests {
		r, ok := HeadroomVendor(HeadroomInput{Speed: tt.speed, CableMeters: tt.cable, MTU: 9216, ASIC: tt.asic})
		if !ok {
			t.Errorf("%s %s/%gm: no vendor table", tt.asic, FormatRate(tt.speed), tt.cable)
			continue
		}
		if r.Bytes != tt.want || r.Model != ModelVendor {
			t.Errorf("%s %s/%gm: %s %d B, want %s %d B", tt.asic, FormatRate(tt.speed), tt.cable, r.Model, r.Bytes, ModelVendor, tt.want)
		}
	}
}

// Issue 10 item 15: on a TH4 the vendor's 400G/5 m xoff is about twice the
// published models; the required headroom is the max of all four.
func TestHeadroomRequiredIncludesVendorModel(t *testing.T) {
	in := HeadroomInput{Speed: 400e9, CableMeters: 5, MTU: 9216}
	models, without := Headroom(in)
	if len(models) != 3 {
		t.Fatalf("without an ASIC: %d models, want the 3 published ones", len(models))
	}
	in.ASIC = "tomahawk4"
	models, with := Headroom(in)
	if len(models) != 4 || models[3].Model != ModelVendor {
		t.Fatalf("with asic tomahawk4: models %v, want the vendor table fourth", models)
	}
	if with != 307848 || with < 2*without*9/10 {
		t.Errorf("required with the TH4 table = %d (without %d), want 307848", with, without)
	}
}

func TestHeadroomVendorBeyondTableExtrapolates(t *testing.T) {
	in := HeadroomInput{Speed: 400e9, CableMeters: 1000, MTU: 9216, ASIC: "tomahawk4"}
	r, ok := HeadroomVendor(in)
	if !ok || r.Bytes <= 499618 {
		t.Fatalf("400G/1000m on TH4 = %d (ok %v), want more than the 300m row 499618", r.Bytes, ok)
	}
	if a := strings.Join(HeadroomAssumptions(in), "\n"); !strings.Contains(a, "extrapolated") {
		t.Errorf("assumptions %q do not say the figure is extrapolated", a)
	}
	// A speed the table lacks: no vendor figure, and the assumptions say so.
	in = HeadroomInput{Speed: 200e9, CableMeters: 5, MTU: 9216, ASIC: "tomahawk4"}
	if _, ok := HeadroomVendor(in); ok {
		t.Errorf("TH4 table has no 200G row, got a figure")
	}
	if a := strings.Join(HeadroomAssumptions(in), "\n"); !strings.Contains(a, "no 200G row") {
		t.Errorf("assumptions %q do not say the table lacks the speed", a)
	}
}

func TestASICFacts(t *testing.T) {
	for _, tt := range []struct {
		name string
		cell int64
		cf   float64
	}{
		{"spectrum", 96, 2},    // ceil(2*96/97)
		{"spectrum-2", 144, 3}, // ceil(144/64)
		{"spectrum-4", 192, 3},
		{"tomahawk6", 420, 1}, // Broadcom: the vendor table carries the cell effect
	} {
		a, ok := LookupASIC(tt.name)
		if !ok {
			t.Errorf("%s unknown", tt.name)
			continue
		}
		if a.CellBytes != tt.cell || a.CellFactor() != tt.cf {
			t.Errorf("%s: cell %d factor %g, want %d %g", tt.name, a.CellBytes, a.CellFactor(), tt.cell, tt.cf)
		}
	}
	if _, ok := LookupASIC("unknown-asic"); ok {
		t.Error("unknown ASIC found")
	}
}
