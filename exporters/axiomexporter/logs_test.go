package axiomexporter

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
	"github.com/sidecarhq/sidecar/internal/rawevent"
)

// ingestRequests are the requests the fake saw on an ingest route.
func ingestRequests(srv *axiomtest.Server) []axiomtest.Request {
	var out []axiomtest.Request
	for _, r := range srv.Requests() {
		if strings.Contains(r.Path, "ingest") {
			out = append(out, r)
		}
	}
	return out
}

func TestLogsArriveAsNDJSONZstd(t *testing.T) {
	srv := axiomtest.NewForTest(t)
	exp := startLogs(t, newHarness(), testConfig(srv.URL()))
	if err := exp.ConsumeLogs(context.Background(), stringLogs(3)); err != nil {
		t.Fatal(err)
	}
	events := srv.Events(logsDS)
	if len(events) != 3 {
		t.Fatalf("got %d events, want 3", len(events))
	}
	for i, ev := range events {
		if ev["message"] != "line "+string(rune('0'+i)) {
			t.Errorf("event %d message = %v", i, ev["message"])
		}
	}
	reqs := ingestRequests(srv)
	if len(reqs) != 1 {
		t.Fatalf("got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Path != "/v1/datasets/"+logsDS+"/ingest" {
		t.Errorf("path = %s", r.Path)
	}
	if got := r.Header.Get("Content-Encoding"); got != "zstd" {
		t.Errorf("Content-Encoding = %q", got)
	}
	if got := r.Header.Get("Content-Type"); got != "application/x-ndjson" {
		t.Errorf("Content-Type = %q", got)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+testToken {
		t.Errorf("Authorization header is not the configured bearer token")
	}
}

func TestRateLimitWaitsForReset(t *testing.T) {
	for name, fault := range map[string]func(time.Time) axiomtest.Fault{
		"429": axiomtest.RateLimited,
		"430": axiomtest.IngestLimited,
	} {
		t.Run(name, func(t *testing.T) {
			srv := axiomtest.NewForTest(t)
			// Reset headers carry whole seconds: a reset 2 s ahead is at least 1 s away.
			reset := time.Now().Add(2 * time.Second).Truncate(time.Second)
			srv.Fail(logsDS, fault(reset))
			exp := startLogs(t, newHarness(), testConfig(srv.URL()))
			if err := exp.ConsumeLogs(context.Background(), stringLogs(5)); err != nil {
				t.Fatal(err)
			}
			reqs := ingestRequests(srv)
			if len(reqs) != 2 {
				t.Fatalf("got %d requests, want 2 (limited, then accepted)", len(reqs))
			}
			if reqs[0].Status != 429 && reqs[0].Status != 430 {
				t.Fatalf("first status %d", reqs[0].Status)
			}
			if reqs[1].Received.Before(reset) {
				t.Errorf("retry arrived at %v, before the reset at %v", reqs[1].Received, reset)
			}
			if n := srv.EventCount(logsDS); n != 5 {
				t.Errorf("got %d events, want 5", n)
			}
		})
	}
}

func TestServerErrorsRetriedThenDeliveredOnce(t *testing.T) {
	srv := axiomtest.NewForTest(t)
	srv.Fail(logsDS, axiomtest.Status(503), axiomtest.Status(503), axiomtest.Status(503))
	h := newHarness()
	exp := startLogs(t, h, testConfig(srv.URL()))
	if err := exp.ConsumeLogs(context.Background(), stringLogs(7)); err != nil {
		t.Fatal(err)
	}
	if n := len(ingestRequests(srv)); n != 4 {
		t.Errorf("got %d requests, want 4", n)
	}
	if n := srv.EventCount(logsDS); n != 7 {
		t.Errorf("got %d events, want exactly 7", n)
	}
	if n := h.counter(t, "otelcol_exporter_axiom_requests", "status", "503", "exporter", h.set.ID.String()); n != 3 {
		t.Errorf("requests{status=503} = %d, want 3", n)
	}
	if n := h.counter(t, "otelcol_exporter_axiom_sent_items", "signal", "logs", "exporter", h.set.ID.String()); n != 7 {
		t.Errorf("sent_items = %d, want 7", n)
	}
	if n := h.logs.FilterMessageSnippet("retrying").Len(); n != 1 {
		t.Errorf("got %d retry log lines for 3 retries, want 1 (rate-limited)", n)
	}
}

func TestConnectionResetAndTimeoutRetried(t *testing.T) {
	srv := axiomtest.NewForTest(t)
	srv.Fail(logsDS, axiomtest.ConnReset(), axiomtest.Slow(5*time.Second))
	cfg := testConfig(srv.URL())
	cfg.Timeout = 300 * time.Millisecond
	h := newHarness()
	exp := startLogs(t, h, cfg)
	if err := exp.ConsumeLogs(context.Background(), stringLogs(4)); err != nil {
		t.Fatal(err)
	}
	if n := srv.EventCount(logsDS); n != 4 {
		t.Errorf("got %d events, want 4", n)
	}
	// The reset and the timed-out request got no answer; the third did.
	if n := h.counter(t, "otelcol_exporter_axiom_requests", "status", "error"); n != 2 {
		t.Errorf("requests{status=error} = %d, want 2", n)
	}
	if n := h.counter(t, "otelcol_exporter_axiom_requests", "status", "200"); n != 1 {
		t.Errorf("requests{status=200} = %d, want 1", n)
	}
}

// A token Axiom refuses is not a reason to lose data: the batch is held and
// retried, the exporter reports itself unhealthy with the reason (the
// health_check extension shows it), says so once, and recovers when Axiom
// accepts the token again.
func TestRefusedTokenHoldsDataAndReportsUnhealthy(t *testing.T) {
	srv := axiomtest.NewForTest(t)
	srv.Fail(logsDS, axiomtest.Status(http.StatusForbidden), axiomtest.Status(http.StatusForbidden))
	h := newHarness()
	host := &statusHost{Host: componenttest.NewNopHost()}
	exp, err := NewFactory().CreateLogs(context.Background(), h.set, testConfig(srv.URL()))
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.Start(context.Background(), host); err != nil {
		t.Fatal(err)
	}
	defer exp.Shutdown(context.Background())
	if err := exp.ConsumeLogs(context.Background(), stringLogs(3)); err != nil {
		t.Fatalf("err = %v, want the batch delivered once the token is accepted", err)
	}
	if n := srv.EventCount(logsDS); n != 3 {
		t.Errorf("%d events arrived, want 3", n)
	}
	events := host.events()
	if len(events) != 2 || events[0].Status() != componentstatus.StatusRecoverableError || events[1].Status() != componentstatus.StatusOK {
		t.Fatalf("status events %v, want RecoverableError then OK", events)
	}
	if reason := events[0].Err().Error(); !strings.Contains(reason, "403") || !strings.Contains(reason, "AXIOM_TOKEN") || strings.Contains(reason, testToken) {
		t.Errorf("unhealthy reason %q: want the status and what to fix, never the token", reason)
	}
	if lines := h.logs.FilterMessageSnippet("Axiom refused the token").All(); len(lines) != 1 {
		t.Errorf("got %d refused-token log lines, want 1 (at most once a minute)", len(lines))
	}
	for _, e := range h.logs.All() {
		if strings.Contains(e.Message, testToken) || strings.Contains(jsonString(e.ContextMap()), testToken) {
			t.Fatalf("log line contains the token: %s", e.Message)
		}
	}
	if n := h.counter(t, "otelcol_exporter_axiom_dropped_items", "signal", "logs"); n != 0 {
		t.Errorf("dropped_items = %d, want 0: nothing was dropped", n)
	}
	if v, ok := h.gauge(t, "otelcol_exporter_axiom_token_refused", "signal", "logs"); !ok || v != 0 {
		t.Errorf("token_refused = %d (%v) once Axiom accepts, want 0", v, ok)
	}
}

// Axiom answering errors (or unreachable) is reported unhealthy with the
// reason until a send succeeds; it is not a refused token.
func TestFailingSendsReportUnhealthyUntilAxiomAccepts(t *testing.T) {
	srv := axiomtest.NewForTest(t)
	srv.Fail(logsDS, axiomtest.Status(http.StatusServiceUnavailable), axiomtest.Status(http.StatusServiceUnavailable))
	h := newHarness()
	host := &statusHost{Host: componenttest.NewNopHost()}
	exp, err := NewFactory().CreateLogs(context.Background(), h.set, testConfig(srv.URL()))
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.Start(context.Background(), host); err != nil {
		t.Fatal(err)
	}
	defer exp.Shutdown(context.Background())
	if err := exp.ConsumeLogs(context.Background(), stringLogs(3)); err != nil {
		t.Fatalf("err = %v, want the batch delivered once Axiom answers", err)
	}
	events := host.events()
	if len(events) != 2 || events[0].Status() != componentstatus.StatusRecoverableError || events[1].Status() != componentstatus.StatusOK {
		t.Fatalf("status events %v, want RecoverableError then OK", events)
	}
	if reason := events[0].Err().Error(); !strings.Contains(reason, "503") || !strings.Contains(reason, "held") {
		t.Errorf("unhealthy reason %q: want the answer and that data is held", reason)
	}
	if v, ok := h.gauge(t, "otelcol_exporter_axiom_token_refused", "signal", "logs"); !ok || v != 0 {
		t.Errorf("token_refused = %d (%v), want 0", v, ok)
	}
}

// With check_token the exporter asks Axiom at start and reports a refused
// token before any data is sent.
func TestRefusedTokenIsReportedAtStart(t *testing.T) {
	srv := axiomtest.NewForTest(t, axiomtest.WithTokens("xaat-the-right-one"))
	h := newHarness()
	host := &statusHost{Host: componenttest.NewNopHost()}
	cfg := testConfig(srv.URL())
	cfg.CheckToken = true
	exp, err := NewFactory().CreateLogs(context.Background(), h.set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.Start(context.Background(), host); err != nil {
		t.Fatal(err)
	}
	defer exp.Shutdown(context.Background())
	waitUntil(t, func() bool { return len(host.events()) == 1 })
	if ev := host.events()[0]; ev.Status() != componentstatus.StatusRecoverableError {
		t.Errorf("status %v, want RecoverableError", ev.Status())
	}
	if lines := h.logs.FilterMessageSnippet("Axiom refused the token").All(); len(lines) != 1 {
		t.Errorf("got %d refused-token log lines at start, want 1", len(lines))
	}
	if n := srv.EventCount(logsDS); n != 0 {
		t.Errorf("the check sent %d events", n)
	}
	if v, _ := h.gauge(t, "otelcol_exporter_axiom_token_refused", "signal", "logs"); v != 1 {
		t.Errorf("token_refused = %d, want 1", v)
	}
}

// statusHost records the component status events reported to it.
type statusHost struct {
	component.Host
	mu  sync.Mutex
	got []*componentstatus.Event
}

func (h *statusHost) Report(ev *componentstatus.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got = append(h.got, ev)
}

func (h *statusHost) events() []*componentstatus.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*componentstatus.Event(nil), h.got...)
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestPartialFailureCounted(t *testing.T) {
	srv := axiomtest.NewForTest(t)
	srv.Fail(logsDS, axiomtest.PartialFailure(2))
	h := newHarness()
	exp := startLogs(t, h, testConfig(srv.URL()))
	if err := exp.ConsumeLogs(context.Background(), stringLogs(5)); err != nil {
		t.Fatal(err)
	}
	if n := h.counter(t, "otelcol_exporter_axiom_failed_items", "signal", "logs"); n != 2 {
		t.Errorf("failed_items = %d, want 2", n)
	}
	if n := h.counter(t, "otelcol_exporter_axiom_sent_items", "signal", "logs"); n != 3 {
		t.Errorf("sent_items = %d, want 3", n)
	}
	if n := h.logs.FilterMessageSnippet("did not ingest").Len(); n != 1 {
		t.Errorf("got %d partial-failure log lines, want 1", n)
	}
}

func TestLargePushSplitIntoRequestsOfAtMost10k(t *testing.T) {
	srv := axiomtest.NewForTest(t, axiomtest.WithCountOnly())
	exp := startLogs(t, newHarness(), testConfig(srv.URL()))
	const total = 25_001
	if err := exp.ConsumeLogs(context.Background(), stringLogs(total)); err != nil {
		t.Fatal(err)
	}
	if n := srv.EventCount(logsDS); n != total {
		t.Errorf("got %d events, want %d", n, total)
	}
	reqs := ingestRequests(srv)
	if len(reqs) != 3 {
		t.Errorf("got %d requests, want 3", len(reqs))
	}
	for _, r := range reqs {
		if r.Events > maxEventsPerRequest {
			t.Errorf("a request carried %d events", r.Events)
		}
	}
}

// A retryable failure in the middle of a split push must not resend what
// Axiom already accepted, and a rate limit there still waits for its reset.
func TestSplitPushRetriesOnlyTheRest(t *testing.T) {
	reset := time.Now().Add(2 * time.Second).Truncate(time.Second)
	for name, fault := range map[string]axiomtest.Fault{
		"503": axiomtest.Status(503),
		"429": axiomtest.RateLimited(reset),
	} {
		t.Run(name, func(t *testing.T) {
			srv := axiomtest.NewForTest(t, axiomtest.WithCountOnly())
			srv.Fail(logsDS, axiomtest.Fault{}, fault)
			exp := startLogs(t, newHarness(), testConfig(srv.URL()))
			if err := exp.ConsumeLogs(context.Background(), stringLogs(25_000)); err != nil {
				t.Fatal(err)
			}
			if n := srv.EventCount(logsDS); n != 25_000 {
				t.Errorf("got %d events, want exactly 25000", n)
			}
			reqs := ingestRequests(srv)
			if len(reqs) != 4 {
				t.Fatalf("got %d requests, want 4 (ok, failed, retry of the rest split in two)", len(reqs))
			}
			if reqs[1].Status == 429 && reqs[2].Received.Before(reset) {
				t.Errorf("retry at %v came before the reset", reqs[2].Received)
			}
		})
	}
}

func TestEdgeRouting(t *testing.T) {
	srv := axiomtest.NewForTest(t)
	cfg := testConfig("")
	cfg.Edge = srv.URL()
	h := newHarness()
	logs := startLogs(t, h, cfg)
	traces := startTraces(t, h, cfg)
	if err := logs.ConsumeLogs(context.Background(), stringLogs(2)); err != nil {
		t.Fatal(err)
	}
	if err := traces.ConsumeTraces(context.Background(), richTraces()); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, r := range srv.Requests() {
		paths = append(paths, r.Path)
	}
	want := []string{"/v1/ingest/" + logsDS, "/v1/traces"}
	if strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Errorf("paths = %v, want %v", paths, want)
	}
	if srv.EventCount(logsDS) != 2 {
		t.Errorf("events not stored")
	}
}

func TestOrgIDAndExtraHeaders(t *testing.T) {
	srv := axiomtest.NewForTest(t)
	cfg := testConfig(srv.URL())
	cfg.OrgID = "my-org"
	cfg.Headers.Set("X-Team", "payments")
	h := newHarness()
	logs := startLogs(t, h, cfg)
	traces := startTraces(t, h, cfg)
	if err := logs.ConsumeLogs(context.Background(), stringLogs(1)); err != nil {
		t.Fatal(err)
	}
	if err := traces.ConsumeTraces(context.Background(), richTraces()); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("got %d requests", len(reqs))
	}
	for _, r := range reqs {
		if got := r.Header.Get("X-Axiom-Org-Id"); got != "my-org" {
			t.Errorf("%s: X-Axiom-Org-Id = %q", r.Path, got)
		}
		if got := r.Header.Get("X-Team"); got != "payments" {
			t.Errorf("%s: X-Team = %q", r.Path, got)
		}
	}
}

