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
//     case; "" is the zero id);
//   - enums (kind, status code) as integers, or as their value names;
//   - 64-bit integers as decimal strings or as numbers, 32-bit ones too;
//     doubles as numbers or strings ("NaN", "Infinity");
//   - bytes values as base64 strings;
//   - unknown fields ignored (their values must still be valid JSON);
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
	t.request()
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

func (t *transcoder) skipSpace() { t.pos = jsontext.SkipSpace(t.src, t.pos) }

// The messages, field by field, with their protobuf field numbers from
// opentelemetry-proto (trace/v1, common/v1, resource/v1).

func (t *transcoder) request() {
	for o := t.object(); t.member(&o); {
		switch string(t.key(&o)) {
		case "resourceSpans", "resource_spans":
			t.repeated(1, 3, (*transcoder).resourceSpans)
		default:
			t.skipValue()
		}
	}
}

func (t *transcoder) resourceSpans() {
	for o := t.object(); t.member(&o); {
		switch string(t.key(&o)) {
		case "resource":
			t.message(1, 2, (*transcoder).resource)
		case "scopeSpans", "scope_spans":
			t.repeated(2, 3, (*transcoder).scopeSpans)
		case "schemaUrl", "schema_url":
			t.str(3)
		case "deprecatedScopeSpans", "deprecated_scope_spans":
			t.repeated(1000, 3, (*transcoder).scopeSpans)
		default:
			t.skipValue()
		}
	}
}

func (t *transcoder) resource() {
	for o := t.object(); t.member(&o); {
		switch string(t.key(&o)) {
		case "attributes":
			t.repeated(1, 1, (*transcoder).keyValue)
		case "droppedAttributesCount", "dropped_attributes_count":
			t.uint32(2)
		case "entityRefs", "entity_refs":
			t.repeated(3, 1, (*transcoder).entityRef)
		default:
			t.skipValue()
		}
	}
}

func (t *transcoder) entityRef() {
	for o := t.object(); t.member(&o); {
		switch string(t.key(&o)) {
		case "schemaUrl", "schema_url":
			t.str(1)
		case "type":
			t.str(2)
		case "idKeys", "id_keys":
			t.strings(3)
		case "descriptionKeys", "description_keys":
			t.strings(4)
		default:
			t.skipValue()
		}
	}
}

func (t *transcoder) scopeSpans() {
	for o := t.object(); t.member(&o); {
		switch string(t.key(&o)) {
		case "scope":
			t.message(1, 1, (*transcoder).scope)
		case "spans":
			t.repeated(2, 2, (*transcoder).span)
		case "schemaUrl", "schema_url":
			t.str(3)
		default:
			t.skipValue()
		}
	}
}

func (t *transcoder) scope() {
	for o := t.object(); t.member(&o); {
		switch string(t.key(&o)) {
		case "name":
			t.str(1)
		case "version":
			t.str(2)
		case "attributes":
			t.repeated(3, 1, (*transcoder).keyValue)
		case "droppedAttributesCount", "dropped_attributes_count":
			t.uint32(4)
		default:
			t.skipValue()
		}
	}
}

