package intent

// MaxNodes bounds the YAML values (scalars, mappings, sequences) of one
// intent file, as prescan estimates them before decoding. yaml.v3 builds a
// node of about 200 bytes per value, plus its parser's work: decoding costs
// 40 to 100 bytes of memory per byte of input, whatever the input. A fabric
// of 2,000 switches x 64 ports and 16,000 hosts (3.3 MB) is about 600,000;
// 2,000,000 keeps the peak of one file under about 1 GB.
const MaxNodes = 2_000_000

// MaxExtensionBytes bounds the text of one top-level x- key. Those keys are
// free-form and hold YAML anchors (as in docker compose): a few lines. A
// list of a million small maps under one (60 MB, within MaxFileSize) took
// 2.4 GB to decode before being ignored.
const MaxExtensionBytes = 1 << 20

// prescan refuses, before yaml.v3 builds anything, a file whose top-level
// x- key holds more than MaxExtensionBytes, or that holds more than about
// MaxNodes values: memory is then bounded by what is refused early, not by
// the size of the file. It reads the text once, skipping comments and
// quoted strings; the count of values is an estimate (each "key:" counts
// two, each "- " item, "[", "{" and flow "," one), within about 1.5x of
// yaml.v3's for the intents seen. It reports false when it refused.
func prescan(s Source, errs *errList) bool {
	data := s.Data
	var (
		nodes     int
		depth     int  // flow collections open ([ {)
		line           = 1
		lineStart      = true // only indentation seen on this line so far
		prev      byte = '\n'
		xStart         = -1 // offset of the open top-level x- key, or -1
		xLine     int
		xName     string
	)
	closeX := func(end int) bool {
		if xStart < 0 {
			return true
		}
		if n := end - xStart; n > MaxExtensionBytes {
			errs.add(Pos{File: s.Name, Line: xLine, Col: 1}, clip(xName),
				"the extension key %s holds more than %d KiB of YAML (%d bytes by line %d); an x- key holds YAML anchors and at most %d KiB", clip(xName), MaxExtensionBytes>>10, n, line, MaxExtensionBytes>>10)
			return false
		}
		xStart = -1
		return true
	}
	for i := 0; i < len(data); i++ {
		c := data[i]
		if c == '\n' {
			line++
			lineStart = true
			prev = c
			continue
		}
		if lineStart && c != ' ' && c != '\t' {
			lineStart = false
			// A top-level key (column 1, outside flow collections)
			// ends the x- key before it.
			if prev == '\n' && depth == 0 && c != '#' {
				if !closeX(i) {
					return false
				}
				if c == 'x' && i+1 < len(data) && data[i+1] == '-' {
					j := i
					for j < len(data) && data[j] != ':' && data[j] != '\n' {
						j++
					}
					xStart, xLine, xName = i, line, string(data[i:j])
				}
			}
		}
		switch c {
		case '#':
			if prev == ' ' || prev == '\t' || prev == '\n' {
				for i+1 < len(data) && data[i+1] != '\n' {
					i++
				}
				continue
			}
		case '"', '\'':
			if tokenStart(prev) {
				i = skipQuoted(data, i, &line)
				nodes++
				prev = c
				continue
			}
		case '[', '{':
			depth++
			nodes++
		case ']', '}':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth > 0 {
				nodes++
			}
		case '-':
			if (prev == ' ' || prev == '\t' || prev == '\n') && (i+1 == len(data) || data[i+1] == ' ' || data[i+1] == '\n') {
				nodes++
			}
		case ':':
			if i+1 == len(data) || data[i+1] == ' ' || data[i+1] == '\n' || data[i+1] == '\r' || (depth > 0 && (data[i+1] == ',' || data[i+1] == '}' || data[i+1] == ']')) {
				nodes += 2
			}
		}
		if xStart >= 0 && i-xStart > MaxExtensionBytes && !closeX(i) {
			return false
		}
		if nodes > MaxNodes {
			errs.add(Pos{File: s.Name, Line: line, Col: 1}, "",
				"more than %d YAML values by line %d (of %d bytes): refused before decoding, which takes about 200 bytes of memory per value; a fabric of 2,000 switches and 16,000 hosts has about 600,000",
				MaxNodes, line, len(data))
			return false
		}
		prev = c
	}
	return closeX(len(data))
}

// tokenStart reports whether a quote after prev starts a quoted scalar (as
// in `key: "v"`, `- 'v'`, `["a", "b"]`), not an apostrophe inside a plain
// one (`it's`).
func tokenStart(prev byte) bool {
	switch prev {
	case ' ', '\t', '\n', '[', '{', ',', ':', '-':
		return true
	}
	return false
}

// skipQuoted returns the offset of the quote that closes the quoted scalar
// opened at data[i] (or the last byte), counting the lines it spans.
func skipQuoted(data []byte, i int, line *int) int {
	q := data[i]
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '\n':
			*line++
		case q == '"' && c == '\\':
			j++
		case c == q:
			if q == '\'' && j+1 < len(data) && data[j+1] == '\'' {
				j++ // '' is a quote inside a single-quoted scalar
				continue
			}
			return j
		}
	}
	return len(data) - 1
}
