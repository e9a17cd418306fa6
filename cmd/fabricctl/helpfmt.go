package main

import (
	"strings"
	"unicode/utf8"
)

// helpWidth is the widest line --help prints: an 80-column terminal.
const helpWidth = 80

// wrapHelp fits a help text to width columns without breaking what must
// stay whole:
//
//   - a line of two columns (a flag and its description, a command and its
//     summary, a term of a Long text's table) whose description continues on
//     the lines below, indented to the second column, is reflowed as one
//     entry, so a wide table in a Long text is not broken mid-line;
//   - a paragraph of prose (unindented lines) with a line too wide is
//     reflowed as a whole, so it does not turn ragged;
//   - an example command (a line of the Examples section) is never broken
//     inside an argument: a command too wide continues on the next line
//     after a shell line continuation (" \"), before a flag where it can, so
//     that it can still be copied and pasted whole;
//   - any other line too wide breaks at spaces, its continuation indented
//     like it, or to its second column.
func wrapHelp(text string, width int) string {
	lines := strings.Split(text, "\n")
	var out []string
	examples := false
	for i := 0; i < len(lines); {
		l := lines[i]
		switch {
		case l == "Examples:":
			examples = true
		case l != "" && l[0] != ' ':
			examples = false
		}
		if examples && strings.HasPrefix(l, " ") {
			out = append(out, wrapCommand(l, width))
			i++
			continue
		}
		// A prose paragraph.
		j := i
		wide := false
		for j < len(lines) && lines[j] != "" && lines[j][0] != ' ' && lines[j] != "Examples:" {
			wide = wide || utf8.RuneCountInString(lines[j]) > width
			j++
		}
		if j > i+1 && wide {
			out = append(out, wrapLine(strings.Join(lines[i:j], " "), width))
			i = j
			continue
		}
		// A two-column entry and its continuation lines.
		if hang := hangOf(l); hang > 0 {
			j := i + 1
			for j < len(lines) && indentOf(lines[j]) == hang && strings.TrimSpace(lines[j]) != "" && !startsEntry(lines[j], hang) {
				j++
			}
			if j > i+1 {
				joined := l
				wide := utf8.RuneCountInString(l) > width
				for _, c := range lines[i+1 : j] {
					joined += " " + strings.TrimSpace(c)
					wide = wide || utf8.RuneCountInString(c) > width
				}
				if wide {
					out = append(out, wrapLine(joined, width))
				} else {
					out = append(out, lines[i:j]...)
				}
				i = j
				continue
			}
		}
		out = append(out, wrapLine(l, width))
		i++
	}
	return strings.Join(out, "\n")
}

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

// secondColumn returns the column where the second column of an indented
// two-column line starts (after a run of two or more spaces, in the left
// two thirds of the line), or 0.
func secondColumn(l string) int {
	indent := indentOf(l)
	if indent == 0 {
		return 0
	}
	j := strings.Index(l[indent:], "  ")
	if j <= 0 {
		return 0
	}
	k := indent + j
	for k < len(l) && l[k] == ' ' {
		k++
	}
	if k >= len(l) || k >= helpWidth*2/3 {
		return 0
	}
	return k
}

// hangOf returns the column a wrapped line continues at: its second column,
// or the text after a list item's "- ", or 0.
func hangOf(l string) int {
	if k := secondColumn(l); k > 0 {
		return k
	}
	if t := strings.TrimLeft(l, " "); len(t) < len(l) && (strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* ")) {
		return indentOf(l) + 2
	}
	return 0
}

// startsEntry reports whether a line indented to hang starts an entry of its
// own (a nested table's term: "-x  text") rather than continuing the one
// above.
func startsEntry(l string, hang int) bool {
	t := l[hang:]
	return strings.HasPrefix(t, "-") && strings.Contains(t, "  ")
}

