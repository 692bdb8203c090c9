package e2e

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// Random bytes sent as JSON (and as protobuf) to the embedded default's
// OTLP/HTTP listener, which pre-samples: 400 with a message that does not
// echo them (issue 10 measured 500 "failed to marshal error message"), and
// the OpenTelemetry SDK's exporter is still served afterwards.
func TestGarbageOTLPBodiesGet400AndClientsAreStillServed(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	env := append(embeddedEnv(t, fake), "SIDECAR_STATE_DIR="+t.TempDir())
	httpAddr := envValue(env, "SIDECAR_OTLP_HTTP_ENDPOINT")
	s := StartSidecar(t, "", WithArgs(), WithEnv(env...))
	s.WaitListening(t, httpAddr)

	garbage := make([]byte, 4096)
	rng := rand.New(rand.NewPCG(10, 10))
	for i := range garbage {
		garbage[i] = byte(rng.UintN(256))
	}
	for _, ct := range []string{"application/json", "application/x-protobuf"} {
		resp, err := http.Post("http://"+httpAddr+"/v1/traces", ct, bytes.NewReader(garbage))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("garbage as %s: %d %q, want 400", ct, resp.StatusCode, body)
		}
		if bytes.Contains(body, garbage[:8]) {
			t.Errorf("garbage as %s: the answer echoes the body", ct)
		}
	}

	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpoint(httpAddr), otlptracehttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	sent := emitSpans(t, exp, "after-garbage", 5)
	if err := fake.WaitSpans("traces", len(sent), 60*time.Second); err != nil {
		t.Fatalf("the well-formed client after the garbage: %v", err)
	}
	s.Stop(t)
}
