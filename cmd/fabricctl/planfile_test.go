package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/fabricctl/fabricctl/plan"
)

// editPlan loads a saved plan, lets edit change it and saves it elsewhere.
func editPlan(t *testing.T, from, to string, edit func(*plan.Plan)) string {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	edit(p)
	if b, err = p.Marshal(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return to
}

// TestSavedPlanIsHeldToTheIntent: a saved plan is an artifact that may
// pass through other hands between plan and apply (CI jobs). Against the
// lab twins: a plan whose SetRequest was edited to write one more path is
// refused (it is rendered again from the intent and must be equal), as is
// a plan of other intent bytes or with no intent hash (unless --force);
// with a plan key, a plan whose MAC does not verify is refused; every
// refusal changes nothing, and the key is never printed. The untouched,
// signed plan applies.
func TestSavedPlanIsHeldToTheIntent(t *testing.T) {
	l, dir := testLab(t)
	f := l.file
	backups := filepath.Join(dir, "b")
	key := "k3y-0f-the-plan-and-apply-jobs-0123456789"
	keyFile := filepath.Join(dir, "plan.key")
	otherKey := filepath.Join(dir, "other.key")
	for p, k := range map[string]string{keyFile: key + "\n", otherKey: "another key, as long as the first one"} {
		if err := os.WriteFile(p, []byte(k), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	signed := filepath.Join(dir, "plan.json")
	var all strings.Builder
	cli := func(want int, args ...string) string {
		t.Helper()
		code, out, errOut := runCLI(t, t.Context(), args...)
		all.WriteString(out + errOut)
		if code != want {
			t.Fatalf("fabricctl %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, out, errOut)
		}
		return errOut
	}
	cli(ExitOK, "plan", "-f", f, "--out", signed, "--plan-key-file", keyFile, "-o", "json")
	unchanged := func(step string) {
		t.Helper()
		if code, _, _ := runCLI(t, t.Context(), "diff", "-f", f); code != ExitChanges {
			t.Fatalf("%s: diff exit %d: a refused apply changed a switch", step, code)
		}
	}

	// 1. One more path in a switch's SetRequest (its MAC dropped, as whoever
	// edits it cannot make one).
	extra := editPlan(t, signed, filepath.Join(dir, "extra.json"), func(p *plan.Plan) {
		p.MAC = ""
		for i := range p.Targets {
			tp := &p.Targets[i]
			if tp.Kind != plan.KindSwitch || len(tp.Payload) == 0 {
				continue
			}
			var req gnmipb.SetRequest
			if err := protojson.Unmarshal(tp.Payload, &req); err != nil {
				t.Fatal(err)
			}
			req.Update = append(req.Update, &gnmipb.Update{
				Path: &gnmipb.Path{Elem: []*gnmipb.PathElem{{Name: "system"}, {Name: "name"}, {Name: "host-name"}}},
				Val:  &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(`"owned"`)}}})
			b, err := protojson.Marshal(&req)
			if err != nil {
				t.Fatal(err)
			}
			tp.Payload = json.RawMessage(b)
			return
		}
		t.Fatal("the plan has no switch payload")
	})
	if errOut := cli(ExitError, "apply", "-f", f, extra, "--backup-dir", backups); !strings.Contains(errOut, "not what these intent files render to") {
		t.Errorf("an edited SetRequest: %s", errOut)
	}
	// --force is for the intent hash, not for an edited SetRequest.
	cli(ExitError, "apply", "-f", f, extra, "--backup-dir", backups, "--force")
	unchanged("edited SetRequest")

	// 2. A MAC made with another key, or none, with a key given.
	if errOut := cli(ExitError, "apply", "-f", f, signed, "--backup-dir", backups, "--plan-key-file", otherKey); !strings.Contains(errOut, "MAC") {
		t.Errorf("another key: %s", errOut)
	}
	cli(ExitError, "apply", "-f", f, extra, "--backup-dir", backups, "--plan-key-file", keyFile)
	unchanged("MAC")

	// 3. No intent hash; other intent bytes (a comment added).
	noHash := editPlan(t, signed, filepath.Join(dir, "nohash.json"), func(p *plan.Plan) { p.IntentHash, p.MAC = "", "" })
	if errOut := cli(ExitError, "apply", "-f", f, noHash, "--backup-dir", backups); !strings.Contains(errOut, "no intent hash") {
		t.Errorf("no intent hash: %s", errOut)
	}
	src, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	edited := filepath.Join(dir, "edited.yaml")
	if err := os.WriteFile(edited, append(src, []byte("# a comment\n")...), 0o600); err != nil {
		t.Fatal(err)
	}
	if errOut := cli(ExitError, "apply", "-f", edited, signed, "--backup-dir", backups, "--plan-key-file", keyFile); !strings.Contains(errOut, "other intent files") {
		t.Errorf("other intent bytes: %s", errOut)
	}
	unchanged("intent hash")

	// 4. The signed plan, as made, applies (the key from the environment).
	t.Setenv(planKeyEnv, key)
	cli(ExitOK, "apply", "-f", f, signed, "--backup-dir", backups)
	if code, _, _ := runCLI(t, t.Context(), "diff", "-f", f); code != ExitOK {
		t.Errorf("diff after applying the signed plan: exit %d", code)
	}
	if strings.Contains(all.String(), key) {
		t.Errorf("the plan key was printed")
	}
	b, _ := os.ReadFile(signed)
	if strings.Contains(string(b), key) || !strings.Contains(string(b), `"mac": "hmac-sha256:`) {
		t.Errorf("the saved plan holds the key, or no MAC")
	}
}
