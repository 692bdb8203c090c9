package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// heavySpan's padding makes a span about 1 KB of protobuf.
var heavyPad = strings.Repeat("p", 1000)

// heavyTraces is n spans named prefix-0..prefix-(n-1), about 1 KB each.
func heavyTraces(prefix string, n int) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "heavy")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	for i := range n {
		sp := spans.AppendEmpty()
		sp.SetName(fmt.Sprintf("%s-%d", prefix, i))
		sp.SetTraceID([16]byte{byte(len(prefix)), byte(i >> 8), byte(i), 1})
		sp.SetSpanID([8]byte{prefix[0], byte(i >> 8), byte(i), 2})
		sp.SetStartTimestamp(1767225600000000000)
		sp.SetEndTimestamp(1767225600001000000)
		sp.Attributes().PutStr("pad", heavyPad)
	}
	return td
}

// sendUntilTaken posts body as a client that retries a refusal (503) does:
// the whole request again, a second later, for up to a minute. It returns
// how many tries were refused.
func sendUntilTaken(t *testing.T, url, contentType string, body []byte) int {
	t.Helper()
	for refused := 0; ; refused++ {
		resp, err := http.Post(url, contentType, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return refused
		}
		if resp.StatusCode != http.StatusServiceUnavailable || refused == 60 {
			t.Fatalf("%s request of %d bytes: %s after %d refusals", contentType, len(body), resp.Status, refused)
		}
		time.Sleep(time.Second)
	}
}

// spanCounts counts, per name prefix, the spans of n each that arrived,
// were duplicated and were lost.
func spanCounts(fake *axiomtest.Server, prefixes []string, n int) map[string][3]int {
	seen := map[string]int{}
	for _, sp := range fake.Spans("app-traces") {
		seen[fmt.Sprint(sp["name"])]++
	}
	out := map[string][3]int{}
	for _, p := range prefixes {
		var c [3]int
		for i := range n {
			switch k := seen[fmt.Sprintf("%s-%d", p, i)]; {
			case k == 0:
				c[2]++
			default:
				c[0]++
				c[1] += k - 1
			}
		}
		out[p] = c
	}
	return out
}

// sumSeries sums the served series whose name is name, over their labels.
func sumSeries(got map[string]string, name string) int {
	n := 0
	for series, v := range got {
		if series == name || strings.HasPrefix(series, name+"{") {
			i, _ := strconv.Atoi(v)
			n += i
		}
	}
	return n
}

