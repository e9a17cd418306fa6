package intent_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/examples"
	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/check"
)

// The referee: what `fabricctl check` and `check -o json` printed, the parse error's
// text, and every position of the parsed fabric, for the example intents,
// the fuzz targets' seeds and a set of deliberately bad inputs, recorded
// with the decoder that walked yaml.Node reflectively in a second pass
// (before the per-type field tables) and held byte-equal since.
//
//	go test -run TestDecodeReferee ./intent -args -update-referee   # rewrite testdata/referee
var updateReferee = flag.Bool("update-referee", false, "rewrite intent/testdata/referee from the current decoder")

const refHeader = "apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\n"

const refPolicy = refHeader + "policy: {preset: roce-lossless}\n"

const refSwitch = "    - {name: leaf1, platform: sonic, address: \"10.0.0.1:8080\", portDefaults: {speed: 400G}, ports: [{name: \"Ethernet{0..12..4}\"}]}\n"

// refereeCases are the inputs held: name -> files (name, contents).
func refereeCases(t *testing.T) map[string][]intent.Source {
	cases := map[string][]intent.Source{}
	add := func(name string, srcs ...intent.Source) {
		if _, dup := cases[name]; dup {
			t.Fatalf("referee case %s twice", name)
		}
		cases[name] = srcs
	}
	one := func(name, text string) { add(name, intent.Source{Name: "f.yaml", Data: []byte(text)}) }

	// Every example intent as `fabricctl check` reads it (a folder's files
	// together).
	sets, err := examples.IntentSets("../examples")
	if err != nil {
		t.Fatal(err)
	}
	for key, files := range sets {
		var srcs []intent.Source
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			srcs = append(srcs, intent.Source{Name: p, Data: b})
		}
		add("example-"+key, srcs...)
	}
	// FuzzParse's and FuzzCheck's seeds: every example YAML file alone.
	seeds, _ := filepath.Glob("../examples/*.yaml")
	more, _ := filepath.Glob("../examples/*/*.yaml")
	for _, p := range append(seeds, more...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		add("seed-"+strings.TrimPrefix(p, "../examples/"), intent.Source{Name: "f.yaml", Data: b})
	}
	// FuzzParse's inline seeds.
	for i, s := range []string{
		"", "\x00", "\xff\xfe", "\t\t", "[", "{", "&a [*a]", "a: &a\n  b: *a\n",
		refHeader + "policy: {preset: roce-lossless}\n",
		refHeader + "policy:\n  mtu: 1e400\n",
		refHeader + "inventory:\n  switches:\n    - {name: 's{0..99999999}', platform: sonic, address: 'a:1'}\n",
		refHeader + "policy: {classes: [{name: x, dscp: [1,1], priority: 9}]}\n",
		refHeader + "policy: {preset: roce-lossless}\ninventory: {links: [[a, b, c]]}\n",
		refHeader + "policy:\n  preset: roce-lossless\n  preset: none\n",
	} {
		one(fmt.Sprintf("fuzzseed-%02d", i), s)
	}

	// Deliberately bad inputs, one kind of mistake each.
	one("unknown-top", refPolicy+"inventry: {}\n")
	one("unknown-near-miss", refHeader+"policy:\n  preset: roce-lossless\n  watchdog: {detct: 100ms}\n")
	one("unknown-list-valid", refHeader+"policy:\n  preset: roce-lossless\n  roce: {zzzzzz: 1}\n")
	one("unknown-in-switch", refPolicy+"inventory:\n  switches:\n    - {name: s1, platform: sonic, address: 'a:1', plaform: x}\n")
	one("unknown-link-field", refPolicy+"inventory:\n  links:\n    - {a: 'h:e', c: 's:e'}\n")
	one("xkeys", refHeader+"x-defaults: &d {speed: 100G, cable: 3m}\npolicy: {preset: roce-lossless}\ninventory:\n  switches:\n    - {name: s1, platform: sonic, address: 'a:1', portDefaults: *d, ports: [{name: 'e{1..4}'}]}\n")
	one("type-string-for-int", refHeader+"policy: {preset: roce-lossless, mtu: big}\n")
	one("type-list-for-map", refHeader+"policy: [1, 2]\n")
	one("type-map-for-list", refPolicy+"inventory: {switches: {name: s1}}\n")
	one("type-map-for-string", refPolicy+"inventory:\n  switches:\n    - {name: {a: b}, platform: sonic, address: 'a:1'}\n")
	one("type-bool", refHeader+"policy: {preset: roce-lossless, globalPause: yes-please}\n")
	one("type-null", refHeader+"policy: {preset: roce-lossless, mtu: null, watchdog: ~}\nmetadata: {name: null}\n")
	one("type-float", refHeader+"policy: {preset: roce-lossless}\nvalidation: {iterations: 1.5, minBandwidth: .inf}\n")
	one("type-int-overflow", refHeader+"policy: {preset: roce-lossless, mtu: 99999999999999999999}\n")
	one("type-credentials-secret", refPolicy+"inventory:\n  switches:\n    - {name: s1, platform: sonic, address: 'a:1', credentials: {usernameEnv: [x], password: hunter2, passwordEnv: 'hunter 2'}}\n")
	one("range-int", refHeader+"policy: {preset: roce-lossless, mtu: 100, hostMTU: 20000, maxLosslessPriorities: 0}\n")
	one("range-list", refHeader+"policy:\n  preset: roce-lossless\n  classes:\n    - {name: roce, dscp: [26, 64, -1], priority: 8}\n")
	one("range-nested", refPolicy+"inventory:\n  hosts:\n    - {name: h1, ssh: {port: 70000}, nics: [{interface: eth0, rdmaPort: 0}]}\n")
	one("enum-many", refHeader+"policy: {preset: roce-lossless, dcbx: auto, rocePathMTU: 1000, watchdog: {action: reboot}, roce: {mode: v3}}\n")
	one("enum-platform", refPolicy+"inventory:\n  switches:\n    - {name: s1, platform: junos, address: 'a:1', profile: nope, asic: nope}\n")
	one("units", refPolicy+"inventory:\n  switches:\n    - {name: s1, platform: sonic, address: 'a:1', buffer: 12XB, portDefaults: {speed: 400X, cable: far}, ports: [{name: e1}]}\n")
	one("units-duration", refHeader+"policy: {preset: roce-lossless, watchdog: {detect: 100, poll: true, restore: 1h}}\nvalidation: {duration: -3s, minBandwidth: 120%}\n")
	one("duplicate-top", refPolicy+"policy: {preset: none}\n")
	one("duplicate-nested", refHeader+"policy:\n  preset: roce-lossless\n  watchdog:\n    poll: 100ms\n    poll: 200ms\n")
	one("duplicate-link-field", refPolicy+"inventory:\n  links:\n    - {a: 'h:e', a: 's:e', b: 'x:y'}\n")
	one("duplicate-names", refPolicy+"inventory:\n  switches:\n"+refSwitch+refSwitch+"  hosts:\n    - {name: leaf1}\n")
	one("required", refPolicy+"inventory:\n  switches:\n    - {name: s1}\n  hosts:\n    - {nics: [{rdma: mlx5_0}]}\n")
	one("anchors-aliases", refHeader+"policy:\n  preset: roce-lossless\n  classes:\n    - &r {name: roce, dscp: [26], priority: 3}\ninventory:\n  switches:\n    - &s {name: s1, platform: sonic, address: 'a:1', portDefaults: &pd {speed: 100G}, ports: [{name: e1}]}\n    - {name: s2, platform: sonic, address: 'a:2', portDefaults: *pd, ports: [{name: e1}]}\n  links:\n    - &l ['s1:e1', 's2:e1']\n    - *l\n")
	one("merge-keys", refHeader+"x-base: &b {platform: sonic, portDefaults: {speed: 100G, cable: 5m}}\nx-more: &m {address: 'a:9'}\npolicy: {preset: roce-lossless}\ninventory:\n  switches:\n    - {<<: [*b, *m], name: s1, ports: [{name: e1}]}\n    - <<: *b\n      name: s2\n      address: 'a:2'\n      ports: [{name: e1}]\n    - {<<: {platform: eos, bogus: 1}, name: s3, address: 'a:3'}\n    - {<<: 5, name: s4, platform: sonic, address: 'a:4'}\n")
	one("merge-override-units", refHeader+"x-d: &d {speed: 100G, cable: 5m}\npolicy: {preset: roce-lossless}\ninventory:\n  switches:\n    - {name: s1, platform: sonic, address: 'a:1', portDefaults: {<<: *d, speed: 400G}, ports: [{name: e1}, {name: e2, speed: 100G}, {name: e3, speed: 400G, cable: 5m}]}\n    - {name: s2, platform: sonic, address: 'a:2', portDefaults: {<<: *d, cable: 1m}, ports: [{name: e1, cable: 5m}, {name: e2, speed: 100G, cable: 1m}]}\n")
	one("alias-unknown", refPolicy+"inventory: *nope\n")
	one("alias-bomb", refHeader+"x-a: &a [1,1,1,1,1,1,1,1,1,1]\nx-b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nx-c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nx-d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\nx-e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nx-f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\npolicy: {preset: roce-lossless, classes: *f}\n")
	one("keys-not-strings", refHeader+"policy: {preset: roce-lossless, [a]: 1, {b: c}: 2}\n")
	one("links-bad", refPolicy+"inventory:\n  links:\n    - [a]\n    - 5\n    - [{x: y}, b]\n    - ['a{1..3}:e', 'b{1..2}:e']\n    - ['nocolon', 's:e']\n    - {a: 'h:e'}\n")
	one("ranges-bad", refPolicy+"inventory:\n  switches:\n    - {name: 'leaf{1..4}', platform: sonic, address: 'a:1'}\n    - {name: 'sp{1..2}', platform: sonic, address: 'a:{1..3}'}\n    - {name: 'x{3..1', platform: sonic, address: 'a:1'}\n")
	one("syntax-error", refPolicy+"inventory:\n  switches: [\n    {name: s1\n")
	one("syntax-tabs", refHeader+"policy:\n\tpreset: roce-lossless\n")
	one("empty-doc", "# only a comment\n")
	one("multi-doc", refPolicy+"---\n---\n"+refHeader+"inventory:\n  switches:\n"+refSwitch+"...\n")
	one("large-name", refPolicy+"inventory:\n  switches:\n    - {name: '"+strings.Repeat("n", 300)+"', platform: sonic, address: 'a:1'}\n  hosts:\n    - {name: h1, nics: [{interface: "+strings.Repeat("e", 200)+"}]}\n")
	one("sequence-root", "- a\n- b\n")
	one("scalar-root", "hello\n")
	one("version-kind", "apiVersion: fabricctl.io/v2\nkind: Fabrik\npolicy: {preset: roce-lossless}\n")
	one("classes-custom", refHeader+"policy:\n  preset: none\n  classes:\n    - {name: d, default: true, weight: 40.5}\n    - {name: r, dscp: [26, 26], priority: 3, lossless: true, strict: true, weight: 50, ecn: {min: 150KB, probability: 0}}\n    - {name: c, dscp: [48], priority: 6, cnp: true, default: true}\n    - {name: r, priority: 4}\n  hostBuffers:\n    - {buffer: 0, priorities: [0, 3]}\n    - {buffer: 0, size: 5GB, priorities: [3]}\n    - {size: 1KB}\n")
	one("ports-bad", refPolicy+"inventory:\n  switches:\n    - {name: s1, platform: sonic, address: 'a:1', portDefaults: {name: x}, ports: [{name: e1}, {name: e1, speed: 100G}, {speed: 100G}, {name: 'e{1..5000}', speed: 1G}]}\n")
	one("ports-ranges-dup", refPolicy+"inventory:\n  switches:\n    - {name: s1, platform: sonic, address: 'a:1', portDefaults: {speed: 100G}, ports: [{name: 'e{1..11}{1..11}'}, {name: 'e{5..6}'}, {name: 'x{1..2}'}, {name: 'x{01..2}'}]}\n  links:\n    - ['s1:x{1..2}', 's1:e{1..2}']\n    - ['s1:x1', 's1:e{1..2}']\n    - ['s1:x{1..2', 's1:e1']\n    - ['s1:x1', 's1:e1}']\n")
	one("tls-proxy", refPolicy+"inventory:\n  switches:\n    - {name: s1, platform: srlinux, address: 'a:1', proxy: 'https://u:p@x', tls: {cert: c.pem}}\n")
	one("hosts-bad", refPolicy+"inventory:\n  hosts:\n    - {name: 'g{1..3}', address: 10.0.0.1, nics: [{interface: eth0, address: '10.1.0.{1..2}'}, {interface: eth0}, {interface: 'a/b'}]}\n    - {name: local, ssh: {user: ''}, nics: [{interface: eth1, rdma: 'mlx5:0', speed: 100G, cable: 2m}]}\n")

	// Intents in several files.
	pol := intent.Source{Name: "policy.yaml", Data: []byte(refHeader + "metadata: {name: a}\npolicy: {preset: roce-lossless}\n")}
	inv := intent.Source{Name: "inventory.yaml", Data: []byte(refHeader + "metadata: {name: a}\ninventory:\n  switches:\n" + refSwitch + "  hosts:\n    - {name: h1, nics: [{interface: eth0, speed: 400G}]}\n  links:\n    - ['h1:eth0', 'leaf1:Ethernet0']\n")}
	add("multi-ok", pol, inv)
	add("multi-policy-twice", pol, intent.Source{Name: "p2.yaml", Data: []byte(refHeader + "policy: {preset: none}\nvalidation: {}\n---\n" + refHeader + "validation: {iterations: 10}\n")})
	add("multi-name-conflict", pol, intent.Source{Name: "b.yaml", Data: []byte(refHeader + "metadata: {name: b}\n")})
	add("multi-dup-switch", pol, inv, intent.Source{Name: "more.yaml", Data: []byte(refHeader + "inventory:\n  switches:\n" + refSwitch)})
	add("multi-bad-and-good", pol, intent.Source{Name: "bad.yaml", Data: []byte(refHeader + "inventory: {switches: 3}\n")}, intent.Source{Name: "empty.yaml", Data: []byte("\n")})
	add("no-policy", intent.Source{Name: "inv.yaml", Data: inv.Data})
	// The benchmarks' generated fabric, small.
	add("generated", intent.Source{Name: "large.yaml", Data: largeFabric(4, 1)})
	return cases
}

