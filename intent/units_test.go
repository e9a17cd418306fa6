package intent

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{"19456", 19456, false},
		{"150KB", 150_000, false},
		{"1.5MB", 1_500_000, false},
		{"1501500B", 1_501_500, false},
		{"64KiB", 65536, false},
		{"2 MiB", 2 << 20, false},
		{"1.5", 0, true},
		{"150XB", 0, true},
		{"-1KB", 0, true},
		{"KB", 0, true},
		{"99999999999GB", 0, true},
		// 2^63 B does not fit an int64: it must not wrap to a negative size.
		{"9223372036854775807", 0, true},
		{"9223372036854775808B", 0, true},
		{"8589934592GiB", 0, true},                          // 2^63
		{"9223372036854774784", 9223372036854774784, false}, // the largest float64 below 2^63
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestParseRateLengthPercentDuration(t *testing.T) {
	rates := map[string]int64{"100G": 100e9, "400G": 400e9, "25Gbps": 25e9, "1.6T": 1.6e12, "10M": 10e6}
	for in, want := range rates {
		if got, err := ParseRate(in); err != nil || got != want {
			t.Errorf("ParseRate(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"100", "100X", "fast", "100000T"} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q) accepted", bad)
		}
	}
	lengths := map[string]float64{"3m": 3, "100m": 100, "0.5m": 0.5, "2km": 2000, "150cm": 1.5}
	for in, want := range lengths {
		if got, err := ParseLength(in); err != nil || got != want {
			t.Errorf("ParseLength(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"3", "3ft", "-3m", "1000km"} {
		if _, err := ParseLength(bad); err == nil {
			t.Errorf("ParseLength(%q) accepted", bad)
		}
	}
	if p, err := ParsePercent("12.5%"); err != nil || p != 12.5 {
		t.Errorf("ParsePercent(12.5%%) = %v, %v", p, err)
	}
	if _, err := ParsePercent("101%"); err == nil {
		t.Error("ParsePercent(101%) accepted")
	}
	if d, err := ParseDuration("200ms"); err != nil || d != 200*time.Millisecond {
		t.Errorf("ParseDuration(200ms) = %v, %v", d, err)
	}
}

func TestFormatRoundTrips(t *testing.T) {
	// 1,045,000 B prints as 1.045MB, whose float product 1.045 x 1e6 is
	// not whole: the parser reads decimals exactly.
	for _, b := range []int64{150_000, 1_501_500, 1_500_000, 19456, 65536, 1_045_000, 1_025_000, 1_454_000, 2_383_000} {
		got, err := ParseSize(FormatSize(b))
		if err != nil || got != b {
			t.Errorf("ParseSize(FormatSize(%d)=%q) = %d, %v", b, FormatSize(b), got, err)
		}
	}
	for _, r := range []int64{25e9, 100e9, 400e9, 800e9, 1.6e12, 10e6} {
		got, err := ParseRate(FormatRate(r))
		if err != nil || got != r {
			t.Errorf("ParseRate(FormatRate(%d)=%q) = %d, %v", r, FormatRate(r), got, err)
		}
	}
}

func TestExpand(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  bool
	}{
		{"leaf1", []string{"leaf1"}, false},
		{"ethernet-1/{1..3}", []string{"ethernet-1/1", "ethernet-1/2", "ethernet-1/3"}, false},
		{"Ethernet{0..12..4}", []string{"Ethernet0", "Ethernet4", "Ethernet8", "Ethernet12"}, false},
		{"gpu{08..10}", []string{"gpu08", "gpu09", "gpu10"}, false},
		{"e{1..2}/{1..2}", []string{"e1/1", "e1/2", "e2/1", "e2/2"}, false},
		{"x{3..1}", nil, true},
		{"x{1..}", nil, true},
		{"x{a..b}", nil, true},
		{"x{1..2", nil, true},
		{"x}1", nil, true},
		{"a{1..2}b}", nil, true},
		{"{9..11}-p{00..1}", []string{"9-p00", "9-p01", "10-p00", "10-p01", "11-p00", "11-p01"}, false},
		{"h{098..100..2}x", []string{"h098x", "h100x"}, false},
		{"x{0..100000}", nil, true},
		{"x{1..1000}{1..1000}", nil, true},
	}
	for _, tt := range tests {
		got, err := Expand(tt.in)
		if (err != nil) != tt.err {
			t.Errorf("Expand(%q) error = %v, want error %v", tt.in, err, tt.err)
			continue
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("Expand(%q) mismatch (-want +got):\n%s", tt.in, d)
		}
	}
}

// TestExpandHugeBounds: bounds near the int range must neither overflow the
// value count (which let {0..MaxInt64} through the size check) nor the loop
// variable (which never passed MaxInt64 and looped forever).
func TestExpandHugeBounds(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  bool
	}{
		{"x{0..9223372036854775807}", nil, true},
		{"x{1..9223372036854775807..1}", nil, true},
		{"x{9223372036854775806..9223372036854775807}", []string{"x9223372036854775806", "x9223372036854775807"}, false},
		{"x{9223372036854775800..9223372036854775807..5}", []string{"x9223372036854775800", "x9223372036854775805"}, false},
		{"x{0..9223372036854775807..4611686018427387904}", []string{"x0", "x4611686018427387904"}, false},
	}
	for _, tt := range tests {
		done := make(chan struct{})
		var got []string
		var err error
		go func() {
			defer close(done)
			got, err = Expand(tt.in)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("Expand(%q) did not return", tt.in)
		}
		if (err != nil) != tt.err {
			t.Errorf("Expand(%q) error = %v, want error %v", tt.in, err, tt.err)
			continue
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("Expand(%q) mismatch (-want +got):\n%s", tt.in, d)
		}
	}
}

