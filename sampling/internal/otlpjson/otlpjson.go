// Package otlpjson turns an OTLP/JSON ExportTraceServiceRequest into the
// same request in protobuf, so that JSON spans are decided by the protobuf
// path's code (otlpwire.Filter and the sampler's wire view) before any of
// them becomes pdata: writing protobuf is a byte copy for most of a span,
// where building pdata allocates for every field.
//
// It reads the request as the OTLP specification's "JSON Protobuf Encoding"
// describes it, which is the proto3 JSON mapping with OTLP's exceptions:
//   - field names in lowerCamelCase, or the proto field names (snake_case),
//     as the proto3 mapping lets parsers accept;
//   - traceId, spanId and parentSpanId as hex strings, not base64 (either
//     case, without escapes; "" is the zero id);
//   - enums (kind, status code) as integers, or as their value names;
//   - 64-bit integers as decimal strings or as numbers, 32-bit ones too;
//     doubles as numbers or strings ("NaN", "Infinity");
//   - bytes values as base64 strings;
//   - unknown fields ignored (their values must still be valid JSON, with
//     numbers in a float64's range, as pdata checks);
//   - null for a message or repeated field is the empty message or list,
//     for a string the empty string.
//
// pdata's ptrace.JSONUnmarshaler is the oracle: fuzz_test.go holds the two
// to the same accepted requests and the same spans. Where they differ on
// text that is not JSON (pdata does not look past the request's object),
// this package rejects it.
package otlpjson

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/sidecarhq/sidecar/internal/jsontext"
)

// ErrSyntax is wrapped by every error for text that is not a valid request.
var ErrSyntax = errors.New("otlpjson: invalid OTLP/JSON trace request")

// Transcode appends to dst the protobuf encoding of the OTLP/JSON
// ExportTraceServiceRequest req. On error, dst's content is undefined.
func Transcode(dst, req []byte) ([]byte, error) {
	t := transcoder{src: req, out: dst}
	t.skipSpace()
	t.object(request)
	if t.err == nil {
		t.skipSpace()
		if t.pos != len(t.src) {
			t.fail("text after the request")
		}
	}
	return t.out, t.err
}

// transcoder reads src from pos and appends protobuf to out. The first
// error stops it: every reader returns at once when err is set.
type transcoder struct {
	src     []byte
	pos     int
	out     []byte
	err     error
	scratch []byte // an escaped key or value, decoded
	raw     []byte // a bytes value, decoded
}

func (t *transcoder) fail(what string) {
	if t.err == nil {
		t.err = fmt.Errorf("%w: %s at offset %d", ErrSyntax, what, t.pos)
	}
}

func (t *transcoder) skipSpace() { t.pos = skipSpace(t.src, t.pos) }

// skipSpace returns the index of the first byte from i on that is not
// whitespace; encoders mostly write none, so that byte is checked without
// a call.
func skipSpace(src []byte, i int) int {
	if i < len(src) && src[i] > ' ' {
		return i
	}
	return jsontext.SkipSpace(src, i)
}

// The messages, field by field, with their protobuf field numbers from
// opentelemetry-proto (trace/v1, common/v1, resource/v1). Each is a table
// that one reader (object) walks, in the order encoders write the fields:
// the reader tries the field after the last one matched first, so a member
// name usually costs one comparison.
var (
	request, resourceSpans, resource, entityRef, scopeSpans, scope, span, event, link,
	status, keyValue, anyValue, valueList, keyValueList messageType
)