// refereeOutput is what the referee holds for one case: the parse error's
// text, the positions of everything parsed, and check's JSON.
func refereeOutput(t *testing.T, srcs []intent.Source) []byte {
	var b bytes.Buffer
	f, err := intent.ParseSources(srcs...)
	var findings []check.Finding
	if err != nil {
		var es intent.Errors
		if !errors.As(err, &es) {
			t.Fatalf("error is %T, want intent.Errors: %v", err, err)
		}
		fmt.Fprintf(&b, "# parse error\n%s\n", err)
		findings = check.FromErrors(err)
	} else {
		b.WriteString("# positions\n")
		dumpPositions(&b, "fabric", reflect.ValueOf(f).Elem())
		findings = check.Run(f, check.Options{})
	}
	files := make([]string, 0, len(srcs))
	for _, s := range srcs {
		files = append(files, s.Name)
	}
	if f != nil {
		files = f.Files
	}
	b.WriteString("# check\n")
	if err := check.WriteText(&b, findings, false); err != nil {
		t.Fatal(err)
	}
	b.WriteString("# check -o json\n")
	if err := check.WriteJSON(&b, files, findings); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

var (
	posType    = reflect.TypeOf(intent.Pos{})
	fieldsType = reflect.TypeOf(intent.Fields{})
)

// inventoryTypes are the types whose values the referee holds too (the
// policy's are check's to judge; other branches add fields to them).
var inventoryTypes = map[reflect.Type]bool{
	reflect.TypeOf(intent.Switch{}): true, reflect.TypeOf(intent.Port{}): true,
	reflect.TypeOf(intent.Host{}): true, reflect.TypeOf(intent.NIC{}): true,
	reflect.TypeOf(intent.Endpoint{}): true, reflect.TypeOf(intent.SSH{}): true,
	reflect.TypeOf(intent.TLS{}): true, reflect.TypeOf(intent.Credentials{}): true,
}

// dumpPositions writes every Pos and Fields reachable from v (structs,
// pointers, slices and arrays), each under its Go field path, and the
// values of the inventory's elements.
func dumpPositions(b *bytes.Buffer, path string, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			dumpPositions(b, path, v.Elem())
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := 0; i < v.Len(); i++ {
			dumpPositions(b, fmt.Sprintf("%s[%d]", path, i), v.Index(i))
		}
	case reflect.Struct:
		if v.Type() == posType {
			if p := v.Interface().(intent.Pos); p.IsValid() {
				fmt.Fprintf(b, "%s %s\n", path, p)
			}
			return
		}
		if v.Type() == fieldsType {
			dumpFields(b, path, v.Interface().(intent.Fields))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			ft := v.Type().Field(i)
			if !ft.IsExported() || ft.Name == "Sources" {
				continue
			}
			if inventoryTypes[v.Type()] {
				switch fv := v.Field(i); fv.Kind() {
				case reflect.String, reflect.Int, reflect.Int64, reflect.Float64, reflect.Bool:
					fmt.Fprintf(b, "%s.%s = %v\n", path, ft.Name, fv.Interface())
					continue
				}
			}
			dumpPositions(b, path+"."+ft.Name, v.Field(i))
		}
	}
}

