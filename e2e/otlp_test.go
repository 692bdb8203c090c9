package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// otlpConfig runs the OTLP receiver on the given addresses into the axiom
// exporter pointed at url, with axiom added to the exporter's settings.
func otlpConfig(grpcAddr, httpAddr, url string, axiom yamlMap) sidecarConfig {
	return sidecarConfig{
		signals:   []string{"logs", "traces"},
		receivers: yamlMap{"otlp": otlpReceiver(grpcAddr, httpAddr)},
		exporters: axiomExporter(url, axiom),
	}
}

func newResource() *resource.Resource {
	return resource.NewSchemaless(attribute.String("service.name", "checkout"), attribute.String("deployment.environment", "e2e"))
}

// emitSpans makes n spans of an HTTP handler with a Redis child each,
// carrying every span field OTLP has, and flushes them through exp.
func emitSpans(t *testing.T, exp sdktrace.SpanExporter, prefix string, n int) []sdktrace.ReadOnlySpan {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithSpanProcessor(rec), sdktrace.WithResource(newResource()))
	tracer := tp.Tracer("e2e/"+prefix, trace.WithInstrumentationVersion("1.2.3"))
	ts, err := trace.ParseTraceState("vendor=abc,ot=rv:0123456789abcd")
	if err != nil {
		t.Fatal(err)
	}
	linked := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{9, 9, 9}, SpanID: trace.SpanID{7, 7}, TraceFlags: trace.FlagsSampled})
	for i := range n {
		parent := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: trace.TraceID{byte(i), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, byte(len(prefix))}, TraceState: ts, TraceFlags: trace.FlagsSampled, Remote: true,
		}))
		ctx, server := tracer.Start(parent, fmt.Sprintf("%s GET /orders/%d", prefix, i), trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.route", "/orders/:id"), attribute.Int("http.response.status_code", 200), attribute.StringSlice("tags", []string{"a", "b"})),
			trace.WithLinks(trace.Link{SpanContext: linked, Attributes: []attribute.KeyValue{attribute.Bool("linked", true)}}))
		_, redis := tracer.Start(ctx, "GET", trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String("db.system", "redis"), attribute.Float64("db.latency", 1.5)))
		redis.AddEvent("cache miss", trace.WithAttributes(attribute.Int64("bytes", int64(i))))
		if i%3 == 0 {
			redis.SetStatus(codes.Error, "connection refused")
		}
		redis.End()
		server.SetStatus(codes.Ok, "")
		server.End()
	}
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatalf("flushing %s spans: %v", prefix, err)
	}
	return rec.Ended()
}

// spansByID indexes every span the fake stored, failing on duplicates.
func spansByID(t *testing.T, td ptrace.Traces) map[pcommon.SpanID]ptrace.Span {
	t.Helper()
	out := map[pcommon.SpanID]ptrace.Span{}
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				if _, dup := out[sp.SpanID()]; dup {
					t.Errorf("span %s %q arrived twice", sp.SpanID(), sp.Name())
				}
				out[sp.SpanID()] = sp
			}
		}
	}
	return out
}

