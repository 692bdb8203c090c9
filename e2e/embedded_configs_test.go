package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluent/fluent-logger-golang/fluent"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// embeddedEnv points a sidecar running an embedded config at fake and moves
// its listeners to free ports, so tests can run side by side.
func embeddedEnv(t *testing.T, fake *axiomtest.Server) []string {
	_, metricsPort, _ := strings.Cut(FreeAddr(t), ":")
	return []string{
		"AXIOM_URL=" + fake.URL(), "AXIOM_TOKEN=" + testToken,
		"SIDECAR_OTLP_GRPC_ENDPOINT=" + FreeAddr(t), "SIDECAR_OTLP_HTTP_ENDPOINT=" + FreeAddr(t),
		"SIDECAR_HEALTH_ENDPOINT=" + FreeAddr(t), "SIDECAR_METRICS_PORT=" + metricsPort,
	}
}

func pinoLine(i int) string {
	return fmt.Sprintf(`{"level":30,"time":%d,"pid":1,"hostname":"h","seq":%d,"msg":"line %d"}`, 1767225600000+i, i, i)
}

// TestPipingIntoTheSidecarShipsEveryLineAndExitsAtEOF is `app | sidecar` with
// no flags: stdin is a pipe, so the sidecar reads it, ships every line and
// exits 0 at EOF.
func TestPipingIntoTheSidecarShipsEveryLineAndExitsAtEOF(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	s := StartSidecar(t, "", WithArgs(), WithStdin(), WithEnv(embeddedEnv(t, fake)...))
	const n = 500
	for i := range n {
		if _, err := fmt.Fprintln(s.Stdin, pinoLine(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Stdin.Close(); err != nil {
		t.Fatal(err)
	}
	code, err := s.Wait(60 * time.Second)
	if err != nil || code != 0 {
		t.Fatalf("at EOF: exit code %d, %v", code, err)
	}
	if got := fake.EventCount("logs"); got != n {
		t.Fatalf("%d events in dataset logs, piped %d lines", got, n)
	}
}

// TestEmbeddedECSConfigShipsFireLensRecords runs `--config embedded:ecs` as
// the FireLens log router: docker's fluentd driver (fluent-logger-golang)
// writes to the unix socket.
func TestEmbeddedECSConfigShipsFireLensRecords(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	sock := socketPath(t)
	s := StartSidecar(t, "", WithArgs("--config", "embedded:ecs"), WithEnv(append(embeddedEnv(t, fake),
		"SIDECAR_FORWARD_SOCKET="+sock, "SIDECAR_FORWARD_ENDPOINT="+FreeAddr(t))...))
	s.WaitListening(t, sock)
	logger := newFluentLogger(t, fluent.Config{FluentNetwork: "unix", FluentSocketPath: sock, SubSecondPrecision: true, RequestAck: true})
	const n = 50
	for i := range n {
		rec := map[string]string{"container_id": fwdContainerID, "container_name": "/ecs-app", "source": "stdout", "log": pinoLine(i)}
		if err := logger.Post("app-firelens-0b69d5c0", rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := logger.Close(); err != nil {
		t.Fatal(err)
	}
	if code := s.Stop(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	events := fake.Events("logs")
	if len(events) != n {
		t.Fatalf("%d events arrived, sent %d", len(events), n)
	}
	for _, ev := range events {
		if ev["msg"] == nil || ev["level"] != "info" {
			t.Errorf("event lost the app's fields: %v", ev)
		}
	}
}

// TestEmbeddedKubernetesConfigShipsOnlyTheAppContainersLog runs `--config
// embedded:kubernetes` on a fake node log directory: the app container's CRI
// log is shipped, the sidecar's own is not, and lines appended later follow.
func TestEmbeddedKubernetesConfigShipsOnlyTheAppContainersLog(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	logsDir := t.TempDir()
	podDir := filepath.Join(logsDir, "shop_checkout-7d9f_4f1c")
	writeCRI := func(container string, from, to int) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(podDir, container), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(filepath.Join(podDir, container, "0.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o640)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for i := from; i < to; i++ {
			fmt.Fprintf(f, "%s stdout F %s\n", time.Now().UTC().Format(time.RFC3339Nano), pinoLine(i))
		}
	}
	writeCRI("app", 0, 30)
	writeCRI("sidecar", 1000, 1010)
	s := StartSidecar(t, "", WithArgs("--config", "embedded:kubernetes"), WithEnv(append(embeddedEnv(t, fake),
		"SIDECAR_POD_LOGS_DIR="+logsDir, "POD_NAMESPACE=shop", "POD_NAME=checkout-7d9f", "POD_UID=4f1c",
		"SIDECAR_STATE_DIR="+t.TempDir())...))
	if err := fake.WaitEvents("logs", 30, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	writeCRI("app", 30, 40)
	if err := fake.WaitEvents("logs", 40, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	if code := s.Stop(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	seen := map[string]bool{}
	for _, ev := range fake.Events("logs") {
		seq := fmt.Sprint(ev["seq"])
		if seen[seq] {
			t.Errorf("line %s arrived twice", seq)
		}
		seen[seq] = true
		if strings.HasPrefix(seq, "10") && len(seq) == 4 {
			t.Errorf("the sidecar's own log line %s was shipped", seq)
		}
	}
	if len(seen) != 40 {
		t.Fatalf("%d distinct lines arrived, want 40", len(seen))
	}
}

// TestDefaultConfigWithoutTokenWritesLocalNDJSON runs the binary with no
// arguments and no Axiom environment: it must warn once and write what it
// receives as NDJSON under ./sidecar-data.
func TestDefaultConfigWithoutTokenWritesLocalNDJSON(t *testing.T) {
	grpcAddr, httpAddr, health, metrics := FreeAddr(t), FreeAddr(t), FreeAddr(t), FreeAddr(t)
	_, metricsPort, _ := strings.Cut(metrics, ":")
	s := StartSidecar(t, "", WithArgs(), WithEnv(
		"SIDECAR_OTLP_GRPC_ENDPOINT="+grpcAddr, "SIDECAR_OTLP_HTTP_ENDPOINT="+httpAddr,
		"SIDECAR_HEALTH_ENDPOINT="+health, "SIDECAR_METRICS_PORT="+metricsPort))
	s.WaitListening(t, httpAddr)
	s.WaitListening(t, health)
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(httpAddr), otlptracehttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	sent := emitSpans(t, exp, "local", 10)
	logExp, err := otlploghttp.New(ctx, otlploghttp.WithEndpoint(httpAddr), otlploghttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(logExp)))
	for i := range 5 {
		var r otellog.Record
		r.SetBody(attribute.MapValue(attribute.String("msg", "hello"), attribute.Int("n", i)))
		lp.Logger("e2e").Emit(ctx, r)
	}
	if err := lp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if code := s.Stop(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	logs := s.Logs()
	if n := strings.Count(logs, "AXIOM_TOKEN is not set"); n < 1 {
		t.Errorf("no warning about the missing token in the output:\n%s", logs)
	}

	events := readNDJSON(t, filepath.Join(s.Dir, "sidecar-data", "logs.ndjson"))
	if len(events) != 5 {
		t.Fatalf("%d events in logs.ndjson, want 5", len(events))
	}
	for _, ev := range events {
		if ev["msg"] != "hello" || ev["_time"] == nil {
			t.Errorf("local event %v lacks its fields or _time", ev)
		}
	}
	spans := 0
	for _, req := range readNDJSON(t, filepath.Join(s.Dir, "sidecar-data", "traces.otlp.ndjson")) {
		b, _ := json.Marshal(req)
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
		if err != nil {
			t.Fatalf("traces.otlp.ndjson line is not OTLP/JSON: %v", err)
		}
		spans += td.SpanCount()
	}
	if spans != len(sent) {
		t.Fatalf("%d spans in traces.otlp.ndjson, want %d", spans, len(sent))
	}
}

func readNDJSON(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: line %q is not a JSON object: %v", path, sc.Text(), err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
