package queuedlogs

import (
	"encoding/binary"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// The form's writer, as the axiom exporter ran it until it queued events
// instead: the tests read what it writes.

// Marshal returns ld in this form, or false when a record is not plain
// (a body or an attribute that is not a string).
func Marshal(ld plog.Logs) ([]byte, bool) {
	size, ok := plainSize(ld)
	if !ok {
		return nil, false
	}
	var skeleton plog.ProtoMarshaler
	shape, err := skeleton.MarshalLogs(withoutRecords(ld))
	if err != nil {
		return nil, false
	}
	b := make([]byte, 0, len(Magic)+uvarintLen(len(shape))+len(shape)+size)
	b = append(b, Magic...)
	b = binary.AppendUvarint(b, uint64(len(shape)))
	b = append(b, shape...)
	rls := ld.ResourceLogs()
	for i := range rls.Len() {
		sls := rls.At(i).ScopeLogs()
		for j := range sls.Len() {
			lrs := sls.At(j).LogRecords()
			b = binary.AppendUvarint(b, uint64(lrs.Len()))
			for k := range lrs.Len() {
				b = appendRecord(b, lrs.At(k))
			}
		}
	}
	return b, true
}

// plainSize is at most what ld's records take in this form (it counts a
// trace and span id for every record; Marshal sizes its buffer with it, so
// it follows appendRecord's fields), and whether they are all plain.
func plainSize(ld plog.Logs) (int, bool) {
	size := 0
	rls := ld.ResourceLogs()
	for i := range rls.Len() {
		sls := rls.At(i).ScopeLogs()
		for j := range sls.Len() {
			lrs := sls.At(j).LogRecords()
			size += uvarintLen(lrs.Len())
			for k := range lrs.Len() {
				lr := lrs.At(k)
				body := lr.Body()
				if body.Type() != pcommon.ValueTypeStr {
					return 0, false
				}
				size += 8 + 8 + uvarintLen(int(uint32(lr.SeverityNumber()))) + uvarintLen(int(lr.Flags())) +
					uvarintLen(int(lr.DroppedAttributesCount())) + 1 + 16 + 8 +
					stringLen(lr.SeverityText()) + stringLen(lr.EventName()) + stringLen(body.Str())
				attrs := lr.Attributes()
				size += uvarintLen(attrs.Len())
				for key, v := range attrs.All() {
					if v.Type() != pcommon.ValueTypeStr {
						return 0, false
					}
					size += stringLen(key) + stringLen(v.Str())
				}
			}
		}
	}
	return size, true
}

func uvarintLen(n int) int {
	size := 1
	for ; n >= 0x80; n >>= 7 {
		size++
	}
	return size
}

func stringLen(s string) int { return uvarintLen(len(s)) + len(s) }

// withoutRecords is ld's resources and scopes, without the records.
func withoutRecords(ld plog.Logs) plog.Logs {
	out := plog.NewLogs()
	rls := ld.ResourceLogs()
	out.ResourceLogs().EnsureCapacity(rls.Len())
	for i := range rls.Len() {
		rl, orl := rls.At(i), out.ResourceLogs().AppendEmpty()
		orl.SetSchemaUrl(rl.SchemaUrl())
		rl.Resource().CopyTo(orl.Resource())
		sls := rl.ScopeLogs()
		orl.ScopeLogs().EnsureCapacity(sls.Len())
		for j := range sls.Len() {
			sl, osl := sls.At(j), orl.ScopeLogs().AppendEmpty()
			osl.SetSchemaUrl(sl.SchemaUrl())
			sl.Scope().CopyTo(osl.Scope())
		}
	}
	return out
}

func appendRecord(b []byte, lr plog.LogRecord) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(lr.Timestamp()))
	b = binary.LittleEndian.AppendUint64(b, uint64(lr.ObservedTimestamp()))
	b = binary.AppendUvarint(b, uint64(uint32(lr.SeverityNumber())))
	b = binary.AppendUvarint(b, uint64(lr.Flags()))
	b = binary.AppendUvarint(b, uint64(lr.DroppedAttributesCount()))
	tid, sid := lr.TraceID(), lr.SpanID()
	var ids byte
	if !tid.IsEmpty() {
		ids |= hasTraceID
	}
	if !sid.IsEmpty() {
		ids |= hasSpanID
	}
	b = append(b, ids)
	if ids&hasTraceID != 0 {
		b = append(b, tid[:]...)
	}
	if ids&hasSpanID != 0 {
		b = append(b, sid[:]...)
	}
	b = appendString(b, lr.SeverityText())
	b = appendString(b, lr.EventName())
	b = appendString(b, lr.Body().Str())
	attrs := lr.Attributes()
	b = binary.AppendUvarint(b, uint64(attrs.Len()))
	for k, v := range attrs.All() {
		b = appendString(appendString(b, k), v.Str())
	}
	return b
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}
