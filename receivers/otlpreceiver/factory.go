package otlpreceiver

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"

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
	r, err := shared(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	r.nextTraces = next
	return r, nil
}

func createMetrics(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
	r, err := shared(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	r.nextMetrics = next
	return r, nil
}

func createLogs(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Logs) (receiver.Logs, error) {
	r, err := shared(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	r.nextLogs = next
	return r, nil
}
