package axiomexporter

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// richTraces uses every part of the span model, so that a field lost on the
// way shows up as a difference.
func richTraces() ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.SetSchemaUrl("https://opentelemetry.io/schemas/1.33.0")
	rs.Resource().Attributes().PutStr("service.name", "checkout")
	rs.Resource().Attributes().PutInt("process.pid", 4242)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("ioredis")
	ss.Scope().SetVersion("5.4.1")
	ss.Scope().Attributes().PutBool("scope.flag", true)
	start := time.Date(2026, 11, 30, 12, 0, 0, 123456789, time.UTC)
	for i := range 2 {
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, byte(i)})
		sp.SetSpanID(pcommon.SpanID{8, 7, 6, 5, 4, 3, 2, byte(i)})
		sp.SetParentSpanID(pcommon.SpanID{1, 1, 1, 1, 1, 1, 1, 1})
		sp.TraceState().FromRaw("vendor=abc,ot=th:8")
		sp.SetName("GET")
		sp.SetKind(ptrace.SpanKindClient)
		sp.SetFlags(1)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(1500 * time.Microsecond)))
		sp.Attributes().PutStr("db.system", "redis")
		sp.Attributes().PutDouble("weight", 0.25)
		sp.Attributes().PutEmptySlice("args").AppendEmpty().SetStr("user:1")
		sp.Attributes().PutEmptyMap("nested").PutInt("n", 7)
		sp.SetDroppedAttributesCount(3)
		ev := sp.Events().AppendEmpty()
		ev.SetName("exception")
		ev.SetTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Millisecond)))
		ev.Attributes().PutStr("exception.message", "boom")
		ev.SetDroppedAttributesCount(1)
		sp.SetDroppedEventsCount(2)
		link := sp.Links().AppendEmpty()
		link.SetTraceID(pcommon.TraceID{9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9})
		link.SetSpanID(pcommon.SpanID{7, 7, 7, 7, 7, 7, 7, 7})
		link.TraceState().FromRaw("k=v")
		link.Attributes().PutStr("link.kind", "follows")
		link.SetFlags(1)
		sp.SetDroppedLinksCount(1)
		sp.Status().SetCode(ptrace.StatusCodeError)
		sp.Status().SetMessage("timeout")
	}
	return td
}

func TestSpansArriveIntact(t *testing.T) {
	srv := axiomtest.NewForTest(t)
	h := newHarness()
	exp := startTraces(t, h, testConfig(srv.URL()))
	sent := richTraces()
	if err := exp.ConsumeTraces(context.Background(), sent); err != nil {
		t.Fatal(err)
	}
	var m ptrace.JSONMarshaler
	want, _ := m.MarshalTraces(sent)
	got, _ := m.MarshalTraces(srv.Traces(tracesDS))
	if !bytes.Equal(want, got) {
		t.Errorf("spans changed on the way:\nsent %s\ngot  %s", want, got)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("got %d requests", len(reqs))
	}
	r := reqs[0]
	for header, want := range map[string]string{
		"Content-Type":     "application/x-protobuf",
		"Content-Encoding": "gzip",
		"X-Axiom-Dataset":  tracesDS,
		"Authorization":    "Bearer " + testToken,
	} {
		if got := r.Header.Get(header); got != want {
			t.Errorf("%s = %q, want %q", header, got, want)
		}
	}
	if r.Header.Get("X-Axiom-Org-Id") != "" {
		t.Error("X-Axiom-Org-Id sent without org_id")
	}
	if n := h.counter(t, "otelcol_exporter_axiom_sent_items", "signal", "traces"); n != 2 {
		t.Errorf("sent_items = %d, want 2", n)
	}
}

func TestTracesAnswersClassified(t *testing.T) {
	t.Run("429 waits for reset", func(t *testing.T) {
		srv := axiomtest.NewForTest(t)
		reset := time.Now().Add(2 * time.Second).Truncate(time.Second)
		srv.Fail(tracesDS, axiomtest.RateLimited(reset))
		exp := startTraces(t, newHarness(), testConfig(srv.URL()))
		if err := exp.ConsumeTraces(context.Background(), richTraces()); err != nil {
			t.Fatal(err)
		}
		reqs := srv.Requests()
		if len(reqs) != 2 || reqs[1].Received.Before(reset) {
			t.Fatalf("want a second request after %v, got %+v", reset, reqs)
		}
		if srv.SpanCount(tracesDS) != 2 {
			t.Error("spans not delivered")
		}
	})
	t.Run("503 retried", func(t *testing.T) {
		srv := axiomtest.NewForTest(t)
		srv.Fail(tracesDS, axiomtest.Status(503), axiomtest.ConnReset())
		exp := startTraces(t, newHarness(), testConfig(srv.URL()))
		if err := exp.ConsumeTraces(context.Background(), richTraces()); err != nil {
			t.Fatal(err)
		}
		if srv.SpanCount(tracesDS) != 2 {
			t.Error("spans not delivered exactly once")
		}
	})
	t.Run("401 held until the token is accepted", func(t *testing.T) {
		srv := axiomtest.NewForTest(t)
		srv.Fail(tracesDS, axiomtest.Status(http.StatusUnauthorized))
		h := newHarness()
		exp := startTraces(t, h, testConfig(srv.URL()))
		if err := exp.ConsumeTraces(context.Background(), richTraces()); err != nil {
			t.Fatalf("err = %v, want the spans delivered on the retry", err)
		}
		if len(srv.Requests()) != 2 || srv.SpanCount(tracesDS) != 2 {
			t.Errorf("got %d requests and %d spans, want 2 and 2", len(srv.Requests()), srv.SpanCount(tracesDS))
		}
		if n := h.counter(t, "otelcol_exporter_axiom_dropped_items", "signal", "traces"); n != 0 {
			t.Errorf("dropped_items = %d, want 0", n)
		}
	})
}