// checkSpan compares a span that arrived with the one the SDK sent.
func checkSpan(t *testing.T, got ptrace.Span, want sdktrace.ReadOnlySpan) {
	t.Helper()
	errorf := func(format string, args ...any) { t.Errorf("span %q: "+format, append([]any{want.Name()}, args...)...) }
	if got.Name() != want.Name() {
		errorf("name %q", got.Name())
	}
	if got.TraceID() != pcommon.TraceID(want.SpanContext().TraceID()) {
		errorf("trace id %s", got.TraceID())
	}
	if got.ParentSpanID() != pcommon.SpanID(want.Parent().SpanID()) {
		errorf("parent %s, want %s", got.ParentSpanID(), want.Parent().SpanID())
	}
	if int(got.Kind()) != int(want.SpanKind()) {
		errorf("kind %v, want %v", got.Kind(), want.SpanKind())
	}
	if got.TraceState().AsRaw() != want.SpanContext().TraceState().String() {
		errorf("tracestate %q, want %q", got.TraceState().AsRaw(), want.SpanContext().TraceState().String())
	}
	if got.StartTimestamp().AsTime() != want.StartTime().UTC() || got.EndTimestamp().AsTime() != want.EndTime().UTC() {
		errorf("times %v..%v, want %v..%v", got.StartTimestamp(), got.EndTimestamp(), want.StartTime(), want.EndTime())
	}
	if got.Attributes().Len() != len(want.Attributes()) {
		errorf("%d attributes, want %d", got.Attributes().Len(), len(want.Attributes()))
	}
	for _, kv := range want.Attributes() {
		v, ok := got.Attributes().Get(string(kv.Key))
		if !ok || v.AsString() != attrString(kv.Value) {
			errorf("attribute %s = %q, want %q", kv.Key, v.AsString(), attrString(kv.Value))
		}
	}
	if got.Events().Len() != len(want.Events()) {
		errorf("%d events, want %d", got.Events().Len(), len(want.Events()))
	} else {
		for i, ev := range want.Events() {
			g := got.Events().At(i)
			if g.Name() != ev.Name || g.Attributes().Len() != len(ev.Attributes) || g.Timestamp().AsTime() != ev.Time.UTC() {
				errorf("event %d = %q/%v", i, g.Name(), g.Attributes().AsRaw())
			}
		}
	}
	if got.Links().Len() != len(want.Links()) {
		errorf("%d links, want %d", got.Links().Len(), len(want.Links()))
	} else {
		for i, l := range want.Links() {
			g := got.Links().At(i)
			if g.TraceID() != pcommon.TraceID(l.SpanContext.TraceID()) || g.SpanID() != pcommon.SpanID(l.SpanContext.SpanID()) || g.Attributes().Len() != len(l.Attributes) {
				errorf("link %d = %s/%s %v", i, g.TraceID(), g.SpanID(), g.Attributes().AsRaw())
			}
		}
	}
	wantCode := map[codes.Code]ptrace.StatusCode{codes.Unset: ptrace.StatusCodeUnset, codes.Ok: ptrace.StatusCodeOk, codes.Error: ptrace.StatusCodeError}[want.Status().Code]
	if got.Status().Code() != wantCode || got.Status().Message() != want.Status().Description {
		errorf("status %v %q, want %v %q", got.Status().Code(), got.Status().Message(), wantCode, want.Status().Description)
	}
}

func attrString(v attribute.Value) string {
	if v.Type() == attribute.STRINGSLICE {
		b, _ := json.Marshal(v.AsStringSlice())
		return string(b)
	}
	return v.Emit()
}