func TestShutdownFlushesQueue(t *testing.T) {
	srv := axiomtest.NewForTest(t)
	cfg := testConfig(srv.URL())
	cfg.QueueConfig = NewFactory().CreateDefaultConfig().(*Config).QueueConfig
	cfg.QueueConfig.Get().Batch.Get().FlushTimeout = time.Hour // only Shutdown can flush
	exp := startLogs(t, newHarness(), cfg)
	for range 3 {
		if err := exp.ConsumeLogs(context.Background(), stringLogs(10)); err != nil {
			t.Fatal(err)
		}
	}
	if err := exp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := srv.EventCount(logsDS); n != 30 {
		t.Errorf("got %d events after shutdown, want 30", n)
	}
}

// exporterhelper stops retrying when Shutdown begins; the exporter must
// still get queued data through a few failures before shutdown_timeout.
func TestShutdownDeliversThroughServerErrors(t *testing.T) {
	srv := axiomtest.NewForTest(t)
	srv.Fail(logsDS, axiomtest.Status(503), axiomtest.Status(503))
	srv.Fail(tracesDS, axiomtest.Status(502))
	cfg := testConfig(srv.URL())
	cfg.QueueConfig = NewFactory().CreateDefaultConfig().(*Config).QueueConfig
	cfg.QueueConfig.Get().Batch.Get().FlushTimeout = time.Hour // only Shutdown can flush
	cfg.ShutdownTimeout = time.Minute                          // generous: only bounds a failing test
	h := newHarness()
	logs := startLogs(t, h, cfg)
	traces := startTraces(t, h, cfg)
	if err := logs.ConsumeLogs(context.Background(), stringLogs(20)); err != nil {
		t.Fatal(err)
	}
	if err := traces.ConsumeTraces(context.Background(), richTraces()); err != nil {
		t.Fatal(err)
	}
	if srv.EventCount(logsDS) != 0 {
		t.Fatal("events were sent before shutdown; the test cannot show the flush")
	}
	if err := logs.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := traces.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := srv.EventCount(logsDS); n != 20 {
		t.Errorf("got %d events after shutdown, want 20", n)
	}
	if n := srv.SpanCount(tracesDS); n != 2 {
		t.Errorf("got %d spans after shutdown, want 2", n)
	}
}

