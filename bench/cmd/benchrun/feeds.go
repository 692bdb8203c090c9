package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/sidecarhq/sidecar/bench/internal/spanlines"
	"github.com/sidecarhq/sidecar/internal/loadgen"
)

// maxBacklog bounds how far an as-fast-as-possible writer may run ahead of
// what reached the sink, so "max" measures sustained throughput rather than
// how big a file or pipe buffer can get.
const maxBacklog = 2_000_000

// stuckWrite is how long after the load's end a blocked write is given up.
const stuckWrite = 5 * time.Second

// tick is the pacing step of fixed-rate generators.
const tick = 5 * time.Millisecond

// feed drives one input for the duration of ctx. rate is events per second;
// 0 means as fast as the collector takes them. Every accepted event is
// added to sent.
type feed func(ctx context.Context, env *runEnv, rate int, sent *atomic.Int64) error

// lineFrame turns a pino line into what the transport carries.
type lineFrame func(dst []byte, t time.Time, line []byte) []byte

func plainLine(dst []byte, _ time.Time, line []byte) []byte { return append(dst, line...) }

// blockLines is how many lines a max-rate writer's block holds.
const blockLines = 20_000

// lineBlock is blockLines lines of gen framed by frame, stamped now.
func lineBlock(gen *loadgen.Pino, frame lineFrame, now time.Time) []byte {
	var block, line []byte
	for range blockLines {
		line = gen.Append(line[:0], now)
		block = frame(block, now, line)
	}
	return block
}

// writeLines writes pino lines to w, paced at rate or as fast as possible.
func writeLines(ctx context.Context, w io.Writer, env *runEnv, rate int, frame lineFrame, sent *atomic.Int64) error {
	// A collector that stops reading its stdin must not hang the run: a
	// write still blocked stuckWrite after the load's end is cut off.
	if c, ok := w.(io.Closer); ok {
		done := make(chan struct{})
		defer close(done)
		defer context.AfterFunc(ctx, func() {
			select {
			case <-done:
			case <-time.After(stuckWrite):
				_ = c.Close()
			}
		})()
	}
	gen := loadgen.NewPino(1)
	if rate == 0 {
		// A pre-built block keeps the generator's cost out of the way; its
		// timestamps are stale, which only matters for latency (not measured here).
		block := lineBlock(gen, frame, time.Now())
		for ctx.Err() == nil {
			if sent.Load()-env.sunk() > maxBacklog {
				time.Sleep(time.Millisecond)
				continue
			}
			if _, err := w.Write(block); err != nil {
				return err
			}
			sent.Add(blockLines)
		}
		return nil
	}
	var buf, line []byte
	start := time.Now()
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			n := int64(now.Sub(start).Seconds()*float64(rate)) - sent.Load()
			buf = buf[:0]
			for range n {
				line = gen.Append(line[:0], now)
				buf = frame(buf, now, line)
			}
			if n <= 0 {
				continue
			}
			if _, err := w.Write(buf); err != nil {
				return err
			}
			sent.Add(n)
		}
	}
}

// feedForward sends pino lines over Fluent Forward in frames of mode,
// encoded before they are timed (at max rate, ahead of the run) so that the
// generator can outrun the collector, over several connections.
// preEncodedLines is how many lines' worth of distinct frames a max-rate
// connection sends over and over, so that the collector's compression
// cannot profit from repetition much more than in production.
const preEncodedLines = 4096

