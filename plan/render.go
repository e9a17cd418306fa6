package plan

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// WriteText renders the plan for a human, grouped by target, without fmt
// (a fabric's plan has thousands of changes and `fabricctl apply` shows
// every one), through a 64 KiB buffer rather than the whole text at once.
func WriteText(w io.Writer, p *Plan) error {
	b := bufio.NewWriterSize(w, 64<<10)
	for _, t := range p.Targets {
		b.WriteString(t.Kind)
		b.WriteByte(' ')
		b.WriteString(t.Name)
		if t.Platform != "" {
			b.WriteString(" (")
			b.WriteString(t.Platform)
			b.WriteByte(')')
		}
		switch {
		case t.Error != "":
			b.WriteString(": ERROR: ")
			b.WriteString(t.Error)
			b.WriteByte('\n')
		case !t.HasChanges():
			b.WriteString(": no changes\n")
		default:
			b.WriteString(":\n")
			for _, c := range t.Changes {
				if c.Action == NoOp {
					continue
				}
				b.WriteString("  ")
				b.WriteString(c.Action.Symbol())
				b.WriteByte(' ')
				b.WriteString(c.Path)
				b.WriteByte('\n')
				switch c.Action {
				case Update:
					b.WriteString("      ")
					b.WriteString(orNone(c.Before))
					b.WriteString(" -> ")
					b.WriteString(orNone(c.After))
					b.WriteByte('\n')
				case Create:
					b.WriteString("      = ")
					b.WriteString(orNone(c.After))
					b.WriteByte('\n')
				case Delete:
					b.WriteString("      was ")
					b.WriteString(orNone(c.Before))
					b.WriteByte('\n')
				}
				if c.Reason != "" {
					b.WriteString("      (")
					b.WriteString(c.Reason)
					b.WriteString(")\n")
				}
			}
		}
		writeLacks(b, t.Lacks)
		for _, n := range t.Notes {
			b.WriteString("  note: ")
			b.WriteString(n)
			b.WriteByte('\n')
		}
	}
	s := p.Summarize()
	fmt.Fprintf(b, "Plan: %d to create, %d to update, %d to delete on %d of %d targets",
		s.Create, s.Update, s.Delete, s.Changed, s.Targets)
	if s.Failed > 0 {
		fmt.Fprintf(b, "; %d failed", s.Failed)
	}
	if s.Lacks > 0 {
		fmt.Fprintf(b, "; %d lacking what apply cannot write (see \"lacks\")", s.Lacks)
	}
	b.WriteString(".\n")
	if n := p.ForcedNote(); n != "" {
		b.WriteString(n)
		b.WriteByte('\n')
	}
	return b.Flush()
}

// writeLacks writes a target's lacks, one line each with its fix below.
func writeLacks(b *bufio.Writer, lacks []Lack) {
	for _, l := range lacks {
		if l.Refuses {
			b.WriteString("  ! lacks (refused): ")
		} else {
			b.WriteString("  ! lacks: ")
		}
		b.WriteString(l.What)
		b.WriteString(": ")
		b.WriteString(l.Reason)
		b.WriteString("\n      fix: ")
		b.WriteString(l.Fix)
		b.WriteByte('\n')
	}
}