// A request waiting for its next retry when Shutdown begins must be woken
// and delivered, not abandoned.
func TestShutdownWakesRequestWaitingToRetry(t *testing.T) {
	srv := axiomtest.NewForTest(t)
	srv.Fail(logsDS, axiomtest.Status(503))
	cfg := testConfig(srv.URL())
	cfg.QueueConfig = NewFactory().CreateDefaultConfig().(*Config).QueueConfig
	cfg.QueueConfig.Get().Batch.Get().FlushTimeout = time.Millisecond
	cfg.RetryConfig.InitialInterval = time.Hour
	cfg.RetryConfig.MaxElapsedTime = 0
	cfg.ShutdownTimeout = time.Minute // generous: only bounds a failing test
	exp := startLogs(t, newHarness(), cfg)
	if err := exp.ConsumeLogs(context.Background(), stringLogs(8)); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() bool { return len(ingestRequests(srv)) == 1 }) // the 503; now waiting an hour
	if err := exp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := srv.EventCount(logsDS); n != 8 {
		t.Errorf("got %d events after shutdown, want 8", n)
	}
}

// waitUntil polls cond; it only bounds a failing test, it asserts no timing.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(waitWindow); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
	}
}

func TestRetriesEndAtMaxElapsedTime(t *testing.T) {
	srv := axiomtest.NewForTest(t)
	for range 50 {
		srv.Fail(logsDS, axiomtest.Status(503))
	}
	cfg := testConfig(srv.URL())
	cfg.RetryConfig.MaxElapsedTime = 100 * time.Millisecond
	exp := startLogs(t, newHarness(), cfg)
	err := exp.ConsumeLogs(context.Background(), stringLogs(3))
	if !consumererror.IsPermanent(err) || !strings.Contains(err.Error(), "no more retries") {
		t.Fatalf("err = %v, want a permanent 'no more retries' error", err)
	}
	if srv.EventCount(logsDS) != 0 {
		t.Error("events arrived through a failing Axiom")
	}
}

