package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// TestSamplingKeepsTheRuleShareOfSpansAndEveryParentAndError sends request
// traces (a SERVER span, an internal span and Redis GET leaves, some failing)
// from the OpenTelemetry Go SDK through the real binary with a 1/4 Redis GET
// rule, and checks what arrives at the fake Axiom: exactly the spans the
// consistent rule keeps, with weight and tracestate, all parents, every error,
// and summary events in the logs dataset whose totals match what was sent. It
// runs with spans decided on pdata by the processor and, with
// sampling_processor set on the receiver, decided on the raw request over each
// transport and encoding: the results must be alike.
func TestSamplingKeepsTheRuleShareOfSpansAndEveryParentAndError(t *testing.T) {
	t.Run("processor", func(t *testing.T) { testSamplingRules(t, false, "grpc") })
	t.Run("presampled-grpc", func(t *testing.T) { testSamplingRules(t, true, "grpc") })
	t.Run("presampled-http", func(t *testing.T) { testSamplingRules(t, true, "http") })
	t.Run("presampled-http-json", func(t *testing.T) { testSamplingRules(t, true, "http-json") })
}

// jsonBodies turns the SDK's OTLP/HTTP protobuf requests into OTLP/JSON, as
// Node's and Bun's default exporter sends them.
type jsonBodies struct{}

func (jsonBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	r := ptraceotlp.NewExportRequest()
	if err := r.UnmarshalProto(body); err != nil {
		return nil, err
	}
	if body, err = r.MarshalJSON(); err != nil {
		return nil, err
	}
	req = req.Clone(req.Context())
	req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	req.Header.Set("Content-Type", "application/json")
	return http.DefaultTransport.RoundTrip(req)
}

