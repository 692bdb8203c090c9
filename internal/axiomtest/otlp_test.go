package axiomtest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// exportSpans sends a parent and an erroring child span through the
// OpenTelemetry Go SDK's OTLP/HTTP exporter.
func exportSpans(t *testing.T, srv *Server, opts ...otlptracehttp.Option) (parent, child trace.SpanContext) {
	t.Helper()
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, append([]otlptracehttp.Option{
		otlptracehttp.WithEndpointURL(srv.URL() + "/v1/traces"),
		otlptracehttp.WithHeaders(map[string]string{"Authorization": "Bearer " + testToken, "X-Axiom-Dataset": "traces"}),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "checkout"), attribute.String("host.name", "h1"))))
	tracer := tp.Tracer("axiomtest", trace.WithInstrumentationVersion("1.2.3"))
	start := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	ctx, ps := tracer.Start(ctx, "GET /cart", trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(start))
	_, cs := tracer.Start(ctx, "redis GET", trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(start.Add(time.Millisecond)),
		trace.WithAttributes(attribute.String("db.system", "redis"), attribute.Int("retries", 2)),
		trace.WithLinks(trace.Link{SpanContext: ps.SpanContext()}))
	cs.AddEvent("timeout", trace.WithTimestamp(start.Add(2*time.Millisecond)))
	cs.SetStatus(codes.Error, "boom")
	cs.End(trace.WithTimestamp(start.Add(4 * time.Millisecond)))
	ps.End(trace.WithTimestamp(start.Add(10 * time.Millisecond)))
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatalf("export: %v", err)
	}
	return ps.SpanContext(), cs.SpanContext()
}

func TestOTLPTracesFromSDK(t *testing.T) {
	cases := []struct {
		name        string
		opts        []otlptracehttp.Option
		contentType string
	}{
		{"protobuf", nil, "application/x-protobuf"},
		{"protobuf gzip", []otlptracehttp.Option{otlptracehttp.WithCompression(otlptracehttp.GzipCompression)}, "application/x-protobuf"},
		{"json", []otlptracehttp.Option{otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON)}, "application/json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := NewForTest(t)
			parent, child := exportSpans(t, srv, c.opts...)
			if srv.SpanCount("traces") != 2 || srv.Traces("traces").SpanCount() != 2 {
				t.Fatalf("%d spans counted, %d stored", srv.SpanCount("traces"), srv.Traces("traces").SpanCount())
			}
			for _, req := range srv.Requests() { // the syncer exports each span on End
				if req.Status != 200 || req.Spans != 1 || req.Header.Get("Content-Type") != c.contentType {
					t.Errorf("request %+v", req)
				}
			}
			byName := map[string]map[string]any{}
			for _, sp := range srv.Spans("traces") {
				byName[sp["name"].(string)] = sp
			}
			ps, cs := byName["GET /cart"], byName["redis GET"]
			if ps == nil || cs == nil {
				t.Fatalf("spans %v", byName)
			}
			checks := []struct {
				field string
				got   any
				want  any
			}{
				{"trace_id", cs["trace_id"], child.TraceID().String()},
				{"span_id", cs["span_id"], child.SpanID().String()},
				{"parent_span_id", cs["parent_span_id"], parent.SpanID().String()},
				{"root parent_span_id", ps["parent_span_id"], ""},
				{"kind", cs["kind"], "client"},
				{"root kind", ps["kind"], "server"},
				{"_time", cs["_time"], "2024-05-06T07:08:09.001Z"},
				{"duration", cs["duration"], 3 * time.Millisecond},
				{"error", cs["error"], true},
				{"root error", ps["error"], false},
				{"status.code", cs["status.code"], "ERROR"},
				{"status.message", cs["status.message"], "boom"},
				{"service.name", cs["service.name"], "checkout"},
				{"db.system", cs["attributes"].(map[string]any)["db.system"], "redis"},
				{"retries", cs["attributes"].(map[string]any)["retries"], int64(2)},
				{"resource", cs["resource"].(map[string]any)["host.name"], "h1"},
				{"scope", cs["scope"].(map[string]any)["version"], "1.2.3"},
				{"event", cs["events"].([]map[string]any)[0]["name"], "timeout"},
				{"link", cs["links"].([]map[string]any)[0]["span_id"], parent.SpanID().String()},
			}
			for _, ch := range checks {
				if ch.got != ch.want {
					t.Errorf("%s = %#v, want %#v", ch.field, ch.got, ch.want)
				}
			}
			resp, err := http.Get(srv.URL() + "/_fake/spans/traces")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			dec := json.NewDecoder(resp.Body)
			for n := 0; ; n++ {
				var sp struct {
					Name     string
					Duration int64
				}
				if err := dec.Decode(&sp); err == io.EOF {
					if n != 2 {
						t.Errorf("/_fake/spans gave %d spans", n)
					}
					break
				} else if err != nil {
					t.Fatal(err)
				}
				if sp.Name == "redis GET" && sp.Duration != int64(3*time.Millisecond) {
					t.Errorf("/_fake/spans: %+v", sp)
				}
			}
		})
	}
}

