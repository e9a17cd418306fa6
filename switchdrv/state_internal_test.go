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