func TestShutdownEndsWhenAxiomHangs(t *testing.T) {
	srv := axiomtest.NewForTest(t)
	srv.Fail(logsDS, axiomtest.Slow(time.Hour))
	cfg := testConfig(srv.URL())
	cfg.QueueConfig = configoptional.Some(exporterhelper.NewDefaultQueueConfig())
	cfg.ShutdownTimeout = 200 * time.Millisecond
	h := newHarness()
	exp := startLogs(t, h, cfg)
	if err := exp.ConsumeLogs(context.Background(), stringLogs(10)); err != nil {
		t.Fatal(err)
	}
	// Shutdown must return although the request never gets an answer; a
	// hang here fails the test by the test binary's timeout.
	_ = exp.Shutdown(context.Background())
	if n := h.counter(t, "otelcol_exporter_axiom_dropped_items", "signal", "logs", "reason", "shutdown"); n != 10 {
		t.Errorf("dropped_items{reason=shutdown} = %d, want 10", n)
	}
	if h.logs.FilterMessageSnippet("shutdown_timeout reached").Len() != 1 {
		t.Error("no log line about the undelivered data")
	}
}

// A raw body that breaks the rawevent contract makes Axiom reject its whole
// request; the exporter must still deliver the request's other events.
func TestBrokenRawEventCostsNothingElse(t *testing.T) {
	srv := axiomtest.NewForTest(t)
	h := newHarness()
	exp := startLogs(t, h, testConfig(srv.URL()))
	ld := rawLogs(5, false)
	lrs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	lrs.At(2).Body().SetStr(`{"msg": oops}`)
	lrs.At(2).SetTimestamp(pcommon.NewTimestampFromTime(msTime))
	if err := exp.ConsumeLogs(context.Background(), ld); err != nil {
		t.Fatal(err)
	}
	events := srv.Events(logsDS)
	if len(events) != 5 {
		t.Fatalf("got %d events, want 5", len(events))
	}
	if got := events[2]["message"]; got != `{"msg": oops}` {
		t.Errorf("broken event message = %v", got)
	}
	if events[3]["msg"] != "request completed" {
		t.Errorf("events after the broken one changed: %v", events[3])
	}
	if h.logs.FilterMessageSnippet("not valid JSON").Len() != 1 {
		t.Error("the broken events were not reported")
	}
	if n := h.counter(t, "otelcol_exporter_axiom_dropped_items", "signal", "logs"); n != 0 {
		t.Errorf("dropped_items = %d, want 0", n)
	}
}

