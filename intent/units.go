package intent

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// The unit grammar: how sizes, rates, lengths, percentages and durations are
// written. It is defined once, here: ParseX matches a value against the
// grammar's regular expression, and the JSON Schema (schema.go) publishes the
// same expression as its pattern, so an editor accepts exactly what the
// parser accepts. What the schema cannot say (a size too large for int64, a
// length over 100 km) is a value bound the parser checks after the grammar.

// unitGrammar is one kind of value: a number, optional spaces, a unit.
type unitGrammar struct {
	what string
	// number is the regular expression of the number (default numberRE).
	number string
	units  []unitSpelling
	// fold: a unit's prefix matches in any letter case (150kB = 150KB,
	// 400g = 400G); lengths and durations do not fold (M is mega, m is
	// metre). B and b never fold: B is a byte and b a bit (150kb is
	// kilobits, 25GB/s is bytes), as IEC 80000-13 writes them.
	fold bool
	// unitOptional: a number alone is a value in the base unit.
	unitOptional bool
	// alone is a whole value also accepted on its own, e.g. "0".
	alone string
	// integerUnits are the spellings after which only integers are
	// grammatical (bytes: there is no half byte).
	integerUnits map[string]bool
	// repeat: value-unit pairs may repeat (1h30m).
	repeat bool
	// tight: no space between number and unit (Go durations).
	tight bool
	re    *regexp.Regexp
}

type unitSpelling struct {
	text string
	mult float64
}

// numberRE is a non-negative decimal: digits, optionally a point and more
// digits. No sign, exponent, hex or underscores (which strconv would take).
const numberRE = `[0-9]+(\.[0-9]+)?`

// pattern returns the anchored regular expression of g, in the subset that
// Go's regexp and ECMA-262 (JSON Schema) read alike.
func (g *unitGrammar) pattern() string {
	number := g.number
	if number == "" {
		number = numberRE
	}
	spell := func(u string) string {
		var b strings.Builder
		for _, r := range u {
			lo, up := unicode.ToLower(r), unicode.ToUpper(r)
			switch {
			case g.fold && lo != up && r != 'b' && r != 'B':
				b.WriteString("[" + string(lo) + string(up) + "]")
			default:
				b.WriteString(regexp.QuoteMeta(string(r)))
			}
		}
		return b.String()
	}
	var whole, ints []string
	for _, u := range g.units {
		if g.integerUnits[u.text] {
			ints = append(ints, spell(u.text))
		} else {
			whole = append(whole, spell(u.text))
		}
	}
	// Longest first, so no spelling is a prefix taken before a longer one.
	byLen := func(a, b string) int { return len(b) - len(a) }
	slices.SortStableFunc(whole, byLen)
	slices.SortStableFunc(ints, byLen)
	space := " *"
	if g.tight {
		space = ""
	}
	var alts []string
	if len(whole) > 0 {
		alts = append(alts, "("+number+")"+space+"("+strings.Join(whole, "|")+")")
	}
	if len(ints) > 0 || g.unitOptional {
		in := "[0-9]+"
		if len(ints) > 0 {
			opt := ""
			if g.unitOptional {
				opt = "?"
			}
			in += space + "(" + strings.Join(ints, "|") + ")" + opt
		}
		alts = append(alts, in)
	}
	body := strings.Join(alts, "|")
	if g.repeat {
		body = "(" + body + ")+"
	}
	if g.alone != "" {
		body = regexp.QuoteMeta(g.alone) + "|" + body
	}
	return "^(" + body + ")$"
}

func (g *unitGrammar) compile() *unitGrammar {
	g.re = regexp.MustCompile(g.pattern())
	return g
}

// split matches s against g and returns its number and unit; ok is false
// when s is not in the grammar.
func (g *unitGrammar) split(s string) (num string, mult float64, ok bool) {
	if !g.re.MatchString(s) {
		return "", 0, false
	}
	if s == g.alone {
		return s, 1, true
	}
	num, unit := splitUnit(s)
	if unit == "" {
		return num, 1, true
	}
	for _, u := range g.units {
		if u.text == unit || (g.fold && foldUnit(u.text) == foldUnit(unit)) {
			return num, u.mult, true
		}
	}
	return "", 0, false // not reached: the expression names every unit
}

