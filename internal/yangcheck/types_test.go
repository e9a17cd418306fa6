package yangcheck

import (
	"path/filepath"
	"testing"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
)

// TestTypes runs every leaf type against testdata/types (a module written
// for this test), so it needs no shared YANG tree.
func TestTypes(t *testing.T) {
	s, err := Load(filepath.Join("testdata", "types"))
	if err != nil {
		t.Fatal(err)
	}
	top := &gnmipb.Path{Elem: []*gnmipb.PathElem{{Name: "top"}}}
	tests := []struct {
		val    string
		wantOK bool
	}{
		{`{"i8":-128}`, true},
		{`{"i8":128}`, false},
		{`{"i8":"1"}`, false},
		{`{"i8":1.5}`, false},
		{`{"u16r":15}`, true},
		{`{"u16r":30}`, true},
		{`{"u16r":25}`, false},
		{`{"u16r":-1}`, false},
		{`{"i64":"-9223372036854775808"}`, true},
		{`{"i64":"9223372036854775808"}`, false},
		{`{"i64":"08"}`, false},
		{`{"i64":"0x10"}`, false},
		{`{"i64":5}`, false},
		{`{"u64":"0"}`, false},
		{`{"u64":"18446744073709551615"}`, true},
		{`{"pct":100}`, true},
		{`{"pct":101}`, false},
		{`{"dec":"9.99"}`, true},
		{`{"dec":"-1.5"}`, true},
		{`{"dec":"-1.51"}`, false},
		{`{"dec":"1.234"}`, false},
		{`{"dec":1.5}`, false},
		{`{"str":"abc"}`, true},
		{`{"str":"a"}`, false},
		{`{"str":"abcde"}`, false},
		{`{"str":"ab1"}`, false},
		{`{"flag":false}`, true},
		{`{"flag":"false"}`, false},
		{`{"color":"green"}`, true},
		{`{"color":"blue"}`, false},
		{`{"perms":"read write"}`, true},
		{`{"perms":"execute"}`, false},
		{`{"blob":"AAE="}`, true},
		{`{"blob":"AAECAw=="}`, false},
		{`{"blob":"!!"}`, false},
		{`{"marker":[null]}`, true},
		{`{"marker":true}`, false},
		{`{"ident":"fct-types:derived-b"}`, true},
		{`{"ident":"derived-a"}`, true},
		{`{"ident":"fct-aug:aug-id"}`, true},
		{`{"ident":"aug-id"}`, false},
		{`{"ident":"fct-types:other"}`, false},
		{`{"ident":"fct-aug:derived-a"}`, false},
		{`{"either":7}`, true},
		{`{"either":"auto"}`, true},
		{`{"either":"manual"}`, false},
		{`{"ref":5}`, true},
		{`{"ref":"5"}`, false},
		{`{"ref":300}`, false},
		{`{"tags":["a","b"]}`, true},
		{`{"tags":["a","a"]}`, false},
		{`{"tags":"a"}`, false},
		{`{"presence-c":{}}`, true},
		{`{"state-leaf":"x"}`, false},
		{`{"alpha":"x"}`, true},
		{`{"alpha":"x","beta":"y"}`, false},
		{`{"fct-aug:extra":"x"}`, true},
		{`{"extra":"x"}`, false},
		{`{"fct-types:extra":"x"}`, false},
		{`{"items":{"item":[{"id":1,"sub":"a","must-have":"x"},{"id":1,"sub":"b","must-have":"x"}]}}`, true},
		{`{"items":{"item":[{"id":1,"sub":"a","must-have":"x"},{"id":1,"sub":"a","must-have":"y"}]}}`, false},
		{`{"items":{"item":[{"id":1,"must-have":"x"}]}}`, false},
		{`{"items":{"item":[{"id":1,"sub":"a"}]}}`, false},
		{`{"items":{"item":{"id":1}}}`, false},
		{`{"nope":1}`, false},
		{`[1]`, false},
	}
	for _, tc := range tests {
		got := s.Validate(top, []byte(tc.val))
		if gotOK := len(got) == 0; gotOK != tc.wantOK {
			t.Errorf("Validate(/top, %s) = %v, want ok=%v", tc.val, got, tc.wantOK)
		}
	}
	// At the data root every member must be module-qualified.
	for _, tc := range []struct {
		val    string
		wantOK bool
	}{
		{`{"fct-types:top":{"i8":1}}`, true},
		{`{"top":{"i8":1}}`, false},
		{`{"fct-aug:top":{}}`, false},
		{`{"nomodule:top":{}}`, false},
	} {
		got := s.Validate(&gnmipb.Path{}, []byte(tc.val))
		if gotOK := len(got) == 0; gotOK != tc.wantOK {
			t.Errorf("Validate(/, %s) = %v, want ok=%v", tc.val, got, tc.wantOK)
		}
	}
}

// TestCheckerStringEncoding: CONFIG_DB hash values and path keys are strings
// whatever the leaf type.
func TestCheckerStringEncoding(t *testing.T) {
	s, err := Load(filepath.Join("testdata", "types"))
	if err != nil {
		t.Fatal(err)
	}
	leaf := s.top["top"][0]
	c := &checker{s: s}
	for _, tc := range []struct {
		leaf, val string
		wantOK    bool
	}{
		{"i8", "-5", true}, {"i8", "500", false}, {"i8", "x", false},
		{"flag", "true", true}, {"flag", "yes", false},
		{"dec", "2.5", true}, {"marker", "", true},
	} {
		e := leaf.Dir[tc.leaf]
		msg := c.value(e, e.Type, tc.val, true)
		if gotOK := msg == ""; gotOK != tc.wantOK {
			t.Errorf("string-encoded %s=%q: %q, want ok=%v", tc.leaf, tc.val, msg, tc.wantOK)
		}
	}
}
