package intent

import (
	"fmt"
	"strconv"
	"strings"
)

// enumHint says what a value that is not one of known was probably meant
// to be: the known value it differs from only in letter case ("SONiC" ->
// "sonic": values are case-sensitive, as Kubernetes' and containerlab's
// kinds are), else the nearest known value by edit distance when it is
// close (at most 2 edits, and fewer than half the value; all of
// the nearest when several are as near), else "". The hint
// starts with "; " so that it reads after the error's own words.
func enumHint(v string, known []string) string {
	for _, k := range known {
		if strings.EqualFold(v, k) {
			return fmt.Sprintf("; values are case-sensitive: write %q", k)
		}
	}
	var best []string
	bestD := 3
	for _, k := range known {
		d := editDistance(strings.ToLower(v), strings.ToLower(k))
		switch {
		case d > bestD || 2*d >= len(k):
		case d < bestD:
			best, bestD = []string{k}, d
		default:
			best = append(best, k)
		}
	}
	switch len(best) {
	case 0:
	case 1:
		return fmt.Sprintf("; did you mean %q?", best[0])
	default:
		// As near to several: name them all rather than pick one.
		q := make([]string, len(best))
		for i, b := range best {
			q[i] = strconv.Quote(b)
		}
		return "; did you mean " + strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1] + "?"
	}
	return ""
}

// unknownValue is the message for an enum value that is not one of known:
// `unknown platform "srlinx"; did you mean "srlinux"? (known: ...)`.
func unknownValue(what, v string, known []string) string {
	return fmt.Sprintf("unknown %s %q%s (known: %s)", what, clip(v), enumHint(v, known), strings.Join(known, ", "))
}
