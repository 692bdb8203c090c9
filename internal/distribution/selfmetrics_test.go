package distribution

import (
	"context"
	"os"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/sidecarhq/sidecar/exporters/axiomexporter"
)

// TestSelfMetricsTableIsComplete creates every signal of every component of
// ours with a meter provider that records what they register, and checks
// that README.md's self-metrics table lists exactly those counters and
// gauges, with their units.
func TestSelfMetricsTableIsComplete(t *testing.T) {
	factories, err := Components()
	if err != nil {
		t.Fatal(err)
	}
	mp := &recordingProvider{instruments: map[string]string{}}
	ctx := context.Background()
	var created []component.Component
	keep := func(c component.Component, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		created = append(created, c)
	}
	for _, f := range factories.Receivers {
		if !ours(f) {
			continue
		}
		set := receivertest.NewNopSettings(f.Type())
		set.MeterProvider = mp
		cfg := f.CreateDefaultConfig()
		keep(f.CreateLogs(ctx, set, cfg, consumertest.NewNop()))
		keep(f.CreateTraces(ctx, set, cfg, consumertest.NewNop()))
	}
	for _, f := range factories.Processors {
		if !ours(f) {
			continue
		}
		set := processortest.NewNopSettings(f.Type())
		set.MeterProvider = mp
		cfg := f.CreateDefaultConfig()
		keep(f.CreateLogs(ctx, set, cfg, consumertest.NewNop()))
		keep(f.CreateTraces(ctx, set, cfg, consumertest.NewNop()))
	}
	for _, f := range factories.Exporters {
		if !ours(f) {
			continue
		}
		set := exportertest.NewNopSettings(f.Type())
		set.MeterProvider = mp
		cfg := f.CreateDefaultConfig()
		if c, ok := cfg.(*axiomexporter.Config); ok {
			c.Token, c.LogsDataset, c.TracesDataset = "xaat-test", "logs", "traces"
		}
		keep(f.CreateLogs(ctx, set, cfg))
		keep(f.CreateTraces(ctx, set, cfg))
	}
	for _, f := range factories.Extensions {
		if !ours(f) {
			continue
		}
		set := extensiontest.NewNopSettings(f.Type())
		set.MeterProvider = mp
		keep(f.Create(ctx, set, f.CreateDefaultConfig()))
	}
	for _, c := range created {
		if err := c.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	}

	documented := readmeSelfMetrics(t)
	for name, kindUnit := range mp.instruments {
		if documented[name] != kindUnit {
			t.Errorf("%s (%s) is registered; README.md's self-metrics table has %q", name, kindUnit, documented[name])
		}
	}
	for name := range documented {
		if _, ok := mp.instruments[name]; !ok {
			t.Errorf("README.md's self-metrics table lists %s, which no component registers", name)
		}
	}
	if len(created) < 9 || len(mp.instruments) == 0 {
		t.Fatalf("created %d components, recorded %d instruments: the check sees too little", len(created), len(mp.instruments))
	}
}

// ours reports whether f is one of our components (its config type is in
// this module), not the collector's.
func ours(f component.Factory) bool {
	return strings.HasPrefix(reflect.TypeOf(f.CreateDefaultConfig()).Elem().PkgPath(), "github.com/sidecarhq/sidecar/")
}

// readmeSelfMetrics returns name -> "kind, unit" of the metrics in the
// table under README.md's "## Self-metrics".
func readmeSelfMetrics(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Self-metrics\n")
	if !ok {
		t.Fatal(`README.md has no "## Self-metrics" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	row := regexp.MustCompile("(?m)^\\| `([a-z0-9_]+)` \\| ([a-z]+) \\| `([^`]*)` \\|")
	out := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		out[m[1]] = m[2] + ", " + m[3]
	}
	return out
}

// recordingProvider records the counters and gauges registered on our own
// meters (scopes under github.com/sidecarhq/sidecar/), not the collector
// helpers'.
type recordingProvider struct {
	noop.MeterProvider
	mu          sync.Mutex
	instruments map[string]string // name -> "kind, unit"
}

func (p *recordingProvider) Meter(scope string, _ ...metric.MeterOption) metric.Meter {
	if !strings.HasPrefix(scope, "github.com/sidecarhq/sidecar/") {
		return noop.Meter{}
	}
	return recordingMeter{p: p}
}

type recordingMeter struct {
	noop.Meter
	p *recordingProvider
}

func (m recordingMeter) Int64Counter(name string, opts ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	m.p.record(name, "counter, "+metric.NewInt64CounterConfig(opts...).Unit())
	return noop.Int64Counter{}, nil
}

func (m recordingMeter) Int64Gauge(name string, opts ...metric.Int64GaugeOption) (metric.Int64Gauge, error) {
	m.p.record(name, "gauge, "+metric.NewInt64GaugeConfig(opts...).Unit())
	return noop.Int64Gauge{}, nil
}

func (p *recordingProvider) record(name, kindUnit string) {
	p.mu.Lock()
	p.instruments[name] = kindUnit
	p.mu.Unlock()
}
