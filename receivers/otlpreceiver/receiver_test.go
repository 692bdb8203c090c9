package otlpreceiver

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
)

func TestTracesFromSDKExporters(t *testing.T) {
	sink := new(consumertest.TracesSink)
	r := start(t, testConfig(t), sinks{traces: sink})
	ctx := context.Background()

	grpcExp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(r.grpcAddr()), otlptracegrpc.WithInsecure(),
		otlptracegrpc.WithCompressor("gzip"))
	if err != nil {
		t.Fatal(err)
	}
	defer grpcExp.Shutdown(ctx)
	if err := grpcExp.ExportSpans(ctx, sdkSpans("g1", "g2")); err != nil {
		t.Fatalf("gRPC export: %v", err)
	}

	httpExp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(r.cfg.Protocols.HTTP.Get().NetAddr.Endpoint),
		otlptracehttp.WithInsecure(), otlptracehttp.WithCompression(otlptracehttp.GzipCompression))
	if err != nil {
		t.Fatal(err)
	}
	defer httpExp.Shutdown(ctx)
	if err := httpExp.ExportSpans(ctx, sdkSpans("h1", "h2", "h3")); err != nil {
		t.Fatalf("HTTP export: %v", err)
	}

	if got, want := spanNames(sink), []string{"g1", "g2", "h1", "h2", "h3"}; !slices.Equal(got, want) {
		t.Errorf("spans %v, want %v", got, want)
	}
	if n := r.acceptedSpans(t); n != 5 {
		t.Errorf("accepted spans metric %d, want 5", n)
	}
}

func TestTracesHTTPJSON(t *testing.T) {
	sink := new(consumertest.TracesSink)
	r := start(t, testConfig(t), sinks{traces: sink})
	resp, body := post(t, r.httpURL(tracesPath), "application/json; charset=utf-8", tracesJSON(t, traces("a", "b")))
	if resp.StatusCode != http.StatusOK || string(body) != "{}" || resp.Header.Get("Content-Type") != jsonContentType {
		t.Fatalf("%d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if got := spanNames(sink); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("spans %v", got)
	}
}

func testLogs() plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "shop")
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.Body().SetStr("hello")
	lr.Attributes().PutInt("n", 7)
	lr.SetSeverityText("info")
	return ld
}

func testMetrics() pmetric.Metrics {
	md := pmetric.NewMetrics()
	m := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("requests")
	dp := m.SetEmptySum().DataPoints()
	dp.AppendEmpty().SetIntValue(3)
	dp.AppendEmpty().SetIntValue(4)
	return md
}

