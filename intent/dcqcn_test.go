package intent

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const dcqcnIntent = header + `policy:
  preset: roce-lossless
  dcqcn:
    rateReduceMonitorPeriod: 4us
    timeReset: 300us
    byteReset: 32767B
    threshold: 1
    aiRate: 5M
    haiRate: 50M
    minDecreaseFactor: 50%
    minRate: 1M
    rateOnFirstCNP: 0
    g: 1019
    alphaUpdatePeriod: 1us
    initialAlpha: 1023
    gd: 11
    clampTargetRate: false
    clampTargetRateAfterTimeIncrease: true
    minTimeBetweenCNPs: 4us
  nicAccelerations:
    adaptiveRetransmission: true
    slowRestart: false
`

// TestDCQCNParse: every policy.dcqcn field reaches the typed policy, and
// Values gives each in the unit the NICs take (us, bytes, Mb/s, percent).
func TestDCQCNParse(t *testing.T) {
	f := mustParse(t, dcqcnIntent)
	d := f.Policy.DCQCN
	if d == nil {
		t.Fatal("Policy.DCQCN is nil")
	}
	if *d.TimeReset != 300*time.Microsecond || *d.AIRate != 5_000_000 || *d.ByteReset != 32767 || *d.MinDecreaseFactor != 50 || *d.RateOnFirstCNP != 0 || !*d.ClampTargetRateAfterTimeIncrease {
		t.Errorf("DCQCN = %+v", d)
	}
	got := map[string]string{}
	for _, v := range d.Values() {
		got[v.Key] = v.FormatNIC()
	}
	want := map[string]string{
		"rateReduceMonitorPeriod": "4 us", "timeReset": "300 us", "byteReset": "32767 B", "threshold": "1",
		"aiRate": "5 Mb/s", "haiRate": "50 Mb/s", "minDecreaseFactor": "50%", "minRate": "1 Mb/s",
		"rateOnFirstCNP": "0 Mb/s", "g": "1019", "alphaUpdatePeriod": "1 us", "initialAlpha": "1023", "gd": "11",
		"clampTargetRate": "off", "clampTargetRateAfterTimeIncrease": "on", "minTimeBetweenCNPs": "4 us",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Values mismatch (-want +got):\n%s", diff)
	}
	// Intent spells each value back the way the YAML wrote it, and it parses
	// to the same value.
	var yaml strings.Builder
	yaml.WriteString(header + "policy:\n  preset: roce-lossless\n  dcqcn:\n")
	for _, v := range d.Values() {
		yaml.WriteString("    " + v.Key + ": " + v.Intent() + "\n")
	}
	again := mustParse(t, yaml.String())
	if diff := cmp.Diff(d.Values(), again.Policy.DCQCN.Values(), cmp.Comparer(func(a, b DCQCNValue) bool { return a.Key == b.Key && a.Value == b.Value })); diff != "" {
		t.Errorf("Intent() does not round-trip (-want +got):\n%s\n%s", diff, yaml.String())
	}
	acc := f.Policy.NICAccelerations
	if acc == nil || len(acc.Set()) != 2 || acc.Set()[0].Register != "roce_adp_retrans_en" || !acc.Set()[0].Value || acc.Set()[1].Value {
		t.Errorf("NICAccelerations = %+v", acc.Set())
	}
	plain := mustParse(t, header+"policy: {preset: roce-lossless}\n")
	if plain.Policy.DCQCN != nil || plain.Policy.NICAccelerations != nil || plain.Policy.DCQCN.Values() != nil {
		t.Error("no dcqcn/nicAccelerations must leave the NICs alone (nil)")
	}
	// A partial block sets only what it writes.
	part := mustParse(t, header+"policy:\n  preset: roce-lossless\n  dcqcn: {timeReset: 55us}\n")
	if vs := part.Policy.DCQCN.Values(); len(vs) != 1 || vs[0].Key != "timeReset" || vs[0].Value != 55 {
		t.Errorf("partial dcqcn Values = %+v", vs)
	}
}

// TestDCQCNRanges: a value outside the range the vendor sources accept, or
// not a whole number of the NIC's unit, is refused with its file:line.
func TestDCQCNRanges(t *testing.T) {
	tests := []struct {
		field, value string
	}{
		{"timeReset", "40ms"},             // ionic time_reset max 32767 us
		{"timeReset", "1500ns"},           // not whole microseconds
		{"alphaUpdatePeriod", "200ms"},    // dce_tcp_rtt max 131071 us
		{"rateReduceMonitorPeriod", "0"},  // ionic min 1
		{"byteReset", "0"},                // ionic min 1
		{"aiRate", "1500K"},               // not whole Mb/s
		{"minRate", "0"},                  // ionic min 1
		{"minDecreaseFactor", "12.5%"},    // whole percent only
		{"minTimeBetweenCNPs", "70ms"},    // bnxt_re 16-bit usec
		{"threshold", "32"},               // 1-31
		{"g", "1024"},                     // 0-1023
		{"gd", "12"},                      // 1-11
		{"initialAlpha", "2000"},          // 0-1023
		{"haiRate", "2147483648M"},        // > INT_MAX Mb/s... and > the rate grammar's 10T
		{"rateReduceMonitorPeriod", "1s"}, // fine: shows the table is not over-strict
	}
	for _, tc := range tests {
		t.Run(tc.field+"="+tc.value, func(t *testing.T) {
			src := header + "policy:\n  preset: roce-lossless\n  dcqcn:\n    " + tc.field + ": " + tc.value + "\n"
			_, err := Parse("f.yaml", []byte(src))
			if tc.value == "1s" {
				if err != nil {
					t.Fatalf("1s is in range: %v", err)
				}
				return
			}
			var es Errors
			if !errors.As(err, &es) || len(es) != 1 {
				t.Fatalf("want one error, got %v", err)
			}
			if es[0].Pos.File != "f.yaml" || es[0].Pos.Line != 6 || es[0].Path != "policy.dcqcn."+tc.field {
				t.Errorf("error at %s %s, want f.yaml:6 policy.dcqcn.%s: %v", es[0].Pos, es[0].Path, tc.field, es[0])
			}
		})
	}
}

// TestDCQCNRangeTagsMatchParams: the plain-count fields are range-checked by
// the decoder from their struct tags; the tags must say what DCQCNParams says.
func TestDCQCNRangeTagsMatchParams(t *testing.T) {
	rt := reflect.TypeOf(rawDCQCN{})
	params := map[string]DCQCNParam{}
	for _, p := range DCQCNParams() {
		params[p.Key] = p
	}
	n := 0
	for i := 0; i < rt.NumField(); i++ {
		f := rt.Field(i)
		key := f.Tag.Get("yaml")
		if key == "" {
			continue
		}
		n++
		p, ok := params[key]
		if !ok {
			t.Errorf("raw field %s has no DCQCNParams entry", key)
			continue
		}
		if r := f.Tag.Get("range"); r != "" {
			lo, hi, _ := strings.Cut(r, ",")
			if lo != strconv.FormatInt(p.Min, 10) || hi != strconv.FormatInt(p.Max, 10) {
				t.Errorf("%s: range tag %s, DCQCNParams %d-%d", key, r, p.Min, p.Max)
			}
		} else if p.Unit == "" {
			t.Errorf("%s: a plain count needs a range tag", key)
		}
	}
	if n != len(params) {
		t.Errorf("%d raw fields, %d DCQCNParams", n, len(params))
	}
}