// WriteJSON renders the plan file format.
func WriteJSON(w io.Writer, p *Plan) error {
	b, err := p.Marshal()
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// WriteMarkdown renders the plan for a pull-request comment.
func WriteMarkdown(w io.Writer, p *Plan) error {
	var b strings.Builder
	s := p.Summarize()
	fmt.Fprintf(&b, "### fabricctl plan: %s\n\n", mdEscape(p.Fabric))
	fmt.Fprintf(&b, "**%d** to create, **%d** to update, **%d** to delete on %d of %d targets",
		s.Create, s.Update, s.Delete, s.Changed, s.Targets)
	if s.Failed > 0 {
		fmt.Fprintf(&b, "; **%d failed**", s.Failed)
	}
	if s.Lacks > 0 {
		fmt.Fprintf(&b, "; **%d lacking** what apply cannot write", s.Lacks)
	}
	b.WriteString(".\n\n")
	if n := p.ForcedNote(); n != "" {
		fmt.Fprintf(&b, "> :warning: %s\n\n", mdEscape(n))
	}
	for _, t := range p.Targets {
		fmt.Fprintf(&b, "#### %s `%s`", t.Kind, mdEscape(t.Name))
		if t.Platform != "" {
			fmt.Fprintf(&b, " (%s)", t.Platform)
		}
		b.WriteString("\n\n")
		if t.Error != "" {
			fmt.Fprintf(&b, ":x: %s\n\n", mdEscape(t.Error))
			continue
		}
		if !t.HasChanges() {
			b.WriteString("No changes.\n\n")
		} else {
			b.WriteString("| | path | before | after | reason |\n|---|---|---|---|---|\n")
			for _, c := range t.Changes {
				if c.Action == NoOp {
					continue
				}
				fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s |\n", c.Action,
					mdEscape(c.Path), mdCell(c.Before), mdCell(c.After), mdEscape(c.Reason))
			}
			b.WriteString("\n")
		}
		for _, l := range t.Lacks {
			fmt.Fprintf(&b, "> :warning: lacks **%s**: %s. Fix: %s\n", mdEscape(l.What), mdEscape(l.Reason), mdEscape(l.Fix))
		}
		if len(t.Lacks) > 0 {
			b.WriteString("\n")
		}
		for _, n := range t.Notes {
			fmt.Fprintf(&b, "> %s\n", mdEscape(n))
		}
		if len(t.Notes) > 0 {
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Write renders in the named format: text, json or markdown.
func Write(w io.Writer, p *Plan, format string) error {
	switch format {
	case "", "text":
		return WriteText(w, p)
	case "json":
		return WriteJSON(w, p)
	case "markdown", "md":
		return WriteMarkdown(w, p)
	}
	return fmt.Errorf("unknown plan output format %q (want text, json or markdown)", format)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func mdEscape(s string) string {
	r := strings.NewReplacer("|", `\|`, "\n", " ", "`", "'")
	return r.Replace(s)
}

func mdCell(s string) string {
	if s == "" {
		return ""
	}
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return "`" + mdEscape(s) + "`"
}

// WriteDiff renders the plan as `fabricctl diff` shows it: "-" is the
// switch, "+" the intent (in plan, so that the benchmark of diff in sync
// renders what the command does).
func WriteDiff(w io.Writer, p *Plan) error {
	var b strings.Builder
	drifted, paths, lacks, failed := 0, 0, 0, 0
	for _, t := range p.Targets {
		switch {
		case t.Error != "":
			failed++
			fmt.Fprintf(&b, "%s %s: ERROR: %s\n", t.Kind, t.Name, t.Error)
			continue
		case !t.HasDrift():
			fmt.Fprintf(&b, "%s %s: in sync\n", t.Kind, t.Name)
			continue
		}
		drifted++
		fmt.Fprintf(&b, "--- %s %s (observed)\n+++ %s %s (intent)\n", t.Kind, t.Name, t.Kind, t.Name)
		// What the switch lacks and apply cannot write: the reason and the
		// operator's fix, before the paths apply would write.
		for _, l := range t.Lacks {
			lacks++
			fmt.Fprintf(&b, "!! lacks %s: %s\n!! fix: %s\n", l.What, l.Reason, l.Fix)
		}
		for _, c := range t.Changes {
			if c.Action == NoOp {
				continue
			}
			paths++
			fmt.Fprintf(&b, "@@ %s @@\n", c.Path)
			if c.Action != Create {
				fmt.Fprintf(&b, "-%s\n", c.Before)
			}
			if c.Action != Delete {
				fmt.Fprintf(&b, "+%s\n", c.After)
			}
		}
	}
	// A target that could not be read is neither in sync nor drifted:
	// count it apart, as plan does.
	fail := ""
	if failed > 0 {
		fail = fmt.Sprintf("; %d failed (not compared)", failed)
	}
	switch {
	case drifted == 0 && failed == 0:
		fmt.Fprintf(&b, "In sync: %d targets.\n", len(p.Targets))
	case drifted == 0:
		fmt.Fprintf(&b, "In sync: %d of %d targets%s.\n", len(p.Targets)-failed, len(p.Targets), fail)
	case lacks > 0:
		fmt.Fprintf(&b, "Drift: %d paths and %d lacking what apply cannot write on %d of %d targets%s.\n", paths, lacks, drifted, len(p.Targets), fail)
	default:
		fmt.Fprintf(&b, "Drift: %d paths on %d of %d targets%s.\n", paths, drifted, len(p.Targets), fail)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
