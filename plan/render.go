package plan

import (
	"fmt"
	"io"
	"strings"
)

// WriteText renders the plan for a human, grouped by target.
func WriteText(w io.Writer, p *Plan) error {
	var b strings.Builder
	for _, t := range p.Targets {
		head := t.Kind + " " + t.Name
		if t.Platform != "" {
			head += " (" + t.Platform + ")"
		}
		switch {
		case t.Error != "":
			fmt.Fprintf(&b, "%s: ERROR: %s\n", head, t.Error)
		case !t.HasChanges():
			fmt.Fprintf(&b, "%s: no changes\n", head)
		default:
			fmt.Fprintf(&b, "%s:\n", head)
			for _, c := range t.Changes {
				if c.Action == NoOp {
					continue
				}
				fmt.Fprintf(&b, "  %s %s\n", c.Action.Symbol(), c.Path)
				switch c.Action {
				case Update:
					fmt.Fprintf(&b, "      %s -> %s\n", orNone(c.Before), orNone(c.After))
				case Create:
					fmt.Fprintf(&b, "      = %s\n", orNone(c.After))
				case Delete:
					fmt.Fprintf(&b, "      was %s\n", orNone(c.Before))
				}
				if c.Reason != "" {
					fmt.Fprintf(&b, "      (%s)\n", c.Reason)
				}
			}
		}
		for _, n := range t.Notes {
			fmt.Fprintf(&b, "  note: %s\n", n)
		}
	}
	s := p.Summarize()
	fmt.Fprintf(&b, "Plan: %d to create, %d to update, %d to delete on %d of %d targets",
		s.Create, s.Update, s.Delete, s.Changed, s.Targets)
	if s.Failed > 0 {
		fmt.Fprintf(&b, "; %d failed", s.Failed)
	}
	b.WriteString(".\n")
	_, err := io.WriteString(w, b.String())
	return err
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
	b.WriteString(".\n\n")
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