// foldUnit is a unit's spelling with every letter but B and b in upper
// case: two spellings of one unit fold to the same string.
func foldUnit(u string) string {
	return strings.Map(func(r rune) rune {
		if r == 'b' || r == 'B' {
			return r
		}
		return unicode.ToUpper(r)
	}, u)
}

func (g *unitGrammar) spellings() string {
	var s []string
	for _, u := range g.units {
		s = append(s, u.text)
	}
	return strings.Join(s, ", ")
}

var (
	sizeGrammar = (&unitGrammar{what: "size", fold: true, unitOptional: true,
		units: []unitSpelling{{"B", 1}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9},
			{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}},
		integerUnits: map[string]bool{"B": true}}).compile()
	rateGrammar = (&unitGrammar{what: "rate", fold: true, alone: "0",
		units: rateSpellings()}).compile()
	lengthGrammar = (&unitGrammar{what: "length",
		units: []unitSpelling{{"m", 1}, {"km", 1000}, {"cm", 0.01}}}).compile()
	// Percentages are 0-100, which the number itself says.
	percentGrammar = (&unitGrammar{what: "percentage", number: `100(\.0+)?|[0-9]{1,2}(\.[0-9]+)?`,
		units: []unitSpelling{{"%", 1}, {"", 1}}}).compile()
	// Durations are Go's (time.ParseDuration) without sign or bare points.
	durationGrammar = (&unitGrammar{what: "duration", alone: "0", repeat: true, tight: true,
		units: []unitSpelling{{"ns", 1}, {"us", 1}, {"µs", 1}, {"μs", 1}, {"ms", 1}, {"s", 1}, {"m", 1}, {"h", 1}}}).compile()
)

