package intent

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"strconv"

	"gopkg.in/yaml.v3"
)

// Source is one intent file's name and contents.
type Source struct {
	Name string
	Data []byte
}

// maxErrors is how many errors one parse reports before summarising the rest.
const maxErrors = 200

// MaxFileSize bounds one intent file (a 16,000-host fabric is ~3 MB).
const MaxFileSize = 64 << 20

// Parse reads one intent file. The error, if any, is an Errors.
func Parse(name string, data []byte) (*Fabric, error) {
	return ParseSources(Source{Name: name, Data: data})
}

// Load reads and merges intent files: one may hold the policy, others the
// inventory (GitOps repositories usually keep them apart). "-" reads the
// process's standard input. The error is an Errors for problems in the files,
// or a plain error when a file cannot be read.
func Load(paths ...string) (*Fabric, error) { return LoadFrom(os.Stdin, paths...) }

// LoadFrom is Load with "-" read from stdin (a command's injected input).
func LoadFrom(stdin io.Reader, paths ...string) (*Fabric, error) {
	if len(paths) == 0 {
		return nil, errors.New("no intent file given (use -f FILE)")
	}
	srcs := make([]Source, 0, len(paths))
	for _, p := range paths {
		var data []byte
		var err error
		if p == "-" {
			data, err = io.ReadAll(io.LimitReader(stdin, MaxFileSize+1))
			p = "<stdin>"
		} else {
			data, err = readLimited(p)
		}
		if err != nil {
			return nil, fmt.Errorf("read intent: %w", err)
		}
		srcs = append(srcs, Source{Name: p, Data: data})
	}
	return ParseSources(srcs...)
}

func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Read into a buffer of the file's size (as os.ReadFile does) rather
	// than one io.ReadAll grows by copying: a 3 MB inventory is read in
	// one allocation instead of about 20. The limit still holds whatever
	// the size said (a file that grows, or a pipe).
	var b bytes.Buffer
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() <= MaxFileSize {
		b.Grow(int(st.Size()) + bytes.MinRead)
	}
	_, err = b.ReadFrom(io.LimitReader(f, MaxFileSize+1))
	return b.Bytes(), err
}

// Bundle joins the sources into one multi-document YAML stream, which
// ParseSources reads back as the same fabric (how an intent travels to a
// remote host on stdin).
func (f *Fabric) Bundle() []byte {
	var b bytes.Buffer
	for _, s := range f.Sources {
		if b.Len() > 0 {
			b.WriteString("\n---\n")
		}
		b.Write(s.Data)
	}
	return b.Bytes()
}

// ParseSources parses and merges several files.
func ParseSources(srcs ...Source) (*Fabric, error) {
	errs := &errList{limit: maxErrors}
	var parts []part
	for _, s := range srcs {
		parts = append(parts, decodeSource(s, errs)...)
	}
	if len(errs.errs) > 0 {
		return nil, errs.result()
	}
	f := &Fabric{Sources: srcs}
	for _, s := range srcs {
		f.Files = append(f.Files, s.Name)
	}
	r := &resolver{errs: errs, f: f}
	r.resolve(parts)
	if err := errs.result(); err != nil {
		return nil, err
	}
	return f, nil
}

// rawFileCodec is the decoder's table of the raw types, built once.
var rawFileCodec = codecFor(reflect.TypeOf(rawFile{}))

var yamlLine = regexp.MustCompile(`line (\d+)`)

// decodeSource decodes every YAML document of one file.
func decodeSource(s Source, errs *errList) (parts []part) {
	start := Pos{File: s.Name, Line: 1, Col: 1}
	if len(s.Data) > MaxFileSize {
		errs.add(start, "", "file is larger than %d MiB", MaxFileSize>>20)
		return nil
	}
	if len(bytes.TrimSpace(s.Data)) == 0 {
		errs.add(start, "", "file is empty: an intent starts with `apiVersion: %s` and `kind: %s`", APIVersion, Kind)
		return nil
	}
	if i := bytes.IndexByte(s.Data, 0); i >= 0 {
		errs.add(posOfOffset(s, i), "", "file contains a NUL byte: not a YAML text file")
		return nil
	}
	// Memory is bounded by what is refused here, before yaml.v3 builds a
	// node per value (prescan.go).
	if !prescan(s, errs) {
		return nil
	}
	defer func() {
		// yaml.v3 has panicked on some malformed inputs in the past; turn that
		// into a positioned error rather than crashing the tool.
		if p := recover(); p != nil {
			errs.add(start, "", "YAML parser failed on this file: %v", p)
			parts = nil
		}
	}()
	decodeDoc := func(n *yaml.Node) {
		if len(n.Content) == 0 || (n.Content[0].Kind == yaml.ScalarNode && n.Content[0].Tag == "!!null") {
			return // empty document between ---
		}
		raw := &rawFile{}
		d := &decoder{file: s.Name, errs: errs, root: n}
		d.decode(n, reflect.ValueOf(raw).Elem(), rawFileCodec)
		parts = append(parts, part{file: s.Name, raw: raw})
	}
	// The common case, one document in the YAML subset intents are written
	// in, is read by parseFastYAML into the tree yaml.v3 would build;
	// anything else, errors included, by yaml.v3 itself (fastyaml.go).
	if n, ok := parseFastYAML(s.Data); ok {
		decodeDoc(n)
	} else {
		dec := yaml.NewDecoder(bytes.NewReader(s.Data))
		for {
			n := new(yaml.Node)
			err := dec.Decode(n)
			if err == io.EOF {
				break
			}
			if err != nil {
				se := locateSyntaxError(s.Data, err)
				errs.addText(Pos{File: s.Name, Line: se.line, Col: se.col}, "", "invalid YAML: "+se.msg)
				return nil
			}
			decodeDoc(n)
		}
	}
	if len(parts) == 0 && len(errs.errs) == 0 {
		errs.add(start, "", "file has no YAML document")
	}
	return parts
}

func yamlErrPos(file string, err error) Pos {
	m := yamlLine.FindStringSubmatch(err.Error())
	if m == nil {
		return Pos{File: file, Line: 1, Col: 1}
	}
	l, _ := strconv.Atoi(m[1])
	return Pos{File: file, Line: l, Col: 1}
}

var yamlPrefix = regexp.MustCompile(`^yaml: (line \d+: )?`)

func yamlErrMsg(err error) string { return yamlPrefix.ReplaceAllString(err.Error(), "") }

func posOfOffset(s Source, off int) Pos {
	line, col := 1, 1
	for _, c := range s.Data[:off] {
		if c == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return Pos{File: s.Name, Line: line, Col: col}
}
