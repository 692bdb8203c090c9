package decode

import (
	"math"
	"strconv"
	"time"
	"unsafe"
)

// bytesToString views b as a string without copying, for parsers that do
// not retain their argument.
func bytesToString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// epochUnit tells which unit a numeric timestamp is in, judged by magnitude:
// seconds (zap's float "ts", unix-time loggers), milliseconds (pino, Date.now),
// microseconds or nanoseconds. Any date between 1973 and 5138 is judged right.
type epochUnit int

const (
	unitSeconds epochUnit = iota
	unitMillis
	unitMicros
	unitNanos
)

func unitOf(f float64) epochUnit {
	a := math.Abs(f)
	switch {
	case a < 1e11:
		return unitSeconds
	case a < 1e14:
		return unitMillis
	case a < 1e17:
		return unitMicros
	}
	return unitNanos
}

// parseInt parses a JSON number that is a plain integer (pino's epoch
// milliseconds, numeric levels) without the cost of ParseFloat.
func parseInt(num []byte) (int64, bool) {
	neg := len(num) > 0 && num[0] == '-'
	if neg {
		num = num[1:]
	}
	if len(num) == 0 || len(num) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range num {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = 10*v + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// parseNumberTime parses a JSON number as an epoch timestamp.
func parseNumberTime(num []byte) (time.Time, epochUnit, bool) {
	if v, ok := parseInt(num); ok {
		switch u := unitOf(float64(v)); u {
		case unitSeconds:
			return time.Unix(v, 0), u, true
		case unitMillis:
			return time.UnixMilli(v), u, true
		case unitMicros:
			return time.UnixMicro(v), u, true
		default:
			return time.Unix(0, v), u, true
		}
	}
	f, err := strconv.ParseFloat(bytesToString(num), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return time.Time{}, 0, false
	}
	u := unitOf(f)
	var ns float64
	switch u {
	case unitSeconds:
		ns = f * 1e9
	case unitMillis:
		ns = f * 1e6
	case unitMicros:
		ns = f * 1e3
	default:
		ns = f
	}
	if ns > math.MaxInt64 || ns < math.MinInt64 {
		return time.Time{}, 0, false
	}
	// Whole seconds and fractions are split so float rounding does not blur
	// the nanoseconds of ordinary dates.
	if u == unitSeconds {
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(math.Round(frac*1e9))), u, true
	}
	return time.Unix(0, int64(ns)), u, true
}

// parseStringTime parses an RFC 3339 / ISO 8601 date-time (the format of
// bunyan, winston, logrus, slog and ECS) given as a JSON string with quotes.
func parseStringTime(v []byte) (time.Time, bool) {
	if len(v) < 2 || v[0] != '"' {
		return time.Time{}, false
	}
	s := bytesToString(v[1 : len(v)-1])
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}

// parseTimeValue parses a JSON value used as a timestamp.
func parseTimeValue(v []byte) (time.Time, epochUnit, bool) {
	if len(v) == 0 {
		return time.Time{}, 0, false
	}
	if v[0] == '"' {
		t, ok := parseStringTime(v)
		return t, unitMillis, ok
	}
	if v[0] == '-' || '0' <= v[0] && v[0] <= '9' {
		return parseNumberTime(v)
	}
	return time.Time{}, 0, false
}
