package decode

import (
	"fmt"
	"testing"
	"time"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
)

// benchPinoLine returns a ~300-byte pino line like a request log of a web
// service, varied by i.
func benchPinoLine(i int) []byte {
	return fmt.Appendf(nil, `{"level":30,"time":%d,"pid":4242,"hostname":"ip-10-0-1-17.ec2.internal",`+
		`"req":{"id":"req-%08d","method":"GET","url":"/api/orders/%d?include=items","remoteAddress":"10.0.3.4"},`+
		`"res":{"statusCode":200},"responseTime":%d.25,"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","msg":"request completed"}`,
		1764504000000+i, i, i%1000, i%300)
}

// BenchmarkDecodePino decodes batches of 1024 ~300-byte pino lines, the shape
// the stdin transport hands over. Reports ns and allocations per line.
func BenchmarkDecodePino(b *testing.B) {
	const batchSize = 1024
	lines := make([]stream.Line, batchSize)
	size := 0
	for i := range lines {
		lines[i].Data = benchPinoLine(i)
		size += len(lines[i].Data)
	}
	d := New(Options{Traces: true})
	batch := stream.Batch{Lines: lines}
	now := time.Now()
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		out := d.Decode(batch, nil, now)
		if out.Stats.JSON != batchSize {
			b.Fatalf("stats %+v", out.Stats)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batchSize), "ns/line")
	b.ReportMetric(float64(size)/batchSize, "bytes/line")
}

// BenchmarkDecodeCRI decodes the same lines as a tailed CRI file hands them
// over: each with the runtime's timestamp and the stream, so every record
// also carries the log.iostream attribute.
func BenchmarkDecodeCRI(b *testing.B) {
	const batchSize = 1024
	lines := make([]stream.Line, batchSize)
	size := 0
	seen := time.Now()
	for i := range lines {
		lines[i] = stream.Line{Data: benchPinoLine(i), Time: seen, Stream: "stdout"}
		size += len(lines[i].Data)
	}
	d := New(Options{Traces: true})
	batch := stream.Batch{Attrs: []stream.Attr{{Key: "log.file.path", Value: "/var/log/pods/shop/app/0.log"}}, Lines: lines}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		out := d.Decode(batch, nil, seen)
		if out.Stats.JSON != batchSize {
			b.Fatalf("stats %+v", out.Stats)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batchSize), "ns/line")
}
