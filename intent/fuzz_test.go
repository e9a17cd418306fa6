package intent

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: whatever the bytes, Parse returns a Fabric or intent.Errors whose
// every entry names the file and a line; it never panics or hangs.
//
//	go test -fuzz=FuzzParse -fuzztime=60s ./intent
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("../examples/*.yaml")
	more, _ := filepath.Glob("../examples/*/*.yaml")
	for _, p := range append(seeds, more...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		"", "\x00", "\xff\xfe", "\t\t", "[", "{", "&a [*a]", "a: &a\n  b: *a\n",
		header + "policy: {preset: roce-lossless}\n",
		header + "policy:\n  mtu: 1e400\n",
		header + "inventory:\n  switches:\n    - {name: 's{0..99999999}', platform: sonic, address: 'a:1'}\n",
		header + "policy: {classes: [{name: x, dscp: [1,1], priority: 9}]}\n",
		header + "policy: {preset: roce-lossless}\ninventory: {links: [[a, b, c]]}\n",
		header + "policy:\n  preset: roce-lossless\n  preset: none\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fab, err := Parse("f.yaml", data)
		if err == nil {
			if fab == nil {
				t.Fatal("nil Fabric without error")
			}
			return
		}
		var es Errors
		if !errors.As(err, &es) {
			t.Fatalf("error is %T, want intent.Errors: %v", err, err)
		}
		if len(es) == 0 {
			t.Fatal("empty Errors")
		}
		for _, e := range es {
			if e.Pos.File != "f.yaml" || e.Pos.Line < 1 {
				t.Fatalf("error without a position: %q (pos %#v)", e, e.Pos)
			}
		}
	})
}
