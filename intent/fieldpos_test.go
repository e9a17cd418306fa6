package intent

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFieldPos(t *testing.T) {
	src := `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
policy:
  preset: roce-lossless
  classes:
    - name: roce
      ecn: {min: 150KB, max: 1MB}
  roce:
    tos: 106
inventory:
  switches:
    - name: leaf{1..2}
      platform: srlinux
      address: 10.0.0.{1..2}:57400
      portDefaults: {speed: 400G}
      ports:
        - {name: "ethernet-1/1.{1..2}", cable: 5m}
  links:
    - [leaf1:ethernet-1/1.1, leaf2:ethernet-1/1.1]
`
	f, err := Parse("f.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path      string
		line, col int
	}{
		{"policy.roce.tos", 9, 10},
		{"policy.roce.cnpDSCP", 9, 5},                   // a default: the roce block
		{"policy.classes[roce].ecn.max", 7, 30},         // written
		{"policy.classes[roce].ecn.probability", 7, 12}, // default: the ecn block
		{"policy.classes[cnp].priority", 4, 11},         // from the preset: preset's value
		{"inventory.switches[leaf2].platform", 13, 17},
		{"inventory.switches[leaf2].ports[ethernet-1/1.2].cable", 17, 48},
		{"inventory.switches[leaf2].ports[ethernet-1/1.2].speed", 15, 29}, // from portDefaults
		{"inventory.switches[leaf2].ports[ethernet-1/1.2].mtu", 17, 11},   // default: the port
		{"inventory.links[0].b", 19, 30},
	}
	for _, tt := range tests {
		got, ok := f.FieldPos(tt.path)
		if want := (Pos{File: "f.yaml", Line: tt.line, Col: tt.col}); !ok || got != want {
			t.Errorf("FieldPos(%s) = %v, %v; want %v", tt.path, got, ok, want)
		}
	}
	if _, ok := f.FieldPos("nonsense.x"); ok {
		t.Error("FieldPos(nonsense.x) found something")
	}
	if d := cmp.Diff([]pathSeg{{"inventory", ""}, {"switches", "a.b"}, {"ports", "e-1/1.2"}, {"speed", ""}}, splitPath("inventory.switches[a.b].ports[e-1/1.2].speed"), cmp.AllowUnexported(pathSeg{})); d != "" {
		t.Errorf("splitPath (-want +got):\n%s", d)
	}
}

// TestFieldsMergedAndOverridden: a key merged in (<<) is where the merged
// mapping writes it, a key written after the merge where it is written,
// each known once; Equal compares keys and positions, not their order.
func TestFieldsMergedAndOverridden(t *testing.T) {
	f := mustParse(t, header+`x-sw: &sw
  platform: srlinux
  address: "10.0.0.9:57400"
policy: {preset: roce-lossless}
inventory:
  switches:
    - <<: *sw
      name: leaf1
      platform: sonic
      ports: [{name: e1, speed: 100G}]
`)
	fs := f.Switches[0].Fields
	for _, c := range []struct {
		key       string
		line, col int
	}{{"platform", 11, 17}, {"address", 5, 12}, {"name", 10, 13}, {"ports", 12, 14}} {
		if p, ok := fs.Lookup(c.key); !ok || p.Line != c.line || p.Col != c.col || p.File != f.Files[0] {
			t.Errorf("%s at %v (written %v), want line %d column %d", c.key, p, ok, c.line, c.col)
		}
	}
	n := 0
	for range fs.All() {
		n++
	}
	if n != fs.Len() || n != 4 {
		t.Errorf("%d keys, Len %d; want 4 (platform once)", n, fs.Len())
	}
	if !fs.Equal(fs) || fs.Equal(f.Switches[0].Ports[0].Fields) || !(Fields{}).Equal(Fields{}) {
		t.Error("Equal: a Fields is itself, and not another's")
	}
}
