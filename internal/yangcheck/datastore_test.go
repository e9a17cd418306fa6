package yangcheck_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/examples"
	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/profile"
	"github.com/fabricctl/fabricctl/internal/yangcheck"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/eos"
	"github.com/fabricctl/fabricctl/switchdrv/oc"
	"github.com/fabricctl/fabricctl/switchdrv/sonic"
	"github.com/fabricctl/fabricctl/switchdrv/srl"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

// exampleDatastores compiles every example fabric (examples/*.yaml and each
// example folder) with the switchdrv compilers and returns, per switch, the
// datastore its Set leaves on an empty device: name -> platform, tree.
type exampleDatastore struct {
	name     string
	platform intent.Platform
	origin   string
	tree     map[string]any
}

func exampleDatastores(t testing.TB) []exampleDatastore {
	t.Helper()
	r := switchdrv.NewRegistry()
	for _, reg := range []func(*switchdrv.Registry) error{srl.Register, sonic.Register, eos.Register, oc.Register} {
		if err := reg(r); err != nil {
			t.Fatal(err)
		}
	}
	root := filepath.Join("..", "..", "examples")
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var out []exampleDatastore
	for _, e := range ents {
		var files []string
		switch {
		case e.IsDir():
			if !examples.IntentDir(e.Name()) {
				continue
			}
			files, _ = filepath.Glob(filepath.Join(root, e.Name(), "*.yaml"))
		case strings.HasSuffix(e.Name(), ".yaml"):
			files = []string{filepath.Join(root, e.Name())}
		}
		if len(files) == 0 {
			continue
		}
		f, err := intent.Load(files...)
		if err != nil {
			t.Fatalf("intent.Load(%v): %v", files, err)
		}
		for i := range f.Switches {
			sw := &f.Switches[i]
			p, err := r.Lookup(sw.Platform)
			if err != nil {
				t.Fatal(err)
			}
			d, err := p.Compile(f, sw)
			if err != nil {
				t.Fatalf("compile %s: %v", sw.Name, err)
			}
			s := yangcheck.PlatformSchema(t, sw.Platform)
			ds := exampleDatastore{name: strings.TrimSuffix(e.Name(), ".yaml") + "/" + sw.Name, platform: sw.Platform, tree: map[string]any{}}
			for _, u := range append(append([]*gnmipb.Update{}, d.Replaces...), d.Updates...) {
				switch u.GetPath().GetOrigin() {
				case yangcheck.OriginCLI:
					continue
				case yangcheck.OriginSONiCDB:
					ds.origin = yangcheck.OriginSONiCDB
				}
				yangcheck.ApplyUpdate(t, s, ds.tree, u)
			}
			out = append(out, ds)
		}
	}
	if len(out) == 0 {
		t.Fatal("no example datastores")
	}
	return out
}

// TestExampleDatastoresAgreeWithYanglint: for every switch of every example
// fabric, the datastore the compiled Set leaves on a device validates the
// same with ValidateDatastore and with libyang's yanglint (both accept, or
// both reject with yanglint's first error on one of our paths). The
// examples' verdicts are logged: issue 10's compiler defects show here as
// rejections (run with -v).
func TestExampleDatastoresAgreeWithYanglint(t *testing.T) {
	yangcheck.RequireYanglint(t)
	for _, ds := range exampleDatastores(t) {
		t.Run(ds.name, func(t *testing.T) {
			s := yangcheck.PlatformSchema(t, ds.platform)
			ours := s.ValidateDatastore(ds.origin, ds.tree, yangcheck.DatastoreOptions{})
			refOK, refMsg, ok, why := yangcheck.Referee(t, s, ds.platform, ds.origin, ds.tree, nil, ours)
			if !ok {
				t.Errorf("%s (%s): validator and yanglint disagree: %s", ds.name, ds.platform, why)
			}
			rules := map[string]int{}
			for _, v := range ours {
				rules[v.Rule]++
			}
			var rs []string
			for r, n := range rules {
				rs = append(rs, r+"="+strconv.Itoa(n))
			}
			sort.Strings(rs)
			t.Logf("%s (%s): %d violation(s) %v; yanglint ok=%v %s", ds.name, ds.platform, len(ours), rs, refOK, refMsg)
			for i, v := range ours {
				if i == 8 {
					t.Logf("  ...")
					break
				}
				t.Logf("  %s", v)
			}
		})
	}
	if errs := yangcheck.PlatformSchema(t, intent.PlatformSRLinux).XPathErrors(); len(errs) > 0 {
		t.Errorf("XPath the validator could not compile: %v", errs)
	}
}

