package axiomexporter

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sidecarhq/sidecar/internal/loglevel"
)

// This file turns log records into Axiom events, one NDJSON line each. It
// appends to a caller-owned []byte and never builds maps: the log path must
// stay cheap (see README.md for the mapping).

// eventScope is what the events of a scope's records take from the scope
// and its resource: whether the scope holds raw events, and one-line ones
// (see rawevent), the resource's attributes encoded as a JSON object, and a
// raw scope's attributes, which are its records' too (rawevent.Shared),
// encoded as one; each encoding is empty when there are none.
type eventScope struct {
	raw, oneLine bool
	resource     []byte
	shared       []byte
	sharedAttrs  pcommon.Map // what shared encodes, when it is not empty
	// head is appendHead's for the records of a raw scope without
	// attributes of their own, when it shares some or has a resource.
	head []byte
}

// appendEvent appends lr, a record of the scope sc, as one NDJSON line.
// attrs encodes a raw record's own attributes. now is the time used when
// the record carries no timestamp.
func appendEvent(b []byte, lr plog.LogRecord, sc *eventScope, attrs *attrsJSON, now time.Time) []byte {
	body := lr.Body()
	if sc.raw && body.Type() == pcommon.ValueTypeStr {
		if obj, ok := rawObject(body.Str()); ok {
			return appendRawEvent(b, obj, sc.oneLine, attrs.of(lr.Attributes(), sc), sc.resource)
		}
		// A raw record that breaks the contract still reaches Axiom, as a message.
	}
	return appendMappedEvent(b, lr, sc, now)
}

// appendRawEvent writes obj (a JSON object text) as-is, splicing the
// attributes and resource objects (encoded, or empty for none) in front of
// its first field. Unless oneLine vouches there is none, each raw newline in
// obj becomes a space.
func appendRawEvent(b []byte, obj string, oneLine bool, attrs, resource []byte) []byte {
	if len(attrs) == 0 && len(resource) == 0 {
		if oneLine { // appendOneLine's work, without the call
			return append(append(b, obj...), '\n')
		}
		return append(appendOneLine(b, obj, false), '\n')
	}
	return appendAfterHead(appendHead(b, attrs, resource), obj, oneLine)
}

// appendHead writes what appendRawEvent splices in front of a body's
// first member: '{' and the attributes and resource objects (either may be
// empty, not both), without a comma after them.
func appendHead(b []byte, attrs, resource []byte) []byte {
	b = append(b, '{')
	if len(attrs) > 0 {
		b = append(b, `"attributes":`...)
		b = append(b, attrs...)
	}
	if len(resource) > 0 {
		if len(attrs) > 0 {
			b = append(b, ',')
		}
		b = append(b, `"resource":`...)
		b = append(b, resource...)
	}
	return b
}

// appendAfterHead writes obj's members after a head (appendHead).
func appendAfterHead(b []byte, obj string, oneLine bool) []byte {
	rest := obj[1:] // after the object's '{'
	if !isEmptyObjectRest(rest) {
		b = append(b, ',')
	} else {
		rest = "}"
	}
	return append(appendOneLine(b, rest, oneLine), '\n')
}

// rawObject trims JSON whitespace around s and reports whether what is left
// looks like an object. The body is trusted to be valid JSON (the rawevent
// contract); this only guards the splice against an obviously broken body.
// A body as the receiver writes it, the object alone, is told at once (this
// much is inlined); one with whitespace around it is trimmed.
func rawObject(s string) (string, bool) {
	if isBareObject(s) {
		return s, true
	}
	return trimmedObject(s)
}

// isBareObject reports whether s looks like an object with nothing around
// it, as the receiver writes raw bodies.
func isBareObject(s string) bool { return len(s) >= 2 && s[0] == '{' && s[len(s)-1] == '}' }