// spanKinds and statusCodes are the enums' value names (trace/v1).
var (
	spanKinds = map[string]int32{
		"SPAN_KIND_UNSPECIFIED": 0, "SPAN_KIND_INTERNAL": 1, "SPAN_KIND_SERVER": 2,
		"SPAN_KIND_CLIENT": 3, "SPAN_KIND_PRODUCER": 4, "SPAN_KIND_CONSUMER": 5,
	}
	statusCodes = map[string]int32{"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}
)

func init() { // in init: the tables refer to each other (anyValue nests)
	request = numbered(msgs("resourceSpans", "resource_spans", 1, 3, &resourceSpans))
	resourceSpans = numbered(
		msg("resource", "", 1, 2, &resource),
		msgs("scopeSpans", "scope_spans", 2, 3, &scopeSpans),
		scalar("schemaUrl", "schema_url", 3, kString),
		msgs("deprecatedScopeSpans", "deprecated_scope_spans", 1000, 3, &scopeSpans),
	)
	resource = numbered(
		msgs("attributes", "", 1, 1, &keyValue),
		scalar("droppedAttributesCount", "dropped_attributes_count", 2, kUint32),
		msgs("entityRefs", "entity_refs", 3, 1, &entityRef),
	)
	entityRef = numbered(
		scalar("schemaUrl", "schema_url", 1, kString),
		scalar("type", "", 2, kString),
		scalar("idKeys", "id_keys", 3, kStrings),
		scalar("descriptionKeys", "description_keys", 4, kStrings),
	)
	scopeSpans = numbered(
		msg("scope", "", 1, 1, &scope),
		msgs("spans", "", 2, 2, &span),
		scalar("schemaUrl", "schema_url", 3, kString),
	)
	scope = numbered(
		scalar("name", "", 1, kString),
		scalar("version", "", 2, kString),
		msgs("attributes", "", 3, 1, &keyValue),
		scalar("droppedAttributesCount", "dropped_attributes_count", 4, kUint32),
	)
	span = numbered(
		scalar("traceId", "trace_id", 1, kTraceID),
		scalar("spanId", "span_id", 2, kSpanID),
		scalar("traceState", "trace_state", 3, kString),
		scalar("parentSpanId", "parent_span_id", 4, kSpanID),
		scalar("flags", "", 16, kFixed32),
		scalar("name", "", 5, kString),
		enum("kind", "", 6, spanKinds),
		scalar("startTimeUnixNano", "start_time_unix_nano", 7, kFixed64),
		scalar("endTimeUnixNano", "end_time_unix_nano", 8, kFixed64),
		msgs("attributes", "", 9, 1, &keyValue),
		scalar("droppedAttributesCount", "dropped_attributes_count", 10, kUint32),
		msgs("events", "", 11, 1, &event),
		scalar("droppedEventsCount", "dropped_events_count", 12, kUint32),
		msgs("links", "", 13, 1, &link),
		scalar("droppedLinksCount", "dropped_links_count", 14, kUint32),
		msg("status", "", 15, 1, &status),
	)
	event = numbered(
		scalar("timeUnixNano", "time_unix_nano", 1, kFixed64),
		scalar("name", "", 2, kString),
		msgs("attributes", "", 3, 1, &keyValue),
		scalar("droppedAttributesCount", "dropped_attributes_count", 4, kUint32),
	)
	link = numbered(
		scalar("traceId", "trace_id", 1, kTraceID),
		scalar("spanId", "span_id", 2, kSpanID),
		scalar("traceState", "trace_state", 3, kString),
		msgs("attributes", "", 4, 1, &keyValue),
		scalar("droppedAttributesCount", "dropped_attributes_count", 5, kUint32),
		scalar("flags", "", 6, kFixed32),
	)
	status = numbered(
		scalar("message", "", 2, kString),
		enum("code", "", 3, statusCodes),
	)
	keyValue = numbered(
		scalar("key", "", 1, kString),
		msg("value", "", 2, 1, &anyValue),
		scalar("keyStrindex", "key_strindex", 3, kInt32),
	)
	anyValue = numbered(
		scalar("stringValue", "string_value", 1, kString),
		scalar("boolValue", "bool_value", 2, kBool),
		scalar("intValue", "int_value", 3, kInt64),
		scalar("doubleValue", "double_value", 4, kDouble),
		msg("arrayValue", "array_value", 5, 1, &valueList),
		msg("kvlistValue", "kvlist_value", 6, 1, &keyValueList),
		scalar("bytesValue", "bytes_value", 7, kBytes),
		scalar("stringValueStrindex", "string_value_strindex", 8, kInt32),
	)
	valueList = numbered(msgs("values", "", 1, 1, &anyValue))
	keyValueList = numbered(msgs("values", "", 1, 1, &keyValue))
}

// messageType is a message's fields.
type messageType []field

// numbered sets each field's index.
func numbered(fields ...field) messageType {
	for i := range fields {
		f := &fields[i]
		f.index = uint8(i)
		f.written = `"` + f.name + `":`
		for j := 0; j < len(f.written) && j < 16; j++ {
			f.head[j/8] |= uint64(f.written[j]) << (j % 8 * 8)
			f.mask[j/8] |= 0xff << (j % 8 * 8)
		}
	}
	return fields
}

// field is one field of a message: its JSON names, its protobuf number and
// how its value is read and written.
type field struct {
	name      string // lowerCamelCase
	protoName string // the proto field name, which parsers also accept
	num       protowire.Number
	kind      kind
	index     uint8            // in its message
	reserve   int              // kMessage(s): bytes left for the length (see begin)
	msg       *messageType     // kMessage(s)
	enum      map[string]int32 // kEnum: the value names

	// written is "name": as encoders write it; head is its first 16 bytes
	// as two little-endian words, with mask for the bytes that count.
	written string
	head    [2]uint64
	mask    [2]uint64
}

type kind uint8

const (
	kMessage  kind = iota
	kMessages      // repeated
	kString
	kStrings // repeated
	kTraceID
	kSpanID
	kBytes
	kBool
	kInt32
	kInt64
	kUint32
	kFixed32
	kFixed64
	kDouble
	kEnum
)

// scalar, msg, msgs and enum describe fields; protoName "" means the proto
// name is name.
func scalar(name, protoName string, num protowire.Number, k kind) field {
	if protoName == "" {
		protoName = name
	}
	return field{name: name, protoName: protoName, num: num, kind: k}
}

func msg(name, protoName string, num protowire.Number, reserve int, m *messageType) field {
	f := scalar(name, protoName, num, kMessage)
	f.reserve, f.msg = reserve, m
	return f
}

func msgs(name, protoName string, num protowire.Number, reserve int, m *messageType) field {
	f := msg(name, protoName, num, reserve, m)
	f.kind = kMessages
	return f
}

func enum(name, protoName string, num protowire.Number, values map[string]int32) field {
	f := scalar(name, protoName, num, kEnum)
	f.enum = values
	return f
}

// object reads the object (or null) at pos as message m, writing its
// fields. Positions are kept in locals between the calls that read values:
// this loop runs for every member of the request.
func (t *transcoder) object(m messageType) {
	if t.err != nil {
		return
	}
	src, pos := t.src, t.pos
	if pos >= len(src) || src[pos] != '{' {
		if !t.literal("null") {
			t.fail("expected an object")
		}
		return
	}
	pos = skipSpace(src, pos+1)
	if pos < len(src) && src[pos] == '}' {
		t.pos = pos + 1
		return
	}
	next := 0 // the field after the last one read: encoders write fields in order
	for {
		f, found := m.written(src, pos, next)
		if found {
			pos += len(f.written)
			next = int(f.index) + 1
		} else {
			t.pos = pos
			key, ok := t.memberName()
			if !ok {
				return
			}
			if f = m.find(key); f != nil {
				next = int(f.index) + 1
			}
			pos = t.pos
		}
		t.pos = skipSpace(src, pos)
		if f != nil {
			t.value(f)
		} else {
			t.skipValue()
		}
		if t.err != nil {
			return
		}
		pos = skipSpace(src, t.pos)
		if pos < len(src) {
			switch src[pos] {
			case ',':
				pos = skipSpace(src, pos+1)
				continue
			case '}':
				t.pos = pos + 1
				return
			}
		}
		t.pos = pos
		t.fail("expected ',' or '}'")
		return
	}
}

// written returns the field whose name is at src[pos] exactly as encoders
// write it, "name": without escapes or spaces, trying the fields from next
// on. Such a name needs no scanning: it holds no quote or backslash, so the
// quote after it ends the string. Most names are told apart by comparing
// two words.
func (m messageType) written(src []byte, pos, next int) (*field, bool) {
	if pos+16 > len(src) {
		return nil, false // near the end: the caller scans
	}
	w0 := binary.LittleEndian.Uint64(src[pos:])
	w1 := binary.LittleEndian.Uint64(src[pos+8:])
	for i := next; i < len(m); i++ {
		f := &m[i]
		if w0&f.mask[0] == f.head[0] && w1&f.mask[1] == f.head[1] &&
			(len(f.written) <= 16 || len(src)-pos >= len(f.written) && string(src[pos+16:pos+len(f.written)]) == f.written[16:]) {
			return f, true
		}
	}
	return nil, false
}

// find returns the field named key, in either of its names; nil if there
// is none.
func (m messageType) find(key []byte) *field {
	for i := range m {
		if string(key) == m[i].name || string(key) == m[i].protoName {
			return &m[i]
		}
	}
	return nil
}

// value reads the value at pos as field f and writes it.
func (t *transcoder) value(f *field) {
	switch f.kind {
	case kString:
		t.str(f.num)
	case kMessage:
		t.message(f)
	case kMessages, kStrings:
		t.array(f)
	case kFixed64:
		t.fixed64(f.num)
	case kTraceID:
		t.id(f.num, 16)
	case kSpanID:
		t.id(f.num, 8)
	case kInt64:
		t.int64(f.num)
	case kEnum:
		t.enumValue(f.num, f.enum)
	case kUint32:
		t.uint32(f.num)
	case kFixed32:
		t.fixed32(f.num)
	case kBool:
		t.bool(f.num)
	case kDouble:
		t.double(f.num)
	case kBytes:
		t.bytes(f.num)
	case kInt32:
		t.int32(f.num)
	}
}

// message writes field f holding the object at pos.
func (t *transcoder) message(f *field) {
	start := t.begin(f.num, f.reserve)
	t.object(*f.msg)
	t.end(start, f.reserve)
}

// array reads the array (or null) at pos as the repeated field f. Arrays
// are fewer than objects (one per list of attributes, not one per
// attribute): this one works on t.pos, where object keeps a local.
func (t *transcoder) array(f *field) {
	if t.err != nil || t.literal("null") {
		return
	}
	if t.pos >= len(t.src) || t.src[t.pos] != '[' {
		t.fail("expected an array")
		return
	}
	t.pos++
	t.skipSpace()
	if t.pos < len(t.src) && t.src[t.pos] == ']' {
		t.pos++
		return
	}
	for {
		if f.kind == kStrings {
			t.str(f.num)
		} else {
			t.message(f)
		}
		if t.err != nil {
			return
		}
		t.skipSpace()
		if t.pos < len(t.src) && t.src[t.pos] == ',' {
			t.pos++
			t.skipSpace()
			continue
		}
		if t.pos < len(t.src) && t.src[t.pos] == ']' {
			t.pos++
			return
		}
		t.fail("expected ',' or ']'")
		return
	}
}

// memberName reads a member's name and colon, leaving pos at its value.
// The name is in src, or in scratch if it had escapes.
func (t *transcoder) memberName() ([]byte, bool) {
	if t.pos >= len(t.src) || t.src[t.pos] != '"' {
		t.fail("expected a member name")
		return nil, false
	}
	end, escaped, ok := jsontext.StringEnd(t.src, t.pos)
	if !ok {
		t.fail("bad string")
		return nil, false
	}
	var key []byte
	if escaped {
		t.scratch, _ = jsontext.AppendString(t.scratch[:0], t.src[t.pos:end])
		key = t.scratch
	} else {
		key = t.src[t.pos+1 : end-1]
	}
	t.pos = end
	return key, t.colon()
}

// colon reads the colon after a member's name, leaving pos at its value.
func (t *transcoder) colon() bool {
	t.skipSpace()
	if t.pos >= len(t.src) || t.src[t.pos] != ':' {
		t.fail("expected ':'")
		return false
	}
	t.pos++
	t.skipSpace()
	return true
}

// begin writes the tag of field num, a length-delimited one whose length
// is only known once its content is written: it leaves reserve bytes for
// the length and returns where the content starts. end writes the length,
// moving the content if its varint needs another size: reserve is the size
// the field usually needs, so that moving is rare.
func (t *transcoder) begin(num protowire.Number, reserve int) int {
	t.tag(num, protowire.BytesType)
	for range reserve {
		t.out = append(t.out, 0)
	}
	return len(t.out)
}

func (t *transcoder) end(start, reserve int) {
	n := len(t.out) - start
	if reserve == 1 && n < 0x80 { // an attribute, most often
		t.out[start-1] = byte(n)
		return
	}
	if k := protowire.SizeVarint(uint64(n)); k != reserve {
		if k > reserve {
			t.out = append(t.out, make([]byte, k-reserve)...)
		}
		copy(t.out[start-reserve+k:], t.out[start:start+n])
		t.out = t.out[:start-reserve+k+n]
	}
	putVarint(t.out[start-reserve:], uint64(n))
}

// The writers below append to t.out in place (t.out = append(t.out, ...)),
// which the compiler turns into a length update unless the buffer grows:
// assigning t.out a slice a function returned would cost a write barrier
// for every field while the GC marks.

// varint appends v as a varint.
func (t *transcoder) varint(v uint64) {
	for v >= 0x80 {
		t.out = append(t.out, byte(v)|0x80)
		v >>= 7
	}
	t.out = append(t.out, byte(v))
}

// tag appends a field's tag.
func (t *transcoder) tag(num protowire.Number, typ protowire.Type) {
	t.varint(uint64(num)<<3 | uint64(typ))
}

func (t *transcoder) fixed64v(v uint64) {
	t.out = append(t.out, byte(v), byte(v>>8), byte(v>>16), byte(v>>24), byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56))
}

