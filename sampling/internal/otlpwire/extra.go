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
// Filter drops the span's own attributes with that key.
func AppendStrAttr(b []byte, key, val string) []byte {
	value := lenField(1, len(val))
	b = appendKV(b, key, value)
	b = appendLen(b, 1, len(val))
	return append(b, val...)
}

// AppendDoubleAttr appends a Span attribute (field 9) with a double value
// to b, replacing the span's own as AppendStrAttr does.
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

// attrKeys calls fn with the key of every attribute field in extra.
func attrKeys(extra []byte, fn func(key []byte) bool) {
	for pos := 0; pos < len(extra); {
		f, npos, err := next(extra, pos)
		if err != nil {
			return
		}
		pos = npos
		if f.tag == 9<<3|wtLen && !fn(kvKey(extra[f.start:f.end])) {
			return
		}
	}
}

// kvKey returns a KeyValue message's key; like pdata, a later key field wins.
func kvKey(kv []byte) (key []byte) {
	for pos := 0; pos < len(kv); {
		f, npos, err := next(kv, pos)
		if err != nil {
			return key
		}
		pos = npos
		if f.tag == 1<<3|wtLen {
			key = kv[f.start:f.end]
		}
	}
	return key
}

// hasAttrOf reports whether the span has an attribute that extra sets.
func (s *Span) hasAttrOf(extra []byte) bool {
	if s.attrs == nil {
		return false
	}
	found := false
	attrKeys(extra, func(key []byte) bool {
		_, found = s.Attr(string(key))
		return !found
	})
	return found
}

// appendWithoutAttrsOf appends the Span message span to b without the
// attributes whose keys extra sets.
func appendWithoutAttrsOf(b, span, extra []byte) []byte {
	for pos := 0; pos < len(span); {
		hdr := pos
		f, npos, err := next(span, pos)
		if err != nil {
			return append(b, span[hdr:]...) // malformed: pdata rejects it later
		}
		pos = npos
		if f.tag == 9<<3|wtLen {
			key := kvKey(span[f.start:f.end])
			replaced := false
			attrKeys(extra, func(k []byte) bool {
				replaced = string(k) == string(key)
				return !replaced
			})
			if replaced {
				continue
			}
		}
		b = append(b, span[hdr:pos]...)
	}
	return b
}

// AppendBoolAttr appends a Span attribute (field 9) with a bool value to b,
// replacing the span's own as AppendStrAttr does.
func AppendBoolAttr(b []byte, key string, val bool) []byte {
	b = appendKV(b, key, 2)
	b = appendTag(b, 2, wtVarint)
	if val {
		return append(b, 1)
	}
	return append(b, 0)
}