// TestExamplesValidUnderEachRelease (issue 33): every example switch,
// compiled for each release profile of its platform (switches[].profile)
// and applied as `render --validate --device` does (a twin of the profile
// from its factory datastore, SR Linux given the operator's routed
// subinterfaces, SONiC's payload refined against the factory CONFIG_DB),
// is accepted by the twin, which validates with the profile's release
// YANG, and the datastore it leaves validates with libyang's yanglint over
// that release's module texts (derived ones as yangcheck derives them).
// Before, every release was judged by the newest release's modules, and
// the SR Linux 24.10 payloads carried 25.3's pfc-pause-frame-priority.
func TestExamplesValidUnderEachRelease(t *testing.T) {
	yangcheck.RequireYanglint(t)
	r := switchdrv.NewRegistry()
	for _, reg := range []func(*switchdrv.Registry) error{srl.Register, sonic.Register, eos.Register, oc.Register} {
		if err := reg(r); err != nil {
			t.Fatal(err)
		}
	}
	root := filepath.Join("..", "..", "examples")
	var intents [][]string // the files of each example fabric
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		switch {
		case e.IsDir() && examples.IntentDir(e.Name()):
			fs, _ := filepath.Glob(filepath.Join(root, e.Name(), "*.yaml"))
			intents = append(intents, fs)
		case strings.HasSuffix(e.Name(), ".yaml"):
			intents = append(intents, []string{filepath.Join(root, e.Name())})
		}
	}
	for _, prof := range profile.All() {
		s, err := yangcheck.ReleaseSchema(prof.YANG.Release)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, fs := range intents {
			f, err := intent.Load(fs...)
			if err != nil {
				t.Fatalf("%v: %v", fs, err)
			}
			file := strings.TrimSuffix(filepath.Base(filepath.Dir(fs[0])+"/"+filepath.Base(fs[0])), ".yaml")
			if len(fs) > 1 || filepath.Base(filepath.Dir(fs[0])) != "examples" {
				file = filepath.Base(filepath.Dir(fs[0]))
			}
			for i := range f.Switches {
				sw := &f.Switches[i]
				if string(sw.Platform) != prof.Platform {
					continue
				}
				n++
				t.Run(prof.Name+"/"+file+"/"+sw.Name, func(t *testing.T) {
					sw.Profile = prof.Name
					pl, err := r.Lookup(sw.Platform)
					if err != nil {
						t.Fatal(err)
					}
					d, err := pl.Compile(f, sw)
					if err != nil {
						t.Fatal(err)
					}
					tw, err := twin.New(twin.Options{Name: sw.Name, Profile: prof, Factory: true, Schema: s, Validator: twin.YANGValidator(s, prof)})
					if err != nil {
						t.Fatal(err)
					}
					if sw.Platform == intent.PlatformSRLinux {
						base := &gnmipb.SetRequest{}
						for _, port := range sw.Ports {
							base.Update = append(base.Update, &gnmipb.Update{
								Path: &gnmipb.Path{Elem: []*gnmipb.PathElem{{Name: "interface", Key: map[string]string{"name": port.Name}}}},
								Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: fmt.Appendf(nil,
									`{"name":%q,"admin-state":"enable","subinterface":[{"index":%d,"type":"srl_nokia-interfaces:routed","admin-state":"enable"}]}`,
									port.Name, port.Subinterface)}},
							})
						}
						if err := tw.Apply(base); err != nil {
							t.Fatalf("the operator's subinterfaces: %v", err)
						}
					}
					if rf, ok := pl.(switchdrv.Refiner); ok {
						if err := rf.Refine(d, tw.Value); err != nil {
							t.Fatal(err)
						}
					}
					if err := tw.Apply(d.SetRequest()); err != nil {
						t.Fatalf("the %s twin refuses the SetRequest: %v", prof.Name, err)
					}
					origin := prof.Factory.Origin
					v, _ := tw.Value(&gnmipb.Path{Origin: origin})
					tree, _ := v.(map[string]any)
					if origin == "sonic-db" {
						cdb, _ := tw.Value(&gnmipb.Path{Origin: origin, Elem: []*gnmipb.PathElem{{Name: "CONFIG_DB"}}})
						tree = map[string]any{"CONFIG_DB": cdb}
					}
					feats := twin.FeatureSet(s, prof)
					if ok, msg := yangcheck.RefereeRelease(t, s, prof.YANG.Release, origin, tree, feats); !ok {
						t.Errorf("yanglint over the %s modules refuses the datastore: %s", prof.YANG.Release, msg)
					}
					t.Run("own-modules", func(t *testing.T) {
						if ok, msg := yangcheck.RefereeOwn(t, prof.YANG.Release, origin, tree, feats); !ok {
							t.Errorf("yanglint over release %s's own modules refuses the datastore: %s", prof.YANG.Release, msg)
						}
					})
				})
			}
		}
		if n == 0 {
			t.Logf("profile %s: no example switch of platform %s (the twin tests of switchdrv compile its payloads)", prof.Name, prof.Platform)
		}
	}
}
