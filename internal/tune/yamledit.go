package tune

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/fabricctl/fabricctl/intent"
)

// Change is one edit as written into an intent file: the line it changes
// (Line: the value replaced, or the line a new key or list entry goes
// after) and the text.
type Change struct {
	Path string     `json:"path"`
	Pos  intent.Pos `json:"pos"`
	Old  string     `json:"old,omitempty"` // the value replaced ("" = added)
	New  string     `json:"new"`
}

// splice replaces n bytes at off with text.
type splice struct {
	off, n int
	text   string
}

// fileEdit is one file's text and the splices made to it.
type fileEdit struct {
	name    string
	data    []byte
	lineOff []int // byte offset of each line's start (0-based lines)
	splices []splice
}

func newFileEdit(name string, data []byte) *fileEdit {
	fe := &fileEdit{name: name, data: data, lineOff: []int{0}}
	for i, b := range data {
		if b == '\n' {
			fe.lineOff = append(fe.lineOff, i+1)
		}
	}
	return fe
}

// off is the byte offset of 1-based line and column.
func (fe *fileEdit) off(line, col int) int {
	if line < 1 || line > len(fe.lineOff) {
		return len(fe.data)
	}
	return min(fe.lineOff[line-1]+col-1, len(fe.data))
}

// lineEnd is the offset of the end of 1-based line (its newline, or the
// end of the data).
func (fe *fileEdit) lineEnd(line int) int {
	if line < len(fe.lineOff) {
		return fe.lineOff[line] - 1
	}
	return len(fe.data)
}

// result applies the splices (they never overlap: each touches one value
// or inserts at one point).
func (fe *fileEdit) result() []byte {
	ss := slices.Clone(fe.splices)
	slices.SortStableFunc(ss, func(a, b splice) int { return a.off - b.off })
	var out bytes.Buffer
	at := 0
	for _, s := range ss {
		out.Write(fe.data[at:s.off])
		out.WriteString(s.text)
		at = s.off + s.n
	}
	out.Write(fe.data[at:])
	return out.Bytes()
}

// scalarLen is the length of the scalar whose text starts at off: a
// quoted scalar to its closing quote, a plain one up to a flow indicator,
// a comment or the end of the line.
func (fe *fileEdit) scalarLen(off int) int {
	d := fe.data
	if off >= len(d) {
		return 0
	}
	switch q := d[off]; q {
	case '"', '\'':
		for i := off + 1; i < len(d) && d[i] != '\n'; i++ {
			if d[i] == '\\' && q == '"' {
				i++
				continue
			}
			if d[i] == q {
				if q == '\'' && i+1 < len(d) && d[i+1] == '\'' {
					i++
					continue
				}
				return i + 1 - off
			}
		}
		return 0
	}
	end := off
	for end < len(d) && d[end] != '\n' && d[end] != ',' && d[end] != '}' && d[end] != ']' {
		if d[end] == '#' && end > off && (d[end-1] == ' ' || d[end-1] == '\t') {
			break
		}
		end++
	}
	for end > off && (d[end-1] == ' ' || d[end-1] == '\t' || d[end-1] == '\r') {
		end--
	}
	return end - off
}

// flowClose is the offset of the bracket that closes the flow collection
// opening at off ('{' or '['), -1 when it is not found.
func (fe *fileEdit) flowClose(off int) int {
	d := fe.data
	depth := 0
	for i := off; i < len(d); i++ {
		switch c := d[i]; c {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i
			}
		case '"', '\'':
			n := fe.scalarLen(i)
			if n == 0 {
				return -1
			}
			i += n - 1
		case '#':
			if i > 0 && (d[i-1] == ' ' || d[i-1] == '\t') {
				for i < len(d) && d[i] != '\n' {
					i++
				}
			}
		}
	}
	return -1
}

// lastLine is the last line any node under n is on.
func lastLine(n *yaml.Node) int {
	l := n.Line
	for _, c := range n.Content {
		l = max(l, lastLine(c))
	}
	return l
}

// mapValue returns the value node of key in mapping m (nil when absent).
func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// errAlias is an edit through a YAML alias or merge key: the text to change
// is shared with other places of the file.
var errAlias = errors.New("the value is written through a YAML alias or merge key: edit it by hand")

// setScalar replaces the scalar v's text with text.
func (fe *fileEdit) setScalar(v *yaml.Node, text string) (Change, error) {
	if v.Kind == yaml.AliasNode {
		return Change{}, errAlias
	}
	if v.Kind != yaml.ScalarNode {
		return Change{}, fmt.Errorf("%s:%d:%d: want a single value here", fe.name, v.Line, v.Column)
	}
	off := fe.off(v.Line, v.Column)
	n := fe.scalarLen(off)
	if n == 0 {
		return Change{}, fmt.Errorf("%s:%d:%d: cannot find the end of the value", fe.name, v.Line, v.Column)
	}
	old := string(fe.data[off : off+n])
	fe.splices = append(fe.splices, splice{off: off, n: n, text: text})
	return Change{Pos: intent.Pos{File: fe.name, Line: v.Line, Col: v.Column}, Old: old, New: text}, nil
}

