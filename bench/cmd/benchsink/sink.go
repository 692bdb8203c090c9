package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

type sink struct {
	fake    *axiomtest.Server
	measure bool
	faults  *faults

	wire atomic.Int64 // request body bytes as sent (compressed)

	mu      sync.Mutex
	hist    histogram
	badBody int64 // bodies the latency decoder could not read (the fake judges them)
}

// Stats is what GET /_bench/stats answers.
type Stats struct {
	Logs     int64   `json:"logs"`  // NDJSON events plus OTLP log records accepted
	Spans    int64   `json:"spans"` // OTLP spans accepted
	Requests int64   `json:"requests"`
	Rejected int64   `json:"rejected"`
	Refused  int64   `json:"refused"`   // answered 503 by -axiom down
	Bytes    int64   `json:"bytes"`     // uncompressed
	Wire     int64   `json:"wireBytes"` // as sent, compressed
	Latency  Latency `json:"latency"`
	BadBody  int64   `json:"badBody"`
}

// Latency summarises event timestamp → arrival at the sink.
type Latency struct {
	Count int64   `json:"count"`
	P50ms float64 `json:"p50ms"`
	P99ms float64 `json:"p99ms"`
	Maxms float64 `json:"maxms"`
}

func (s *sink) serveStats(w http.ResponseWriter, _ *http.Request) {
	t := s.fake.Stats().Total
	s.mu.Lock()
	st := Stats{
		Logs: t.Events + t.LogRecords, Spans: t.Spans, Requests: t.Requests, Rejected: t.Rejected, Refused: s.faults.refused.Load(), Bytes: t.Bytes, Wire: s.wire.Load(),
		Latency: s.hist.summary(), BadBody: s.badBody,
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(st)
}

// wrap measures latency on a copy of the body before the fake handles it.
func (s *sink) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		if !s.measure {
			r.Body = &countingBody{ReadCloser: r.Body, n: &s.wire}
			next.ServeHTTP(w, r)
			return
		}
		now := time.Now()
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.wire.Add(int64(len(body)))
		r.Body = io.NopCloser(bytes.NewReader(body))
		stamps, ok := eventTimes(r, body)
		s.mu.Lock()
		if !ok {
			s.badBody++
		}
		for _, ns := range stamps {
			s.hist.add(now.Sub(time.Unix(0, ns)))
		}
		s.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// countingBody counts the bytes read from a request body.
type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// eventTimes returns the event timestamps (Unix ns) in a request body.
func eventTimes(r *http.Request, body []byte) ([]int64, bool) {
	plain, err := decompress(r.Header.Get("Content-Encoding"), body)
	if err != nil {
		return nil, false
	}
	isJSON := strings.Contains(r.Header.Get("Content-Type"), "json")
	switch r.URL.Path {
	case "/v1/traces":
		req := ptraceotlp.NewExportRequest()
		if err := unmarshal(req, plain, isJSON); err != nil {
			return nil, false
		}
		var out []int64
		rss := req.Traces().ResourceSpans()
		for i := range rss.Len() {
			sss := rss.At(i).ScopeSpans()
			for j := range sss.Len() {
				spans := sss.At(j).Spans()
				for k := range spans.Len() {
					out = append(out, int64(spans.At(k).EndTimestamp()))
				}
			}
		}
		return out, true
	case "/v1/logs":
		req := plogotlp.NewExportRequest()
		if err := unmarshal(req, plain, isJSON); err != nil {
			return nil, false
		}
		var out []int64
		rls := req.Logs().ResourceLogs()
		for i := range rls.Len() {
			sls := rls.At(i).ScopeLogs()
			for j := range sls.Len() {
				lrs := sls.At(j).LogRecords()
				for k := range lrs.Len() {
					lr := lrs.At(k)
					if ts := lr.Timestamp(); ts != 0 {
						out = append(out, int64(ts))
					} else if ms, ok := findEpochMillis(lr.Body().AsString()); ok {
						out = append(out, ms*1e6)
					}
				}
			}
		}
		return out, true
	}
	// Axiom ingest: NDJSON or a JSON array of events carrying `_time` (the
	// sidecar renames pino's epoch-millisecond `time`).
	var out []int64
	for rest := plain; ; {
		i := bytes.Index(rest, []byte(`"_time":`))
		if i < 0 {
			break
		}
		rest = rest[i+len(`"_time":`):]
		if ms, n := leadingInt(rest); n > 0 {
			out = append(out, ms*1e6)
		}
	}
	return out, true
}

type protoJSON interface {
	UnmarshalProto([]byte) error
	UnmarshalJSON([]byte) error
}

func unmarshal(m protoJSON, b []byte, isJSON bool) error {
	if isJSON {
		return m.UnmarshalJSON(b)
	}
	return m.UnmarshalProto(b)
}

// findEpochMillis finds pino's `"time":<ms>` in a body kept as a string
// (fluent_forward and unparsed file_log records).
func findEpochMillis(s string) (int64, bool) {
	i := strings.Index(s, `"time":`)
	if i < 0 {
		return 0, false
	}
	ms, n := leadingInt([]byte(s[i+len(`"time":`):]))
	return ms, n > 0
}

func leadingInt(b []byte) (int64, int) {
	var v int64
	n := 0
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		v = v*10 + int64(b[n]-'0')
		n++
	}
	return v, n
}

var zstdDec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))

func decompress(encoding string, body []byte) ([]byte, error) {
	switch encoding {
	case "", "identity":
		return body, nil
	case "zstd":
		return zstdDec.DecodeAll(body, nil)
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		return io.ReadAll(zr)
	}
	return nil, io.ErrUnexpectedEOF
}

// histogram counts latencies in 1 ms buckets up to two minutes; later ones
// land in the last bucket.
type histogram struct {
	buckets [120_000]int64
	count   int64
	max     time.Duration
}

func (h *histogram) add(d time.Duration) {
	ms := max(int(d/time.Millisecond), 0)
	ms = min(ms, len(h.buckets)-1)
	h.buckets[ms]++
	h.count++
	h.max = max(h.max, d)
}

func (h *histogram) summary() Latency {
	return Latency{Count: h.count, P50ms: h.quantile(0.50), P99ms: h.quantile(0.99), Maxms: float64(h.max) / 1e6}
}

// quantile is the upper edge of the bucket holding the q-th latency.
func (h *histogram) quantile(q float64) float64 {
	if h.count == 0 {
		return 0
	}
	rank := int64(q * float64(h.count))
	var seen int64
	for ms, n := range h.buckets {
		seen += n
		if seen > rank {
			return float64(ms + 1)
		}
	}
	return float64(len(h.buckets))
}
