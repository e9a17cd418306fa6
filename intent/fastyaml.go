package intent

import (
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// fastyaml.go reads the YAML that intents are written in — block mappings
// and sequences indented with spaces, flow mappings and sequences, plain and
// quoted one-line scalars, comments, one document — into the same yaml.Node
// tree yaml.v3 builds (Kind, Style, Tag, Value, Line, Column, Content; not
// comments, which nothing after the parse reads), in one pass over the
// bytes, with nodes and child lists cut from slabs and values sliced from
// one copy of the file.
//
// It answers only when it is sure: at anything outside that subset (tabs,
// CR, anchors, aliases, tags, block scalars, escapes, multi-line scalars,
// explicit keys, several documents, a syntax error) it gives up and the
// caller parses the file with yaml.v3, so errors and their positions are
// yaml.v3's own. yaml.v3 is also its referee: FuzzFastYAMLMatchesYAMLv3
// and TestFastYAMLMatchesYAMLv3 hold the two trees equal on every input
// this parser takes, and TestFastYAMLTakesTheExamples that the examples
// do not fall back.
//
// Why: yaml.v3's scanner (a port of libyaml's C state machine, token queue
// and simple-key bookkeeping) and one heap node per value were the larger
// part of check's cost on a 2,000-switch intent (issue 30).
//
// The scanning rules followed are libyaml's as yaml.v3 v3.0.1 has them
// (scannerc.go yaml_parser_scan_plain_scalar, yaml_parser_fetch_next_token;
// decode.go parser.node and parser.scalar for tags and styles); where this
// parser is unsure what they say it gives up rather than guess.

// parseFastYAML returns the document node of data, or false when data is
// not in the subset (the caller then parses it with yaml.v3).
func parseFastYAML(data []byte) (doc *yaml.Node, ok bool) {
	p := fastParser{src: string(data), line: 1}
	defer func() {
		if r := recover(); r != nil {
			if _, giveUp := r.(fastGiveUp); !giveUp {
				panic(r)
			}
			doc, ok = nil, false
		}
	}()
	p.checkChars()
	n := len(p.src)/24 + 16
	if n > 1<<15 {
		n = 1 << 15
	}
	p.slabSize = n
	return p.document(), true
}

// fastGiveUp is the panic that unwinds the parser when the input leaves
// the subset; parseFastYAML turns it into ok == false.
type fastGiveUp struct{}

func giveUp() { panic(fastGiveUp{}) }

// fastMaxDepth bounds nesting (yaml.v3 refuses deeper documents too; the
// prescan bounds it well below this).
const fastMaxDepth = 1000

type fastParser struct {
	src       string
	pos       int
	line      int  // 1-based line of pos
	lineStart int  // offset of the first byte of pos's line
	ascii     bool // every byte is ASCII: a column is a byte offset
	eof       bool // no content follows pos
	atStart   bool // before the document: a "---" is its start
	depth     int

	slabSize int
	nodes    []yaml.Node
	ptrs     []*yaml.Node
	stack    []*yaml.Node // the children of the collections being read
	tags     map[string]string
}

// checkChars gives up on any character whose meaning in YAML this parser
// does not model: controls (tab and CR included), DEL, a byte-order mark,
// the Unicode line breaks NEL, LS and PS, invalid UTF-8, and what libyaml
// does not count as printable.
func (p *fastParser) checkChars() {
	p.ascii = true
	s := p.src
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			p.ascii = false
			continue
		}
		if (c < 0x20 && c != '\n') || c == 0x7f {
			giveUp()
		}
	}
	if p.ascii {
		return
	}
	if !utf8.ValidString(s) {
		giveUp()
	}
	for _, r := range s {
		if r < 0x80 {
			continue
		}
		switch {
		case r == 0x2028 || r == 0x2029 || r == 0xfeff:
			giveUp()
		case r >= 0xa0 && r <= 0xd7ff, r >= 0xe000 && r <= 0xfffd, r >= 0x10000 && r <= 0x10ffff:
		default:
			giveUp()
		}
	}
}

// newNode is a node at offset at of the current line.
func (p *fastParser) newNode(kind yaml.Kind, tag string, at int) *yaml.Node {
	return p.nodeAt(kind, tag, p.line, p.col(at))
}

func (p *fastParser) nodeAt(kind yaml.Kind, tag string, line, col int) *yaml.Node {
	if len(p.nodes) == cap(p.nodes) {
		p.nodes = make([]yaml.Node, 0, p.slabSize)
	}
	p.nodes = p.nodes[:len(p.nodes)+1]
	n := &p.nodes[len(p.nodes)-1]
	n.Kind, n.Tag, n.Line, n.Column = kind, tag, line, col
	return n
}

