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

// EnvDir is the environment variable that overrides where the YANG tree is.
const EnvDir = "FABRICCTL_YANG_DIR"

// ErrNoYANG is wrapped by Dir when no YANG directory can be found.
var ErrNoYANG = errors.New("no YANG directory")

// Dir returns the root of the YANG tree: $FABRICCTL_YANG_DIR, else
// <repo root>/../shared/yang where the repo root is the nearest directory at
// or above the working directory holding a go.mod. The error wraps ErrNoYANG
// when neither exists.
func Dir() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return "", fmt.Errorf("%s=%s is not a directory: %w", EnvDir, d, ErrNoYANG)
		}
		return d, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find yang directory: %w", err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			y := filepath.Join(d, "..", "shared", "yang")
			if st, err := os.Stat(y); err == nil && st.IsDir() {
				return filepath.Clean(y), nil
			}
			return "", fmt.Errorf("%s: not found and %s unset: %w", filepath.Clean(y), EnvDir, ErrNoYANG)
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s and %s unset: %w", wd, EnvDir, ErrNoYANG)
		}
	}
}

// PlatformDirs returns the subdirectories of the YANG root that make up the
// schema of a switch platform.
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

// LoadPlatform loads the schema of platform p from the YANG root.
func LoadPlatform(root string, p intent.Platform) (*Schema, error) {
	sub, err := PlatformDirs(p)
	if err != nil {
		return nil, err
	}
	dirs := make([]string, len(sub))
	for i, s := range sub {
		dirs[i] = filepath.Join(root, s)
	}
	s, err := Load(dirs...)
	if err != nil {
		return nil, fmt.Errorf("platform %s: %w", p, err)
	}
	return s, nil
}

// Schema is a processed set of YANG modules. It is safe for concurrent use.
type Schema struct {
	ms *yang.Modules
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
}

// Load reads every .yang file in dirs (the first directory's files are the
// modules; all directories are the import search path) and processes them.
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
	return s, nil
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

func sortedDir(e *yang.Entry) []*yang.Entry {
	out := make([]*yang.Entry, 0, len(e.Dir))
	for _, c := range e.Dir {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
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
