// Package recordsize counts a log record's protobuf size (what
// plog.ProtoMarshaler's LogRecordSize gives, and what a disk queue stores)
// from its fields, for the records the stdout receiver makes most: a string
// body and no attributes (stdin's and files' lines), or string attributes
// (Forward's stream on each record: StrAttribute). The axiom exporter
// weighs every record by its protobuf; pdata's sizer reaches the body's
// size through two calls and a type switch on its oneof, and tests the
// trace and span ids through two more. This is one call: 269 -> 228
// instructions per weighed pino record in BenchmarkWeighPinoLines
// (valgrind). The decoder's tests hold it to pdata's sizer on the records
// the decoder makes, and this package's on every field.
package recordsize

import (
	"math/bits"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// StrBody is lr's protobuf size, exactly as pdata counts it, for a record
// whose body is a string of n bytes and which has no attributes (the
// caller has read both). Fields are sized as the OTLP LogRecord message
// lays them out; every field number is below 16, so every tag is one byte.
func StrBody(lr plog.LogRecord, n int) int {
	value := 1 + varint(uint64(n)) + n // AnyValue.string_value, written even when empty
	size := 1 + varint(uint64(value)) + value
	if lr.Timestamp() != 0 {
		size += 1 + 8 // fixed64
	}
	if lr.ObservedTimestamp() != 0 {
		size += 1 + 8
	}
	if sev := lr.SeverityNumber(); sev != 0 {
		size += 1 + varint(uint64(sev)) // an enum: a negative one takes ten bytes
	}
	if s := lr.SeverityText(); s != "" {
		size += stringField(s)
	}
	if s := lr.EventName(); s != "" {
		size += stringField(s)
	}
	if d := lr.DroppedAttributesCount(); d != 0 {
		size += 1 + varint(uint64(d))
	}
	if lr.Flags() != 0 {
		size += 1 + 4 // fixed32
	}
	// pdata counts an empty trace or span id as a field of no bytes. The
	// ids are compared here: their IsEmpty is a call.
	size += 2 + 2
	if tid := lr.TraceID(); tid != (pcommon.TraceID{}) {
		size += len(tid)
	}
	if sid := lr.SpanID(); sid != (pcommon.SpanID{}) {
		size += len(sid)
	}
	return size
}

// StrAttribute is what an attribute with a string value adds to a
// record's protobuf size, exactly as pdata counts it: StrBody plus this
// for each attribute is the size of a record with a string body and
// string attributes. (pdata also counts a KeyValue's key_strindex, for
// profiles' dictionaries, which its API cannot set on a log record.)
func StrAttribute(key, value string) int {
	av := 1 + varint(uint64(len(value))) + len(value) // AnyValue.string_value, written even when empty
	kv := 1 + varint(uint64(av)) + av
	if key != "" {
		kv += stringField(key)
	}
	return 1 + varint(uint64(kv)) + kv
}

// stringField is the size of a length-delimited field holding s.
func stringField(s string) int { return 1 + varint(uint64(len(s))) + len(s) }

// varint is the length of x as a protobuf varint: seven bits a byte.
func varint(x uint64) int { return (bits.Len64(x|1) + 6) / 7 }
