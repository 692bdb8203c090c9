package otlpjson

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/sidecarhq/sidecar/internal/loadgen"
	"github.com/sidecarhq/sidecar/sampling/internal/otlpwire"
)

// FuzzTranscode holds Transcode to pdata's JSONUnmarshaler, the oracle: on
// valid JSON both accept the same requests, and the spans a keep pattern
// keeps through otlpwire.Filter are, re-encoded, byte for byte the spans
// pdata decoded from the JSON with the same pattern applied.
func FuzzTranscode(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(byte(0x55), s)
	}
	f.Fuzz(func(t *testing.T, pattern byte, req []byte) {
		pb, err := Transcode(nil, req)
		if !json.Valid(req) || !utf8.Valid(req) || hasEmptyName(req) {
			// pdata reads no further than its object, and ends an object at
			// a member named "" (its reader's end-of-object signal), reading
			// the rest as members of the object around it: nothing to hold
			// Transcode to, which reads such a member as an unknown field.
			return
		}
		want, perr := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(req)
		if (err == nil) != (perr == nil) {
			t.Fatalf("Transcode error %v, pdata error %v", err, perr)
		}
		if err != nil {
			return
		}
		keep := func(i int) bool { return pattern>>(i%8)&1 == 1 }
		i := 0
		out, kept, total, err := otlpwire.Filter(nil, pb, nil, func(*otlpwire.Resource, *otlpwire.Span) (bool, []byte) {
			i++
			return keep(i - 1), nil
		})
		if err != nil {
			t.Fatalf("otlpwire.Filter rejects the transcoded request: %v", err)
		}
		if total != want.SpanCount() {
			t.Fatalf("%d spans transcoded, pdata has %d", total, want.SpanCount())
		}
		preq := ptraceotlp.NewExportRequest() // as the receiver decodes it
		err = preq.UnmarshalProto(out)
		got := preq.Traces()
		if err != nil {
			t.Fatalf("pdata rejects the filtered request: %v", err)
		}
		want = filtered(want, keep)
		if kept != want.SpanCount() {
			t.Fatalf("kept %d, want %d", kept, want.SpanCount())
		}
		g, _ := (&ptrace.ProtoMarshaler{}).MarshalTraces(got)
		w, _ := (&ptrace.ProtoMarshaler{}).MarshalTraces(want)
		if !bytes.Equal(g, w) {
			gj, _ := (&ptrace.JSONMarshaler{}).MarshalTraces(got)
			wj, _ := (&ptrace.JSONMarshaler{}).MarshalTraces(want)
			t.Fatalf("kept spans differ:\n got %s\nwant %s", gj, wj)
		}
	})
}

// hasEmptyName reports whether the valid JSON text b has an object member
// named "".
func hasEmptyName(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	type frame struct{ object, wantName bool }
	var stack []frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if n := len(stack); n > 0 && stack[n-1].wantName && tok != json.Delim('}') {
			if tok == "" {
				return true
			}
			stack[n-1].wantName = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{object: true, wantName: true})
			continue
		case json.Delim('['):
			stack = append(stack, frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantName = true // a value ended
		}
	}
}

// filtered removes from td the spans keep refuses, numbering them in
// request order, and the scopes and resources left empty, as Filter does.
func filtered(td ptrace.Traces, keep func(int) bool) ptrace.Traces {
	i := 0
	td.ResourceSpans().RemoveIf(func(rs ptrace.ResourceSpans) bool {
		rs.ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool {
			ss.Spans().RemoveIf(func(ptrace.Span) bool {
				i++
				return !keep(i - 1)
			})
			return ss.Spans().Len() == 0
		})
		return rs.ScopeSpans().Len() == 0
	})
	return td
}

func seeds(tb testing.TB) [][]byte {
	var out [][]byte
	for _, td := range []ptrace.Traces{loadgen.NewSpans(1).Requests(1, time.Unix(1_700_000_000, 0)), everyField()} {
		b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b)
	}
	for _, s := range handWritten {
		out = append(out, []byte(s))
	}
	return out
}

