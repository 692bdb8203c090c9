// Package rawevent is the contract between the stdout receiver and the axiom
// exporter for log lines that are already JSON objects.
//
// Decoding a JSON line into a pcommon.Map only for the exporter to serialise
// it again costs more than everything else on the log path, so the receiver
// keeps the line's bytes instead: every log record in a ScopeLogs whose scope
// is named ScopeName has a string body holding exactly one complete JSON
// object (valid UTF-8), already shaped as the Axiom event it should become
// (`_time` set, `level` normalised). The exporter writes such a body as-is
// and adds only the record's attributes and resource. Any other component
// sees an ordinary log record with a JSON string body.
package rawevent

import "go.opentelemetry.io/collector/pdata/plog"

// ScopeName names the instrumentation scope that marks raw-event records.
const ScopeName = "sidecar/rawevent"

// IsRawScope reports whether the records of sl carry raw JSON event bodies.
func IsRawScope(sl plog.ScopeLogs) bool { return sl.Scope().Name() == ScopeName }

// MarkRawScope marks sl so that its records are treated as raw events.
func MarkRawScope(sl plog.ScopeLogs) { sl.Scope().SetName(ScopeName) }