// putVarint writes v's varint at the start of b, which has room for it.
func putVarint(b []byte, v uint64) {
	i := 0
	for v >= 0x80 {
		b[i] = byte(v) | 0x80
		v >>= 7
		i++
	}
	b[i] = byte(v)
}

// Scalars.

func (t *transcoder) literal(lit string) bool {
	if len(t.src)-t.pos >= len(lit) && string(t.src[t.pos:t.pos+len(lit)]) == lit {
		t.pos += len(lit)
		return true
	}
	return false
}

// skipValue skips an unknown field's value. pdata rejects one holding a
// number beyond a float64's range, so this does too.
func (t *transcoder) skipValue() {
	end, ok := jsontext.ValueEnd(t.src, t.pos)
	if !ok {
		t.fail("bad value")
		return
	}
	if overflows(t.src[t.pos:end]) {
		t.fail("number out of range")
		return
	}
	t.pos = end
}

// overflows reports whether the valid JSON value v holds a number that
// does not fit a float64.
func overflows(v []byte) bool {
	for i := 0; i < len(v); {
		switch c := v[i]; {
		case c == '"':
			i, _, _ = jsontext.StringEnd(v, i)
		case c == '-' || c >= '0' && c <= '9':
			end, _ := jsontext.ValueEnd(v, i)
			if _, err := strconv.ParseFloat(view(v[i:end]), 64); err != nil {
				return true
			}
			i = end
		default:
			i++
		}
	}
	return false
}

