package e2e

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// TestFailedAndSlowRequestsKeepEveryLeaf sends requests, and two debug log
// lines each, from the OpenTelemetry Go SDK's batch span (and log) processor (children before their
// parents, small batches, so a request's GETs and its SERVER span are
// often in different exports) through the real binary with a 1/8 Redis GET
// rule: every GET of a failed or slow request arrives (rescued ones with
// weight 0 and no th), the other requests' GETs arrive exactly as the
// consistent rule keeps them, the same for the debug lines under a 1/8
// rule, and the summaries count every GET and line, the rescued ones too. On the processor's pdata path and on the receiver's
// raw path.
func TestFailedAndSlowRequestsKeepEveryLeaf(t *testing.T) {
	t.Run("processor", func(t *testing.T) { testHold(t, false) })
	t.Run("presampled", func(t *testing.T) { testHold(t, true) })
}

func testHold(t *testing.T, presampled bool) {
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
			"always_keep": yamlMap{"errors": true, "min_duration": "1s"},
			"rules": []yamlMap{{
				"name":        "redis-get",
				"match":       yamlMap{"kind": []string{"client"}, "attributes": yamlMap{"db.system": "redis"}},
				"probability": 0.125,
			}, {
				"name":        "debug-logs",
				"match":       yamlMap{"signal": "logs", "severity": []string{"debug"}},
				"probability": 0.125,
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

	exp, err := otlptracegrpc.New(context.Background(), otlptracegrpc.WithEndpoint(grpcAddr), otlptracegrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithMaxExportBatchSize(37), sdktrace.WithBatchTimeout(200*time.Millisecond)),
		sdktrace.WithSpanProcessor(rec), sdktrace.WithResource(newResource()))
	tracer := tp.Tracer("e2e/hold")
	logExp, err := otlploghttp.New(context.Background(), otlploghttp.WithEndpoint(httpAddr), otlploghttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(logExp, sdklog.WithExportMaxBatchSize(50), sdklog.WithExportInterval(200*time.Millisecond))),
		sdklog.WithResource(newResource()))
	logger := lp.Logger("e2e/hold")
	const linesPerRequest = 2
	lineTraces := map[string]trace.TraceID{}
	const requests, getsPerRequest = 200, 8
	failedTraces := map[trace.TraceID]bool{}
	for i := range requests {
		start := time.Now()
		slow := i%20 == 5
		if slow {
			start = start.Add(-2 * time.Second)
		}
		ctx, server := tracer.Start(context.Background(), "GET /orders", trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(start))
		for j := range getsPerRequest {
			_, get := tracer.Start(ctx, fmt.Sprintf("GET order:%d:%d", i, j), trace.WithSpanKind(trace.SpanKindClient),
				trace.WithAttributes(attribute.String("db.system", "redis")))
			get.End()
		}
		for j := range linesPerRequest {
			var r otellog.Record
			r.SetSeverity(otellog.SeverityDebug)
			r.SetSeverityText("debug")
			msg := fmt.Sprintf("cache lookup %d:%d", i, j)
			r.SetBody(attribute.StringValue(msg))
			logger.Emit(ctx, r)
			lineTraces[msg] = server.SpanContext().TraceID()
		}
		if i%10 == 0 {
			server.SetStatus(codes.Error, "upstream failed")
		}
		if i%10 == 0 || slow {
			failedTraces[server.SpanContext().TraceID()] = true
		}
		server.End()
	}
	if err := lp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	// Kept by the rule at arrival: R = low 56 bits of the trace id >= th e (1/8).
	sampled := func(tid trace.TraceID) bool { return binary.BigEndian.Uint64(tid[8:])&(1<<56-1) >= 0xe0000000000000 }
	want := map[pcommon.SpanID]sdktrace.ReadOnlySpan{}
	gets, sampledGets, rescueGets := 0, 0, 0
	for _, sp := range rec.Ended() {
		tid := sp.SpanContext().TraceID()
		id := pcommon.SpanID(sp.SpanContext().SpanID())
		if sp.SpanKind() != trace.SpanKindClient {
			want[id] = sp
			continue
		}
		gets++
		switch {
		case sampled(tid):
			sampledGets++
			want[id] = sp
		case failedTraces[tid]:
			rescueGets++
			want[id] = sp
		}
	}
	if rescueGets == 0 || sampledGets == 0 {
		t.Fatalf("test traffic: %d GETs sampled, %d to rescue: nothing to observe", sampledGets, rescueGets)
	}
	wantLines := 0
	for _, tid := range lineTraces {
		if sampled(tid) || failedTraces[tid] {
			wantLines++
		}
	}
	if err := fake.WaitSpans("app-traces", len(want), 60*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := fake.WaitEvents("app-logs", wantLines, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	if code := s.Stop(t); code != 0 {
		t.Errorf("exit code %d", code)
	}
	got := spansByID(t, fake.Traces("app-traces"))
	if len(got) != len(want) {
		t.Errorf("%d spans arrived, want %d (%d GETs sampled, %d rescued)", len(got), len(want), sampledGets, rescueGets)
	}
	rescued := 0
	for id, w := range want {
		g, ok := got[id]
		if !ok {
			t.Errorf("span %q (%s) of a failed request: %v missing", w.Name(), w.SpanKind(), failedTraces[w.SpanContext().TraceID()])
			continue
		}
		if w.SpanKind() != trace.SpanKindClient {
			continue
		}
		weight, _ := g.Attributes().Get("sampling.adjusted_count")
		resc, isRescued := g.Attributes().Get("sampling.rescued")
		switch {
		case sampled(w.SpanContext().TraceID()):
			if isRescued || weight.Double() != 8 || g.TraceState().AsRaw() != "ot=th:e" {
				t.Errorf("sampled GET: weight %v, tracestate %q, rescued %v; want 8, ot=th:e, not rescued", weight.AsRaw(), g.TraceState().AsRaw(), isRescued)
			}
		default:
			rescued++
			if !isRescued || !resc.Bool() || weight.Double() != 0 || g.TraceState().AsRaw() != "" {
				t.Errorf("rescued GET: weight %v, tracestate %q, rescued %v; want 0, none, true", weight.AsRaw(), g.TraceState().AsRaw(), resc.AsRaw())
			}
		}
	}

	// Every debug line of a failed or slow request arrives, rescued unless
	// its trace was sampled; no other line is rescued.
	gotLines, rescuedLines := 0, 0
	var summaries []map[string]any
	for _, ev := range fake.Events("app-logs") {
		if sm, ok := ev["sampling"].(map[string]any); ok && sm["summary"] == true {
			summaries = append(summaries, sm)
			continue
		}
		msg, _ := ev["message"].(string)
		tid, ok := lineTraces[msg]
		if !ok {
			msg, _ = ev["body"].(string)
			tid, ok = lineTraces[msg]
		}
		if !ok {
			t.Errorf("unexpected event %v", ev)
			continue
		}
		gotLines++
		attrs, _ := ev["attributes"].(map[string]any)
		switch {
		case sampled(tid):
			if attrs["sampling.rescued"] != nil {
				t.Errorf("sampled line marked rescued: %v", ev)
			}
		case failedTraces[tid]:
			rescuedLines++
			if attrs["sampling.rescued"] != true {
				t.Errorf("line of a failed request not marked rescued: %v", ev)
			}
		default:
			t.Errorf("line of a successful request arrived unsampled: %v", ev)
		}
	}
	if gotLines != wantLines {
		t.Errorf("%d debug lines arrived, want %d", gotLines, wantLines)
	}

	sums := map[string]map[string]float64{}
	for _, sm := range summaries {
		rule, _ := sm["rule"].(string)
		if sums[rule] == nil {
			sums[rule] = map[string]float64{}
		}
		for _, k := range []string{"seen", "kept", "dropped", "rescued", "weight_sum"} {
			v, _ := sm[k].(json.Number).Float64()
			sums[rule][k] += v
		}
	}
	t.Logf("%d GETs: %d sampled, %d rescued; %d debug lines, %d rescued; summaries %v", gets, sampledGets, rescued, len(lineTraces), rescuedLines, sums)
	g := sums["redis-get"]
	if g["seen"] != float64(gets) || g["kept"] != float64(sampledGets) || g["dropped"] != float64(gets-sampledGets) || g["rescued"] != float64(rescueGets) {
		t.Errorf("GET summaries %v; sent %d GETs, %d sampled, %d to rescue", g, gets, sampledGets, rescueGets)
	}
	if g["weight_sum"] != float64(sampledGets*8) {
		t.Errorf("GET summaries' weight_sum %v, want %d: rescued spans add 0", g["weight_sum"], sampledGets*8)
	}
	l := sums["debug-logs"]
	if l["seen"] != float64(len(lineTraces)) || l["kept"] != float64(wantLines-rescuedLines) || l["rescued"] != float64(rescuedLines) {
		t.Errorf("debug line summaries %v; sent %d, %d sampled, %d rescued", l, len(lineTraces), wantLines-rescuedLines, rescuedLines)
	}
}
