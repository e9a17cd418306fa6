package intent

import (
	"strconv"
	"unicode/utf8"
)

// MaxEcho is the most of a value from the input (a name, an address) that a
// message repeats: a 10 MiB switch name is named by its first bytes and its
// length, not printed whole in every line that mentions it.
const MaxEcho = 128

// Echo is s as messages repeat it: whole when at most MaxEcho bytes, else
// its first MaxEcho bytes (cut at a rune boundary), "...", and its length.
func Echo(s string) string {
	if len(s) <= MaxEcho {
		return s
	}
	return s[:cutAt(s)] + "...(" + strconv.Itoa(len(s)) + " bytes)"
}

func cutAt(s string) int {
	cut := MaxEcho
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return cut
}
