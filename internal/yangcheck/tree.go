package yangcheck

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/fabricctl/fabricctl/intent"
)

//go:generate go run ./internal/mkmodels models models.tar.gz

// modelsArchive is models/ as a deterministic tar.gz (see internal/mkmodels).
//
//go:embed models.tar.gz
var modelsArchive []byte

// Tree is a set of YANG modules, one folder per vendor (openconfig, srlinux,
// sonic, arista), each with its SOURCE.txt: the modules embedded in the
// binary, or a directory that overrides them.
type Tree struct {
	name  string            // "embedded" or the directory
	files map[string][]byte // "vendor/file" -> contents
}

// String says where the modules come from: "embedded" or the directory.
func (t *Tree) String() string { return t.name }

var (
	embOnce sync.Once
	embTree *Tree
	embErr  error
)

// Embedded returns the modules shipped in the binary.
func Embedded() (*Tree, error) {
	embOnce.Do(func() {
		embTree, embErr = readArchive(modelsArchive)
	})
	return embTree, embErr
}

func readArchive(b []byte) (*Tree, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("embedded YANG: %w", err)
	}
	t := &Tree{name: "embedded", files: map[string][]byte{}}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("embedded YANG: %w", err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("embedded YANG %s: %w", h.Name, err)
		}
		t.files[path.Clean(h.Name)] = data
	}
	return t, nil
}

// OpenDir reads a YANG tree from a directory on disk (every regular file one
// folder deep: <dir>/<vendor>/<file>).
func OpenDir(dir string) (*Tree, error) {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return nil, fmt.Errorf("YANG directory %s: not a directory: %w", dir, ErrNoYANG)
	}
	t := &Tree{name: dir, files: map[string][]byte{}}
	vendors, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("YANG directory %s: %w", dir, err)
	}
	for _, v := range vendors {
		if !v.IsDir() {
			continue
		}
		ents, err := os.ReadDir(filepath.Join(dir, v.Name()))
		if err != nil {
			return nil, fmt.Errorf("YANG directory %s: %w", dir, err)
		}
		for _, e := range ents {
			if !e.Type().IsRegular() {
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, v.Name(), e.Name()))
			if err != nil {
				return nil, fmt.Errorf("YANG directory %s: %w", dir, err)
			}
			t.files[v.Name()+"/"+e.Name()] = b
		}
	}
	return t, nil
}

// Open returns the YANG tree to use: dir when it is not "", else
// $FABRICCTL_YANG_DIR when set, else the embedded modules.
func Open(dir string) (*Tree, error) {
	if dir == "" {
		d, err := Dir()
		if err != nil {
			return nil, err
		}
		dir = d
	}
	if dir == "" {
		return Embedded()
	}
	return OpenDir(dir)
}

