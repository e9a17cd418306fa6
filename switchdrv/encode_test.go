package switchdrv_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/internal/jtree"
)

type jsonMarshaler struct{ A int }

// treeNode refers to itself: its info holds its own (infoOf).
type treeNode struct {
	Name string      `json:"name"`
	Kids []*treeNode `json:"kids,omitempty"`
}

func (jsonMarshaler) MarshalJSON() ([]byte, error) { return []byte(`"custom"`), nil }

type textName string

func (t textName) MarshalText() ([]byte, error) { return []byte("T" + string(t)), nil }

type inner struct {
	N string `json:"n"`
}

type withEmbedded struct {
	inner
	X int `json:"x"`
}

// TestTreeOf: JSONUpdate writes json.Marshal's text with the members
// sorted; the tree plan builds from a compiled value is the one
// jtree.Typed decodes from JSONUpdate's bytes of it, and it builds none
// for shapes it does not know, strings json.Marshal escapes, or bytes the
// value does not encode to.
func TestTreeOf(t *testing.T) {
	n := 7
	type plain struct {
		Name    string            `json:"name"`
		Prefix  string            `json:"srl_nokia-qos:prefixed"`
		Count   int64             `json:"count"`
		Small   int8              `json:"small"`
		U       uint32            `json:"u"`
		Neg     int               `json:"neg"`
		On      bool              `json:"on"`
		Ptr     *int              `json:"ptr"`
		NilPtr  *int              `json:"nil-ptr"`
		Omit    string            `json:"omit,omitempty"`
		OmitPtr *inner            `json:"omit-ptr,omitempty"`
		OmitS   []string          `json:"omit-s,omitempty"`
		OmitB   bool              `json:"omit-b,omitempty"`
		OmitN   int               `json:"omit-n,omitempty"`
		OmitSt  struct{}          `json:"omit-st,omitempty"`
		List    []inner           `json:"list"`
		NilList []string          `json:"nil-list"`
		Empty   []string          `json:"empty"`
		Nested  struct{ A []int } `json:"nested"`
		Untag   string
		Skip    string `json:"-"`
		hidden  string // unexported: not encoded
	}
	full := plain{Name: "a", Prefix: "b", Count: 1 << 40, Small: -3, U: 9, Neg: -5, On: true, Ptr: &n,
		List: []inner{{N: "x"}, {N: "y"}}, Empty: []string{}, Untag: "u", Skip: "s", hidden: "h"}
	full.Nested.A = []int{1, 2}
	for _, tc := range []struct {
		name     string
		v        any
		wantTree bool
	}{
		{"plain", full, true},
		{"pointer", &full, true},
		{"zero", plain{}, true},
		{"empty struct", struct{}{}, true},
		{"string", "ethernet-1/1", true},
		{"nil", nil, false},
		{"nil pointer", (*inner)(nil), true},
		{"html in a string", inner{N: "a<b>&c"}, false},
		{"quote in a string", inner{N: `a"b`}, false},
		{"non-ASCII string", inner{N: "é"}, false},
		{"control character", inner{N: "a\nb"}, false},
		{"Marshaler", struct {
			M jsonMarshaler `json:"m"`
		}{}, false},
		{"TextMarshaler", struct {
			T textName `json:"t"`
		}{T: "x"}, false},
		{"embedded", withEmbedded{inner: inner{N: "e"}, X: 1}, false},
		{"map", map[string]int{"b": 1, "a": 2}, false},
		{"float", struct {
			F float64 `json:"f"`
		}{F: 1.5}, false},
		{"interface", struct {
			I any `json:"i"`
		}{I: 3}, false},
		{"bytes", struct {
			B []byte `json:"b"`
		}{B: []byte("xy")}, false},
		{"string option", struct {
			S int `json:"s,string"`
		}{S: 3}, false},
		{"recursive type", treeNode{Name: "a", Kids: []*treeNode{{Name: "b", Kids: []*treeNode{{Name: "c"}}}}}, true},
		// A Marshaler found through the infos of the types around it.
		{"Marshaler in a list of pointers", struct {
			L []*jsonMarshaler `json:"l"`
		}{L: []*jsonMarshaler{{A: 1}}}, false},
		{"prefixes collide", struct {
			A int `json:"m:a"`
			B int `json:"n:a"`
		}{1, 2}, true},
	} {
		u, err := switchdrv.JSONUpdate(tc.v, switchdrv.Elem("x"))
		if err != nil {
			t.Fatal(err)
		}
		want := u.GetVal().GetJsonIetfVal()
		// JSONUpdate's text is json.Marshal's, members in name order:
		// what json.Marshal writes of the same value as a generic tree
		// (a map's members sorted).
		marshaled, err := json.Marshal(tc.v)
		if err != nil {
			t.Fatal(err)
		}
		var generic any
		if err := json.Unmarshal(marshaled, &generic); err != nil {
			t.Fatal(err)
		}
		if sorted, _ := json.Marshal(generic); tc.wantTree && string(want) != string(sorted) {
			t.Errorf("%s: JSONUpdate wrote %s, want json.Marshal's members sorted: %s", tc.name, want, sorted)
		}
		tree, ok := switchdrv.TreeOf(tc.v, want)
		if ok != tc.wantTree {
			t.Errorf("%s: tree built %v, want %v", tc.name, ok, tc.wantTree)
		}
		if !ok {
			continue
		}
		// Not the tree of other bytes (a value changed since it was
		// encoded).
		if _, ok := switchdrv.TreeOf(tc.v, append(want[:len(want):len(want)], ' ')); ok {
			t.Errorf("%s: tree built for bytes the value does not encode to", tc.name)
		}
		dec, _, err := jtree.Typed(&gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: want}})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(dec, tree); diff != "" {
			t.Errorf("%s: tree (-decoded +built):\n%s", tc.name, diff)
		}
	}
}

