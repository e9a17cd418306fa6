package switchdrv_test

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/fabricctl/fabricctl/examples"
	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/yangcheck"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/eos"
	"github.com/fabricctl/fabricctl/switchdrv/oc"
	"github.com/fabricctl/fabricctl/switchdrv/sonic"
	"github.com/fabricctl/fabricctl/switchdrv/srl"
)

var update = flag.Bool("update", false, "update golden files")

// registry returns a registry with the four platforms.
func compileRegistry(t testing.TB) *switchdrv.Registry {
	t.Helper()
	r := switchdrv.NewRegistry()
	for _, reg := range []func(*switchdrv.Registry) error{srl.Register, sonic.Register, eos.Register, oc.Register} {
		if err := reg(r); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// goldenDir is the platform package directory that holds a platform's goldens.
var goldenDir = map[intent.Platform]string{
	intent.PlatformSRLinux: "srl", intent.PlatformSONiC: "sonic",
	intent.PlatformEOS: "eos", intent.PlatformOpenConfig: "oc",
}

// portName is the n-th (0-based) front-panel port name on a platform.
func compilePortName(p intent.Platform, n int) string {
	switch p {
	case intent.PlatformSRLinux:
		return fmt.Sprintf("ethernet-1/%d", n+1)
	case intent.PlatformSONiC:
		return fmt.Sprintf("Ethernet%d", n*8)
	}
	return fmt.Sprintf("Ethernet%d", n+1)
}

// rocePolicy is the roce-lossless preset as intent.Parse resolves it.
func compilePolicy() intent.Policy {
	return intent.Policy{
		Preset: intent.PresetRoCELossless,
		Classes: []intent.Class{
			{Name: "default", Priority: 0, Weight: 50, Default: true},
			{Name: "roce", DSCP: []int{26}, Priority: 3, Lossless: true, Weight: 50,
				ECN: &intent.ECN{MinBytes: 150_000, MaxBytes: 1_501_500, Probability: 100}},
			{Name: "cnp", DSCP: []int{48}, Priority: 6, Strict: true, CNP: true},
		},
		MTU: 9216, HostMTU: 9000, RoCEPathMTU: 4096, DCBX: intent.DCBXHostStatic,
		Watchdog:              intent.Watchdog{Enabled: true, Detect: 200 * time.Millisecond, Restore: 400 * time.Millisecond, Poll: 100 * time.Millisecond, Action: intent.WatchdogDrop},
		MaxLosslessPriorities: 2,
	}
}

// twoLossless has two lossless classes with different ECN thresholds, a
// second strict class and the watchdog off.
func compileTwoLossless() intent.Policy {
	p := compilePolicy()
	p.Preset = ""
	p.Classes = []intent.Class{
		{Name: "default", Priority: 0, Weight: 40, Default: true},
		{Name: "roce", DSCP: []int{26}, Priority: 3, Lossless: true, Weight: 40,
			ECN: &intent.ECN{MinBytes: 100_000, MaxBytes: 1_000_000, Probability: 20}},
		{Name: "storage", DSCP: []int{24, 28}, Priority: 4, Lossless: true, Weight: 20,
			ECN: &intent.ECN{MinBytes: 200_000, MaxBytes: 2_000_000, Probability: 50}},
		{Name: "cnp", DSCP: []int{48}, Priority: 6, Strict: true, CNP: true},
		{Name: "control", DSCP: []int{46, 56}, Priority: 7, Strict: true},
	}
	p.Watchdog = intent.Watchdog{}
	return p
}

// fabric builds 2 switches x nports of platform pl with the policy; half the
// ports are 400G/3m host ports, the rest 400G/30m uplinks.
func compileFabric(pl intent.Platform, pol intent.Policy, nswitch, nports int) *intent.Fabric {
	f := &intent.Fabric{Name: "test", Policy: pol}
	for s := 0; s < nswitch; s++ {
		sw := intent.Switch{Name: fmt.Sprintf("leaf%d", s+1), Platform: pl, Address: fmt.Sprintf("192.0.2.%d:57400", s+1)}
		for i := 0; i < nports; i++ {
			p := intent.Port{Name: compilePortName(pl, i), Speed: 400e9, CableMeters: 3}
			if i >= nports/2 {
				p.CableMeters = 30
			}
			sw.Ports = append(sw.Ports, p)
		}
		f.Switches = append(f.Switches, sw)
	}
	return f
}

type compileCase struct {
	name string
	f    *intent.Fabric
}

// cases returns the Go-built test fabrics of every platform.
func compileCases() []compileCase {
	var out []compileCase
	for _, pl := range intent.Platforms() {
		out = append(out,
			compileCase{"roce-" + string(pl), compileFabric(pl, compilePolicy(), 2, 4)},
			compileCase{"two-lossless-" + string(pl), compileFabric(pl, compileTwoLossless(), 1, 2)},
		)
	}
	return out
}

// compileAwkwardNames has class names no device takes verbatim as keys.
func compileAwkwardNames() intent.Policy {
	p := compileTwoLossless()
	p.Classes[1].Name = "RoCE v2/ε bulk data for the training cluster"
	p.Classes[2].Name = "storage.nvme-of"
	return p
}

// exampleFabrics loads every examples/*.yaml (and each examples/<dir>/ as one
// intent) with intent.Load.
func compileExamples(t *testing.T) []compileCase {
	t.Helper()
	root := filepath.Join("..", "examples")
	ents, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []compileCase
	for _, e := range ents {
		var files []string
		switch {
		case e.IsDir() && e.Name() == examples.ModesDir:
			// one intent per file: what each platform compiles each mode to
			modes, _ := filepath.Glob(filepath.Join(root, e.Name(), "*.yaml"))
			for _, m := range modes {
				f, err := intent.Load(m)
				if err != nil {
					t.Errorf("intent.Load(%s): %v", m, err)
					continue
				}
				out = append(out, compileCase{"example-modes-" + strings.TrimSuffix(filepath.Base(m), ".yaml"), f})
			}
			continue
		case e.IsDir():
			if !examples.IntentDir(e.Name()) {
				continue
			}
			fs, _ := filepath.Glob(filepath.Join(root, e.Name(), "*.yaml"))
			files = fs
		case strings.HasSuffix(e.Name(), ".yaml"):
			files = []string{filepath.Join(root, e.Name())}
		}
		if len(files) == 0 {
			continue
		}
		f, err := intent.Load(files...)
		if err != nil {
			t.Errorf("intent.Load(%v): %v", files, err)
			continue
		}
		out = append(out, compileCase{"example-" + strings.TrimSuffix(e.Name(), ".yaml"), f})
	}
	return out
}

func compileAll(t *testing.T, r *switchdrv.Registry, f *intent.Fabric) map[string]*switchdrv.Desired {
	t.Helper()
	out := map[string]*switchdrv.Desired{}
	for i := range f.Switches {
		sw := &f.Switches[i]
		p, err := r.Lookup(sw.Platform)
		if err != nil {
			t.Fatal(err)
		}
		d, err := p.Compile(f, sw)
		if err != nil {
			t.Fatalf("Compile(%s): %v", sw.Name, err)
		}
		out[sw.Name] = d
	}
	return out
}

func TestCompileGolden(t *testing.T) {
	r := compileRegistry(t)
	for _, tc := range compileCases() {
		t.Run(tc.name, func(t *testing.T) {
			for name, d := range compileAll(t, r, tc.f) {
				golden := filepath.Join(goldenDir[d.Platform], "testdata", tc.name, name+".setrequest.txtpb")
				got := d.SetRequest()
				if *update {
					b, err := prototext.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(got)
					if err != nil {
						t.Fatal(err)
					}
					if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(golden, b, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				b, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("read golden (run go test -update): %v", err)
				}
				want := &gnmipb.SetRequest{}
				if err := prototext.Unmarshal(b, want); err != nil {
					t.Fatalf("parse %s: %v", golden, err)
				}
				if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
					t.Errorf("Compile(%q) mismatch (-want +got):\n%s", name, diff)
				}
			}
		})
	}
}

func TestCompileDeterministic(t *testing.T) {
	r := compileRegistry(t)
	for _, tc := range compileCases() {
		a := compileAll(t, r, tc.f)
		b := compileAll(t, r, tc.f)
		for name := range a {
			if !proto.Equal(a[name].SetRequest(), b[name].SetRequest()) {
				t.Errorf("%s/%s: two compiles of the same intent differ", tc.name, name)
			}
		}
	}
}

// yangSchemas returns every platform's schema from the YANG fabricctl
// embeds (or $FABRICCTL_YANG_DIR).
func yangSchemas(t *testing.T) map[intent.Platform]*yangcheck.Schema {
	t.Helper()
	out := map[intent.Platform]*yangcheck.Schema{}
	for _, p := range intent.Platforms() {
		s, err := yangcheck.Platform(p)
		if err != nil {
			t.Fatalf("load YANG: %v", err)
		}
		out[p] = s
	}
	return out
}

// modelled returns the updates of d that carry YANG-modelled JSON (all but
// CLI-origin text).
func modelledUpdates(d *switchdrv.Desired) []*gnmipb.Update {
	var out []*gnmipb.Update
	for _, u := range append(append([]*gnmipb.Update{}, d.Replaces...), d.Updates...) {
		if u.GetPath().GetOrigin() == eos.OriginCLI {
			continue
		}
		out = append(out, u)
	}
	return out
}

// TestCompiledPayloadsValidate checks every compiled JSON_IETF payload of
// every platform against that platform's YANG.
func TestCompiledPayloadsValidate(t *testing.T) {
	ss := yangSchemas(t)
	r := compileRegistry(t)
	all := append(compileCases(), compileExamples(t)...)
	for _, pl := range intent.Platforms() {
		all = append(all, compileCase{"awkward-names-" + string(pl), compileFabric(pl, compileAwkwardNames(), 1, 2)})
	}
	for _, tc := range all {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			for name, d := range compileAll(t, r, tc.f) {
				for _, u := range modelledUpdates(d) {
					n++
					if u.GetVal().GetJsonIetfVal() == nil {
						t.Errorf("%s %s: value is not json_ietf_val", name, yangcheck.PathString(u.GetPath()))
						continue
					}
					for _, v := range ss[d.Platform].ValidateUpdate(nil, u) {
						t.Errorf("%s (%s) %s: %s", name, d.Platform, yangcheck.PathString(u.GetPath()), v)
					}
				}
			}
			if n == 0 && len(tc.f.Switches) > 0 {
				t.Errorf("no modelled payloads compiled for %d switches", len(tc.f.Switches))
			}
		})
	}
}