// addKey adds key: value (value in flow style) to mapping m.
func (fe *fileEdit) addKey(m *yaml.Node, key, value string) (Change, error) {
	if m.Kind == yaml.AliasNode {
		return Change{}, errAlias
	}
	if m.Kind != yaml.MappingNode {
		return Change{}, fmt.Errorf("%s:%d:%d: want a mapping here", fe.name, m.Line, m.Column)
	}
	kv := key + ": " + value
	if m.Style&yaml.FlowStyle != 0 {
		open := fe.off(m.Line, m.Column)
		end := fe.flowClose(open)
		if end < 0 {
			return Change{}, fmt.Errorf("%s:%d:%d: cannot find the end of the mapping", fe.name, m.Line, m.Column)
		}
		text := kv
		if len(m.Content) > 0 {
			text = ", " + kv
		}
		// before the closing brace, after the last value's text
		at := end
		for at > open+1 && (fe.data[at-1] == ' ' || fe.data[at-1] == '\n' || fe.data[at-1] == '\t') {
			at--
		}
		fe.splices = append(fe.splices, splice{off: at, text: text})
		return Change{Pos: intent.Pos{File: fe.name, Line: m.Line, Col: m.Column}, New: kv}, nil
	}
	if len(m.Content) == 0 {
		return Change{}, fmt.Errorf("%s:%d:%d: an empty block mapping cannot take a key here", fe.name, m.Line, m.Column)
	}
	for i := 0; i < len(m.Content); i += 2 {
		if m.Content[i].Value == "<<" {
			return Change{}, errAlias
		}
	}
	indent := strings.Repeat(" ", m.Content[0].Column-1)
	last := lastLine(m)
	at := fe.lineEnd(last)
	fe.splices = append(fe.splices, splice{off: at, text: "\n" + indent + kv})
	return Change{Pos: intent.Pos{File: fe.name, Line: last + 1, Col: len(indent) + 1}, New: kv}, nil
}

// addItem appends item (in flow style) to sequence s.
func (fe *fileEdit) addItem(s *yaml.Node, item string) (Change, error) {
	if s.Kind == yaml.AliasNode {
		return Change{}, errAlias
	}
	if s.Kind != yaml.SequenceNode {
		return Change{}, fmt.Errorf("%s:%d:%d: want a list here", fe.name, s.Line, s.Column)
	}
	if s.Style&yaml.FlowStyle != 0 || len(s.Content) == 0 {
		open := fe.off(s.Line, s.Column)
		end := fe.flowClose(open)
		if end < 0 {
			return Change{}, fmt.Errorf("%s:%d:%d: cannot find the end of the list", fe.name, s.Line, s.Column)
		}
		text := item
		if len(s.Content) > 0 {
			text = ", " + item
		}
		at := end
		for at > open+1 && (fe.data[at-1] == ' ' || fe.data[at-1] == '\n' || fe.data[at-1] == '\t') {
			at--
		}
		fe.splices = append(fe.splices, splice{off: at, text: text})
		return Change{Pos: intent.Pos{File: fe.name, Line: s.Line, Col: s.Column}, New: item}, nil
	}
	// a block list: the dash of the first item sets the indentation
	first := s.Content[0]
	off := fe.off(first.Line, first.Column)
	dash := off - 1
	for dash > fe.lineOff[first.Line-1] && fe.data[dash] != '-' {
		dash--
	}
	if fe.data[dash] != '-' {
		return Change{}, fmt.Errorf("%s:%d: cannot find the list's dash", fe.name, first.Line)
	}
	indent := strings.Repeat(" ", dash-fe.lineOff[first.Line-1])
	last := lastLine(s)
	fe.splices = append(fe.splices, splice{off: fe.lineEnd(last), text: "\n" + indent + "- " + item})
	return Change{Pos: intent.Pos{File: fe.name, Line: last + 1, Col: len(indent) + 1}, New: "- " + item}, nil
}

// document is one YAML document of an intent file.
type document struct {
	fe   *fileEdit
	root *yaml.Node // the document's top mapping
}

// documents decodes every document of the sources.
func documents(srcs []intent.Source) ([]document, map[string]*fileEdit, error) {
	var docs []document
	files := map[string]*fileEdit{}
	for _, s := range srcs {
		fe := newFileEdit(s.Name, s.Data)
		files[s.Name] = fe
		dec := yaml.NewDecoder(bytes.NewReader(s.Data))
		for {
			var n yaml.Node
			err := dec.Decode(&n)
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", s.Name, err)
			}
			if n.Kind == yaml.DocumentNode && len(n.Content) == 1 && n.Content[0].Kind == yaml.MappingNode {
				docs = append(docs, document{fe: fe, root: n.Content[0]})
			}
		}
	}
	return docs, files, nil
}

// pending is the edits under one key of the intent, as a tree: a leaf
// holds the value, a branch its keys in the order the edits name them.
type pending struct {
	key, index string // "classes", "roce" for classes[roce]
	value      string // a leaf's
	leaf       bool
	path       string
	kids       []*pending
}

