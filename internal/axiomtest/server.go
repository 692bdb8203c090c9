// Package axiomtest is a fake Axiom server for tests, benchmarks and local
// setups. It enforces Axiom's documented ingest and OTLP contract (routes,
// auth, content types, encodings, the 10k events limit, the IngestStatus
// answer and the transformations applied to stored events), records what
// arrived, and can script faults (rate limits, 5xx, slow answers, connection
// resets, partial failures). See /work/shared/research/axiom.md §5.
//
// Where Axiom's behaviour is undocumented the fake picks a plausible answer:
// 403 (not 401) for bad tokens; 415 for an unsupported Content-Type; 400 with
// {"message":...} for bad bodies, a missing OTLP dataset header and more than
// the events limit; 404 for /v1/metrics; 413 above 256 MiB uncompressed;
// event labels overwrite event fields of the same name; the timestamp-field
// keeps its original field; CSV values stay strings. Not modelled: field and
// nesting size limits, the attributes.custom split of span attributes.
package axiomtest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Option configures a Server.
type Option func(*config)

type config struct {
	addr      string
	tokens    map[string]bool // nil: any syntactically valid token
	datasets  map[string]bool // nil: every dataset exists
	countOnly bool
	maxEvents int
	maxBody   int64
}

// WithTokens restricts the accepted tokens; by default any token that starts
// with xaat- (API token) or xapt- (personal token) is accepted.
func WithTokens(tokens ...string) Option {
	return func(c *config) {
		c.tokens = make(map[string]bool, len(tokens))
		for _, t := range tokens {
			c.tokens[t] = true
		}
	}
}

// WithDatasets makes only these datasets exist; others answer 404. By default
// every dataset exists.
func WithDatasets(names ...string) Option {
	return func(c *config) {
		c.datasets = make(map[string]bool, len(names))
		for _, n := range names {
			c.datasets[n] = true
		}
	}
}

// WithCountOnly counts events, spans and bytes per dataset and stores nothing;
// requests are still validated. For benchmarks.
func WithCountOnly() Option { return func(c *config) { c.countOnly = true } }

// WithMaxEvents sets the events-per-request limit (Axiom's is 10000).
func WithMaxEvents(n int) Option { return func(c *config) { c.maxEvents = n } }

// WithMaxBodyBytes answers 413 to a request whose body is over n bytes
// uncompressed (default 256 MiB).
func WithMaxBodyBytes(n int64) Option { return func(c *config) { c.maxBody = n } }

// WithAddr listens on addr instead of 127.0.0.1:0 (for cmd/fakeaxiom).
func WithAddr(addr string) Option { return func(c *config) { c.addr = addr } }

// Server is a running fake Axiom. Its methods are safe for concurrent use.
type Server struct {
	cfg      config
	listener net.Listener
	http     *http.Server
	closing  chan struct{}
	closeOne sync.Once

	mu       sync.Mutex
	faults   faultQueues
	outages  map[string]Fault // standing faults per dataset; "" = every request
	datasets map[string]*dataset
	requests []Request
	totals   counters
	changed  chan struct{} // closed and replaced whenever data arrives

	conns atomic.Int64 // open client connections (see WaitIdle)
}

// Request is one request the server saw, accepted or not.
type Request struct {
	Method, Path, Dataset string
	Status                int         // 0 when the connection was reset
	Header                http.Header // as received (tests check auth/content headers; never log it)
	Events, Spans         int         // accepted in this request (Events counts OTLP log records on /v1/logs)
	Received              time.Time
}

