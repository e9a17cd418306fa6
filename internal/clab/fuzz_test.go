package clab

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: no topology file, however malformed, panics the parser or the
// import, and every error names the file.
func FuzzParse(f *testing.F) {
	for _, l := range labs {
		if b, err := os.ReadFile(filepath.Join(labsDir, l.dir, l.topo)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("name: x\ntopology:\n  nodes:\n    a: &a {kind: linux}\n    b: *a\n  links:\n    - endpoints: [a:eth1, b:eth1]\n"))
	f.Add([]byte("name: x\ntopology: {nodes: {a: {<<: {kind: srl}}}, links: [{endpoints: [{node: a, interface: e1-1}, host:x]}]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		top, err := Parse("f.clab.yml", data)
		if err != nil {
			if es, ok := err.(Errors); ok {
				for _, e := range es {
					if e.Pos.File != "f.clab.yml" {
						t.Errorf("error without the file name: %v", e)
					}
				}
			}
			return
		}
		inv, err := Import(top, ImportOptions{Speed: "100G", Cable: "3m"})
		if err == nil {
			_ = inv.WriteYAML(discard{}, ImportOptions{Speed: "100G", Cable: "3m"})
		}
	})
}

// FuzzParseData: the same for topology-data.json.
func FuzzParseData(f *testing.F) {
	for _, n := range []string{"srl-leafspine.topology-data.json", "legacy.topology-data.json"} {
		if b, err := os.ReadFile(filepath.Join("testdata", n)); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		top, err := ParseData("topology-data.json", data)
		if err != nil {
			return
		}
		if _, err := Import(top, ImportOptions{}); err != nil {
			return
		}
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
