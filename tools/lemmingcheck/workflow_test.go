package lemmingcheck

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/openconfig/gnmi/value"
	"github.com/openconfig/ygot/ygot"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv"
	ocp "github.com/fabricctl/fabricctl/switchdrv/oc"
)

// ocIntent is the policy of a fabric of plain OpenConfig switches.
// openconfig-qos has no PFC, so the preset's RoCE class is made lossy (ECN
// marking without PFC); with it lossless, check refuses such switches
// (FC106). %s may change the RoCE class further.
const ocIntent = `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: lemming}
policy:
  preset: roce-lossless
  classes:
    - {name: roce, lossless: false%s}
inventory:
  switches:
`

// ocSwitch is one inventory switch: name, then its lemming's address
// (plaintext gRPC: tls.insecure, no credentials; lemming checks none).
const ocSwitch = `    - name: %s
      platform: openconfig
      address: %q
      tls: {insecure: true}
      portDefaults: {speed: 100G, cable: 3m}
      ports:
        - name: Ethernet{1..8}
`

// writeIntent writes the intent for targets into dir and returns its path.
// roce (e.g. ", ecn: {min: 200KB}") changes the RoCE class.
func writeIntent(tb testing.TB, dir string, targets []*target, roce string) string {
	tb.Helper()
	text := fmt.Sprintf(ocIntent, roce)
	for _, t := range targets {
		text += fmt.Sprintf(ocSwitch, t.name, t.addr)
	}
	f := filepath.Join(dir, "fabric.yaml")
	if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
		tb.Fatal(err)
	}
	return f
}

// compiled is what fabricctl sends each switch of f, compiled in process
// with the real openconfig compiler.
func compiled(tb testing.TB, file string) []*gpb.SetRequest {
	tb.Helper()
	f, err := intent.Load(file)
	if err != nil {
		tb.Fatal(err)
	}
	reg := switchdrv.NewRegistry()
	if err := ocp.Register(reg); err != nil {
		tb.Fatal(err)
	}
	p, err := reg.Lookup(intent.PlatformOpenConfig)
	if err != nil {
		tb.Fatal(err)
	}
	var out []*gpb.SetRequest
	for i := range f.Switches {
		d, err := p.Compile(f, &f.Switches[i])
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, d.SetRequest())
	}
	return out
}

func dialPlain(tb testing.TB, addr string) gpb.GNMIClient {
	tb.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cc.Close() })
	return gpb.NewGNMIClient(cc)
}

// TestWorkflowLemming drives the fabricctl binary as a user does against two
// lemming targets: check, render, plan, apply, a second apply that has
// nothing to do, diff in sync, a changed intent applied, and drift made
// behind fabricctl's back found by diff.
//
// lemming fills in YANG defaults on every Set (PopulateDefaults), inside
// the subtrees fabricctl replaces too: the queue-management-profile gets
// red/uniform/config/{drop,enable-ecn} = false, which fabricctl never sends.
// So "no changes" and diff exit 0 here are issue 10 item 18 ("defaults are
// not drift") against a third-party, schema-backed server.
func TestWorkflowLemming(t *testing.T) {
	dir := t.TempDir()
	targets := []*target{startLemming(t, "oc1", true), startLemming(t, "oc2", true)}
	f := writeIntent(t, dir, targets, "")
	step := func(want int, args ...string) string {
		t.Helper()
		if args[0] != "check" && args[0] != "render" {
			// lemming's Set takes 0.5-0.7 s of CPU on a loaded 2-core
			// machine (BenchmarkApplyVsBareSetLemming); leave room.
			args = append(args, "--timeout", "2m")
		}
		code, out, errOut := run(t, dir, args...)
		if code != want {
			t.Fatalf("fabricctl %s exited %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, out, errOut)
		}
		return out
	}
	step(0, "check", "-f", f)
	out := step(0, "render", "-f", f, "-o", "json")
	if n := strings.Count(out, `"platform": "openconfig"`); n != 2 {
		t.Errorf("render -o json has %d openconfig switches, want 2:\n%s", n, out)
	}
	// 3 queues, 3 forwarding groups, 2 classifiers, 1 ECN profile, 1
	// scheduler policy and 8 qos interfaces replaced, 8 interfaces merged.
	out = step(2, "plan", "-f", f, "--detailed-exitcode")
	if !strings.Contains(out, "Plan: 52 to create, 0 to update, 0 to delete on 2 of 2 targets.") {
		t.Errorf("plan of two fresh lemming targets:\n%s", out)
	}
	out = step(0, "apply", "-f", f)
	for _, want := range []string{"switch oc1: applied (26 changes)", "switch oc2: applied (26 changes)", "Apply: applied."} {
		if !strings.Contains(out, want) {
			t.Errorf("apply output lacks %q:\n%s", want, out)
		}
	}
	// lemming stored defaults fabricctl did not send, in a replaced subtree.
	const qmp = "/qos/queue-management-profiles/queue-management-profile[name=FABRICCTL_ECN_ROCE]"
	leaves := stored(t, targets[0], qmp)
	for _, want := range []string{qmp + "/red/uniform/config/drop = false", qmp + "/red/uniform/config/enable-ecn = false"} {
		if !slices.Contains(leaves, want) {
			t.Errorf("lemming no longer populates %s; this test no longer exercises defaults. Stored:\n%s", want, strings.Join(leaves, "\n"))
		}
	}
	for _, u := range compiled(t, f)[0].GetReplace() {
		if strings.Contains(string(u.GetVal().GetJsonIetfVal()), `"red"`) {
			t.Fatalf("fabricctl now sends red itself; the defaults check above proves nothing: %s", u.GetVal().GetJsonIetfVal())
		}
	}
	out = step(0, "apply", "-f", f)
	if !strings.Contains(out, "Apply: no-changes.") || strings.Count(out, "no changes") != 2 {
		t.Errorf("second apply is not a no-op:\n%s", out)
	}
	if out = step(0, "diff", "-f", f); !strings.Contains(out, "In sync: 2 targets.") {
		t.Errorf("diff right after apply:\n%s", out)
	}

	// A changed intent: the ECN profile is replaced on both switches.
	f = writeIntent(t, dir, targets, ", ecn: {min: 200KB}")
	out = step(0, "apply", "-f", f)
	if !strings.Contains(out, "switch oc1: applied (1 change") || !strings.Contains(out, "min-threshold") {
		t.Errorf("apply of a changed ECN Kmin:\n%s", out)
	}
	if leaves := stored(t, targets[1], qmp+"/wred/uniform/config/min-threshold"); !slices.Equal(leaves, []string{qmp + "/wred/uniform/config/min-threshold = 200000"}) {
		t.Errorf("lemming holds %v after the changed apply", leaves)
	}
	step(0, "diff", "-f", f)

	// Drift made behind fabricctl's back is found, and named.
	drift := &gpb.SetRequest{Update: []*gpb.Update{{Path: mustPath(t, "/qos/queues/queue[name=ROCE]/config/queue-id"),
		Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: 4}}}}}
	if _, err := targets[1].lem.Set(t.Context(), drift); err != nil {
		t.Fatal(err)
	}
	out = step(2, "diff", "-f", f)
	t.Logf("diff after drift on oc2:\n%s", out)
	if !strings.Contains(out, "switch oc1: in sync") || !strings.Contains(out, "@@ /qos/queues/queue[name=ROCE]/config/queue-id @@\n-4\n+3") {
		t.Errorf("diff after queue-id drift on oc2:\n%s", out)
	}
	step(0, "apply", "-f", f)
	step(0, "diff", "-f", f)
}

