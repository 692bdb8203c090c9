package axiomexporter

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
	"github.com/sidecarhq/sidecar/internal/losses"
)

// sizedLogs makes one record per size, a string body of that many bytes
// that starts with its index.
func sizedLogs(sizes ...int) plog.Logs {
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for i, size := range sizes {
		prefix := strconv.Itoa(i) + ":"
		lrs.AppendEmpty().Body().SetStr(prefix + strings.Repeat("x", max(0, size-len(prefix))))
	}
	return ld
}

// A 413 splits the request in halves, down to one event: everything that
// fits Axiom's limit arrives, the one event too large even alone is dropped
// and counted.
func TestLogs413SplitsDownToOneEvent(t *testing.T) {
	srv := axiomtest.NewForTest(t, axiomtest.WithMaxBodyBytes(4000))
	h := newHarness()
	exp := startLogs(t, h, testConfig(srv.URL()))
	sizes := make([]int, 60)
	for i := range sizes {
		sizes[i] = 300
	}
	sizes[37] = 5000 // over the limit by itself
	if err := exp.ConsumeLogs(context.Background(), sizedLogs(sizes...)); err == nil {
		t.Error("the push reported no loss although one event was dropped")
	}
	var data, reports []map[string]any
	for _, ev := range srv.Events(logsDS) {
		if ev["sidecar.event"] == "data_loss" {
			reports = append(reports, ev)
		} else {
			data = append(data, ev)
		}
	}
	if len(data) != 59 {
		t.Errorf("%d events arrived, want the 59 that fit", len(data))
	}
	for _, ev := range data {
		if strings.HasPrefix(ev["message"].(string), "37:") {
			t.Error("the oversized event arrived")
		}
	}
	// Once Axiom accepted data again, one event in the logs dataset says
	// what was dropped, why and when.
	if len(reports) != 1 || reports[0]["reason"] != "too_large" || fmt.Sprint(reports[0]["dropped_items"]) != "1" || reports[0]["signal"] != "logs" {
		t.Errorf("loss reports %v, want one for 1 too_large log record", reports)
	}
	if got := h.counter(t, "otelcol_exporter_axiom_dropped_items", "reason", "too_large"); got != 1 {
		t.Errorf("dropped_items{reason=too_large} = %d, want 1", got)
	}
}

// Requests are cut by bytes, not only by Axiom's 10,000 events: 100 KiB
// events go at most as many to a request as the batch's bytes hold.
func TestLogsRequestsAreBoundedInBytes(t *testing.T) {
	srv := axiomtest.NewForTest(t)
	cfg := testConfig(srv.URL())
	exp := startLogs(t, newHarness(), cfg)
	const n, size = 80, 100 << 10
	sizes := make([]int, n)
	for i := range sizes {
		sizes[i] = size
	}
	if err := exp.ConsumeLogs(context.Background(), sizedLogs(sizes...)); err != nil {
		t.Fatal(err)
	}
	if got := srv.EventCount(logsDS); got != n {
		t.Fatalf("%d events arrived, want %d", got, n)
	}
	limit := int(cfg.batchBytes())
	reqs := srv.Requests()
	for _, r := range reqs {
		if r.Events*size > limit {
			t.Errorf("a request of %d events of %d bytes is over the %d-byte cap", r.Events, size, limit)
		}
	}
	if len(reqs) < n*size/limit {
		t.Errorf("%d requests for %d bytes under a %d-byte cap", len(reqs), n*size, limit)
	}
}

// The same for spans: halves down to one span.
func TestTraces413SplitsDownToOneSpan(t *testing.T) {
	srv := axiomtest.NewForTest(t, axiomtest.WithMaxBodyBytes(3000))
	h := newHarness()
	exp := startTraces(t, h, testConfig(srv.URL()))
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "checkout")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	for i := range 40 {
		sp := spans.AppendEmpty()
		sp.SetName("op-" + strconv.Itoa(i))
		sp.SetTraceID([16]byte{1, byte(i)})
		sp.SetSpanID([8]byte{2, byte(i)})
		pad := 100
		if i == 11 {
			pad = 4000
		}
		sp.Attributes().PutStr("pad", strings.Repeat("y", pad))
	}
	if err := exp.ConsumeTraces(context.Background(), td); err == nil {
		t.Error("the push reported no loss although one span was dropped")
	}
	if got := srv.SpanCount(tracesDS); got != 39 {
		t.Errorf("%d spans arrived, want the 39 that fit", got)
	}
	if got := h.counter(t, "otelcol_exporter_axiom_dropped_items", "signal", "traces", "reason", "too_large"); got != 1 {
		t.Errorf("dropped_items{signal=traces,reason=too_large} = %d, want 1", got)
	}
}

func TestSplitSpansKeepsResourceAndScope(t *testing.T) {
	td := richTraces()
	n := td.SpanCount()
	first, rest := splitSpans(td, 1)
	if first.SpanCount() != 1 || rest.SpanCount() != n-1 {
		t.Fatalf("split %d spans into %d and %d", n, first.SpanCount(), rest.SpanCount())
	}
	for _, part := range []ptrace.Traces{first, rest} {
		rs := part.ResourceSpans().At(0)
		if v, _ := rs.Resource().Attributes().Get("service.name"); v.Str() != "checkout" {
			t.Errorf("resource lost: %v", rs.Resource().Attributes().AsRaw())
		}
	}
}

// Drops recorded after the last accepted request (a source's when_full
// buffer dropping as the pipeline stops) are reported at shutdown while
// Axiom accepts data; after a refused request shutdown sends nothing.
func TestLossesAfterTheLastRequestAreReportedAtShutdown(t *testing.T) {
	for _, up := range []bool{true, false} {
		srv := axiomtest.NewForTest(t)
		h := newHarness()
		exp := startLogs(t, h, testConfig(srv.URL()))
		if err := exp.ConsumeLogs(context.Background(), stringLogs(3)); err != nil {
			t.Fatal(err)
		}
		if !up {
			srv.Outage("", axiomtest.Status(400)) // permanent: no retry
			_ = exp.ConsumeLogs(context.Background(), stringLogs(3))
		}
		src, err := losses.NewRecorder(h.set.TelemetrySettings, "test", component.KindReceiver, component.MustNewID("stdout"), losses.Default)
		if err != nil {
			t.Fatal(err)
		}
		src.Record("logs", losses.Shutdown, 5, 50)
		before := len(srv.Requests())
		if err := exp.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !up && len(srv.Requests()) != before {
			t.Errorf("shutdown sent a report to an Axiom that refused the last request")
		}
		var reports []map[string]any
		for _, ev := range srv.Events(logsDS) {
			if ev["sidecar.event"] == losses.EventKind {
				reports = append(reports, ev)
			}
		}
		if up && (len(reports) != 1 || fmt.Sprint(reports[0]["dropped_items"]) != "5" || reports[0]["reason"] != "shutdown" || reports[0]["component"] != "receiver/stdout") {
			t.Errorf("reports %v, want one for 5 records dropped at shutdown", reports)
		}
	}
}
