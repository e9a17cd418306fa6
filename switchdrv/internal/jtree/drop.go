package jtree

// DropMembers appends to b the JSON text js without the members named in
// names at its top level, for a js that is already what ExactText writes
// (compact, members sorted, strings without escapes): then it gives what
// SortedText gives of js and names, without sorting or copying member by
// member. ok is false for any other js (not an object, white space, an
// escape or a character ExactText refuses in a string); then nothing of b
// is to be used.
func DropMembers(b, js []byte, names []string) ([]byte, bool) {
	if len(js) < 2 || js[0] != '{' || js[len(js)-1] != '}' {
		return b, false
	}
	if len(names) == 0 {
		return append(b, js...), true
	}
	b = append(b, '{')
	first := true
	i := 1
	if js[i] == '}' {
		return append(b, '}'), i+1 == len(js)
	}
	for {
		// "name":value
		start := i
		if js[i] != '"' {
			return b, false
		}
		end, ok := plainStringEnd(js, i)
		if !ok || end >= len(js) || js[end] != ':' {
			return b, false
		}
		name := js[i+1 : end-1]
		if i, ok = skipValue(js, end+1, 0); !ok || i >= len(js) {
			return b, false
		}
		if !named(names, name) {
			if !first {
				b = append(b, ',')
			}
			first = false
			b = append(b, js[start:i]...)
		}
		switch js[i] {
		case ',':
			i++
		case '}':
			return append(b, '}'), i+1 == len(js)
		default:
			return b, false
		}
	}
}

// plainStringEnd returns the index after the string starting at js[i]
// ('"'), false for one with a character ExactText does not write as is
// (the rule SortedText's reader and DropMembers share).
func plainStringEnd(js []byte, i int) (int, bool) {
	for i++; i < len(js); i++ {
		switch c := js[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20 || c >= 0x7f, c == '\\', c == '<', c == '>', c == '&':
			return 0, false
		}
	}
	return 0, false
}

// skipValue returns the index after the compact JSON value at js[i].
func skipValue(js []byte, i, depth int) (int, bool) {
	if i >= len(js) || depth > maxDepth {
		return 0, false
	}
	switch c := js[i]; c {
	case '"':
		return plainStringEnd(js, i)
	case '{', '[':
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		i++
		if i < len(js) && js[i] == closing {
			return i + 1, true
		}
		for {
			var ok bool
			if c == '{' {
				if i >= len(js) || js[i] != '"' {
					return 0, false
				}
				if i, ok = plainStringEnd(js, i); !ok || i >= len(js) || js[i] != ':' {
					return 0, false
				}
				i++
			}
			if i, ok = skipValue(js, i, depth+1); !ok || i >= len(js) {
				return 0, false
			}
			switch js[i] {
			case ',':
				i++
			case closing:
				return i + 1, true
			default:
				return 0, false
			}
		}
	default: // a number, true, false or null
		start := i
		for i < len(js) {
			switch c := js[i]; {
			case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c == '-', c == '+', c == '.', c == 'E':
				i++
				continue
			}
			break
		}
		return i, i > start
	}
}