func testSamplingRules(t *testing.T, presampled bool, transport string) {
	fake := axiomtest.NewForTest(t)
	grpcAddr, httpAddr := FreeAddr(t), FreeAddr(t)
	otlp := otlpReceiver(grpcAddr, httpAddr)
	if presampled {
		otlp["sampling_processor"] = "sampling"
	}
	s := StartSidecar(t, sidecarConfig{
		signals:   []string{"logs", "traces"},
		receivers: yamlMap{"otlp": otlp},
		processors: yamlMap{"sampling": yamlMap{
			"always_keep": yamlMap{"errors": true},
			"rules": []yamlMap{{
				"name":        "redis-get",
				"match":       yamlMap{"kind": []string{"client"}, "attributes": yamlMap{"db.system": "redis"}, "operation": []string{"GET"}},
				"probability": 0.25,
			}},
			"summaries": yamlMap{"interval": "1s"},
		}},
		exporters: axiomExporter(fake.URL(), nil),
	}.yaml())
	s.WaitListening(t, grpcAddr)
	s.WaitListening(t, httpAddr)
	if presampled {
		s.WaitOutput(t, `"presampling": true`)
	}

	var exp sdktrace.SpanExporter
	var err error
	switch transport {
	case "http":
		exp, err = otlptracehttp.New(context.Background(), otlptracehttp.WithEndpoint(httpAddr), otlptracehttp.WithInsecure())
	case "http-json":
		exp, err = otlptracehttp.New(context.Background(), otlptracehttp.WithEndpoint(httpAddr), otlptracehttp.WithInsecure(),
			otlptracehttp.WithHTTPClient(&http.Client{Transport: jsonBodies{}}))
	default:
		exp, err = otlptracegrpc.New(context.Background(), otlptracegrpc.WithEndpoint(grpcAddr), otlptracegrpc.WithInsecure())
	}
	if err != nil {
		t.Fatal(err)
	}
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithSpanProcessor(rec), sdktrace.WithResource(newResource()))
	tracer := tp.Tracer("e2e/sampling")
	const requests, getsPerRequest = 100, 10
	for i := range requests {
		ctx, server := tracer.Start(context.Background(), "GET /orders", trace.WithSpanKind(trace.SpanKindServer))
		ctx2, load := tracer.Start(ctx, "loadOrders")
		for j := range getsPerRequest {
			_, get := tracer.Start(ctx2, fmt.Sprintf("GET order:%d:%d", i, j), trace.WithSpanKind(trace.SpanKindClient),
				trace.WithAttributes(attribute.String("db.system", "redis")))
			if j == 0 && i%10 == 0 {
				get.SetStatus(codes.Error, "READONLY")
			}
			get.End()
		}
		load.End()
		server.End()
	}
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	// What the rule must keep: R = low 56 bits of the trace id >= th c (1/4).
	want := map[pcommon.SpanID]sdktrace.ReadOnlySpan{}
	gets, keptGets := 0, 0
	for _, sp := range rec.Ended() {
		if sp.SpanKind() != trace.SpanKindClient {
			want[pcommon.SpanID(sp.SpanContext().SpanID())] = sp
			continue
		}
		gets++
		tid := sp.SpanContext().TraceID()
		if binary.BigEndian.Uint64(tid[8:])&(1<<56-1) >= 0xc0000000000000 || sp.Status().Code == codes.Error {
			want[pcommon.SpanID(sp.SpanContext().SpanID())] = sp
			keptGets++
		}
	}
	if keptGets == 0 || keptGets == gets {
		t.Fatalf("test traffic keeps %d of %d Redis spans: no sampling to observe", keptGets, gets)
	}
	if err := fake.WaitSpans("app-traces", len(want), 60*time.Second); err != nil {
		t.Fatal(err)
	}
	summaries := waitSummaries(t, fake, gets)
	t.Logf("the rule keeps %d of %d Redis spans; %d summary events", keptGets, gets, len(summaries))

	got := spansByID(t, fake.Traces("app-traces"))
	if len(got) != len(want) {
		t.Errorf("%d spans arrived, the rule keeps %d", len(got), len(want))
	}
	for id, w := range want {
		g, ok := got[id]
		if !ok {
			t.Errorf("span %q (%s) missing", w.Name(), w.SpanKind())
			continue
		}
		weight, hasWeight := g.Attributes().Get("sampling.adjusted_count")
		switch {
		case w.SpanKind() != trace.SpanKindClient:
			if hasWeight || g.TraceState().AsRaw() != "" {
				t.Errorf("unmatched span %q was modified", w.Name())
			}
		case w.Status().Code == codes.Error:
			if !hasWeight || weight.Double() != 1 || g.TraceState().AsRaw() != "" {
				t.Errorf("error span %q: weight %v tracestate %q; want 1 and none", w.Name(), weight.AsRaw(), g.TraceState().AsRaw())
			}
		default:
			if !hasWeight || weight.Double() != 4 || g.TraceState().AsRaw() != "ot=th:c" {
				t.Errorf("sampled span %q: weight %v tracestate %q; want 4 and ot=th:c", w.Name(), weight.AsRaw(), g.TraceState().AsRaw())
			}
			if r, _ := g.Attributes().Get("sampling.rule"); r.Str() != "redis-get" {
				t.Errorf("sampled span %q: rule %q", w.Name(), r.Str())
			}
		}
		if p := g.ParentSpanID(); !p.IsEmpty() {
			if _, ok := got[p]; !ok {
				t.Errorf("span %q arrived without its parent", w.Name())
			}
		}
	}

	var seen, kept, dropped, errs int64
	for _, s := range summaries {
		n := func(k string) int64 { v, _ := s[k].(json.Number).Int64(); return v }
		if n("seen") != n("kept")+n("dropped") {
			t.Errorf("summary with seen != kept + dropped: %v", s)
		}
		if s["rule"] != "redis-get" || s["operation"] != "GET" || s["service"] != "checkout" {
			t.Errorf("summary fields: %v", s)
		}
		seen, kept, dropped, errs = seen+n("seen"), kept+n("kept"), dropped+n("dropped"), errs+n("errors")
	}
	if seen != int64(gets) || kept != int64(keptGets) || dropped != int64(gets-keptGets) || errs != requests/10 {
		t.Errorf("summaries: seen %d kept %d dropped %d errors %d; sent %d, kept %d, errors %d", seen, kept, dropped, errs, gets, keptGets, requests/10)
	}
	if code := s.Stop(t); code != 0 {
		t.Errorf("exit code %d", code)
	}
}

