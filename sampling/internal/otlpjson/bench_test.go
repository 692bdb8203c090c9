package otlpjson

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sidecarhq/sidecar/internal/loadgen"
)

// BenchmarkTranscode reads requests of an ioredis-instrumented service, as
// the bench's load generator sends them, into protobuf; BenchmarkPdata is
// pdata's JSON decoding of the same requests, what it replaces.
func BenchmarkTranscode(b *testing.B) {
	req, spans := benchRequest(b)
	var out []byte
	var err error
	b.SetBytes(int64(len(req)))
	b.ReportAllocs()
	for b.Loop() {
		if out, err = Transcode(out[:0], req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*spans), "ns/span")
}

func BenchmarkPdata(b *testing.B) {
	req, spans := benchRequest(b)
	b.SetBytes(int64(len(req)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*spans), "ns/span")
}

func benchRequest(b *testing.B) ([]byte, int) {
	td := loadgen.NewSpans(1).Requests(100, time.Unix(1_700_000_000, 0))
	req, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		b.Fatal(err)
	}
	return req, td.SpanCount()
}
