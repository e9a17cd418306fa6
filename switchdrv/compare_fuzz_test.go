package switchdrv_test

import (
	"encoding/json"
	"testing"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/switchdrv"
)

// FuzzCompare feeds arbitrary desired and observed JSON (what a device may
// answer) to Compare and Drift: errors are fine, panics are not, and a value
// compared with itself never differs.
func FuzzCompare(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[{"name":"x","v":1},{"name":"x"}]}`, `[1,"2",{"a":null}]`, `{"l":[[1]],"min-threshold":"1e3"}`, `"s"`, `null`, `{"k":[{"id":{}}]}`} {
		f.Add(s, `{"a":{"b":[1,2]}}`)
		f.Add(`{"a":{"b":"c"}}`, s)
	}
	f.Fuzz(func(t *testing.T, want, got string) {
		const p = "/qos/x[name=a]"
		d := &switchdrv.Desired{Switch: "leaf1", Replaces: []*gnmipb.Update{{Path: path(p),
			Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(want)}}}}}
		snap := &switchdrv.Snapshot{Switch: "leaf1", Entries: []switchdrv.Entry{{Path: p, Exists: got != "", JSON: json.RawMessage(got)}}}
		_, _ = switchdrv.Compare(d, snap, switchdrv.Quirks{BufferCellBytes: 256})
		if json.Valid([]byte(got)) {
			if c := switchdrv.Drift(snap, snap, 256); len(c) != 0 {
				t.Errorf("Drift(%s, itself) = %v", got, c)
			}
		}
	})
}
