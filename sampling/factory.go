// Package sampling samples spans and log records per operation by
// rules, with consistent (trace-id based) decisions, exact weights on what
// it keeps and summary events of everything it decided on. See README.md.
package sampling

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/sidecarhq/sidecar/internal/sharedinstance"
	"github.com/sidecarhq/sidecar/sampling/internal/metadata"
	"github.com/sidecarhq/sidecar/sampling/presample"
)

// NewFactory returns the factory of the `sampling` processor.
func NewFactory() processor.Factory {
	return processor.NewFactory(metadata.Type, createDefaultConfig,
		processor.WithTraces(createTraces, metadata.TracesStability),
		processor.WithLogs(createLogs, metadata.LogsStability))
}

func createDefaultConfig() component.Config {
	return &Config{
		AlwaysKeep: KeepConfig{Errors: true, Priority: true},
		Summaries:  SummariesConfig{Interval: 10 * time.Second, MaxGroups: 10000},
		Structure:  StructureConfig{RecentParents: 65536},

		UpstreamProbability: 1,
		Hold:                HoldConfig{Window: defaultHoldWindow, MaxBytes: defaultHoldBytes},
	}
}

// One sampler serves every pipeline of one configured instance (the
// collector hands each pipeline the same *Config), so that summaries of
// dropped spans can go to the instance's logs pipeline. Its timers run from
// the first pipeline's Start to the last one's Shutdown.
var instances sharedinstance.Map[Config, *sharedinstance.Counted[*sampler]]

func shared(cfg *Config, set processor.Settings) (*sharedinstance.Counted[*sampler], error) {
	return sharedinstance.GetCounted(&instances, cfg, func() (*sampler, error) { return newSampler(cfg, set) })
}

func createTraces(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	sh, err := shared(cfg.(*Config), set)
	if err != nil {
		return nil, err
	}
	// The raw-request filter is offered only while the processor runs in a
	// traces pipeline: a receiver must not sample spans by the rules of a
	// processor that the config keeps out of the span path.
	var unregister func()
	start := func(ctx context.Context, host component.Host) error {
		if err := sh.Start(ctx, host); err != nil {
			return err
		}
		unregister = presample.Register(set.ID, sh.Instance)
		return nil
	}
	shutdown := func(ctx context.Context) error {
		if unregister != nil {
			unregister()
		}
		return sh.Shutdown(ctx)
	}
	s := sh.Instance
	s.mu.Lock()
	if s.tracesNext == nil {
		s.tracesNext = next
	}
	s.mu.Unlock()
	return processorhelper.NewTraces(ctx, set, cfg, next, sh.Instance.processTraces,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}),
		processorhelper.WithStart(start), processorhelper.WithShutdown(shutdown))
}

func createLogs(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
	sh, err := shared(cfg.(*Config), set)
	if err != nil {
		return nil, err
	}
	s := sh.Instance
	s.mu.Lock()
	if s.logsNext == nil {
		s.logsNext = next
	}
	s.mu.Unlock()
	// Nothing orders this pipeline's next consumer after the traces
	// pipeline's processor: when the exporter is one instance per signal
	// (otlp_http), the logs one may stop before the shared instance's last
	// Shutdown emits the final summaries. So they go out here, while the
	// logs pipeline still runs; the instance's Shutdown emits what follows.
	shutdown := func(ctx context.Context) error {
		s.flushSummaries(ctx)
		return sh.Shutdown(ctx)
	}
	return processorhelper.NewLogs(ctx, set, cfg, next, s.processLogs,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}),
		processorhelper.WithStart(sh.Start), processorhelper.WithShutdown(shutdown))
}