// TestCorruptedPayloadsFail proves the validation above can fail: each case
// corrupts one compiled payload the way a compiler bug would and expects
// violations.
func TestCorruptedPayloadsFail(t *testing.T) {
	ss := yangSchemas(t)
	r := compileRegistry(t)
	tests := []struct {
		platform intent.Platform
		pathHas  string // the update whose path string contains this
		from, to string // replaced once in its JSON
	}{
		{intent.PlatformSRLinux, "dscp-policy", `"forwarding-class":"fc3"`, `"forwarding-class":3`},
		{intent.PlatformSRLinux, "queue-management-profile", `"min-threshold":"150000"`, `"min-threshold":150000`},
		{intent.PlatformSRLinux, "pfc-mapping-profile", `"detection-timer":200`, `"detection-timer":5000`},
		{intent.PlatformSRLinux, "scheduler-policy", `"priority":"strict"`, `"priority":"STRICT"`},
		{intent.PlatformSRLinux, "interface-id=ethernet-1/1]", `"pfc-enable":true`, `"pfc-enabled":true`},
		{intent.PlatformSONiC, "SCHEDULER/FABRICCTL_ROCE", `"weight":"50"`, `"weight":"0"`},
		{intent.PlatformSONiC, "PORT_QOS_MAP", `"pfc_enable":"3"`, `"pfc_enable":"3;4"`},
		{intent.PlatformSONiC, "WRED_PROFILE", `"ecn":"ecn_all"`, `"ecn":"ecn_everything"`},
		{intent.PlatformSONiC, "PFC_WD/Ethernet0", `"detection_time":"200"`, `"detection_time":"20"`},
		{intent.PlatformOpenConfig, "queue[name=ROCE]", `"queue-id":3`, `"queue-id":300`},
		{intent.PlatformOpenConfig, "queue-management-profile", `"enable-ecn":true`, `"enable-ecn":"true"`},
		{intent.PlatformEOS, "queue[name=3]", `"arista-qos-augments:scheduling":"ROUND_ROBIN"`, `"scheduling":"ROUND_ROBIN"`},
		{intent.PlatformEOS, "queue[name=0]", `"arista-qos-augments:bandwidth":50`, `"arista-qos-augments:bandwidth":"50"`},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s %s %s", tc.platform, tc.pathHas, tc.to), func(t *testing.T) {
			f := compileFabric(tc.platform, compilePolicy(), 1, 2)
			d := compileAll(t, r, f)["leaf1"]
			var u *gnmipb.Update
			for _, x := range modelledUpdates(d) {
				if strings.Contains(yangcheck.PathString(x.GetPath()), tc.pathHas) {
					u = proto.Clone(x).(*gnmipb.Update)
					break
				}
			}
			if u == nil {
				t.Fatalf("no compiled update with %q in its path", tc.pathHas)
			}
			if vs := ss[tc.platform].ValidateUpdate(nil, u); len(vs) != 0 {
				t.Fatalf("uncorrupted payload already fails: %v", vs)
			}
			js := string(u.GetVal().GetJsonIetfVal())
			if !strings.Contains(js, tc.from) {
				t.Fatalf("payload %s does not contain %s", js, tc.from)
			}
			u.Val = &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(strings.Replace(js, tc.from, tc.to, 1))}}
			if vs := ss[tc.platform].ValidateUpdate(nil, u); len(vs) == 0 {
				t.Errorf("ValidateUpdate(payload with %s -> %s) = no violations, want some", tc.from, tc.to)
			}
		})
	}
}

