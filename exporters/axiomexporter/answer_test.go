package axiomexporter

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
	"go.opentelemetry.io/collector/consumer/consumererror"
)

func TestRetryErrorWait(t *testing.T) {
	base := errors.New("limited")
	var limited *limitedError
	if err := retryError(base, time.Time{}); err != base {
		t.Errorf("unknown reset: got %v, want the plain error for backoff", err)
	}
	if err := retryError(base, time.Now().Add(72*time.Hour)); !errors.As(err, &limited) || limited.wait != maxThrottleWait {
		t.Errorf("far reset: wait not capped to %v: %v", maxThrottleWait, err)
	}
	if err := retryError(base, time.Now().Add(-time.Hour)); !errors.As(err, &limited) || limited.wait != 0 {
		t.Errorf("past reset: want no wait, got %v", err)
	}
	if !errors.Is(retryError(base, time.Now().Add(time.Second)), base) {
		t.Error("the throttle error must wrap the original")
	}
}

// Axiom's answers are read by status (issue 11, item 5): each case through
// the logs exporter against the fake, counting what was sent.
func TestLogsAnswersReadByStatus(t *testing.T) {
	type outcome struct {
		requests  int
		stored    int
		permanent bool
	}
	for _, tc := range []struct {
		name string
		// faults is called when the test starts; waitUntil is the earliest
		// the retry may arrive (zero: no bound).
		faults func(now time.Time) (f axiomtest.Fault, waitUntil time.Time)
		want   outcome
	}{
		{"a 200 that is not JSON is delivered once", func(time.Time) (axiomtest.Fault, time.Time) {
			return axiomtest.Accepted("text/plain; charset=utf-8", "OK\n"), time.Time{}
		}, outcome{1, 5, false}},
		{"a 429 carrying a month-away ingest reset waits for its rate reset", func(now time.Time) (axiomtest.Fault, time.Time) {
			rate := now.Add(2 * time.Second).Truncate(time.Second)
			return axiomtest.RateLimited(rate).WithIngestLimit(now.Add(30 * 24 * time.Hour)), rate
		}, outcome{2, 5, false}},
		{"a 430 waits for its ingest reset, not the rate reset", func(now time.Time) (axiomtest.Fault, time.Time) {
			ingest := now.Add(2 * time.Second).Truncate(time.Second)
			return axiomtest.IngestLimited(ingest).WithRateLimit(now.Add(-time.Second)), ingest
		}, outcome{2, 5, false}},
		{"a 429 with a non-JSON body keeps its reset", func(now time.Time) (axiomtest.Fault, time.Time) {
			rate := now.Add(2 * time.Second).Truncate(time.Second)
			return axiomtest.RateLimited(rate).WithBody("text/plain", "Too Many Requests"), rate
		}, outcome{2, 5, false}},
		{"a 400 with an empty JSON body is rejected without retries", func(time.Time) (axiomtest.Fault, time.Time) {
			return axiomtest.Status(400).WithBody("application/json", ""), time.Time{}
		}, outcome{1, 0, true}},
		{"a 503 with an empty JSON body is retried", func(time.Time) (axiomtest.Fault, time.Time) {
			return axiomtest.Status(503).WithBody("application/json", ""), time.Time{}
		}, outcome{2, 5, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := axiomtest.NewForTest(t)
			fault, waitUntil := tc.faults(time.Now())
			srv.Fail(logsDS, fault)
			cfg := testConfig(srv.URL())
			cfg.RetryConfig.MaxElapsedTime = 20 * time.Second // far less than a month: a wrong reset fails the push
			h := newHarness()
			exp := startLogs(t, h, cfg)
			err := exp.ConsumeLogs(context.Background(), stringLogs(5))
			if got := consumererror.IsPermanent(err); got != tc.want.permanent || !got && err != nil {
				t.Fatalf("err = %v, want permanent=%v", err, tc.want.permanent)
			}
			reqs := ingestRequests(srv)
			if len(reqs) != tc.want.requests || srv.EventCount(logsDS) != tc.want.stored {
				t.Fatalf("%d requests, %d events stored; want %d and %d", len(reqs), srv.EventCount(logsDS), tc.want.requests, tc.want.stored)
			}
			if !waitUntil.IsZero() && reqs[1].Received.Before(waitUntil) {
				t.Errorf("retry at %v, before the reset %v", reqs[1].Received, waitUntil)
			}
			if sent := h.counter(t, "otelcol_exporter_axiom_sent_items", "signal", "logs"); sent != int64(tc.want.stored) {
				t.Errorf("sent_items = %d, want %d", sent, tc.want.stored)
			}
		})
	}
}
