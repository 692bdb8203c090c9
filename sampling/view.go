package sampling

import (
	"math"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sidecarhq/sidecar/sampling/internal/otlpwire"
)

// This file holds the views matching and deciding read: of a span (pdata or
// raw protobuf), of a log record, and of their attributes.

// spanView is what deciding a span reads of it, taken once per span from
// pdata (pdataSpanView) or raw protobuf (wireSpanView, see presample.go), so
// matching and deciding read the same fields whichever form the span is in;
// only the attributes, the events and the operation are read on demand.
type spanView struct {
	name       string
	kind       ptrace.SpanKind
	statusCode ptrace.StatusCode
	traceID    pcommon.TraceID
	spanID     pcommon.SpanID
	isRoot     bool
	traceState string
	duration   int64 // end minus start, in nanoseconds
	attrs      attrSet
	res        spanResource
	events     ptrace.SpanEventSlice // a pdata span's events
	wire       *otlpwire.Span        // a raw span, for its events
	operation  string                // valid when opKnown; see op
	opKnown    bool
	isError    bool // set by decideSpan
}

// spanResource is what deciding reads of a span's resource.
type spanResource struct {
	attrs   attrSet
	service string // its service.name
}

func newSpanResource(attrs attrSet) spanResource {
	return spanResource{attrs: attrs, service: serviceName(attrs)}
}

// The views are returned by value, for the caller to keep on its stack:
// filling one through a pointer costs a write barrier for each of its ten
// pointer words whenever the GC is marking.

// pdataSpanView returns the view of a pdata span of resource res.
func pdataSpanView(sp ptrace.Span, res spanResource) spanView {
	return spanView{
		name: sp.Name(), kind: sp.Kind(), statusCode: sp.Status().Code(),
		traceID: sp.TraceID(), spanID: sp.SpanID(), isRoot: sp.ParentSpanID().IsEmpty(),
		traceState: sp.TraceState().AsRaw(),
		duration:   int64(sp.EndTimestamp()) - int64(sp.StartTimestamp()),
		attrs:      mapAttrs(sp.Attributes()), res: res, events: sp.Events(),
	}
}

// wireSpanView returns the view of a raw span of resource res; pre collects
// the attributes the sampler reads of it (see wireAttrs).
func wireSpanView(sp *otlpwire.Span, pre *wireAttrs, res spanResource) spanView {
	pre.loaded = false
	return spanView{
		name: sp.Name(), kind: ptrace.SpanKind(sp.Kind()), statusCode: ptrace.StatusCode(sp.StatusCode()),
		traceID: sp.TraceID(), spanID: sp.SpanID(), isRoot: pcommon.SpanID(sp.ParentSpanID()).IsEmpty(),
		traceState: sp.TraceState(),
		duration:   int64(sp.EndTime()) - int64(sp.StartTime()),
		attrs:      attrSet{span: sp, pre: pre}, res: res, wire: sp,
	}
}

// op returns the span's operation, computed on first use: it costs two
// attribute lookups, which spans no operation-matching rule sees skip.
func (v *spanView) op() string {
	if !v.opKnown {
		v.operation = spanOperation(v.name, v.attrs)
		v.opKnown = true
	}
	return v.operation
}

// hasException reports an "exception" event, the OTel way to record an
// error on a span whose status was left unset.
func (v *spanView) hasException() bool {
	if v.wire != nil {
		return v.wire.HasEvent("exception")
	}
	for i := 0; i < v.events.Len(); i++ {
		if v.events.At(i).Name() == "exception" {
			return true
		}
	}
	return false
}

// logView is what log matching reads, gathered once per record.
type logView struct {
	rec      plog.LogRecord
	resAttrs pcommon.Map
	shared   pcommon.Map // the record's scope's, if it shares them (rawevent.Shared)
	service  string
	scratch  []byte // decoding buffer for escaped body strings, reused
}

// spanOperation is the operation of a span, the command or method it ran,
// as written (matching ignores case; summaries write it in upper case):
//
//  1. the command in db.operation.name (or db.operation): its first word,
//     or its second when the first names a batch of known commands (`MULTI
//     incr`, `PIPELINE get`, `BATCH GET`: a span per command of a
//     transaction or pipeline); a bare `MULTI` stays;
//  2. the first word of the span name, if it is a plain word (letters,
//     digits, `_`) other than `HTTP`: `get`, `GET user:1`, `SELECT users`;
//  3. else http.request.method (or http.method), for `HTTP GET` (otelhttp's
//     client spans) or spans named by their route;
//  4. else the first word of db.query.text (or db.statement), for clients
//     that name spans otherwise (`pg.query:SELECT postgres`,
//     `redis.pipeline get`, `sql.conn.query`);
//  5. else the first word of the span name.
//
// Only db.operation.name is read on every span: the others are read when
// the span name does not say the operation, which keeps query texts, long
// and mostly saying the same, off the hot path.
func spanOperation(name string, attrs attrSet) string {
	for _, key := range operationAttrNames {
		if v, ok := attrs.get(key); ok && v.typ == pcommon.ValueTypeStr {
			if op := command(v.str); op != "" {
				return op
			}
		}
	}
	if word, ok := plainFirstWord(name); ok && !(len(word) == 4 && strings.EqualFold(word, "HTTP")) {
		return word
	}
	word, _ := firstWord(name)
	for _, key := range fallbackOpNames {
		if v, ok := attrs.get(key); ok && v.typ == pcommon.ValueTypeStr {
			if op, _ := firstWord(v.str); op != "" {
				return op
			}
		}
	}
	return word
}

