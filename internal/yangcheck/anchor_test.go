package yangcheck

import "testing"

// TestAnchorRelative: relative paths outside predicates start at current();
// absolute paths, predicates, literals, numbers, functions and operators
// are left as they are.
func TestAnchorRelative(t *testing.T) {
	c := "/@" + currentName
	for in, want := range map[string]string{
		"../a = 'x'":                             c + "/../a = 'x'",
		". = 0 and ../b != 'strict'":             c + "/. = 0 and " + c + "/../b != 'strict'",
		"/q/l[k=" + c + "/../k]/v = ../k":        "/q/l[k=" + c + "/../k]/v = " + c + "/../k",
		"string(../../p) != '' and count(x) > 1": "string(" + c + "/../../p) != '' and count(" + c + "/x) > 1",
		c + "/../a = 1.5 div 2":                  c + "/../a = 1.5 div 2",
		"following-sibling::a":                   c + "/following-sibling::a",
		"'../a' = \"b\"":                         "'../a' = \"b\"",
	} {
		if got := anchorRelative(in); got != want {
			t.Errorf("anchorRelative(%q) = %q, want %q", in, got, want)
		}
	}
}