func TestNaturalLess(t *testing.T) {
	if !naturalLess("ethernet-1/2", "ethernet-1/10") || naturalLess("Ethernet10", "Ethernet9") || !naturalLess("a", "b") {
		t.Error("naturalLess does not order numbers numerically")
	}
}

// TestUnitGrammarForms decides each form a user may write, one row each:
// accepted (with its value) or refused (with the hint the error gives).
// The grammar is the JSON Schema's too (TestUnitGrammarParserAndSchemaAgree).
func TestUnitGrammarForms(t *testing.T) {
	parse := map[string]func(string) (float64, error){
		"size":     func(s string) (float64, error) { v, err := ParseSize(s); return float64(v), err },
		"rate":     func(s string) (float64, error) { v, err := ParseRate(s); return float64(v), err },
		"length":   ParseLength,
		"percent":  ParsePercent,
		"duration": func(s string) (float64, error) { v, err := ParseDuration(s); return float64(v), err },
	}
	cases := []struct {
		kind, in string
		want     float64 // when accepted
		refused  string  // in the error when refused
	}{
		// A space between number and unit is accepted (SI writes one),
		// except in durations, which are Go's.
		{"length", "100 m", 100, ""},
		{"size", "1.5 MB", 1.5e6, ""},
		{"rate", "400 G", 400e9, ""},
		{"duration", "200 ms", 0, "no space in a duration (Go's syntax, as in 1h30m): write 200ms"},
		// A percentage may omit %: it is 0-100 either way.
		{"percent", "50", 50, ""},
		{"percent", "50%", 50, ""},
		{"percent", "0.5", 0.5, ""},
		// Size and rate prefixes fold (a rate's unit is only a prefix, a
		// size's prefix is not ambiguous); B and b do not: b is a bit.
		{"rate", "400g", 400e9, ""},
		{"rate", "25gbps", 25e9, ""},
		{"rate", "25Gb/s", 25e9, ""},
		{"rate", "25GB/s", 0, "B is a byte, rates are in bits per second"},
		{"rate", "25GBps", 0, "B is a byte"},
		{"size", "150kB", 150e3, ""},
		{"size", "150kb", 0, "b is a bit, sizes are in bytes: write 150kB"},
		{"size", "64kib", 0, "b is a bit, sizes are in bytes: write 64kiB"},
		{"size", "64kiB", 65536, ""},
		// Lengths and durations do not fold: M is mega, m is metre or minute.
		{"length", "100M", 0, "units are lower case (M would be mega): write 100m"},
		{"length", "2KM", 0, "write 2km"},
		{"duration", "200MS", 0, "units are lower case (M is mega, m is minute): write 200ms"},
		{"duration", "200ms", 0.2e9, ""},
		// A length or rate needs its unit; a size without one is bytes.
		{"length", "100", 0, "want a number with a unit: m, km or cm"},
		{"rate", "400", 0, "want a number with a unit such as 25G"},
		{"size", "19456", 19456, ""},
	}
	for _, tc := range cases {
		got, err := parse[tc.kind](tc.in)
		switch {
		case tc.refused == "" && (err != nil || got != tc.want):
			t.Errorf("%s %q = %v, %v; want %v", tc.kind, tc.in, got, err, tc.want)
		case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
			t.Errorf("%s %q = %v, %v; want refused with %q", tc.kind, tc.in, got, err, tc.refused)
		}
	}
}

// TestSwitchHostLookup: Fabric.Switch and Host find a name in Parse's
// natural order by halving, and anywhere in a list built by hand.
func TestSwitchHostLookup(t *testing.T) {
	sorted := &Fabric{}
	for _, n := range []string{"e1", "e01", "e2", "leaf2", "leaf10", "spine1"} {
		sorted.Switches = append(sorted.Switches, Switch{Name: n})
		sorted.Hosts = append(sorted.Hosts, Host{Name: n})
	}
	unsorted := &Fabric{Switches: []Switch{{Name: "z"}, {Name: "a"}, {Name: "m"}}, Hosts: []Host{{Name: "z"}, {Name: "a"}}}
	for _, tt := range []struct {
		f    *Fabric
		name string
		want bool
	}{
		{sorted, "e1", true}, {sorted, "e01", true}, {sorted, "leaf10", true}, {sorted, "spine1", true},
		{sorted, "leaf1", false}, {sorted, "e001", false}, {sorted, "", false},
		{unsorted, "a", true}, {unsorted, "m", true}, {unsorted, "z", true}, {unsorted, "b", false},
	} {
		sw, h := tt.f.Switch(tt.name), tt.f.Host(tt.name)
		if (sw != nil) != tt.want || (sw != nil && sw.Name != tt.name) {
			t.Errorf("Switch(%q) = %v, want found %v", tt.name, sw, tt.want)
		}
		if tt.name == "m" {
			continue // not a host
		}
		if (h != nil) != tt.want || (h != nil && h.Name != tt.name) {
			t.Errorf("Host(%q) = %v, want found %v", tt.name, h, tt.want)
		}
	}
}