func TestCompileRejects(t *testing.T) {
	r := compileRegistry(t)
	mod := func(pl intent.Platform, f func(*intent.Fabric)) *intent.Fabric {
		fab := compileFabric(pl, compilePolicy(), 1, 2)
		f(fab)
		return fab
	}
	tests := []struct {
		name string
		f    *intent.Fabric
	}{
		{"srl watchdog detect above 1500ms", mod(intent.PlatformSRLinux, func(f *intent.Fabric) { f.Policy.Watchdog.Detect = 2 * time.Second })},
		{"srl weight above 255", mod(intent.PlatformSRLinux, func(f *intent.Fabric) { f.Policy.Classes[0].Weight = 300 })},
		{"srl global pause with pfc", mod(intent.PlatformSRLinux, func(f *intent.Fabric) { f.Policy.GlobalPause = true })},
		{"srl mtu above 9500", mod(intent.PlatformSRLinux, func(f *intent.Fabric) { f.Policy.MTU = 9600 })},
		{"sonic watchdog poll below 100ms", mod(intent.PlatformSONiC, func(f *intent.Fabric) { f.Policy.Watchdog.Poll = 50 * time.Millisecond })},
		{"sonic restore above 60s", mod(intent.PlatformSONiC, func(f *intent.Fabric) { f.Policy.Watchdog.Restore = 61 * time.Second })},
		{"sonic mtu above 9216", mod(intent.PlatformSONiC, func(f *intent.Fabric) { f.Policy.MTU = 9300 })},
		{"eos unknown watchdog action", mod(intent.PlatformEOS, func(f *intent.Fabric) { f.Policy.Watchdog.Action = "reboot" })},
		{"sonic class keys collide", mod(intent.PlatformSONiC, func(f *intent.Fabric) {
			f.Policy.Classes[0].Name = "roce" + strings.Repeat("x", 40)
			f.Policy.Classes[2].Name = "roce" + strings.Repeat("x", 41)
		})},
		{"srl class profiles collide", mod(intent.PlatformSRLinux, func(f *intent.Fabric) {
			f.Policy.Classes[0].Name, f.Policy.Classes[0].ECN = "roce", f.Policy.Classes[1].ECN
			f.Policy.Classes[1].Name = "ROCE"
		})},
		{"eos poll more than half of detect", mod(intent.PlatformEOS, func(f *intent.Fabric) { f.Policy.Watchdog.Poll = 150 * time.Millisecond })},
		{"eos restore above 60s", mod(intent.PlatformEOS, func(f *intent.Fabric) { f.Policy.Watchdog.Restore = 61 * time.Second })},
		{"eos global pause with pfc", mod(intent.PlatformEOS, func(f *intent.Fabric) { f.Policy.GlobalPause = true })},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sw := &tc.f.Switches[0]
			p, err := r.Lookup(sw.Platform)
			if err != nil {
				t.Fatal(err)
			}
			if d, err := p.Compile(tc.f, sw); err == nil {
				t.Errorf("Compile(%s) = %d replaces, want an error", sw.Name, len(d.Replaces))
			}
		})
	}
	for _, pl := range intent.Platforms() {
		p, err := r.Lookup(pl)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Compile(nil, nil); err == nil {
			t.Errorf("%s: Compile(nil, nil) = nil error", pl)
		}
	}
}