// A one-line scope whose body holds a newline after all cuts its event in
// two NDJSON lines, which Axiom may reject (400, scripted here; the fake
// reads NDJSON as a stream of values); the re-encoding looks for newlines in
// every body, so the request goes again with every event whole.
func TestNewlineInOneLineScopeIsMended(t *testing.T) {
	srv := axiomtest.NewForTest(t)
	srv.Fail(logsDS, axiomtest.Status(400))
	h := newHarness()
	exp := startLogs(t, h, testConfig(srv.URL()))
	ld := rawLogs(3, false)
	sl := ld.ResourceLogs().At(0).ScopeLogs().At(0)
	rawevent.MarkOneLineScope(sl)
	sl.LogRecords().At(1).Body().SetStr("{\"msg\":\n\"two lines\"}")
	if err := exp.ConsumeLogs(context.Background(), ld); err != nil {
		t.Fatal(err)
	}
	events := srv.Events(logsDS)
	if len(events) != 3 {
		t.Fatalf("got %d events, want 3", len(events))
	}
	if events[1]["msg"] != "two lines" {
		t.Errorf("mended event = %v", events[1])
	}
	if h.logs.FilterMessageSnippet("held a newline").Len() != 1 {
		t.Error("the mended events were not reported")
	}
	if reqs := ingestRequests(srv); len(reqs) != 2 {
		t.Errorf("got %d requests, want 2 (the 400 and the re-encoding)", len(reqs))
	}
	if n := h.counter(t, "otelcol_exporter_axiom_dropped_items", "signal", "logs"); n != 0 {
		t.Errorf("dropped_items = %d, want 0", n)
	}
}

