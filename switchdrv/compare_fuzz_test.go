package switchdrv_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/yangcheck"
	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/internal/jtree"
)

// FuzzCompare feeds arbitrary desired and observed JSON (what a device may
// answer) to Compare and Drift: errors are fine, panics are not, and a value
// compared with itself never differs. Compare must also find the same
// changes whether the observed text is exactly the text fabricctl would
// write of the desired value (compared as text) or the same value in other
// text (decoded), with and without the YANG defaults filled in.
func FuzzCompare(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[{"name":"x","v":1},{"name":"x"}]}`, `[1,"2",{"a":null}]`, `{"l":[[1]],"min-threshold":"1e3"}`, `"s"`, `null`, `{"k":[{"id":{}}]}`} {
		f.Add(s, `{"a":{"b":[1,2]}}`)
		f.Add(`{"a":{"b":"c"}}`, s)
		f.Add(s, s)
	}
	f.Add(`{"name":"a","v":1}`, `{"v":1}`)
	f.Add(`{"name":"a","v":"<"}`, ``)
	f.Add(` [ {"b":1,"a":2} ] `, ``)
	f.Add(`{"name":"a","config":{"name":"a"},"wred":{"uniform":{"config":{"enable-ecn":true}}}}`, `{"config":{"name":"a"},"wred":{"uniform":{"config":{"enable-ecn":true}}}}`)
	schema, err := yangcheck.Platform(intent.PlatformOpenConfig)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, want, got string) {
		const p = "/qos/x[name=a]"
		d := &switchdrv.Desired{Switch: "leaf1", Replaces: []*gnmipb.Update{{Path: path(p),
			Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(want)}}}}}
		snap := &switchdrv.Snapshot{Switch: "leaf1", Entries: []switchdrv.Entry{{Path: p, Exists: got != "", JSON: json.RawMessage(got)}}}
		changes, err := switchdrv.Compare(d, snap, switchdrv.Quirks{BufferCellBytes: 256})
		if got == "" && err == nil {
			// Missing on the switch: one Create of the desired text (the
			// path's key member left out of an object), however compare
			// gets it.
			v, err := jtree.Decode([]byte(want))
			if err != nil {
				t.Fatalf("Compare(%s) accepted invalid JSON", want)
			}
			var skip []string
			if _, ok := v.(map[string]any); ok {
				skip = []string{"name"}
			}
			wantChanges := []plan.Change{{Action: plan.Create, Path: p, After: jtree.TextWithout(v, skip), Reason: "missing on the switch"}}
			if !cmp.Equal(changes, wantChanges) {
				t.Errorf("Compare(%s, absent) = %v, want %v", want, changes, wantChanges)
			}
		}
		if json.Valid([]byte(got)) {
			if c := switchdrv.Drift(snap, snap, 256); len(c) != 0 {
				t.Errorf("Drift(%s, itself) = %v", got, c)
			}
		}
		// The same at a path the OpenConfig schema knows, with its
		// defaults, replaced and merged.
		const q = "/qos/queue-management-profiles/queue-management-profile[name=a]"
		for _, replace := range []bool{true, false} {
			u := &gnmipb.Update{Path: path(q), Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(want)}}}
			d := &switchdrv.Desired{Switch: "oc1"}
			if replace {
				d.Replaces = []*gnmipb.Update{u}
			} else {
				d.Updates = []*gnmipb.Update{u}
			}
			for _, quirks := range []switchdrv.Quirks{{BufferCellBytes: 256}, {SchemaDefaults: true, Defaults: schema}} {
				compare := func(text string) ([]plan.Change, error) {
					return switchdrv.Compare(d, &switchdrv.Snapshot{Switch: "oc1", Entries: []switchdrv.Entry{{Path: q, Exists: got != "", JSON: json.RawMessage(text)}}}, quirks)
				}
				asText, err1 := compare(got)
				decoded, err2 := compare(" " + got) // never the text fabricctl writes
				if (err1 == nil) != (err2 == nil) || !cmp.Equal(asText, decoded) {
					t.Errorf("replace %v, schema defaults %v: Compare(%s, %s) = %v, %v; with the text decoded %v, %v", replace, quirks.SchemaDefaults, want, got, asText, err1, decoded, err2)
				}
			}
		}
	})
}