func logsJSON(t testing.TB, ld plog.Logs) string {
	b, err := (&plog.JSONMarshaler{}).MarshalLogs(ld)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func metricsJSON(t testing.TB, md pmetric.Metrics) string {
	b, err := (&pmetric.JSONMarshaler{}).MarshalMetrics(md)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestLogs(t *testing.T) {
	sink := new(consumertest.LogsSink)
	r := start(t, testConfig(t), sinks{logs: sink})
	req := plogotlp.NewExportRequestFromLogs(testLogs())

	if _, err := plogotlp.NewGRPCClient(dial(t, r.grpcAddr())).Export(context.Background(), req); err != nil {
		t.Fatalf("gRPC: %v", err)
	}
	pb, _ := req.MarshalProto()
	js, _ := req.MarshalJSON()
	for ct, body := range map[string][]byte{protoContentType: pb, jsonContentType: js} {
		if resp, b := post(t, r.httpURL(logsPath), ct, body); resp.StatusCode != http.StatusOK {
			t.Fatalf("HTTP %s: %d %s", ct, resp.StatusCode, b)
		}
	}

	want := logsJSON(t, testLogs())
	if n := len(sink.AllLogs()); n != 3 {
		t.Fatalf("%d batches, want 3", n)
	}
	for _, ld := range sink.AllLogs() {
		if got := logsJSON(t, ld); got != want {
			t.Errorf("got %s\nwant %s", got, want)
		}
	}
}

func TestMetrics(t *testing.T) {
	sink := new(consumertest.MetricsSink)
	r := start(t, testConfig(t), sinks{metrics: sink})
	req := pmetricotlp.NewExportRequestFromMetrics(testMetrics())

	if _, err := pmetricotlp.NewGRPCClient(dial(t, r.grpcAddr())).Export(context.Background(), req); err != nil {
		t.Fatalf("gRPC: %v", err)
	}
	pb, _ := req.MarshalProto()
	js, _ := req.MarshalJSON()
	for ct, body := range map[string][]byte{protoContentType: pb, jsonContentType: js} {
		if resp, b := post(t, r.httpURL(metricsPath), ct, body); resp.StatusCode != http.StatusOK {
			t.Fatalf("HTTP %s: %d %s", ct, resp.StatusCode, b)
		}
	}

	want := metricsJSON(t, testMetrics())
	if n := len(sink.AllMetrics()); n != 3 {
		t.Fatalf("%d batches, want 3", n)
	}
	for _, md := range sink.AllMetrics() {
		if got := metricsJSON(t, md); got != want {
			t.Errorf("got %s\nwant %s", got, want)
		}
	}
}

// A signal with no pipeline is not served.
func TestUnservedSignal(t *testing.T) {
	r := start(t, testConfig(t), sinks{logs: new(consumertest.LogsSink)})
	if resp, _ := post(t, r.httpURL(tracesPath), protoContentType, tracesProto(t, traces("a"))); resp.StatusCode != http.StatusNotFound {
		t.Errorf("HTTP %d, want 404", resp.StatusCode)
	}
	_, err := ptraceotlp.NewGRPCClient(dial(t, r.grpcAddr())).Export(context.Background(), ptraceotlp.NewExportRequestFromTraces(traces("a")))
	if status.Code(err) != codes.Unimplemented {
		t.Errorf("gRPC %v, want Unimplemented", err)
	}
}

func TestGzip(t *testing.T) {
	sink := new(consumertest.TracesSink)
	r := start(t, testConfig(t), sinks{traces: sink})
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(tracesProto(t, traces("z")))
	zw.Close()
	if resp, b := post(t, r.httpURL(tracesPath), protoContentType, zb.Bytes(), "Content-Encoding", "gzip"); resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	if got := spanNames(sink); !slices.Equal(got, []string{"z"}) {
		t.Errorf("spans %v", got)
	}
	resp, b := post(t, r.httpURL(tracesPath), protoContentType, []byte("not gzip"), "Content-Encoding", "gzip")
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("bad gzip: %d %s", resp.StatusCode, b)
	}
}

// statusOf decodes an error response's google.rpc.Status.
func statusOf(t testing.TB, resp *http.Response, body []byte) *spb.Status {
	t.Helper()
	s := new(spb.Status)
	var err error
	switch resp.Header.Get("Content-Type") {
	case protoContentType:
		err = proto.Unmarshal(body, s)
	case jsonContentType:
		err = protojson.Unmarshal(body, s)
	default:
		t.Fatalf("error response content type %q", resp.Header.Get("Content-Type"))
	}
	if err != nil {
		t.Fatalf("error response %q: %v", body, err)
	}
	return s
}

func TestPipelineErrors(t *testing.T) {
	throttled, _ := status.New(codes.ResourceExhausted, "slow down").WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(3 * time.Second)})
	for name, tc := range map[string]struct {
		err        error
		httpCode   int
		grpcCode   codes.Code
		retryAfter string
	}{
		"retryable": {errors.New("queue full"), http.StatusServiceUnavailable, codes.Unavailable, ""},
		"permanent": {consumererror.NewPermanent(errors.New("bad data")), http.StatusInternalServerError, codes.Internal, ""},
		"status":    {throttled.Err(), http.StatusTooManyRequests, codes.ResourceExhausted, "3"},
	} {
		t.Run(name, func(t *testing.T) {
			r := start(t, testConfig(t), sinks{traces: consumertest.NewErr(tc.err)})
			body := tracesProto(t, traces("a"))
			for _, ct := range []string{protoContentType, jsonContentType} {
				if ct == jsonContentType {
					body = tracesJSON(t, traces("a"))
				}
				resp, b := post(t, r.httpURL(tracesPath), ct, body)
				if resp.StatusCode != tc.httpCode || resp.Header.Get("Retry-After") != tc.retryAfter {
					t.Errorf("%s: HTTP %d Retry-After %q, want %d %q", ct, resp.StatusCode, resp.Header.Get("Retry-After"), tc.httpCode, tc.retryAfter)
				}
				if s := statusOf(t, resp, b); codes.Code(s.Code) != tc.grpcCode {
					t.Errorf("%s: status %v", ct, s)
				}
			}
			_, err := ptraceotlp.NewGRPCClient(dial(t, r.grpcAddr())).Export(context.Background(), ptraceotlp.NewExportRequestFromTraces(traces("a")))
			if status.Code(err) != tc.grpcCode {
				t.Errorf("gRPC %v, want %v", err, tc.grpcCode)
			}
		})
	}
}