// TestPlainLemmingRefusesReads pins what lemming v0.4.0 as it ships answers:
// it takes fabricctl's whole SetRequest (schema-valid for lemming's
// OpenConfig models), but it implements neither Capabilities nor Get
// (gnmi/gnmi.go, "Reference Implementation Unimplemented"), so fabricctl
// plan stops at Capabilities, naming the switch. When a lemming release
// answers them, this test fails and the README's paragraph must change.
func TestPlainLemmingRefusesReads(t *testing.T) {
	dir := t.TempDir()
	tg := startLemming(t, "oc1", false)
	f := writeIntent(t, dir, []*target{tg}, "")
	c := dialPlain(t, tg.addr)
	if _, err := c.Set(t.Context(), compiled(t, f)[0]); err != nil {
		t.Errorf("lemming refuses fabricctl's payload: %v", err)
	}
	const unimpl = "rpc error: code = Unimplemented desc = Reference Implementation Unimplemented"
	if _, err := c.Get(t.Context(), &gpb.GetRequest{Path: []*gpb.Path{mustPath(t, "/qos")}, Encoding: gpb.Encoding_JSON_IETF}); err == nil || err.Error() != unimpl {
		t.Errorf("lemming Get: %v, want %s", err, unimpl)
	}
	code, out, errOut := run(t, dir, "plan", "-f", f)
	if want := "switch oc1 (openconfig): ERROR: switch oc1: capabilities: " + unimpl; code != 1 || !strings.Contains(out, want) {
		t.Errorf("plan against lemming as it ships exited %d, want 1 and %q:\n%s%s", code, want, out, errOut)
	}
}

// stored lists lemming's own datastore under path, one "path = value" a
// leaf, sorted.
func stored(tb testing.TB, tg *target, path string) []string {
	tb.Helper()
	notes, err := subscribeOnce(tb.(interface{ Context() context.Context }).Context(), tg.lem.LocalClient(), tg.name, []*gpb.Path{mustPath(tb, path)})
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, n := range notes {
		for _, u := range n.GetUpdate() {
			p := &gpb.Path{Elem: append(slices.Clone(n.GetPrefix().GetElem()), u.GetPath().GetElem()...)}
			v, err := value.ToScalar(u.GetVal())
			if err != nil {
				tb.Fatal(err)
			}
			out = append(out, fmt.Sprint(pathString(p), " = ", v))
		}
	}
	slices.Sort(out)
	return out
}

func mustPath(tb testing.TB, s string) *gpb.Path {
	tb.Helper()
	p, err := ygot.StringToStructuredPath(s)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}
