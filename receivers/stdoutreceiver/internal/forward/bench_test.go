package forward

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/tinylib/msgp/msgp"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
)

// repeatReader yields data n times, filling each read as a busy socket does.
type repeatReader struct {
	data []byte
	off  int
	n    int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	total := 0
	for total < len(p) && r.n > 0 {
		k := copy(p[total:], r.data[r.off:])
		total += k
		r.off += k
		if r.off == len(r.data) {
			r.off = 0
			r.n--
		}
	}
	return total, nil
}

// pinoLine is a ~300-byte pino line, as an app writes it to stdout.
func pinoLine(i int) string {
	return fmt.Sprintf(`{"level":30,"time":1767225600%03d,"pid":7,"hostname":"ip-10-0-1-23","reqId":"req-%06d","req":{"method":"GET","url":"/api/v1/items?page=2","remoteAddress":"10.0.3.4"},"res":{"statusCode":200},"responseTime":12.5,"msg":"request completed","traceId":"4bf92f3577b34da6a3ce929d0e0e4736"}`, i%1000, i)
}

// dockerEntries is a Forward-mode frame of n records shaped like docker's.
func dockerForwardFrame(n int) []byte {
	b := msgp.AppendArrayHeader(nil, 3)
	b = msgp.AppendString(b, "app-firelens-1234")
	b = msgp.AppendArrayHeader(b, uint32(n))
	t0 := time.Unix(1767225600, 0)
	for i := range n {
		b = msgp.AppendArrayHeader(b, 2)
		b = appendEventTime(b, t0.Add(time.Duration(i)*time.Microsecond))
		b = appendRecord(b, kv{"container_id", containerID}, kv{"container_name", "/ecs-app-1"},
			kv{"source", "stdout"}, kv{"log", pinoLine(i)})
	}
	return appendOption(b, "Y2h1bmstMQ==")
}

func benchmarkReadFrames(b *testing.B, frame []byte, recordsPerFrame int) {
	var got int
	sink := func(_ context.Context, batch stream.Batch) error {
		got += len(batch.Lines)
		return nil
	}
	s, err := New(Config{Endpoint: "127.0.0.1:0"}, Settings{}, sink)
	if err != nil {
		b.Fatal(err)
	}
	frames := max(1, b.N/recordsPerFrame)
	b.SetBytes(int64(len(frame) / recordsPerFrame))
	b.ReportAllocs()
	b.ResetTimer()
	if err := newConn(s, &repeatReader{data: frame, n: frames}, io.Discard).serve(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if got != frames*recordsPerFrame {
		b.Fatalf("decoded %d records, want %d", got, frames*recordsPerFrame)
	}
	b.ReportMetric(float64(got)/b.Elapsed().Seconds(), "records/s")
}

// Forward mode: what Fluent Bit and fluent loggers send in bulk.
func BenchmarkReadFramesForward(b *testing.B) {
	benchmarkReadFrames(b, dockerForwardFrame(1000), 1000)
}

// Message mode: what docker's fluentd driver (and so FireLens) sends, one
// record per frame with an EventTime.
func BenchmarkReadFramesMessage(b *testing.B) {
	f := msgp.AppendArrayHeader(nil, 4)
	f = msgp.AppendString(f, "app-firelens-1234")
	f = appendEventTime(f, time.Unix(1767225600, 0))
	f = appendRecord(f, kv{"container_id", containerID}, kv{"container_name", "/ecs-app-1"},
		kv{"source", "stdout"}, kv{"log", pinoLine(1)})
	f = msgp.AppendMapHeader(f, 0)
	benchmarkReadFrames(b, f, 1)
}
