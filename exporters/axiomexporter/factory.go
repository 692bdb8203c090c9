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
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sidecarhq/sidecar/exporters/axiomexporter/internal/metadata"
)

// NewFactory creates the factory of the axiom exporter.
func NewFactory() exporter.Factory {
	return exporter.NewFactory(metadata.Type, createDefaultConfig,
		exporter.WithLogs(createLogs, metadata.LogsStability),
		exporter.WithTraces(createTraces, metadata.TracesStability),
	)
}

// The sending queue's sizes come from the budgets (budget.go). A batch is
// sent every second, or sooner once it holds half a request; at most
// Axiom's 10,000 events go in one request.
func createDefaultConfig() component.Config {
	batch := exporterhelper.NewDefaultBatchConfig()
	batch.FlushTimeout = time.Second
	queue := exporterhelper.NewDefaultQueueConfig()
	queue.Batch = configoptional.Some(batch)

	// Data waits (on disk, with storage) for as long as Axiom refuses it:
	// giving up after a while would drop what was accepted.
	retry := configretry.NewDefaultBackOffConfig()
	retry.InitialInterval = time.Second
	retry.MaxElapsedTime = 0

	cfg := &Config{
		Timeout:         30 * time.Second,
		ShutdownTimeout: 10 * time.Second,
		Memory:          defaultMemoryBudget,
		Disk:            defaultDiskBudget,
		MaxRequestBytes: defaultMaxRequestBytes,
		CheckToken:      true,
		QueueConfig:     configoptional.Some(queue),
		RetryConfig:     retry,
	}
	cfg.QueueConfig = cfg.queueConfig()
	return cfg
}

func exporterOptions(cfg *Config, queue exporterhelper.Option, start component.StartFunc, shutdown component.ShutdownFunc) []exporterhelper.Option {
	return []exporterhelper.Option{
		exporterhelper.WithStart(start),
		exporterhelper.WithShutdown(shutdown),
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		// Each HTTP request is bounded by the client's timeout instead.
		exporterhelper.WithTimeout(exporterhelper.TimeoutConfig{Timeout: 0}),
		exporterhelper.WithRetry(cfg.RetryConfig),
		queue,
	}
}

func createLogs(ctx context.Context, set exporter.Settings, c component.Config) (exporter.Logs, error) {
	cfg := c.(*Config)
	e, err := newLogsExporter(cfg, set)
	if err != nil {
		return nil, err
	}
	// The queue and batcher weigh records as Axiom events (logsbatch.go).
	room := newQueueRoom(cfg, e.weigher)
	queue := xexporterhelper.WithQueueBatch(cfg.QueueConfig, xexporterhelper.QueueBatchSettings{
		Encoding: newLogsEncoding(e.weigher), ReferenceCounter: logsRefs{room},
	})
	inner, err := xexporterhelper.NewLogsRequest(ctx, set, e.newRequest, e.pushRequest, exporterOptions(cfg, queue, e.start, e.shutdown)...)
	if err != nil {
		return nil, err
	}
	return boundedLogs{Logs: inner, base: e.base, room: room, weigher: e.weigher, parts: newInParts(cfg)}, nil
}

func createTraces(ctx context.Context, set exporter.Settings, c component.Config) (exporter.Traces, error) {
	cfg := c.(*Config)
	e, err := newTracesExporter(cfg, set)
	if err != nil {
		return nil, err
	}
	inner, err := exporterhelper.NewTraces(ctx, set, cfg, e.pushTraces, exporterOptions(cfg, exporterhelper.WithQueue(cfg.QueueConfig), e.start, e.shutdown)...)
	if err != nil {
		return nil, err
	}
	return boundedTraces{Traces: inner, base: e.base, parts: newInParts(cfg)}, nil
}

// boundedLogs and boundedTraces count what the queue accepts, and put
// shutdown_timeout around exporterhelper's Shutdown, which calls our
// shutdown last: until then they wait for the queue to drain.
type boundedLogs struct {
	exporter.Logs
	base    *base
	room    *queueRoom
	weigher *logsWeigher
	parts   inParts
}

// ConsumeLogs offers ld to the queue, in parts if it weighs more than the
// queue ever admits (parts.go).
func (x boundedLogs) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	o := &offered{}
	err := x.offerOne(context.WithValue(ctx, offeredKey{}, o), ld)
	// o.r is nil when the offer was refused before a request was made.
	if err == nil || o.r == nil || !x.parts.tooHeavy(int64(o.r.weight)) {
		return err
	}
	return x.parts.logs(ctx, x.base, x.weigher, ld, x.offerOne)
}

func (x boundedLogs) offerOne(ctx context.Context, ld plog.Logs) error {
	return x.base.accept(ld.LogRecordCount(), func() error { return x.room.offer(ctx, ld, x.Logs.ConsumeLogs) })
}

func (x boundedLogs) Shutdown(ctx context.Context) error {
	return x.base.boundShutdown(ctx, x.Logs.Shutdown)
}

type boundedTraces struct {
	exporter.Traces
	base  *base
	parts inParts
}

// ConsumeTraces offers td to the queue, in parts if it weighs more than
// the queue ever admits (parts.go). Only a refused offer is weighed here:
// the queue weighs what it takes.
func (x boundedTraces) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	err := x.offerOne(ctx, td)
	if err == nil || consumererror.IsPermanent(err) || !x.parts.tooHeavy(int64(tracesSizer.TracesSize(td))) {
		return err
	}
	return x.parts.traces(ctx, x.base, td, x.offerOne)
}

// tracesSizer weighs traces as exporterhelper's queue does in bytes.
var tracesSizer ptrace.ProtoMarshaler

func (x boundedTraces) offerOne(ctx context.Context, td ptrace.Traces) error {
	return x.base.accept(td.SpanCount(), func() error { return x.Traces.ConsumeTraces(ctx, td) })
}

func (x boundedTraces) Shutdown(ctx context.Context) error {
	return x.base.boundShutdown(ctx, x.Traces.Shutdown)
}