// wrapLine breaks a line wider than width at spaces; a continuation is
// indented like the line, or to its second column.
func wrapLine(line string, width int) string {
	if utf8.RuneCountInString(line) <= width {
		return line
	}
	indent := indentOf(line)
	hang := indent
	if k := hangOf(line); k > 0 && k < width*2/3 {
		hang = k
	}
	var b strings.Builder
	prefix := line[:indent]
	words := strings.Split(line[indent:], " ")
	b.WriteString(prefix)
	col := indent
	for wi, w := range words {
		n := utf8.RuneCountInString(w)
		if wi > 0 {
			if col+1+n > width && col > hang {
				b.WriteString("\n" + strings.Repeat(" ", hang))
				col = hang
			} else {
				b.WriteByte(' ')
				col++
			}
		}
		b.WriteString(w)
		col += n
	}
	return b.String()
}

// wrapCommand fits an example command line to width with shell line
// continuations (" \"): it breaks only between arguments, never between a
// flag and its value, and before a shell operator (|, &&, >) when what
// follows the operator does not fit the line; the continuation is indented
// four more columns.
func wrapCommand(line string, width int) string {
	if utf8.RuneCountInString(line) <= width {
		return line
	}
	indent := indentOf(line)
	words := shellWords(line[indent:])
	// Units: a word, a flag with its value, an operator with the word after
	// it, a comment to the end of the line.
	var units []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case strings.HasPrefix(w, "#"):
			units = append(units, strings.Join(words[i:], " "))
			i = len(words)
		case isShellOp(w) && i+1 < len(words):
			units = append(units, w+" "+words[i+1])
			i++
		case strings.HasPrefix(w, "-") && !strings.Contains(w, "=") && i+1 < len(words) &&
			!strings.HasPrefix(words[i+1], "-") && !isShellOp(words[i+1]) && !strings.HasPrefix(words[i+1], "#") && flagTakesValue(w):
			units = append(units, w+" "+words[i+1])
			i++
		default:
			units = append(units, w)
		}
	}
	cont := strings.Repeat(" ", indent+4)
	var out []string
	cur := line[:indent] + units[0]
	for k := 1; k < len(units); k++ {
		u := units[k]
		fits := func(s string) bool { return utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(s)+2 <= width }
		brk := !fits(u)
		if !brk && isShellOp(strings.Fields(u)[0]) {
			// Keep the command after an operator together if it fits on a
			// line of its own.
			seg := u
			for _, v := range units[k+1:] {
				if isShellOp(strings.Fields(v)[0]) {
					break
				}
				seg += " " + v
			}
			brk = !fits(seg) && utf8.RuneCountInString(cont+seg)+2 <= width
		}
		if brk {
			out = append(out, cur+" \\")
			cur = cont + u
		} else {
			cur += " " + u
		}
	}
	out = append(out, cur)
	return strings.Join(out, "\n")
}

func isShellOp(w string) bool {
	switch w {
	case "|", "&&", "||", ";", ">", ">>", "<", "2>", "2>&1":
		return true
	}
	return false
}

// flagTakesValue guesses whether an example's flag is followed by its value:
// every flag but --no-* and the boolean ones named here. A wrong guess only
// moves a line break (a continuation is valid between any two words).
func flagTakesValue(flag string) bool {
	return !strings.HasPrefix(flag, "--no-") && !boolFlagNames[strings.TrimLeft(flag, "-")]
}

var boolFlagNames = map[string]bool{
	"interactive": true, "dry-run": true, "insecure": true, "strict": true, "list-rules": true,
	"simulate": true, "watch": true, "keep": true, "yes": true, "force": true, "skip-hosts": true,
	"detailed-exitcode": true, "h": true, "help": true, "v": true, "version": true,
}

// shellWords splits a command line at spaces outside quotes, keeping the
// quotes (the words are written back as they were).
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			cur.WriteRune(r)
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
			cur.WriteRune(r)
		case r == ' ':
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}
