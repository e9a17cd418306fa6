package switchdrv

import (
	"testing"

	"github.com/fabricctl/fabricctl/switchdrv/internal/jtree"
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