// plainFirstWord returns the first word of s if it starts s and is made of
// ASCII letters, digits and '_' only, as commands, methods and SQL keywords
// are.
func plainFirstWord(s string) (string, bool) {
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			break
		}
	}
	return s[:i], i > 0 && (i == len(s) || isSpace(s[i]))
}

// command is the first word of s, or the second when the first names a
// batch (see spanOperation).
func command(s string) string {
	op, rest := firstWord(s)
	if rest != "" && (strings.EqualFold(op, "MULTI") || strings.EqualFold(op, "PIPELINE") || strings.EqualFold(op, "BATCH")) {
		op, _ = firstWord(rest)
	}
	return op
}

// firstWord splits s after its first word, ignoring leading white space.
func firstWord(s string) (word, rest string) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	j := i
	for j < len(s) && !isSpace(s[j]) {
		j++
	}
	word = s[i:j]
	for j < len(s) && isSpace(s[j]) {
		j++
	}
	return word, s[j:]
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// attrValue is an attribute value in the forms matching, hashing and the
// priority check read.
type attrValue struct {
	typ pcommon.ValueType
	str string
	num uint64 // an int, the bits of a double, or a bool as 0 or 1
}

func (v attrValue) int() int64      { return int64(v.num) }
func (v attrValue) double() float64 { return math.Float64frombits(v.num) }
func (v attrValue) bool() bool      { return v.num != 0 }

func pdataValue(v pcommon.Value) attrValue {
	switch t := v.Type(); t {
	case pcommon.ValueTypeStr:
		return attrValue{typ: t, str: v.Str()}
	case pcommon.ValueTypeInt:
		return attrValue{typ: t, num: uint64(v.Int())}
	case pcommon.ValueTypeDouble:
		return attrValue{typ: t, num: math.Float64bits(v.Double())}
	case pcommon.ValueTypeBool:
		if v.Bool() {
			return attrValue{typ: t, num: 1}
		}
		return attrValue{typ: t}
	default:
		return attrValue{typ: t}
	}
}

// wireTypes maps otlpwire value types to pdata's.
var wireTypes = [...]pcommon.ValueType{
	otlpwire.ValueEmpty: pcommon.ValueTypeEmpty, otlpwire.ValueStr: pcommon.ValueTypeStr,
	otlpwire.ValueBool: pcommon.ValueTypeBool, otlpwire.ValueInt: pcommon.ValueTypeInt,
	otlpwire.ValueDouble: pcommon.ValueTypeDouble, otlpwire.ValueBytes: pcommon.ValueTypeBytes,
	otlpwire.ValueArray: pcommon.ValueTypeSlice, otlpwire.ValueMap: pcommon.ValueTypeMap,
}

func wireValue(v otlpwire.Value) attrValue {
	t := pcommon.ValueTypeEmpty
	if int(v.Type()) < len(wireTypes) {
		t = wireTypes[v.Type()]
	}
	return attrValue{typ: t, str: v.Str(), num: v.Bits()} // the same representation
}

// attrSet is a set of attributes: a pdata map, or a span's or resource's
// attributes still in protobuf (a span's with the keys the sampler reads
// looked up in one pass, in pre). One of m, span and res is set.
type attrSet struct {
	m pcommon.Map
	// shared, when set, is looked in after m: a raw scope's attributes,
	// which are its records' too (rawevent.Shared).
	shared pcommon.Map
	span   *otlpwire.Span
	pre    *wireAttrs
	res    *otlpwire.Resource
}

// wireAttrs holds a raw span's values of the keys the sampler reads, looked
// up together on first use: one pass over the attributes instead of one per
// key. Reset it for every span.
type wireAttrs struct {
	keys   []string // distinct, at most 64
	vals   []otlpwire.Value
	found  uint64
	loaded bool
}

func newWireAttrs(keys []string) *wireAttrs {
	return &wireAttrs{keys: keys, vals: make([]otlpwire.Value, len(keys))}
}

// get reports key's value, or ok=false with known=false for a key outside keys.
func (w *wireAttrs) get(sp *otlpwire.Span, key string) (v otlpwire.Value, ok, known bool) {
	for i, k := range w.keys {
		if k != key {
			continue
		}
		if !w.loaded {
			w.found, w.loaded = sp.AttrsOf(w.keys, w.vals), true
		}
		return w.vals[i], w.found&(1<<i) != 0, true
	}
	return v, false, false
}

func mapAttrs(m pcommon.Map) attrSet { return attrSet{m: m} }

// recAttrs are the record's attributes: its own, then its scope's shared ones.
func (v *logView) recAttrs() attrSet { return attrSet{m: v.rec.Attributes(), shared: v.shared} }

func (a attrSet) get(key string) (attrValue, bool) {
	if a.span == nil && a.res == nil {
		if v, ok := a.m.Get(key); ok {
			return pdataValue(v), true
		}
		if a.shared != (pcommon.Map{}) {
			if v, ok := a.shared.Get(key); ok {
				return pdataValue(v), true
			}
		}
		return attrValue{}, false
	}
	return a.getWire(key)
}

// getAny returns the value of the first of names present (see attrNames).
func (a attrSet) getAny(names []string) (attrValue, bool) {
	for _, n := range names {
		if v, ok := a.get(n); ok {
			return v, true
		}
	}
	return attrValue{}, false
}

func (a attrSet) getWire(key string) (attrValue, bool) {
	var (
		w  otlpwire.Value
		ok bool
	)
	if a.span != nil {
		var known bool
		if a.pre != nil {
			w, ok, known = a.pre.get(a.span, key)
		}
		if !known {
			w, ok = a.span.Attr(key)
		}
	} else {
		w, ok = a.res.Attr(key)
	}
	if !ok {
		return attrValue{}, false
	}
	return wireValue(w), true
}
