package check

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/fabricctl/fabricctl/intent"
)

// ParseErrorID is the rule ID given to intent parse errors (FromErrors), so
// that they render and count like every other finding.
const ParseErrorID = "FC100"

// FromErrors turns the positioned errors of intent.Parse/Load into Error
// findings with ID ParseErrorID. It returns nil when err is not an
// intent.Errors (e.g. an unreadable file), so callers can tell the two apart.
func FromErrors(err error) []Finding {
	var es intent.Errors
	if !errors.As(err, &es) {
		var e *intent.Error
		if !errors.As(err, &e) {
			return nil
		}
		es = intent.Errors{e}
	}
	out := make([]Finding, 0, len(es))
	for _, e := range es {
		sev := Error
		if e.Omitted > 0 {
			sev = Info // "... and N more errors not shown" is not one more error
		}
		out = append(out, Finding{ID: ParseErrorID, Severity: sev, Pos: e.Pos, Path: e.Path, Message: e.Msg})
	}
	Sort(out)
	return out
}

// ANSI colours for the text output.
const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiDim    = "\x1b[2m"
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
)

// WriteText renders findings for people: grouped by file (findings are
// expected sorted, as Run returns them), one `file:line:col: severity ID:
// path: message` line each with an indented `fix:` line, and a summary line.
// Findings that one range in the intent repeats are written once, with the
// range and a line naming their subjects (groupFindings); the summary counts
// each of them.
// color adds ANSI colours (use it only on a terminal).
func WriteText(w io.Writer, fs []Finding, color bool) error {
	paint := func(code, s string) string {
		if !color {
			return s
		}
		return code + s + ansiReset
	}
	// Written through a buffer as it goes: a fabric of 2,000 switches can
	// have thousands of findings, megabytes of text.
	b := bufio.NewWriterSize(w, 64<<10)
	file := ""
	i := 0
	var num []byte
	eachGroup(fs, func(g *textGroup) {
		f := &g.Finding
		if i > 0 && f.Pos.File != file {
			b.WriteString("\n")
		}
		i++
		file = f.Pos.File
		sev := f.Severity.String()
		switch f.Severity {
		case Error:
			sev = paint(ansiBold+ansiRed, sev)
		case Warning:
			sev = paint(ansiYellow, sev)
		default:
			sev = paint(ansiCyan, sev)
		}
		// Pos.String's text, written in place (16,000 findings).
		if color {
			b.WriteString(ansiBold)
		}
		if f.Pos.Line == 0 {
			b.WriteString(f.Pos.String())
		} else {
			b.WriteString(f.Pos.File)
			num = strconv.AppendInt(append(num[:0], ':'), int64(f.Pos.Line), 10)
			num = strconv.AppendInt(append(num, ':'), int64(f.Pos.Col), 10)
			b.Write(num)
		}
		if color {
			b.WriteString(ansiReset)
		}
		b.WriteString(": ")
		b.WriteString(sev)
		b.WriteString(" ")
		b.WriteString(f.ID)
		b.WriteString(": ")
		if f.Path != "" {
			b.WriteString(paint(ansiDim, f.Path))
			b.WriteString(": ")
		}
		b.WriteString(f.Message)
		b.WriteString("\n")
		if g.subjects != "" {
			b.WriteString("  ")
			b.WriteString(paint(ansiDim, g.subjects))
			b.WriteString("\n")
		}
		if f.Fix != "" {
			b.WriteString("  ")
			b.WriteString(paint(ansiDim, "fix:"))
			b.WriteString(" ")
			b.WriteString(f.Fix)
			b.WriteString("\n")
		}
	})
	if len(fs) > 0 {
		b.WriteString("\n")
	}
	b.WriteString(Summary(fs))
	b.WriteString("\n")
	return b.Flush()
}

