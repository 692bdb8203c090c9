package decode

import (
	"strconv"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sidecarhq/sidecar/internal/loglevel"
)

// pinoLevel names a numeric pino/bunyan level as @axiomhq/pino does.
func pinoLevel(num []byte) (text string, sev plog.SeverityNumber, ok bool) {
	var f float64
	if v, ok := parseInt(num); ok {
		f = float64(v)
	} else {
		var err error
		if f, err = strconv.ParseFloat(bytesToString(num), 64); err != nil {
			return "", 0, false
		}
	}
	text, sev = loglevel.Pino(f)
	return text, sev, true
}

// levelText returns lower as a string, static for the known level names so
// setting SeverityText does not allocate.
func levelText(lower []byte) string {
	if s, ok := loglevel.Static(bytesToString(lower)); ok {
		return s
	}
	return string(lower)
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
