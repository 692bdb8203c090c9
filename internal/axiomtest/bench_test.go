package axiomtest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// benchBatch is a realistic request: 1000 app log lines, NDJSON, zstd.
func benchBatch(b *testing.B) (raw, compressed []byte) {
	var buf bytes.Buffer
	for i := range 1000 {
		fmt.Fprintf(&buf, `{"_time":"2026-11-30T12:00:00.%09dZ","level":"info","msg":"request completed","service":"checkout","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","http":{"method":"GET","path":"/api/cart/%d","status":200,"duration_ms":12.5},"user_id":%d}`+"\n", i, i, i)
	}
	return buf.Bytes(), zstdBytes(b, buf.Bytes())
}

func sendBench(b *testing.B, client *http.Client, url string, body []byte, contentType string) {
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header = ingestHeader(contentType)
	req.Header.Set("Content-Encoding", "zstd")
	resp, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Fatalf("status %d", resp.StatusCode)
	}
}

// BenchmarkIngest measures events/s through the fake over loopback, one
// client sending 1000-event zstd NDJSON requests back to back.
func BenchmarkIngest(b *testing.B) {
	raw, body := benchBatch(b)
	for _, mode := range []string{"count-only", "store"} {
		b.Run(mode, func(b *testing.B) {
			opts := []Option{WithCountOnly()}
			if mode == "store" {
				opts = nil
			}
			client := &http.Client{}
			srv := NewForTest(b, opts...)
			b.SetBytes(int64(len(raw)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if mode == "store" && i%20 == 19 {
					b.StopTimer() // bound memory: a fresh server every 20k stored events
					srv.Close()
					srv = NewForTest(b, opts...)
					b.StartTimer()
				}
				sendBench(b, client, srv.URL()+"/v1/datasets/bench/ingest", body, "application/x-ndjson")
			}
			b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkOTLPTraces measures spans/s for protobuf exports of 1200 spans.
func BenchmarkOTLPTraces(b *testing.B) {
	pb, _ := (&ptrace.ProtoMarshaler{}).MarshalTraces(testTraces(200))
	body := zstdBytes(b, pb)
	for _, mode := range []string{"count-only", "store"} {
		b.Run(mode, func(b *testing.B) {
			opts := []Option{WithCountOnly()}
			if mode == "store" {
				opts = nil
			}
			client := &http.Client{}
			srv := NewForTest(b, opts...)
			h := otlpHeader("application/x-protobuf", "X-Axiom-Dataset", "bench", "Content-Encoding", "zstd")
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if mode == "store" && i%20 == 19 {
					b.StopTimer()
					srv.Close()
					srv = NewForTest(b, opts...)
					b.StartTimer()
				}
				req, _ := http.NewRequest(http.MethodPost, srv.URL()+"/v1/traces", bytes.NewReader(body))
				req.Header = h.Clone()
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
			b.ReportMetric(float64(b.N)*1200/b.Elapsed().Seconds(), "spans/s")
		})
	}
}
