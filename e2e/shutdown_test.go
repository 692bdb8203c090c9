package e2e

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// TestSIGTERMFlushesQueuedData holds data in the exporter's batcher (a long
// flush interval, Axiom answering 503 at first) and stops the sidecar: what
// the OTLP receiver accepted must all reach Axiom before the process exits.
func TestSIGTERMFlushesQueuedData(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	fake.Fail("", axiomtest.Status(503))
	grpcAddr, httpAddr := FreeAddr(t), FreeAddr(t)
	s := StartSidecar(t, otlpConfig(grpcAddr, httpAddr, fake.URL(), yamlMap{
		"sending_queue":    yamlMap{"batch": yamlMap{"flush_timeout": "10m"}},
		"retry_on_failure": yamlMap{"initial_interval": "100ms"},
	}).yaml())
	s.WaitListening(t, httpAddr)
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(httpAddr), otlptracehttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	// emitSpans returns once the sidecar answered every export: the spans
	// are now in its queue, and with a 10 minute flush interval they stay there.
	sent := emitSpans(t, exp, "queued", 100)
	if n := fake.SpanCount("app-traces"); n != 0 {
		t.Fatalf("%d spans were sent before the flush interval; the test cannot show the flush on stop", n)
	}
	if code := s.Stop(t); code != 0 {
		t.Fatalf("exit code %d\n%s", code, s.Logs())
	}
	got := spansByID(t, fake.Traces("app-traces"))
	if len(got) != len(sent) {
		t.Fatalf("after SIGTERM %d spans reached Axiom, %d were queued", len(got), len(sent))
	}
}

// TestSIGTERMWithAxiomDownEndsWithinTheGrace stops a sidecar whose queued
// data Axiom keeps refusing: it must give up after shutdown_timeout, say what
// it dropped, and exit instead of hanging until ECS kills it.
func TestSIGTERMWithAxiomDownEndsWithinTheGrace(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	down := make([]axiomtest.Fault, 1000)
	for i := range down {
		down[i] = axiomtest.Status(503)
	}
	fake.Fail("", down...)
	grpcAddr, httpAddr := FreeAddr(t), FreeAddr(t)
	s := StartSidecar(t, otlpConfig(grpcAddr, httpAddr, fake.URL(), yamlMap{
		"shutdown_timeout": "2s",
		"sending_queue":    yamlMap{"batch": yamlMap{"flush_timeout": "10m"}},
		"retry_on_failure": yamlMap{"initial_interval": "100ms", "max_interval": "200ms"},
	}).yaml())
	s.WaitListening(t, httpAddr)
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpoint(httpAddr), otlptracehttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	emitSpans(t, exp, "doomed", 20)
	s.Stop(t) // fails the test if the process is still running after 60 s
	if logs := s.Logs(); !strings.Contains(logs, "shutdown_timeout reached") {
		t.Fatalf("the sidecar did not report what it dropped:\n%s", logs)
	}
	if n := fake.SpanCount("app-traces"); n != 0 {
		t.Fatalf("%d spans arrived although Axiom refused them all", n)
	}
}

// TestSIGTERMDuringStartupExitsCleanly stops the sidecar while its components
// are still starting, as ECS may when a task is stopped right after it
// launched: the collector alone would only catch SIGTERM once everything has
// started, and be killed by it before that.
func TestSIGTERMDuringStartupExitsCleanly(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	for range 5 {
		s := StartSidecar(t, otlpConfig(FreeAddr(t), FreeAddr(t), fake.URL(), nil).yaml())
		s.WaitOutput(t, "Starting sidecar...")
		if code := s.Stop(t); code != 0 {
			t.Fatalf("SIGTERM during startup: exit code %d (-1: killed by the signal)\n%s", code, s.Logs())
		}
	}
}
