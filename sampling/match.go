package sampling

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sidecarhq/sidecar/internal/jsonscan"
	"github.com/sidecarhq/sidecar/sampling/internal/otlpwire"
)

// Everything in this file is compiled once at Start; the match methods only
// read pdata values and compare, so they do not allocate.

type signalMask uint8

const (
	signalTraces signalMask = 1 << iota
	signalLogs
)

// scalar is one configured value in the forms it can be compared in.
type scalar struct {
	str    string
	num    float64
	isNum  bool
	b      bool
	isBool bool
}

type valueOp uint8

const (
	opIn valueOp = iota // equals is "in" with one value
	opExists
	opRegex
	opGlob
)

// valueMatcher is one compiled value condition.
type valueMatcher struct {
	op     valueOp
	values []scalar
	exists bool // for opExists: want present (true) or absent (false)
	re     *regexp.Regexp
	glob   string
}

type fieldMatcher struct {
	key string
	m   valueMatcher
}

// severity ranges of SeverityNumber per level name (OTel log data model).
var severityLevels = map[string][2]plog.SeverityNumber{
	"trace": {1, 4}, "debug": {5, 8}, "info": {9, 12},
	"warn": {13, 16}, "error": {17, 20}, "fatal": {21, 24},
}

var spanKinds = map[string]ptrace.SpanKind{
	"internal": ptrace.SpanKindInternal, "server": ptrace.SpanKindServer, "client": ptrace.SpanKindClient,
	"producer": ptrace.SpanKindProducer, "consumer": ptrace.SpanKindConsumer, "unspecified": ptrace.SpanKindUnspecified,
}

var statusCodes = map[string]ptrace.StatusCode{
	"unset": ptrace.StatusCodeUnset, "ok": ptrace.StatusCodeOk, "error": ptrace.StatusCodeError,
}

// matcher is a compiled MatchConfig.
type matcher struct {
	signals    signalMask
	spanName   *valueMatcher
	kinds      uint8 // bit per ptrace.SpanKind; 0 = any
	statuses   uint8 // bit per ptrace.StatusCode; 0 = any
	operations []string
	service    *valueMatcher
	attrs      []fieldMatcher
	resAttrs   []fieldMatcher
	severities [][2]plog.SeverityNumber
	sevNames   []string
	body       []fieldMatcher
}

func compileMatch(c *MatchConfig) (*matcher, error) {
	m := &matcher{}
	var errs []error
	var err error
	if c.SpanName != nil {
		if m.spanName, err = compileValue(c.SpanName); err != nil {
			errs = append(errs, fmt.Errorf("span_name: %w", err))
		}
	}
	if c.Service != nil {
		if m.service, err = compileValue(c.Service); err != nil {
			errs = append(errs, fmt.Errorf("service: %w", err))
		}
	}
	for _, k := range c.Kind {
		kind, ok := spanKinds[strings.ToLower(k)]
		if !ok {
			errs = append(errs, fmt.Errorf("kind: unknown span kind %q (want internal, server, client, producer or consumer)", k))
			continue
		}
		m.kinds |= 1 << uint(kind)
	}
	for _, s := range c.Status {
		code, ok := statusCodes[strings.ToLower(s)]
		if !ok {
			errs = append(errs, fmt.Errorf("status: unknown status %q (want unset, ok or error)", s))
			continue
		}
		m.statuses |= 1 << uint(code)
	}
	for _, op := range c.Operation {
		if op == "" {
			errs = append(errs, errors.New("operation: empty value"))
		}
	}
	m.operations = c.Operation
	for _, s := range c.Severity {
		r, ok := severityLevels[strings.ToLower(s)]
		if !ok {
			errs = append(errs, fmt.Errorf("severity: unknown level %q (want trace, debug, info, warn, error or fatal)", s))
			continue
		}
		m.severities = append(m.severities, r)
		m.sevNames = append(m.sevNames, strings.ToLower(s))
	}
	var e error
	if m.attrs, e = compileFields("attributes", c.Attributes); e != nil {
		errs = append(errs, e)
	}
	if m.resAttrs, e = compileFields("resource_attributes", c.ResourceAttributes); e != nil {
		errs = append(errs, e)
	}
	if m.body, e = compileFields("body", c.Body); e != nil {
		errs = append(errs, e)
	}

	spanOnly := c.SpanName != nil || len(c.Kind) > 0 || len(c.Status) > 0 || len(c.Operation) > 0
	logOnly := len(c.Severity) > 0 || len(c.Body) > 0
	switch strings.ToLower(c.Signal) {
	case "traces", "spans":
		m.signals = signalTraces
		if logOnly {
			errs = append(errs, errors.New("signal is traces but severity or body conditions only apply to logs"))
		}
	case "logs":
		m.signals = signalLogs
		if spanOnly {
			errs = append(errs, errors.New("signal is logs but span_name, kind, status or operation conditions only apply to spans"))
		}
	case "":
		switch {
		case spanOnly && logOnly:
			errs = append(errs, errors.New("mixes span-only conditions (span_name, kind, status, operation) with log-only ones (severity, body)"))
		case spanOnly:
			m.signals = signalTraces
		case logOnly:
			m.signals = signalLogs
		default:
			m.signals = signalTraces | signalLogs
		}
	default:
		errs = append(errs, fmt.Errorf("signal: unknown signal %q (want traces or logs)", c.Signal))
	}
	return m, errors.Join(errs...)
}

