package otlpreceiver

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/protobuf/encoding/protowire"
)

// manyTraces has two resources, three scopes and five spans.
func manyTraces() ptrace.Traces {
	td := traces("a", "b")
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "x")
	rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty().SetName("c")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("lib")
	ss.Spans().AppendEmpty().SetName("d")
	ss.Spans().AppendEmpty().SetName("e")
	return td
}

// deprecatedScopes is a request whose one ResourceSpans carries its spans
// in the deprecated instrumentation_library_spans (field 1000).
func deprecatedScopes() []byte {
	span := protowire.AppendTag(nil, 5, protowire.BytesType)
	span = protowire.AppendString(span, "old")
	scope := protowire.AppendTag(nil, scopeSpans, protowire.BytesType)
	scope = protowire.AppendBytes(scope, span)
	scope = protowire.AppendTag(scope, scopeSpans, protowire.BytesType)
	scope = protowire.AppendBytes(scope, span)
	rs := protowire.AppendTag(nil, resourceDeprecatedScopes, protowire.BytesType)
	rs = protowire.AppendBytes(rs, scope)
	req := protowire.AppendTag(nil, requestResourceSpans, protowire.BytesType)
	return protowire.AppendBytes(req, rs)
}

func TestCountSpans(t *testing.T) {
	for name, tc := range map[string]struct {
		req  []byte
		want int
	}{
		"empty":      {nil, 0},
		"one":        {tracesProto(t, traces("a")), 1},
		"many":       {tracesProto(t, manyTraces()), 5},
		"deprecated": {deprecatedScopes(), 2},
	} {
		n, err := countSpans(tc.req)
		if err != nil || n != tc.want {
			t.Errorf("%s: %d, %v; want %d", name, n, err, tc.want)
		}
		r := ptraceotlp.NewExportRequest()
		if err := r.UnmarshalProto(tc.req); err != nil || r.Traces().SpanCount() != tc.want {
			t.Errorf("%s: pdata counts %d (%v)", name, r.Traces().SpanCount(), err)
		}
	}
	full := tracesProto(t, manyTraces())
	for _, bad := range [][]byte{full[:len(full)-1], {0x0a, 0x05, 0x01}, {0xff}} {
		if _, err := countSpans(bad); err == nil {
			t.Errorf("%x: no error", bad)
		}
	}
}

// FuzzCountSpans checks that countSpans counts what pdata decodes. pdata
// skips malformed groups (a wire type OTLP never uses) that countSpans
// rejects; on what pdata encodes itself, countSpans must always succeed.
func FuzzCountSpans(f *testing.F) {
	f.Add(tracesProto(f, manyTraces()))
	f.Add(deprecatedScopes())
	f.Fuzz(func(t *testing.T, req []byte) {
		r := ptraceotlp.NewExportRequest()
		if r.UnmarshalProto(req) != nil {
			return
		}
		want := r.Traces().SpanCount()
		if n, err := countSpans(req); err == nil && n != want {
			t.Fatalf("countSpans %d; pdata %d", n, want)
		}
		canonical, err := r.MarshalProto()
		if err != nil {
			t.Fatal(err)
		}
		if n, err := countSpans(canonical); err != nil || n != want {
			t.Fatalf("re-encoded: countSpans %d, %v; pdata %d", n, err, want)
		}
	})
}
