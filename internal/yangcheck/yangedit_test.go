package yangcheck

import (
	"strings"
	"testing"
)

const editModule = `module m {
  // a comment with a { brace
  namespace "urn:m";
  prefix m; /* and } here */
  container c {
    list l {
      key "k";
      unique "p";
      leaf k { type string; }
      leaf p {
        type uint8 { range "0..7"; }
        must "not(. = " + '3' + ")" { error-message "no 3"; }
      }
    }
  }
}
`

// TestApplyEdits: each operation splices the statement its path names
// (comments, concatenated and single-quoted strings read as YANG does),
// and goyang reads the result.
func TestApplyEdits(t *testing.T) {
	at := func(steps ...string) []string { return append([]string{"container c", "list l"}, steps...) }
	out, err := applyEdits(editModule, []Edit{
		{Module: "m", At: at("unique p"), Op: EditRemove},
		{Module: "m", At: at("leaf p"), Op: EditKeyword, Arg: "leaf-list"},
		{Module: "m", At: at("leaf-list p"), Op: EditInsert, Text: "max-elements 1;"},
		{Module: "m", At: at("leaf-list p", "type uint8", "range"), Op: EditArgument, Arg: "0..3"},
		{Module: "m", At: at("leaf-list p", "must not(. = 3)"), Op: EditRemove},
		{Module: "m", At: at("leaf k", "type string"), Op: EditInsert, Text: `length "1..8";`},
		{Module: "m", Op: EditText, Arg: `key "k"`, Text: `key 'k'`},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"leaf-list p {\nmax-elements 1;", `range "0..3"`, `type string {` + "\n" + `length "1..8";`, `key 'k'`} {
		if !strings.Contains(out, want) {
			t.Errorf("edited text lacks %q:\n%s", want, out)
		}
	}
	for _, gone := range []string{`unique "p"`, "no 3"} {
		if strings.Contains(out, gone) {
			t.Errorf("edited text still has %q", gone)
		}
	}
	tr := &Tree{name: "test", files: map[string][]byte{"x/m.yang": []byte(out)}}
	ms, err := tr.parse([]string{"x"})
	if err != nil {
		t.Fatal(err)
	}
	e := entryAt(newSchema(ms), "c/l/p")
	if e == nil || !e.IsLeafList() || e.ListAttr.MaxElements != 1 {
		t.Errorf("c/l/p after the edits: %+v", e)
	}
}

// TestApplyEditsErrors: an edit whose statement is not there, or is not
// one, says which and where.
func TestApplyEditsErrors(t *testing.T) {
	for _, tc := range []struct {
		e    Edit
		want string
	}{
		{Edit{Module: "m", At: []string{"container c", "list nope"}, Op: EditRemove}, `no statement "list nope" at step 3`},
		{Edit{Module: "m", At: []string{"container c", "list l", "leaf"}, Op: EditRemove}, `2 statements "leaf" at step 4`},
		{Edit{Module: "m", At: []string{"container c"}, Op: EditText, Arg: "absent"}, `"absent" is not in the statement`},
		{Edit{Module: "m", At: []string{"container c"}, Op: "rename"}, "unknown operation"},
		{Edit{Module: "other", Op: EditRemove}, `no statement "module other"`},
	} {
		_, err := applyEdits(editModule, []Edit{tc.e})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.e, err, tc.want)
		}
	}
	if _, err := parseYANG("module m { leaf x { type string; }"); err == nil {
		t.Error("an unclosed block parsed")
	}
	if _, err := parseYANG(`module m { description "open; }`); err == nil {
		t.Error("an unterminated string parsed")
	}
}
