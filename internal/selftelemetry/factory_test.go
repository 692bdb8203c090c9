package selftelemetry

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/service/telemetry"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/sidecarhq/sidecar/internal/freeport"
)

var buildInfo = component.BuildInfo{Command: "sidecar", Version: "v1.2.3"}

// load reads a service::telemetry section over the defaults, as the
// collector does.
func load(t *testing.T, section map[string]any) (*Config, error) {
	t.Helper()
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	if err := confmap.NewFromStringMap(section).Unmarshal(cfg); err != nil {
		return nil, err
	}
	return cfg, cfg.Validate()
}

func mustLoad(t *testing.T, section map[string]any) *Config {
	t.Helper()
	cfg, err := load(t, section)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func resource(t *testing.T, cfg *Config) pcommon.Resource {
	t.Helper()
	res, _, err := NewFactory().CreateResource(context.Background(), telemetry.Settings{BuildInfo: buildInfo}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// logTo builds the logger of cfg writing to a file, logs through it and
// returns what it wrote.
func logTo(t *testing.T, cfg *Config, log func(l *zap.Logger)) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "log")
	cfg.Logs.OutputPaths = []string{path}
	res := resource(t, cfg)
	logger, _, err := NewFactory().CreateLogger(context.Background(),
		telemetry.LoggerSettings{Settings: telemetry.Settings{BuildInfo: buildInfo, Resource: &res}}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	log(logger)
	_ = logger.Sync()
	out, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// The shipped configs' log: console lines, an ISO 8601 time, the level,
// the caller, the message, then the resource and the fields as JSON.
func TestTheLogKeepsTheCollectorsConsoleFormat(t *testing.T) {
	out := logTo(t, mustLoad(t, map[string]any{"logs": map[string]any{"level": "info"}}), func(l *zap.Logger) {
		l.Debug("hidden at info")
		l.Info("Everything is ready.", zap.String("otelcol.component.id", "axiom"))
	})
	line := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\tinfo\tselftelemetry/factory_test\.go:\d+\tEverything is ready\.\t` +
		`\{"resource": \{"service\.instance\.id": "[0-9a-f-]{36}", "service\.name": "sidecar", "service\.version": "v1\.2\.3"\}, "otelcol\.component\.id": "axiom"\}\n$`)
	if !line.MatchString(out) {
		t.Errorf("log:\n%s\nwant one line matching %s", out, line)
	}
}

func TestTheLogLevelAndEncodingAreSettings(t *testing.T) {
	out := logTo(t, mustLoad(t, map[string]any{"logs": map[string]any{
		"level": "warn", "encoding": "json", "disable_zap_resource": true, "initial_fields": map[string]any{"pod": "p1"},
	}}), func(l *zap.Logger) {
		l.Info("hidden at warn")
		l.Warn("shown")
	})
	var line map[string]any
	if err := json.Unmarshal([]byte(out), &line); err != nil {
		t.Fatalf("log %q: %v", out, err)
	}
	if line["level"] != "warn" || line["msg"] != "shown" || line["pod"] != "p1" || line["resource"] != nil {
		t.Errorf("log line %v", line)
	}
}

// Repeated lines are sampled as the collector's are by default: per 10 s,
// the first 10 with the same message, then every 100th.
func TestRepeatedLogLinesAreSampled(t *testing.T) {
	out := logTo(t, mustLoad(t, map[string]any{}), func(l *zap.Logger) {
		for range 250 {
			l.Info("again")
		}
	})
	if n := strings.Count(out, "again"); n != 12 {
		t.Errorf("%d of 250 repeated lines logged, want 12 (10, then the 100th and 200th of the rest)", n)
	}
}

func TestResourceAttributesOverrideAndRemoveTheDefaults(t *testing.T) {
	res := resource(t, mustLoad(t, map[string]any{"resource": map[string]any{"attributes": []any{
		map[string]any{"name": "service.name", "value": "edge-sidecar"},
		map[string]any{"name": "service.instance.id", "value": nil},
		map[string]any{"name": "deployment.environment.name", "value": "prod"},
	}}}))
	want := map[string]any{"service.name": "edge-sidecar", "service.version": "v1.2.3", "deployment.environment.name": "prod"}
	if got := res.Attributes().AsRaw(); len(got) != len(want) || got["service.name"] != want["service.name"] ||
		got["service.version"] != want["service.version"] || got["deployment.environment.name"] != want["deployment.environment.name"] {
		t.Errorf("resource %v, want %v", got, want)
	}
}

// What the sidecar does not build is refused by name when the config
// loads, rather than ignored.
func TestKeysTheSidecarDoesNotBuildAreRefusedByName(t *testing.T) {
	for key, section := range map[string]map[string]any{
		"detection/development": {"resource": map[string]any{"detection/development": map[string]any{"detectors": []any{map[string]any{"host": nil}}}}},
		"processors": {"logs": map[string]any{"processors": []any{map[string]any{"batch": map[string]any{
			"exporter": map[string]any{"otlp": map[string]any{"protocol": "http/protobuf", "endpoint": "http://127.0.0.1:4318"}},
		}}}}},
	} {
		if _, err := load(t, section); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%v: error %v, want one naming %s", section, err, key)
		}
	}
	if _, err := load(t, map[string]any{"metrics": map[string]any{"readers": []any{}}}); err == nil {
		t.Error("a metrics level without a reader was accepted")
	}
	if _, err := load(t, map[string]any{"traces": map[string]any{"propagators": []any{"jaeger"}}}); err == nil ||
		!strings.Contains(err.Error(), "jaeger") {
		t.Errorf("an unknown propagator: error %v", err)
	}
}

// The shipped configs' Prometheus reader serves the metrics under the
// names they are registered with (README.md's table): no unit or _total
// suffix, the resource in target_info.
func TestMetricsAreServedInPrometheusFormatUnderTheirOwnNames(t *testing.T) {
	host, port, err := net.SplitHostPort(freeport.Addr(t))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	cfg := mustLoad(t, map[string]any{"metrics": map[string]any{"readers": []any{map[string]any{
		"pull": map[string]any{"exporter": map[string]any{"prometheus": map[string]any{"host": host, "port": p}}},
	}}}})
	res := resource(t, cfg)
	mp, err := NewFactory().CreateMeterProvider(context.Background(),
		telemetry.MeterSettings{Settings: telemetry.Settings{BuildInfo: buildInfo, Resource: &res}}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	c, err := mp.Meter("test").Int64Counter("otelcol_receiver_stdout_lines", metric.WithUnit("{line}"))
	if err != nil {
		t.Fatal(err)
	}
	c.Add(context.Background(), 3)

	resp, err := http.Get("http://" + net.JoinHostPort(host, port) + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		"# TYPE otelcol_receiver_stdout_lines counter\n",
		"\notelcol_receiver_stdout_lines 3\n",
		`service_name="sidecar"`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics has no %q:\n%s", want, body)
		}
	}
}

func TestMetricsLevelNoneServesNothing(t *testing.T) {
	addr := freeport.Addr(t)
	host, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	cfg := mustLoad(t, map[string]any{"metrics": map[string]any{"level": "none", "readers": []any{map[string]any{
		"pull": map[string]any{"exporter": map[string]any{"prometheus": map[string]any{"host": host, "port": p}}},
	}}}})
	res := resource(t, cfg)
	mp, err := NewFactory().CreateMeterProvider(context.Background(),
		telemetry.MeterSettings{Settings: telemetry.Settings{Resource: &res}}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer mp.Shutdown(context.Background())
	if conn, err := net.Dial("tcp", addr); err == nil {
		conn.Close()
		t.Error("level none listens for scrapes")
	}
}
