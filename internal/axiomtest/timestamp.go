package axiomtest

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"
)

// isoLayouts are the timestamp strings auto-detected besides RFC3339 (Axiom
// documents "RFC3339, ISO 8601 or epoch"; the exact set it detects is
// undocumented). Layouts without a zone are read as UTC.
var isoLayouts = [...]string{
	time.RFC3339Nano, // also matches RFC3339 with or without fractions
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999Z0700",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02",
}

// parseTimestamp reads a timestamp field: a string in layout (when given)
// or an ISO 8601/RFC3339 form, or an epoch number (or numeric string) whose
// unit follows from its magnitude: s, ms, µs or ns.
func parseTimestamp(v any, layout string) (time.Time, bool) {
	switch v := v.(type) {
	case string:
		if layout != "" {
			t, err := time.Parse(layout, v)
			return t, err == nil
		}
		for _, l := range isoLayouts {
			if t, err := time.Parse(l, v); err == nil {
				return t, true
			}
		}
		return parseEpoch(v)
	case json.Number:
		return parseEpoch(string(v))
	case float64:
		return parseEpoch(strconv.FormatFloat(v, 'f', -1, 64))
	}
	return time.Time{}, false
}

// parseEpoch reads an epoch number exactly (no float rounding for decimal
// fractions). Magnitude picks the unit: below 1e11 seconds (1e11 s is the
// year 5138), below 1e14 ms, below 1e17 µs, else ns.
func parseEpoch(s string) (time.Time, bool) {
	intPart, frac, hasFrac := strings.Cut(s, ".")
	i, err := strconv.ParseInt(intPart, 10, 64)
	if err != nil || hasFrac && !allDigits(frac) || intPart == "" || intPart == "-" {
		return parseFloatEpoch(s)
	}
	unit := epochUnit(math.Abs(float64(i)))
	// The fraction of one unit, in ns: keep as many digits as the unit has ns.
	digits := int(math.Log10(float64(unit)) + 0.5)
	var fracNs int64
	for k := 0; k < digits; k++ {
		fracNs *= 10
		if k < len(frac) {
			fracNs += int64(frac[k] - '0')
		}
	}
	if strings.HasPrefix(intPart, "-") {
		fracNs = -fracNs
	}
	perSec := int64(time.Second) / unit
	return time.Unix(i/perSec, i%perSec*unit+fracNs), true
}

// parseFloatEpoch handles exponent forms such as 1.7e9.
func parseFloatEpoch(s string) (time.Time, bool) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return time.Time{}, false
	}
	ns := f * float64(epochUnit(math.Abs(f)))
	if math.Abs(ns) >= math.MaxInt64 {
		return time.Time{}, false
	}
	return time.Unix(0, int64(ns)), true
}

// epochUnit is the unit, in ns, of an epoch value of magnitude a.
func epochUnit(a float64) int64 {
	switch {
	case a < 1e11:
		return int64(time.Second)
	case a < 1e14:
		return int64(time.Millisecond)
	case a < 1e17:
		return int64(time.Microsecond)
	}
	return 1
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