// col is the 1-based column of offset at on the current line, counted in
// characters as yaml.v3 counts them.
func (p *fastParser) col(at int) int {
	if p.ascii {
		return at - p.lineStart + 1
	}
	return utf8.RuneCountInString(p.src[p.lineStart:at]) + 1
}

// push and pop collect a collection's children: pop copies those pushed
// since base into a slice cut from a slab, capped so that an append to one
// node's Content never writes into another's.
func (p *fastParser) push(n *yaml.Node) { p.stack = append(p.stack, n) }

func (p *fastParser) pop(base int) []*yaml.Node {
	k := len(p.stack) - base
	if k == 0 {
		return nil
	}
	if cap(p.ptrs)-len(p.ptrs) < k {
		size := p.slabSize
		if k > size {
			size = k
		}
		p.ptrs = make([]*yaml.Node, 0, size)
	}
	i := len(p.ptrs)
	p.ptrs = append(p.ptrs, p.stack[base:]...)
	p.stack = p.stack[:base]
	return p.ptrs[i : i+k : i+k]
}

func (p *fastParser) at(i int) byte {
	if i < len(p.src) {
		return p.src[i]
	}
	return 0
}

// blankz: a space, a line break or the end (tabs and CR never get here).
func (p *fastParser) blankz(i int) bool {
	return i >= len(p.src) || p.src[i] == ' ' || p.src[i] == '\n'
}

func (p *fastParser) skipSpaces() {
	for p.pos < len(p.src) && p.src[p.pos] == ' ' {
		p.pos++
	}
}

// seqEntry: pos is at a block sequence entry indicator "- ".
func (p *fastParser) seqEntry() bool { return p.at(p.pos) == '-' && p.blankz(p.pos+1) }

// nextContent moves pos from a line end (a line break, a comment or the end)
// to the first character of the next line with content, skipping blank and
// comment-only lines; eof is set when there is none. A document marker at
// the start of a line means more than one document: give up.
func (p *fastParser) nextContent() {
	for {
		for p.pos < len(p.src) && p.src[p.pos] != '\n' {
			p.pos++ // the rest of a comment
		}
		if p.pos >= len(p.src) {
			p.eof = true
			return
		}
		p.pos++
		p.line++
		p.lineStart = p.pos
		p.skipSpaces()
		if p.pos >= len(p.src) {
			p.eof = true
			return
		}
		switch c := p.src[p.pos]; c {
		case '\n', '#':
			continue
		case '-', '.':
			if !p.atStart && p.pos == p.lineStart && p.at(p.pos+1) == c && p.at(p.pos+2) == c && p.blankz(p.pos+3) {
				giveUp()
			}
		case '%':
			if p.pos == p.lineStart {
				giveUp()
			}
		}
		return
	}
}

// endLine: after a value, only spaces and a comment may follow on its line;
// then on to the next content.
func (p *fastParser) endLine() {
	p.skipSpaces()
	if p.pos < len(p.src) {
		switch p.src[p.pos] {
		case '\n':
		case '#':
			if p.src[p.pos-1] != ' ' {
				giveUp()
			}
		default:
			giveUp()
		}
	}
	p.nextContent()
}

// document reads the one document: an optional "---" line, then the root
// node, then nothing but blank and comment lines.
func (p *fastParser) document() *yaml.Node {
	// Find the first content as nextContent would, from a virtual line
	// break before the first byte.
	p.pos, p.lineStart, p.atStart = 0, 0, true
	p.skipSpaces()
	if p.pos < len(p.src) && (p.src[p.pos] == '\n' || p.src[p.pos] == '#') {
		p.nextContent()
	} else if p.pos >= len(p.src) {
		p.eof = true
	}
	p.atStart = false
	if p.eof {
		giveUp()
	}
	var doc *yaml.Node
	if p.pos == 0 || p.pos == p.lineStart {
		switch c := p.src[p.pos]; {
		case c == '%':
			giveUp()
		case (c == '-' || c == '.') && p.at(p.pos+1) == c && p.at(p.pos+2) == c && p.blankz(p.pos+3):
			if c == '.' {
				giveUp()
			}
			// An explicit start: the document node is at the marker.
			doc = p.newNode(yaml.DocumentNode, "", p.pos)
			p.pos += 3
			p.endLine()
			if p.eof {
				giveUp()
			}
		}
	}
	if doc == nil {
		// An implicit start: yaml.v3 puts the document at its first token.
		doc = p.newNode(yaml.DocumentNode, "", p.pos)
	}
	root := p.blockValue(-1, true)
	if !p.eof {
		giveUp()
	}
	doc.Content = []*yaml.Node{root}
	return doc
}

