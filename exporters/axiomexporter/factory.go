// Package axiomexporter implements the axiom exporter: logs to Axiom's
// ingest API as native events (NDJSON, zstd) and spans to Axiom's OTLP
// traces endpoint. README.md documents the configuration and the mapping
// from log records to events.
package axiomexporter

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/sidecarhq/sidecar/exporters/axiomexporter/internal/metadata"
)

// NewFactory creates the factory of the axiom exporter.
func NewFactory() exporter.Factory {
	return exporter.NewFactory(metadata.Type, createDefaultConfig,
		exporter.WithLogs(createLogs, metadata.LogsStability),
		exporter.WithTraces(createTraces, metadata.TracesStability),
	)
}

// Queue defaults mirror the @axiomhq/pino transport this replaces: a
// request every second or every 1,000 events, at most Axiom's 10,000 per
// request. The queue holds 50,000 items (about five full requests, some
// tens of MB of log records): enough to ride out a short Axiom outage
// without letting a long one grow memory without bound; when it is full,
// new data is refused and counted (otelcol_exporter_enqueue_failed_*).
const (
	defaultQueueSize    = 50_000
	defaultNumConsumers = 4
)

func createDefaultConfig() component.Config {
	batch := exporterhelper.NewDefaultBatchConfig()
	batch.FlushTimeout = time.Second
	batch.MinSize = 1_000
	batch.MaxSize = maxEventsPerRequest
	queue := exporterhelper.NewDefaultQueueConfig()
	queue.Sizer = batch.Sizer // items
	queue.QueueSize = defaultQueueSize
	queue.NumConsumers = defaultNumConsumers
	queue.Batch = configoptional.Some(batch)

	retry := configretry.NewDefaultBackOffConfig()
	retry.InitialInterval = time.Second

	return &Config{
		Timeout:         30 * time.Second,
		ShutdownTimeout: 10 * time.Second,
		QueueConfig:     configoptional.Some(queue),
		RetryConfig:     retry,
	}
}

func exporterOptions(cfg *Config, start component.StartFunc, shutdown component.ShutdownFunc) []exporterhelper.Option {
	return []exporterhelper.Option{
		exporterhelper.WithStart(start),
		exporterhelper.WithShutdown(shutdown),
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		// Each HTTP request is bounded by the client's timeout instead.
		exporterhelper.WithTimeout(exporterhelper.TimeoutConfig{Timeout: 0}),
		exporterhelper.WithRetry(cfg.RetryConfig),
		exporterhelper.WithQueue(cfg.QueueConfig),
	}
}

func createLogs(ctx context.Context, set exporter.Settings, c component.Config) (exporter.Logs, error) {
	cfg := c.(*Config)
	e, err := newLogsExporter(cfg, set)
	if err != nil {
		return nil, err
	}
	inner, err := exporterhelper.NewLogs(ctx, set, cfg, e.pushLogs, exporterOptions(cfg, e.start, e.shutdown)...)
	if err != nil {
		return nil, err
	}
	return boundedLogs{Logs: inner, base: e.base}, nil
}

func createTraces(ctx context.Context, set exporter.Settings, c component.Config) (exporter.Traces, error) {
	cfg := c.(*Config)
	e, err := newTracesExporter(cfg, set)
	if err != nil {
		return nil, err
	}
	inner, err := exporterhelper.NewTraces(ctx, set, cfg, e.pushTraces, exporterOptions(cfg, e.start, e.shutdown)...)
	if err != nil {
		return nil, err
	}
	return boundedTraces{Traces: inner, base: e.base}, nil
}

// boundedLogs and boundedTraces put shutdown_timeout around exporterhelper's
// Shutdown, which drains the queue first and calls our shutdown last.
type boundedLogs struct {
	exporter.Logs
	base *base
}

func (x boundedLogs) Shutdown(ctx context.Context) error {
	return x.base.boundShutdown(ctx, x.Logs.Shutdown)
}

type boundedTraces struct {
	exporter.Traces
	base *base
}

func (x boundedTraces) Shutdown(ctx context.Context) error {
	return x.base.boundShutdown(ctx, x.Traces.Shutdown)
}
