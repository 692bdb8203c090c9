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
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/sidecarhq/sidecar/exporters/axiomexporter"
)

// TestSelfMetricsTableIsComplete creates every signal of every component of
// ours with a meter provider that records what they register, and checks
// that README.md's self-metrics table lists exactly those counters, with
// their units.
func TestSelfMetricsTableIsComplete(t *testing.T) {
	factories, err := Components()
	if err != nil {
		t.Fatal(err)
	}
	mp := &recordingProvider{counters: map[string]string{}}
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
	for _, c := range created {
		if err := c.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	}

	documented := readmeSelfMetrics(t)
	for name, unit := range mp.counters {
		if documented[name] != unit {
			t.Errorf("%s (counter, unit %s) is registered; README.md's self-metrics table has %q", name, unit, documented[name])
		}
	}
	for name := range documented {
		if _, ok := mp.counters[name]; !ok {
			t.Errorf("README.md's self-metrics table lists %s, which no component registers", name)
		}
	}
	if len(created) < 8 || len(mp.counters) == 0 {
		t.Fatalf("created %d components, recorded %d counters: the check sees too little", len(created), len(mp.counters))
	}
}

// ours reports whether f is one of our components (its config type is in
// this module), not the collector's.
func ours(f component.Factory) bool {
	return strings.HasPrefix(reflect.TypeOf(f.CreateDefaultConfig()).Elem().PkgPath(), "github.com/sidecarhq/sidecar/")
}

// readmeSelfMetrics returns name -> unit of the counters in the table under
// README.md's "## Self-metrics".
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
		if m[2] != "counter" {
			t.Errorf("README.md: %s is a %s; every self-metric is a counter", m[1], m[2])
		}
		out[m[1]] = m[3]
	}
	return out
}

// recordingProvider records the counters registered on our own meters
// (scopes under github.com/sidecarhq/sidecar/), not the collector helpers'.
type recordingProvider struct {
	noop.MeterProvider
	mu       sync.Mutex
	counters map[string]string // name -> unit
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
	m.p.mu.Lock()
	m.p.counters[name] = metric.NewInt64CounterConfig(opts...).Unit()
	m.p.mu.Unlock()
	return noop.Int64Counter{}, nil
}