// blockValue reads the node at pos in block context; parentInd is the
// indentation of the enclosing block collection (-1 at the root), which
// decides where a plain scalar would continue. allowMap is false where a
// mapping may not start (after "key: " on the same line).
func (p *fastParser) blockValue(parentInd int, allowMap bool) *yaml.Node {
	p.depth++
	if p.depth > fastMaxDepth {
		giveUp()
	}
	defer func() { p.depth-- }()
	ind := p.pos - p.lineStart
	switch c := p.src[p.pos]; {
	case c == '-' && p.blankz(p.pos+1):
		if !allowMap {
			giveUp() // a sequence after "key: " on one line
		}
		return p.blockSeq(ind, false)
	case c == '[' || c == '{':
		n := p.flowNode(parentInd)
		p.skipSpaces()
		if p.at(p.pos) == ':' {
			giveUp() // a flow collection as a key
		}
		p.endLine()
		return n
	}
	start := p.pos
	k, plain := p.scalar(false)
	p.skipSpaces()
	if p.at(p.pos) == ':' && p.blankz(p.pos+1) {
		if !allowMap || p.pos-start > 1000 {
			giveUp() // "a: b: c", or longer than libyaml's simple keys
		}
		return p.blockMap(ind, k)
	}
	if plain {
		p.noContinuation(parentInd)
	}
	p.endLine()
	return k
}

// blockMap reads a block mapping whose keys are at indentation ind; pos is
// at the ':' after its first key.
func (p *fastParser) blockMap(ind int, first *yaml.Node) *yaml.Node {
	m := p.nodeAt(yaml.MappingNode, "!!map", first.Line, first.Column)
	base := len(p.stack)
	k := first
	for {
		p.push(k)
		// pos is at the ':' of k.
		colon := p.pos
		p.pos++
		p.skipSpaces()
		switch c := p.at(p.pos); {
		case p.pos >= len(p.src) || c == '\n' || c == '#':
			if c == '#' && p.src[p.pos-1] != ' ' {
				giveUp()
			}
			// The value starts on a later line, or is empty: yaml.v3 puts
			// an empty value just after the ':'.
			line, col := p.line, p.col(colon+1)
			p.nextContent()
			switch {
			case !p.eof && p.pos-p.lineStart > ind:
				p.push(p.blockValue(ind, true))
			case !p.eof && p.pos-p.lineStart == ind && p.seqEntry():
				p.push(p.blockSeq(ind, true))
			default:
				p.push(p.nodeAt(yaml.ScalarNode, "!!null", line, col))
			}
		default:
			p.push(p.blockValue(ind, false))
		}
		// pos is at the next content, or eof.
		if !p.atIndent(ind) {
			break
		}
		if p.seqEntry() {
			giveUp()
		}
		c := p.src[p.pos]
		if c == '[' || c == '{' {
			giveUp()
		}
		start := p.pos
		k, _ = p.scalar(false)
		p.skipSpaces()
		if p.at(p.pos) != ':' || !p.blankz(p.pos+1) || p.pos-start > 1000 {
			giveUp()
		}
	}
	m.Content = p.pop(base)
	return m
}

// atIndent: after an entry of a block collection at indentation ind, the
// next content is at ind too (another entry, if its indicator fits). The
// end or a shallower line ends the collection; a deeper one is an error
// for yaml.v3 (or a continuation): give up.
func (p *fastParser) atIndent(ind int) bool {
	if p.eof {
		return false
	}
	nind := p.pos - p.lineStart
	if nind > ind {
		giveUp()
	}
	return nind == ind
}

// blockSeq reads a block sequence whose entries are at indentation ind;
// indentless is a sequence at its parent mapping's own indentation
// ("key:\n- a"), which a key at that indentation ends.
func (p *fastParser) blockSeq(ind int, indentless bool) *yaml.Node {
	s := p.newNode(yaml.SequenceNode, "!!seq", p.pos)
	base := len(p.stack)
	for {
		// pos is at "- ".
		p.pos++
		p.skipSpaces()
		if c := p.at(p.pos); p.pos >= len(p.src) || c == '\n' || c == '#' {
			if c == '#' && p.src[p.pos-1] != ' ' {
				giveUp()
			}
			p.nextContent()
			if p.eof || p.pos-p.lineStart <= ind {
				giveUp() // an empty entry
			}
			p.push(p.blockValue(ind, true))
		} else if p.seqEntry() {
			p.depth++
			if p.depth > fastMaxDepth {
				giveUp()
			}
			p.push(p.blockSeq(p.pos-p.lineStart, false))
			p.depth--
		} else {
			p.push(p.blockValue(ind, true))
		}
		if !p.atIndent(ind) {
			break
		}
		if !p.seqEntry() {
			if indentless {
				break
			}
			giveUp()
		}
	}
	s.Content = p.pop(base)
	return s
}

