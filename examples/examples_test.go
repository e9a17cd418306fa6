package examples_test

import (
	"bytes"
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"github.com/fabricctl/fabricctl/examples"
	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/check"
)

// exampleSets returns each example intent as the list of files that make it:
// a top-level *.yaml alone, or every *.yaml of a directory together (split
// policy / inventory). broken/ is tested by the check golden; k8s/ and
// gitops/ hold manifests and repositories, not single intents.
func exampleSets(t *testing.T) map[string][]string {
	t.Helper()
	sets, err := examples.IntentSets(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) < 4 {
		t.Fatalf("found %d example intents, want at least 4", len(sets))
	}
	return sets
}

func TestExamplesParseAndPassCheck(t *testing.T) {
	for name, files := range exampleSets(t) {
		sort.Strings(files)
		t.Run(name, func(t *testing.T) {
			f, err := intent.Load(files...)
			if err != nil {
				t.Fatalf("intent.Load(%v): %v", files, err)
			}
			for _, fd := range check.Run(f, check.Options{}) {
				switch fd.Severity {
				case check.Error:
					t.Errorf("check error: %s", fd)
				default:
					t.Logf("%s", fd)
				}
			}
		})
	}
}

func TestExamplesMatchJSONSchema(t *testing.T) {
	b, err := intent.Schema()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("fabric.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("fabric.json")
	if err != nil {
		t.Fatalf("schema does not compile: %v", err)
	}
	validate := func(name string, data []byte) error {
		var v any
		if err := yaml.Unmarshal(data, &v); err != nil {
			return err
		}
		j, err := json.Marshal(v)
		if err != nil {
			return err
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
		if err != nil {
			return err
		}
		return sch.Validate(inst)
	}
	for _, files := range exampleSets(t) {
		for _, p := range files {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := validate(p, data); err != nil {
				t.Errorf("%s does not match the JSON Schema: %v", p, err)
			}
		}
	}
	// The schema must accept what the parser accepts: merge keys, anchors
	// under x-*, a bare 0 duration.
	good := "apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\nx-wd: &wd {detect: 200ms, restore: 0}\n" +
		"policy:\n  preset: roce-lossless\n  watchdog:\n    <<: *wd\n    poll: 100ms\n"
	if _, err := intent.Parse("good.yaml", []byte(good)); err != nil {
		t.Fatalf("parser refused the merge-key intent: %v", err)
	}
	if err := validate("good", []byte(good)); err != nil {
		t.Errorf("schema refused a merge key / zero duration the parser accepts: %v", err)
	}
	// The schema must reject what the parser rejects.
	bad := "apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\npolicy: {preset: roce-lossless, mtus: 9000}\n"
	if err := validate("bad", []byte(bad)); err == nil {
		t.Error("schema accepted an unknown key (policy.mtus)")
	}
	if _, err := intent.Parse("bad.yaml", []byte(bad)); err == nil {
		t.Error("parser accepted an unknown key (policy.mtus)")
	}
}

func TestEmbeddedLabIntentParses(t *testing.T) {
	data, err := examples.FS.ReadFile(examples.Lab)
	if err != nil {
		t.Fatal(err)
	}
	f, err := intent.Parse(examples.Lab, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Switches) == 0 {
		t.Fatal("lab intent has no switches")
	}
	for _, sw := range f.Switches {
		if !strings.HasPrefix(sw.Address, "127.") {
			t.Errorf("lab switch %s address %s is not on loopback", sw.Name, sw.Address)
		}
	}
}