// An OTLP trace request larger than the exporter's in-memory queue (2 MiB
// at the default 16 MiB budget; requests may be 4 MiB) was refused as too
// large on every try, so its client gave up and its spans were lost. Now
// it is taken in parts: each of a raw protobuf, a raw JSON request and the
// OTel SDK's HTTP and gRPC exporters' ~3 MB exports arrives whole, once.
// With Axiom slow the rest of a request is not taken while its client
// waits: the client is refused, sends the whole request again, and the
// spans taken from its first try are not sent twice. The receiver's
// metrics count every span accepted once and only the rests refused.
func TestOTLPRequestsHeavierThanTheQueueArriveOnce(t *testing.T) {
	for _, slow := range []bool{false, true} {
		t.Run(map[bool]string{false: "axiom quick", true: "axiom slow"}[slow], func(t *testing.T) {
			fake := axiomtest.NewForTest(t)
			if slow {
				fake.Fail("app-traces", axiomtest.Slow(4*time.Second), axiomtest.Slow(4*time.Second))
			}
			grpcAddr, httpAddr, metrics := FreeAddr(t), FreeAddr(t), FreeAddr(t)
			cfg := otlpConfig(grpcAddr, httpAddr, fake.URL(), nil)
			cfg.metrics = metrics
			s := StartSidecar(t, cfg.yaml())
			s.WaitListening(t, grpcAddr)
			s.WaitListening(t, httpAddr)

			const n = 2600 // ~2.7 MB of protobuf, ~3.2 MB of JSON: over the 2 MiB queue, under 4 MiB
			url := "http://" + httpAddr + "/v1/traces"
			prefixes := []string{"proto", "json"}
			proto, err := ptraceotlp.NewExportRequestFromTraces(heavyTraces("proto", 3100)).MarshalProto()
			if err != nil {
				t.Fatal(err)
			}
			refusals := sendUntilTaken(t, url, "application/x-protobuf", proto)
			js, err := ptraceotlp.NewExportRequestFromTraces(heavyTraces("json", n)).MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			refusals += sendUntilTaken(t, url, "application/json", js)
			if slow && refusals == 0 {
				t.Errorf("with Axiom slow no request was refused in part: the test did not exercise the client's retry")
			}
			t.Logf("protobuf %d bytes, JSON %d bytes; %d tries refused", len(proto), len(js), refusals)
			// What the receiver counted for these two requests, each span accepted once.
			raw := 3100 + n
			var served map[string]string
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				served = scrape(t, "http://"+metrics+"/metrics")
				if sumSeries(served, "otelcol_receiver_accepted_spans") >= raw || time.Now().After(deadline) {
					break
				}
			}
			accepted, refused := sumSeries(served, "otelcol_receiver_accepted_spans"), sumSeries(served, "otelcol_receiver_refused_spans")
			t.Logf("otelcol_receiver_accepted_spans %d, otelcol_receiver_refused_spans %d", accepted, refused)
			if accepted != raw {
				t.Errorf("otelcol_receiver_accepted_spans = %d, want the %d spans taken, each once", accepted, raw)
			}
			// Counted whole, a refused try would count its 2600-3100 spans.
			if refusals == 0 && refused != 0 || refusals > 0 && (refused == 0 || refused >= refusals*n) {
				t.Errorf("otelcol_receiver_refused_spans = %d after %d refused tries: want only their rests refused", refused, refusals)
			}
			if !slow {
				ctx := context.Background()
				httpExp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(httpAddr), otlptracehttp.WithInsecure())
				if err != nil {
					t.Fatal(err)
				}
				grpcExp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(grpcAddr), otlptracegrpc.WithInsecure())
				if err != nil {
					t.Fatal(err)
				}
				emitHeavy(t, httpExp, "sdk-http", n)
				emitHeavy(t, grpcExp, "sdk-grpc", n)
				prefixes = append(prefixes, "sdk-http", "sdk-grpc")
			}
			if err := fake.WaitSpans("app-traces", 3100+n*(len(prefixes)-1), 60*time.Second); err != nil {
				t.Error(err)
			}
			if code := s.Stop(t); code != 0 {
				t.Fatalf("exit code %d", code)
			}
			for p, c := range spanCounts(fake, prefixes, n) {
				if p == "proto" {
					c = spanCounts(fake, []string{p}, 3100)[p]
				}
				t.Logf("%s: %d arrived, %d duplicated, %d lost", p, c[0], c[1], c[2])
				if c[1] != 0 || c[2] != 0 {
					t.Errorf("%s: %d spans duplicated, %d lost", p, c[1], c[2])
				}
			}
		})
	}
}

// emitHeavy exports n spans of ~1 KB in one export through exp, as an app's
// SDK with a large batch does, and waits for it (the SDK retries a refusal
// for up to a minute).
func emitHeavy(t *testing.T, exp sdktrace.SpanExporter, prefix string, n int) {
	t.Helper()
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithMaxExportBatchSize(n), sdktrace.WithMaxQueueSize(n),
		sdktrace.WithBatchTimeout(time.Hour), sdktrace.WithExportTimeout(2*time.Minute)), sdktrace.WithResource(newResource()))
	tracer := tp.Tracer("e2e/heavy")
	for i := range n {
		_, sp := tracer.Start(context.Background(), fmt.Sprintf("%s-%d", prefix, i))
		sp.SetAttributes(attribute.String("pad", heavyPad))
		sp.End()
	}
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatalf("%s: exporting %d spans: %v", prefix, n, err)
	}
}

