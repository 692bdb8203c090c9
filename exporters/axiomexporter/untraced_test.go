package axiomexporter

import (
	"context"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// The exporter's HTTP requests to Axiom are not traced (the exporter
// helper's own span per push stays), even when the collector hands it a
// tracer provider that records: the otelhttp wrapper costs CPU on every
// request and nothing reads its spans.
func TestRequestsToAxiomAreNotTraced(t *testing.T) {
	srv := axiomtest.NewForTest(t)
	spans := tracetest.NewSpanRecorder()
	h := newHarness()
	h.set.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	exp := startLogs(t, h, testConfig(srv.URL()))
	if err := exp.ConsumeLogs(context.Background(), stringLogs(3)); err != nil {
		t.Fatal(err)
	}
	if got := len(srv.Events(logsDS)); got != 3 {
		t.Fatalf("%d events arrived, want 3", got)
	}
	for _, span := range spans.Ended() {
		if scope := span.InstrumentationScope().Name; strings.Contains(scope, "otelhttp") {
			t.Fatalf("the request to Axiom was traced: span %q of %s", span.Name(), scope)
		}
	}
}