// New starts a fake Axiom on 127.0.0.1 at a free port; it serves at once.
func New(opts ...Option) (*Server, error) {
	cfg := config{addr: "127.0.0.1:0", maxEvents: 10000, maxBody: maxBodyBytes}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.maxEvents <= 0 {
		return nil, fmt.Errorf("axiomtest: max events must be positive, got %d", cfg.maxEvents)
	}
	if cfg.maxBody <= 0 || cfg.maxBody > maxBodyBytes {
		return nil, fmt.Errorf("axiomtest: max body bytes must be in 1..%d, got %d", maxBodyBytes, cfg.maxBody)
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return nil, fmt.Errorf("axiomtest: listen: %w", err)
	}
	s := &Server{
		cfg:      cfg,
		listener: ln,
		closing:  make(chan struct{}),
		faults:   faultQueues{},
		outages:  map[string]Fault{},
		datasets: map[string]*dataset{},
		changed:  make(chan struct{}),
	}
	s.http = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, ConnState: s.countConns}
	// Serve only returns once Close has run (ErrServerClosed); it retries
	// temporary accept errors itself.
	go func() { _ = s.http.Serve(ln) }()
	return s, nil
}

// NewForTest is New for tests: it fails t on error and closes the server when
// the test ends.
func NewForTest(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s, err := New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// URL is the base URL, "http://127.0.0.1:port", to give clients.
func (s *Server) URL() string { return "http://" + s.Addr() }

// Addr is the listening host:port.
func (s *Server) Addr() string { return s.listener.Addr().String() }

func (s *Server) countConns(_ net.Conn, state http.ConnState) {
	switch state {
	case http.StateNew:
		s.conns.Add(1)
	case http.StateClosed, http.StateHijacked:
		s.conns.Add(-1)
	}
}

// WaitIdle waits until no client connection is open, at most timeout, and
// reports whether none is. After its client was killed, every request the
// client had sent in full has then been recorded (the server reads what
// the connection holds before it sees the connection end).
func (s *Server) WaitIdle(timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for s.conns.Load() > 0 {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// Close stops serving, cuts open connections and ends pending fault delays.
func (s *Server) Close() {
	s.closeOne.Do(func() {
		close(s.closing)
		_ = s.http.Close()
	})
}

// Fail scripts the answers to the next len(faults) requests for dataset, in
// order; "" matches any request on any route. Afterwards normal service
// resumes. A dataset's own faults are used before the catch-all ones.
func (s *Server) Fail(dataset string, faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[dataset] = append(s.faults[dataset], faults...)
}

// Outage answers every request for dataset ("" = any) with f, after the
// scripted faults, until EndOutage. Fault.Delay applies to each request.
func (s *Server) Outage(dataset string, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outages[dataset] = f
}

// EndOutage ends Outage for dataset ("" = the catch-all one).
func (s *Server) EndOutage(dataset string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.outages, dataset)
}

// nextFault is the fault for a request to ds: a scripted one, else a
// standing outage.
func (s *Server) nextFault(ds string) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.faults.next(ds); ok {
		return f, true
	}
	if f, ok := s.outages[ds]; ok {
		return f, true
	}
	f, ok := s.outages[""]
	return f, ok
}

// Handler serves the Axiom API plus the fake's own read-back routes:
// GET /_fake/stats (Stats as JSON), GET /_fake/events/{dataset} (stored
// events as NDJSON) and GET /_fake/spans/{dataset} (Spans as NDJSON).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /_fake/stats", s.serveStats)
	mux.HandleFunc("GET /_fake/events/{dataset}", s.serveStoredEvents)
	mux.HandleFunc("GET /_fake/spans/{dataset}", s.serveStoredSpans)
	mux.HandleFunc("/", s.serveAPI)
	return mux
}

// route is what the fake knows about one API path.
type route int

const (
	routeUnknown route = iota
	routeLegacyIngest
	routeEdgeIngest
	routeTraces
	routeLogs
	routeMetrics
)

// parseRoute maps a path to its route and, for ingest routes, the dataset.
func parseRoute(path string) (route, string) {
	switch path {
	case "/v1/traces":
		return routeTraces, ""
	case "/v1/logs":
		return routeLogs, ""
	case "/v1/metrics":
		return routeMetrics, ""
	}
	if rest, ok := strings.CutPrefix(path, "/v1/datasets/"); ok {
		if name, ok := strings.CutSuffix(rest, "/ingest"); ok && validDatasetName(name) {
			return routeLegacyIngest, name
		}
	}
	if name, ok := strings.CutPrefix(path, "/v1/ingest/"); ok && validDatasetName(name) {
		return routeEdgeIngest, name
	}
	return routeUnknown, ""
}