// noContinuation gives up when a plain scalar that ended at a line break
// would, for libyaml, go on on the next line: a non-comment line indented
// more than the enclosing block collection (blockInd).
func (p *fastParser) noContinuation(blockInd int) {
	i := p.pos
	for i < len(p.src) && p.src[i] == ' ' {
		i++
	}
	if i >= len(p.src) || p.src[i] != '\n' {
		return // a comment, the end, or what the caller checks
	}
	for {
		i++ // past the line break
		j := i
		for j < len(p.src) && p.src[j] == ' ' {
			j++
		}
		if j >= len(p.src) {
			return
		}
		switch p.src[j] {
		case '\n':
			i = j
			continue
		case '#':
			return
		}
		if j-i > blockInd {
			giveUp()
		}
		return
	}
}

// flowNode reads a flow collection or a scalar in flow context; blockInd is
// the indentation of the block collection around the flow collection, which
// its continuation lines must be indented past.
func (p *fastParser) flowNode(blockInd int) *yaml.Node {
	p.depth++
	if p.depth > fastMaxDepth {
		giveUp()
	}
	defer func() { p.depth-- }()
	switch p.at(p.pos) {
	case '[':
		return p.flowCollection(blockInd, yaml.SequenceNode, "!!seq", ']')
	case '{':
		return p.flowCollection(blockInd, yaml.MappingNode, "!!map", '}')
	}
	n, plain := p.scalar(true)
	if plain {
		// A plain scalar in flow context goes on across a line break
		// unless what follows ends it.
		i := p.pos
		for i < len(p.src) && p.src[i] == ' ' {
			i++
		}
		if i < len(p.src) && p.src[i] == '\n' {
			for i < len(p.src) && (p.src[i] == ' ' || p.src[i] == '\n') {
				i++
			}
			switch p.at(i) {
			case ',', ']', '}', '#':
			default:
				giveUp()
			}
		}
	}
	return n
}

// flowCollection reads a flow sequence or mapping from its opening
// bracket to closer: entries (or key: value pairs) separated by commas, a
// trailing comma allowed, across lines as flowSpace allows.
func (p *fastParser) flowCollection(blockInd int, kind yaml.Kind, tag string, closer byte) *yaml.Node {
	n := p.newNode(kind, tag, p.pos)
	n.Style = yaml.FlowStyle
	base := len(p.stack)
	p.pos++
	for {
		p.flowSpace(blockInd)
		if p.at(p.pos) == closer {
			p.pos++
			break
		}
		if kind == yaml.MappingNode {
			p.flowPair(blockInd)
		} else {
			switch p.at(p.pos) {
			case ',', '?', ':':
				giveUp() // an empty entry, an explicit key
			}
			p.push(p.flowNode(blockInd))
		}
		p.flowSpace(blockInd)
		switch p.at(p.pos) {
		case ',':
			p.pos++
			continue
		case closer:
			p.pos++
		default:
			giveUp() // "[a: b]" and the like
		}
		break
	}
	n.Content = p.pop(base)
	return n
}

// flowPair reads one "key: value" of a flow mapping: a one-line scalar
// key, ": ", and a value that is not empty.
func (p *fastParser) flowPair(blockInd int) {
	switch p.at(p.pos) {
	case ',', '?', ':', '[', '{':
		giveUp()
	}
	k, _ := p.scalar(true)
	p.skipSpaces()
	if p.at(p.pos) != ':' || !p.blankz(p.pos+1) {
		giveUp() // "{a}", "{a:b}", a key across lines
	}
	p.pos++
	p.push(k)
	p.flowSpace(blockInd)
	switch p.at(p.pos) {
	case ',', '}', ':', '?':
		giveUp() // an empty value
	}
	p.push(p.flowNode(blockInd))
}

