package otlpreceiver

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"

	"github.com/sidecarhq/sidecar/internal/sharedinstance"
	"github.com/sidecarhq/sidecar/internal/watchdog"
	"github.com/sidecarhq/sidecar/receivers/otlpreceiver/internal/metadata"
)

// NewFactory returns the otlp receiver's factory.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(metadata.Type, createDefaultConfig,
		receiver.WithTraces(createTraces, metadata.TracesStability),
		receiver.WithMetrics(createMetrics, metadata.MetricsStability),
		receiver.WithLogs(createLogs, metadata.LogsStability),
	)
}

func createTraces(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Traces) (receiver.Traces, error) {
	return shared(set, cfg, func(r *otlpReceiver) { r.nextTraces = watchdog.Default.Traces(watchdog.HandOff(set.ID), next) })
}

func createMetrics(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
	return shared(set, cfg, func(r *otlpReceiver) { r.nextMetrics = next })
}

func createLogs(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Logs) (receiver.Logs, error) {
	return shared(set, cfg, func(r *otlpReceiver) { r.nextLogs = watchdog.Default.Logs(watchdog.HandOff(set.ID), next) })
}

// instances holds one receiver per config, serving every pipeline it is in.
var instances sharedinstance.Map[Config, *otlpReceiver]

// shared returns cfg's receiver, with join connecting one more pipeline.
func shared(set receiver.Settings, cfg component.Config, join func(*otlpReceiver)) (component.Component, error) {
	c := cfg.(*Config)
	return sharedinstance.Join(&instances, c, func() (*otlpReceiver, error) { return newReceiver(set, c) }, join)
}