func trimmedObject(s string) (string, bool) {
	for len(s) > 0 && isJSONSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isJSONSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s, isBareObject(s)
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// isEmptyObjectRest reports whether rest, the text after an object's '{', is
// only whitespace and the closing '}'.
func isEmptyObjectRest(rest string) bool {
	for i := 0; i < len(rest); i++ {
		if !isJSONSpace(rest[i]) {
			return rest[i] == '}'
		}
	}
	return false
}

// appendOneLine appends s with raw newlines (only possible as whitespace
// between JSON tokens) turned into spaces, so each event stays one line;
// known says s holds none (a one-line scope), and then nothing is looked for.
func appendOneLine(b []byte, s string, known bool) []byte {
	start := len(b)
	b = append(b, s...)
	if known {
		return b
	}
	for i := bytes.IndexByte(b[start:], '\n'); i >= 0; i = bytes.IndexByte(b[start:], '\n') {
		b[start+i] = ' '
	}
	return b
}

// appendMappedEvent builds an event from an ordinary log record. A body that
// is a map contributes its fields at the top level and wins over every field
// the exporter would add.
func appendMappedEvent(b []byte, lr plog.LogRecord, sc *eventScope, now time.Time) []byte {
	var has struct{ time, level, traceID, spanID, attributes, resource bool }
	b = append(b, '{')
	body := lr.Body()
	if body.Type() == pcommon.ValueTypeMap {
		for k, v := range body.Map().All() {
			switch k {
			case "_time":
				has.time = true
			case "level":
				has.level = true
			case "trace_id":
				has.traceID = true
			case "span_id":
				has.spanID = true
			case "attributes":
				has.attributes = true
			case "resource":
				has.resource = true
			}
			b = appendComma(b)
			b = appendString(b, k)
			b = append(b, ':')
			b = appendValue(b, v)
		}
	} else if !isEmptyValue(body) {
		b = appendComma(b)
		b = append(b, `"message":`...)
		b = appendValue(b, body)
	}
	if !has.time {
		b = appendComma(b)
		b = append(b, `"_time":`...)
		b = appendTime(b, eventTime(lr, now))
	}
	if !has.level {
		if level := levelOf(lr); level != "" {
			b = appendComma(b)
			b = append(b, `"level":`...)
			b = appendString(b, level)
		}
	}
	if tid := lr.TraceID(); !has.traceID && !tid.IsEmpty() {
		b = appendComma(b)
		b = append(b, `"trace_id":"`...)
		b = hex.AppendEncode(b, tid[:])
		b = append(b, '"')
	}
	if sid := lr.SpanID(); !has.spanID && !sid.IsEmpty() {
		b = appendComma(b)
		b = append(b, `"span_id":"`...)
		b = hex.AppendEncode(b, sid[:])
		b = append(b, '"')
	}
	if attrs := lr.Attributes(); !has.attributes && (attrs.Len() > 0 || len(sc.shared) > 0) {
		b = appendComma(b)
		b = append(b, `"attributes":`...)
		b = appendAttributes(b, attrs, sc)
	}
	if !has.resource && len(sc.resource) > 0 {
		b = appendComma(b)
		b = append(b, `"resource":`...)
		b = append(b, sc.resource...)
	}
	return append(b, '}', '\n')
}

// appendComma separates object members: it writes ',' unless b ends with
// the object's opening '{'.
func appendComma(b []byte) []byte {
	if b[len(b)-1] == '{' {
		return b
	}
	return append(b, ',')
}

func isEmptyValue(v pcommon.Value) bool {
	switch v.Type() {
	case pcommon.ValueTypeEmpty:
		return true
	case pcommon.ValueTypeStr:
		return v.Str() == ""
	case pcommon.ValueTypeBytes:
		return v.Bytes().Len() == 0
	}
	return false
}

// eventTime is the record's timestamp, else its observed timestamp, else now.
func eventTime(lr plog.LogRecord, now time.Time) time.Time {
	if ts := lr.Timestamp(); ts != 0 {
		return ts.AsTime()
	}
	if ts := lr.ObservedTimestamp(); ts != 0 {
		return ts.AsTime()
	}
	return now
}

// appendTime writes epoch milliseconds (what @axiomhq/pino sends) when t is
// a whole millisecond, else an RFC3339Nano string so no precision is lost.
func appendTime(b []byte, t time.Time) []byte {
	ns := t.UnixNano()
	if ns%int64(time.Millisecond) == 0 {
		return strconv.AppendInt(b, ns/int64(time.Millisecond), 10)
	}
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// levelOf is the severity text, else the name of the severity number's
// range, else "".
func levelOf(lr plog.LogRecord) string {
	if s := lr.SeverityText(); s != "" {
		return s
	}
	return loglevel.Name(lr.SeverityNumber())
}

// appendAttributes writes the attributes of a record of the scope sc, own
// being its own, as a JSON object: the scope's shared ones, then its own,
// one of which replaces a shared one of the same key in its place (as if
// the record carried the shared ones and its own were put over them).
func appendAttributes(b []byte, own pcommon.Map, sc *eventScope) []byte {
	if own.Len() == 0 {
		return append(b, sc.shared...)
	}
	if len(sc.shared) == 0 {
		return appendMap(b, own)
	}
	b = append(b, '{')
	for k, v := range sc.sharedAttrs.All() {
		if mine, ok := own.Get(k); ok {
			v = mine
		}
		b = appendMember(b, k, v)
	}
	for k, v := range own.All() {
		if _, shared := sc.sharedAttrs.Get(k); !shared {
			b = appendMember(b, k, v)
		}
	}
	b[len(b)-1] = '}' // b ends with a member's comma: sc shares one at least
	return b
}

// appendMember writes k and v as an object member and a comma.
func appendMember(b []byte, k string, v pcommon.Value) []byte {
	b = appendString(b, k)
	b = append(b, ':')
	return append(appendValue(b, v), ',')
}

// attrsJSON is the JSON of the last attributes it encoded, kept while the
// next record's are the same: the records of a batch mostly carry the same
// attributes (a sampling rule's weight and name on each), and comparing a
// map's string members with the last one's costs less than encoding them
// again.
type attrsJSON struct {
	last   [][2]string // after own(m): m's members when all are strings, else none
	json   []byte
	merged []byte // of's, for a record with its own attributes in a scope that shares some
}

// of is appendAttributes(nil, own, sc), valid until the next call.
func (c *attrsJSON) of(own pcommon.Map, sc *eventScope) []byte {
	if own.Len() == 0 {
		return sc.shared
	}
	if len(sc.shared) == 0 {
		return c.own(own)
	}
	c.merged = appendAttributes(c.merged[:0], own, sc)
	return c.merged
}

// own is appendMap(nil, m), valid until the next call.
func (c *attrsJSON) own(m pcommon.Map) []byte {
	if c.same(m) {
		return c.json
	}
	c.json = appendMap(c.json[:0], m)
	c.last = c.last[:0]
	for k, v := range m.All() {
		if v.Type() != pcommon.ValueTypeStr {
			c.forgetMembers() // not forget: c.json is the answer
			break
		}
		c.last = append(c.last, [2]string{k, v.Str()})
	}
	return c.json
}

// same reports whether m's members are the last map's, in order. The
// strings are compared one by one (comparing [2]strings is a call), and a
// value's type only when its Str is "", which a value that is not a
// string also gives (Type is a switch).
func (c *attrsJSON) same(m pcommon.Map) bool {
	if len(c.last) == 0 || m.Len() != len(c.last) {
		return false
	}
	i := 0
	for k, v := range m.All() {
		s := v.Str()
		if k != c.last[i][0] || s != c.last[i][1] || s == "" && v.Type() != pcommon.ValueTypeStr {
			return false
		}
		i++
	}
	return true
}

// forget drops the last map, whose strings may hold a batch's memory, and
// a JSON buffer too large to keep.
func (c *attrsJSON) forget() {
	c.forgetMembers()
	if cap(c.json) > maxPooledBuffer {
		c.json = nil
	}
	if cap(c.merged) > maxPooledBuffer {
		c.merged = nil
	}
}

// forgetMembers drops the last map's members: the next map is encoded.
func (c *attrsJSON) forgetMembers() {
	clear(c.last)
	c.last = c.last[:0]
}

// appendMap writes m as a JSON object.
func appendMap(b []byte, m pcommon.Map) []byte {
	b = append(b, '{')
	first := true
	for k, v := range m.All() {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendString(b, k)
		b = append(b, ':')
		b = appendValue(b, v)
	}
	return append(b, '}')
}

// appendValue writes v as JSON, keeping its type: ints stay integers and
// doubles always carry a '.' or an exponent so Axiom stores them as floats.
func appendValue(b []byte, v pcommon.Value) []byte {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return appendString(b, v.Str())
	case pcommon.ValueTypeInt:
		return strconv.AppendInt(b, v.Int(), 10)
	case pcommon.ValueTypeDouble:
		return appendFloat(b, v.Double())
	case pcommon.ValueTypeBool:
		return strconv.AppendBool(b, v.Bool())
	case pcommon.ValueTypeMap:
		return appendMap(b, v.Map())
	case pcommon.ValueTypeSlice:
		b = append(b, '[')
		s := v.Slice()
		for i := 0; i < s.Len(); i++ {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, s.At(i))
		}
		return append(b, ']')
	case pcommon.ValueTypeBytes:
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, v.Bytes().AsRaw())
		return append(b, '"')
	default:
		return append(b, "null"...)
	}
}

// appendFloat formats like encoding/json (NaN and ±Inf, which JSON cannot
// express, become null), adding ".0" to whole numbers.
func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 -> e-9, as encoding/json does.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
		return b
	}
	for _, c := range b[start:] {
		if c == '.' {
			return b
		}
	}
	return append(b, '.', '0')
}

const hexDigits = "0123456789abcdef"

// plainASCII marks the bytes a JSON string can hold without escaping.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendString writes s as a JSON string. Invalid UTF-8 becomes U+FFFD so
// that Axiom never rejects an event for its encoding.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if plainASCII[c] {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