// waitSummaries waits until the summary events in the logs dataset account
// for n spans and returns their `sampling` objects.
func waitSummaries(t *testing.T, fake *axiomtest.Server, n int) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var out []map[string]any
		var seen int64
		for _, ev := range fake.Events("app-logs") {
			s, ok := ev["sampling"].(map[string]any)
			if !ok || s["summary"] != true {
				continue
			}
			out = append(out, s)
			if v, err := s["seen"].(json.Number).Int64(); err == nil {
				seen += v
			}
		}
		if seen >= int64(n) || time.Now().After(deadline) {
			return out
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestSamplingKeepsTheRuleShareOfStdinLogsAndEveryError pipes JSON log lines
// into the real binary with a health-check rule on a body field: about 1/8 of
// the health lines arrive, weighted 8, every failing one and every other line
// arrives untouched, and the summary events (the last one flushed at shutdown)
// account exactly for the health lines written.
func TestSamplingKeepsTheRuleShareOfStdinLogsAndEveryError(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	s := StartSidecar(t, sidecarConfig{
		signals:   []string{"logs"},
		receivers: yamlMap{"stdout": yamlMap{"stdin": yamlMap{}}},
		processors: yamlMap{"sampling": yamlMap{
			"rules": []yamlMap{{
				"name":        "health-logs",
				"match":       yamlMap{"signal": "logs", "body": yamlMap{"route": "/health"}},
				"probability": 0.125,
				"keep_if":     yamlMap{"errors": true},
			}},
			"summaries": yamlMap{"interval": "1h"},
		}},
		exporters: axiomExporter(fake.URL(), nil),
	}.yaml(), WithStdin())

	const health, failing, other = 4000, 40, 1000
	w := bufio.NewWriter(s.Stdin)
	clock := int64(1764504000000)
	line := func(level int, route string, i int) {
		clock++
		fmt.Fprintf(w, `{"level":%d,"time":%d,"route":%q,"reqId":"r-%d","msg":"request completed"}`+"\n", level, clock, route, i)
	}
	for i := range health {
		line(30, "/health", i)
		if i%(health/failing) == 0 {
			line(50, "/health", i)
		}
		if i%(health/other) == 0 {
			line(30, "/orders", i)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := s.Stdin.Close(); err != nil {
		t.Fatal(err)
	}
	if code, err := s.Wait(90 * time.Second); err != nil || code != 0 {
		t.Fatalf("exit code %d, %v at end of input, want 0", code, err)
	}

	keptHealth, keptFailing, keptOther := 0, 0, 0
	var seen, kept, dropped, errs int64
	for _, ev := range fake.Events("app-logs") {
		if sm, ok := ev["sampling"].(map[string]any); ok {
			n := func(k string) int64 { v, _ := sm[k].(json.Number).Int64(); return v }
			if sm["summary"] != true || sm["rule"] != "health-logs" || sm["signal"] != "logs" || n("seen") != n("kept")+n("dropped") {
				t.Errorf("bad summary %v", sm)
			}
			seen, kept, dropped, errs = seen+n("seen"), kept+n("kept"), dropped+n("dropped"), errs+n("errors")
			continue
		}
		attrs, _ := ev["attributes"].(map[string]any)
		weightNum, _ := attrs["sampling.adjusted_count"].(json.Number)
		weight, _ := weightNum.Float64()
		switch {
		case ev["route"] == "/orders":
			keptOther++
			if attrs["sampling.rule"] != nil {
				t.Errorf("unmatched line was marked: %v", ev)
			}
		case ev["level"] == "error":
			keptFailing++
			if weight != 1 || attrs["sampling.rule"] != "health-logs" {
				t.Errorf("failing health line: weight %v, attributes %v", weight, attrs)
			}
		default:
			keptHealth++
			if weight != 8 || attrs["sampling.rule"] != "health-logs" {
				t.Errorf("sampled health line: weight %v, attributes %v", weight, attrs)
			}
		}
	}
	t.Logf("kept %d of %d health lines", keptHealth, health)
	if sd := math.Sqrt(health * 0.125 * 0.875); math.Abs(float64(keptHealth)-health*0.125) > 4*sd {
		t.Errorf("kept %d health lines, want within 4 sd (%.1f) of %v", keptHealth, sd, health*0.125)
	}
	if keptFailing != failing || keptOther != other {
		t.Errorf("kept %d failing and %d other lines, want all %d and %d", keptFailing, keptOther, failing, other)
	}
	if seen != health+failing || kept != int64(keptHealth+keptFailing) || dropped != int64(health-keptHealth) || errs != failing {
		t.Errorf("summaries: seen %d kept %d dropped %d errors %d; wrote %d health lines, %d arrived, %d failing",
			seen, kept, dropped, errs, health+failing, keptHealth+keptFailing, failing)
	}
}
