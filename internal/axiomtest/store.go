package axiomtest

import (
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// DatasetStats counts what one dataset received. Events, Failed, Spans,
// LogRecords and Bytes count accepted requests only; Bytes is the
// uncompressed body size (Axiom's processedBytes without labels).
type DatasetStats struct {
	Events     int64 `json:"events"`
	Failed     int64 `json:"failed"`
	Spans      int64 `json:"spans"`
	LogRecords int64 `json:"logRecords"`
	Bytes      int64 `json:"bytes"`
	Requests   int64 `json:"requests"`
	Rejected   int64 `json:"rejected"` // answered >= 400 or reset
}

// Stats is a snapshot of the counters: totals over every request (including
// those without a dataset) and per dataset.
type Stats struct {
	Total    DatasetStats            `json:"total"`
	Datasets map[string]DatasetStats `json:"datasets"`
}

type counters = DatasetStats

func (c *counters) add(res result, rejected bool) {
	c.Requests++
	if rejected {
		c.Rejected++
		return
	}
	c.Events += int64(res.events)
	c.Failed += int64(res.failed)
	c.Spans += int64(res.spans)
	c.LogRecords += int64(res.logRecords)
	c.Bytes += res.bytes
}

// result is what one request delivered, handed from a route to the store.
type result struct {
	events, failed, spans, logRecords int
	bytes                             int64
	stored                            []map[string]any // nil in count-only mode
	traces                            *ptrace.Traces   // nil in count-only mode
	logs                              *plog.Logs       // nil in count-only mode
}

// maxCountOnlyRequests bounds the request log in count-only mode.
const maxCountOnlyRequests = 10000

type dataset struct {
	counters counters
	events   []map[string]any
	traces   ptrace.Traces
	logs     plog.Logs
}

func (s *Server) dataset(name string) *dataset {
	d := s.datasets[name]
	if d == nil {
		d = &dataset{traces: ptrace.NewTraces(), logs: plog.NewLogs()}
		s.datasets[name] = d
	}
	return d
}

// record stores a finished request and wakes waiters.
func (s *Server) record(req Request, res result) {
	rejected := req.Status == 0 || req.Status >= 400
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cfg.countOnly && len(s.requests) >= maxCountOnlyRequests {
		// A long benchmark or compose run must not grow without bound: keep
		// the most recent half.
		n := copy(s.requests, s.requests[len(s.requests)-maxCountOnlyRequests/2:])
		clear(s.requests[n:])
		s.requests = s.requests[:n]
	}
	s.requests = append(s.requests, req)
	s.totals.add(res, rejected)
	if req.Dataset == "" {
		return
	}
	d := s.dataset(req.Dataset)
	d.counters.add(res, rejected)
	if rejected {
		return
	}
	d.events = append(d.events, res.stored...)
	if res.traces != nil {
		res.traces.ResourceSpans().MoveAndAppendTo(d.traces.ResourceSpans())
	}
	if res.logs != nil {
		res.logs.ResourceLogs().MoveAndAppendTo(d.logs.ResourceLogs())
	}
	close(s.changed)
	s.changed = make(chan struct{})
}

// Events returns the events stored for the dataset name, in arrival order,
// as Axiom would store them: _time normalised to an RFC3339Nano UTC string,
// _sysTime added, reserved names renamed to _user_<name>, event labels
// merged. Numbers are json.Number. The maps are shared with the server:
// read, don't modify.
func (s *Server) Events(name string) []map[string]any {
	var out []map[string]any
	s.inDataset(name, func(d *dataset) { out = append(out, d.events...) })
	return out
}

// EventCount is the number of events accepted for dataset (also in count-only mode).
func (s *Server) EventCount(dataset string) int { return s.count(dataset, eventsOf) }

// Traces returns a copy of every span accepted for the dataset name, merged in arrival order.
func (s *Server) Traces(name string) ptrace.Traces {
	out := ptrace.NewTraces()
	s.inDataset(name, func(d *dataset) { d.traces.CopyTo(out) })
	return out
}

// Spans returns the spans of dataset flattened to Axiom's trace event shape.
func (s *Server) Spans(dataset string) []map[string]any {
	return flattenSpans(s.Traces(dataset))
}

// SpanCount is the number of spans accepted for dataset (also in count-only mode).
func (s *Server) SpanCount(dataset string) int { return s.count(dataset, spansOf) }

// Logs returns a copy of the OTLP log records accepted on /v1/logs for the
// dataset name.
func (s *Server) Logs(name string) plog.Logs {
	out := plog.NewLogs()
	s.inDataset(name, func(d *dataset) { d.logs.CopyTo(out) })
	return out
}

// LogRecordCount is the number of OTLP log records accepted for dataset.
func (s *Server) LogRecordCount(dataset string) int { return s.count(dataset, logRecordsOf) }

// Requests returns every request seen, rejected ones included, in the order
// they finished. In count-only mode only the most recent 5000-10000 are kept.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{Total: s.totals, Datasets: make(map[string]DatasetStats, len(s.datasets))}
	for name, d := range s.datasets {
		st.Datasets[name] = d.counters
	}
	return st
}

// WaitEvents waits until dataset has at least n events or timeout passes.
func (s *Server) WaitEvents(dataset string, n int, timeout time.Duration) error {
	return s.waitFor("events", dataset, n, timeout, eventsOf)
}

// WaitSpans waits until dataset has at least n spans or timeout passes.
func (s *Server) WaitSpans(dataset string, n int, timeout time.Duration) error {
	return s.waitFor("spans", dataset, n, timeout, spansOf)
}

// WaitLogRecords waits until dataset has at least n OTLP log records or timeout passes.
func (s *Server) WaitLogRecords(dataset string, n int, timeout time.Duration) error {
	return s.waitFor("log records", dataset, n, timeout, logRecordsOf)
}

// The counters the Count and Wait methods read.
func eventsOf(c counters) int64     { return c.Events }
func spansOf(c counters) int64      { return c.Spans }
func logRecordsOf(c counters) int64 { return c.LogRecords }

// inDataset calls f with the lock held, if anything reached dataset.
func (s *Server) inDataset(name string, f func(*dataset)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.datasets[name]; d != nil {
		f(d)
	}
}

func (s *Server) count(dataset string, of func(counters) int64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int(s.countLocked(dataset, of))
}

// countLocked reads one of dataset's counters; s.mu must be held.
func (s *Server) countLocked(name string, of func(counters) int64) int64 {
	if d := s.datasets[name]; d != nil {
		return of(d.counters)
	}
	return 0
}

func (s *Server) waitFor(what, dataset string, n int, timeout time.Duration, count func(counters) int64) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		got := s.countLocked(dataset, count)
		changed := s.changed
		s.mu.Unlock()
		if got >= int64(n) {
			return nil
		}
		select {
		case <-changed:
		case <-deadline.C:
			return fmt.Errorf("axiomtest: waited %s for %d %s in dataset %q, %d arrived", timeout, n, what, dataset, got)
		case <-s.closing:
			return fmt.Errorf("axiomtest: server closed while waiting for %d %s in dataset %q, %d arrived", n, what, dataset, got)
		}
	}
}
