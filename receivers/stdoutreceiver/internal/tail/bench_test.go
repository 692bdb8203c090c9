package tail

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
)

// BenchmarkReadCRI measures the file reader on ~300-byte pino lines in CRI
// format (every 10th split into P+F pieces), from disk (page cache) to Sink.
func BenchmarkReadCRI(b *testing.B) {
	const lines = 100000
	path := filepath.Join(b.TempDir(), "0.log")
	var sb strings.Builder
	pad := strings.Repeat("x", 180)
	for i := 0; i < lines; i++ {
		ts := fmt.Sprintf("2024-05-06T07:08:%02d.%09dZ", i%60, i)
		msg := fmt.Sprintf(`{"level":30,"time":1714979289%03d,"pid":7,"hostname":"api-1","reqId":"req-%d","msg":"request completed %s"}`, i%1000, i, pad)
		if i%10 == 0 {
			fmt.Fprintf(&sb, "%s stdout P %s\n%s stdout F %s\n", ts, msg[:100], ts, msg[100:])
		} else {
			fmt.Fprintf(&sb, "%s stdout F %s\n", ts, msg)
		}
	}
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	fd, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer fd.Close()
	r := newReader(defaultMaxLineBytes)
	got := 0
	sink := func(_ context.Context, batch stream.Batch) error {
		got += len(batch.Lines)
		return nil
	}
	b.SetBytes(int64(sb.Len()))
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		f := &file{fd: fd, format: FormatCRI}
		got = 0
		for !f.atEOF || got < lines {
			if err := r.readFile(context.Background(), f, sink, false); err != nil {
				b.Fatal(err)
			}
		}
		if got != lines {
			b.Fatalf("read %d lines, want %d", got, lines)
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