// spanKinds and statusCodes are the enums' value names (trace/v1).
var (
	spanKinds = map[string]int32{
		"SPAN_KIND_UNSPECIFIED": 0, "SPAN_KIND_INTERNAL": 1, "SPAN_KIND_SERVER": 2,
		"SPAN_KIND_CLIENT": 3, "SPAN_KIND_PRODUCER": 4, "SPAN_KIND_CONSUMER": 5,
	}
	statusCodes = map[string]int32{"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}
)

func (t *transcoder) span() {
	for o := t.object(); t.member(&o); {
		switch string(t.key(&o)) {
		case "traceId", "trace_id":
			t.id(1, 16)
		case "spanId", "span_id":
			t.id(2, 8)
		case "traceState", "trace_state":
			t.str(3)
		case "parentSpanId", "parent_span_id":
			t.id(4, 8)
		case "flags":
			t.fixed32(16)
		case "name":
			t.str(5)
		case "kind":
			t.enum(6, spanKinds)
		case "startTimeUnixNano", "start_time_unix_nano":
			t.fixed64(7)
		case "endTimeUnixNano", "end_time_unix_nano":
			t.fixed64(8)
		case "attributes":
			t.repeated(9, 1, (*transcoder).keyValue)
		case "droppedAttributesCount", "dropped_attributes_count":
			t.uint32(10)
		case "events":
			t.repeated(11, 1, (*transcoder).event)
		case "droppedEventsCount", "dropped_events_count":
			t.uint32(12)
		case "links":
			t.repeated(13, 1, (*transcoder).link)
		case "droppedLinksCount", "dropped_links_count":
			t.uint32(14)
		case "status":
			t.message(15, 1, (*transcoder).status)
		default:
			t.skipValue()
		}
	}
}

func (t *transcoder) event() {
	for o := t.object(); t.member(&o); {
		switch string(t.key(&o)) {
		case "timeUnixNano", "time_unix_nano":
			t.fixed64(1)
		case "name":
			t.str(2)
		case "attributes":
			t.repeated(3, 1, (*transcoder).keyValue)
		case "droppedAttributesCount", "dropped_attributes_count":
			t.uint32(4)
		default:
			t.skipValue()
		}
	}
}

func (t *transcoder) link() {
	for o := t.object(); t.member(&o); {
		switch string(t.key(&o)) {
		case "traceId", "trace_id":
			t.id(1, 16)
		case "spanId", "span_id":
			t.id(2, 8)
		case "traceState", "trace_state":
			t.str(3)
		case "attributes":
			t.repeated(4, 1, (*transcoder).keyValue)
		case "droppedAttributesCount", "dropped_attributes_count":
			t.uint32(5)
		case "flags":
			t.fixed32(6)
		default:
			t.skipValue()
		}
	}
}

func (t *transcoder) status() {
	for o := t.object(); t.member(&o); {
		switch string(t.key(&o)) {
		case "message":
			t.str(2)
		case "code":
			t.enum(3, statusCodes)
		default:
			t.skipValue()
		}
	}
}

func (t *transcoder) keyValue() {
	for o := t.object(); t.member(&o); {
		switch string(t.key(&o)) {
		case "key":
			t.str(1)
		case "value":
			t.message(2, 1, (*transcoder).anyValue)
		case "keyStrindex", "key_strindex":
			t.int32(3)
		default:
			t.skipValue()
		}
	}
}

func (t *transcoder) anyValue() {
	for o := t.object(); t.member(&o); {
		switch string(t.key(&o)) {
		case "stringValue", "string_value":
			t.str(1)
		case "boolValue", "bool_value":
			t.bool(2)
		case "intValue", "int_value":
			t.int64(3)
		case "doubleValue", "double_value":
			t.double(4)
		case "arrayValue", "array_value":
			t.message(5, 1, (*transcoder).valueList)
		case "kvlistValue", "kvlist_value":
			t.message(6, 1, (*transcoder).keyValueList)
		case "bytesValue", "bytes_value":
			t.bytes(7)
		case "stringValueStrindex", "string_value_strindex":
			t.int32(8)
		default:
			t.skipValue()
		}
	}
}

func (t *transcoder) valueList() {
	for o := t.object(); t.member(&o); {
		if string(t.key(&o)) == "values" {
			t.repeated(1, 1, (*transcoder).anyValue)
		} else {
			t.skipValue()
		}
	}
}

func (t *transcoder) keyValueList() {
	for o := t.object(); t.member(&o); {
		if string(t.key(&o)) == "values" {
			t.repeated(1, 1, (*transcoder).keyValue)
		} else {
			t.skipValue()
		}
	}
}

// Objects and arrays.

// objectState walks one object's members. It holds no pointers: writing
// one through a pointer costs a write barrier while the GC marks, and this
// is written for every member.
type objectState struct {
	keyLo, keyHi int  // the current member's name in src, unless escaped
	escaped      bool // the name is decoded in scratch
	open         bool // inside an object, not null
	inside       bool // a member was read
}

// key is the name of the member member read last.
func (t *transcoder) key(o *objectState) []byte {
	if o.escaped {
		return t.scratch
	}
	return t.src[o.keyLo:o.keyHi]
}

// object starts reading the object (or null) at pos.
func (t *transcoder) object() objectState {
	if t.err != nil {
		return objectState{}
	}
	switch {
	case t.pos < len(t.src) && t.src[t.pos] == '{':
		t.pos++
		return objectState{open: true}
	case t.literal("null"):
		return objectState{}
	}
	t.fail("expected an object")
	return objectState{}
}

// member reads the next member's key and colon, leaving pos at its value;
// false at the end of the object or on error.
func (t *transcoder) member(o *objectState) bool {
	if t.err != nil || !o.open {
		return false
	}
	t.skipSpace()
	if o.inside {
		if t.pos < len(t.src) && t.src[t.pos] == '}' {
			t.pos++
			return false
		}
		if t.pos >= len(t.src) || t.src[t.pos] != ',' {
			t.fail("expected ',' or '}'")
			return false
		}
		t.pos++
		t.skipSpace()
	} else if t.pos < len(t.src) && t.src[t.pos] == '}' {
		t.pos++
		return false
	}
	o.inside = true
	if t.pos >= len(t.src) || t.src[t.pos] != '"' {
		t.fail("expected a member name")
		return false
	}
	end, escaped, ok := jsontext.StringEnd(t.src, t.pos)
	if !ok {
		t.fail("bad string")
		return false
	}
	o.escaped = escaped
	if escaped {
		t.scratch, _ = jsontext.AppendString(t.scratch[:0], t.src[t.pos:end])
	} else {
		o.keyLo, o.keyHi = t.pos+1, end-1
	}
	t.pos = jsontext.SkipSpace(t.src, end)
	if t.pos >= len(t.src) || t.src[t.pos] != ':' {
		t.fail("expected ':'")
		return false
	}
	t.pos = jsontext.SkipSpace(t.src, t.pos+1)
	return true
}

// repeated reads an array (or null) of messages, each field num, with
// reserve bytes kept for each one's length (see message).
func (t *transcoder) repeated(num protowire.Number, reserve int, msg func(*transcoder)) {
	for first := true; t.element(&first); {
		t.message(num, reserve, msg)
	}
}

// element moves to the next element of the array (or null) at pos; first
// is true before the first call.
func (t *transcoder) element(first *bool) bool {
	if t.err != nil {
		return false
	}
	if *first {
		*first = false
		if t.literal("null") {
			return false
		}
		if t.pos >= len(t.src) || t.src[t.pos] != '[' {
			t.fail("expected an array")
			return false
		}
		t.pos++
		t.skipSpace()
		if t.pos < len(t.src) && t.src[t.pos] == ']' {
			t.pos++
			return false
		}
		return true
	}
	t.skipSpace()
	if t.pos < len(t.src) {
		switch t.src[t.pos] {
		case ',':
			t.pos = jsontext.SkipSpace(t.src, t.pos+1)
			return true
		case ']':
			t.pos++
			return false
		}
	}
	t.fail("expected ',' or ']'")
	return false
}

// message writes field num holding the message msg reads. Its length is
// only known once written, so reserve bytes are left for it and the message
// is moved if its length's varint needs another size: reserve is the size
// that message usually needs, so that moving is rare.
func (t *transcoder) message(num protowire.Number, reserve int, msg func(*transcoder)) {
	t.tag(num, protowire.BytesType)
	for range reserve {
		t.out = append(t.out, 0)
	}
	start := len(t.out)
	msg(t)
	n := len(t.out) - start
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

func (t *transcoder) skipValue() {
	end, ok := jsontext.ValueEnd(t.src, t.pos)
	if !ok {
		t.fail("bad value")
		return
	}
	t.pos = end
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
	raw, escaped, ok := t.stringValue()
	switch {
	case ok && !escaped:
		t.tag(num, protowire.BytesType)
		t.varint(uint64(len(raw) - 2))
		t.out = append(t.out, raw[1:len(raw)-1]...)
	case ok:
		t.message(num, 1, func(t *transcoder) { t.out, _ = jsontext.AppendString(t.out, raw) })
	case t.literal("null"):
		t.tag(num, protowire.BytesType)
		t.out = append(t.out, 0)
	default:
		t.fail("expected a string")
	}
}

// strings writes a repeated string field.
func (t *transcoder) strings(num protowire.Number) {
	for first := true; t.element(&first); {
		t.str(num)
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
func (t *transcoder) id(num protowire.Number, size int) {
	if t.err != nil {
		return
	}
	s, ok := t.decoded()
	switch {
	case !ok:
		t.fail("expected a hex id")
	case len(s) == 0:
		t.tag(num, protowire.BytesType)
		t.out = append(t.out, 0)
	case len(s) != 2*size:
		t.fail("id of the wrong length")
	default:
		t.tag(num, protowire.BytesType)
		t.out = append(t.out, byte(size))
		n := len(t.out)
		t.out = append(t.out, make([]byte, size)...)
		if _, err := hex.Decode(t.out[n:], s); err != nil {
			t.fail("bad hex id")
		}
	}
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
	v := t.parseInt(64)
	t.tag(num, protowire.VarintType)
	t.varint(uint64(v))
}

func (t *transcoder) fixed64(num protowire.Number) {
	v := t.parseUint(64)
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

// enum writes an enum given as an integer or as one of names.
func (t *transcoder) enum(num protowire.Number, names map[string]int32) {
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
