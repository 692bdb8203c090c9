package decode

import (
	"strconv"

	"go.opentelemetry.io/collector/pdata/plog"
)

// Level names as Axiom receives them, and the OpenTelemetry severity for each.
var levelNames = [...]struct {
	text string
	sev  plog.SeverityNumber
}{
	{"trace", plog.SeverityNumberTrace},
	{"debug", plog.SeverityNumberDebug},
	{"info", plog.SeverityNumberInfo},
	{"warn", plog.SeverityNumberWarn},
	{"error", plog.SeverityNumberError},
	{"fatal", plog.SeverityNumberFatal},
	{"silent", plog.SeverityNumberUnspecified},
}

// pinoLevel maps a numeric pino/bunyan level exactly as @axiomhq/pino's
// mapLogLevel does (packages/pino/src/index.ts in axiomhq/axiom-js): each
// name covers the values up to and including its pino number (10, 20, ...
// 60), anything above 60 is "silent".
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
	i := len(levelNames) - 1
	for n := range len(levelNames) - 1 {
		if f <= float64(10*(n+1)) {
			i = n
			break
		}
	}
	return levelNames[i].text, levelNames[i].sev, true
}

// severityOf maps a lowercase level name from the common Go, Node and
// syslog-style loggers to an OpenTelemetry severity. slog's "info+2" style
// offsets count as their base level. Unknown names are Unspecified.
func severityOf(lower []byte) plog.SeverityNumber {
	for i, c := range lower {
		if c == '+' || c == '-' {
			lower = lower[:i]
			break
		}
	}
	switch string(lower) {
	case "trace", "silly":
		return plog.SeverityNumberTrace
	case "debug", "verbose":
		return plog.SeverityNumberDebug
	case "info", "information", "informational", "http", "notice":
		return plog.SeverityNumberInfo
	case "warn", "warning":
		return plog.SeverityNumberWarn
	case "error", "err":
		return plog.SeverityNumberError
	case "fatal", "panic", "dpanic", "critical", "crit", "alert", "emerg", "emergency":
		return plog.SeverityNumberFatal
	}
	return plog.SeverityNumberUnspecified
}

// canonicalText returns a static string for common level names so setting
// SeverityText does not allocate.
func canonicalText(lower []byte) string {
	switch string(lower) {
	case "trace":
		return "trace"
	case "debug":
		return "debug"
	case "info":
		return "info"
	case "warn":
		return "warn"
	case "warning":
		return "warning"
	case "error":
		return "error"
	case "fatal":
		return "fatal"
	case "panic":
		return "panic"
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
