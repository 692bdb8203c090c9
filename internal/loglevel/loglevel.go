// Package loglevel is the one table of log level names: the names loggers
// write, the OpenTelemetry severity number each one stands for, the name
// sidecar writes for a severity number, and which levels are errors. The
// stdout decoder, the Axiom exporter and the sampler all read levels here.
package loglevel

import "go.opentelemetry.io/collector/pdata/plog"

// names are the level names sidecar writes, one per range of four severity
// numbers in the OpenTelemetry log data model (trace = 1-4 ... fatal = 21-24).
var names = [...]string{"trace", "debug", "info", "warn", "error", "fatal"}

// lookup maps a lowercase level name from the common Go, Node and
// syslog-style loggers to a static copy of the name and its severity.
func lookup(lower string) (static string, sev plog.SeverityNumber, ok bool) {
	switch lower {
	case "trace":
		return "trace", plog.SeverityNumberTrace, true
	case "silly":
		return "silly", plog.SeverityNumberTrace, true
	case "debug":
		return "debug", plog.SeverityNumberDebug, true
	case "verbose":
		return "verbose", plog.SeverityNumberDebug, true
	case "info":
		return "info", plog.SeverityNumberInfo, true
	case "information":
		return "information", plog.SeverityNumberInfo, true
	case "informational":
		return "informational", plog.SeverityNumberInfo, true
	case "http":
		return "http", plog.SeverityNumberInfo, true
	case "notice":
		return "notice", plog.SeverityNumberInfo, true
	case "warn":
		return "warn", plog.SeverityNumberWarn, true
	case "warning":
		return "warning", plog.SeverityNumberWarn, true
	case "error":
		return "error", plog.SeverityNumberError, true
	case "err":
		return "err", plog.SeverityNumberError, true
	case "fatal":
		return "fatal", plog.SeverityNumberFatal, true
	case "panic":
		return "panic", plog.SeverityNumberFatal, true
	case "dpanic":
		return "dpanic", plog.SeverityNumberFatal, true
	case "critical":
		return "critical", plog.SeverityNumberFatal, true
	case "crit":
		return "crit", plog.SeverityNumberFatal, true
	case "alert":
		return "alert", plog.SeverityNumberFatal, true
	case "emerg":
		return "emerg", plog.SeverityNumberFatal, true
	case "emergency":
		return "emergency", plog.SeverityNumberFatal, true
	}
	return "", plog.SeverityNumberUnspecified, false
}

// Severity maps a lowercase level name to its severity. slog's "info+2"
// style offsets count as their base level. Unknown names are Unspecified.
func Severity(lower string) plog.SeverityNumber {
	for i := 0; i < len(lower); i++ {
		if lower[i] == '+' || lower[i] == '-' {
			lower = lower[:i]
			break
		}
	}
	_, sev, _ := lookup(lower)
	return sev
}

// Static returns a static string equal to lower when it is a known level
// name, so that keeping it does not allocate.
func Static(lower string) (string, bool) {
	s, _, ok := lookup(lower)
	return s, ok
}

// IsError reports whether the level name (any case) is an error or worse.
func IsError(name string) bool {
	var buf [16]byte
	if len(name) > len(buf) {
		return false // longer than any known name
	}
	lower := buf[:len(name)]
	for i := range len(name) {
		c := name[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	return Severity(string(lower)) >= plog.SeverityNumberError
}

// Name is the level name for a severity number: the name of its range, ""
// for Unspecified.
func Name(sev plog.SeverityNumber) string {
	switch {
	case sev <= plog.SeverityNumberUnspecified:
		return ""
	case sev >= plog.SeverityNumberFatal:
		return "fatal"
	}
	return names[(sev-1)/4]
}

// Range returns the severity numbers a level name sidecar writes (trace,
// debug, info, warn, error, fatal; lowercase) stands for.
func Range(name string) (lo, hi plog.SeverityNumber, ok bool) {
	for i, n := range names {
		if n == name {
			lo = plog.SeverityNumber(1 + 4*i)
			return lo, lo + 3, true
		}
	}
	return 0, 0, false
}

// Pino names a numeric pino/bunyan level exactly as @axiomhq/pino's
// mapLogLevel does (packages/pino/src/index.ts in axiomhq/axiom-js): each
// name covers the values up to and including its pino number (10, 20, ...
// 60); anything above 60 is "silent", with no severity.
func Pino(level float64) (string, plog.SeverityNumber) {
	for i, n := range names {
		if level <= float64(10*(i+1)) {
			return n, plog.SeverityNumber(1 + 4*i)
		}
	}
	return "silent", plog.SeverityNumberUnspecified
}
