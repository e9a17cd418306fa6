package yangcheck

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/openconfig/goyang/pkg/yang"

	"github.com/fabricctl/fabricctl/intent"
)

// Release is the YANG module set of one platform release, the one a
// release profile (internal/profile, yang.release) validates against.
//
// A release is exact when the tree holds its own modules (folder Dir: the
// shipped folder of the newest release, or a folder the tree adds for an
// older one, e.g. FABRICCTL_YANG_DIR/srlinux-24.10.3). Otherwise an older
// release is derived from the modules of Base by the differences Edits and
// AbsentFeatures list, each cited to the release's own text. The
// differences are complete for the data nodes Covers names (every config
// node below them: the subtrees fabricctl writes); elsewhere a derived
// schema is Base's. TestReleaseMatchesItsModules holds a derived schema to
// the release's own modules, when they are at hand, with goyang and
// yanglint.
type Release struct {
	// Name is what a profile names (yang.release), e.g. "srlinux-24.10.3".
	Name     string
	Platform intent.Platform
	// Source is the release's module set: repository, tag or branch, commit.
	Source string
	// Dir is the tree folder (PlatformDirs' first, for the release's own
	// modules) that holds the release's own modules.
	Dir string
	// Base is the release whose modules a derived release is made from
	// ("" = the release's own modules are shipped, in Dir).
	Base string
	// AbsentFeatures ("module:feature") are features Base's modules declare
	// and the release's do not: every node they gate is unknown on it.
	AbsentFeatures []string
	// AbsentModules are Base's modules the release does not have (module
	// names).
	AbsentModules []string
	// Edits turn Base's module text into the release's.
	Edits []Edit
	// Covers are the data node paths ("qos", "sonic-port/PORT") below
	// which the derived schema equals the release's own in every config
	// node.
	Covers []string
	// Verified says when and against what the derivation was compared.
	Verified string
}

// Derived reports whether the schema is made from another release's modules.
func (r *Release) Derived() bool { return r.Base != "" }

