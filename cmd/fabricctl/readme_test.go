package main

import (
	"bytes"
	"os"
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
	if err := check.WriteRules(&b, "markdown"); err != nil {
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
