package otlpwire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/sidecarhq/sidecar/internal/loadgen"
)

// testTraces has several resources and scopes and spans using every field.
func testTraces() ptrace.Traces {
	td := ptrace.NewTraces()
	n := 0
	for ri, scopes := range [][]int{{3, 2}, {4}, {1}, {2, 1, 2}} {
		rs := td.ResourceSpans().AppendEmpty()
		rs.SetSchemaUrl("https://opentelemetry.io/schemas/1.26.0")
		ra := rs.Resource().Attributes()
		ra.PutStr("service.name", "svc-"+string(rune('a'+ri)))
		ra.PutInt("service.instance", int64(ri))
		putAllTypes(ra)
		rs.Resource().SetDroppedAttributesCount(uint32(ri))
		for si, spans := range scopes {
			ss := rs.ScopeSpans().AppendEmpty()
			ss.Scope().SetName("scope-" + string(rune('a'+si)))
			ss.Scope().SetVersion("1.0")
			ss.Scope().Attributes().PutStr("scope.attr", "x")
			ss.SetSchemaUrl("https://example.com/scope")
			for range spans {
				n++
				s := ss.Spans().AppendEmpty()
				s.SetTraceID(pcommon.TraceID{byte(n), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
				s.SetSpanID(pcommon.SpanID{byte(n), 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x11})
				if n%2 == 0 {
					s.SetParentSpanID(pcommon.SpanID{byte(n - 1), 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x11})
				}
				if n%3 == 0 {
					s.TraceState().FromRaw("ot=th:8;rv:abcdef12345678,vendor=x")
				}
				s.SetFlags(uint32(n))
				s.SetName("span-" + strings.Repeat("x", n))
				s.SetKind(ptrace.SpanKind(n % 6))
				s.SetStartTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + n))
				s.SetEndTimestamp(pcommon.Timestamp(1_700_000_000_000_500_000 + n))
				a := s.Attributes()
				a.PutStr("db.system", "redis")
				a.PutInt("n", int64(-n))
				if n%2 == 1 {
					putAllTypes(a)
				}
				s.SetDroppedAttributesCount(uint32(n))
				for e := range n % 3 {
					ev := s.Events().AppendEmpty()
					ev.SetName("event-" + string(rune('0'+e)))
					ev.SetTimestamp(pcommon.Timestamp(n))
					ev.Attributes().PutStr("exception.message", "boom")
				}
				if n%4 == 0 {
					l := s.Links().AppendEmpty()
					l.SetTraceID(pcommon.TraceID{9})
					l.SetSpanID(pcommon.SpanID{9})
					l.Attributes().PutBool("link", true)
				}
				s.Status().SetCode(ptrace.StatusCode(n % 3))
				if n%3 == 2 {
					s.Status().SetMessage("ECONNRESET")
				}
			}
		}
	}
	return td
}

func putAllTypes(m pcommon.Map) {
	m.PutStr("str", "hello")
	m.PutStr("str.empty", "")
	m.PutBool("bool", true)
	m.PutBool("bool.false", false)
	m.PutInt("int", -42)
	m.PutDouble("double", 3.25)
	m.PutDouble("double.nan", math.NaN())
	m.PutEmptyBytes("bytes").FromRaw([]byte{1, 2, 3})
	s := m.PutEmptySlice("slice")
	s.AppendEmpty().SetStr("a")
	s.AppendEmpty().SetInt(1)
	mm := m.PutEmptyMap("map")
	mm.PutStr("k", "v")
	m.PutEmpty("empty")
}

func marshal(t testing.TB, td ptrace.Traces) []byte {
	t.Helper()
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// spanRefs lists a request's spans in order with their resources.
type spanRef struct {
	res  pcommon.Resource
	span ptrace.Span
}

func spanRefs(td ptrace.Traces) []spanRef {
	var refs []spanRef
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				refs = append(refs, spanRef{rs.Resource(), s})
			}
		}
	}
	return refs
}