func compileFields(what string, fields map[string]any) ([]fieldMatcher, error) {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys) // deterministic error order
	var out []fieldMatcher
	var errs []error
	for _, k := range keys {
		vm, err := compileValue(fields[k])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s[%q]: %w", what, k, err))
			continue
		}
		out = append(out, fieldMatcher{key: k, m: *vm})
	}
	return out, errors.Join(errs...)
}

// compileValue accepts a scalar (equals), a list (in) or a map with exactly
// one of equals, in, exists, regex, glob.
func compileValue(v any) (*valueMatcher, error) {
	switch x := v.(type) {
	case []any:
		return compileIn(x)
	case map[string]any:
		if len(x) != 1 {
			return nil, fmt.Errorf("want exactly one of equals, in, exists, regex, glob; got %d keys", len(x))
		}
		for op, arg := range x {
			switch op {
			case "equals":
				s, err := toScalar(arg)
				if err != nil {
					return nil, fmt.Errorf("equals: %w", err)
				}
				return &valueMatcher{op: opIn, values: []scalar{s}}, nil
			case "in":
				list, ok := arg.([]any)
				if !ok {
					return nil, fmt.Errorf("in: want a list, got %T", arg)
				}
				return compileIn(list)
			case "exists":
				b, ok := arg.(bool)
				if !ok {
					return nil, fmt.Errorf("exists: want true or false, got %v", arg)
				}
				return &valueMatcher{op: opExists, exists: b}, nil
			case "regex":
				s, ok := arg.(string)
				if !ok {
					return nil, fmt.Errorf("regex: want a string, got %T", arg)
				}
				re, err := regexp.Compile(s)
				if err != nil {
					return nil, fmt.Errorf("regex: %w", err)
				}
				return &valueMatcher{op: opRegex, re: re}, nil
			case "glob":
				s, ok := arg.(string)
				if !ok {
					return nil, fmt.Errorf("glob: want a string, got %T", arg)
				}
				return &valueMatcher{op: opGlob, glob: s}, nil
			default:
				return nil, fmt.Errorf("unknown operator %q (want equals, in, exists, regex or glob)", op)
			}
		}
	}
	s, err := toScalar(v)
	if err != nil {
		return nil, err
	}
	return &valueMatcher{op: opIn, values: []scalar{s}}, nil
}

func compileIn(list []any) (*valueMatcher, error) {
	if len(list) == 0 {
		return nil, errors.New("in: empty list")
	}
	vm := &valueMatcher{op: opIn}
	for i, e := range list {
		s, err := toScalar(e)
		if err != nil {
			return nil, fmt.Errorf("in[%d]: %w", i, err)
		}
		vm.values = append(vm.values, s)
	}
	return vm, nil
}

func toScalar(v any) (scalar, error) {
	switch x := v.(type) {
	case string:
		s := scalar{str: x}
		if f, err := strconv.ParseFloat(x, 64); err == nil {
			s.num, s.isNum = f, true
		}
		return s, nil
	case bool:
		return scalar{str: strconv.FormatBool(x), b: x, isBool: true}, nil
	case int:
		return scalar{str: strconv.Itoa(x), num: float64(x), isNum: true}, nil
	case int64:
		return scalar{str: strconv.FormatInt(x, 10), num: float64(x), isNum: true}, nil
	case uint64:
		return scalar{str: strconv.FormatUint(x, 10), num: float64(x), isNum: true}, nil
	case float64:
		return scalar{str: strconv.FormatFloat(x, 'f', -1, 64), num: x, isNum: true}, nil
	case nil:
		return scalar{}, errors.New("value is missing (use exists: true to test presence)")
	}
	return scalar{}, fmt.Errorf("unsupported value %v of type %T", v, v)
}

// matchString matches a string value.
func (vm *valueMatcher) matchString(s string) bool {
	switch vm.op {
	case opIn:
		for i := range vm.values {
			if vm.values[i].str == s {
				return true
			}
		}
		return false
	case opExists:
		return vm.exists
	case opRegex:
		return vm.re.MatchString(s)
	case opGlob:
		return globMatch(vm.glob, s)
	}
	return false
}