func TestBadRequests(t *testing.T) {
	cfg := testConfig(t)
	cfg.Protocols.HTTP.Get().MaxRequestBodySize = 4 << 10
	cfg.Protocols.GRPC.Get().MaxRecvMsgSizeMiB = 1
	sink := new(consumertest.TracesSink)
	r := start(t, cfg, sinks{traces: sink})
	url := r.httpURL(tracesPath)

	check := func(name string, resp *http.Response, b []byte, want int) {
		t.Helper()
		if resp.StatusCode != want {
			t.Errorf("%s: %d %s, want %d", name, resp.StatusCode, b, want)
		}
	}
	resp, b := post(t, url, protoContentType, []byte{0x0a, 0x05, 0x01})
	check("malformed protobuf", resp, b, http.StatusBadRequest)
	if s := statusOf(t, resp, b); codes.Code(s.Code) != codes.InvalidArgument {
		t.Errorf("malformed protobuf status %v", s)
	}
	resp, b = post(t, url, jsonContentType, []byte(`{"resourceSpans": [`))
	check("malformed JSON", resp, b, http.StatusBadRequest)
	statusOf(t, resp, b)
	resp, b = post(t, url, "text/plain", tracesProto(t, traces("a")))
	check("content type", resp, b, http.StatusUnsupportedMediaType)
	resp, b = post(t, url, protoContentType, make([]byte, 8<<10))
	check("too large", resp, b, http.StatusRequestEntityTooLarge)
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(make([]byte, 64<<10))
	zw.Close()
	resp, b = post(t, url, protoContentType, zb.Bytes(), "Content-Encoding", "gzip")
	check("too large after gunzip", resp, b, http.StatusRequestEntityTooLarge)
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	resp, b = do(t, req)
	check("GET", resp, b, http.StatusMethodNotAllowed)

	conn := dial(t, r.grpcAddr())
	if err := invokeRaw(conn, "/"+traceService+"/Export", []byte{0x0a, 0x05, 0x01}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("gRPC malformed: %v", err)
	}
	if err := invokeRaw(conn, "/"+traceService+"/Export", make([]byte, 2<<20)); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("gRPC too large: %v", err)
	}
	if n := sink.SpanCount(); n != 0 {
		t.Errorf("%d spans got through", n)
	}
}

// An empty request succeeds without reaching the pipeline.
func TestEmptyRequest(t *testing.T) {
	r := start(t, testConfig(t), sinks{traces: consumertest.NewErr(errors.New("must not be called"))})
	if resp, b := post(t, r.httpURL(tracesPath), protoContentType, nil); resp.StatusCode != http.StatusOK || len(b) != 0 {
		t.Errorf("%d %q", resp.StatusCode, b)
	}
	if err := invokeRaw(dial(t, r.grpcAddr()), "/"+traceService+"/Export", nil); err != nil {
		t.Errorf("gRPC: %v", err)
	}
}

func TestPortTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, proto := range []string{"gRPC", "HTTP"} {
		cfg := testConfig(t)
		if proto == "gRPC" {
			cfg.Protocols.GRPC.Get().NetAddr.Endpoint = ln.Addr().String()
		} else {
			cfg.Protocols.HTTP.Get().NetAddr.Endpoint = ln.Addr().String()
		}
		r := create(t, cfg, sinks{traces: new(consumertest.TracesSink)})
		err := r.Start(context.Background(), componenttest.NewNopHost())
		if err == nil || !strings.Contains(err.Error(), proto+" listener on "+ln.Addr().String()) {
			t.Errorf("%s port taken: %v", proto, err)
		}
	}
}

// One instance serves every pipeline; Start and Shutdown run once however
// often the collector calls them.
func TestSharedInstance(t *testing.T) {
	cfg := testConfig(t)
	traces, logs := new(consumertest.TracesSink), new(consumertest.LogsSink)
	r := start(t, cfg, sinks{traces: traces, logs: logs})
	if r.nextTraces == nil || r.nextLogs == nil {
		t.Fatal("one instance must get both pipelines")
	}
	if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatalf("second Start: %v", err)
	}
	ctx := context.Background()
	if err := r.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	// Shutdown forgot the instance, and the ports are free again.
	if again := start(t, cfg, sinks{traces: traces}); again.otlpReceiver == r.otlpReceiver {
		t.Error("shutdown must forget the instance")
	}
}

// Garbage, truncated and oversized bodies, as JSON and as protobuf, with and
// without pre-sampling: 400 (or 413) with a message that does not echo the
// body, never a 5xx, which would make the client send the same bytes again;
// a well-formed client is still served afterwards.
func TestMalformedBodiesAre400WithoutEchoAndWellFormedStillServed(t *testing.T) {
	garbage := make([]byte, 2048)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range garbage {
		garbage[i] = byte(rng.UintN(256))
	}
	const marker = "ECHO-MARKER"
	valid := tracesJSON(t, traces("a", "b"))
	bodies := map[string][]byte{
		"random bytes":            garbage,
		"marked garbage":          append([]byte(`{"resourceSpans":[{"`+marker), garbage[:64]...),
		"truncated JSON":          valid[:len(valid)/2],
		"truncated protobuf":      tracesProto(t, traces("a", "b"))[:20],
		"JSON of the wrong shape": []byte(`{"resourceSpans": 7, "` + marker + `": true}`),
	}
	run := func(t *testing.T, r testReceiver, sink *consumertest.TracesSink, bodyLimit bool) {
		url := r.httpURL(tracesPath)
		for name, body := range bodies {
			for _, ct := range []string{jsonContentType, protoContentType} {
				resp, b := post(t, url, ct, body)
				// Some of these bytes are a valid (empty) protobuf message:
				// 200 is right for them; anything else must be 400.
				if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusBadRequest ||
					name == "random bytes" && resp.StatusCode != http.StatusBadRequest {
					t.Errorf("%s as %s: %d %q, want 400", name, ct, resp.StatusCode, b)
				}
				if bytes.Contains(b, []byte(marker)) || bytes.Contains(b, garbage[:16]) {
					t.Errorf("%s as %s: the answer echoes the body: %q", name, ct, b)
				}
				if resp.StatusCode == http.StatusBadRequest {
					statusOf(t, resp, b) // a well-formed google.rpc.Status
				}
			}
		}
		if bodyLimit {
			resp, b := post(t, url, protoContentType, make([]byte, 64<<10))
			if resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Errorf("oversized: %d %q, want 413", resp.StatusCode, b)
			}
		}
		before := sink.SpanCount()
		if resp, b := post(t, url, jsonContentType, valid); resp.StatusCode != http.StatusOK || sink.SpanCount() != before+2 {
			t.Errorf("a well-formed request after the garbage: %d %q, %d spans", resp.StatusCode, b, sink.SpanCount()-before)
		}
	}
	t.Run("decoded", func(t *testing.T) {
		cfg := testConfig(t)
		cfg.Protocols.HTTP.Get().MaxRequestBodySize = 32 << 10
		sink := new(consumertest.TracesSink)
		run(t, start(t, cfg, sinks{traces: sink}), sink, true)
	})
	t.Run("presampled", func(t *testing.T) {
		r, sink := presampled(t, &dropFilter{})
		run(t, r, sink, false)
	})
}
