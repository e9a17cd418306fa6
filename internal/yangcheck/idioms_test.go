package yangcheck

import "testing"

// TestVendorNotEqual: "P != 'lit'" with P a leaf path (or . or current())
// becomes not(P = 'lit'), in either order; other comparisons stay.
func TestVendorNotEqual(t *testing.T) {
	for in, want := range map[string]string{
		"(. = 0 and ../priority = 'strict') or (. = 1 and ../priority != 'strict')": "(. = 0 and ../priority = 'strict') or (. = 1 and not(../priority = 'strict'))",
		". != 'default'":                        "not(. = 'default')",
		"current() != 'x'":                      "not(current() = 'x')",
		`../type != "bridged"`:                  `not(../type = "bridged")`,
		"'strict' != ../priority":               "not(../priority = 'strict')",
		"('a' != srl:x) and b":                  "(not(srl:x = 'a')) and b",
		"/if[name=current()/../i]/type != 'b' ": "not(/if[name=current()/../i]/type = 'b') ",
		"current() != 0 or ../alg != 'trtcm2'":  "current() != 0 or not(../alg = 'trtcm2')",
		"string(../sub) != ''":                  "string(../sub) != ''",
		"count(x) != 1":                         "count(x) != 1",
		"../a != ../b":                          "../a != ../b",
		"'a' != 'b'":                            "'a' != 'b'",
		". = 'x'":                               ". = 'x'",
	} {
		if got := vendorNotEqual(in); got != want {
			t.Errorf("vendorNotEqual(%q) = %q, want %q", in, got, want)
		}
	}
}