// dumpFields writes the keys of a Fields, sorted, each with its position.
func dumpFields(b *bytes.Buffer, path string, fs intent.Fields) {
	keys := make([]string, 0, fs.Len())
	at := map[string]intent.Pos{}
	for k, p := range fs.All() {
		keys = append(keys, k)
		at[k] = p
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(b, "%s{%s} %s\n", path, k, at[k])
	}
}

// TestDecodeReferee holds the decoder's results and positions byte-equal to
// the referee's. An example added since is logged as not held; record it
// with -update-referee and read the diff (git diff intent/testdata/referee)
// before committing it: so also when a change to check's rules changes the
// findings of an example on purpose.
func TestDecodeReferee(t *testing.T) {
	dir := filepath.Join("testdata", "referee")
	cases := refereeCases(t)
	if *updateReferee {
		old, _ := filepath.Glob(filepath.Join(dir, "*.golden"))
		for _, p := range old {
			os.Remove(p)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	names := make([]string, 0, len(cases))
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	missing := 0
	for _, name := range names {
		file := filepath.Join(dir, strings.NewReplacer("/", "_", ".yaml", "").Replace(name)+".golden")
		got := refereeOutput(t, cases[name])
		if *updateReferee {
			if err := os.WriteFile(file, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(file)
		if err != nil && (strings.HasPrefix(name, "example-") || strings.HasPrefix(name, "seed-")) {
			// An example added after the referee was recorded: nothing
			// recorded it with the decoder before.
			t.Logf("%s: not held (no %s): record it with -update-referee", name, file)
			missing++
			continue
		}
		if err != nil {
			t.Errorf("%s: no referee output (%v): run go test -run TestDecodeReferee ./intent -args -update-referee and review the new file", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: output differs from %s:\n%s", name, file, lineDiff(string(want), string(got)))
		}
	}
	if !*updateReferee {
		files, _ := filepath.Glob(filepath.Join(dir, "*.golden"))
		if len(files) != len(cases)-missing {
			t.Errorf("%d referee files for %d cases: remove the stale ones with -update-referee", len(files), len(cases)-missing)
		}
	}
}

// lineDiff shows the first lines where want and got differ.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(w), len(g)) && shown < 10; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  want %q\n  got  %q\n", i+1, wl, gl)
			shown++
		}
	}
	return b.String()
}