func TestPlatformsRegister(t *testing.T) {
	r := compileRegistry(t)
	for _, pl := range intent.Platforms() {
		p, err := r.Lookup(pl)
		if err != nil {
			t.Fatalf("Lookup(%s): %v", pl, err)
		}
		if p.Name() != pl {
			t.Errorf("Lookup(%s).Name() = %s", pl, p.Name())
		}
	}
	if err := srl.Register(r); err == nil {
		t.Error("registering srlinux twice: no error")
	}
}

// TestPFCNotes: plain OpenConfig cannot express PFC and must say so; the
// others must express it.
func TestPFCNotes(t *testing.T) {
	r := compileRegistry(t)
	for _, pl := range intent.Platforms() {
		p, _ := r.Lookup(pl)
		d := compileAll(t, r, compileFabric(pl, compilePolicy(), 1, 1))["leaf1"]
		hasNote := false
		for _, n := range d.Notes {
			if n == oc.NotePFC {
				hasNote = true
			}
		}
		wantNote := pl == intent.PlatformOpenConfig
		if hasNote != wantNote || p.Quirks().PFC == wantNote {
			t.Errorf("%s: PFC note %v, Quirks.PFC %v; want note %v", pl, hasNote, p.Quirks().PFC, wantNote)
		}
	}
}