// filtered is what Filter should produce: td with only the spans keep
// returns true for, extra applied through pdata, and empty containers removed.
func filtered(td ptrace.Traces, keep func(i int) bool, extra func(i int, s ptrace.Span)) ptrace.Traces {
	out := ptrace.NewTraces()
	td.CopyTo(out)
	i := 0
	out.ResourceSpans().RemoveIf(func(rs ptrace.ResourceSpans) bool {
		rs.ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool {
			ss.Spans().RemoveIf(func(s ptrace.Span) bool {
				k := keep(i)
				if k && extra != nil {
					extra(i, s)
				}
				i++
				return !k
			})
			return ss.Spans().Len() == 0
		})
		return rs.ScopeSpans().Len() == 0
	})
	return out
}

// checkSame fails unless got unmarshals to want.
func checkSame(t testing.TB, want ptrace.Traces, got []byte) {
	t.Helper()
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(got); err != nil {
		t.Fatalf("output does not unmarshal: %v", err)
	}
	var m ptrace.ProtoMarshaler
	wb, err := m.MarshalTraces(want)
	if err != nil {
		t.Fatal(err)
	}
	gb, err := m.MarshalTraces(req.Traces())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(wb, gb) {
		var j ptrace.JSONMarshaler
		wj, _ := j.MarshalTraces(want)
		gj, _ := j.MarshalTraces(req.Traces())
		t.Fatalf("output differs\nwant %s\ngot  %s", wj, gj)
	}
}

var valueTypes = map[pcommon.ValueType]ValueType{
	pcommon.ValueTypeEmpty:  ValueEmpty,
	pcommon.ValueTypeStr:    ValueStr,
	pcommon.ValueTypeBool:   ValueBool,
	pcommon.ValueTypeInt:    ValueInt,
	pcommon.ValueTypeDouble: ValueDouble,
	pcommon.ValueTypeBytes:  ValueBytes,
	pcommon.ValueTypeSlice:  ValueArray,
	pcommon.ValueTypeMap:    ValueMap,
}

func checkValue(t testing.TB, key string, got Value, want pcommon.Value) {
	t.Helper()
	if got.Type() != valueTypes[want.Type()] {
		t.Errorf("%q: type %d, want %v", key, got.Type(), want.Type())
	}
	if got.Str() != want.Str() || got.Int() != want.Int() || got.Bool() != want.Bool() ||
		math.Float64bits(got.Double()) != math.Float64bits(want.Double()) {
		t.Errorf("%q: value (%q %d %v %v), want %v", key, got.Str(), got.Int(), got.Bool(), got.Double(), want.AsRaw())
	}
}

func checkAttrs(t testing.TB, attr func(string) (Value, bool), want pcommon.Map) {
	t.Helper()
	for k := range want.All() {
		got, ok := attr(k)
		w, _ := want.Get(k) // the first one, like Attr
		if !ok {
			t.Errorf("attribute %q not found", k)
			continue
		}
		checkValue(t, k, got, w)
	}
	const absent = "otlpwire.absent"
	_, wok := want.Get(absent)
	if got, ok := attr(absent); ok != wok || (!wok && got.Type() != ValueEmpty) {
		t.Errorf("absent attribute: found %v, want %v", ok, wok)
	}
}

func checkSpan(t testing.TB, got *Span, ref spanRef) {
	t.Helper()
	w := ref.span
	if got.TraceID() != [16]byte(w.TraceID()) || got.SpanID() != [8]byte(w.SpanID()) ||
		got.ParentSpanID() != [8]byte(w.ParentSpanID()) {
		t.Errorf("ids %x %x %x, want %v %v %v", got.TraceID(), got.SpanID(), got.ParentSpanID(), w.TraceID(), w.SpanID(), w.ParentSpanID())
	}
	if got.TraceState() != w.TraceState().AsRaw() || got.Name() != w.Name() || got.Kind() != int32(w.Kind()) {
		t.Errorf("tracestate %q name %q kind %d, want %q %q %d", got.TraceState(), got.Name(), got.Kind(), w.TraceState().AsRaw(), w.Name(), w.Kind())
	}
	if got.StartTime() != uint64(w.StartTimestamp()) || got.EndTime() != uint64(w.EndTimestamp()) || got.StatusCode() != int32(w.Status().Code()) {
		t.Errorf("times %d %d status %d, want %d %d %d", got.StartTime(), got.EndTime(), got.StatusCode(), w.StartTimestamp(), w.EndTimestamp(), w.Status().Code())
	}
	checkAttrs(t, got.Attr, w.Attributes())
	absent := true
	for _, ev := range w.Events().All() {
		if !got.HasEvent(ev.Name()) {
			t.Errorf("event %q not found", ev.Name())
		}
		absent = absent && ev.Name() != "otlpwire.absent"
	}
	if got.HasEvent("otlpwire.absent") == absent {
		t.Errorf("HasEvent(absent) = %v", !absent)
	}
}

