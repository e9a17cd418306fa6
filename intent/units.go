package intent

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseSize parses a byte size: "19456", "150KB" (decimal, 150000), "1.5MB",
// "64KiB" (binary), "2GB", "100B". Decimal units are SI as switch vendors
// write ECN thresholds (NVIDIA's 150 KB = 150,000 B).
func ParseSize(s string) (int64, error) {
	num, unit := splitUnit(s)
	mult := map[string]float64{
		"": 1, "b": 1,
		"kb": 1e3, "mb": 1e6, "gb": 1e9,
		"k": 1e3, "m": 1e6, "g": 1e9,
		"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30,
	}
	m, ok := mult[strings.ToLower(unit)]
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit %q (use B, KB, MB, GB, KiB, MiB, GiB)", s, unit)
	}
	return scale(s, num, m, math.MaxInt64)
}

// ParseRate parses a line rate in bits/s: "100G", "400G", "25Gbps", "10M", "1.6T".
func ParseRate(s string) (int64, error) {
	num, unit := splitUnit(s)
	u := strings.TrimSuffix(strings.TrimSuffix(strings.ToLower(unit), "bps"), "b/s")
	mult := map[string]float64{"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}
	m, ok := mult[u]
	if !ok || (unit == "" && num != "0") {
		return 0, fmt.Errorf("rate %q: want a number with a unit such as 25G, 100G, 400G or 800G", s)
	}
	return scale(s, num, m, 10e12)
}

// ParseLength parses a cable length in metres: "3m", "100m", "0.5m", "2km", "150cm".
func ParseLength(s string) (float64, error) {
	num, unit := splitUnit(s)
	mult := map[string]float64{"m": 1, "km": 1000, "cm": 0.01}
	m, ok := mult[strings.ToLower(unit)]
	if !ok {
		return 0, fmt.Errorf("length %q: want a number with a unit: m, km or cm (e.g. 3m, 100m)", s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, fmt.Errorf("length %q: not a non-negative number", s)
	}
	v := f * m
	if v > 100_000 {
		return 0, fmt.Errorf("length %q: longer than 100 km", s)
	}
	return v, nil
}

// ParsePercent parses "50%" or "50" into 50. Fractions are allowed ("12.5%").
func ParsePercent(s string) (float64, error) {
	t := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("percentage %q: not a number", s)
	}
	if f < 0 || f > 100 {
		return 0, fmt.Errorf("percentage %q: out of range 0-100", s)
	}
	return f, nil
}

// ParseDuration parses a duration with a unit ("200ms", "1.5s", "10us").
func ParseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("duration %q: want a number with a unit such as 100ms, 2s or 1m", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("duration %q: negative", s)
	}
	return d, nil
}

func splitUnit(s string) (num, unit string) {
	s = strings.TrimSpace(s)
	i := len(s)
	for i > 0 {
		c := s[i-1]
		if (c >= '0' && c <= '9') || c == '.' {
			break
		}
		i--
	}
	return strings.TrimSpace(s[:i]), strings.TrimSpace(s[i:])
}

func scale(orig, num string, mult float64, max float64) (int64, error) {
	if num == "" {
		return 0, fmt.Errorf("%q: missing number", orig)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, fmt.Errorf("%q: not a non-negative number", orig)
	}
	v := f * mult
	// float64(math.MaxInt64) rounds up to 2^63, which int64 cannot hold:
	// converting it would wrap to a negative size.
	if v > max || v >= 1<<63 {
		return 0, fmt.Errorf("%q: too large", orig)
	}
	if v != math.Trunc(v) {
		return 0, fmt.Errorf("%q: not a whole number of units of 1", orig)
	}
	return int64(v), nil
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