// rateSpellings are K, M, G, T alone or followed by bps or b/s.
func rateSpellings() []unitSpelling {
	var out []unitSpelling
	for _, p := range []struct {
		s string
		m float64
	}{{"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}} {
		out = append(out, unitSpelling{p.s, p.m}, unitSpelling{p.s + "bps", p.m}, unitSpelling{p.s + "b/s", p.m})
	}
	return out
}

// ParseSize parses a byte size: "19456", "150KB" (decimal, 150000), "1.5MB",
// "64KiB" (binary), "2GB", "100B". Decimal units are SI as switch vendors
// write ECN thresholds (NVIDIA's 150 KB = 150,000 B).
func ParseSize(s string) (int64, error) {
	num, m, ok := sizeGrammar.split(s)
	if !ok {
		if n, unit := splitUnit(s); strings.HasSuffix(unit, "b") && n != "" {
			if _, _, ok := sizeGrammar.split(n + strings.TrimSuffix(unit, "b") + "B"); ok {
				return 0, fmt.Errorf("size %q: b is a bit, sizes are in bytes: write %sB", s, strings.TrimSuffix(s, "b"))
			}
		}
		return 0, fmt.Errorf("size %q: want a whole number of bytes or a number with a unit: %s (e.g. 150KB, 1.5MB)", s, sizeGrammar.spellings())
	}
	return scale(s, num, m, math.MaxInt64)
}

// ParseRate parses a line rate in bits/s: "100G", "400G", "25Gbps", "10M", "1.6T".
func ParseRate(s string) (int64, error) {
	num, m, ok := rateGrammar.split(s)
	if !ok {
		if _, unit := splitUnit(s); strings.Contains(unit, "B") {
			return 0, fmt.Errorf("rate %q: B is a byte, rates are in bits per second: write the rate in bits, e.g. 400G (8 x 50 GB/s)", s)
		}
		return 0, fmt.Errorf("rate %q: want a number with a unit such as 25G, 100G, 400G or 800G", s)
	}
	return scale(s, num, m, 10e12)
}

// ParseLength parses a cable length in metres: "3m", "100m", "0.5m", "2km", "150cm".
func ParseLength(s string) (float64, error) {
	num, m, ok := lengthGrammar.split(s)
	if !ok {
		if n, unit := splitUnit(s); unit == "M" || unit == "KM" || unit == "CM" {
			return 0, fmt.Errorf("length %q: units are lower case (M would be mega): write %s%s", s, n, strings.ToLower(unit))
		}
		return 0, fmt.Errorf("length %q: want a number with a unit: m, km or cm (e.g. 3m, 100m)", s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("length %q: not a number", s)
	}
	v := f * m
	if v > 100_000 {
		return 0, fmt.Errorf("length %q: longer than 100 km", s)
	}
	return v, nil
}

// ParsePercent parses "50%" or "50" into 50. Fractions are allowed ("12.5%").
func ParsePercent(s string) (float64, error) {
	num, _, ok := percentGrammar.split(s)
	if !ok {
		return 0, fmt.Errorf("percentage %q: want a number 0-100, optionally with %%", s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("percentage %q: not a number", s)
	}
	return f, nil
}

// ParseDuration parses a duration with a unit ("200ms", "1.5s", "10us").
func ParseDuration(s string) (time.Duration, error) {
	if !durationGrammar.re.MatchString(s) {
		if t := strings.ReplaceAll(s, " ", ""); t != s && durationGrammar.re.MatchString(t) {
			return 0, fmt.Errorf("duration %q: no space in a duration (Go's syntax, as in 1h30m): write %s", s, t)
		}
		if lo := strings.ToLower(s); lo != s && durationGrammar.re.MatchString(lo) {
			return 0, fmt.Errorf("duration %q: units are lower case (M is mega, m is minute): write %s", s, lo)
		}
		return 0, fmt.Errorf("duration %q: want a number with a unit such as 100ms, 2s or 1m", s)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("duration %q: too long", s)
	}
	return d, nil
}

func splitUnit(s string) (num, unit string) {
	i := len(s)
	for i > 0 {
		c := s[i-1]
		if (c >= '0' && c <= '9') || c == '.' {
			break
		}
		i--
	}
	return strings.TrimRight(s[:i], " "), strings.TrimLeft(s[i:], " ")
}

func scale(orig, num string, mult float64, max float64) (int64, error) {
	if _, err := strconv.ParseFloat(num, 64); err != nil {
		return 0, fmt.Errorf("%q: not a number", orig)
	}
	// In exact decimal arithmetic: 1.045MB is 1,045,000 B, where the
	// float product 1.045 x 1e6 is 1,044,999.9999999999 and no whole number.
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return 0, fmt.Errorf("%q: not a number", orig)
	}
	r.Mul(r, new(big.Rat).SetFloat64(mult))
	// float64(math.MaxInt64) rounds up to 2^63, which int64 cannot hold:
	// converting it would wrap to a negative size.
	if v, _ := r.Float64(); v > max || v >= 1<<63 {
		return 0, fmt.Errorf("%q: too large", orig)
	}
	if !r.IsInt() {
		return 0, fmt.Errorf("%q: not a whole number of units of 1", orig)
	}
	return r.Num().Int64(), nil
}

// FormatSize renders bytes the way the intent writes them (exact when possible).
func FormatSize(b int64) string {
	switch {
	case b >= 1e6 && b%1e3 == 0:
		return strconv.FormatFloat(float64(b)/1e6, 'f', -1, 64) + "MB"
	case b >= 1e3 && b%1e3 == 0:
		return strconv.FormatInt(b/1e3, 10) + "KB"
	}
	return strconv.FormatInt(b, 10) + "B"
}

// FormatRate renders bits/s as 100G, 400G, 25G.
func FormatRate(r int64) string {
	switch {
	case r >= 1e12 && r%1e9 == 0 && r%1e12 != 0:
		return strconv.FormatInt(r/1e9, 10) + "G"
	case r >= 1e12:
		return strconv.FormatFloat(float64(r)/1e12, 'f', -1, 64) + "T"
	case r >= 1e9:
		return strconv.FormatFloat(float64(r)/1e9, 'f', -1, 64) + "G"
	case r >= 1e6:
		return strconv.FormatFloat(float64(r)/1e6, 'f', -1, 64) + "M"
	}
	return strconv.FormatInt(r, 10)
}
