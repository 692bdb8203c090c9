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
//
// A raw scope's attributes are attributes of every one of its records,
// carried once instead of on each (the stdout receiver puts a stream's
// log.iostream there, for a batch's records of that stream: on each record
// it cost pdata two allocations and the exporter a comparison per record).
// The exporter writes them in each event's `attributes` before the
// record's own (a record's own attribute of the same key wins), and a
// component that reads a record's attributes reads them too (Attribute;
// the sampling processor's rules do). The records of a raw scope are
// otherwise ordinary: a component that adds attributes adds them to the
// record, and one that copies a record to another scope copies the scope's
// attributes with it (as the exporter's batcher does).
//
// A body may hold raw newlines between the object's tokens, which the
// exporter turns into spaces (an event is one NDJSON line), unless its scope
// is named OneLineScopeName: the receiver says so when the transport cut
// its lines at every newline (stdin, CRI and raw files) or it found none in
// the batch's JSON lines (Fluent Forward, docker json-file), and the
// exporter then does not look for any.
package rawevent

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// ScopeName names the instrumentation scope that marks raw-event records.
const ScopeName = "sidecar/rawevent"

// OneLineScopeName marks raw-event records whose bodies hold no newline.
const OneLineScopeName = "sidecar/rawevent/oneline"

// IsRawScope reports whether the records of sl carry raw JSON event bodies.
func IsRawScope(sl plog.ScopeLogs) bool {
	name := sl.Scope().Name()
	return name == ScopeName || name == OneLineScopeName
}

// IsOneLineScope reports whether the records of sl carry raw JSON event
// bodies that hold no newline.
func IsOneLineScope(sl plog.ScopeLogs) bool { return sl.Scope().Name() == OneLineScopeName }

// MarkRawScope marks sl so that its records are treated as raw events.
func MarkRawScope(sl plog.ScopeLogs) { sl.Scope().SetName(ScopeName) }

// MarkOneLineScope marks sl so that its records are treated as raw events
// whose bodies hold no newline.
func MarkOneLineScope(sl plog.ScopeLogs) { sl.Scope().SetName(OneLineScopeName) }

// Shared is the attributes every record of sl carries besides its own:
// its scope's when sl is a raw scope, else none (an empty Map, which ok
// reports as false).
func Shared(sl plog.ScopeLogs) (attrs pcommon.Map, ok bool) {
	if !IsRawScope(sl) {
		return pcommon.Map{}, false
	}
	attrs = sl.Scope().Attributes()
	return attrs, attrs.Len() > 0
}
