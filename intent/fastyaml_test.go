package intent

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// yamlv3Doc is the referee: yaml.v3's tree of data's one document, or an
// error when it has none, several, or a syntax error.
func yamlv3Doc(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var n yaml.Node
	if err := dec.Decode(&n); err != nil {
		return nil, err
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("more than one document (%v)", err)
	}
	return &n, nil
}

// sameTree reports where a and b differ in what parseFastYAML promises:
// kind, style, tag, value, line, column, anchor and alias, children.
func sameTree(a, b *yaml.Node, path string) error {
	if a.Kind != b.Kind || a.Style != b.Style || a.Tag != b.Tag || a.Value != b.Value ||
		a.Line != b.Line || a.Column != b.Column || a.Anchor != b.Anchor || (a.Alias == nil) != (b.Alias == nil) {
		return fmt.Errorf("%s: fast {kind %d style %d tag %q value %q at %d:%d} yaml.v3 {kind %d style %d tag %q value %q at %d:%d}",
			path, a.Kind, a.Style, a.Tag, a.Value, a.Line, a.Column, b.Kind, b.Style, b.Tag, b.Value, b.Line, b.Column)
	}
	if len(a.Content) != len(b.Content) {
		return fmt.Errorf("%s (%d:%d): fast has %d children, yaml.v3 %d", path, b.Line, b.Column, len(a.Content), len(b.Content))
	}
	for i := range a.Content {
		if err := sameTree(a.Content[i], b.Content[i], fmt.Sprintf("%s/%d", path, i)); err != nil {
			return err
		}
	}
	return nil
}

// refereeFast checks parseFastYAML against yaml.v3 on data: where the fast
// parser answers, yaml.v3 must read the same one document into the same
// tree. It reports whether the fast parser answered.
func refereeFast(t testing.TB, name string, data []byte) bool {
	t.Helper()
	fast, ok := parseFastYAML(data)
	if !ok {
		return false
	}
	ref, err := yamlv3Doc(data)
	if err != nil {
		t.Fatalf("%s: the fast parser took what yaml.v3 refuses (%v):\n%s", name, err, data)
	}
	if err := sameTree(fast, ref, ""); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, data)
	}
	return true
}

// fastYAMLCases: each is read by the fast parser (take) or left to
// yaml.v3 (not take); either way the referee holds.
var fastYAMLCases = []struct {
	in   string
	take bool
}{
	{"a: b\n", true},
	{"\n\n  a: b\n", true},
	{"---\na: b\n", true},
	{"# c\n--- # x\n\na: [1, 2]\n", true},
	{"a:\n", true},
	{"a:\nb: 1\n", true},
	{"a:   # c\nb: 1\n", true},
	{"a: {x: 1,\n  y: 2}\n", true},
	{"a: {x: 1,\ny: 2}\n", false}, // yaml.v3 takes it; we are stricter
	{"- a:\n   [1,\n    2]\n", true},
	{"a: {x:1}\n", false},
	{"a: b\n  c\n", false},        // a plain scalar on two lines
	{"a: b # c\n  d: e\n", false}, // an error for yaml.v3
	{"k:\n- a\n- b: c\n  d: e\nk2: \"q\"\n", true},
	{"- - a\n  - b\n- c\n", true},
	{"-\n  a\n", true},
	{"- \n- a\n", false},
	{"a: 'it''s'\n", false},
	{"a: \"x\\ty\"\n", false},
	{"a: &x b\nc: *x\n", false},
	{"a: !!str 1\n", false},
	{"a: |\n  b\n", false},
	{"a:\tb\n", false},
	{"a: b\r\n", false},
	{"a: b\n---\nc: d\n", false},
	{"a: b\n...\n", false},
	{"%YAML 1.2\n---\na: b\n", false},
	{"? a\n: b\n", false},
	{"a: b: c\n", false},
	{"[a, b]\n", true},
	{"{\"apiVersion\": \"v1\", \"n\": [1, 2.5, true, null, \"x\"]\n}\n", true},
	{"a: ~\nb: null\nc: 0x1F\nd: 1_000\ne: 2001-12-14\nf: .inf\ng: -.5\nh: +1\ni: 0o17\nj: 0b11\nk: yes\nl: True\nm: <<\n", true},
	{"<<: {a: b}\n", true},
	{"a: 10.0.0.1:8080\nb: x:y\nc: a#b\nd: a # b\n", true},
	{"a: [x:y, 'q', \"r\", {s: t}, [u]]\n", true},
	{"a: [b c, d]\n", true},
	{"a: [b\n  c]\n", false},
	{"a: [b\n  , c]\n", true},
	{"a: b ]\n", true},
	{"a: ]\n", false},
	{"a: 'é' \nb: ü: x\n", false},
	{"é: 'ü'\nb: [ö, x]\n", true},
	{"a: b\n\u2028c: d\n", false},
	{"a:\n  - b\n  c: d\n", false},
	{"  a: 1\n  b: 2\n", true},
	{"a: 1\n b: 2\n", false},
	{"a: \"b\"#c\n", false},
	{"a: [b]#c\n", false},
	{"a: [b] # c\n", true},
	{"a: [b, ]\n", true},
	{"a: [,]\n", false},
	{"a: {}\nb: []\n", true},
	{"-1: x\n", true},
	{"- -1\n- -a\n- - -b\n", true},
	{"a:\n\n\n  b: 1\n\n", true},
	{"key : v\n", true},
	{"a: b  \nc: d\n", true},
	{"", false},
	{"# only\n", false},
	{"x\n", true},
	{"x\ny\n", false},
	{"a: {b: [1, {c: d}], e: f}\n", true},
	{"a: \n  # c\n  b: 1\n", true},
	{"a: b\n  # c\n", true},
	{"a: {b: c\n}\n", false},
	{"a: {b: c\n  }\n", true},
}

