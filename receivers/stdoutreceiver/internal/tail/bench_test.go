package tail

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
)

const benchLines = 100000

// benchPino returns the i-th ~300-byte pino line.
func benchPino(i int) string {
	return fmt.Sprintf(`{"level":30,"time":1714979289%03d,"pid":7,"hostname":"api-1","reqId":"req-%d","msg":"request completed %s"}`,
		i%1000, i, strings.Repeat("x", 180))
}

func benchTime(i int) string { return fmt.Sprintf("2024-05-06T07:08:%02d.%09dZ", i%60, i) }

// BenchmarkRead measures the file reader from the page cache to the Sink on
// ~300-byte pino lines: CRI (every 10th line split into P+F pieces) and
// docker json-file.
func BenchmarkRead(b *testing.B) {
	b.Run("cri", func(b *testing.B) {
		var sb strings.Builder
		for i := 0; i < benchLines; i++ {
			ts, msg := benchTime(i), benchPino(i)
			if i%10 == 0 {
				fmt.Fprintf(&sb, "%s stdout P %s\n%s stdout F %s\n", ts, msg[:100], ts, msg[100:])
			} else {
				fmt.Fprintf(&sb, "%s stdout F %s\n", ts, msg)
			}
		}
		benchRead(b, FormatCRI, sb.String())
	})
	b.Run("docker", func(b *testing.B) {
		var sb strings.Builder
		for i := 0; i < benchLines; i++ {
			fmt.Fprintf(&sb, `{"log":%s,"stream":"stdout","time":"%s"}`+"\n", strconv.Quote(benchPino(i)+"\n"), benchTime(i))
		}
		benchRead(b, FormatDocker, sb.String())
	})
}

func benchRead(b *testing.B, format, content string) {
	path := filepath.Join(b.TempDir(), "0.log")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
	fd, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer fd.Close()
	r := newReader(stream.DefaultMaxLineBytes)
	got := 0
	sink := func(_ context.Context, batch stream.Batch) error {
		got += len(batch.Lines)
		return nil
	}
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		f := &file{fd: fd, format: format}
		got = 0
		for !f.atEOF {
			if err := r.readFile(context.Background(), f, sink, false); err != nil {
				b.Fatal(err)
			}
		}
		if got != benchLines {
			b.Fatalf("read %d lines, want %d", got, benchLines)
		}
	}
	b.ReportMetric(float64(benchLines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
