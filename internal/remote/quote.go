package remote

import "strings"

// Quote turns argv into one POSIX shell command line that the remote shell
// splits back into exactly argv. Every word that is not made only of
// characters the shell never interprets goes in single quotes, and a single
// quote inside it is closed, escaped and reopened:
//
//	Quote([]string{"echo", "it's $HOME"}) == `echo 'it'\''s $HOME'`
//
// Arguments must not contain NUL bytes (no shell can pass them on).
func Quote(argv []string) string {
	var b strings.Builder
	for i, a := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		quoteWord(&b, a)
	}
	return b.String()
}

func quoteWord(b *strings.Builder, s string) {
	if s != "" && isSafe(s) {
		b.WriteString(s)
		return
	}
	b.WriteByte('\'')
	b.WriteString(strings.ReplaceAll(s, `'`, `'\''`))
	b.WriteByte('\'')
}

// isSafe reports whether s needs no quoting in any position of a command
// line: no globbing, expansion, assignment, tilde, comment or separator.
func isSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '_', c == '-', c == '.', c == '/', c == ':', c == ',', c == '@', c == '%', c == '+':
		default:
			return false
		}
	}
	return true
}