// validDatasetName follows axiom-go's rule: 1-80 characters of [a-zA-Z0-9-_.].
func validDatasetName(name string) bool {
	if name == "" || len(name) > 80 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// otlpDataset reads the dataset of an OTLP request: the signal-specific
// header overrides X-Axiom-Dataset.
func otlpDataset(rt route, h http.Header) string {
	switch rt {
	case routeTraces:
		if v := h.Get("X-Axiom-Traces-Dataset"); v != "" {
			return v
		}
	case routeLogs:
		if v := h.Get("X-Axiom-Logs-Dataset"); v != "" {
			return v
		}
	case routeMetrics:
		if v := h.Get("X-Axiom-Metrics-Dataset"); v != "" {
			return v
		}
	}
	return h.Get("X-Axiom-Dataset")
}

// serveAPI validates a request in Axiom's order (route, method, scripted
// fault, auth, dataset), hands it to the route, records it and answers.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Received: time.Now()}
	rt, ds := parseRoute(r.URL.Path)
	if rt == routeTraces || rt == routeLogs || rt == routeMetrics {
		ds = otlpDataset(rt, r.Header)
	}
	req.Dataset = ds

	fault, faulted := s.nextFault(ds)

	var (
		ans answer
		res result
	)
	switch {
	case faulted && !s.wait(r, fault.Delay): // client gone or server closing
		s.record(req, res)
		dropConnection(w)
		return
	case faulted && fault.Reset:
		_, _ = io.Copy(io.Discard, r.Body)
		s.record(req, res)
		dropConnection(w)
		return
	case faulted && fault.Status != 0:
		ans = faultAnswer(fault)
	default:
		ans, res = s.serveRoute(r, rt, ds, fault.RejectEvents)
		if faulted {
			ans = ans.overlay(fault)
		}
	}
	req.Status = ans.status
	req.Events, req.Spans = res.events+res.logRecords, res.spans
	s.record(req, res)
	w.Header().Set("X-Axiom-Trace-Id", newTraceID())
	ans.write(w)
}

// wait sleeps d unless the request or the server ends first.
func (s *Server) wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	case <-s.closing:
		return false
	}
}

func (s *Server) serveRoute(r *http.Request, rt route, ds string, rejectFirst int) (answer, result) {
	switch {
	case rt == routeUnknown:
		return errorAnswer(http.StatusNotFound, "Not found"), result{}
	case r.Method != http.MethodPost:
		a := errorAnswer(http.StatusMethodNotAllowed, "Method Not Allowed")
		a.header.Set("Allow", http.MethodPost)
		return a, result{}
	case !s.authorized(r, rt):
		return errorAnswer(http.StatusForbidden, "Forbidden"), result{}
	case rt == routeMetrics:
		// Metrics are out of scope for the sidecar; answering 404 makes a
		// misrouted metrics pipeline fail loudly.
		return errorAnswer(http.StatusNotFound, "Not found: metrics are not supported by the fake"), result{}
	case ds == "":
		return messageAnswer(http.StatusBadRequest, "missing dataset: set the X-Axiom-Dataset header"), result{}
	case s.cfg.datasets != nil && !s.cfg.datasets[ds]:
		return errorAnswer(http.StatusNotFound, "Not found"), result{}
	case rt == routeTraces || rt == routeLogs:
		return s.serveOTLP(r, rt, rejectFirst)
	default:
		return s.serveIngest(r, rejectFirst)
	}
}

// authorized checks the bearer token. Personal tokens (xapt-) need an org ID
// and are refused on the edge ingest route, which takes API tokens only.
func (s *Server) authorized(r *http.Request, rt route) bool {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return false
	}
	personal := strings.HasPrefix(token, "xapt-")
	if !personal && !strings.HasPrefix(token, "xaat-") || len(token) == len("xaat-") {
		return false
	}
	if s.cfg.tokens != nil && !s.cfg.tokens[token] {
		return false
	}
	if personal && (rt == routeEdgeIngest || r.Header.Get("X-Axiom-Org-Id") == "") {
		return false
	}
	return true
}