// TestOwnedPathsAreDistinct: no two Replaces/Updates of one switch address
// the same path (B reads each back and compares it leaf by leaf).
func TestOwnedPathsAreDistinct(t *testing.T) {
	r := compileRegistry(t)
	for _, tc := range compileCases() {
		for name, d := range compileAll(t, r, tc.f) {
			seen := map[string]bool{}
			for _, u := range append(append([]*gnmipb.Update{}, d.Replaces...), d.Updates...) {
				k := yangcheck.PathString(u.GetPath())
				if seen[k] {
					t.Errorf("%s/%s: path %s compiled twice", tc.name, name, k)
				}
				seen[k] = true
			}
			keys := make([]string, 0, len(seen))
			for k := range seen {
				keys = append(keys, k)
			}
			sort.Strings(keys)
		}
	}
}

// BenchmarkCompile compiles 2,000 switches x 64 ports of each platform.
func BenchmarkCompile(b *testing.B) {
	r := switchdrv.NewRegistry()
	for _, reg := range []func(*switchdrv.Registry) error{srl.Register, sonic.Register, eos.Register, oc.Register} {
		if err := reg(r); err != nil {
			b.Fatal(err)
		}
	}
	for _, pl := range intent.Platforms() {
		f := compileFabric(pl, compilePolicy(), 2000, 64)
		p, err := r.Lookup(pl)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%s-2000x64", pl), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for i := range f.Switches {
					if _, err := p.Compile(f, &f.Switches[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
