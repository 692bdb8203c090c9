package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

func newTestSink(t *testing.T) *httptest.Server {
	t.Helper()
	f, err := newFaults(axiomUp, 0)
	if err != nil {
		t.Fatal(err)
	}
	return newTestSinkWith(t, f)
}

func newTestSinkWith(t *testing.T, f *faults) *httptest.Server {
	t.Helper()
	fake := axiomtest.NewForTest(t, axiomtest.WithCountOnly())
	s := &sink{fake: fake, measure: true, faults: f}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /_bench/stats", s.serveStats)
	mux.Handle("/", f.wrap(s.wrap(fake.Handler())))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func post(t *testing.T, url, contentType, encoding string, body []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer xaat-test")
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("X-Axiom-Dataset", "bench")
	if encoding != "" {
		req.Header.Set("Content-Encoding", encoding)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s", url, resp.Status)
	}
}

func stats(t *testing.T, url string) Stats {
	t.Helper()
	resp, err := http.Get(url + "/_bench/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st Stats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestLatencyFromEachKindOfBody(t *testing.T) {
	srv := newTestSink(t)
	written := time.Now().Add(-1500 * time.Millisecond)

	// The sidecar's NDJSON (zstd) with pino's time renamed to _time.
	var nd bytes.Buffer
	for i := range 3 {
		fmt.Fprintf(&nd, "{\"_time\":%d,\"level\":\"info\",\"msg\":\"m%d\"}\n", written.UnixMilli(), i)
	}
	enc, _ := zstd.NewWriter(nil)
	post(t, srv.URL+"/v1/ingest/bench", "application/x-ndjson", "zstd", enc.EncodeAll(nd.Bytes(), nil))

	// The baseline's OTLP logs (gzip protobuf), timestamp parsed from pino's time.
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for range 2 {
		lr := lrs.AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(written))
		lr.Body().SetStr("x")
	}
	pb, _ := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(pb)
	_ = zw.Close()
	post(t, srv.URL+"/v1/logs", "application/x-protobuf", "gzip", gz.Bytes())

	// Spans (protobuf), latency from the end time.
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(pcommon.TraceID{1})
	sp.SetSpanID(pcommon.SpanID{1})
	sp.SetName("get")
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(written))
	tb, _ := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	post(t, srv.URL+"/v1/traces", "application/x-protobuf", "", tb)

	st := stats(t, srv.URL)
	if st.Logs != 5 || st.Spans != 1 || st.BadBody != 0 {
		t.Fatalf("counts: %+v", st)
	}
	if st.Wire <= 0 || st.Wire >= st.Bytes {
		t.Fatalf("wire bytes %d should be positive and below the uncompressed %d", st.Wire, st.Bytes)
	}
	if st.Latency.Count != 6 {
		t.Fatalf("latency samples = %d, want 6", st.Latency.Count)
	}
	if st.Latency.P50ms < 1500 || st.Latency.P99ms > 60_000 {
		t.Fatalf("latency %+v, want at least the 1.5 s the events are old", st.Latency)
	}
}

func TestHistogramQuantiles(t *testing.T) {
	var h histogram
	for i := range 100 {
		h.add(time.Duration(i) * time.Millisecond)
	}
	if got := h.quantile(0.5); got != 51 {
		t.Fatalf("p50 = %v, want 51 (upper edge of the 50 ms bucket)", got)
	}
	if got := h.quantile(0.99); got != 100 {
		t.Fatalf("p99 = %v, want 100", got)
	}
	h.add(time.Hour) // beyond the range: counted in the last bucket
	if got := h.summary(); got.Count != 101 || got.Maxms != float64(time.Hour/time.Millisecond) {
		t.Fatalf("summary %+v", got)
	}
	var empty histogram
	if empty.quantile(0.5) != 0 {
		t.Fatal("empty histogram quantile should be 0")
	}
}