func TestAccessors(t *testing.T) {
	td := testTraces()
	refs := spanRefs(td)
	req := marshal(t, td)
	var before, keep int
	_, kept, total, err := Filter(nil, req, func(_ *Resource, s *Span) {
		checkSpan(t, s, refs[before])
		before++
	}, func(r *Resource, s *Span) (bool, []byte) {
		if before != len(refs) {
			t.Fatalf("keep called after %d of %d before calls", before, len(refs))
		}
		checkAttrs(t, r.Attr, refs[keep].res.Attributes())
		checkSpan(t, s, refs[keep])
		keep++
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if kept != len(refs) || total != len(refs) || keep != len(refs) {
		t.Fatalf("kept %d total %d keep calls %d, want %d", kept, total, keep, len(refs))
	}
}

func TestFilterPatterns(t *testing.T) {
	td := testTraces()
	req := marshal(t, td)
	n := td.SpanCount()
	refs := spanRefs(td)
	resOf := func(i int) string { v, _ := refs[i].res.Attributes().Get("service.name"); return v.Str() }
	tests := []struct {
		name  string
		keep  func(i int) bool
		extra bool
	}{
		{"none", func(int) bool { return false }, false},
		{"all", func(int) bool { return true }, false},
		{"all with extra", func(int) bool { return true }, true},
		{"alternate", func(i int) bool { return i%2 == 0 }, false},
		{"alternate with extra", func(i int) bool { return i%2 == 1 }, true},
		{"first scope of first resource dropped", func(i int) bool { return i >= 3 }, true},
		{"second resource dropped", func(i int) bool { return resOf(i) != "svc-b" }, false},
		{"only last span", func(i int) bool { return i == n-1 }, true},
		{"middle scope of last resource dropped", func(i int) bool { return i != n-3 }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var extraFn func(int, ptrace.Span)
			if tt.extra {
				extraFn = applyExtra
			}
			want := filtered(td, tt.keep, extraFn)
			dst := []byte("prefix")
			i := 0
			var buf []byte
			out, kept, total, err := Filter(dst, req, nil, func(_ *Resource, _ *Span) (bool, []byte) {
				k := tt.keep(i)
				buf = buf[:0]
				if tt.extra {
					buf = appendExtra(buf, i)
				}
				i++
				return k, buf // buf is reused: Filter must copy it
			})
			if err != nil {
				t.Fatal(err)
			}
			if total != n || kept != want.SpanCount() {
				t.Fatalf("kept %d of %d, want %d of %d", kept, total, want.SpanCount(), n)
			}
			if tt.name == "all" {
				if &out[0] != &req[0] {
					t.Fatal("nothing changed but out is not req")
				}
			} else {
				if !bytes.HasPrefix(out, []byte("prefix")) {
					t.Fatalf("dst not appended to: %q", out[:10])
				}
				out = out[len("prefix"):]
			}
			checkSame(t, want, out)
		})
	}
}

// appendExtra and applyExtra add the same fields to span i, on the wire and in pdata.
func appendExtra(b []byte, i int) []byte {
	switch i % 3 {
	case 0:
		b = AppendTraceState(b, "ot=th:fd70a4;rv:"+strings.Repeat("1", i%5))
	case 1:
		b = AppendStrAttr(b, "sampling.rule", strings.Repeat("r", 200*i))
	}
	return AppendDoubleAttr(b, "sampling.weight", float64(i)+0.5)
}

func applyExtra(i int, s ptrace.Span) {
	switch i % 3 {
	case 0:
		s.TraceState().FromRaw("ot=th:fd70a4;rv:" + strings.Repeat("1", i%5))
	case 1:
		s.Attributes().PutStr("sampling.rule", strings.Repeat("r", 200*i))
	}
	s.Attributes().PutDouble("sampling.weight", float64(i)+0.5)
}

func TestEmptyAndEdgeValues(t *testing.T) {
	// An empty request, and empty ScopeSpans and ResourceSpans, which are removed.
	out, kept, total, err := Filter(nil, nil, nil, keepAll)
	if err != nil || len(out) != 0 || kept != 0 || total != 0 {
		t.Fatalf("empty request: %q %d %d %v", out, kept, total, err)
	}
	td := ptrace.NewTraces()
	td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	rs := td.ResourceSpans().AppendEmpty()
	rs.ScopeSpans().AppendEmpty()
	rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty().SetName("only")
	rs.ScopeSpans().AppendEmpty()
	td.ResourceSpans().AppendEmpty()
	out, kept, total, err = Filter(nil, marshal(t, td), nil, keepAll)
	if err != nil || kept != 1 || total != 1 {
		t.Fatalf("got %d of %d, %v", kept, total, err)
	}
	checkSame(t, filtered(td, func(int) bool { return true }, nil), out)
}

func keepAll(*Resource, *Span) (bool, []byte) { return true, nil }

// Tiny encoder for hand-built messages.
func lenf(num int, parts ...[]byte) []byte {
	body := bytes.Join(parts, nil)
	return append(binary.AppendUvarint(binary.AppendUvarint(nil, uint64(num)<<3|2), uint64(len(body))), body...)
}

func varf(num int, v uint64) []byte {
	return binary.AppendUvarint(binary.AppendUvarint(nil, uint64(num)<<3), v)
}

func fix64(num int, v uint64) []byte {
	return binary.LittleEndian.AppendUint64(binary.AppendUvarint(nil, uint64(num)<<3|1), v)
}

func fix32(num int, v uint32) []byte {
	return binary.LittleEndian.AppendUint32(binary.AppendUvarint(nil, uint64(num)<<3|5), v)
}

func str(num int, s string) []byte { return lenf(num, []byte(s)) }

// group is an empty unknown group, field 101.
var group = []byte{0xab, 0x06, 0xac, 0x06}

// unknown has an unknown field of every wire type, a group included (not
// last: pdata rejects a group that ends its message).
var unknown = bytes.Join([][]byte{varf(99, 7), group, fix64(98, 1), str(97, "?"), fix32(96, 2)}, nil)

func TestUnknownFieldsCopied(t *testing.T) {
	span := func(name string) []byte {
		return lenf(2, unknown, str(5, name), fix64(7, 1), unknown, lenf(9, str(1, "k"), lenf(2, str(1, "v"))))
	}
	scope := func(body ...[]byte) []byte {
		return lenf(2, unknown, lenf(1, str(1, "lib")), bytes.Join(body, nil), str(3, "schema"), unknown)
	}
	res := func(body ...[]byte) []byte {
		return lenf(1, unknown, lenf(1, lenf(1, str(1, "service.name"), lenf(2, str(1, "api"))), unknown), bytes.Join(body, nil), unknown)
	}
	req := bytes.Join([][]byte{unknown, res(scope(span("a"), unknown, span("b")), scope(span("c"))), unknown, res(scope(span("d"))), unknown}, nil)
	want := bytes.Join([][]byte{unknown, res(scope(unknown, span("b"))), unknown, unknown}, nil)
	out, kept, total, err := Filter(nil, req, nil, func(r *Resource, s *Span) (bool, []byte) {
		if v, _ := r.Attr("service.name"); v.Str() != "api" {
			t.Errorf("service.name = %q", v.Str())
		}
		if v, _ := s.Attr("k"); v.Str() != "v" {
			t.Errorf("k = %q", v.Str())
		}
		return s.Name() == "b", nil
	})
	if err != nil || kept != 1 || total != 4 {
		t.Fatalf("kept %d of %d, %v", kept, total, err)
	}
	if !bytes.Equal(out, want) {
		t.Fatalf("got  %x\nwant %x", out, want)
	}
	pd := ptraceotlp.NewExportRequest()
	if err := pd.UnmarshalProto(req); err != nil || pd.Traces().SpanCount() != 4 {
		t.Fatalf("pdata: %v, %d spans", err, pd.Traces().SpanCount())
	}
}

func TestRepeatedFieldsLikePdata(t *testing.T) {
	// Later singular fields win, repeated Status and AnyValue messages merge,
	// KeyValue's last key wins, strindex values are empty.
	span := lenf(2,
		str(5, "first"), str(5, "second"),
		lenf(1, bytes.Repeat([]byte{1}, 16)), lenf(1),
		varf(6, 2), varf(6, 3),
		lenf(15, varf(3, 2), str(2, "m")), lenf(15, str(2, "n")),
		lenf(9, str(1, "ignored"), str(1, "a"), lenf(2, str(1, "x")), lenf(2, varf(3, 5)), lenf(2)),
		lenf(9, str(1, "b"), lenf(2, str(1, "x"), varf(8, 1))),
		lenf(9, str(1, "a"), lenf(2, str(1, "shadowed"))),
		lenf(11, str(2, "old"), str(2, "ev")),
	)
	req := lenf(1, lenf(2, span))
	pd := ptraceotlp.NewExportRequest()
	if err := pd.UnmarshalProto(req); err != nil {
		t.Fatal(err)
	}
	refs := spanRefs(pd.Traces())
	_, _, _, err := Filter(nil, req, nil, func(_ *Resource, s *Span) (bool, []byte) {
		checkSpan(t, s, refs[0])
		if s.HasEvent("old") {
			t.Error("an event's replaced name matched")
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestDeprecatedScopeSpans(t *testing.T) {
	span := func(name string) []byte { return lenf(2, str(5, name)) }
	tests := []struct {
		name      string
		req       []byte
		wantNames []string
	}{
		{"only deprecated", lenf(1, lenf(1000, span("a"), span("b")), lenf(1000, span("c"))), []string{"a", "b", "c"}},
		{"both", lenf(1, lenf(1000, span("a")), lenf(2, span("b")), lenf(1000, span("c"))), []string{"b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pd := ptraceotlp.NewExportRequest()
			if err := pd.UnmarshalProto(tt.req); err != nil {
				t.Fatal(err)
			}
			var names []string
			out, _, total, err := Filter(nil, tt.req, nil, func(_ *Resource, s *Span) (bool, []byte) {
				names = append(names, s.Name())
				return s.Name() != "b", nil
			})
			if err != nil || total != pd.Traces().SpanCount() || strings.Join(names, ",") != strings.Join(tt.wantNames, ",") {
				t.Fatalf("spans %v (total %d), want %v; err %v", names, total, tt.wantNames, err)
			}
			i := 0
			checkSame(t, filtered(pd.Traces(), func(int) bool { i++; return tt.wantNames[i-1] != "b" }, nil), out)
		})
	}
}

func TestMalformed(t *testing.T) {
	good := marshal(t, testTraces())
	tests := []struct {
		name string
		req  []byte
	}{
		{"truncated varint", []byte{0x0a, 0x80}},
		{"truncated tag", []byte{0x80}},
		{"varint overflow", append([]byte{0x08}, bytes.Repeat([]byte{0xff}, 10)...)},
		{"length beyond buffer", []byte{0x0a, 0x05, 0x00}},
		{"nested length beyond parent", lenf(1, []byte{0x12, 0x05, 0x00})},
		{"field number 0", []byte{0x02, 0x00}},
		{"illegal wire type", []byte{0x0e}},
		{"stray end group", []byte{0xac, 0x06}},
		{"group ending its message (pdata quirk)", lenf(1, lenf(2, lenf(2, str(5, "s"), group)))},
		{"group ended after a scalar", lenf(1, lenf(2, lenf(2, []byte{0xab, 0x06}, varf(1, 1), []byte{0xac, 0x06}, str(5, "s"))))},
		{"ResourceSpans as varint", varf(1, 1)},
		{"ScopeSpans as fixed32", lenf(1, fix32(2, 1))},
		{"Span as fixed64", lenf(1, lenf(2, fix64(2, 1)))},
		{"Span name as varint", lenf(1, lenf(2, lenf(2, varf(5, 1))))},
		{"Span kind as bytes", lenf(1, lenf(2, lenf(2, str(6, "x"))))},
		{"Span flags as fixed64", lenf(1, lenf(2, lenf(2, fix64(16, 1))))},
		{"trace id of 3 bytes", lenf(1, lenf(2, lenf(2, str(1, "abc"))))},
		{"span id of 16 bytes", lenf(1, lenf(2, lenf(2, str(2, strings.Repeat("a", 16)))))},
		{"status code as bytes", lenf(1, lenf(2, lenf(2, lenf(15, str(3, "x")))))},
		{"truncated request", good[:len(good)-1]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, _, err := Filter(nil, tt.req, nil, keepAll); err == nil {
				t.Fatal("no error")
			}
			if err := ptraceotlp.NewExportRequest().UnmarshalProto(tt.req); err == nil {
				t.Fatal("pdata accepts it")
			}
		})
	}
}

func TestMalformedFoundLazily(t *testing.T) {
	attrs := lenf(9, str(1, "a"), lenf(2, str(1, "x")))
	bad := lenf(9, varf(1, 1))
	req := lenf(1, lenf(1, lenf(1, varf(1, 1))), lenf(2, lenf(2, str(5, "s"), attrs, bad, lenf(11, str(1, "x")))))
	if err := ptraceotlp.NewExportRequest().UnmarshalProto(req); err == nil {
		t.Fatal("pdata accepts it")
	}
	tests := []struct {
		name string
		look func(*Resource, *Span)
		fail bool
	}{
		{"not looked at", func(*Resource, *Span) {}, false},
		{"attribute found before it", func(_ *Resource, s *Span) { s.Attr("a") }, false},
		{"attribute lookup reaches it", func(_ *Resource, s *Span) { s.Attr("b") }, true},
		{"event lookup", func(_ *Resource, s *Span) { s.HasEvent("e") }, true},
		{"resource lookup", func(r *Resource, _ *Span) { r.Attr("a") }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, err := Filter(nil, req, nil, func(r *Resource, s *Span) (bool, []byte) {
				tt.look(r, s)
				return false, nil
			})
			if (err != nil) != tt.fail {
				t.Fatalf("err = %v, want failure %v", err, tt.fail)
			}
			_, _, _, err = Filter(nil, req, func(_ *Resource, s *Span) { tt.look(&Resource{}, s) }, func(*Resource, *Span) (bool, []byte) { return false, nil })
			if (err != nil) != (tt.fail && tt.name != "resource lookup") {
				t.Fatalf("in before: err = %v", err)
			}
		})
	}
}

func TestEveryTruncation(t *testing.T) {
	req := marshal(t, testTraces())
	for n := range len(req) {
		_, _, _, err := Filter(nil, req[:n], nil, keepAll)
		if err != nil && ptraceotlp.NewExportRequest().UnmarshalProto(req[:n]) == nil {
			t.Fatalf("cut at %d: Filter rejects what pdata accepts: %v", n, err)
		}
	}
}

func TestAppendHelpers(t *testing.T) {
	extra := AppendStrAttr(nil, "k", "")
	extra = AppendStrAttr(extra, "", "v")
	extra = AppendDoubleAttr(extra, "d", -1.5)
	extra = AppendStrAttr(extra, strings.Repeat("k", 300), strings.Repeat("v", 70000))
	extra = AppendTraceState(extra, "")
	req := lenf(1, lenf(2, lenf(2, str(3, "old"), str(5, "s"))))
	out, _, _, err := Filter(nil, req, nil, func(*Resource, *Span) (bool, []byte) { return true, extra })
	if err != nil {
		t.Fatal(err)
	}
	pd := ptraceotlp.NewExportRequest()
	if err := pd.UnmarshalProto(out); err != nil {
		t.Fatal(err)
	}
	s := pd.Traces().ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	want := map[string]any{"k": "", "": "v", "d": -1.5, strings.Repeat("k", 300): strings.Repeat("v", 70000)}
	got := s.Attributes().AsRaw()
	if len(got) != len(want) || got["k"] != "" || got[""] != "v" || got["d"] != -1.5 || got[strings.Repeat("k", 300)] != strings.Repeat("v", 70000) {
		t.Fatalf("attributes %v", got)
	}
	if v, _ := s.Attributes().Get("k"); v.Type() != pcommon.ValueTypeStr {
		t.Fatalf("empty string value has type %v", v.Type())
	}
	if s.TraceState().AsRaw() != "" || s.Name() != "s" {
		t.Fatalf("tracestate %q name %q", s.TraceState().AsRaw(), s.Name())
	}
}

func TestNoAllocsPerSpan(t *testing.T) {
	req := marshal(t, loadgen.NewSpans(1).Requests(56, time.Unix(1_700_000_000, 0)))
	dst := make([]byte, 0, len(req))
	i := 0
	var extra []byte
	keep := func(r *Resource, s *Span) (bool, []byte) {
		i++
		r.Attr("service.name")
		s.Attr("db.system")
		s.HasEvent("exception")
		if i%9 != 0 {
			return false, nil
		}
		extra = AppendTraceState(extra[:0], "ot=th:0")
		extra = AppendDoubleAttr(extra, "sampling.weight", 9)
		return true, extra
	}
	allocs := testing.AllocsPerRun(20, func() {
		out, _, _, err := Filter(dst, req, func(_ *Resource, s *Span) { s.ParentSpanID() }, keep)
		if err != nil {
			t.Fatal(err)
		}
		dst = out[:0]
	})
	// A pool emptied by a GC (or, under -race, dropping items on purpose)
	// costs a new scratch, a handful of allocations, never one per span.
	if allocs >= 10 {
		t.Fatalf("%v allocations per Filter of 504 spans", allocs)
	}
}

// An attribute in extra replaces the span's own attributes with its key,
// duplicates included, as the pdata path's Put* does; other attributes and
// spans without the key are left as they are.
func TestFilterExtraReplacesAttributes(t *testing.T) {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	withKey := spans.AppendEmpty()
	withKey.SetName("with")
	withKey.Attributes().PutStr("a", "1")
	withKey.Attributes().PutDouble("sampling.adjusted_count", 8)
	withKey.Attributes().PutStr("b", "2")
	without := spans.AppendEmpty()
	without.SetName("without")
	without.Attributes().PutStr("a", "1")
	req, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	// A second copy of the key, as a request may carry (pdata keeps both).
	dup := AppendDoubleAttr(nil, "sampling.adjusted_count", 16)
	req = appendToFirstSpan(t, req, dup)

	extra := AppendDoubleAttr(nil, "sampling.adjusted_count", 128)
	extra = AppendStrAttr(extra, "sampling.rule", "redis")
	out, kept, _, err := Filter(nil, req, nil, func(*Resource, *Span) (bool, []byte) { return true, extra })
	if err != nil || kept != 2 {
		t.Fatalf("Filter: kept %d, %v", kept, err)
	}
	got := ptraceotlp.NewExportRequest()
	if err := got.UnmarshalProto(out); err != nil {
		t.Fatal(err)
	}
	gs := got.Traces().ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	want := map[string][]string{
		"with":    {"a=1", "b=2", "sampling.adjusted_count=128", "sampling.rule=redis"},
		"without": {"a=1", "sampling.adjusted_count=128", "sampling.rule=redis"},
	}
	for i := 0; i < gs.Len(); i++ {
		var attrs []string
		for k, v := range gs.At(i).Attributes().All() {
			attrs = append(attrs, k+"="+v.AsString())
		}
		if w := want[gs.At(i).Name()]; !slices.Equal(attrs, w) {
			t.Errorf("span %q attributes %v, want %v", gs.At(i).Name(), attrs, w)
		}
	}
}

// appendToFirstSpan appends fields to the first span of a one-resource,
// one-scope request by re-encoding the three enclosing lengths.
func appendToFirstSpan(t *testing.T, req, fields []byte) []byte {
	t.Helper()
	sc := new(scratch)
	if err := sc.parse(req); err != nil {
		t.Fatal(err)
	}
	s := sc.spans[0]
	span := append(slices.Clone(req[s.start:s.end]), fields...)
	scope := slices.Clone(req[sc.scopes[0].start:s.hdr])
	scope = appendLen(scope, 2, len(span))
	scope = append(scope, span...)
	scope = append(scope, req[s.end:sc.scopes[0].end]...)
	res := slices.Clone(req[sc.res[0].start:sc.scopes[0].hdr])
	res = appendLen(res, 2, len(scope))
	res = append(res, scope...)
	res = append(res, req[sc.scopes[0].end:sc.res[0].end]...)
	return append(appendLen(nil, 1, len(res)), res...)
}

// AttrsOf finds in one pass what Attr finds key by key.
func TestAttrsOfAgreesWithAttr(t *testing.T) {
	td := testTraces()
	req, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{"str", "int", "double", "bool", "absent", "db.system", "bytes"}
	vals := make([]Value, len(keys))
	spans := 0
	_, _, _, err = Filter(nil, req, nil, func(_ *Resource, s *Span) (bool, []byte) {
		spans++
		clear(vals)
		found := s.AttrsOf(keys, vals)
		for i, k := range keys {
			want, ok := s.Attr(k)
			if got := found&(1<<i) != 0; got != ok || (ok && vals[i] != want) {
				t.Errorf("span %q key %q: AttrsOf %v %+v, Attr %v %+v", s.Name(), k, got, vals[i], ok, want)
			}
		}
		return true, nil
	})
	if err != nil || spans == 0 {
		t.Fatalf("Filter: %d spans, %v", spans, err)
	}
}

func TestValueBits(t *testing.T) {
	for _, c := range []struct {
		v    Value
		want uint64
	}{
		{Value{typ: ValueInt, num: uint64(1<<64 - 5)}, uint64(1<<64 - 5)},
		{Value{typ: ValueDouble, num: math.Float64bits(-2.5)}, math.Float64bits(-2.5)},
		{Value{typ: ValueBool, num: 1}, 1},
		{Value{typ: ValueStr, str: "x"}, 0},
	} {
		if got := c.v.Bits(); got != c.want {
			t.Errorf("%+v: Bits = %#x, want %#x", c.v, got, c.want)
		}
	}
	if v := (Value{typ: ValueInt, num: uint64(1<<64 - 5)}); int64(v.Bits()) != v.Int() {
		t.Error("an int's bits are not its two's complement")
	}
}

// TestFilterAside checks that the spans set aside are written as Filter
// writes them when it keeps only those, whatever the main output kept and
// carried (extra, rewritten spans), and that the main output is Filter's.
func TestFilterAside(t *testing.T) {
	td := testTraces()
	req := marshal(t, td)
	n := td.SpanCount()
	refs := spanRefs(td)
	resOf := func(i int) string { v, _ := refs[i].res.Attributes().Get("service.name"); return v.Str() }
	patterns := []struct {
		name string
		set  func(i int) bool
	}{
		{"none", func(int) bool { return false }},
		{"all", func(int) bool { return true }},
		{"alternate", func(i int) bool { return i%2 == 1 }},
		{"second resource", func(i int) bool { return resOf(i) == "svc-b" }},
		{"only last span", func(i int) bool { return i == n-1 }},
	}
	for _, keepAll := range []bool{false, true} {
		for _, p := range patterns {
			t.Run(fmt.Sprintf("%s/keep all %v", p.name, keepAll), func(t *testing.T) {
				keep := func(i int) bool { return keepAll || !p.set(i) }
				i := 0
				var buf []byte
				out, aside, kept, total, err := FilterAside([]byte("prefix"), []byte("aside"), req, nil, func(*Resource, *Span) (bool, []byte) {
					buf = appendExtra(buf[:0], i)
					k := keep(i)
					i++
					return k, buf
				}, p.set)
				if err != nil {
					t.Fatal(err)
				}
				want := filtered(td, keep, applyExtra)
				if total != n || kept != want.SpanCount() {
					t.Fatalf("kept %d of %d, want %d of %d", kept, total, want.SpanCount(), n)
				}
				checkSame(t, want, out[len("prefix"):])
				wantAside := filtered(td, p.set, nil)
				switch {
				case wantAside.SpanCount() == 0:
					if aside != nil {
						t.Fatalf("nothing set aside, but aside is %q", aside)
					}
				case wantAside.SpanCount() == n:
					if &aside[0] != &req[0] {
						t.Fatal("every span set aside, but aside is not req")
					}
					checkSame(t, wantAside, aside)
				default:
					if !bytes.HasPrefix(aside, []byte("aside")) {
						t.Fatalf("aside not appended to: %q", aside[:10])
					}
					checkSame(t, wantAside, aside[len("aside"):])
				}
			})
		}
	}
}