// Span lines on stdin (OTLP/JSON requests, one a line) of ~900 KB make
// batches of two lines, ~1.6 MB of protobuf: heavier than the in-memory
// queue at the smallest budget (about 1 MiB), as are the batches of ~300-byte
// log lines that follow. They go in parts, the stdout receiver offering
// again only the rest, so every span and line arrives once and the
// receiver counts each accepted once.
func TestStdinSpanLinesHeavierThanTheQueueArriveOnce(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	metrics := FreeAddr(t)
	cfg := stdinConfig(fake.URL(), yamlMap{"when_full": "block"}, yamlMap{"memory": "8704KiB", "sending_queue": yamlMap{"block_on_overflow": false}})
	cfg.metrics = metrics
	s := StartSidecar(t, cfg.yaml(), WithStdin())
	const lines, perLine = 16, 700
	for l := range lines {
		td := heavyTraces("stdin", perLine)
		spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
		for i := range perLine {
			k := l*perLine + i
			spans.At(i).SetName(fmt.Sprintf("stdin-%d", k))
			spans.At(i).SetTraceID([16]byte{9, byte(k >> 16), byte(k >> 8), byte(k)})
			spans.At(i).SetSpanID([8]byte{9, byte(k >> 16), byte(k >> 8), byte(k)})
		}
		line, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Stdin.Write(append(line, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	const logLines = 30000
	w := bufio.NewWriterSize(s.Stdin, 1<<20)
	pad := strings.Repeat("p", 220)
	for i := range logLines {
		fmt.Fprintf(w, `{"level":30,"time":%d,"pid":1,"hostname":"h","seq":%d,"pad":"%s","msg":"line %d"}`+"\n", 1767225600000+i, i, pad, i)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := fake.WaitSpans("app-traces", lines*perLine, 60*time.Second); err != nil {
		t.Error(err)
	}
	if err := fake.WaitEvents("app-logs", logLines, 60*time.Second); err != nil {
		t.Error(err)
	}
	var served map[string]string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		served = scrape(t, "http://"+metrics+"/metrics")
		if sumSeries(served, "otelcol_receiver_accepted_spans") >= lines*perLine && sumSeries(served, "otelcol_receiver_accepted_log_records") >= logLines ||
			time.Now().After(deadline) {
			break
		}
	}
	if err := s.Stdin.Close(); err != nil {
		t.Fatal(err)
	}
	if code, err := s.Wait(60 * time.Second); err != nil || code != 0 {
		t.Fatalf("exit %d, %v:\n%s", code, err, lastOf(s.Logs(), 3000))
	}
	c := spanCounts(fake, []string{"stdin"}, lines*perLine)["stdin"]
	t.Logf("%d arrived, %d duplicated, %d lost", c[0], c[1], c[2])
	if c[1] != 0 || c[2] != 0 {
		t.Errorf("%d spans duplicated, %d lost", c[1], c[2])
	}
	accepted, refused := sumSeries(served, "otelcol_receiver_accepted_spans"), sumSeries(served, "otelcol_receiver_refused_spans")
	t.Logf("otelcol_receiver_accepted_spans %d, otelcol_receiver_refused_spans %d", accepted, refused)
	if accepted != lines*perLine {
		t.Errorf("otelcol_receiver_accepted_spans = %d, want the %d spans, each once", accepted, lines*perLine)
	}
	if missing, duplicated := countSeqs(t, fake.Events("app-logs"), logLines); missing != 0 || duplicated != 0 {
		t.Errorf("%d of %d lines missing, %d duplicated", missing, logLines, duplicated)
	}
	accepted, refused = sumSeries(served, "otelcol_receiver_accepted_log_records"), sumSeries(served, "otelcol_receiver_refused_log_records")
	t.Logf("otelcol_receiver_accepted_log_records %d, otelcol_receiver_refused_log_records %d", accepted, refused)
	if accepted != logLines {
		t.Errorf("otelcol_receiver_accepted_log_records = %d, want the %d lines, each once", accepted, logLines)
	}
}

// An OTLP log request heavier than the queue is taken in parts; with Axiom
// slow its rest is not taken while the OTel SDK's HTTP log exporter waits,
// so the exporter is refused and sends the whole request again. The
// records taken from its first try are not sent twice: every record
// arrives once, and the receiver counts each accepted once.
func TestOTLPLogRequestsHeavierThanTheQueueArriveOnce(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	fake.Fail("app-logs", axiomtest.Slow(4*time.Second), axiomtest.Slow(4*time.Second))
	grpcAddr, httpAddr, metrics := FreeAddr(t), FreeAddr(t), FreeAddr(t)
	cfg := otlpConfig(grpcAddr, httpAddr, fake.URL(), nil)
	cfg.metrics = metrics
	s := StartSidecar(t, cfg.yaml())
	s.WaitListening(t, httpAddr)

	const n = 2600 // ~1 KB each: over the 2 MiB queue, under the 4 MiB request limit
	ctx := context.Background()
	exp, err := otlploghttp.New(ctx, otlploghttp.WithEndpoint(httpAddr), otlploghttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	lp := sdklog.NewLoggerProvider(sdklog.WithResource(newResource()), sdklog.WithProcessor(sdklog.NewBatchProcessor(exp,
		sdklog.WithExportMaxBatchSize(n), sdklog.WithMaxQueueSize(n), sdklog.WithExportInterval(time.Hour), sdklog.WithExportTimeout(2*time.Minute))))
	logger := lp.Logger("e2e/heavy")
	base := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for i := range n {
		var r otellog.Record
		r.SetTimestamp(base.Add(time.Duration(i) * time.Millisecond))
		r.SetBody(attribute.StringValue(fmt.Sprintf("heavy-%d", i)))
		r.AddAttributes(attribute.String("pad", heavyPad))
		logger.Emit(ctx, r)
	}
	if err := lp.Shutdown(ctx); err != nil {
		t.Fatalf("exporting %d records: %v", n, err)
	}
	if err := fake.WaitEvents("app-logs", n, 60*time.Second); err != nil {
		t.Error(err)
	}
	served := scrape(t, "http://"+metrics+"/metrics")
	if code := s.Stop(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	seen := map[string]int{}
	for _, ev := range fake.Events("app-logs") {
		seen[fmt.Sprint(ev["message"])]++
	}
	var arrived, duplicated, lost int
	for i := range n {
		switch k := seen[fmt.Sprintf("heavy-%d", i)]; k {
		case 0:
			lost++
		default:
			arrived++
			duplicated += k - 1
		}
	}
	accepted, refused := sumSeries(served, "otelcol_receiver_accepted_log_records"), sumSeries(served, "otelcol_receiver_refused_log_records")
	t.Logf("%d arrived, %d duplicated, %d lost; accepted %d, refused %d", arrived, duplicated, lost, accepted, refused)
	if duplicated != 0 || lost != 0 {
		t.Errorf("%d records duplicated, %d lost", duplicated, lost)
	}
	if refused == 0 {
		t.Errorf("no record was refused: with Axiom slow the test did not exercise the client's retry")
	}
	if accepted != n {
		t.Errorf("otelcol_receiver_accepted_log_records = %d, want the %d records taken, each once", accepted, n)
	}
}

// One span or log record heavier than the whole queue (a ~3 MB attribute
// against the default 2 MiB queue) can never be queued, alone or in parts:
// it was refused on every try, so its client retried it forever. It is
// dropped once, counted with its reason and logged, and the records sent
// with it arrive.
func TestARecordHeavierThanTheQueueIsDroppedOnceAndCounted(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	grpcAddr, httpAddr, metrics := FreeAddr(t), FreeAddr(t), FreeAddr(t)
	cfg := otlpConfig(grpcAddr, httpAddr, fake.URL(), nil)
	cfg.metrics = metrics
	s := StartSidecar(t, cfg.yaml())
	s.WaitListening(t, httpAddr)

	giant := strings.Repeat("g", 3<<20)
	td := heavyTraces("light", 10)
	sp := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(5)
	sp.SetName("giant")
	sp.Attributes().PutStr("pad", giant)
	traces, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for i := range 10 {
		lr := lrs.AppendEmpty()
		lr.Body().SetStr(fmt.Sprintf("light-%d", i))
		if i == 5 {
			lr.Body().SetStr("giant")
			lr.Attributes().PutStr("pad", giant)
		}
	}
	logs, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []struct {
		path string
		body []byte
	}{{"/v1/logs", logs}, {"/v1/traces", traces}} {
		path := req.path
		resp, err := http.Post("http://"+httpAddr+path, "application/x-protobuf", bytes.NewReader(req.body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s; want the request taken, its giant record dropped", path, resp.Status)
		}
	}
	if err := fake.WaitSpans("app-traces", 9, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := fake.WaitEvents("app-logs", 9, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	served := scrape(t, "http://"+metrics+"/metrics")
	if code := s.Stop(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	dropped := map[string]int{}
	for series, v := range served {
		if strings.HasPrefix(series, "otelcol_exporter_axiom_dropped_items{") && strings.Contains(series, `reason="heavier_than_queue"`) {
			n, _ := strconv.Atoi(v)
			for _, signal := range []string{"logs", "traces"} {
				if strings.Contains(series, `signal="`+signal+`"`) {
					dropped[signal] += n
				}
			}
		}
	}
	if dropped["logs"] != 1 || dropped["traces"] != 1 {
		t.Errorf("dropped_items{reason=\"heavier_than_queue\"} = %v, want the giant span and the giant log record", dropped)
	}
	for _, sp := range fake.Spans("app-traces") {
		if sp["name"] == "giant" {
			t.Error("the giant span arrived")
		}
	}
	for _, ev := range fake.Events("app-logs") {
		if ev["message"] == "giant" {
			t.Error("the giant log record arrived")
		}
	}
	if n := strings.Count(s.Logs(), "weighs more than the queue ever admits"); n != 2 {
		t.Errorf("%d log lines about the giant records, want one each:\n%s", n, s.Logs())
	}
}