// The re-encoding after a broken raw body's 400 must not change the
// resource of the events that follow it in the push: here the request cut
// falls where a second resource begins, and its later events must still
// carry that resource.
func TestBrokenRawEventKeepsTheNextResource(t *testing.T) {
	srv := axiomtest.NewForTest(t)
	exp := startLogs(t, newHarness(), testConfig(srv.URL()))
	ld := plog.NewLogs()
	addResource := func(service string, bodies ...string) {
		rl := ld.ResourceLogs().AppendEmpty()
		rl.Resource().Attributes().PutStr("service.name", service)
		sl := rl.ScopeLogs().AppendEmpty()
		rawevent.MarkRawScope(sl)
		for _, b := range bodies {
			sl.LogRecords().AppendEmpty().Body().SetStr(b)
		}
	}
	// The first resource's events come just under a request's bytes, so
	// the second resource's first event begins the next request.
	maxBytes := int(testConfig(srv.URL()).batchBytes())
	filler := `{"msg":"` + strings.Repeat("x", maxBytes-200) + `"}`
	addResource("first", `{"msg": oops}`, filler)
	addResource("second", pinoLineN(1), pinoLineN(2), pinoLineN(3))
	if err := exp.ConsumeLogs(context.Background(), ld); err != nil {
		t.Fatal(err)
	}
	events := srv.Events(logsDS)
	if len(events) != 5 {
		t.Fatalf("got %d events, want 5", len(events))
	}
	if reqs := ingestRequests(srv); len(reqs) != 3 {
		t.Fatalf("got %d requests, want 3 (400, its re-encoding, the second resource)", len(reqs))
	}
	for i, e := range events[2:] {
		res, _ := e["resource"].(map[string]any)
		if res["service.name"] != "second" {
			t.Errorf("event %d of the second resource carries resource %v", i, e["resource"])
		}
	}
}

