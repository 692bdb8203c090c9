package decode

import (
	"errors"
	"math"
	"strconv"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sidecarhq/sidecar/internal/jsontext"
	"github.com/sidecarhq/sidecar/internal/loglevel"
)

// jsLevel names a level value that is not a string as @axiomhq/pino's
// mapLogLevel does: `level <= 10` ... `level <= 60` in JavaScript, which
// compares null, false and [] as 0, true as 1, a one-number array as that
// number, and anything else (objects, other arrays) as NaN: "silent".
func jsLevel(v []byte) (text string, sev plog.SeverityNumber) {
	// pino's levels (10 ... 60) and most others are one or two digits.
	if len(v) <= 2 && '0' <= v[0] && v[0] <= '9' && (len(v) == 1 || '0' <= v[1] && v[1] <= '9') {
		n := v[0] - '0'
		if len(v) == 2 {
			n = 10*n + v[1] - '0'
		}
		l := &smallLevels[n]
		return l.name, l.sev
	}
	return loglevel.Pino(jsNumber(v))
}

// smallLevels holds loglevel.Pino's answer for 0 to 99.
var smallLevels = func() (ls [100]struct {
	name string
	sev  plog.SeverityNumber
}) {
	for i := range ls {
		ls[i].name, ls[i].sev = loglevel.Pino(float64(i))
	}
	return ls
}()

func jsNumber(v []byte) float64 {
	switch v[0] {
	case 'n', 'f':
		return 0
	case 't':
		return 1
	case '[':
		inner := v[1 : len(v)-1]
		i := jsontext.SkipSpace(inner, 0)
		if i == len(inner) {
			return 0
		}
		end, ok := jsontext.ValueEnd(inner, i)
		if !ok || jsontext.SkipSpace(inner, end) != len(inner) || !isNumber(inner[i]) {
			return math.NaN()
		}
		return jsNumber(inner[i:end])
	}
	if !isNumber(v[0]) {
		return math.NaN()
	}
	if n, ok := parseInt(v); ok {
		return float64(n)
	}
	f, err := strconv.ParseFloat(bytesToString(v), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) { // out of range is ±Inf or 0, as in JavaScript
		return math.NaN()
	}
	return f
}

func isNumber(c byte) bool { return c == '-' || '0' <= c && c <= '9' }

// stringLevel returns a string level's severity text (the level as written,
// static for the common names so it does not allocate) and its severity
// (by its lowercase name: slog's "INFO", "WARN+2").
func stringLevel(v []byte) (string, plog.SeverityNumber) {
	if !plainLevel(v) {
		s, _ := jsontext.AppendString(nil, v)
		return string(s), loglevel.Severity(string(appendLower(nil, s)))
	}
	written := v[1 : len(v)-1]
	var lowerBuf [32]byte
	lower := appendLower(lowerBuf[:0], written)
	sev := loglevel.Severity(bytesToString(lower))
	if s, ok := loglevel.Static(bytesToString(written)); ok {
		return s, sev
	}
	return string(written), sev
}

// plainLevel reports whether a JSON string value (quotes included) is short
// and free of escapes, so it can be lowercased byte by byte.
func plainLevel(v []byte) bool {
	if len(v) < 2 || len(v) > 34 || v[0] != '"' {
		return false
	}
	for _, c := range v[1 : len(v)-1] {
		if c == '\\' || c >= 0x80 {
			return false
		}
	}
	return true
}

func appendLower(dst, s []byte) []byte {
	for _, c := range s {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}