// matchValue matches a present attribute value. Numbers compare
// numerically; regex and glob apply to string values only.
func (vm *valueMatcher) matchValue(v attrValue) bool {
	if vm.op == opExists {
		return vm.exists
	}
	switch v.typ {
	case pcommon.ValueTypeStr:
		return vm.matchString(v.str)
	case pcommon.ValueTypeInt:
		return vm.matchNum(float64(v.int()))
	case pcommon.ValueTypeDouble:
		return vm.matchNum(v.double())
	case pcommon.ValueTypeBool:
		if vm.op != opIn {
			return false
		}
		for i := range vm.values {
			if vm.values[i].isBool && vm.values[i].b == v.bool() {
				return true
			}
		}
	}
	return false
}

func (vm *valueMatcher) matchNum(f float64) bool {
	if vm.op != opIn {
		return false
	}
	for i := range vm.values {
		if vm.values[i].isNum && vm.values[i].num == f {
			return true
		}
	}
	return false
}

// matchJSON matches the raw JSON text of a body field (present). Escaped
// strings are decoded into *scratch, which is reused across calls.
func (vm *valueMatcher) matchJSON(raw string, scratch *[]byte) bool {
	if vm.op == opExists {
		return vm.exists
	}
	if jsonscan.IsString(raw) {
		if !jsonscan.HasEscapes(raw) {
			return vm.matchString(raw[1 : len(raw)-1])
		}
		switch vm.op {
		case opIn:
			for i := range vm.values {
				if jsonscan.StringEqual(raw, vm.values[i].str) {
					return true
				}
			}
			return false
		default:
			b, ok := jsonscan.AppendString((*scratch)[:0], raw)
			*scratch = b
			if !ok {
				return false
			}
			if vm.op == opRegex {
				return vm.re.Match(b)
			}
			return globMatch(vm.glob, b)
		}
	}
	if f, ok := jsonscan.Number(raw); ok {
		return vm.matchNum(f)
	}
	if b, ok := jsonscan.Bool(raw); ok && vm.op == opIn {
		for i := range vm.values {
			if vm.values[i].isBool && vm.values[i].b == b {
				return true
			}
		}
	}
	return false
}

func matchFields(fields []fieldMatcher, attrs attrSet) bool {
	for i := range fields {
		f := &fields[i]
		v, ok := attrs.get(f.key)
		if !ok {
			if f.m.op == opExists && !f.m.exists {
				continue
			}
			return false
		}
		if !f.m.matchValue(v) {
			return false
		}
	}
	return true
}

// spanView is what span matching reads, gathered once per span. The span
// is either pdata (span, resAttrs) or still raw protobuf (wire, wireRes), see
// presample.go; the accessors below hide which.
type spanView struct {
	span      ptrace.Span
	resAttrs  pcommon.Map
	wire      *otlpwire.Span
	wireRes   *otlpwire.Resource
	wireAttrs *wireAttrs // the raw span's attributes the sampler reads
	service   string
	operation string // valid when opKnown; see op
	opKnown   bool
	isError   bool
}

// op returns the span's operation, computed on first use: it costs two
// attribute lookups, which spans no operation-matching rule sees skip.
func (v *spanView) op() string {
	if !v.opKnown {
		v.operation = spanOperation(v.name(), v.attrs())
		v.opKnown = true
	}
	return v.operation
}

func (v *spanView) attrs() attrSet {
	if v.wire != nil {
		return attrSet{span: v.wire, pre: v.wireAttrs}
	}
	return mapAttrs(v.span.Attributes())
}

func (v *spanView) resourceAttrs() attrSet {
	if v.wireRes != nil {
		return attrSet{res: v.wireRes}
	}
	return mapAttrs(v.resAttrs)
}

func (v *spanView) name() string {
	if v.wire != nil {
		return v.wire.Name()
	}
	return v.span.Name()
}

func (v *spanView) kind() ptrace.SpanKind {
	if v.wire != nil {
		return ptrace.SpanKind(v.wire.Kind())
	}
	return v.span.Kind()
}

func (v *spanView) statusCode() ptrace.StatusCode {
	if v.wire != nil {
		return ptrace.StatusCode(v.wire.StatusCode())
	}
	return v.span.Status().Code()
}

func (v *spanView) traceID() pcommon.TraceID {
	if v.wire != nil {
		return pcommon.TraceID(v.wire.TraceID())
	}
	return v.span.TraceID()
}

func (v *spanView) spanID() pcommon.SpanID {
	if v.wire != nil {
		return pcommon.SpanID(v.wire.SpanID())
	}
	return v.span.SpanID()
}

func (v *spanView) isRoot() bool {
	if v.wire != nil {
		return pcommon.SpanID(v.wire.ParentSpanID()).IsEmpty()
	}
	return v.span.ParentSpanID().IsEmpty()
}

