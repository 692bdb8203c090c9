package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/zap"

	"github.com/sidecarhq/sidecar/exporters/axiomexporter"
	"github.com/sidecarhq/sidecar/internal/workload"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/fluentrecords"
	"github.com/sidecarhq/sidecar/sampling"
)

// exitGrace bounds FLBPluginExit(Ctx): Fluent Bit's default Grace is 5 s,
// and it flushes its own pending chunks in that time too.
const exitGrace = 2 * time.Second

// outcome is a flush's answer to Fluent Bit (FLB_OK, FLB_RETRY, FLB_ERROR).
type outcome int

const (
	delivered outcome = iota // Axiom accepted every request of the chunk
	retry                    // 429, 430, 5xx, timeouts: Fluent Bit keeps the chunk and retries it
	rejected                 // permanent (4xx): retrying cannot help
)

// instance is one [OUTPUT] section: the stdout receiver's record decoding,
// the sampling processor (with Rules_File) and the axiom exporter, the same
// components as in the sidecar, called synchronously from the flush.
type instance struct {
	name     string
	log      *zap.Logger
	decoders sync.Pool // *fluentrecords.Decoder: flushes may run in parallel (workers)
	// next takes a chunk's records: the sampling processor, or the
	// exporter without one.
	next       consumer.Logs
	components []component.Component // in start order

	// rejectedRecords counts records of chunks answered FLB_ERROR; the
	// exporter logs each rejecting status once, with Axiom's message.
	rejectedRecords atomic.Int64
	badChunkLogged  sync.Once
}

// flushKey marks the context of a flush, so that route can tell a chunk's
// records from the summaries the sampling processor emits on its timer.
type flushKey struct{}

// newInstance creates and starts an instance's components.
func newInstance(name string, cfg *config, log *zap.Logger) (*instance, error) {
	in := &instance{name: name, log: log}
	identity := identity(log)
	in.decoders.New = func() any { return fluentrecords.New(0, log, identity) }
	ctx := context.Background()
	flushExp, err := axiomexporter.NewFactory().CreateLogs(ctx, exporterSettings(name, log), cfg.axiom)
	if err != nil {
		return nil, err
	}
	in.components = append(in.components, flushExp)
	in.next = flushExp
	if cfg.sampling != nil {
		sumExp, err := axiomexporter.NewFactory().CreateLogs(ctx, exporterSettings(name+"_summaries", log), summaryConfig(cfg.axiom, exitGrace))
		if err != nil {
			return nil, err
		}
		proc, err := sampling.NewFactory().CreateLogs(ctx, processorSettings(name, log), cfg.sampling, route{flush: flushExp, summaries: sumExp})
		if err != nil {
			return nil, err
		}
		in.components = append(in.components, sumExp, proc)
		in.next = proc
	}
	host := componenttest.NewNopHost()
	for i, c := range in.components {
		if err := c.Start(ctx, host); err != nil {
			in.shutdown(in.components[:i])
			return nil, err
		}
	}
	return in, nil
}

// flush sends the records of one chunk and says what Fluent Bit should do
// with it. Nothing is kept after it returns.
func (in *instance) flush(tag string, chunk []byte) outcome {
	d := in.decoders.Get().(*fluentrecords.Decoder)
	ld, err := d.Decode(tag, chunk, time.Now())
	in.decoders.Put(d)
	if err != nil {
		// Fluent Bit wrote the chunk itself, so this is not expected;
		// the records before the bad entry are sent, the rest cannot be read.
		in.badChunkLogged.Do(func() {
			in.log.Error("a chunk holds a malformed entry; its records after it are dropped (logged once)", zap.String("tag", tag), zap.Error(err))
		})
	}
	n := ld.LogRecordCount()
	if n == 0 {
		return delivered
	}
	err = in.next.ConsumeLogs(context.WithValue(context.Background(), flushKey{}, true), ld)
	switch {
	case err == nil:
		return delivered
	case consumererror.IsPermanent(err):
		in.rejectedRecords.Add(int64(n))
		return rejected
	default:
		return retry
	}
}

// exit stops the instance within exitGrace: the last sampling summaries
// are sent, nothing else is held.
func (in *instance) exit() {
	in.shutdown(in.components)
	if n := in.rejectedRecords.Load(); n > 0 {
		in.log.Warn("records rejected by Axiom and dropped (FLB_ERROR) while running", zap.Int64("records", n))
	}
}

// shutdown stops cs in reverse start order, within exitGrace in all.
func (in *instance) shutdown(cs []component.Component) {
	ctx, cancel := context.WithTimeout(context.Background(), exitGrace)
	defer cancel()
	var errs []error
	for i := len(cs) - 1; i >= 0; i-- {
		errs = append(errs, cs[i].Shutdown(ctx))
	}
	if err := errors.Join(errs...); err != nil {
		in.log.Warn("stopping the instance", zap.Error(err))
	}
}

// identity is the workload's, as the sidecar's receivers add it, but only
// on ECS: a FireLens log router runs in the app's task, so the task's
// identity is the app's. A Kubernetes DaemonSet's pod is not the apps'
// pods, so the downward API variables are not read (see README.md for the
// kubernetes filter).
func identity(log *zap.Logger) []workload.Attr {
	if os.Getenv(workload.EnvECSMetadataURI) == "" {
		return nil
	}
	return workload.Detect(context.Background(), log)
}

// route sends a chunk's records to the synchronous exporter and the
// sampling processor's summaries (emitted on its own timer and at exit,
// never inside a flush) to the queued one.
type route struct{ flush, summaries consumer.Logs }

func (route) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (r route) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	if ctx.Value(flushKey{}) != nil {
		return r.flush.ConsumeLogs(ctx, ld)
	}
	return r.summaries.ConsumeLogs(ctx, ld)
}

func telemetry(log *zap.Logger) component.TelemetrySettings {
	return component.TelemetrySettings{
		Logger:         log,
		MeterProvider:  metricnoop.NewMeterProvider(),
		TracerProvider: tracenoop.NewTracerProvider(),
		Resource:       pcommon.NewResource(),
	}
}

func exporterSettings(name string, log *zap.Logger) exporter.Settings {
	return exporter.Settings{
		ID:                component.NewIDWithName(axiomexporter.NewFactory().Type(), name),
		TelemetrySettings: telemetry(log),
		BuildInfo:         buildInfo,
	}
}

func processorSettings(name string, log *zap.Logger) processor.Settings {
	return processor.Settings{
		ID:                component.NewIDWithName(sampling.NewFactory().Type(), name),
		TelemetrySettings: telemetry(log),
		BuildInfo:         buildInfo,
	}
}

var buildInfo = component.BuildInfo{Command: "out_axiom", Description: "Fluent Bit output plugin for Axiom", Version: version}

// version is set at build time (-ldflags "-X main.version=...").
var version = "dev"

func instanceName(n int) string { return fmt.Sprintf("fluentbit_%d", n) }