// stringValue reads a string and returns its raw text, quotes included.
func (t *transcoder) stringValue() (raw []byte, escaped, ok bool) {
	if t.pos >= len(t.src) || t.src[t.pos] != '"' {
		return nil, false, false
	}
	end, escaped, ok := jsontext.StringEnd(t.src, t.pos)
	if !ok {
		t.fail("bad string")
		return nil, false, false
	}
	raw = t.src[t.pos:end]
	t.pos = end
	return raw, escaped, true
}

// str writes a string field; null is the empty string.
func (t *transcoder) str(num protowire.Number) {
	if t.err != nil {
		return
	}
	if t.pos < len(t.src) && t.src[t.pos] == '"' {
		end, escaped, ok := jsontext.StringEnd(t.src, t.pos)
		if ok && !escaped {
			t.tag(num, protowire.BytesType)
			t.varint(uint64(end - t.pos - 2))
			t.out = append(t.out, t.src[t.pos+1:end-1]...)
			t.pos = end
			return
		}
	}
	raw, escaped, ok := t.stringValue()
	switch {
	case ok && !escaped:
		t.tag(num, protowire.BytesType)
		t.varint(uint64(len(raw) - 2))
		t.out = append(t.out, raw[1:len(raw)-1]...)
	case ok:
		start := t.begin(num, 1)
		t.out, _ = jsontext.AppendString(t.out, raw)
		t.end(start, 1)
	case t.literal("null"):
		t.tag(num, protowire.BytesType)
		t.out = append(t.out, 0)
	default:
		t.fail("expected a string")
	}
}

