// Package sampling samples spans and log records per operation by
// rules, with consistent (trace-id based) decisions, exact weights on what
// it keeps and summary events of everything it decided on. See README.md.
package sampling

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"

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
	}
}

// One sampler serves every pipeline of one configured instance (the
// collector hands each pipeline the same *Config), so that summaries of
// dropped spans can go to the instance's logs pipeline. Like the core
// sharedcomponent package, which is internal to the collector.
var (
	sharedMu sync.Mutex
	shared   = map[*Config]*sharedSampler{}
)

type sharedSampler struct {
	*sampler
	started int // pipelines started and not shut down
}

func getShared(cfg *Config, set processor.Settings) (*sharedSampler, error) {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sh, ok := shared[cfg]; ok {
		return sh, nil
	}
	s, err := newSampler(cfg, set)
	if err != nil {
		return nil, err
	}
	sh := &sharedSampler{sampler: s}
	shared[cfg] = sh
	return sh, nil
}

func (sh *sharedSampler) start(ctx context.Context, host component.Host) error {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	sh.started++
	if sh.started > 1 {
		return nil
	}
	return sh.sampler.start(ctx, host)
}

func (sh *sharedSampler) shutdown(ctx context.Context) error {
	sharedMu.Lock()
	if sh.started == 0 { // shut down without start
		sharedMu.Unlock()
		return nil
	}
	sh.started--
	last := sh.started == 0
	if last {
		for cfg, v := range shared {
			if v == sh {
				delete(shared, cfg)
			}
		}
	}
	sharedMu.Unlock()
	if !last {
		return nil
	}
	return sh.sampler.shutdown(ctx)
}

func createTraces(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	sh, err := getShared(cfg.(*Config), set)
	if err != nil {
		return nil, err
	}
	// The raw-request filter is offered only while the processor runs in a
	// traces pipeline: a receiver must not sample spans by the rules of a
	// processor that the config keeps out of the span path.
	var unregister func()
	start := func(ctx context.Context, host component.Host) error {
		if err := sh.start(ctx, host); err != nil {
			return err
		}
		unregister = presample.Register(set.ID, sh.sampler)
		return nil
	}
	shutdown := func(ctx context.Context) error {
		if unregister != nil {
			unregister()
		}
		return sh.shutdown(ctx)
	}
	return processorhelper.NewTraces(ctx, set, cfg, next, sh.processTraces,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}),
		processorhelper.WithStart(start), processorhelper.WithShutdown(shutdown))
}

func createLogs(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
	sh, err := getShared(cfg.(*Config), set)
	if err != nil {
		return nil, err
	}
	sharedMu.Lock()
	if sh.logsNext == nil {
		sh.logsNext = next
	}
	sharedMu.Unlock()
	return processorhelper.NewLogs(ctx, set, cfg, next, sh.processLogs,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}),
		processorhelper.WithStart(sh.start), processorhelper.WithShutdown(sh.shutdown))
}