// Files returns the paths of the tree's files ("vendor/file"), sorted.
func (t *Tree) Files() []string {
	out := make([]string, 0, len(t.files))
	for f := range t.files {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// File returns the contents of one file of the tree ("vendor/file").
func (t *Tree) File(name string) ([]byte, bool) {
	b, ok := t.files[name]
	return b, ok
}

// yangFiles returns the .yang files of one vendor folder, sorted.
func (t *Tree) yangFiles(vendor string) []string {
	var out []string
	for f := range t.files {
		if path.Dir(f) == vendor && strings.HasSuffix(f, ".yang") {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

// LoadPlatform parses and processes the modules of platform p (its vendor
// folders, PlatformDirs) into a Schema.
func (t *Tree) LoadPlatform(p intent.Platform) (*Schema, error) {
	dirs, err := PlatformDirs(p)
	if err != nil {
		return nil, err
	}
	ms, err := t.parse(dirs)
	if err != nil {
		return nil, fmt.Errorf("platform %s: %w", p, err)
	}
	s := newSchema(ms)
	// The shipped modules are the platform's newest release's.
	for _, r := range releases {
		if r.Platform == p && !r.Derived() {
			s.release = r.Name
		}
	}
	return s, nil
}

// ModuleVersion is the version of one shipped YANG module and where it is
// from.
type ModuleVersion struct {
	Vendor   string // folder: openconfig, srlinux, sonic, arista
	Name     string // module (or submodule) name
	Revision string // latest revision date, "" when the module has none
	// OCVersion is the oc-ext:openconfig-version, "" when there is none.
	OCVersion string
	Repo      string // source repository (URL)
	Commit    string // commit of the source repository
}

var (
	reRevision  = regexp.MustCompile(`(?m)^\s*revision\s+"?(\d{4}-\d{2}-\d{2})"?\s*[{;]`)
	reOCVersion = regexp.MustCompile(`(?m)^\s*oc-ext:openconfig-version\s+"([^"]+)"\s*;`)
	reModName   = regexp.MustCompile(`(?m)^\s*(?:sub)?module\s+([A-Za-z0-9_.-]+)\s*\{`)
	reHex40     = regexp.MustCompile(`\b[0-9a-f]{40}\b`)
)

// Versions returns the version of every module of the default tree
// (Open("")), sorted by vendor and name.
func Versions() ([]ModuleVersion, error) {
	t, err := Open("")
	if err != nil {
		return nil, err
	}
	return t.Versions(), nil
}

// Versions returns the version of every module of the tree, sorted by vendor
// and name. The source repository and commit come from the vendor folder's
// SOURCE.txt ("repo:" and "commit:" lines; a file listed as
// "<owner>/<repo> <path>" is from that repository, at the commit named on
// the "third-party:" line).
func (t *Tree) Versions() []ModuleVersion {
	var out []ModuleVersion
	vendors := map[string]bool{}
	for f := range t.files {
		vendors[path.Dir(f)] = true
	}
	for v := range vendors {
		repo, commit, other := parseSource(string(t.files[v+"/SOURCE.txt"]))
		for _, f := range t.yangFiles(v) {
			src := string(t.files[f])
			mv := ModuleVersion{Vendor: v, Name: strings.TrimSuffix(path.Base(f), ".yang"), Repo: repo, Commit: commit}
			if m := reModName.FindStringSubmatch(src); m != nil {
				mv.Name = m[1]
			}
			for _, m := range reRevision.FindAllStringSubmatch(src, -1) {
				if m[1] > mv.Revision {
					mv.Revision = m[1]
				}
			}
			if m := reOCVersion.FindStringSubmatch(src); m != nil {
				mv.OCVersion = m[1]
			}
			if o, ok := other[path.Base(f)]; ok {
				mv.Repo, mv.Commit = o[0], o[1]
			}
			out = append(out, mv)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Vendor != out[j].Vendor {
			return out[i].Vendor < out[j].Vendor
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// parseSource reads a SOURCE.txt: the repository, its commit, and the files
// that come from another repository (base name -> repo URL, commit).
func parseSource(s string) (repo, commit string, other map[string][2]string) {
	other = map[string][2]string{}
	thirdCommit := ""
	inFiles := false
	for _, line := range strings.Split(s, "\n") {
		switch {
		case strings.HasPrefix(line, "repo:"):
			repo = strings.TrimSpace(strings.TrimPrefix(line, "repo:"))
		case strings.HasPrefix(line, "commit:"):
			if m := reHex40.FindString(line); m != "" {
				commit = m
			}
		case strings.HasPrefix(line, "third-party:"):
			thirdCommit = reHex40.FindString(line)
		case strings.HasPrefix(line, "files"):
			inFiles = true
		case inFiles && strings.HasPrefix(line, "  "):
			fs := strings.Fields(line)
			// "<owner>/<repo> <path> <hash>": from another repository.
			if len(fs) == 3 && strings.Count(fs[0], "/") == 1 && !strings.HasSuffix(fs[0], ".yang") {
				other[path.Base(fs[1])] = [2]string{"https://github.com/" + fs[0], thirdCommit}
			}
		}
	}
	return repo, commit, other
}
