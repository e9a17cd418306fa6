package sonic

import (
	"encoding/json"
	"testing"
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
