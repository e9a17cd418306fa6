package sonic

import (
	"encoding/json"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
)

func TestEncodeHashMatchesEncodingJSON(t *testing.T) {
	tests := []map[string]string{
		{},
		{"b": "2", "a": "1", "pfc_enable": "3,4"},
		{`q"uote`: `back\slash`, "ctl": "a\tb\n\r\b\f\x01", "html": "<&>", "utf8": "µs ✓"},
	}
	for _, fields := range tests {
		want, err := json.Marshal(fields)
		if err != nil {
			t.Fatal(err)
		}
		if got := encodeHash(fromMap(fields)); string(got) != string(want) {
			t.Errorf("encodeHash(%q) = %s, want %s", fields, got, want)
		}
	}
}

func TestQuirks(t *testing.T) {
	q := Platform{}.Quirks()
	if !q.PFC || q.Origin != Origin || q.WatchdogMin != 100 || q.WatchdogMax != 5000 {
		t.Errorf("Quirks() = %+v, want PFC, origin %s, watchdog 100..5000 ms", q, Origin)
	}
}

// Issue 10 item 8: the WRED profile marks ECT packets and drops nothing
// (orchagent qosorch.cpp: wred_<colour>_enable is SAI_WRED_ATTR_<COLOUR>_ENABLE,
// the colour's WRED drop; ecn is SAI_WRED_ATTR_ECN_MARK_MODE).
func TestWREDMarksOnly(t *testing.T) {
	f := &intent.Fabric{Name: "t", Policy: intent.Policy{
		Classes: []intent.Class{
			{Name: "default", Priority: 0, Weight: 50, Default: true},
			{Name: "roce", DSCP: []int{26}, Priority: 3, Lossless: true, Weight: 50, ECN: &intent.ECN{MinBytes: 150000, MaxBytes: 1500000, Probability: 100}},
		},
		MTU: 9216,
	}}
	f.Switches = []intent.Switch{{Name: "leaf1", Platform: intent.PlatformSONiC, Ports: []intent.Port{{Name: "Ethernet0", Speed: 100e9, CableMeters: 3}}}}
	d, err := Platform{}.Compile(f, &f.Switches[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range d.Replaces {
		el := u.GetPath().GetElem()
		if el[2].GetName() != "WRED_PROFILE" {
			continue
		}
		var h map[string]string
		if err := json.Unmarshal(u.GetVal().GetJsonIetfVal(), &h); err != nil {
			t.Fatal(err)
		}
		if h["ecn"] != "ecn_all" {
			t.Errorf("WRED_PROFILE|%s ecn = %q, want ecn_all", el[3].GetName(), h["ecn"])
		}
		for _, c := range []string{"green", "yellow", "red"} {
			if h["wred_"+c+"_enable"] != "false" {
				t.Errorf("WRED_PROFILE|%s wred_%s_enable = %q: WRED drop on, non-ECT packets of a lossless queue can be dropped", el[3].GetName(), c, h["wred_"+c+"_enable"])
			}
		}
		return
	}
	t.Fatal("no WRED_PROFILE compiled")
}
