package switchdrv

import (
	"strings"
	"testing"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/switchdrv/internal/jtree"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
)

// TestEmptyJSON: a value observeAs keeps as text is absent exactly when its
// decoding would be (isEmpty).
func TestEmptyJSON(t *testing.T) {
	for _, s := range []string{`null`, ` null `, `[]`, "[ \t\r\n]", " [ ] ", `[null]`, `[0]`, `{}`, `""`, `0`, `false`, `"null"`, `[[]]`} {
		v, err := jtree.Decode([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := emptyJSON([]byte(s)), isEmpty(v); got != want {
			t.Errorf("emptyJSON(%q) = %v, isEmpty of its value %v", s, got, want)
		}
	}
}

func TestNamesMember(t *testing.T) {
	for _, tc := range []struct {
		js, name string
		want     bool
	}{
		{`{"name":"a"}`, "name", true},
		{`{"x":"name"}`, "name", false},
		{`{"a":{"name" :1}}`, "name", false},
		{`{"xname":1,"name":2}`, "name", true},
		{`"name"`, "name", false},
		{`{"a":1}`, "", false},
	} {
		if got := namesMember([]byte(tc.js), tc.name); got != tc.want {
			t.Errorf("namesMember(%s, %q) = %v, want %v", tc.js, tc.name, got, tc.want)
		}
	}
}

// TestSamePath: observeAs takes an asked path's key for an answered path
// only when samePath holds, and then the two PathKeys are equal; any
// difference (a name, a key, an origin, a module prefix) is not the same
// path, and the answer's own PathKey is computed.
func TestSamePath(t *testing.T) {
	p := func(s string) *gnmipb.Path {
		t.Helper()
		x, err := transport.ParsePath(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	base := "/qos/queues/queue[name=unicast-3]/x"
	for _, tc := range []struct {
		other string
		want  bool
	}{
		{base, true},
		{"/qos/queues/queue[name=unicast-4]/x", false},
		{"/qos/queues/queue[id=unicast-3]/x", false},
		{"/qos/queues/queue[name=unicast-3][k=1]/x", false},
		{"/qos/queues/queue/x", false},
		{"/qos/queues/queue[name=unicast-3]", false},
		{"/qos/queues/queue[name=unicast-3]/y", false},
		{"/srl_nokia-qos:qos/queues/queue[name=unicast-3]/x", false},
		{"openconfig:" + base, false},
	} {
		a, b := p(base), p(tc.other)
		if got := samePath(a, b); got != tc.want {
			t.Errorf("samePath(%s, %s) = %v, want %v", base, tc.other, got, tc.want)
		}
		if samePath(a, b) && jtree.PathKey(a) != jtree.PathKey(b) {
			t.Errorf("samePath(%s, %s) but PathKeys differ", base, tc.other)
		}
	}
}

// TestCompareInvalidObservedJSON: observeAs keeps a verify read's text
// without checking it; invalid JSON there is compare's error, naming the
// switch and the path, never a match and never a panic.
func TestCompareInvalidObservedJSON(t *testing.T) {
	u, err := JSONUpdate(struct {
		Name string `json:"name"`
		N    int    `json:"n"`
	}{"a", 1}, Elem("qos"), Elem("x", "name", "a"))
	if err != nil {
		t.Fatal(err)
	}
	d := &Desired{Switch: "leaf1", Replaces: []*gnmipb.Update{u}}
	raw := u.GetVal().GetJsonIetfVal()
	for _, got := range []string{string(raw[:len(raw)-1]), `{"n":1,"name":"a"`, `{"n":1,,"name":"a"}`} {
		snap := &Snapshot{Switch: "leaf1", Entries: []Entry{{Path: "/qos/x[name=a]", Exists: true, JSON: []byte(got)}}}
		_, err := Compare(d, snap, Quirks{})
		if err == nil || !strings.Contains(err.Error(), "switch leaf1: observed /qos/x[name=a]") {
			t.Errorf("observed %s: error %v, want one naming the switch and the path", got, err)
		}
	}
	// The text JSONUpdate wrote, read back as is, is no change.
	snap := &Snapshot{Switch: "leaf1", Entries: []Entry{{Path: "/qos/x[name=a]", Exists: true, JSON: raw}}}
	if changes, err := Compare(d, snap, Quirks{}); err != nil || len(changes) != 0 {
		t.Errorf("read back as written: %v %v, want no change", changes, err)
	}
}