// Summary is the one-line count of findings, e.g. "3 errors, 1 warning, 0 infos".
func Summary(fs []Finding) string {
	e, wn, in := Count(fs)
	if e+wn+in == 0 {
		return "no findings"
	}
	return fmt.Sprintf("%d %s, %d %s, %d %s", e, plural(e, "error", "errors"), wn, plural(wn, "warning", "warnings"), in, plural(in, "info", "infos"))
}

// jsonFinding is the machine form of a Finding.
type jsonFinding struct {
	ID       string   `json:"id"`
	Severity Severity `json:"severity"`
	File     string   `json:"file,omitempty"`
	Line     int      `json:"line,omitempty"`
	Col      int      `json:"col,omitempty"`
	Path     string   `json:"path,omitempty"`
	Message  string   `json:"message"`
	Fix      string   `json:"fix,omitempty"`
	// Edits is the fix as changes of the intent (check.Edit); absent where
	// the fix is a person's decision.
	Edits []Edit `json:"edits,omitempty"`
}

// Report is the JSON document `check -o json` prints.
type Report struct {
	Files    []string      `json:"files"`
	Findings []jsonFinding `json:"findings"`
	Errors   int           `json:"errors"`
	Warnings int           `json:"warnings"`
	Infos    int           `json:"infos"`
}

// WriteJSON renders findings as one indented JSON Report.
func WriteJSON(w io.Writer, files []string, fs []Finding) error {
	r := Report{Files: files, Findings: make([]jsonFinding, 0, len(fs))}
	if r.Files == nil {
		r.Files = []string{}
	}
	for _, f := range fs {
		r.Findings = append(r.Findings, jsonFinding{
			ID: f.ID, Severity: f.Severity, File: f.Pos.File, Line: f.Pos.Line, Col: f.Pos.Col,
			Path: f.Path, Message: f.Message, Fix: f.Fix, Edits: f.Edits,
		})
	}
	r.Errors, r.Warnings, r.Infos = Count(fs)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// jsonRule is the machine form of a Rule.
type jsonRule struct {
	ID       string   `json:"id"`
	Name     string   `json:"name"`
	Severity Severity `json:"severity"`
	Summary  string   `json:"summary"`
	Needs    string   `json:"needs,omitempty"` // the flag that runs it, for FlagRules
	Fix      string   `json:"fix"`             // Rule.Fix: "edit", or the decision a person makes
}

// FlagRules are rules that Run does not apply and that check runs under a
// flag (internal/sim's rules under --simulate).
type FlagRules struct {
	Flag  string
	Rules []Rule
}

// WriteRules lists Run's rules and those of extra, in ID order, as a text
// table (a Markdown table when format is markdown, for the README) or JSON.
// A rule of extra says which flag it needs.
func WriteRules(w io.Writer, format string, extra ...FlagRules) error {
	type row struct {
		Rule
		needs string
	}
	var rows []row
	for _, r := range Rules() {
		rows = append(rows, row{r, ""})
	}
	for _, x := range extra {
		for _, r := range x.Rules {
			rows = append(rows, row{r, x.Flag})
		}
	}
	slices.SortStableFunc(rows, func(a, b row) int { return strings.Compare(a.ID, b.ID) })
	summary := func(r row, quote string) string {
		if r.needs == "" {
			return r.Summary
		}
		return fmt.Sprintf("%s (needs %s%s%s)", r.Summary, quote, r.needs, quote)
	}
	switch format {
	case "json":
		out := make([]jsonRule, 0, len(rows))
		for _, r := range rows {
			out = append(out, jsonRule{r.ID, r.Name, r.Severity, r.Summary, r.needs, r.fix()})
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	case "markdown":
		var b strings.Builder
		b.WriteString("| ID | name | severity | checks that | fix |\n|---|---|---|---|---|\n")
		for _, r := range rows {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", r.ID, r.Name, r.Severity, summary(r, "`"), r.fix())
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%-6s %-7s %-18s %s\n", r.ID, r.Severity, r.Name, summary(r, ""))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