func feedForward(ctx context.Context, env *runEnv, mode loadgen.ForwardMode, rate int, sent *atomic.Int64) error {
	const conns = 4
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for c := range conns {
		wg.Go(func() {
			errs <- forwardConn(ctx, env, mode, rate/conns, uint64(c+1), sent)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func forwardConn(ctx context.Context, env *runEnv, mode loadgen.ForwardMode, rate int, seed uint64, sent *atomic.Int64) error {
	conn, err := dialForward(env)
	if err != nil {
		return err
	}
	defer conn.Close()
	enc := loadgen.NewForward(mode, seed)
	w := bufio.NewWriterSize(conn, 64<<10)
	write := func(frame []byte, lines int) error {
		if _, err := w.Write(frame); err != nil {
			return err
		}
		sent.Add(int64(lines))
		return nil
	}
	if rate == 0 {
		frames, lines := enc.PreEncoded(time.Now(), preEncodedLines)
		for i := 0; ctx.Err() == nil; i++ {
			if sent.Load()-env.sunk() > maxBacklog {
				if err := w.Flush(); err != nil {
					return err
				}
				time.Sleep(time.Millisecond)
				continue
			}
			if err := write(frames[i%len(frames)], lines); err != nil {
				return err
			}
		}
		return w.Flush()
	}
	start := time.Now()
	var mine int64
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return w.Flush()
		case now := <-t.C:
			for mine < int64(now.Sub(start).Seconds()*float64(rate)) {
				frame, lines := enc.Frame(now)
				if err := write(frame, lines); err != nil {
					return err
				}
				mine += int64(lines)
				// docker's driver writes each message as it comes.
				if mode == loadgen.ForwardMessage {
					if err := w.Flush(); err != nil {
						return err
					}
				}
			}
			if err := w.Flush(); err != nil {
				return err
			}
		}
	}
}

// dialForward connects to the collector's Fluent Forward port.
func dialForward(env *runEnv) (net.Conn, error) {
	conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", env.forwardPort), 5*time.Second)
	if err != nil {
		return nil, fmt.Errorf("forward: %w", err)
	}
	return conn, nil
}

// requestsPerExport is how many requests' spans one export carries: 56
// requests × 9 spans = 504, near the JS SDK's 512-span export batches.
const requestsPerExport = 56

// spanExporter sends one export request and reports whether it was accepted.
// body is td encoded as the exporter's marshal says.
type spanExporter struct {
	send    func(ctx context.Context, td ptrace.Traces, body []byte) error
	marshal func(ptraceotlp.ExportRequest) ([]byte, error)
	encode  func(ptrace.Traces) ([]byte, error) // instead of marshal, when set
}

// body encodes td for send.
func (e spanExporter) body(td ptrace.Traces) ([]byte, error) {
	if e.encode != nil {
		return e.encode(td)
	}
	return e.marshal(ptraceotlp.NewExportRequestFromTraces(td))
}

// feedSpans sends OTLP span batches with `senders` concurrent exporters.
func feedSpans(ctx context.Context, rate int, export spanExporter, sent *atomic.Int64) error {
	const senders = 4
	spansPerExport := int64(requestsPerExport * loadgen.SpansPerRequest)
	var wg sync.WaitGroup
	var refused refusals
	if rate == 0 {
		// Pre-built requests keep the generator out of the way.
		gen := loadgen.NewSpans(7)
		var reqs []ptrace.Traces
		var bodies [][]byte
		for range 32 {
			td := gen.Requests(requestsPerExport, time.Now())
			b, err := export.body(td)
			if err != nil {
				return err
			}
			reqs, bodies = append(reqs, td), append(bodies, b)
		}
		for s := range senders {
			wg.Go(func() {
				for i := s; ctx.Err() == nil; i++ {
					k := i % len(reqs)
					if err := export.send(ctx, reqs[k], bodies[k]); err != nil {
						if !ended(ctx) {
							refused.add(err)
							time.Sleep(10 * time.Millisecond) // refused (backpressure): back off briefly
						}
						continue
					}
					sent.Add(spansPerExport)
				}
			})
		}
		wg.Wait()
		return refused.err()
	}
	// Fixed rate: one ticker builds fresh requests stamped now; senders export them.
	work := make(chan ptrace.Traces, 64)
	for range senders {
		wg.Go(func() {
			for td := range work {
				b, err := export.body(td)
				if err == nil {
					// Requests already built are sent even as the load ends.
					err = export.send(context.WithoutCancel(ctx), td, b)
				}
				if err != nil {
					refused.add(err)
					continue
				}
				sent.Add(int64(td.SpanCount()))
			}
		})
	}
	gen := loadgen.NewSpans(7)
	start := time.Now()
	var requests int64
	t := time.NewTicker(tick)
	defer t.Stop()
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case now := <-t.C:
			// Full batches, as an SDK's batch span processor sends at these
			// rates (it exports as soon as 512 spans are queued).
			due := int64(now.Sub(start).Seconds()*float64(rate)) / loadgen.SpansPerRequest
			for due-requests >= requestsPerExport {
				select {
				case work <- gen.Requests(requestsPerExport, time.Now()):
				case <-ctx.Done():
					break loop
				}
				requests += requestsPerExport
			}
		}
	}
	close(work)
	wg.Wait()
	return refused.err()
}

// refusals counts failed exports and keeps the first error, for the report.
type refusals struct {
	mu    sync.Mutex
	n     int
	first error
}

func (r *refusals) add(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.first == nil {
		r.first = err
	}
	r.n++
}

func (r *refusals) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == 0 {
		return nil
	}
	return fmt.Errorf("%d span exports refused or failed (not counted as sent), first: %w", r.n, r.first)
}

// ended reports whether the load's time is up: a request cut off by the
// deadline is not a refusal. (A per-request timeout derived from ctx may
// fire a moment before ctx itself reports the deadline.)
func ended(ctx context.Context) bool {
	dl, ok := ctx.Deadline()
	return ctx.Err() != nil || (ok && !time.Now().Before(dl))
}

// httpSpanExporter posts OTLP/HTTP requests, protobuf or (json) OTLP/JSON,
// which Node's @opentelemetry/exporter-trace-otlp-http sends.
func httpSpanExporter(endpoint string, json bool) spanExporter {
	client := &http.Client{Timeout: 10 * time.Second}
	contentType, marshal := "application/x-protobuf", ptraceotlp.ExportRequest.MarshalProto
	if json {
		contentType, marshal = "application/json", ptraceotlp.ExportRequest.MarshalJSON
	}
	send := func(ctx context.Context, _ ptrace.Traces, body []byte) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+endpoint+"/v1/traces", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", contentType)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("OTLP HTTP: %s", resp.Status)
		}
		return nil
	}
	return spanExporter{send: send, marshal: marshal}
}

// stdinSpanExporter writes each request as OTLP/JSON lines of at most 64
// KiB, as the JS client's stdout exporter cuts them (spanlines); senders take
// turns, since a pipe write this long is not atomic.
func stdinSpanExporter(w io.Writer) spanExporter {
	var mu sync.Mutex
	send := func(_ context.Context, _ ptrace.Traces, body []byte) error {
		mu.Lock()
		defer mu.Unlock()
		_, err := w.Write(body)
		return err
	}
	return spanExporter{send: send, encode: func(td ptrace.Traces) ([]byte, error) {
		b, _, err := spanlines.Cut(td, spanlines.DefaultMax)
		return b, err
	}}
}

func grpcSpanExporter(endpoint string) (spanExporter, func(), error) {
	conn, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return spanExporter{}, nil, err
	}
	client := ptraceotlp.NewGRPCClient(conn)
	send := func(ctx context.Context, td ptrace.Traces, _ []byte) error {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err := client.Export(ctx, ptraceotlp.NewExportRequestFromTraces(td))
		return err
	}
	return spanExporter{send: send, marshal: ptraceotlp.ExportRequest.MarshalProto}, func() { _ = conn.Close() }, nil
}
