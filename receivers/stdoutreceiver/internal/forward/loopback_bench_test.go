package forward

import (
	"context"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluent/fluent-logger-golang/fluent"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
)

// spin burns CPU for d, standing in for the pipeline's work.
func spin(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

// BenchmarkFluentLoggerDocker is the bench/run.sh logs-forward load: two
// fluent-logger-golang clients over loopback, one Message-mode event per
// sync Post, no ack. The Sink costs what the receiver's decoder and the
// pipeline roughly cost: a fixed part per call and a part per line, so
// batching is visible in records/s and lines/call.
func BenchmarkFluentLoggerDocker(b *testing.B) {
	const clients = 2
	var lines, calls atomic.Int64
	sink := func(_ context.Context, batch stream.Batch) error {
		spin(20*time.Microsecond + time.Duration(len(batch.Lines))*time.Microsecond)
		calls.Add(1)
		lines.Add(int64(len(batch.Lines)))
		return nil
	}
	s, err := New(Config{Endpoint: "127.0.0.1:0"}, Settings{}, sink)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	host, port, _ := net.SplitHostPort(s.Addrs()[0].String())
	p, _ := strconv.Atoi(port)
	perClient := max(1, b.N/clients)
	record := dockerRecord("/api", "stdout", pinoLine(1))
	b.SetBytes(int64(len(pinoLine(1))))
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	for range clients {
		logger, err := fluent.New(fluent.Config{FluentHost: host, FluentPort: p, SubSecondPrecision: true, Timeout: 5 * time.Second})
		if err != nil {
			b.Fatal(err)
		}
		wg.Go(func() {
			defer logger.Close()
			for range perClient {
				if err := logger.PostWithTime("docker.api", time.Now(), record); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for lines.Load() < int64(perClient*clients) {
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	b.ReportMetric(float64(lines.Load())/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(lines.Load())/float64(calls.Load()), "lines/call")
}