// TestCompiledTrees: for every compile case of every platform, the trees
// plan builds from the compiled values are what decoding the SetRequest's
// values gives, and every value the compilers build with Desired.Replace
// has one; a value replaced after compile (as a Refiner may) has none.
func TestCompiledTrees(t *testing.T) {
	r := compileRegistry(t)
	for _, tc := range compileCases() {
		for name, d := range compileAll(t, r, tc.f) {
			var changed *gnmipb.Update
			if len(d.Replaces) > 0 {
				changed = d.Replaces[0]
				changed.Val = &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(`{"changed":1}`)}}
			}
			trees := switchdrv.DesiredTrees(d)
			if _, ok := trees[changed]; ok {
				t.Errorf("%s/%s: a value replaced after compile has a tree", tc.name, name)
			}
			for _, u := range append(append([]*gnmipb.Update{}, d.Replaces...), d.Updates...) {
				tree, ok := trees[u]
				if !ok {
					if u != changed && d.Platform != intent.PlatformSONiC && u.GetPath().GetOrigin() == "" && containsUpdate(d.Replaces, u) {
						t.Errorf("%s/%s: replace of %s has no tree", tc.name, name, jtree.PathKey(u.GetPath()))
					}
					continue
				}
				dec, _, err := jtree.Typed(u.GetVal())
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(dec, tree); diff != "" {
					t.Errorf("%s/%s: %s: tree (-decoded +built):\n%s", tc.name, name, jtree.PathKey(u.GetPath()), diff)
				}
			}
		}
	}
}

// TestCompiledExactTexts: where compile marks a value's text exact (what
// jtree.ExactText writes), the text compare takes from it without sorting
// is the sorted one (jtree.SortedText, the referee), for every compile
// case of every platform; the SR Linux compiler's values are exact.
func TestCompiledExactTexts(t *testing.T) {
	r := compileRegistry(t)
	exact := map[string]int{}
	for _, tc := range compileCases() {
		for name, d := range compileAll(t, r, tc.f) {
			n, err := switchdrv.CheckExactTexts(d)
			if err != nil {
				t.Errorf("%s/%s: %v", tc.name, name, err)
			}
			exact[string(d.Platform)] += n
		}
	}
	if exact[string(intent.PlatformSRLinux)] == 0 {
		t.Errorf("no SR Linux value compiled to exact text: %v", exact)
	}
}

func containsUpdate(us []*gnmipb.Update, u *gnmipb.Update) bool {
	for _, x := range us {
		if x == u {
			return true
		}
	}
	return false
}