// TestSpansAndLogsArriveOnceAndIntact sends spans over OTLP/HTTP and gRPC and
// logs over OTLP/HTTP from the OpenTelemetry Go SDK: after SIGTERM every span
// and record is in its dataset exactly once, with every field it was sent with
// (ids, times, attributes, events, links, status, resource; log bodies spread
// into fields or kept as the message).
func TestSpansAndLogsArriveOnceAndIntact(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	grpcAddr, httpAddr := FreeAddr(t), FreeAddr(t)
	s := StartSidecar(t, otlpConfig(grpcAddr, httpAddr, fake.URL(), nil).yaml())
	s.WaitListening(t, grpcAddr)
	s.WaitListening(t, httpAddr)
	ctx := context.Background()

	httpExp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(httpAddr), otlptracehttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	grpcExp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(grpcAddr), otlptracegrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	sent := append(emitSpans(t, httpExp, "http", 40), emitSpans(t, grpcExp, "grpc", 40)...)

	logExp, err := otlploghttp.New(ctx, otlploghttp.WithEndpoint(httpAddr), otlploghttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(logExp)), sdklog.WithResource(newResource()))
	logger := lp.Logger("e2e")
	const records = 50
	base := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	spanCtx := trace.ContextWithSpanContext(ctx, sent[0].SpanContext())
	for i := range records {
		var r otellog.Record
		r.SetTimestamp(base.Add(time.Duration(i) * time.Millisecond))
		r.SetSeverity(otellog.SeverityWarn)
		r.SetSeverityText("warn")
		if i%2 == 0 {
			r.SetBody(attribute.MapValue(attribute.String("msg", "order placed"), attribute.Int("order", i), attribute.Bool("paid", true)))
		} else {
			r.SetBody(attribute.StringValue(fmt.Sprintf("plain line %d", i)))
		}
		r.AddAttributes(attribute.String("request.id", fmt.Sprintf("req-%d", i)))
		logger.Emit(spanCtx, r)
	}
	if err := lp.Shutdown(ctx); err != nil {
		t.Fatalf("flushing logs: %v", err)
	}

	if err := fake.WaitSpans("app-traces", len(sent), 60*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := fake.WaitEvents("app-logs", records, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	// Stopping flushes whatever is left: afterwards nothing more may arrive.
	if code := s.Stop(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}

	got := spansByID(t, fake.Traces("app-traces"))
	if len(got) != len(sent) {
		t.Fatalf("%d distinct spans arrived, sent %d", len(got), len(sent))
	}
	for _, want := range sent {
		sp, ok := got[pcommon.SpanID(want.SpanContext().SpanID())]
		if !ok {
			t.Errorf("span %q never arrived", want.Name())
			continue
		}
		checkSpan(t, sp, want)
	}
	if n := fake.EventCount("app-traces") + fake.SpanCount("app-logs"); n != 0 {
		t.Errorf("%d items landed in the wrong dataset", n)
	}
	rs := fake.Traces("app-traces").ResourceSpans()
	for i := range rs.Len() {
		if v, _ := rs.At(i).Resource().Attributes().Get("service.name"); v.Str() != "checkout" {
			t.Errorf("resource lost service.name: %v", rs.At(i).Resource().Attributes().AsRaw())
		}
	}

	events := fake.Events("app-logs")
	if len(events) != records {
		t.Fatalf("%d events arrived, sent %d", len(events), records)
	}
	seen := map[string]bool{}
	for _, ev := range events {
		attrs, _ := ev["attributes"].(map[string]any)
		id, _ := attrs["request.id"].(string)
		if seen[id] {
			t.Errorf("record %s arrived twice", id)
		}
		seen[id] = true
		var i int
		if _, err := fmt.Sscanf(id, "req-%d", &i); err != nil {
			t.Errorf("event without its request.id attribute: %v", ev)
			continue
		}
		if want := base.Add(time.Duration(i) * time.Millisecond).Format(time.RFC3339Nano); ev["_time"] != want {
			t.Errorf("%s: _time %v, want %s", id, ev["_time"], want)
		}
		if ev["level"] != "warn" || ev["trace_id"] != sent[0].SpanContext().TraceID().String() || ev["span_id"] != sent[0].SpanContext().SpanID().String() {
			t.Errorf("%s: level/trace_id/span_id wrong: %v", id, ev)
		}
		if res, _ := ev["resource"].(map[string]any); res["service.name"] != "checkout" {
			t.Errorf("%s: resource %v", id, ev["resource"])
		}
		if i%2 == 0 {
			if ev["msg"] != "order placed" || fmt.Sprint(ev["order"]) != fmt.Sprint(i) || ev["paid"] != true {
				t.Errorf("%s: map body not spread into fields: %v", id, ev)
			}
		} else if ev["message"] != fmt.Sprintf("plain line %d", i) {
			t.Errorf("%s: string body not in message: %v", id, ev)
		}
	}
}

// postTraces sends td to the OTLP/HTTP listener at addr as protobuf and
// fails t unless it answers 200.
func postTraces(t *testing.T, addr string, td ptrace.Traces) {
	t.Helper()
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post("http://"+addr+"/v1/traces", "application/x-protobuf", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("OTLP/HTTP answered %s", resp.Status)
	}
}