// decoded returns a string value decoded, in scratch if it had escapes.
func (t *transcoder) decoded() ([]byte, bool) {
	raw, escaped, ok := t.stringValue()
	if !ok {
		return nil, false
	}
	if !escaped {
		return raw[1 : len(raw)-1], true
	}
	t.scratch, _ = jsontext.AppendString(t.scratch[:0], raw)
	return t.scratch, true
}

// id writes a trace or span id of size bytes from hex; "" is the zero id.
// Hex digits need no escapes, and pdata takes none: an id with escapes is
// rejected.
func (t *transcoder) id(num protowire.Number, size int) {
	if t.err != nil {
		return
	}
	src, pos := t.src, t.pos
	if pos+1 < len(src) && src[pos] == '"' && src[pos+1] == '"' {
		t.tag(num, protowire.BytesType)
		t.out = append(t.out, 0)
		t.pos = pos + 2
		return
	}
	// The quote after 2*size hex digits, which hold no quote or backslash,
	// ends the string.
	e := pos + 1 + 2*size
	if e >= len(src) || src[pos] != '"' || src[e] != '"' {
		t.fail("expected a hex id")
		return
	}
	t.tag(num, protowire.BytesType)
	t.out = append(t.out, byte(size))
	n := len(t.out)
	t.out = append(t.out, make([]byte, size)...)
	if _, err := hex.Decode(t.out[n:], src[pos+1:e]); err != nil {
		t.fail("bad hex id")
		return
	}
	t.pos = e + 1
}