// handWritten are requests as other encoders write them: snake_case names,
// numbers as strings and strings as numbers, enum names, escapes, nulls,
// unknown fields, and malformed ones.
var handWritten = []string{
	`{"resource_spans":[{"resource":{"attributes":[{"key":"service.name","value":{"string_value":"a\u00e9\n"}}],"dropped_attributes_count":"2"},
	  "scope_spans":[{"scope":{"name":"s","version":null},"spans":[{"trace_id":"0102030405060708090A0B0C0D0E0F10","span_id":"0102030405060708",
	  "parent_span_id":"","name":"GET \"x\"","kind":"SPAN_KIND_SERVER","start_time_unix_nano":"1700000000000000000","end_time_unix_nano":1700000000000000001,
	  "attributes":[{"key":"i","value":{"int_value":"-5"}},{"key":"d","value":{"double_value":"NaN"}},{"key":"b","value":{"bool_value":true}},
	  {"key":"by","value":{"bytes_value":"aGVsbG8="}},{"key":"a","value":{"array_value":{"values":[{"int_value":1},{"kvlist_value":{"values":[{"key":"k"}]}}]}}}],
	  "status":{"code":"STATUS_CODE_ERROR","message":"m"},"unknown":{"x":[1,{"y":null}]},"flags":257}],"schemaUrl":"u"}]}]}`,
	`{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"a","kind":2,"status":{"code":2},"events":[{"name":"exception","timeUnixNano":"5"}],
	  "links":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708","flags":1}]},{"name":"b","status":null,"attributes":null}]}]},
	  {"deprecatedScopeSpans":[{"spans":[{"name":"c"}]}]}]}`,
	`{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"a","name":"b","traceId":"0102030405060708090a0b0c0d0e0f10","traceId":""}]}]}]}`,
	`{"resourceSpans":[{"scopeSpans":[{"spans":[{"attributes":[{"key":"k","value":{"stringValue":"a","intValue":3}},{"value":{},"key":"e"}]}]}]}]}`,
	`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0102"}]}]}]}`,
	`{"resourceSpans":[{"scopeSpans":[{"spans":[{"kind":"SERVER"}]}]}]}`,
	`{"resourceSpans":[{"scopeSpans":[{"spans":[{"startTimeUnixNano":1.5}]}]}]}`,
	`{"resourceSpans":[{"scopeSpans":[{"spans":[{"startTimeUnixNano":-1}]}]}]}`,
	`{"resourceSpans":[{"scopeSpans":[{"spans":[{"droppedAttributesCount":4294967296}]}]}]}`,
	`{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":5}]}]}]}`,
	`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708",
	  "startTimeUnixNano":"18446744073709551615","endTimeUnixNano":"012","attributes":[{"key":"a","value":{"intValue":"9223372036854775807"}},
	  {"key":"b","value":{"intValue":"-9223372036854775808"}},{"key":"c","value":{"intValue":"0009223372036854775807"}}]}]}]}]}`,
	`{"resourceSpans":[{"scopeSpans":[{"spans":[{"attributes":[{"key":"a","value":{"intValue":"9223372036854775808"}}]}]}]}]}`,
	`{"resourceSpans":[{"scopeSpans":[{"spans":[{"startTimeUnixNano":"18446744073709551616"}]}]}]}`,
	`{"resourceSpans":[{"scopeSpans":[{"spans":[{"startTimeUnixNano":""}]}]}]}`,
	`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f\/0"}]}]}]}`,
	`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f1\u0030"}]}]}]}`,
	`{"resourceSpans":[{"scopeSpans":[{"spans":[{"spanId":"0102030405060708","links":[{"spanId":"0102030405060708\""}]}]}]}]}`,
	`{"resourceSpans" : [ { "scopeSpans" : [ { "spans" : [ { "name" : "a" , "kind" : 2 , "unknown" : [1e308, -2E-400] } ] } ] } ] }`,
	`{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"a","unknown":{"x":[1.8e308]}}]}]}]}`,
	`{"resourceSpans":{}}`,
	`{"resourceSpans":null}`,
	`null`,
	`{}`,
	`[]`,
}

// everyField is a request with every field of every message set.
func everyField() ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.SetSchemaUrl("r")
	rs.Resource().Attributes().PutStr("service.name", "a")
	rs.Resource().SetDroppedAttributesCount(3)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.SetSchemaUrl("s")
	ss.Scope().SetName("s")
	ss.Scope().SetVersion("1")
	ss.Scope().Attributes().PutInt("x", -1)
	ss.Scope().SetDroppedAttributesCount(1)
	for i := range 3 {
		s := ss.Spans().AppendEmpty()
		s.SetTraceID([16]byte{1, 0xff})
		s.SetSpanID([8]byte{byte(i), 0xab})
		s.SetParentSpanID([8]byte{2})
		s.TraceState().FromRaw("t=1")
		s.SetFlags(0x301)
		s.SetName("n\t\"é")
		s.SetKind(ptrace.SpanKindClient)
		s.SetStartTimestamp(1 << 62)
		s.SetEndTimestamp(1<<62 + 5)
		s.Attributes().PutInt("i", -1<<63)
		s.Attributes().PutDouble("d", 1.5e-300)
		s.Attributes().PutBool("b", true)
		s.Attributes().PutEmptyBytes("y").FromRaw([]byte{0, 1, 2, 0xff})
		l := s.Attributes().PutEmptySlice("l")
		l.AppendEmpty().SetStr("x")
		l.AppendEmpty().SetEmptyMap().PutDouble("m", 2)
		s.Attributes().PutEmpty("nil")
		s.SetDroppedAttributesCount(1)
		e := s.Events().AppendEmpty()
		e.SetName("exception")
		e.SetTimestamp(7)
		e.Attributes().PutStr("exception.message", "boom")
		e.SetDroppedAttributesCount(2)
		s.SetDroppedEventsCount(1)
		k := s.Links().AppendEmpty()
		k.SetTraceID([16]byte{9})
		k.SetSpanID([8]byte{3})
		k.TraceState().FromRaw("l=2")
		k.Attributes().PutBool("f", false)
		k.SetDroppedAttributesCount(4)
		k.SetFlags(1)
		s.SetDroppedLinksCount(1)
		s.Status().SetCode(ptrace.StatusCodeError)
		s.Status().SetMessage("m")
	}
	return td
}