func TestOTLPTracesSDKSeesRejection(t *testing.T) {
	srv := NewForTest(t, WithTokens("xaat-other"))
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(srv.URL()+"/v1/traces"),
		otlptracehttp.WithHeaders(map[string]string{"Authorization": "Bearer " + testToken, "X-Axiom-Dataset": "traces"}),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	_, sp := tp.Tracer("t").Start(ctx, "x")
	sp.End()
	_ = tp.Shutdown(ctx)
	if srv.SpanCount("traces") != 0 || srv.Requests()[0].Status != 403 {
		t.Errorf("spans %d, requests %+v", srv.SpanCount("traces"), srv.Requests())
	}
}

func testLogs(n int) plog.Logs {
	ld := plog.NewLogs()
	for r := range 2 {
		rl := ld.ResourceLogs().AppendEmpty()
		rl.Resource().Attributes().PutStr("service.name", "svc")
		sl := rl.ScopeLogs().AppendEmpty()
		for i := range n {
			lr := sl.LogRecords().AppendEmpty()
			lr.Body().SetStr("line")
			lr.Attributes().PutInt("i", int64(r*n+i))
		}
	}
	return ld
}

func testTraces(perScope int) ptrace.Traces {
	td := ptrace.NewTraces()
	for range 2 {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", "svc")
		for range 3 {
			ss := rs.ScopeSpans().AppendEmpty()
			ss.Scope().SetName("lib")
			for i := range perScope {
				sp := ss.Spans().AppendEmpty()
				sp.SetName("op")
				sp.SetTraceID(pcommon.TraceID{1, byte(i)})
				sp.SetSpanID(pcommon.SpanID{2, byte(i)})
				sp.Attributes().PutStr("k", "v")
			}
		}
	}
	return td
}

func otlpHeader(contentType string, kv ...string) http.Header {
	h := ingestHeader(contentType)
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func TestOTLPLogs(t *testing.T) {
	for _, countOnly := range []bool{false, true} {
		opts := []Option{}
		if countOnly {
			opts = append(opts, WithCountOnly())
		}
		srv := NewForTest(t, opts...)
		ld := testLogs(3)
		pb, _ := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
		js, _ := (&plog.JSONMarshaler{}).MarshalLogs(ld)

		h := otlpHeader("application/x-protobuf", "X-Axiom-Dataset", "other", "X-Axiom-Logs-Dataset", "logs", "Content-Encoding", "zstd")
		code, hdr, body := post(t, srv.URL()+"/v1/logs", h, zstdBytes(t, pb))
		if code != 200 || body != "" || hdr.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("count-only %v, protobuf: %d %q %q", countOnly, code, body, hdr.Get("Content-Type"))
		}
		code, hdr, body = post(t, srv.URL()+"/v1/logs", otlpHeader("application/json", "X-Axiom-Dataset", "logs"), js)
		if code != 200 || body != "{}" || hdr.Get("Content-Type") != "application/json" {
			t.Errorf("count-only %v, json: %d %q %q", countOnly, code, body, hdr.Get("Content-Type"))
		}
		if n := srv.LogRecordCount("logs"); n != 12 {
			t.Errorf("count-only %v: %d log records, want 12", countOnly, n)
		}
		if err := srv.WaitLogRecords("logs", 12, time.Second); err != nil {
			t.Error(err)
		}
		wantStored := 12
		if countOnly {
			wantStored = 0
		}
		if got := srv.Logs("logs"); got.LogRecordCount() != wantStored {
			t.Errorf("count-only %v: %d stored", countOnly, got.LogRecordCount())
		} else if !countOnly && got.ResourceLogs().At(1).ScopeLogs().At(0).LogRecords().At(2).Attributes().AsRaw()["i"] != int64(5) {
			t.Errorf("stored records out of order")
		}
		if srv.EventCount("logs") != 0 || srv.Requests()[0].Events != 6 {
			t.Errorf("count-only %v: OTLP logs counted as ingest events: %d, request %+v", countOnly, srv.EventCount("logs"), srv.Requests()[0])
		}
	}
}

