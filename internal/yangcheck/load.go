package yangcheck

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/openconfig/goyang/pkg/yang"

	"github.com/fabricctl/fabricctl/intent"
)

// EnvDir is the environment variable that overrides the embedded YANG
// modules with a directory laid out like models/ (one folder per vendor).
const EnvDir = "FABRICCTL_YANG_DIR"

// ErrNoYANG is wrapped by the errors about a YANG directory that is not there.
var ErrNoYANG = errors.New("no YANG directory")

// Dir returns the directory that overrides the embedded modules:
// $FABRICCTL_YANG_DIR, or "" when it is unset (the embedded modules are
// used). The error wraps ErrNoYANG when the variable names no directory.
func Dir() (string, error) {
	d := os.Getenv(EnvDir)
	if d == "" {
		return "", nil
	}
	if st, err := os.Stat(d); err != nil || !st.IsDir() {
		return "", fmt.Errorf("%s=%s is not a directory: %w", EnvDir, d, ErrNoYANG)
	}
	return d, nil
}

// PlatformDirs returns the vendor folders of the YANG tree that make up the
// schema of a switch platform: the modules of the first, imports from all.
func PlatformDirs(p intent.Platform) ([]string, error) {
	switch p {
	case intent.PlatformSRLinux:
		return []string{"srlinux"}, nil
	case intent.PlatformSONiC:
		return []string{"sonic"}, nil
	case intent.PlatformEOS:
		return []string{"arista", "openconfig"}, nil
	case intent.PlatformOpenConfig:
		return []string{"openconfig"}, nil
	}
	return nil, fmt.Errorf("no YANG set for platform %q", p)
}

// LoadPlatform loads the schema of platform p from the YANG tree at root, or
// from the default tree (Open("")) when root is "".
func LoadPlatform(root string, p intent.Platform) (*Schema, error) {
	t, err := Open(root)
	if err != nil {
		return nil, err
	}
	return t.LoadPlatform(p)
}

var (
	platMu    sync.Mutex
	platCache = map[intent.Platform]*platEntry{}
)

type platEntry struct {
	once sync.Once
	s    *Schema
	err  error
}

// Platform returns the schema of platform p from the default tree
// (Open("")), loading it once per process: the schema is immutable and safe
// for concurrent use, so twins, render and tests share it.
func Platform(p intent.Platform) (*Schema, error) {
	platMu.Lock()
	e := platCache[p]
	if e == nil {
		e = &platEntry{}
		platCache[p] = e
	}
	platMu.Unlock()
	e.once.Do(func() { e.s, e.err = LoadPlatform("", p) })
	return e.s, e.err
}

// Schema is a processed set of YANG modules. It is safe for concurrent use.
type Schema struct {
	ms *yang.Modules
	// release is the release the schema stands for ("" = a platform's
	// shipped modules); absent are the features ("module:feature") its
	// modules declare and the release does not have (a derived release).
	release string
	absent  map[string]bool
	// mods are the module entries by module name.
	mods map[string]*yang.Entry
	// top are the top-level data nodes by local name (several modules may
	// define the same name).
	top map[string][]*yang.Entry
	// tables are the SONiC CONFIG_DB tables: table name -> container.
	tables map[string]*yang.Entry

	mu       sync.Mutex
	refs     map[leafrefKey]*yang.Entry // leafref -> target leaf (nil = unresolvable)
	modOf    map[*yang.Entry]string     // entry -> instantiating module
	patterns map[*yang.YangType][]pattern
	xerrs    map[string]string                  // XPath that antchfx cannot compile
	prefixes map[*yang.Module]map[string]string // import prefixes per module
	conds    sync.Map                           // *yang.Entry -> *conds: when/if-feature/must
	ixSpecs  []ixSpec                           // indexed lookups (xpath.go)
	ixByKey  map[string]int
	exprPool sync.Map // xkey -> *sync.Pool of compiled *xpath.Expr
}

// Load reads every .yang file in dirs (directories on disk: the first
// directory's files are the modules; all directories are the import search
// path) and processes them.
func Load(dirs ...string) (*Schema, error) {
	if len(dirs) == 0 {
		return nil, errors.New("load yang: no directory")
	}
	ms := yang.NewModules()
	for _, d := range dirs {
		ms.AddPath(d)
	}
	var files []string
	for _, d := range dirs[:1] {
		ents, err := os.ReadDir(d)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("load yang %s: %w", d, errors.Join(ErrNoYANG, err))
			}
			return nil, fmt.Errorf("load yang: %w", err)
		}
		for _, e := range ents {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".yang") {
				files = append(files, filepath.Join(d, e.Name()))
			}
		}
	}
	sort.Strings(files)
	for _, f := range files {
		if err := ms.Read(f); err != nil {
			return nil, fmt.Errorf("load yang %s: %w", f, err)
		}
	}
	if errs := ms.Process(); len(errs) > 0 {
		return nil, fmt.Errorf("process yang in %s: %w", strings.Join(dirs, ", "), errors.Join(errs...))
	}
	return newSchema(ms), nil
}

// newSchema indexes processed modules.
func newSchema(ms *yang.Modules) *Schema {
	s := &Schema{
		ms:       ms,
		mods:     map[string]*yang.Entry{},
		top:      map[string][]*yang.Entry{},
		tables:   map[string]*yang.Entry{},
		refs:     map[leafrefKey]*yang.Entry{},
		modOf:    map[*yang.Entry]string{},
		patterns: map[*yang.YangType][]pattern{},
	}
	names := make([]string, 0, len(ms.Modules))
	for n := range ms.Modules {
		if !strings.Contains(n, "@") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		e := yang.ToEntry(ms.Modules[n])
		s.mods[n] = e
		for _, c := range sortedDir(e) {
			if c.RPC != nil || c.Kind == yang.NotificationEntry {
				continue
			}
			s.top[c.Name] = append(s.top[c.Name], c)
			// sonic-yang: module container sonic-x holds one container per
			// CONFIG_DB table.
			if strings.HasPrefix(n, "sonic-") && c.Name == n && c.IsContainer() {
				for _, t := range sortedDir(c) {
					if t.IsContainer() {
						s.tables[t.Name] = t
					}
				}
			}
		}
	}
	return s
}

// Modules returns the names of the loaded modules, sorted.
func (s *Schema) Modules() []string {
	out := make([]string, 0, len(s.mods))
	for n := range s.mods {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// dirCache holds sortedDir's answers: schema entries do not change once
// loaded, and the datastore checks ask for the same ones at every node.
var dirCache sync.Map // *yang.Entry -> []*yang.Entry

// sortedDir returns e's children sorted by name; the slice is shared, do
// not modify it.
func sortedDir(e *yang.Entry) []*yang.Entry {
	if d, ok := dirCache.Load(e); ok {
		return d.([]*yang.Entry)
	}
	out := make([]*yang.Entry, 0, len(e.Dir))
	for _, c := range e.Dir {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	dirCache.Store(e, out)
	return out
}

// module returns the name of the module that instantiates e (RFC 7951
// namespace of the node: augments keep the augmenting module).
func (s *Schema) module(e *yang.Entry) string {
	s.mu.Lock()
	m, ok := s.modOf[e]
	s.mu.Unlock()
	if ok {
		return m
	}
	m, err := e.InstantiatingModule()
	if err != nil {
		m = ""
	}
	s.mu.Lock()
	s.modOf[e] = m
	s.mu.Unlock()
	return m
}