func (v *spanView) traceState() string {
	if v.wire != nil {
		return v.wire.TraceState()
	}
	return v.span.TraceState().AsRaw()
}

// duration is end minus start in nanoseconds.
func (v *spanView) duration() int64 {
	if v.wire != nil {
		return int64(v.wire.EndTime()) - int64(v.wire.StartTime())
	}
	return int64(v.span.EndTimestamp()) - int64(v.span.StartTimestamp())
}

// hasException reports an "exception" event, the OTel way to record an
// error on a span whose status was left unset.
func (v *spanView) hasException() bool {
	if v.wire != nil {
		return v.wire.HasEvent("exception")
	}
	evs := v.span.Events()
	for i := 0; i < evs.Len(); i++ {
		if evs.At(i).Name() == "exception" {
			return true
		}
	}
	return false
}

func (m *matcher) matchSpan(v *spanView) bool {
	if m.signals&signalTraces == 0 {
		return false
	}
	if m.kinds != 0 && m.kinds&(1<<uint(v.kind())) == 0 {
		return false
	}
	if m.statuses != 0 && m.statuses&(1<<uint(v.statusCode())) == 0 {
		return false
	}
	if m.service != nil && !m.service.matchString(v.service) {
		return false
	}
	if m.spanName != nil && !m.spanName.matchString(v.name()) {
		return false
	}
	if len(m.operations) > 0 {
		found := false
		spanOp := v.op()
		for _, op := range m.operations {
			if strings.EqualFold(op, spanOp) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return matchFields(m.resAttrs, v.resourceAttrs()) && matchFields(m.attrs, v.attrs())
}

// logView is what log matching reads, gathered once per record.
type logView struct {
	rec      plog.LogRecord
	resAttrs pcommon.Map
	service  string
	scratch  []byte // decoding buffer for escaped body strings, reused
}

func (m *matcher) matchLog(v *logView) bool {
	if m.signals&signalLogs == 0 {
		return false
	}
	if m.service != nil && !m.service.matchString(v.service) {
		return false
	}
	if len(m.severities) > 0 && !m.matchSeverity(v.rec) {
		return false
	}
	if !matchFields(m.resAttrs, mapAttrs(v.resAttrs)) || !matchFields(m.attrs, mapAttrs(v.rec.Attributes())) {
		return false
	}
	return len(m.body) == 0 || matchBody(m.body, v.rec.Body(), &v.scratch)
}

func (m *matcher) matchSeverity(rec plog.LogRecord) bool {
	if n := rec.SeverityNumber(); n != plog.SeverityNumberUnspecified {
		for _, r := range m.severities {
			if n >= r[0] && n <= r[1] {
				return true
			}
		}
		return false
	}
	text := rec.SeverityText()
	for _, name := range m.sevNames {
		if strings.EqualFold(text, name) {
			return true
		}
	}
	return false
}

// matchBody matches body fields of a JSON object text body or a Map body.
func matchBody(fields []fieldMatcher, body pcommon.Value, scratch *[]byte) bool {
	switch body.Type() {
	case pcommon.ValueTypeMap:
		return matchFields(fields, mapAttrs(body.Map()))
	case pcommon.ValueTypeStr:
		obj := body.Str()
		for i := range fields {
			f := &fields[i]
			raw, ok := jsonscan.Field(obj, f.key)
			if !ok {
				if f.m.op == opExists && !f.m.exists {
					continue
				}
				return false
			}
			if !f.m.matchJSON(raw, scratch) {
				return false
			}
		}
		return true
	}
	return false
}

// globMatch reports whether s matches pattern, where '*' matches any run of
// characters (including '/') and '?' any single byte.
func globMatch[T jsonscan.Text](pattern string, s T) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == s[i]):
			p++
			i++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// spanOperation is the operation of a span: db.operation.name, else
// db.operation, else the first word of the span name.
func spanOperation(name string, attrs attrSet) string {
	if v, ok := attrs.get("db.operation.name"); ok && v.typ == pcommon.ValueTypeStr && v.str != "" {
		return v.str
	}
	if v, ok := attrs.get("db.operation"); ok && v.typ == pcommon.ValueTypeStr && v.str != "" {
		return v.str
	}
	if i := strings.IndexByte(name, ' '); i >= 0 {
		return name[:i]
	}
	return name
}

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
	m    pcommon.Map
	span *otlpwire.Span
	pre  *wireAttrs
	res  *otlpwire.Resource
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

func (a attrSet) get(key string) (attrValue, bool) {
	if a.span == nil && a.res == nil {
		if v, ok := a.m.Get(key); ok {
			return pdataValue(v), true
		}
		return attrValue{}, false
	}
	return a.getWire(key)
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