// flowSpace skips spaces, line breaks and comments inside a flow
// collection; a line it goes on to must be indented past blockInd.
func (p *fastParser) flowSpace(blockInd int) {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ':
			p.pos++
		case '#':
			if p.src[p.pos-1] != ' ' && p.src[p.pos-1] != '\n' {
				giveUp()
			}
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		case '\n':
			p.pos++
			p.line++
			p.lineStart = p.pos
			p.skipSpaces()
			if p.pos < len(p.src) && p.src[p.pos] != '\n' && p.src[p.pos] != '#' {
				if p.pos-p.lineStart <= blockInd {
					giveUp()
				}
				if c := p.src[p.pos]; p.pos == p.lineStart && (c == '-' || c == '.') && p.at(p.pos+1) == c && p.at(p.pos+2) == c && p.blankz(p.pos+3) {
					giveUp() // a document marker
				}
			}
		default:
			return
		}
	}
	giveUp() // the end inside a flow collection
}

// scalar reads a one-line scalar at pos: double- or single-quoted without
// escapes, or plain; plain tells which. Anything else gives up.
func (p *fastParser) scalar(flow bool) (n *yaml.Node, plain bool) {
	start := p.pos
	switch c := p.at(start); c {
	case '"', '\'':
		i := start + 1
		for ; i < len(p.src); i++ {
			b := p.src[i]
			if b == c {
				break
			}
			if b == '\\' || b == '\n' {
				giveUp()
			}
		}
		if i >= len(p.src) || (c == '\'' && p.at(i+1) == '\'') {
			giveUp()
		}
		n = p.newNode(yaml.ScalarNode, "!!str", start)
		n.Value = p.src[start+1 : i]
		if c == '"' {
			n.Style = yaml.DoubleQuotedStyle
		} else {
			n.Style = yaml.SingleQuotedStyle
		}
		p.pos = i + 1
		return n, false
	}
	if !plainStart(p.at(start), p.at(start+1)) {
		giveUp()
	}
	// yaml_parser_scan_plain_scalar: runs of non-blanks joined by the
	// spaces between them, ended by ": " (": " or ":" at a line end), in
	// flow context also by ",?[]{}", and by " #" and the line's end.
	i, end := start, start
scan:
	for {
		for i < len(p.src) {
			b := p.src[i]
			if b == ' ' || b == '\n' || (b == ':' && p.blankz(i+1)) {
				break
			}
			if flow && flowIndicator(b) {
				end = i
				break scan
			}
			i++
		}
		end = i
		j := i
		for j < len(p.src) && p.src[j] == ' ' {
			j++
		}
		if j == i || j >= len(p.src) {
			break // at ": ", a line break or the end
		}
		if b := p.src[j]; b == '\n' || b == '#' || (b == ':' && p.blankz(j+1)) || (flow && flowIndicator(b)) {
			break
		}
		i = j
	}
	if end == start {
		giveUp()
	}
	v := p.src[start:end]
	tag := p.plainTag(v)
	n = p.newNode(yaml.ScalarNode, tag, start)
	n.Value = v
	p.pos = end
	return n, true
}

// plainStart: c (followed by next) may start a plain scalar. A narrower set
// than libyaml's, so that an indicator is never read as text.
func flowIndicator(b byte) bool {
	switch b {
	case ',', '?', '[', ']', '{', '}':
		return true
	}
	return false
}

func plainStart(c, next byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	case c >= 0x80:
		return true
	}
	switch c {
	case '_', '.', '/', '~', '+', '$', '(', ')', '=', '<', '^', ';', '\\':
		return true
	case '-':
		return next >= '0' && next <= '9' || next == '.' || next >= 'a' && next <= 'z' || next >= 'A' && next <= 'Z' || next == '_'
	}
	return false
}

// plainTag is the tag yaml.v3 gives a plain scalar (parser.node: "<<" is a
// merge key, anything else what resolve says). Text whose first byte
// resolve has no hint for is a string without asking it (resolve.go:
// resolveTable); the rest asks yaml.v3 itself through Node.ShortTag, which
// calls the same resolve, once per distinct text: fabrics repeat their
// speeds, cables and numbers thousands of times.
func (p *fastParser) plainTag(v string) string {
	if v == "<<" {
		return "!!merge"
	}
	switch c := v[0]; {
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		switch c {
		case 'y', 'Y', 'n', 'N', 't', 'T', 'f', 'F', 'o', 'O':
		default:
			return "!!str"
		}
	case c == '_' || c == '/' || c == '$' || c == '(' || c == ')' || c == '=' || c == '<' || c == '^' || c == ';' || c == '\\':
		return "!!str"
	}
	if t, ok := p.tags[v]; ok {
		return t
	}
	n := yaml.Node{Kind: yaml.ScalarNode, Value: v}
	t := n.ShortTag()
	if p.tags == nil {
		p.tags = make(map[string]string)
	}
	if len(p.tags) < 4096 {
		p.tags[v] = t
	}
	return t
}
