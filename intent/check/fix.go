// Mechanical fixes: a finding's fix as a change of the intent that a program
// can apply, so that "applied, it clears the finding" is tested, not hoped
// (fixes_test.go applies every one over the examples and a generated corpus).

package check

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fabricctl/fabricctl/intent"
)

// Edit is one change of the intent, in the intent's own terms: set the field
// at Path to Value, written as it would be in the YAML (`106`, `true`,
// `1.454MB`, `200ms`, `[26, 27]`, `100G`, `RoCE v2`). Paths use the YAML key
// names, as Finding.Path does:
//
//	policy.{mtu,hostMTU,rocePathMTU,globalPause,dcbx,hostPauseStormPrevention}
//	policy.roce.{tos,cnpDSCP,cnpPriority,mode}
//	policy.watchdog.{enabled,detect,restore,poll}
//	policy.classes[NAME].{dscp,priority,lossless,strict,weight,cnp}
//	policy.classes[NAME].ecn.{min,max,probability} (creates the ecn block)
//	policy.classes[NAME].ecn.enabled (false only: no ECN marking)
//	policy.hostBuffers[buffer=N].size (the entry of receive buffer N)
//	inventory.switches[NAME].buffer
//	inventory.switches[NAME].ports[PORT].{mtu,speed,cable}
//	inventory.hosts[NAME].nics[INTERFACE].{speed,cable}
type Edit struct {
	Path  string `json:"path"`
	Value string `json:"value"`
}

func (e Edit) String() string { return e.Path + ": " + e.Value }

// set returns the edit of path to v (an int, bool, string or size).
func set(path string, v any) Edit { return Edit{Path: path, Value: fmt.Sprint(v)} }

// setSize returns the edit of path to b bytes, written as the intent writes sizes.
func setSize(path string, b int64) Edit { return Edit{Path: path, Value: sizeText(b)} }

// sizeText renders b the way the intent writes sizes, in a form the parser
// reads back as b: intent.FormatSize's, unless its decimal megabytes do not
// parse back exactly (1.045MB reads as 1,044,999.99... bytes), then kilobytes
// or bytes.
func sizeText(b int64) string {
	s := intent.FormatSize(b)
	if n, err := intent.ParseSize(s); err == nil && n == b {
		return s
	}
	if b%1000 == 0 {
		return strconv.FormatInt(b/1000, 10) + "KB"
	}
	return strconv.FormatInt(b, 10) + "B"
}

// setDur returns the edit of path to d, in milliseconds when whole (the
// intent's duration grammar takes 200ms, not 1m0s).
func setDur(path string, d time.Duration) Edit {
	if d%time.Millisecond == 0 {
		return Edit{Path: path, Value: fmt.Sprintf("%dms", d/time.Millisecond)}
	}
	return Edit{Path: path, Value: d.String()}
}

// Apply makes the edits on f, in order. It changes f in place, so f must be
// the caller's own (freshly loaded, not shared with a running command); the
// classes are kept sorted by priority, as the parser leaves them. An edit
// whose path names nothing in f, or whose value does not parse, is an error
// and the edits after it are not made.
func Apply(f *intent.Fabric, edits []Edit) error {
	for _, e := range edits {
		if err := apply(f, e); err != nil {
			return fmt.Errorf("edit %s: %w", e, err)
		}
	}
	slices.SortStableFunc(f.Policy.Classes, func(a, b intent.Class) int { return a.Priority - b.Priority })
	return nil
}

