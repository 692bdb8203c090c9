package axiomexporter

import (
	"context"
	"strconv"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sidecarhq/sidecar/exporters/axiomexporter/internal/metadata"
	"github.com/sidecarhq/sidecar/internal/losses"
	"github.com/sidecarhq/sidecar/internal/rawevent"
)

const (
	testToken  = "xaat-00000000-1111-2222-3333-444444444444"
	logsDS     = "app-logs"
	tracesDS   = "app-traces"
	waitWindow = 20 * time.Second // generous: only bounds a failing test
)

// testConfig is the default config pointed at url, with quick retries and
// the queue off so that ConsumeLogs returns the final outcome.
func testConfig(url string) *Config {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.URL = url
	cfg.Token = testToken
	cfg.LogsDataset = logsDS
	cfg.TracesDataset = tracesDS
	cfg.RetryConfig.InitialInterval = 10 * time.Millisecond
	cfg.RetryConfig.MaxInterval = 50 * time.Millisecond
	cfg.RetryConfig.MaxElapsedTime = time.Minute
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	cfg.CheckToken = false // tests count requests and script their answers
	return cfg
}

// harness is a settings bundle whose logs and metrics tests can inspect.
type harness struct {
	set     exporter.Settings
	logs    *observer.ObservedLogs
	metrics *sdkmetric.ManualReader
}

func newHarness() *harness {
	losses.Default = &losses.Ledger{} // each test's drops, reported in that test only
	core, logs := observer.New(zap.DebugLevel)
	reader := sdkmetric.NewManualReader()
	set := exportertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	set.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	return &harness{set: set, logs: logs, metrics: reader}
}

// counter sums the data points of the named counter whose attributes
// include every given key=value.
func (h *harness) counter(t *testing.T, name string, attrs ...string) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := h.metrics.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				match := true
				for i := 0; i+1 < len(attrs); i += 2 {
					if v, ok := dp.Attributes.Value(attribute.Key(attrs[i])); !ok || v.AsString() != attrs[i+1] {
						match = false
					}
				}
				if match {
					total += dp.Value
				}
			}
		}
	}
	return total
}

func startLogs(t *testing.T, h *harness, cfg *Config) exporter.Logs {
	t.Helper()
	exp, err := NewFactory().CreateLogs(context.Background(), h.set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = exp.Shutdown(context.Background()) })
	return exp
}

func startTraces(t *testing.T, h *harness, cfg *Config) exporter.Traces {
	t.Helper()
	exp, err := NewFactory().CreateTraces(context.Background(), h.set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = exp.Shutdown(context.Background()) })
	return exp
}

// stringLogs makes n records with string bodies "line 0".."line n-1".
func stringLogs(n int) plog.Logs {
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	base := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for i := range n {
		lr := lrs.AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(base.Add(time.Duration(i) * time.Millisecond)))
		lr.Body().SetStr("line " + strconv.Itoa(i))
	}
	return ld
}

// gauge is the value of the gauge name for the series with attrs, and
// whether there is one.
func (h *harness) gauge(t *testing.T, name string, attrs ...string) (int64, bool) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := h.metrics.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			for _, dp := range m.Data.(metricdata.Gauge[int64]).DataPoints {
				match := true
				for i := 0; i+1 < len(attrs); i += 2 {
					if v, ok := dp.Attributes.Value(attribute.Key(attrs[i])); !ok || v.AsString() != attrs[i+1] {
						match = false
					}
				}
				if match {
					return dp.Value, true
				}
			}
		}
	}
	return 0, false
}

// scopeOf is the eventScope of sl's records, res their resource encoded.
func scopeOf(sl plog.ScopeLogs, res []byte) *eventScope {
	sc := &eventScope{raw: rawevent.IsRawScope(sl), oneLine: rawevent.IsOneLineScope(sl), resource: res}
	if attrs, ok := rawevent.Shared(sl); ok {
		sc.shared, sc.sharedAttrs = appendMap(nil, attrs), attrs
	}
	return sc
}
