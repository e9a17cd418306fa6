package intent

import (
	"fmt"
	"strconv"
	"strings"
)

// maxExpand bounds how many names one pattern may produce.
const maxExpand = 100_000

// Expand expands name ranges: "ethernet-1/{1..32}", "Ethernet{0..124..4}",
// "gpu{01..16}" (zero-padded), "spine{1..2}-{a..b}" is not supported (numbers
// only), and several groups multiply ("e{1..2}/{1..4}" gives 8 names, the
// first group varying slowest). A string without braces expands to itself.
func Expand(s string) ([]string, error) {
	i := strings.IndexByte(s, '{')
	if i < 0 {
		if strings.IndexByte(s, '}') >= 0 {
			return nil, fmt.Errorf("%q: unmatched '}'", s)
		}
		return []string{s}, nil
	}
	j := strings.IndexByte(s[i:], '}')
	if j < 0 {
		return nil, fmt.Errorf("%q: unmatched '{'", s)
	}
	j += i
	g, err := parseGroup(s[i+1 : j])
	if err != nil {
		return nil, fmt.Errorf("%q: %w", s, err)
	}
	if !strings.ContainsAny(s[j+1:], "{}") {
		// One group (the usual Ethernet{0..252..4}): each name is built in
		// one buffer and made a string once.
		out := make([]string, 0, g.n)
		var b []byte
		for k := range g.n {
			b = append(b[:0], s[:i]...)
			b = g.appendValue(b, k)
			b = append(b, s[j+1:]...)
			out = append(out, string(b))
		}
		return out, nil
	}
	nums := make([]string, 0, g.n)
	for k := range g.n {
		nums = append(nums, string(g.appendValue(nil, k)))
	}
	rest, err := Expand(s[j+1:])
	if err != nil {
		return nil, err
	}
	if len(nums)*len(rest) > maxExpand {
		return nil, fmt.Errorf("%q expands to more than %d names", s, maxExpand)
	}
	out := make([]string, 0, len(nums)*len(rest))
	for _, n := range nums {
		for _, r := range rest {
			out = append(out, s[:i]+n+r)
		}
	}
	return out, nil
}

// group is a parsed {first..last..step}: n values from lo by step, each
// zero-padded to width digits (0: not padded).
type group struct{ lo, step, n, width int }

// appendValue appends the group's k-th value as %0*d writes it.
func (g group) appendValue(b []byte, k int) []byte {
	v := g.lo + k*g.step
	for d := digits(v); d < g.width; d++ {
		b = append(b, '0')
	}
	return strconv.AppendInt(b, int64(v), 10)
}

func digits(v int) int {
	d := 1
	for v >= 10 {
		v /= 10
		d++
	}
	return d
}

func parseGroup(g string) (group, error) {
	parts := strings.Split(g, "..")
	if len(parts) != 2 && len(parts) != 3 {
		return group{}, fmt.Errorf("range {%s}: want {first..last} or {first..last..step}", g)
	}
	lo, err1 := strconv.Atoi(parts[0])
	hi, err2 := strconv.Atoi(parts[1])
	step := 1
	var err3 error
	if len(parts) == 3 {
		step, err3 = strconv.Atoi(parts[2])
	}
	if err1 != nil || err2 != nil || err3 != nil || lo < 0 || hi < 0 || step <= 0 {
		return group{}, fmt.Errorf("range {%s}: bounds and step must be non-negative integers (step > 0)", g)
	}
	if hi < lo {
		return group{}, fmt.Errorf("range {%s}: last is smaller than first", g)
	}
	// Count the values without overflowing: (hi-lo)/step+1 wraps for
	// {0..MaxInt64}, and v += step wraps past hi near the top of the range.
	n := (hi-lo)/step + 1
	if n <= 0 || n > maxExpand {
		return group{}, fmt.Errorf("range {%s}: more than %d values", g, maxExpand)
	}
	width := 0
	if len(parts[0]) > 1 && parts[0][0] == '0' {
		width = len(parts[0])
	}
	return group{lo: lo, step: step, n: n, width: width}, nil
}

// NaturalLess orders strings with their runs of digits compared as
// numbers: "ethernet-1/2" before "ethernet-1/10", "links[8]" before
// "links[10]". Errors, findings, switches and ports are sorted by it.
func NaturalLess(a, b string) bool { return naturalLess(a, b) }

// sortedIndex finds name among n names in natural order (naturalLess), or
// returns -1.
func sortedIndex(n int, at func(int) string, name string) int {
	lo, hi := 0, n // the first name not before name is in [lo, hi]
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if naturalLess(at(m), name) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	for i := lo; i < n && !naturalLess(name, at(i)); i++ { // names equal in natural order ("e1", "e01")
		if at(i) == name {
			return i
		}
	}
	return -1
}

// naturalLess orders "ethernet-1/2" before "ethernet-1/10".
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		ad, bd := isDigit(a[0]), isDigit(b[0])
		if ad && bd {
			i, j := digitsEnd(a), digitsEnd(b)
			na, nb := strings.TrimLeft(a[:i], "0"), strings.TrimLeft(b[:j], "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			a, b = a[i:], b[j:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func digitsEnd(s string) int {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}
