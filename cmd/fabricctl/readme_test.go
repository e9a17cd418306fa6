package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/intent/check"
)

// The README documents the check rules and the commands; these tests keep it
// true to the code.

func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatalf("read README: %v", err)
	}
	return string(b)
}

func TestREADMEListsEveryCheckRule(t *testing.T) {
	var b bytes.Buffer
	if err := check.WriteRules(&b, "markdown", simulateRules); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(readme(t), b.String()) {
		t.Errorf("README's check rule table differs from `fabricctl check --list-rules -o markdown`; paste:\n%s", b.String())
	}
}

func TestREADMEDocumentsEveryCommand(t *testing.T) {
	doc := readme(t)
	root := newRootCmd(&deps{stdout: new(bytes.Buffer), stderr: new(bytes.Buffer)})
	for _, c := range root.Commands() {
		name := c.Name()
		if name == "help" || name == "completion" || name == "version" || c.Hidden {
			continue
		}
		if !strings.Contains(doc, "`fabricctl "+name) {
			t.Errorf("README does not document `fabricctl %s`", name)
		}
	}
}

// TestREADMEParseErrorExample: the README's parse-error example is what
// check prints for testdata/readme_parse_error.yaml saved as fabric.yaml.
func TestREADMEParseErrorExample(t *testing.T) {
	doc := readme(t)
	src, err := os.ReadFile("testdata/readme_parse_error.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "fabric.yaml"), src, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	code, out, _ := runCLI(t, t.Context(), "check", "-f", "fabric.yaml")
	if code != ExitCheckFailed {
		t.Fatalf("check exit %d, want %d", code, ExitCheckFailed)
	}
	var want strings.Builder
	want.WriteString("  $ fabricctl check -f fabric.yaml\n")
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if l == "" {
			want.WriteString("\n")
			continue
		}
		want.WriteString("  " + l + "\n")
	}
	if !strings.Contains(doc, want.String()) {
		t.Errorf("README's parse-error example is not check's output; paste:\n%s", want.String())
	}
}

// TestREADMEHeadroomExample: the README's `fabricctl headroom` example is the
// command's golden output (TestHeadroomCommand keeps the golden true).
func TestREADMEHeadroomExample(t *testing.T) {
	golden, err := os.ReadFile("testdata/headroom_400g_100m.golden")
	if err != nil {
		t.Fatal(err)
	}
	want := "$ fabricctl headroom --speed 400G --cable 100m --mtu 9216\n" + string(golden)
	if !strings.Contains(readme(t), want) {
		t.Errorf("README's headroom example differs from testdata/headroom_400g_100m.golden; paste:\n%s", want)
	}
}

// The project is Apache-2.0: LICENSE at the root is the licence's text (the
// same text as openconfig/public's LICENSE shipped with its models) and the
// README says so.
func TestLicenseIsApache2(t *testing.T) {
	got, err := os.ReadFile("../../LICENSE")
	if err != nil {
		t.Fatalf("no LICENSE at the root: %v", err)
	}
	want, err := os.ReadFile("../../internal/yangcheck/models/openconfig/LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) || !bytes.Contains(got, []byte("Apache License\n                           Version 2.0, January 2004")) {
		t.Error("LICENSE is not the Apache License 2.0 text")
	}
	if !strings.Contains(readme(t), "licensed under the Apache License, Version 2.0 ([LICENSE](LICENSE))") {
		t.Error("the README does not name the licence")
	}
}
