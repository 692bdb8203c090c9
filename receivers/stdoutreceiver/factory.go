package stdoutreceiver

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"

	"github.com/sidecarhq/sidecar/internal/sharedinstance"
	"github.com/sidecarhq/sidecar/internal/watchdog"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/metadata"
)

// NewFactory returns the stdout receiver's factory.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(metadata.Type, createDefaultConfig,
		receiver.WithLogs(createLogs, metadata.LogsStability),
		receiver.WithTraces(createTraces, metadata.TracesStability),
	)
}

func createLogs(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Logs) (receiver.Logs, error) {
	return shared(set, cfg, func(r *stdoutReceiver) { r.logs = watchdog.Default.Logs(watchdog.HandOff(set.ID), next) })
}

func createTraces(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Traces) (receiver.Traces, error) {
	return shared(set, cfg, func(r *stdoutReceiver) { r.traces = watchdog.Default.Traces(watchdog.HandOff(set.ID), next) })
}

// instances holds one receiver per config, serving every pipeline it is in.
var instances sharedinstance.Map[Config, *stdoutReceiver]

// shared returns cfg's receiver, with join connecting one more pipeline.
func shared(set receiver.Settings, cfg component.Config, join func(*stdoutReceiver)) (component.Component, error) {
	c := cfg.(*Config)
	return sharedinstance.Join(&instances, c, func() (*stdoutReceiver, error) { return newReceiver(set, c) }, join)
}