// Releases returns every release fabricctl knows, sorted by name.
func Releases() []*Release {
	out := slices.Clone(releases)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// LookupRelease returns the named release; the error lists the known ones.
func LookupRelease(name string) (*Release, error) {
	for _, r := range releases {
		if r.Name == name {
			return r, nil
		}
	}
	var names []string
	for _, r := range Releases() {
		names = append(names, r.Name)
	}
	return nil, fmt.Errorf("no YANG for release %q: fabricctl validates against the module sets it ships or derives from them (%s), never against another release's", name, strings.Join(names, ", "))
}

// hasDir reports whether the tree has .yang files in folder dir.
func (t *Tree) hasDir(dir string) bool {
	return len(t.yangFiles(dir)) > 0
}

// ReleaseFiles returns the module texts of release name by folder/file, as
// LoadRelease reads them: the release's own modules when the tree has its
// folder, else Base's with the edits applied (and the other folders of the
// platform, PlatformDirs, as they are); exact reports which.
func (t *Tree) ReleaseFiles(name string) (files map[string]string, dirs []string, exact bool, err error) {
	r, err := LookupRelease(name)
	if err != nil {
		return nil, nil, false, err
	}
	dirs, err = PlatformDirs(r.Platform)
	if err != nil {
		return nil, nil, false, err
	}
	files = map[string]string{}
	own := r.Dir
	exact = t.hasDir(own)
	var edits map[string][]Edit
	if !exact {
		b, err := LookupRelease(r.Base)
		if err != nil {
			return nil, nil, false, fmt.Errorf("release %s: %w", name, err)
		}
		if b.Derived() {
			return nil, nil, false, fmt.Errorf("release %s: base %s is derived itself", name, b.Name)
		}
		own = b.Dir
		if !t.hasDir(own) {
			return nil, nil, false, fmt.Errorf("release %s: no modules of its base %s in %s of %s: %w", name, b.Name, own, t.name, ErrNoYANG)
		}
		edits = map[string][]Edit{}
		for _, e := range r.Edits {
			edits[e.Module] = append(edits[e.Module], e)
		}
	}
	dirs = append([]string{own}, dirs[1:]...)
	done := map[string]bool{}
	for _, d := range dirs {
		for _, f := range t.yangFiles(d) {
			text := string(t.files[f])
			mod := strings.TrimSuffix(path.Base(f), ".yang")
			if m := reModName.FindStringSubmatch(text); m != nil {
				mod = m[1]
			}
			if d == own && !exact && slices.Contains(r.AbsentModules, mod) {
				continue
			}
			if es := edits[mod]; d == own && len(es) > 0 {
				if text, err = applyEdits(text, es); err != nil {
					return nil, nil, false, fmt.Errorf("release %s: derive %s from %s: %w", name, mod, r.Base, err)
				}
				done[mod] = true
			}
			files[f] = text
		}
	}
	for mod := range edits {
		if !done[mod] {
			return nil, nil, false, fmt.Errorf("release %s: edits of module %s, which %s of %s does not have", name, mod, own, t.name)
		}
	}
	return files, dirs, exact, nil
}

// LoadRelease parses and processes the modules of release name (see
// ReleaseFiles) into a Schema whose validation knows the release's absent
// features.
func (t *Tree) LoadRelease(name string) (*Schema, error) {
	files, dirs, exact, err := t.ReleaseFiles(name)
	if err != nil {
		return nil, err
	}
	rt := &Tree{name: t.name, files: map[string][]byte{}}
	for f, text := range files {
		rt.files[f] = []byte(text)
	}
	ms, err := rt.parse(dirs)
	if err != nil {
		return nil, fmt.Errorf("release %s: %w", name, err)
	}
	s := newSchema(ms)
	s.release = name
	if !exact {
		r, _ := LookupRelease(name)
		s.absent = map[string]bool{}
		for _, f := range r.AbsentFeatures {
			s.absent[f] = true
		}
	}
	return s, nil
}

var (
	relMu    sync.Mutex
	relCache = map[string]*platEntry{}
)

// ReleaseSchema returns the schema of release name from the default tree
// (Open("")), loading it once per process (see Platform).
func ReleaseSchema(name string) (*Schema, error) {
	relMu.Lock()
	e := relCache[name]
	if e == nil {
		e = &platEntry{}
		relCache[name] = e
	}
	relMu.Unlock()
	e.once.Do(func() {
		t, err := Open("")
		if err != nil {
			e.err = err
			return
		}
		e.s, e.err = t.LoadRelease(name)
	})
	return e.s, e.err
}

// Release is the name of the release the schema stands for (LoadPlatform:
// the platform's shipped release; "" for modules loaded with Load).
func (s *Schema) Release() string { return s.release }

// FeatureAbsent reports whether the release the schema stands for lacks
// feature "module:feature" that its modules declare (a derived release).
func (s *Schema) FeatureAbsent(feature string) bool { return s.absent[feature] }

// parse reads the .yang files of dirs (the first folder that has a module
// wins, as in an import search path) and processes them.
func (t *Tree) parse(dirs []string) (*yang.Modules, error) {
	ms := yang.NewModules()
	seen := map[string]bool{}
	for _, d := range dirs {
		for _, f := range t.yangFiles(d) {
			if seen[path.Base(f)] {
				continue
			}
			seen[path.Base(f)] = true
			if err := ms.Parse(string(t.files[f]), f); err != nil {
				return nil, fmt.Errorf("load yang %s (%s): %w", f, t.name, err)
			}
		}
	}
	if len(seen) == 0 {
		return nil, fmt.Errorf("no .yang files in %s of %s: %w", strings.Join(dirs, ", "), t.name, ErrNoYANG)
	}
	if errs := ms.Process(); len(errs) > 0 {
		return nil, fmt.Errorf("process yang in %s of %s: %w", strings.Join(dirs, ", "), t.name, errors.Join(errs...))
	}
	return ms, nil
}
