package tune

import (
	"fmt"
	"strings"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/check"
)

// Written is the tuned intent as text.
type Written struct {
	Sources []intent.Source
	Changes []Change
	// Fabric is the tuned intent parsed back.
	Fabric *intent.Fabric
}

// Write makes r's edits in the intent's files and proves them: the text
// parses back to the tuned setting, and check reports no error that the
// intent as it was did not have.
func (r *Result) Write() (*Written, error) {
	w := &Written{}
	var err error
	w.Sources, w.Changes, err = Write(r.fabric.Sources, r.Edits)
	if err != nil {
		return nil, err
	}
	g, err := intent.ParseSources(w.Sources...)
	if err != nil {
		return nil, fmt.Errorf("the tuned intent does not parse (a bug in tune): %w", err)
	}
	w.Fabric = g.WithDerive(r.fabric.Derive)
	cl := g.Policy.ClassByName(r.class.Name)
	if modeOf(&g.Policy) != r.Best.Mode || cl == nil ||
		r.Best.Mode.ECN() && (cl.ECN == nil || cl.ECN.MinBytes != r.Best.Kmin || cl.ECN.MaxBytes != r.Best.Kmax || cl.ECN.Probability != r.Best.Pmax) {
		return nil, fmt.Errorf("the tuned intent does not read back as %s (a bug in tune)", r.Best)
	}
	was, _, _ := check.Count(check.Run(r.fabric, check.Options{}))
	fs := check.Run(w.Fabric, check.Options{})
	if now, _, _ := check.Count(fs); now > was {
		var msgs []string
		for _, x := range fs {
			if x.Severity == check.Error {
				msgs = append(msgs, x.String())
			}
		}
		return nil, fmt.Errorf("the tuned intent has %d check errors, the intent had %d (a bug in tune):\n%s", now, was, strings.Join(msgs, "\n"))
	}
	return w, nil
}
