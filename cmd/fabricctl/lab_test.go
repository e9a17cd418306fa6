package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"

	"github.com/fabricctl/fabricctl/internal/profile"
	"github.com/fabricctl/fabricctl/internal/yangcheck"
	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

func runCLI(t *testing.T, ctx context.Context, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(ctx, args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// runCLIWant runs fabricctl as runCLI does, fails the test unless it exits
// with want, and returns its stdout and stderr together.
func runCLIWant(t *testing.T, want int, args ...string) string {
	t.Helper()
	code, out, errOut := runCLI(t, t.Context(), args...)
	if code != want {
		t.Fatalf("fabricctl %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, out, errOut)
	}
	return out + errOut
}

// TestLabCommand runs the README's first command: the whole job against
// device twins of SR Linux, SONiC and EOS with the real compilers. By
// default the twins are profiled (the newest profile of each platform,
// factory datastore, full validation of every Set) and accept the payloads.
func TestLabCommand(t *testing.T) {
	code, out, errOut := runCLI(t, t.Context(), "lab", "--dir", t.TempDir())
	if code != ExitOK {
		t.Fatalf("lab exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"DEVICE TWINS", "NOT switches", "== 4/4 diff", "In sync: 3 targets.", "switch leaf3: applied",
		"profile srlinux-25.3 (Nokia 7220 IXR-H4", "profile sonic-202411 (", "profile eos (", "factory-default datastore", "switch leaf1: applied"} {
		if !strings.Contains(out, want) {
			t.Errorf("lab output lacks %q:\n%s", want, out)
		}
	}
}

// TestLabKeepCleansUpOnCtrlC: lab --keep waits for Ctrl-C; then the temporary
// folder it made is removed, and the output says so.
func TestLabKeepCleansUpOnCtrlC(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out lockedBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"lab", "--keep"}, strings.NewReader(""), &out, io.Discard) }()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "until Ctrl-C") {
		if time.Now().After(deadline) {
			t.Fatalf("lab --keep never got ready:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel() // Ctrl-C
	if code := <-done; code != ExitOK {
		t.Fatalf("lab --keep exited %d:\n%s", code, out.String())
	}
	ents, err := os.ReadDir(os.Getenv("TMPDIR"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 || !strings.Contains(out.String(), "stopping the twins; removing ") {
		t.Errorf("after Ctrl-C the temporary folder holds %d entries; output:\n%s", len(ents), out.String())
	}
}

func twinByName(t *testing.T, l *labTwins, name string) *twin.Twin {
	t.Helper()
	for _, tw := range l.twins {
		if tw.Name() == name {
			return tw
		}
	}
	t.Fatalf("no twin %s", name)
	return nil
}

// TestSwitchCommands drives plan, apply, diff and restore against the lab
// twins (TLS with a test CA, password from a file) and checks exit codes,
// drift naming, stale plans, rollback and that the password never shows.
func TestSwitchCommands(t *testing.T) {
	l, dir := testLab(t)
	password, err := os.ReadFile(filepath.Join(dir, "password"))
	if err != nil {
		t.Fatal(err)
	}
	secret := strings.TrimSpace(string(password))
	var transcript strings.Builder
	cli := func(args ...string) (int, string, string) {
		t.Helper()
		code, out, errOut := runCLI(t, t.Context(), append(args, "--log-level", "debug")...)
		transcript.WriteString(out + errOut)
		return code, out, errOut
	}
	f := l.file
	backups := filepath.Join(dir, "b")
	planFile := filepath.Join(dir, "plan.json")

	steps := []struct {
		name string
		args []string
		want int
	}{
		{"plan without -f", []string{"plan"}, ExitUsage},
		{"plan bad output", []string{"plan", "-f", f, "-o", "yaml"}, ExitUsage},
		{"plan unknown switch", []string{"plan", "-f", f, "--switch", "leaf9"}, ExitError},
		{"--insecure against TLS twins fails closed", []string{"plan", "-f", f, "--insecure", "--timeout", "2s"}, ExitError},
		{"plan detailed", []string{"plan", "-f", f, "--detailed-exitcode"}, ExitChanges},
		{"plan markdown", []string{"plan", "-f", f, "-o", "markdown"}, ExitOK},
		{"plan saved", []string{"plan", "-f", f, "-o", "json", "--out", planFile}, ExitOK},
		{"diff before apply", []string{"diff", "-f", f}, ExitChanges},
		{"apply saved plan", []string{"apply", "-f", f, planFile, "--backup-dir", backups}, ExitOK},
		{"diff after apply", []string{"diff", "-f", f}, ExitOK},
		{"plan after apply", []string{"plan", "-f", f, "--detailed-exitcode"}, ExitOK},
		{"re-apply", []string{"apply", "-f", f, "--backup-dir", backups, "-o", "json"}, ExitOK},
		{"saved plan is now stale", []string{"apply", "-f", f, planFile, "--backup-dir", backups}, ExitError},
	}
	for _, s := range steps {
		code, out, errOut := cli(s.args...)
		if code != s.want {
			t.Fatalf("%s: fabricctl %s exited %d, want %d\nstdout:\n%s\nstderr:\n%s", s.name, strings.Join(s.args, " "), code, s.want, out, errOut)
		}
		if s.name == "saved plan is now stale" && !strings.Contains(errOut, "stale") {
			t.Errorf("stale apply does not say so:\n%s", errOut)
		}
		if s.name == "saved plan is now stale" {
			// Once per stale switch (in the result), not again on stderr.
			stale := strings.Count(out, "stale")
			if n := strings.Count(out+errOut, plan.ErrStale.Error()); n == 0 || n != strings.Count(out, plan.ErrStale.Error()) || stale == 0 {
				t.Errorf("the stale-plan error is printed %d times:\nstdout:\n%s\nstderr:\n%s", n, out, errOut)
			}
		}
		if s.name == "re-apply" && !strings.Contains(out, `"status": "no-changes"`) {
			t.Errorf("re-apply is not a no-op:\n%s", out)
		}
	}
	for _, tw := range l.twins {
		if tw.Sets() != 1 {
			t.Errorf("twin %s got %d Sets, want 1 (re-apply must send nothing)", tw.Name(), tw.Sets())
		}
	}

	// Drift on the SONiC twin: diff exits 2 and names exactly that path.
	sonic := twinByName(t, l, "leaf2")
	p, _ := transport.ParsePath("sonic-db:/CONFIG_DB/localhost/PORT_QOS_MAP/Ethernet4/pfc_enable")
	if err := sonic.Put(p, "3,4"); err != nil {
		t.Fatal(err)
	}
	code, out, _ := cli("diff", "-f", f)
	if code != ExitChanges {
		t.Fatalf("diff after drift exited %d, want 2:\n%s", code, out)
	}
	drifted := regexp.MustCompile(`(?m)^@@ (.*) @@$`).FindAllStringSubmatch(out, -1)
	var got []string
	for _, m := range drifted {
		got = append(got, m[1])
	}
	if diff := cmp.Diff([]string{"sonic-db:/CONFIG_DB/localhost/PORT_QOS_MAP/Ethernet4/pfc_enable"}, got); diff != "" {
		t.Errorf("drifted paths mismatch (-want +got):\n%s\n%s", diff, out)
	}

	// Restore the pre-apply backup of leaf1 (from the one file the
	// applied run wrote), then apply brings it back.
	matches, _ := filepath.Glob(filepath.Join(backups, l.fabric.Name+"-*.json"))
	if len(matches) != 1 {
		t.Fatalf("backups of the one applied run: %v, want one file", matches)
	}
	if code, out, errOut := cli("restore", "-f", f, "--backup", matches[0], "--switch", "leaf1"); code != ExitOK || !strings.Contains(out, "switch leaf1: restored") || strings.Contains(out, "leaf2") {
		t.Fatalf("restore --switch leaf1 exited %d:\n%s%s", code, out, errOut)
	}
	if code, out, _ := cli("diff", "-f", f, "--switch", "leaf1"); code != ExitChanges {
		t.Errorf("leaf1 after restoring the pre-apply backup: diff exited %d, want 2:\n%s", code, out)
	}

	// EOS (drifted too, so it is in the run) rejects the Set: the others are
	// rolled back, exit 4.
	eos := twinByName(t, l, "leaf3")
	q6, _ := transport.ParsePath("/qos/queues/queue[name=6]")
	if err := eos.Delete(q6); err != nil {
		t.Fatal(err)
	}
	eos.RejectNextSet()
	code, out, errOut := cli("apply", "-f", f, "--backup-dir", backups, "--parallel", "1")
	if code != ExitRolledBack {
		t.Fatalf("apply with a rejecting twin exited %d, want 4:\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"switch leaf1: rolled-back", "switch leaf2: rolled-back", "switch leaf3: failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("apply output lacks %q:\n%s", want, out)
		}
	}
	if code, _, _ := cli("diff", "-f", f, "--switch", "leaf2"); code != ExitChanges {
		t.Errorf("leaf2 drift was not rolled back to (diff exit %d, want 2)", code)
	}
	if code, out, errOut := cli("apply", "-f", f, "--backup-dir", backups, "--canary", "1"); code != ExitOK {
		t.Fatalf("apply --canary 1 exited %d:\n%s%s", code, out, errOut)
	}

	// The twins reject what the (embedded) YANG rejects.
	if want := os.Getenv(yangcheck.EnvDir); l.yang != "embedded" && l.yang != want {
		t.Errorf("lab twins validate against %q, want the embedded YANG (or $%s)", l.yang, yangcheck.EnvDir)
	}
	{
		c, err := transport.Dial(t.Context(), *l.fabric.Switch("leaf1"), transport.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		bad, _ := transport.ParsePath("/qos/interfaces/interface[interface-id=ethernet-1/1]")
		_, err = c.Set(t.Context(), &gnmipb.SetRequest{Replace: []*gnmipb.Update{{Path: bad,
			Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(`{"interface-id":"ethernet-1/1","pfc":{"pfc-enable":"yes"}}`)}}}}})
		if transport.Code(err) != codes.InvalidArgument {
			t.Errorf("Set of a pfc-enable that is not a boolean: %v, want InvalidArgument from the schema", err)
		}
	}

	if strings.Contains(transcript.String(), secret) {
		t.Errorf("the twin password appears in command output")
	}
	if !strings.Contains(transcript.String(), "level=DEBUG") {
		t.Errorf("no debug logs were produced, so the secret check proves little")
	}
}

// TestOpenConfigTwin applies the plain OpenConfig compiler to its twin (the
// lab intent has none) and checks the PFC note reaches the plan.
func TestOpenConfigTwin(t *testing.T) {
	tw, err := twin.Start(twin.Options{Name: "oc1", Platform: "openconfig"})
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	dir := t.TempDir()
	f := filepath.Join(dir, "oc.yaml")
	intentText := `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: oc}
policy: {preset: roce-lossless}
inventory:
  switches:
    - name: oc1
      platform: openconfig
      address: "` + tw.Addr() + `"
      tls: {insecure: true}
      portDefaults: {speed: 100G, cable: 3m}
      ports:
        - name: Ethernet{1..2}
`
	if err := os.WriteFile(f, []byte(intentText), 0o600); err != nil {
		t.Fatal(err)
	}
	// Check refuses PFC on OpenConfig (FC106): --force goes on and says so.
	code, out, errOut := runCLI(t, t.Context(), "apply", "-f", f, "--backup-dir", filepath.Join(dir, "b"), "--force")
	if code != ExitOK {
		t.Fatalf("apply exited %d:\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "Forced (--force) past 1 check finding: FC106 inventory.switches[oc1].platform.") || !strings.Contains(errOut, "error FC106") {
		t.Errorf("apply --force does not name the finding it went past:\nstdout:\n%s\nstderr:\n%s", out, errOut)
	}
	if !strings.Contains(out, "note:") {
		t.Errorf("plan for an OpenConfig switch carries no note (PFC is not expressible there):\n%s", out)
	}
	if code, out, _ := runCLI(t, t.Context(), "diff", "-f", f); code != ExitOK {
		t.Errorf("diff after apply exited %d:\n%s", code, out)
	}
	if v, ok := tw.Value(&gnmipb.Path{Elem: []*gnmipb.PathElem{{Name: "qos"}}}); !ok || v == nil {
		t.Errorf("nothing under /qos on the OpenConfig twin")
	}
}

func TestLabProfileFlags(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"lab", "--empty", "--strict"}, ExitUsage, "--empty runs bare twins"},
		{[]string{"lab", "--empty", "--profile", "eos"}, ExitUsage, "--empty runs bare twins"},
		{[]string{"lab", "--profile", "srlinux-9.9"}, ExitUsage, `unknown profile "srlinux-9.9" (known: eos, openconfig, sonic-202405`},
		{[]string{"lab", "--profile", "sonic-202405", "--profile", "sonic-202411"}, ExitUsage, "two profiles for platform sonic"},
	} {
		code, _, stderr := runCLI(t, ctx, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}

// lab --profile runs profiled twins and says which profiles it runs.
func TestLabSaysWhichProfiles(t *testing.T) {
	_, stdout, _ := runCLI(t, context.Background(), "lab", "--profile", "srlinux-24.10", "--profile", "sonic-202405")
	for _, want := range []string{"profile srlinux-24.10 (Nokia 7220 IXR-H4", "profile sonic-202405 (NVIDIA/Mellanox SN3800", "profile eos (", "factory-default datastore"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("lab output lacks %q:\n%s", want, stdout)
		}
	}
}

// TestOpenConfigDefaultsModes: apply, then diff, against OpenConfig twins
// that populate YANG defaults and that trim them (issue 9): plan/diff must
// see no drift in either mode.
func TestOpenConfigDefaultsModes(t *testing.T) {
	prof, err := profile.Lookup("openconfig")
	if err != nil {
		t.Fatal(err)
	}
	s, err := yangcheck.Platform("openconfig")
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{profile.PopulateDefaults, profile.TrimDefaults} {
		t.Run(mode, func(t *testing.T) {
			// No Validator: today's OpenConfig payload lacks interface
			// config/name and config/type, which a strict target refuses
			// (noted for issue 10); this test is about defaults reporting.
			tw, err := twin.Start(twin.Options{Name: "oc1", Profile: prof, Schema: s, Defaults: mode})
			if err != nil {
				t.Fatal(err)
			}
			defer tw.Close()
			dir := t.TempDir()
			f := filepath.Join(dir, "oc.yaml")
			text := "apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\nmetadata: {name: oc}\npolicy: {preset: roce-lossless}\n" +
				"inventory:\n  switches:\n    - name: oc1\n      platform: openconfig\n      address: \"" + tw.Addr() + "\"\n" +
				"      tls: {insecure: true}\n      portDefaults: {speed: 100G, cable: 3m}\n      ports:\n        - name: Ethernet{1..2}\n"
			if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			if code, out, errOut := runCLI(t, t.Context(), "apply", "-f", f, "--force", "--backup-dir", filepath.Join(dir, "b")); code != ExitOK {
				t.Fatalf("apply exited %d:\n%s%s", code, out, errOut)
			}
			if code, out, errOut := runCLI(t, t.Context(), "diff", "-f", f); code != ExitOK {
				t.Errorf("diff after apply against a %s target exited %d:\n%s%s", mode, code, out, errOut)
			}
		})
	}
}

// --set-timeout bounds a Set (0: the switch profile's); a negative one is a
// usage error before anything is read or dialed.
func TestSetTimeoutFlag(t *testing.T) {
	for _, cmd := range []string{"plan", "apply", "diff"} {
		code, _, errOut := runCLI(t, t.Context(), cmd, "-f", "../../examples/lab.yaml", "--set-timeout", "-1s")
		if code != ExitUsage || !strings.Contains(errOut, "--set-timeout -1s") {
			t.Errorf("%s --set-timeout -1s: exit %d, stderr %q; want %d naming the flag", cmd, code, errOut, ExitUsage)
		}
	}
}

// testLab starts the lab's twins in a new temporary directory, as `fabricctl
// lab` does, closed when the test ends, and returns them and the directory.
func testLab(t *testing.T) (*labTwins, string) {
	t.Helper()
	reg, err := newRegistry()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	l, err := startLab(dir, reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.close)
	return l, dir
}