func TestFastYAMLMatchesYAMLv3(t *testing.T) {
	for _, c := range fastYAMLCases {
		if took := refereeFast(t, fmt.Sprintf("%q", c.in), []byte(c.in)); took != c.take {
			t.Errorf("%q: fast parser took it: %v, want %v", c.in, took, c.take)
		}
	}
}

// repoYAML is every YAML file in the repository (examples, testdata, the
// shipped manifests).
func repoYAML(t testing.TB) map[string][]byte {
	files := map[string][]byte{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files[path] = b
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestFastYAMLMatchesYAMLv3OnRepoFiles: every YAML file in the tree, and
// the benchmarks' generated fabrics, read the same by both parsers.
func TestFastYAMLMatchesYAMLv3OnRepoFiles(t *testing.T) {
	taken := 0
	files := repoYAML(t)
	for path, b := range files {
		if refereeFast(t, path, b) {
			taken++
		}
	}
	t.Logf("fast parser took %d of %d YAML files", taken, len(files))
}

// TestFastYAMLTakesTheExamples: the examples are intents as users write
// them; the fast parser must take every one (falling back is correct but
// slow, and would leave the fast path untested on real files).
func TestFastYAMLTakesTheExamples(t *testing.T) {
	n := 0
	for path, b := range repoYAML(t) {
		if !strings.HasPrefix(path, filepath.Join("..", "examples")+string(filepath.Separator)) {
			continue
		}
		if !bytes.Contains(b, []byte("kind: Fabric")) || bytes.Contains(b, []byte("\n---")) {
			continue // not an intent, or several documents
		}
		n++
		if !refereeFast(t, path, b) {
			t.Errorf("%s: the fast parser fell back to yaml.v3", path)
		}
	}
	if n < 10 {
		t.Fatalf("found only %d example intents", n)
	}
}

func FuzzFastYAMLMatchesYAMLv3(f *testing.F) {
	for _, c := range fastYAMLCases {
		f.Add([]byte(c.in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		refereeFast(t, "fuzz input", data)
	})
}

// yamlGen writes random documents in (and at the edges of) the subset:
// block mappings and sequences at varied indentation, indentless and
// compact sequences, flow collections across lines, plain scalars that
// resolve to every tag, quoted scalars, empty values, comments and blank
// lines.
type yamlGen struct {
	r     *rand.Rand
	b     strings.Builder
	max   int
	weird bool // also scalars that start with an indicator
}

var genScalars = []string{
	"a", "leaf1", "Ethernet0", "400G", "3m", "10.0.0.1:8080", "x:y", "a#b", "a b", "true", "False", "yes", "no", "on",
	"null", "~", "1", "-1", "+2", "0x1F", "0o17", "0b101", "1_000", "1.5", ".5", "-.inf", ".NaN", "1e3", "2001-12-14",
	"2001-12-14T21:59:43.10-05:00", "0777", "<<", "é", "h1-0", "mlx5_0", "/sys/x", "$v", "(a)", "a]b", "a}b", "a,b", "a?b",
}

// genWeird: scalars at the subset's edge, most of which make it fall back.
var genWeird = []string{"-", "--", "-a", "a:", "?", "!x", "&a", "*a", "@x", "`x", "%x", "|", ">", "#x", "it's", `a"b`}

func (g *yamlGen) scalar(flow bool) string {
	s := genScalars[g.r.Intn(len(genScalars))]
	if g.weird && g.r.Intn(4) == 0 {
		s = genWeird[g.r.Intn(len(genWeird))]
	}
	switch g.r.Intn(6) {
	case 0:
		return `"` + s + `"`
	case 1:
		return `'` + s + `'`
	}
	return s
}

func (g *yamlGen) sp() string {
	if g.r.Intn(8) == 0 {
		return "  "
	}
	return " "
}

func (g *yamlGen) comment() string {
	if g.r.Intn(6) == 0 {
		return " # c"
	}
	return ""
}

func (g *yamlGen) blankLines() {
	switch g.r.Intn(8) {
	case 0:
		g.b.WriteString("\n")
	case 1:
		g.b.WriteString("   # note\n")
	}
}

func (g *yamlGen) flow(depth, ind int) string {
	if depth > 2 || g.r.Intn(3) == 0 {
		return g.scalar(true)
	}
	var parts []string
	n := g.r.Intn(4)
	isMap := g.r.Intn(2) == 0
	for i := 0; i < n; i++ {
		item := g.flow(depth+1, ind)
		if isMap {
			item = g.scalar(true) + ":" + g.sp() + item
		}
		if g.r.Intn(5) == 0 {
			item = "\n" + strings.Repeat(" ", ind+1+g.r.Intn(3)-1) + item
		}
		parts = append(parts, item)
	}
	s := strings.Join(parts, ","+g.sp())
	if g.r.Intn(6) == 0 {
		s += ","
	}
	if isMap {
		return "{" + s + "}"
	}
	return "[" + s + "]"
}

// block writes a block node whose first line continues the current line
// (after "key:" or "- "), at indentation ind for what goes on new lines.
func (g *yamlGen) block(depth, ind int) {
	switch k := g.r.Intn(10); {
	case depth >= g.max || k < 3:
		g.b.WriteString(" " + g.scalar(false) + g.comment() + "\n")
	case k < 5:
		g.b.WriteString(" " + g.flow(0, ind) + g.comment() + "\n")
	case k < 6:
		g.b.WriteString(g.comment() + "\n") // an empty value
	case k < 8:
		step := 1 + g.r.Intn(3)
		g.b.WriteString(g.comment() + "\n")
		g.mapping(depth+1, ind+step)
	default:
		g.b.WriteString(g.comment() + "\n")
		step := g.r.Intn(3) // 0: indentless
		g.sequence(depth+1, ind+step)
	}
}

func (g *yamlGen) mapping(depth, ind int) {
	n := 1 + g.r.Intn(4)
	for i := 0; i < n; i++ {
		g.blankLines()
		g.b.WriteString(strings.Repeat(" ", ind) + g.scalar(false) + ":")
		g.block(depth, ind)
	}
}

func (g *yamlGen) sequence(depth, ind int) {
	n := 1 + g.r.Intn(3)
	for i := 0; i < n; i++ {
		g.blankLines()
		g.b.WriteString(strings.Repeat(" ", ind) + "-")
		if g.r.Intn(3) == 0 && depth < g.max {
			// a compact mapping: "- k: v" then its keys under the first
			g.b.WriteString(" " + g.scalar(false) + ":")
			g.block(depth+1, ind+2)
			if g.r.Intn(2) == 0 {
				g.b.WriteString(strings.Repeat(" ", ind+2) + g.scalar(false) + ":")
				g.block(depth+1, ind+2)
			}
			continue
		}
		g.block(depth, ind)
	}
}

// TestFastYAMLMatchesYAMLv3Generated: thousands of generated documents,
// each read the same by both parsers wherever the fast one answers, and the
// fast one answering for most of them.
func TestFastYAMLMatchesYAMLv3Generated(t *testing.T) {
	n, taken := 3000, 0
	if testing.Short() {
		n = 300
	}
	for i := 0; i < n; i++ {
		g := &yamlGen{r: rand.New(rand.NewSource(int64(i))), max: 4, weird: i%2 == 1}
		if i%5 == 0 {
			g.b.WriteString("---\n")
		}
		g.mapping(0, 0)
		if refereeFast(t, fmt.Sprintf("generated document %d", i), []byte(g.b.String())) {
			taken++
		}
	}
	t.Logf("fast parser took %d of %d generated documents", taken, n)
	if taken < n/4 {
		t.Errorf("fast parser took only %d of %d generated documents", taken, n)
	}
}
