package otlpwire

import (
	"encoding/binary"
	"math"
)

// AppendTraceState appends a Span trace_state field (3) to b; as a later
// singular field it replaces the span's own.
func AppendTraceState(b []byte, ts string) []byte {
	b = appendLen(b, 3, len(ts))
	return append(b, ts...)
}

// AppendStrAttr appends a Span attribute (field 9) with a string value to b.
// Attributes are appended, not replaced: the span should not have key
// already, as pcommon.Map.Get returns the first one.
func AppendStrAttr(b []byte, key, val string) []byte {
	value := lenField(1, len(val))
	b = appendKV(b, key, value)
	b = appendLen(b, 1, len(val))
	return append(b, val...)
}

// AppendDoubleAttr appends a Span attribute (field 9) with a double value
// to b, with the same caveat as AppendStrAttr.
func AppendDoubleAttr(b []byte, key string, val float64) []byte {
	b = appendKV(b, key, 9)
	b = appendTag(b, 4, wtI64)
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(val))
}

// appendKV appends a Span attribute's headers up to its AnyValue's content,
// which is value bytes long.
func appendKV(b []byte, key string, value int) []byte {
	b = appendLen(b, 9, lenField(1, len(key))+lenField(2, value))
	b = appendLen(b, 1, len(key))
	b = append(b, key...)
	return appendLen(b, 2, value)
}