// A walk from any record's position visits exactly the records from there
// on, in order, each with its scope's raw marks and its resource's
// encoding, across resources and scopes that are empty or hold none.
func TestRecordWalkFromEachPosition(t *testing.T) {
	ld := plog.NewLogs()
	var want []string // "body raw oneLine resource", in order
	var positions []logPosition
	for i, scopes := range [][]int{{2, 0, 1}, {}, {0}, {3}, {1, 2}} {
		rl := ld.ResourceLogs().AppendEmpty()
		if i%2 == 0 {
			rl.Resource().Attributes().PutStr("r", strconv.Itoa(i))
		}
		resource := string(appendResource(nil, rl))
		for j, records := range scopes {
			sl := rl.ScopeLogs().AppendEmpty()
			switch j % 3 {
			case 1:
				rawevent.MarkRawScope(sl)
			case 2:
				rawevent.MarkOneLineScope(sl)
			}
			for k := range records {
				body := fmt.Sprintf("%d.%d.%d", i, j, k)
				sl.LogRecords().AppendEmpty().Body().SetStr(body)
				want = append(want, fmt.Sprintf("%s %t %t %s", body, j%3 != 0, j%3 == 2, resource))
				positions = append(positions, logPosition{i, j, k})
			}
		}
	}
	for p, from := range append([]logPosition{{}}, positions...) {
		skip := max(p-1, 0)
		var got []string
		walk := walkRecords(ld, from, nil, nil, nil)
		for walk.next() {
			if walk.at() != positions[skip+len(got)] {
				t.Fatalf("from %v: record %d at %v, want %v", from, len(got), walk.at(), positions[skip+len(got)])
			}
			got = append(got, fmt.Sprintf("%s %t %t %s", walk.record().Body().Str(), walk.raw, walk.oneLine, walk.resource))
		}
		if !slices.Equal(got, want[skip:]) {
			t.Errorf("from %v: walked\n%q\nwant\n%q", from, got, want[skip:])
		}
	}
}

// pushLogs writes the records of raw scopes without appendEvent's calls
// (stdin's, Forward's and files'): what it writes for every kind of body,
// with attributes or not, shared by the scope or not, with a resource or
// not, is appendEvent's.
func TestPushWritesAppendEventsLines(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig("")
	cfg.Token, cfg.LocalDir = "", dir
	exp := startLogs(t, newHarness(), cfg)
	ld := plog.NewLogs()
	ts := pcommon.NewTimestampFromTime(time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC))
	for _, resource := range []bool{false, true} {
		rl := ld.ResourceLogs().AppendEmpty()
		if resource {
			rl.Resource().Attributes().PutStr("service.name", "api")
		}
		shareStream := func(mark func(plog.ScopeLogs)) func(plog.ScopeLogs) {
			return func(sl plog.ScopeLogs) {
				mark(sl)
				sl.Scope().Attributes().PutStr("log.iostream", "stderr")
				sl.Scope().Attributes().PutInt("n", 1)
			}
		}
		for _, mark := range []func(plog.ScopeLogs){rawevent.MarkOneLineScope, rawevent.MarkRawScope, func(plog.ScopeLogs) {},
			shareStream(rawevent.MarkOneLineScope), shareStream(rawevent.MarkRawScope)} {
			sl := rl.ScopeLogs().AppendEmpty()
			mark(sl)
			for _, body := range []string{`{"a":1}`, `{}`, ` {"a":1} `, `{"a":1}` + "\n", `[1]`, `not json`, `{`, `}`, ``, `{"a":"x` + "\n" + `"}`} {
				for _, attrs := range []bool{false, true} {
					lr := sl.LogRecords().AppendEmpty()
					lr.SetTimestamp(ts)
					lr.Body().SetStr(body)
					if attrs {
						lr.Attributes().PutStr("log.iostream", "stdout")
					}
				}
			}
			lr := sl.LogRecords().AppendEmpty()
			lr.SetTimestamp(ts)
			lr.Body().SetEmptyMap().PutStr("msg", "{a map}")
			lr = sl.LogRecords().AppendEmpty()
			lr.SetTimestamp(ts)
			lr.Body().SetInt(7)
		}
	}
	if err := exp.ConsumeLogs(context.Background(), ld); err != nil {
		t.Fatal(err)
	}
	if err := exp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, logsDS+".ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	if want := encodeAll(t, ld); string(got) != want {
		t.Errorf("pushLogs wrote:\n%s\nappendEvent writes:\n%s", got, want)
	}
}