func (t *transcoder) bytes(num protowire.Number) {
	if t.err != nil {
		return
	}
	s, ok := t.decoded()
	if !ok {
		t.fail("expected a base64 string")
		return
	}
	t.raw = slices.Grow(t.raw[:0], base64.StdEncoding.DecodedLen(len(s)))
	n, err := base64.StdEncoding.Decode(t.raw[:cap(t.raw)], s)
	if err != nil {
		t.fail("bad base64")
		return
	}
	t.tag(num, protowire.BytesType)
	t.varint(uint64(n))
	t.out = append(t.out, t.raw[:n]...)
}

// number returns the text of a number, or of a string (which proto3 JSON
// allows for every number), to parse with strconv.
func (t *transcoder) number() (string, bool) {
	if t.err != nil {
		return "", false
	}
	if t.pos < len(t.src) && t.src[t.pos] == '"' {
		s, ok := t.decoded()
		return view(s), ok
	}
	start := t.pos
	if t.pos >= len(t.src) || t.src[t.pos] != '-' && (t.src[t.pos] < '0' || t.src[t.pos] > '9') {
		t.fail("expected a number")
		return "", false
	}
	end, ok := jsontext.ValueEnd(t.src, t.pos)
	if !ok {
		t.fail("bad number")
		return "", false
	}
	t.pos = end
	return view(t.src[start:end]), true
}