func TestOTLPTracesDatasetHeadersAndCountOnly(t *testing.T) {
	td := testTraces(4) // 2 resources × 3 scopes × 4 spans
	pb, _ := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	js, _ := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	for _, countOnly := range []bool{false, true} {
		opts := []Option{}
		if countOnly {
			opts = append(opts, WithCountOnly())
		}
		srv := NewForTest(t, opts...)
		h := otlpHeader("application/x-protobuf", "X-Axiom-Dataset", "other", "X-Axiom-Traces-Dataset", "spans", "Content-Encoding", "gzip")
		if code, _, body := post(t, srv.URL()+"/v1/traces", h, gzipBytes(t, pb)); code != 200 {
			t.Fatalf("protobuf: %d %s", code, body)
		}
		if code, _, body := post(t, srv.URL()+"/v1/traces", otlpHeader("application/json", "X-Axiom-Dataset", "spans"), js); code != 200 {
			t.Fatalf("json: %d %s", code, body)
		}
		if err := srv.WaitSpans("spans", 48, time.Second); err != nil || srv.SpanCount("other") != 0 {
			t.Errorf("count-only %v: %v, other=%d", countOnly, err, srv.SpanCount("other"))
		}
		if st := srv.Stats().Datasets["spans"]; st.Spans != 48 || st.Bytes != int64(len(pb)+len(js)) {
			t.Errorf("count-only %v: stats %+v", countOnly, st)
		}
		stored := 48
		if countOnly {
			stored = 0
		}
		if got := len(srv.Spans("spans")); got != stored {
			t.Errorf("count-only %v: %d spans stored", countOnly, got)
		}
	}
}

func TestOTLPBadRequests(t *testing.T) {
	pb, _ := (&ptrace.ProtoMarshaler{}).MarshalTraces(testTraces(1))
	cases := []struct {
		name string
		h    http.Header
		body []byte
		want int
	}{
		{"garbage protobuf", otlpHeader("application/x-protobuf", "X-Axiom-Dataset", "d"), []byte{0x0a, 0xff, 0x01}, 400},
		{"garbage json", otlpHeader("application/json", "X-Axiom-Dataset", "d"), []byte(`{"resourceSpans":[`), 400},
		{"ndjson content type", otlpHeader("application/x-ndjson", "X-Axiom-Dataset", "d"), pb, 415},
		{"corrupt gzip", otlpHeader("application/x-protobuf", "X-Axiom-Dataset", "d", "Content-Encoding", "gzip"), pb, 400},
		{"no dataset", otlpHeader("application/x-protobuf"), pb, 400},
	}
	for _, countOnly := range []bool{false, true} {
		opts := []Option{}
		if countOnly {
			opts = append(opts, WithCountOnly())
		}
		srv := NewForTest(t, opts...)
		for _, c := range cases {
			if code, _, body := post(t, srv.URL()+"/v1/traces", c.h, c.body); code != c.want {
				t.Errorf("count-only %v, %s: %d, want %d: %s", countOnly, c.name, code, c.want, body)
			}
		}
		if srv.SpanCount("d") != 0 {
			t.Errorf("count-only %v: spans stored from bad requests", countOnly)
		}
	}
}

func TestOTLPPartialFailure(t *testing.T) {
	pb, _ := (&ptrace.ProtoMarshaler{}).MarshalTraces(testTraces(4)) // 24 spans
	js, _ := (&plog.JSONMarshaler{}).MarshalLogs(testLogs(3))        // 6 records
	for _, countOnly := range []bool{false, true} {
		opts := []Option{}
		if countOnly {
			opts = append(opts, WithCountOnly())
		}
		srv := NewForTest(t, opts...)
		srv.Fail("d", PartialFailure(5), PartialFailure(2))

		code, _, body := post(t, srv.URL()+"/v1/traces", otlpHeader("application/x-protobuf", "X-Axiom-Dataset", "d"), pb)
		tr := ptraceotlp.NewExportResponse()
		if err := tr.UnmarshalProto([]byte(body)); code != 200 || err != nil || tr.PartialSuccess().RejectedSpans() != 5 || tr.PartialSuccess().ErrorMessage() == "" {
			t.Errorf("count-only %v, traces: %d %v %d", countOnly, code, err, tr.PartialSuccess().RejectedSpans())
		}
		code, _, body = post(t, srv.URL()+"/v1/logs", otlpHeader("application/json", "X-Axiom-Dataset", "d"), js)
		lr := plogotlp.NewExportResponse()
		if err := lr.UnmarshalJSON([]byte(body)); code != 200 || err != nil || lr.PartialSuccess().RejectedLogRecords() != 2 {
			t.Errorf("count-only %v, logs: %d %v %s", countOnly, code, err, body)
		}
		if srv.SpanCount("d") != 19 || srv.LogRecordCount("d") != 4 {
			t.Errorf("count-only %v: %d spans, %d log records accepted", countOnly, srv.SpanCount("d"), srv.LogRecordCount("d"))
		}
		if reqs := srv.Requests(); reqs[0].Spans != 19 || reqs[1].Events != 4 {
			t.Errorf("count-only %v: requests %+v", countOnly, reqs)
		}
		if !countOnly {
			if got := srv.Traces("d"); got.SpanCount() != 19 || got.ResourceSpans().At(0).ScopeSpans().At(0).Spans().Len() != 0 {
				t.Errorf("stored traces: %d spans, first scope not emptied", got.SpanCount())
			}
			if got := srv.Logs("d"); got.LogRecordCount() != 4 || got.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes().AsRaw()["i"] != int64(2) {
				t.Errorf("stored logs: wrong records kept")
			}
		}
	}
}