func (p *pending) child(key, index, path string) *pending {
	for _, k := range p.kids {
		if k.key == key && k.index == index {
			return k
		}
	}
	k := &pending{key: key, index: index, path: path}
	p.kids = append(p.kids, k)
	return k
}

// flow renders p's keys as a flow mapping's inside: k: v, k2: {...}.
func (p *pending) flowInner() string {
	var parts []string
	for _, k := range p.kids {
		parts = append(parts, k.key+": "+k.flow())
	}
	return strings.Join(parts, ", ")
}

func (p *pending) flow() string {
	if p.leaf {
		return p.value
	}
	if p.index != "" { // an entry of a list of named elements
		return "[{name: " + p.index + ", " + p.flowInner() + "}]"
	}
	return "{" + p.flowInner() + "}"
}

// Write makes the edits (check.Edit paths: policy.KEY...,
// policy.classes[NAME].KEY...) in the text of the intent's sources: a value
// written in a file is replaced where it is written; a key, a class or a
// block the files do not write (a preset's or a default) is added, in flow
// style, to the mapping or list that holds it. Comments, order and the
// rest of the text stay as they are. It returns every file's new text (in
// the order of srcs, unchanged files too) and the changes with their
// positions in the files as they were.
func Write(srcs []intent.Source, edits []Edit) ([]intent.Source, []Change, error) {
	docs, files, err := documents(srcs)
	if err != nil {
		return nil, nil, err
	}
	root := &pending{}
	for _, e := range edits {
		segs := strings.Split(e.Path, ".")
		if len(segs) < 2 || segs[0] != "policy" {
			return nil, nil, fmt.Errorf("edit %s: tune writes only policy fields", e.Path)
		}
		cur := root
		for i, s := range segs {
			name, idx, _ := strings.Cut(s, "[")
			idx = strings.TrimSuffix(idx, "]")
			cur = cur.child(name, idx, strings.Join(segs[:i+1], "."))
		}
		cur.leaf, cur.value = true, e.Value
	}
	if len(root.kids) == 0 {
		return srcs, nil, nil
	}
	pol := root.kids[0] // every edit is under policy
	var changes []Change
	var target *yaml.Node
	var fe *fileEdit
	for _, d := range docs {
		if v := mapValue(d.root, "policy"); v != nil {
			target, fe = v, d.fe
			break
		}
	}
	if target == nil {
		if len(docs) == 0 {
			return nil, nil, errors.New("no YAML mapping in the intent files to add a policy to")
		}
		fe = docs[0].fe
		c, err := fe.addKey(docs[0].root, "policy", pol.flow())
		if err != nil {
			return nil, nil, fmt.Errorf("policy: %w", err)
		}
		c.Path = "policy"
		changes = append(changes, c)
	} else if err := fe.writeInto(target, pol, &changes); err != nil {
		return nil, nil, err
	}
	out := make([]intent.Source, len(srcs))
	for i, s := range srcs {
		out[i] = intent.Source{Name: s.Name, Data: files[s.Name].result()}
	}
	return out, changes, nil
}

// writeInto makes the edits of p's keys in mapping m: first inside the
// keys m has, then the keys it lacks, added at its end. A key added to m
// and one added inside m's last value go in at the same offset (the end
// of m's last line), and the splices of one offset are made in the order
// they were recorded: the inner one must come first.
func (fe *fileEdit) writeInto(m *yaml.Node, p *pending, changes *[]Change) error {
	kids := slices.Clone(p.kids)
	slices.SortStableFunc(kids, func(a, b *pending) int {
		an, bn := mapValue(m, a.key) == nil, mapValue(m, b.key) == nil
		switch {
		case an == bn:
			return 0
		case bn:
			return -1
		}
		return 1
	})
	for _, k := range kids {
		v := mapValue(m, k.key)
		var c Change
		var err error
		switch {
		case v == nil:
			c, err = fe.addKey(m, k.key, k.flow())
		case k.leaf:
			c, err = fe.setScalar(v, k.value)
		case k.index != "":
			err = fe.writeEntry(v, k, changes)
		default:
			if v.Kind != yaml.MappingNode {
				err = fmt.Errorf("%s:%d:%d: want a mapping here", fe.name, v.Line, v.Column)
			} else {
				err = fe.writeInto(v, k, changes)
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %w", k.path, err)
		}
		if c.New != "" {
			c.Path = k.path
			*changes = append(*changes, c)
		}
	}
	return nil
}

// writeEntry makes k's edits in the entry named k.index of list s (added
// when the list has none of that name).
func (fe *fileEdit) writeEntry(s *yaml.Node, k *pending, changes *[]Change) error {
	if s.Kind != yaml.SequenceNode {
		return fmt.Errorf("%s:%d:%d: want a list here", fe.name, s.Line, s.Column)
	}
	for _, it := range s.Content {
		if n := mapValue(it, "name"); n != nil && n.Value == k.index {
			return fe.writeInto(it, k, changes)
		}
	}
	c, err := fe.addItem(s, "{name: "+k.index+", "+k.flowInner()+"}")
	if err != nil {
		return err
	}
	c.Path = k.path
	*changes = append(*changes, c)
	return nil
}
