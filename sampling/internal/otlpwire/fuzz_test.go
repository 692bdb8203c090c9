package otlpwire

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/sidecarhq/sidecar/internal/loadgen"
)

const fuzzKey = "otlpwire.fuzz"

// FuzzFilter checks that Filter never rejects what pdata accepts, and that
// for what pdata accepts its accessors agree with pdata and its output
// unmarshals to the expected spans.
func FuzzFilter(f *testing.F) {
	f.Add(byte(0x55), byte(0x0f), marshal(f, testTraces()))
	f.Add(byte(0xff), byte(0x00), marshal(f, loadgen.NewSpans(1).Requests(2, time.Unix(1_700_000_000, 0))))
	f.Add(byte(0x01), byte(0x01), marshal(f, smallTraces()))
	span := func(name string) []byte {
		return lenf(2, unknown, str(5, name), lenf(9, str(1, "k"), lenf(2, varf(3, 1))))
	}
	f.Add(byte(0x02), byte(0xff), lenf(1, unknown, lenf(1000, span("a"), span("b")), lenf(2, span("c")), unknown))
	f.Add(byte(0x01), byte(0x01), lenf(1, lenf(1000, span("a"), span("b")), lenf(1000, span("c"))))
	f.Add(byte(0x00), byte(0x00), []byte{})
	f.Fuzz(func(t *testing.T, pattern, extras byte, req []byte) {
		pd := ptraceotlp.NewExportRequest()
		perr := pd.UnmarshalProto(req)
		var refs []spanRef
		if perr == nil {
			refs = spanRefs(pd.Traces())
		}
		keep := func(i int) bool { return pattern>>(i%8)&1 == 1 }
		extra := func(i int) bool { return extras>>(i%8)&1 == 1 }
		var before, calls int
		var buf []byte
		out, kept, total, err := Filter(nil, req, func(_ *Resource, s *Span) {
			if perr == nil && before < len(refs) {
				checkSpan(t, s, refs[before])
			}
			before++
		}, func(r *Resource, s *Span) (bool, []byte) {
			if perr == nil && calls < len(refs) {
				checkAttrs(t, r.Attr, refs[calls].res.Attributes())
			}
			i := calls
			calls++
			buf = buf[:0]
			if extra(i) {
				buf = appendFuzzExtra(buf, i)
			}
			return keep(i), buf
		})
		if err != nil {
			if perr == nil {
				t.Fatalf("Filter rejects what pdata accepts: %v", err)
			}
			return
		}
		if perr != nil {
			return // pdata is stricter where Filter is lazy
		}
		if before != len(refs) || calls != len(refs) || total != len(refs) {
			t.Fatalf("%d before and %d keep calls, total %d; pdata has %d spans", before, calls, total, len(refs))
		}
		want := filtered(pd.Traces(), keep, func(i int, s ptrace.Span) {
			if extra(i) {
				applyFuzzExtra(s, i)
			}
		})
		if kept != want.SpanCount() {
			t.Fatalf("kept %d, want %d", kept, want.SpanCount())
		}
		checkSame(t, want, out)
	})
}

func appendFuzzExtra(b []byte, i int) []byte {
	if i%2 == 0 {
		b = AppendTraceState(b, "ot=th:8")
	}
	return AppendStrAttr(b, fuzzKey, "v")
}

func applyFuzzExtra(s ptrace.Span, i int) {
	if i%2 == 0 {
		s.TraceState().FromRaw("ot=th:8")
	}
	for s.Attributes().Remove(fuzzKey) { // Filter drops every copy and appends its own
	}
	s.Attributes().PutStr(fuzzKey, "v")
}

// smallTraces is a small seed with every span field set.
func smallTraces() ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "a")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("s")
	for i := range 2 {
		s := ss.Spans().AppendEmpty()
		s.SetTraceID([16]byte{1})
		s.SetSpanID([8]byte{byte(i)})
		s.SetParentSpanID([8]byte{2})
		s.TraceState().FromRaw("t")
		s.SetFlags(1)
		s.SetName("n")
		s.SetKind(ptrace.SpanKindClient)
		s.SetStartTimestamp(1)
		s.SetEndTimestamp(2)
		s.Attributes().PutInt("i", 1)
		s.Attributes().PutDouble("d", 1)
		s.Attributes().PutBool("b", true)
		s.Attributes().PutEmptySlice("l").AppendEmpty().SetStr("x")
		s.SetDroppedAttributesCount(1)
		s.Events().AppendEmpty().SetName("e")
		s.SetDroppedEventsCount(1)
		s.Links().AppendEmpty().SetSpanID([8]byte{3})
		s.SetDroppedLinksCount(1)
		s.Status().SetCode(ptrace.StatusCodeError)
		s.Status().SetMessage("m")
	}
	return td
}
