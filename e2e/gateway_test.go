package e2e

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// gatewayRules samples a quarter of the Redis GET spans and summarises
// every second, on the sidecars.
const gatewayRules = `
processors:
  sampling:
    always_keep: {errors: true}
    rules:
      - name: redis-get
        match: {kind: [client], attributes: {db.system: redis}, operation: [GET]}
        probability: 0.25
    summaries: {interval: 1s}
`

// TestTwoSidecarsShipThroughOneGateway: two sidecars with
// deploy/gateway/to-gateway.yaml send to one gateway (`--config
// embedded:gateway`), which ships to Axiom. The sidecars read and sample;
// the gateway passes on: every log line arrives once, the spans the rule
// keeps arrive once with their weights, and the summary events arrive once,
// their totals exactly what was sent.
func TestTwoSidecarsShipThroughOneGateway(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	gwEnv := append(embeddedEnv(t, fake), "SIDECAR_STATE_DIR="+t.TempDir())
	gw := StartSidecar(t, "", WithArgs("--config", "embedded:gateway"), WithEnv(gwEnv...))
	gwHTTP := envValue(gwEnv, "SIDECAR_OTLP_HTTP_ENDPOINT")
	gw.WaitListening(t, gwHTTP)

	rules := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(rules, []byte(gatewayRules), 0o600); err != nil {
		t.Fatal(err)
	}
	toGateway, err := filepath.Abs("../deploy/gateway/to-gateway.yaml")
	if err != nil {
		t.Fatal(err)
	}
	startSidecar := func() (*Sidecar, []string) {
		// (AXIOM_URL and the token stay unused: the pipelines export to
		// the gateway.)
		env := append(embeddedEnv(t, fake), "SIDECAR_GATEWAY_ENDPOINT=http://"+gwHTTP,
			"SIDECAR_STATE_DIR="+t.TempDir())
		s := StartSidecar(t, "", WithStdin(), WithEnv(env...),
			WithArgs("--config", "embedded:stdin", "--config", "file:"+toGateway, "--config", "file:"+rules))
		return s, env
	}
	a, aEnv := startSidecar()
	b, _ := startSidecar()
	aHTTP := envValue(aEnv, "SIDECAR_OTLP_HTTP_ENDPOINT")
	a.WaitListening(t, aHTTP)

	// Log lines on both sidecars' stdin: a's 0..199, b's 1000..1199.
	for i := range 200 {
		if _, err := fmt.Fprintln(a.Stdin, pinoLine(i)); err != nil {
			t.Fatal(err)
		}
		if _, err := fmt.Fprintln(b.Stdin, pinoLine(1000+i)); err != nil {
			t.Fatal(err)
		}
	}
	// Spans on a: requests with Redis GETs, some failing.
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpoint(aHTTP), otlptracehttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(newResource()))
	tracer := tp.Tracer("e2e/gateway")
	want := map[pcommon.SpanID]bool{} // span -> sampled by the rule (weight 4)
	gets, keptGets := 0, 0
	for i := range 50 {
		ctx, server := tracer.Start(context.Background(), "GET /orders", trace.WithSpanKind(trace.SpanKindServer))
		want[pcommon.SpanID(server.SpanContext().SpanID())] = false
		for j := range 8 {
			_, get := tracer.Start(ctx, fmt.Sprintf("GET order:%d:%d", i, j), trace.WithSpanKind(trace.SpanKindClient),
				trace.WithAttributes(attribute.String("db.system", "redis")))
			failed := j == 0 && i%10 == 0
			if failed {
				get.SetStatus(codes.Error, "READONLY")
			}
			gets++
			// The rule's consistent decision: the trace's randomness against
			// the 1/4 threshold (c), errors always kept.
			tid := get.SpanContext().TraceID()
			if binary.BigEndian.Uint64(tid[8:])&(1<<56-1) >= 0xc0000000000000 || failed {
				want[pcommon.SpanID(get.SpanContext().SpanID())] = !failed
				keptGets++
			}
			get.End()
		}
		server.End()
	}
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if keptGets == 0 || keptGets == gets {
		t.Fatalf("test traffic keeps %d of %d Redis spans: no sampling to observe", keptGets, gets)
	}
	// At end of input each sidecar flushes to the gateway and exits 0.
	for _, s := range []*Sidecar{a, b} {
		if err := s.Stdin.Close(); err != nil {
			t.Fatal(err)
		}
		if code, err := s.Wait(60 * time.Second); err != nil || code != 0 {
			t.Fatalf("sidecar at EOF: exit code %d, %v\n%s", code, err, s.Logs())
		}
	}
	if err := fake.WaitSpans("traces", len(want), 60*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := fake.WaitEvents("logs", 400, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	if code := gw.Stop(t); code != 0 {
		t.Fatalf("gateway exit code %d", code)
	}

	lines := map[string]int{}
	for _, ev := range fake.Events("logs") {
		if _, ok := ev["sampling"]; !ok {
			lines[fmt.Sprint(ev["seq"])]++
		}
	}
	totals := summaryTotals(fake)
	seen, kept, dropped := totals[0], totals[1], totals[2]
	for _, from := range []int{0, 1000} {
		for i := from; i < from+200; i++ {
			if lines[fmt.Sprint(i)] != 1 {
				t.Errorf("line %d arrived %d times", i, lines[fmt.Sprint(i)])
			}
		}
	}
	if len(lines) != 400 {
		t.Errorf("%d distinct log events, want 400", len(lines))
	}
	if seen != int64(gets) || kept != int64(keptGets) || dropped != int64(gets-keptGets) {
		t.Errorf("summaries: seen %d kept %d dropped %d; sent %d, the rule keeps %d", seen, kept, dropped, gets, keptGets)
	}
	got := spansByID(t, fake.Traces("traces"))
	if n := fake.SpanCount("traces"); n != len(want) || len(got) != len(want) {
		t.Errorf("%d spans (%d distinct) arrived, the rule keeps %d", n, len(got), len(want))
	}
	for id, sampled := range want {
		g, ok := got[id]
		if !ok {
			t.Errorf("span %s missing", id)
			continue
		}
		if w, ok := g.Attributes().Get("sampling.adjusted_count"); sampled && (!ok || w.Double() != 4) {
			t.Errorf("sampled span %q: weight %v, want 4", g.Name(), w.AsRaw())
		}
	}
}

// summaryTotals adds up the seen, kept and dropped counts of the sampling
// summary events in the logs dataset.
func summaryTotals(fake *axiomtest.Server) [3]int64 {
	var out [3]int64
	for _, ev := range fake.Events("logs") {
		s, ok := ev["sampling"].(map[string]any)
		if !ok || s["summary"] != true {
			continue
		}
		for i, k := range []string{"seen", "kept", "dropped"} {
			v, _ := s[k].(json.Number).Int64()
			out[i] += v
		}
	}
	return out
}