// quotedDecimal reads a string of 1 to 19 digits, which cannot overflow 64
// bits: how encoders write 64-bit integers (timestamps, int values).
func (t *transcoder) quotedDecimal() (uint64, bool) {
	src, pos := t.src, t.pos
	if pos >= len(src) || src[pos] != '"' {
		return 0, false
	}
	var v uint64
	i := pos + 1
	for ; i < len(src) && i-pos <= 19; i++ {
		d := src[i] - '0'
		if d > 9 {
			break
		}
		v = v*10 + uint64(d)
	}
	if i == pos+1 || i >= len(src) || src[i] != '"' {
		return 0, false
	}
	t.pos = i + 1
	return v, true
}

func (t *transcoder) parseUint(bits int) uint64 {
	s, ok := t.number()
	if !ok {
		t.fail("expected an unsigned integer")
		return 0
	}
	if v, ok := shortDecimal(s); ok && bits == 64 {
		return v // nanosecond timestamps, most of the numbers here
	}
	v, err := strconv.ParseUint(s, 10, bits)
	if err != nil {
		t.fail("bad unsigned integer")
	}
	return v
}

// shortDecimal parses 1 to 19 decimal digits, which cannot overflow 64 bits.
func shortDecimal(s string) (uint64, bool) {
	if len(s) == 0 || len(s) > 19 {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		d := s[i] - '0'
		if d > 9 {
			return 0, false
		}
		v = v*10 + uint64(d)
	}
	return v, true
}

func (t *transcoder) parseInt(bits int) int64 {
	s, ok := t.number()
	if !ok {
		t.fail("expected an integer")
		return 0
	}
	v, err := strconv.ParseInt(s, 10, bits)
	if err != nil {
		t.fail("bad integer")
	}
	return v
}

func (t *transcoder) uint32(num protowire.Number) {
	v := t.parseUint(32)
	t.tag(num, protowire.VarintType)
	t.varint(v)
}

func (t *transcoder) int32(num protowire.Number) {
	v := t.parseInt(32)
	t.tag(num, protowire.VarintType)
	t.varint(uint64(v))
}

func (t *transcoder) int64(num protowire.Number) {
	pos := t.pos
	u, ok := t.quotedDecimal()
	v := int64(u)
	if !ok || u > math.MaxInt64 {
		t.pos = pos
		v = t.parseInt(64)
	}
	t.tag(num, protowire.VarintType)
	t.varint(uint64(v))
}

func (t *transcoder) fixed64(num protowire.Number) {
	v, ok := t.quotedDecimal()
	if !ok {
		v = t.parseUint(64)
	}
	t.tag(num, protowire.Fixed64Type)
	t.fixed64v(v)
}

func (t *transcoder) fixed32(num protowire.Number) {
	v := t.parseUint(32)
	t.tag(num, protowire.Fixed32Type)
	t.out = append(t.out, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
}

func (t *transcoder) double(num protowire.Number) {
	s, ok := t.number()
	if !ok {
		t.fail("expected a number")
		return
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.fail("bad number")
	}
	t.tag(num, protowire.Fixed64Type)
	t.fixed64v(math.Float64bits(v))
}

func (t *transcoder) bool(num protowire.Number) {
	if t.err != nil {
		return
	}
	var v uint64
	switch {
	case t.literal("true"):
		v = 1
	case t.literal("false"):
	default:
		t.fail("expected true or false")
		return
	}
	t.tag(num, protowire.VarintType)
	t.varint(v)
}

// enumValue writes an enum given as an integer or as one of names.
func (t *transcoder) enumValue(num protowire.Number, names map[string]int32) {
	if t.err != nil {
		return
	}
	var v int64
	if t.pos < len(t.src) && t.src[t.pos] == '"' {
		s, _ := t.decoded()
		n, ok := names[string(s)]
		if !ok {
			t.fail("unknown enum value")
			return
		}
		v = int64(n)
	} else {
		v = t.parseInt(32)
	}
	t.tag(num, protowire.VarintType)
	t.varint(uint64(v))
}

// view returns b as a string without copying it.
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