func apply(f *intent.Fabric, e Edit) error {
	segs := strings.Split(e.Path, ".")
	// Names in brackets may hold dots (ports ethernet-1/1.0 do not, but
	// keep them whole anyway): rejoin segments split inside brackets.
	for i := 0; i < len(segs); i++ {
		for strings.Count(segs[i], "[") > strings.Count(segs[i], "]") && i+1 < len(segs) {
			segs[i] += "." + segs[i+1]
			segs = slices.Delete(segs, i+1, i+2)
		}
	}
	v := e.Value
	switch {
	case len(segs) == 2 && segs[0] == "policy":
		p := &f.Policy
		switch segs[1] {
		case "mtu":
			return atoi(v, &p.MTU)
		case "hostMTU":
			return atoi(v, &p.HostMTU)
		case "rocePathMTU":
			return atoi(v, &p.RoCEPathMTU)
		case "globalPause":
			return parseBool(v, &p.GlobalPause)
		case "dcbx":
			p.DCBX = intent.DCBXMode(v)
			return nil
		case "hostPauseStormPrevention":
			sp, err := intent.ParsePauseStormPrevention(v)
			if err != nil {
				return err
			}
			p.HostPauseStormPrevention = &sp
			return nil
		}
	case len(segs) == 3 && segs[0] == "policy" && segs[1] == "roce":
		r := &f.Policy.RoCE
		switch segs[2] {
		case "tos":
			return atoi(v, &r.ToS)
		case "cnpDSCP":
			return atoi(v, &r.CNPDSCP)
		case "cnpPriority":
			return atoi(v, &r.CNPPriority)
		case "mode":
			r.Mode = v
			return nil
		}
	case len(segs) == 3 && segs[0] == "policy" && segs[1] == "watchdog":
		w := &f.Policy.Watchdog
		switch segs[2] {
		case "enabled":
			return parseBool(v, &w.Enabled)
		case "detect", "restore", "poll":
			d, err := intent.ParseDuration(v)
			if err != nil {
				return err
			}
			switch segs[2] {
			case "detect":
				w.Detect = d
			case "restore":
				w.Restore = d
			default:
				w.Poll = d
			}
			return nil
		}
	case len(segs) >= 3 && segs[0] == "policy" && strings.HasPrefix(segs[1], "classes["):
		cl := f.Policy.ClassByName(index(segs[1]))
		if cl == nil {
			return fmt.Errorf("no class %q", index(segs[1]))
		}
		return applyClass(cl, segs[2:], v)
	case len(segs) == 3 && segs[0] == "policy" && strings.HasPrefix(segs[1], "hostBuffers[buffer=") && segs[2] == "size":
		b, err := strconv.Atoi(index(segs[1])[len("buffer="):])
		if err != nil || b < 0 || b > 7 || f.Policy.HostBuffer == nil {
			return fmt.Errorf("no receive buffer %q", index(segs[1]))
		}
		return parseSize(v, &f.Policy.HostBuffer.Sizes[b])
	case len(segs) >= 3 && segs[0] == "inventory" && strings.HasPrefix(segs[1], "switches["):
		sw := f.Switch(index(segs[1]))
		if sw == nil {
			return fmt.Errorf("no switch %q", index(segs[1]))
		}
		if len(segs) == 3 && segs[2] == "buffer" {
			return parseSize(v, &sw.BufferBytes)
		}
		if len(segs) == 4 && strings.HasPrefix(segs[2], "ports[") {
			p := sw.Port(index(segs[2]))
			if p == nil {
				return fmt.Errorf("switch %s has no port %q", sw.Name, index(segs[2]))
			}
			switch segs[3] {
			case "mtu":
				return atoi(v, &p.MTU)
			case "speed":
				return parseRate(v, &p.Speed)
			case "cable":
				return parseLength(v, &p.CableMeters)
			}
		}
	case len(segs) == 4 && segs[0] == "inventory" && strings.HasPrefix(segs[1], "hosts[") && strings.HasPrefix(segs[2], "nics["):
		h := f.Host(index(segs[1]))
		if h == nil {
			return fmt.Errorf("no host %q", index(segs[1]))
		}
		for j := range h.NICs {
			if n := &h.NICs[j]; n.Interface == index(segs[2]) {
				switch segs[3] {
				case "speed":
					return parseRate(v, &n.Speed)
				case "cable":
					return parseLength(v, &n.CableMeters)
				}
			}
		}
		return fmt.Errorf("host %s has no NIC %q", h.Name, index(segs[2]))
	}
	return fmt.Errorf("no such field")
}

func applyClass(cl *intent.Class, segs []string, v string) error {
	if len(segs) == 2 && segs[0] == "ecn" && segs[1] == "enabled" {
		// ecn: {enabled: false} turns the class's marking off (true
		// alone gives no thresholds: write min and max instead)
		var on bool
		if err := parseBool(v, &on); err != nil {
			return err
		}
		if on {
			return fmt.Errorf("ecn.enabled: true needs min and max: set those")
		}
		cl.ECN = nil
		return nil
	}
	if len(segs) == 2 && segs[0] == "ecn" {
		if cl.ECN == nil {
			cl.ECN = &intent.ECN{Probability: 100}
		}
		switch segs[1] {
		case "min":
			return parseSize(v, &cl.ECN.MinBytes)
		case "max":
			return parseSize(v, &cl.ECN.MaxBytes)
		case "probability":
			return atoi(strings.TrimSuffix(v, "%"), &cl.ECN.Probability)
		}
		return fmt.Errorf("no such field")
	}
	if len(segs) != 1 {
		return fmt.Errorf("no such field")
	}
	switch segs[0] {
	case "dscp":
		l, err := parseInts(v)
		if err != nil {
			return err
		}
		slices.Sort(l)
		cl.DSCP = slices.Compact(l)
		return nil
	case "priority":
		return atoi(v, &cl.Priority)
	case "lossless":
		return parseBool(v, &cl.Lossless)
	case "strict":
		if err := parseBool(v, &cl.Strict); err != nil {
			return err
		}
		if cl.Strict {
			cl.Weight = 0 // a strict class has no weight (intent.Class)
		}
		return nil
	case "weight":
		return atoi(strings.TrimSuffix(v, "%"), &cl.Weight)
	case "cnp":
		return parseBool(v, &cl.CNP)
	}
	return fmt.Errorf("no such field")
}

// index returns what is between the brackets of "name[index]".
func index(seg string) string {
	_, rest, _ := strings.Cut(seg, "[")
	return strings.TrimSuffix(rest, "]")
}

func atoi(s string, to *int) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return err
	}
	*to = n
	return nil
}

func parseBool(s string, to *bool) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	*to = b
	return nil
}

func parseSize(s string, to *int64) error {
	n, err := intent.ParseSize(s)
	if err != nil {
		return err
	}
	*to = n
	return nil
}

func parseRate(s string, to *int64) error {
	n, err := intent.ParseRate(s)
	if err != nil {
		return err
	}
	*to = n
	return nil
}

func parseLength(s string, to *float64) error {
	n, err := intent.ParseLength(s)
	if err != nil {
		return err
	}
	*to = n
	return nil
}

// parseInts reads a YAML flow list of integers, "[26, 27]" ("[]" is empty).
func parseInts(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") {
		return nil, fmt.Errorf("%q is not a list [a, b]", s)
	}
	out := []int{}
	for _, x := range strings.Split(s[1:len(s)-1], ",") {
		if x = strings.TrimSpace(x); x == "" {
			continue
		}
		n, err := strconv.Atoi(x)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// intList renders v as a YAML flow list, "[26, 27]".
func intList(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return "[" + strings.Join(s, ", ") + "]"
}
